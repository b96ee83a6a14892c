"""A Labyrinth plan as text a person writes, and as JSON for frontends.

The text format (docs/rules/labyrinth.md gives the grammar and a complete example):

    # comment lines start with '#'
    name: A small plan

    grid:
          1   2   3   4
        +###+###+---+###+
      1 # .   H | >   D #
        +   +###+###+   +
      2   a1  . | W   a2#
        +###+###+###+###+

    treasure 1,1 true
    treasure 2,2 fake
    items 2,2: 2 bullets, 1 grenade, 1 landmine
    start 1,2

The grid is a drawing: every cell is 3 characters wide between border characters, every
border between two rows is a line of its own; corners are `+`. A cell holds its type's
code: `.` (or `L`) land, `H` hospital, `W` weaponry, `E` encephalitis, `D` delta, `>` `<`
`^` `v` a river flowing that way, and a letter and a number for a pit (`a1` is pit 1 of
loop a); three spaces are no cell (the plan leaves it out). A border is ` ` (none), `-`
(`---` between rows; `|` between columns) for a destructible wall, `#` (`###`) for an
indestructible one. On the outline the same three mean an open exit, a closed exit and an
indestructible outer wall. Row numbers at the left and the column ruler above are for the
reader; the parser checks row numbers when they are there. The grid ends at a blank line
(or a line starting with a keyword, or the end of the text).

`parse_plan(text)` gives the plan or raises PlanError with the line and column and what was
expected; `render_plan(plan)` writes the canonical text, and parse_plan(render_plan(p)) == p.
`plan_to_json` / `plan_from_json` (and the `_dict` forms) are the JSON form, also exact.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

import msgspec

from domain.games.labyrinth.plan import (
    DELTA,
    ENCEPHALITIS,
    HOSPITAL,
    LAND,
    MAX_PLACE,
    OPPOSITE,
    WEAPONRY,
    Cell,
    CellType,
    Delta,
    Direction,
    Encephalitis,
    Exit,
    Hospital,
    Items,
    Land,
    Pit,
    Plan,
    PlanError,
    River,
    Side,
    Square,
    Treasure,
    Wall,
    Weaponry,
    cell_name,
    type_name,
)

MAX_TEXT = 200_000
"""The longest plan text (characters) the parser reads."""
MAX_SIZE = 60
"""The most rows, and the most columns, a plan may have in text or JSON."""

FLOW_CODES: Mapping[str, Direction] = {"^": "up", ">": "right", "v": "down", "<": "left"}
CODE_OF_FLOW: Mapping[Direction, str] = {d: c for c, d in FLOW_CODES.items()}
PLAIN_CODES: Mapping[str, CellType] = {
    ".": LAND,
    "L": LAND,
    "H": HOSPITAL,
    "W": WEAPONRY,
    "E": ENCEPHALITIS,
    "D": DELTA,
}
_PIT = re.compile(r"([a-z])([0-9]{1,2})")
_TOKEN = re.compile(r"[a-z][0-9]{1,2}|[.LHWED<>^v]")
_CELL = r"([0-9]+),([0-9]+)"
_ITEM_KINDS = {
    "bullet": "bullets",
    "bullets": "bullets",
    "grenade": "grenades",
    "grenades": "grenades",
    "landmine": "landmines",
    "landmines": "landmines",
}

_KEYWORDS = ("treasure", "items", "start")

HEADER = "# A Labyrinth plan; docs/rules/labyrinth.md describes the format."


# --- codes -------------------------------------------------------------------------------


def type_code(kind: CellType) -> str:
    """The grid code of a cell type: `.`, `H`, `W`, `E`, `D`, an arrow, or `a1` for a pit."""
    if isinstance(kind, River):
        return CODE_OF_FLOW[kind.flow]
    if isinstance(kind, Pit):
        return f"{kind.loop}{kind.place}"
    if isinstance(kind, Land):
        return "."
    if isinstance(kind, Hospital):
        return "H"
    if isinstance(kind, Weaponry):
        return "W"
    if isinstance(kind, Encephalitis):
        return "E"
    assert isinstance(kind, Delta)
    return "D"


def _type_of_code(code: str) -> CellType | None:
    plain = PLAIN_CODES.get(code)
    if plain is not None:
        return plain
    if code in FLOW_CODES:
        return River(FLOW_CODES[code])
    pit = _PIT.fullmatch(code)
    if pit is not None:
        return Pit(pit.group(1), int(pit.group(2)))
    return None


_H_BORDER = {" ": "   ", "-": "---", "#": "###"}
_V_CODES = {" ": " ", "|": "-", "#": "#"}
_V_BORDER = {code: char for char, code in _V_CODES.items()}


def _inner_code(kind: Side) -> str:
    return {Side.PASSAGE: " ", Side.WALL: "-", Side.SOLID: "#"}[kind]


def _outer_code(kind: Side) -> str:
    return {Side.OPEN_EXIT: " ", Side.CLOSED_EXIT: "-", Side.OUTER_WALL: "#"}[kind]


# --- rendering ---------------------------------------------------------------------------


def grid_lines(plan: Plan) -> list[str]:
    """The grid drawing of a plan: the column ruler, then 2 * rows + 1 lines."""
    rows, columns = plan.rows, plan.columns
    label = len(str(rows)) + 2
    margin = " " * (label + 1)
    ruler = (margin + "".join(f" {c:^3}" for c in range(1, columns + 1))).rstrip()
    lines = [ruler]
    for r in range(0, rows + 1):
        # The border line above row r + 1 (below row r).
        chars: list[str] = []
        for c in range(0, columns + 1):
            around = [(r, c), (r, c + 1), (r + 1, c), (r + 1, c + 1)]
            chars.append("+" if any(cell in plan for cell in around) else " ")
            if c < columns:
                chars.append(_H_BORDER[_border_code(plan, (r, c + 1), (r + 1, c + 1), "down")])
        lines.append((margin + "".join(chars)).rstrip())
        if r == rows:
            break
        row = r + 1
        chars = []
        for c in range(0, columns + 1):
            chars.append(_V_BORDER[_border_code(plan, (row, c), (row, c + 1), "right")])
            if c < columns:
                cell = (row, c + 1)
                chars.append(_field(type_code(plan.type_at(cell))) if cell in plan else "   ")
        lines.append((f"{row:>{label}} " + "".join(chars)).rstrip())
    return lines


def _field(code: str) -> str:
    """A cell's code in its 3 characters: ` . `, ` a1`, `a12`."""
    return f" {code}".ljust(3) if len(code) < 3 else code


