"""The Labyrinth plan: the data model, the text format, the JSON form."""

from __future__ import annotations

import json
import random
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.canonical import canonical
from domain.games.labyrinth.plan import (
    DELTA,
    HOSPITAL,
    LAND,
    WEAPONRY,
    Exit,
    Hospital,
    Items,
    Pit,
    Plan,
    PlanError,
    River,
    Side,
    Square,
    Treasure,
    Wall,
    plan_of,
)
from domain.games.labyrinth.plan_text import (
    parse_plan,
    plan_from_dict,
    plan_from_json,
    plan_to_dict,
    plan_to_json,
    render_plan,
)
from tests.labyrinth.strategies import plans

EXAMPLE = Path(__file__).parents[2] / "domain" / "games" / "labyrinth" / "plans" / "example.txt"
PROPERTY = settings(max_examples=50, deadline=None)


# --- round trips ---------------------------------------------------------------------------


@PROPERTY
@given(plans())
def test_text_round_trip(plan: Plan) -> None:
    text = render_plan(plan)
    assert parse_plan(text) == plan
    assert render_plan(parse_plan(text)) == text


@PROPERTY
@given(plans())
def test_json_round_trip(plan: Plan) -> None:
    assert plan_from_json(plan_to_json(plan)) == plan
    assert plan_from_dict(plan_to_dict(plan)) == plan
    assert plan_from_dict(json.loads(plan_to_json(plan))) == plan


@settings(max_examples=50, deadline=None)
@given(plans())
def test_the_model_itself_encodes_canonically(plan: Plan) -> None:
    """A match may keep the plan in its state: canonical JSON reads back to an equal plan."""
    encoded = canonical(plan)
    again = msgspec.json.decode(encoded, type=Plan)
    assert again == plan and hash(again) == hash(plan)
    assert canonical(again) == encoded


@settings(max_examples=50, deadline=None)
@given(plans(), st.randoms(use_true_random=False))
def test_order_does_not_matter(plan: Plan, rnd: random.Random) -> None:
    squares, walls, exits = list(plan.squares), list(plan.walls), list(plan.exits)
    treasures, items = list(plan.treasures), list(plan.items)
    for part in (squares, walls, exits, treasures, items):
        rnd.shuffle(part)
    again = Plan(
        tuple(squares),
        tuple(Wall(w.b, w.a, w.destructible) for w in walls),  # either cell first
        tuple(exits),
        tuple(treasures),
        tuple(items),
        start=plan.start,
        name=plan.name,
    )
    assert again == plan
    assert plan_to_json(again) == plan_to_json(plan)


@settings(max_examples=40, deadline=None)
@given(plans())
def test_text_without_labels_ruler_or_trailing_spaces_reads_the_same(plan: Plan) -> None:
    """A hand-written grid may leave out the row numbers and the ruler."""
    lines = render_plan(plan).splitlines()
    start = lines.index("grid:") + 2  # past the ruler
    end = lines.index("", start) if "" in lines[start:] else len(lines)
    label = len(str(plan.rows)) + 3
    bare = [*lines[: start - 1], *(line[label:].rstrip() for line in lines[start:end]), *lines[end:]]
    assert parse_plan("\n".join(bare)) == plan


def test_example_file_reads_and_is_canonical() -> None:
    text = EXAMPLE.read_text()
    plan = parse_plan(text)
    assert plan.name == "Two rivers and a loop"
    assert (plan.rows, plan.columns) == (5, 6)
    assert (1, 6) not in plan and len(plan.cells) == 29
    assert plan.type_at((1, 2)) == River("right")
    assert plan.type_at((3, 4)) == DELTA
    assert plan.pit_loops() == {"a": ((2, 2), (3, 6), (5, 1))}
    assert plan.true_treasures() == ((2, 3),)
    assert plan.exits == (Exit((1, 1), "up", True), Exit((2, 6), "right", False), Exit((5, 3), "down", False))
    assert plan.items_at((4, 1)) == Items((4, 1), bullets=2, grenades=1)
    assert plan.start == (3, 5)
    # Its grid is drawn as render_plan draws it (only the comments differ).
    rendered = render_plan(plan).splitlines()
    assert rendered[rendered.index("grid:"):] == text.splitlines()[text.splitlines().index("grid:"):]


# --- the model -----------------------------------------------------------------------------


def small() -> Plan:
    """  1   2   3
       +###+---+   +
     1 # .   > | D #
       +   +###+###+
     2 # a1  a2  H #
       +###+###+###+
    """
    return plan_of(
        {(1, 1): LAND, (1, 2): River("right"), (1, 3): DELTA, (2, 1): Pit("a", 1), (2, 2): Pit("a", 2),
         (2, 3): HOSPITAL},
        walls=[Wall((1, 2), (1, 3)), Wall((2, 2), (1, 2), destructible=False), Wall((1, 3), (2, 3), False)],
        exits=[Exit((1, 2), "up", False), Exit((1, 3), "up", True)],
    )


