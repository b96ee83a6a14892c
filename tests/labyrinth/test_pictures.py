"""Pictures of Labyrinth plans: the ASCII drawing and the SVG."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from hypothesis import given, settings

from domain.games.labyrinth.pictures import CELL, ascii_picture, svg_picture
from domain.games.labyrinth.plan import DIRECTIONS, Plan, River, Side, type_name
from domain.games.labyrinth.plan_text import grid_lines, parse_plan
from tests.labyrinth.strategies import plans

EXAMPLE = Path(__file__).parents[2] / "domain" / "games" / "labyrinth" / "plans" / "example.txt"
SVG = "{http://www.w3.org/2000/svg}"

EXAMPLE_ASCII = """\
       1     2     3     4     5     6
    +     +#####+#####+#####+#####+
  1 # .     >     >     v     H   #
    +     +#####+     +     +     +#####+
  2 # W   | a1    .$    v     . 1 | .   |
    +     +     +     +     +     +     +
  3 # .*    .     E     D     .@  | a2  #
    +     +-----+     +     +#####+     +
  4 # .+    H     .     ^     <     <   #
    +#####+#####+#####+#####+#####+#####+
  5 # a3    . 2   .     .     .*    W   #
    +#####+#####+-----+#####+#####+#####+

plan: Two rivers and a loop
cells: . land  H hospital  W weaponry  E encephalitis  D delta  > < ^ v river  a1 pit 1 of loop a
walls: # indestructible  - | destructible  (on the outline: - | a closed exit, a gap an open exit)
marks: $ the true treasure  * a fake treasure  + items  @ the start cell (7.6)
exits: 1,1 up (open), 2,6 right (closed), 5,3 down (closed)
items at 4,1: 2 bullets, 1 grenade
"""


def example() -> Plan:
    return parse_plan(EXAMPLE.read_text())


def test_ascii_picture_of_the_example() -> None:
    assert ascii_picture(example(), {(2, 5): "1", (5, 2): "2"}) == EXAMPLE_ASCII


@settings(max_examples=40, deadline=None)
@given(plans())
def test_ascii_picture_draws_the_borders_and_types_of_the_text_grid(plan: Plan) -> None:
    """Every corner, border and cell code of the text format's grid is in the picture, in
    the same place once the cells are widened."""
    text = grid_lines(plan)[1:]
    picture = ascii_picture(plan).splitlines()[1 : 2 * plan.rows + 2]
    text_edge = len(str(plan.rows)) + 3
    width = (len(max(picture, key=len)) - text_edge - 1) // plan.columns  # a cell and its border
    for t_line, p_line in zip(text, picture, strict=True):
        t_line = t_line.ljust(text_edge + 4 * plan.columns + 1)
        p_line = p_line.ljust(text_edge + width * plan.columns + 1)
        for c in range(plan.columns + 1):
            assert p_line[text_edge + width * c] == t_line[text_edge + 4 * c]
            if c < plan.columns:
                t_field = t_line[text_edge + 4 * c + 1 : text_edge + 4 * c + 4]
                p_field = p_line[text_edge + width * c + 1 : text_edge + width * (c + 1)]
                if t_field.strip() in ("---", "###", ""):
                    assert set(p_field) == set(t_field)
                else:
                    assert p_field.split()[0].rstrip("$*+@") == t_field.strip()


def counts(svg: str) -> dict[str, int]:
    root = ET.fromstring(svg)
    found: dict[str, int] = {}
    for element in root.iter():
        for name in (element.get("class") or "").split():
            found[name] = found.get(name, 0) + 1
    return found


@settings(max_examples=40, deadline=None)
@given(plans())
def test_svg_draws_every_cell_side_and_item(plan: Plan) -> None:
    svg = svg_picture(plan, marks={plan.squares[0].cell: "1<&>"}, paths={"p": [s.cell for s in plan.squares]})
    found = counts(svg)  # well-formed XML, the name and labels escaped
    sides = [plan.side(cell, d) for cell in plan.cells for d in DIRECTIONS]
    inner = [k for k in sides if not k.outer]
    assert found.get("cell", 0) == len(plan.cells)
    for name in {type_name(s.type) for s in plan.squares}:
        assert found[name] == sum(type_name(s.type) == name for s in plan.squares)
    assert found.get("wall", 0) == inner.count(Side.WALL) // 2
    assert found.get("solid", 0) == inner.count(Side.SOLID) // 2
    assert found.get("outer-wall", 0) == sides.count(Side.OUTER_WALL)
    assert found.get("closed-exit", 0) == sides.count(Side.CLOSED_EXIT)
    assert found.get("open-exit", 0) == sides.count(Side.OPEN_EXIT)
    assert found.get("flow", 0) == len(plan.cells_of(River))
    assert found.get("true", 0) == len(plan.true_treasures())
    assert found.get("fake", 0) == len(plan.treasures) - len(plan.true_treasures())
    assert found.get("items", 0) == len(plan.items)
    assert found.get("start", 0) == (plan.start is not None)
    assert found.get("mark", 0) == 1 and found.get("path", 0) == 1


def test_svg_of_the_example() -> None:
    plan = example()
    svg = svg_picture(plan)
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert int(root.get("width", "0")) >= plan.columns * CELL
    cells = {e.get("data-cell"): e.get("class") for e in root.iter(f"{SVG}rect") if e.get("data-cell")}
    assert cells["3,4"] == "cell delta" and cells["1,2"] == "cell river" and "1,6" not in cells
    labels = [e.text for e in root.iter(f"{SVG}text")]
    assert {"a1", "a2", "a3", "Two rivers and a loop", "2b 1g"} <= set(labels)
    assert svg_picture(plan) == svg  # a pure function: the same plan, the same picture
    assert ">closed exit<" in svg and ">closed exit<" not in svg_picture(plan, legend=False)