def _border_code(plan: Plan, before: Cell, after: Cell, direction: Direction) -> str:
    """The code of the border between `before` and the cell after it in `direction`
    ("down" or "right"), whichever of them is in the plan."""
    if before in plan:
        kind = plan.side(before, direction)
    elif after in plan:
        kind = plan.side(after, "up" if direction == "down" else "left")
    else:
        return " "
    return _outer_code(kind) if kind.outer else _inner_code(kind)


def _items_text(pile: Items) -> str:
    parts = []
    for count, word in ((pile.bullets, "bullet"), (pile.grenades, "grenade"), (pile.landmines, "landmine")):
        if count:
            parts.append(f"{count} {word}" + ("" if count == 1 else "s"))
    return ", ".join(parts)


def render_plan(plan: Plan) -> str:
    """The canonical text of a plan (parse_plan reads it back to an equal plan)."""
    lines = [HEADER]
    if plan.name:
        lines.append(f"name: {plan.name}")
    lines += ["", "grid:", *grid_lines(plan), ""]
    for treasure in plan.treasures:
        lines.append(f"treasure {cell_name(treasure.cell)} {'true' if treasure.is_true else 'fake'}")
    for pile in plan.items:
        lines.append(f"items {cell_name(pile.cell)}: {_items_text(pile)}")
    if plan.start is not None:
        lines.append(f"start {cell_name(plan.start)}")
    while lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


# --- parsing -----------------------------------------------------------------------------