def test_sides() -> None:
    plan = small()
    assert plan.side((1, 1), "right") is Side.PASSAGE
    assert plan.side((1, 2), "right") is Side.WALL and plan.side((1, 3), "left") is Side.WALL
    assert plan.side((2, 2), "up") is Side.SOLID
    assert plan.side((1, 1), "left") is Side.OUTER_WALL
    assert plan.side((1, 2), "up") is Side.CLOSED_EXIT
    assert plan.side((1, 3), "up") is Side.OPEN_EXIT
    assert [k.blocks for k in Side] == [False, True, True, True, True, False]
    assert [k.destructible for k in Side] == [False, True, False, False, True, False]
    assert [k.outer for k in Side] == [False, False, False, True, True, True]
    assert plan.wall_between((1, 3), (1, 2)) == Wall((1, 2), (1, 3), True)
    assert plan.wall_between((1, 1), (1, 2)) is None
    assert plan.exit_at((1, 2), "up") == Exit((1, 2), "up", False)
    assert len(plan.outer_sides()) == 10


def test_neighbours_rivers_pits_and_lookups() -> None:
    plan = small()
    assert plan.neighbours((1, 1)) == {"right": (1, 2), "down": (2, 1)}
    assert plan.neighbour((1, 1), "up") is None
    assert plan.river_next((1, 2)) == (1, 3) and plan.river_next((1, 1)) is None
    assert plan.upstream((1, 3)) == ((1, 2),)
    assert plan.pit_next((2, 1)) == (2, 2) and plan.pit_next((2, 2)) == (2, 1)
    assert plan.pit_next((1, 1)) is None
    assert plan.cells_of(Hospital) == ((2, 3),)
    assert plan.cells_of(Pit) == ((2, 1), (2, 2))
    assert (1, 1) in plan and (3, 3) not in plan


def test_pit_next_follows_places_not_reading_order() -> None:
    plan = plan_of({(1, 1): Pit("b", 3), (1, 2): Pit("b", 1), (1, 3): Pit("b", 2), (1, 4): LAND})
    assert plan.pit_loops() == {"b": ((1, 2), (1, 3), (1, 1))}
    assert [plan.pit_next(c) for c in ((1, 2), (1, 3), (1, 1))] == [(1, 3), (1, 1), (1, 2)]


def test_blow() -> None:
    plan = small()
    opened = plan.blow((1, 3), "left")
    assert opened.side((1, 2), "right") is Side.PASSAGE and plan.side((1, 2), "right") is Side.WALL
    assert plan.blow((2, 2), "up") is plan  # indestructible
    assert plan.blow((1, 1), "left") is plan  # an outer wall
    assert plan.blow((1, 1), "right") is plan  # no wall there
    assert plan.blow((1, 2), "up").side((1, 2), "up") is Side.OPEN_EXIT


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: plan_of({}), "at least one cell"),
        (lambda: plan_of({(2, 1): LAND, (2, 2): LAND}), "start at row 1"),
        (lambda: plan_of({(1, 1): LAND, (3, 1): LAND}), "row 2 has no cell"),
        (lambda: plan_of({(1, 1): LAND, (1, 3): LAND}), "column 2 has no cell"),
        (lambda: plan_of({(0, 1): LAND}), "count from 1"),
        (lambda: Plan((Square((1, 1), LAND), Square((1, 1), WEAPONRY))), "given twice"),
        (lambda: plan_of({(1, 1): LAND, (2, 2): LAND}, walls=[Wall((1, 1), (2, 2))]), "not neighbours"),
        (lambda: plan_of({(1, 1): LAND}, walls=[Wall((1, 1), (1, 2))]), "not in the plan"),
        (lambda: plan_of({(1, 1): LAND, (1, 2): LAND}, exits=[Exit((1, 1), "right", True)]), "not an outer side"),
        (lambda: plan_of({(1, 1): LAND}, exits=[Exit((1, 1), "up", True), Exit((1, 1), "up", False)]), "twice"),
        (lambda: plan_of({(1, 1): LAND}, treasures=[Treasure((1, 1), True), Treasure((1, 1), False)]), "two treasures"),
        (lambda: plan_of({(1, 1): LAND}, items=[Items((1, 1))]), "at least one above 0"),
        (lambda: plan_of({(1, 1): LAND}, items=[Items((1, 1), bullets=-1, grenades=2)]), "0 or more"),
        (lambda: plan_of({(1, 1): LAND}, start=(1, 2)), "start cell 1,2"),
        (lambda: plan_of({(1, 1): Pit("A", 1)}), "one letter a-z"),
        (lambda: plan_of({(1, 1): Pit("a", 100)}), "1 to 99"),
        (lambda: plan_of({(1, 1): LAND}, name=" padded"), "name"),
    ],
)
def test_model_refuses_what_cannot_be(build: object, message: str) -> None:
    assert callable(build)
    with pytest.raises(PlanError, match=message):
        build()