def parse_plan(text: str) -> Plan:
    """The plan a text describes; PlanError (with line and column) when it does not."""
    if not isinstance(text, str):
        raise PlanError("a plan is a text")
    if len(text) > MAX_TEXT:
        raise PlanError(f"the text is over {MAX_TEXT} characters")
    lines = text.removeprefix("\ufeff").splitlines()  # a byte order mark some editors write
    name: str | None = None
    grid: tuple[int, list[str]] | None = None  # (line number of its first line, its lines)
    statements: list[tuple[int, str]] = []
    index = 0
    while index < len(lines):
        number, line = index + 1, lines[index]
        stripped = line.strip()
        index += 1
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.lower() == "grid:":
            if grid is not None:
                raise PlanError(f"a second grid (the first starts on line {grid[0] - 1})", line=number, column=1)
            body: list[str] = []
            while index < len(lines) and lines[index].strip():
                first = lines[index].split()[0].lower()
                if first in _KEYWORDS or first.startswith(("name:", "grid:")):
                    break  # no grid line starts so: the grid ended without a blank line
                body.append(lines[index])
                index += 1
            grid = (number + 1, body)
            continue
        if stripped.lower().startswith("name:"):
            if name is not None:
                raise PlanError("the name is given twice", line=number, column=_col(line, stripped))
            name = stripped[len("name:"):].strip()
            if not name.isprintable():
                raise PlanError("a name is printable text", line=number, column=_col(line, stripped))
            continue
        statements.append((number, line))
    if grid is None:
        raise PlanError("no grid: write a line `grid:` and the drawing under it (docs/rules/labyrinth.md)")
    types, walls, exits = _parse_grid(*grid)
    cells = set(types)
    treasures: dict[Cell, Treasure] = {}
    items: dict[Cell, Items] = {}
    start: Cell | None = None
    start_line = 0
    for number, line in statements:
        stripped = line.strip()
        col = _col(line, stripped)
        word = stripped.split()[0].lower()
        if word == "treasure":
            m = re.fullmatch(r"treasure\s+" + _CELL + r"\s+(\S+)", stripped, re.IGNORECASE)
            if m is None:
                raise PlanError("expected `treasure ROW,COLUMN true` or `treasure ROW,COLUMN fake`",
                                line=number, column=col)
            cell = _cell_in(m, cells, number, line)
            kind = m.group(3).lower()
            if kind not in ("true", "fake"):
                raise PlanError(f"expected `true` or `fake` after the cell, not {m.group(3)!r}",
                                line=number, column=col + m.start(3))
            if cell in treasures:
                raise PlanError(f"a second treasure at {cell_name(cell)}: at most one a cell at the start",
                                line=number, column=col, cell=cell)
            treasures[cell] = Treasure(cell, kind == "true")
        elif word == "items":
            m = re.fullmatch(r"items\s+" + _CELL + r"\s*:\s*(.*)", stripped, re.IGNORECASE)
            if m is None:
                raise PlanError("expected `items ROW,COLUMN: 2 bullets, 1 grenade, 1 landmine`",
                                line=number, column=col)
            cell = _cell_in(m, cells, number, line)
            if cell in items:
                raise PlanError(f"items at {cell_name(cell)} are already given", line=number, column=col, cell=cell)
            items[cell] = _parse_items(cell, m.group(3), number, col + m.start(3))
        elif word == "start":
            m = re.fullmatch(r"start\s+" + _CELL, stripped, re.IGNORECASE)
            if m is None:
                raise PlanError("expected `start ROW,COLUMN`", line=number, column=col)
            if start is not None:
                raise PlanError(f"the start cell is already given on line {start_line}", line=number, column=col)
            start, start_line = _cell_in(m, cells, number, line), number
        else:
            raise PlanError(
                f"expected `name:`, `grid:`, `treasure`, `items`, `start` or a `#` comment, not {word!r}",
                line=number, column=col,
            )
    try:
        return Plan(
            squares=tuple(Square(cell, kind) for cell, kind in types.items()),
            walls=tuple(walls),
            exits=tuple(exits),
            treasures=tuple(treasures.values()),
            items=tuple(items.values()),
            start=start,
            name=name or "",
        )
    except PlanError as exc:  # the checks above catch everything the text can say
        raise PlanError(exc.message, rule=exc.rule, cell=exc.cell) from None


def _col(line: str, stripped: str) -> int:
    return line.index(stripped[0]) + 1 if stripped else 1


def _cell_in(m: re.Match[str], cells: set[Cell], number: int, line: str) -> Cell:
    cell = (int(m.group(1)), int(m.group(2)))
    if cell not in cells:
        raise PlanError(f"cell {cell_name(cell)} is not in the grid", line=number,
                        column=line.index(m.group(0)) + 1 + m.start(1), cell=cell)
    return cell