def test_plan_is_frozen() -> None:
    plan = small()
    with pytest.raises(AttributeError):
        plan.name = "x"  # type: ignore[misc]


# --- parse errors: line, column, what was expected -------------------------------------------

GOOD = """\
grid:
    1   2
  +---+###+
1 # .   H #
  +###+###+
"""


def error_of(text: str) -> PlanError:
    with pytest.raises(PlanError) as caught:
        parse_plan(text)
    return caught.value


def test_good_minimal_text() -> None:
    plan = parse_plan(GOOD)
    assert plan.types == {(1, 1): LAND, (1, 2): HOSPITAL}
    assert plan.exits == (Exit((1, 1), "up", False),)
    # A line of another kind ends the grid as a blank line does.
    assert parse_plan(GOOD + "treasure 1,1 true\n").treasures == (Treasure((1, 1), True),)
    assert parse_plan(GOOD + "  start 1,2\n").start == (1, 2)
    # Windows line ends and a byte order mark read the same.
    assert parse_plan("\ufeff" + GOOD.replace("\n", "\r\n")) == plan
    with pytest.raises(KeyError):
        plan.side((2, 1), "up")


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        (GOOD.replace("1 # .   H #", "1 # .   X #"), 4, 9, "expected a cell code"),
        (GOOD.replace("1 # .   H #", "1 # .  HW #"), 4, 8, "more than one type (hospital and weaponry)"),
        (GOOD.replace("1 # .   H #", "1 # .   H %"), 4, 11, "between columns"),
        (GOOD.replace("+---+###+\n1", "+-#-+###+\n1"), 3, 5, "between rows"),
        (GOOD.replace("+###+###+", "+###-###+"), 5, 7, "corner `+`"),
        (GOOD.replace("1 # .", "2 # ."), 4, 1, "row 1"),
        (GOOD.replace("1 # .   H #", "1 # .   H #  x"), 4, 14, "right of the grid"),
        (GOOD.replace("1 # .   H #", "1 # .   H #\t"), 4, 12, "tab"),
        (GOOD + "\ntreasure 1,3 true\n", 7, 10, "cell 1,3 is not in the grid"),
        (GOOD + "\ntreasure 1,1 maybe\n", 7, 14, "`true` or `fake`"),
        (GOOD + "\ntreasure 1,1 true\ntreasure 1,1 fake\n", 8, 1, "second treasure"),
        (GOOD + "\nitems 1,1: 2 bullets, 3 knives\n", 7, 23, "bullets, grenades or landmines"),
        (GOOD + "\nitems 1,1: 2 bullets, 1 bullet\n", 7, 23, "given twice"),
        (GOOD + "\n  start 1,1\nstart 1,2\n", 8, 1, "already given on line 7"),
        (GOOD + "\nwalls everywhere\n", 7, 1, "expected `name:`"),
        ("name: x\n" + GOOD + "\nname: y\n", 8, 1, "name is given twice"),
        (GOOD + "\ngrid:\n", 7, 1, "second grid"),
        ("# nothing\n", None, None, "no grid"),
    ],
)
def test_parse_errors_say_where_and_what(text: str, line: int | None, column: int | None, words: str) -> None:
    err = error_of(text)
    assert words in str(err)
    assert (err.line, err.column) == (line, column)


def test_two_types_in_a_cell_is_rule_8_1() -> None:
    err = error_of(GOOD.replace("1 # .   H #", "1 # .  a1W#"))
    assert err.rule == "8.1" and err.cell == (1, 2)
    assert str(err).startswith("line 4, column 8: 8.1: cell 1,2 has more than one type (pit and weaponry)")


def test_grid_line_count() -> None:
    err = error_of("grid:\n  +---+\n1 # . #\n")
    assert "the grid has 2 lines" in str(err)