def _parse_items(cell: Cell, text: str, number: int, column: int) -> Items:
    counts = {"bullets": 0, "grenades": 0, "landmines": 0}
    seen: set[str] = set()
    offset = 0
    for part in text.split(","):
        at = column + offset + (len(part) - len(part.lstrip()))
        offset += len(part) + 1
        m = re.fullmatch(r"\s*([0-9]+)\s+([a-z]+)\s*", part, re.IGNORECASE)
        kind = _ITEM_KINDS.get(m.group(2).lower()) if m else None
        if m is None or kind is None:
            raise PlanError(f"expected a number and bullets, grenades or landmines, not {part.strip()!r}",
                            line=number, column=at)
        if kind in seen:
            raise PlanError(f"{kind} are given twice", line=number, column=at)
        seen.add(kind)
        counts[kind] = int(m.group(1))
    if sum(counts.values()) == 0:
        raise PlanError("items: at least one item", line=number, column=column)
    return Items(cell, **counts)


def _parse_grid(first: int, body: list[str]) -> tuple[dict[Cell, CellType], list[Wall], list[Exit]]:
    """Cell types, walls and exits from the grid lines (the first is line `first`)."""
    for k, raw in enumerate(body):
        if "\t" in raw:
            raise PlanError("a tab in the grid: draw it with spaces", line=first + k, column=raw.index("\t") + 1)
    if body and "+" not in body[0] and re.fullmatch(r"[0-9 ]*", body[0]):
        body, first = body[1:], first + 1  # the column ruler
    if len(body) < 3 or len(body) % 2 == 0:
        raise PlanError(
            f"the grid has {len(body)} lines; expected a border line, then a cell line and a border line "
            "for each row",
            line=first + len(body) if body else first,
        )
    rows = len(body) // 2
    if rows > MAX_SIZE:
        raise PlanError(f"{rows} rows; at most {MAX_SIZE}", line=first)
    border_lines = body[0::2]
    plus = [line.find("+") for line in border_lines if "+" in line]
    if not plus:
        raise PlanError("no corner `+` in the grid's border lines", line=first, column=1)
    edge = min(plus)
    right = max(line.rfind("+") for line in border_lines)
    if (right - edge) % 4:
        k = next(i for i, line in enumerate(border_lines) if line.rfind("+") == right)
        raise PlanError(f"a corner `+` at column {right + 1}: corners stand every 4 columns from the "
                        f"grid's left edge (column {edge + 1})", line=first + 2 * k, column=right + 1)
    columns = (right - edge) // 4
    if columns < 1:
        raise PlanError("the grid has no cell column", line=first, column=edge + 1)
    if columns > MAX_SIZE:
        raise PlanError(f"{columns} columns; at most {MAX_SIZE}", line=first, column=right + 1)
    width = edge + 4 * columns + 1
    lines = []
    for k, raw in enumerate(body):
        if len(raw) > width and raw[width:].strip():
            extra = width + len(raw[width:]) - len(raw[width:].lstrip())
            raise PlanError("text right of the grid's right edge", line=first + k, column=extra + 1)
        lines.append(raw.ljust(width))

    def at(k: int, c: int) -> tuple[int, int]:
        return first + k, c + 1

    # Row labels, then cell types.
    types: dict[Cell, CellType] = {}
    for r in range(1, rows + 1):
        k = 2 * r - 1
        label = lines[k][:edge].strip()
        if label and label != str(r):
            line, col = at(k, lines[k].index(label))
            raise PlanError(f"this is the line of row {r}, labelled {label!r}", line=line, column=col)
        if lines[k - 1][:edge].strip():
            line, col = at(k - 1, 0)
            raise PlanError("a border line has nothing left of the grid's edge", line=line, column=col)
        for c in range(1, columns + 1):
            start = edge + 4 * (c - 1) + 1
            field = lines[k][start:start + 3]
            code = field.strip()
            if not code:
                continue
            line, col = at(k, start + field.index(code[0]))
            kind = _type_of_code(code) if " " not in code else None
            if kind is None:
                tokens = _TOKEN.findall(code)
                if len(tokens) > 1 and "".join(tokens) == code:
                    names = " and ".join(type_name(t) for t in map(_type_of_code, tokens) if t is not None)
                    raise PlanError(f"cell {r},{c} has more than one type ({names}); a cell has one type",
                                    line=line, column=col, rule="8.1", cell=(r, c))
                raise PlanError(
                    f"cell {r},{c}: expected a cell code (. H W E D < > ^ v, or a pit such as a1), "
                    f"not {code!r}",
                    line=line, column=col, cell=(r, c),
                )
            if isinstance(kind, Pit) and not 1 <= kind.place <= MAX_PLACE:
                raise PlanError(f"cell {r},{c}: a pit's place in its loop is 1 to {MAX_PLACE}",
                                line=line, column=col, cell=(r, c))
            types[(r, c)] = kind
    if not types:
        raise PlanError("the grid has no cell", line=first)

    walls: list[Wall] = []
    exits: list[Exit] = []

    def border(code: str, a: Cell, b: Cell, direction: Direction, line: int, col: int) -> None:
        """Record the border between a and b (b is a stepped in `direction`): `code` is
        " " (none), "-" (destructible) or "#" (indestructible)."""
        inside = (a in types, b in types)
        if inside == (True, True):
            if code != " ":
                walls.append(Wall(a, b, destructible=code == "-"))
        elif inside == (False, False):
            if code != " ":
                raise PlanError(f"a wall between {cell_name(a)} and {cell_name(b)}, neither of them a cell",
                                line=line, column=col)
        elif code != "#":
            cell, side = (a, direction) if inside[0] else (b, OPPOSITE[direction])
            exits.append(Exit(cell, side, open=code == " "))

    for i in range(0, rows + 1):
        k = 2 * i
        for c in range(0, columns + 1):
            pos = edge + 4 * c
            corner = lines[k][pos]
            around = [(i, c), (i, c + 1), (i + 1, c), (i + 1, c + 1)]
            needed = any(cell in types for cell in around)
            if corner != ("+" if needed else " "):
                line, col = at(k, pos)
                raise PlanError(
                    "expected a corner `+` (a cell touches this corner)" if needed
                    else "expected a space: no cell touches this corner",
                    line=line, column=col,
                )
            if c == columns:
                break
            field = lines[k][pos + 1:pos + 4]
            if field not in _H_BORDER.values():
                line, col = at(k, pos + 1 + _first_odd(field))
                raise PlanError("expected a border between rows: `   ` (none, or an open exit), "
                                "`---` (destructible) or `###` (indestructible)", line=line, column=col)
            line, col = at(k, pos + 1)
            border(field[0], (i, c + 1), (i + 1, c + 1), "down", line, col)
        if i == rows:
            break
        k += 1
        for c in range(0, columns + 1):
            pos = edge + 4 * c
            line, col = at(k, pos)
            vcode = _V_CODES.get(lines[k][pos])
            if vcode is None:
                raise PlanError("expected a border between columns: ` ` (none, or an open exit), "
                                "`|` (destructible) or `#` (indestructible)", line=line, column=col)
            border(vcode, (i + 1, c), (i + 1, c + 1), "right", line, col)
    return types, walls, exits


def _first_odd(field: str) -> int:
    """Where a border field of three characters stops being one repeated character."""
    for n, ch in enumerate(field):
        if ch != field[0] or ch not in " -#":
            return n
    return 0


# --- JSON --------------------------------------------------------------------------------

CellRef = tuple[int, int]


class _Json(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    pass


class JsonCell(_Json, frozen=True):
    cell: CellRef
    type: Literal["land", "hospital", "weaponry", "encephalitis", "delta", "river", "pit"]
    flow: Direction | None = None
    loop: str | None = None
    place: int | None = None


class JsonWall(_Json, frozen=True):
    cells: tuple[CellRef, CellRef]
    destructible: bool


class JsonExit(_Json, frozen=True):
    cell: CellRef
    side: Direction
    open: bool


class JsonTreasure(_Json, frozen=True):
    cell: CellRef
    kind: Literal["true", "fake"]


class JsonItems(_Json, frozen=True):
    cell: CellRef
    bullets: int = 0
    grenades: int = 0
    landmines: int = 0


class JsonPlan(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The JSON form of a plan (docs/rules/labyrinth.md, "JSON")."""

    rows: int
    columns: int
    cells: tuple[JsonCell, ...]
    walls: tuple[JsonWall, ...] = ()
    exits: tuple[JsonExit, ...] = ()
    treasures: tuple[JsonTreasure, ...] = ()
    items: tuple[JsonItems, ...] = ()
    start: CellRef | None = None
    name: str = ""


PlainName = Literal["land", "hospital", "weaponry", "encephalitis", "delta"]
_PLAIN_NAMES: Mapping[type, PlainName] = {
    Land: "land",
    Hospital: "hospital",
    Weaponry: "weaponry",
    Encephalitis: "encephalitis",
    Delta: "delta",
}
_PLAIN_TYPES: Mapping[str, CellType] = {
    "land": LAND,
    "hospital": HOSPITAL,
    "weaponry": WEAPONRY,
    "encephalitis": ENCEPHALITIS,
    "delta": DELTA,
}


def _json_cell(square: Square) -> JsonCell:
    kind = square.type
    if isinstance(kind, River):
        return JsonCell(square.cell, "river", flow=kind.flow)
    if isinstance(kind, Pit):
        return JsonCell(square.cell, "pit", loop=kind.loop, place=kind.place)
    return JsonCell(square.cell, _PLAIN_NAMES[type(kind)])


def plan_to_json_struct(plan: Plan) -> JsonPlan:
    return JsonPlan(
        rows=plan.rows,
        columns=plan.columns,
        cells=tuple(_json_cell(s) for s in plan.squares),
        walls=tuple(JsonWall((w.a, w.b), w.destructible) for w in plan.walls),
        exits=tuple(JsonExit(e.cell, e.side, e.open) for e in plan.exits),
        treasures=tuple(JsonTreasure(t.cell, "true" if t.is_true else "fake") for t in plan.treasures),
        items=tuple(JsonItems(i.cell, i.bullets, i.grenades, i.landmines) for i in plan.items),
        start=plan.start,
        name=plan.name,
    )


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """The JSON form as plain values (dicts, lists, numbers, strings)."""
    value: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(plan_to_json_struct(plan)))
    return value


def plan_to_json(plan: Plan) -> str:
    """The JSON form as text (one line; keys in a fixed order)."""
    return msgspec.json.encode(plan_to_json_struct(plan)).decode()


def plan_from_json_struct(data: JsonPlan) -> Plan:
    if max(data.rows, data.columns) > MAX_SIZE or len(data.cells) > MAX_SIZE * MAX_SIZE:
        raise PlanError(f"at most {MAX_SIZE} rows and {MAX_SIZE} columns")
    types: dict[Cell, CellType] = {}
    for n, entry in enumerate(data.cells):
        where = f"cells[{n}] ({cell_name(entry.cell)})"
        extra = {"flow": entry.flow, "loop": entry.loop, "place": entry.place}
        wanted: Iterable[str] = ()
        kind: CellType
        if entry.type == "river":
            wanted = ("flow",)
            if entry.flow is None:
                raise PlanError(f"{where}: a river has a flow")
            kind = River(entry.flow)
        elif entry.type == "pit":
            wanted = ("loop", "place")
            if entry.loop is None or entry.place is None:
                raise PlanError(f"{where}: a pit has a loop and a place")
            kind = Pit(entry.loop, entry.place)
        else:
            kind = _PLAIN_TYPES[entry.type]
        for key, value in extra.items():
            if value is not None and key not in wanted:
                raise PlanError(f"{where}: a {entry.type} cell has no {key}")
        if entry.cell in types:
            raise PlanError(f"{where}: the cell is given twice", cell=entry.cell)
        types[entry.cell] = kind
    plan = Plan(
        squares=tuple(Square(cell, kind) for cell, kind in types.items()),
        walls=tuple(Wall(w.cells[0], w.cells[1], w.destructible) for w in data.walls),
        exits=tuple(Exit(e.cell, e.side, e.open) for e in data.exits),
        treasures=tuple(Treasure(t.cell, t.kind == "true") for t in data.treasures),
        items=tuple(Items(i.cell, i.bullets, i.grenades, i.landmines) for i in data.items),
        start=data.start,
        name=data.name,
    )
    if (plan.rows, plan.columns) != (data.rows, data.columns):
        raise PlanError(f"rows and columns are {data.rows} and {data.columns}, but the cells span "
                        f"{plan.rows} rows and {plan.columns} columns")
    return plan


def plan_from_dict(value: Any) -> Plan:
    """A plan from its JSON form as plain values; PlanError naming the place if it is not one."""
    try:
        data = msgspec.convert(value, JsonPlan)
    except msgspec.ValidationError as exc:
        raise PlanError(f"not a plan's JSON form: {exc}") from None
    return plan_from_json_struct(data)


def plan_from_json(text: str | bytes) -> Plan:
    """A plan from its JSON text; PlanError naming the place if it is not one."""
    if len(text) > MAX_TEXT:
        raise PlanError(f"the text is over {MAX_TEXT} characters")
    try:
        data = msgspec.json.decode(text, type=JsonPlan)
    except msgspec.DecodeError as exc:
        raise PlanError(f"not a plan's JSON form: {exc}") from None
    return plan_from_json_struct(data)