def test_shapes_and_exits_in_text() -> None:
    text = """\
grid:
    +---+
    # . #
+---+   +---+
| .   .   . #
+###+   +###+
    # W #
    +###+
"""
    plan = parse_plan(text)
    assert plan.cells == {(1, 2), (2, 1), (2, 2), (2, 3), (3, 2)}
    assert plan.side((1, 2), "up") is Side.CLOSED_EXIT
    assert plan.side((2, 1), "left") is Side.CLOSED_EXIT
    assert plan.side((2, 1), "up") is Side.CLOSED_EXIT
    assert plan.side((2, 3), "right") is Side.OUTER_WALL
    assert plan.side((3, 2), "down") is Side.OUTER_WALL
    err = error_of(text.replace("+---+   +---+", "----+   +---+"))
    assert (err.line, err.column) == (4, 1) and "a cell touches this corner" in str(err)
    err = error_of(text.replace("    +---+\n", "    +---+   +\n", 1))
    assert (err.line, err.column) == (2, 13) and "no cell touches this corner" in str(err)


def test_json_errors() -> None:
    good = plan_to_dict(small())
    with pytest.raises(PlanError, match=r"\$.cells\[0\].type"):
        plan_from_dict({**good, "cells": [{"cell": [1, 1], "type": "lava"}]})
    with pytest.raises(PlanError, match="a river has a flow"):
        plan_from_dict({**good, "cells": [{"cell": [1, 1], "type": "river"}]})
    with pytest.raises(PlanError, match="a land cell has no flow"):
        plan_from_dict({**good, "cells": [{"cell": [1, 1], "type": "land", "flow": "up"}]})
    with pytest.raises(PlanError, match="unknown field"):
        plan_from_dict({**good, "colour": "red"})
    with pytest.raises(PlanError, match="span 2 rows and 3 columns"):
        plan_from_dict({**good, "rows": 3})
    with pytest.raises(PlanError, match="not a plan"):
        plan_from_json("{")
    for junk in ([], "plan", None, {}):
        with pytest.raises(PlanError, match="not a plan"):
            plan_from_dict(junk)
    with pytest.raises(PlanError, match="at most 60 rows"):
        plan_from_dict({**good, "rows": 61})
    assert json.loads(plan_to_json(small()))["walls"][0] == {"cells": [[1, 2], [1, 3]], "destructible": True}


def test_json_form_is_documented_shape() -> None:
    value = plan_to_dict(parse_plan(EXAMPLE.read_text()))
    assert set(value) == {"rows", "columns", "cells", "walls", "exits", "treasures", "items", "start", "name"}
    assert value["cells"][1] == {"cell": [1, 2], "type": "river", "flow": "right"}
    assert {"cell": [2, 2], "type": "pit", "loop": "a", "place": 1} in value["cells"]
    assert value["treasures"][0] == {"cell": [2, 3], "kind": "true"}
    assert value["items"] == [{"cell": [4, 1], "bullets": 2, "grenades": 1}]
    assert msgspec.json.decode(plan_to_json(parse_plan(EXAMPLE.read_text()))) == value


# --- bad input: a PlanError, never anything else ------------------------------------------------

FORMAT_CHARS = " +-#|.LHWEDv<>^a1b9\n:,xtrueitemsgrid"


@settings(max_examples=80, deadline=None)
@given(plans(max_rows=4, max_columns=4), st.data())
def test_a_mangled_text_is_a_plan_or_a_plan_error(plan: Plan, data: st.DataObject) -> None:
    text = render_plan(plan)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 3))
        insert = data.draw(st.text(alphabet=FORMAT_CHARS, max_size=3))
        text = text[:at] + insert + text[at + cut :]
    try:
        again = parse_plan(text)
    except PlanError as exc:
        assert exc.message
        return
    assert parse_plan(render_plan(again)) == again


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_a_plan_or_a_plan_error(text: str) -> None:
    try:
        parse_plan("grid:\n" + text)
        parse_plan(text)
    except PlanError:
        pass


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 70) | st.sampled_from(["land", "pit", "river", "up", "a", "true"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["rows", "columns", "cells", "cell", "type", "flow", "loop", "place", "walls", "exits",
                         "side", "open", "kind", "start", "name", "bullets"]), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(plans(max_rows=3, max_columns=3), json_values, st.data())
def test_a_mangled_json_form_is_a_plan_or_a_plan_error(plan: Plan, junk: object, data: st.DataObject) -> None:
    value = plan_to_dict(plan)
    key = data.draw(st.sampled_from(sorted(value)))
    target = value[key]
    if isinstance(target, list) and target and data.draw(st.booleans()):
        entry = target[data.draw(st.integers(0, len(target) - 1))]
        if isinstance(entry, dict):
            entry[data.draw(st.sampled_from(sorted(entry)))] = junk
    else:
        value[key] = junk
    try:
        plan_from_dict(value)
    except PlanError as exc:
        assert exc.message
