"""The Labyrinth plan as data: cells and their types, walls, exits, treasures and items.

A plan is the game master's secret map (section B of the rule book, 1.4): the walls and
exits, the type of every cell, and where the treasures (and any other items) lie at the
start. `Plan` is a frozen value; every method is a pure function of it.

Cells. A cell is `(row, column)`, both counted from 1: row 1 is the top row, column 1 the
left column, exactly as the text format writes a cell (`3,4` is row 3, column 4;
`cell_name`). The plan's shape is the set of its cells, any subset of its bounding
rectangle: a plan may leave cells out (a square without its corners, a hole in the
middle). The bounding rectangle starts at (1, 1), and every row and every column of it
holds at least one cell; `rows` and `columns` are its size.

Directions are "up" (row - 1), "right" (column + 1), "down" (row + 1), "left"
(column - 1); `step(cell, direction)` is the cell next to it, whether or not it is in the
plan. Two cells of the plan are neighbours when they share a side.

Cell types (one per cell; `CellType` is the union of these frozen structs):
  `Land()`, `Hospital()`, `Weaponry()` (the armory), `Encephalitis()`, `Delta()`,
  `River(flow)`: the flow points to a neighbouring cell ("up", "right", "down", "left"),
  `Pit(loop, place)`: pit number `place` (1..99) of the pit loop named `loop` (one
  lowercase letter, "a".."z"). A player falling into pit k of a loop arrives at pit k+1
  of the same loop, after the last one at pit 1 (`pit_next`).
The constants LAND, HOSPITAL, WEAPONRY, ENCEPHALITIS and DELTA are the plain types.

Sides. Every side of a cell is one of `Side`:
  PASSAGE      no wall between this cell and its neighbour,
  WALL         an inner wall, destructible by a grenade (the rule book's only kind),
  SOLID        an indestructible inner wall (a plan may have them),
  OUTER_WALL   an outer side that is an indestructible wall,
  CLOSED_EXIT  an outer side that is a destructible wall: blown up, it is an open exit,
  OPEN_EXIT    an outer side a player walks out through.
An outer side is a side of a cell whose neighbour in that direction is not in the plan.
The plan stores inner walls as `Wall(a, b, destructible)` (a and b neighbours, a < b)
and exits as `Exit(cell, side, open)`; every outer side without an `Exit` is an
OUTER_WALL. `side(cell, direction)` answers for any side; `blocks`, `destructible` and
`outer` tell what a Side does.

Treasures and items at the start. `Treasure(cell, is_true)`: at most one treasure a cell
at the start. `Items(cell, bullets, grenades, landmines)`: items lying on a cell at the
start (not activated; at least one of them, at most one `Items` a cell). `start`: the
cell every player starts from under option 7.6, or None.

Construction checks the geometry (cells from 1, unique; walls between neighbouring
cells of the plan; exits on outer sides; treasures and items on cells of the plan; the
limits above) and raises `PlanError` otherwise. It keeps every tuple in one canonical
order, so two plans built from the same facts in any order are equal. It does not check
the rules of the game (a pit loop numbered 1..N, rivers ending in one delta, section 8):
that is the validator's work, and a plan breaking them can be built, drawn and written.

Helpers for a validator and a game master: `type_at`, `neighbour`, `neighbours`,
`side`, `wall_between`, `exit_at`, `exits`, `outer_sides`, `river_next`,
`upstream`, `pit_next`, `pit_loops`, `cells_of`, `treasure_at`, `items_at`, and `blow`,
which returns the plan with a destructible wall blown up (a game master's current
labyrinth is its plan with the walls blown so far).
"""

from __future__ import annotations

import enum
import string
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import Literal

import msgspec

Cell = tuple[int, int]
"""(row, column), both from 1; row 1 is the top row, column 1 the left one."""

Direction = Literal["up", "right", "down", "left"]
DIRECTIONS: tuple[Direction, ...] = ("up", "right", "down", "left")
OFFSETS: Mapping[Direction, Cell] = {"up": (-1, 0), "right": (0, 1), "down": (1, 0), "left": (0, -1)}
OPPOSITE: Mapping[Direction, Direction] = {
    "up": "down",
    "right": "left",
    "down": "up",
    "left": "right",
}
LOOP_NAMES = string.ascii_lowercase
"""The names a pit loop may have: one lowercase letter."""
MAX_PLACE = 99
"""The highest place a pit may have in its loop."""


class PlanError(ValueError):
    """A plan that cannot be: the message says what and where.

    `line` and `column` (from 1) locate the error in a text being parsed, `rule` names the
    rule book's rule it breaks ("8.1") when it is one, and `cell` the cell concerned.
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        rule: str | None = None,
        cell: Cell | None = None,
    ) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.rule = rule
        self.cell = cell
        where = ""
        if line is not None:
            where = f"line {line}" + (f", column {column}" if column is not None else "") + ": "
        super().__init__(where + (f"{rule}: " if rule else "") + message)


def cell_name(cell: Cell) -> str:
    """A cell as the text format writes it: `3,4` is row 3, column 4."""
    return f"{cell[0]},{cell[1]}"


def step(cell: Cell, direction: Direction) -> Cell:
    """The cell next to `cell` in `direction`, in the plan or not."""
    dr, dc = OFFSETS[direction]
    return (cell[0] + dr, cell[1] + dc)


def direction_between(a: Cell, b: Cell) -> Direction | None:
    """The direction from a to the neighbouring cell b; None when they are not neighbours."""
    for direction in DIRECTIONS:
        if step(a, direction) == b:
            return direction
    return None


# --- cell types --------------------------------------------------------------------------


class Land(msgspec.Struct, frozen=True, tag="land"):
    """A cell that does nothing to a player (4.1)."""


class Hospital(msgspec.Struct, frozen=True, tag="hospital"):
    """Heals the wounded and infected; no shooting from or through it (4.2)."""


class Weaponry(msgspec.Struct, frozen=True, tag="weaponry"):
    """The armory: refills bullets and grenades; no shooting from or through it (4.3)."""


class Encephalitis(msgspec.Struct, frozen=True, tag="encephalitis"):
    """The mite's cell (4.7)."""


class Delta(msgspec.Struct, frozen=True, tag="delta"):
    """The last cell of a river system: flow in, none out (4.5)."""


class River(msgspec.Struct, frozen=True, tag="river"):
    """A river cell whose flow carries a player to the neighbour in `flow` (4.5, 4.6)."""

    flow: Direction


class Pit(msgspec.Struct, frozen=True, tag="pit"):
    """Pit number `place` of the loop `loop` (4.4)."""

    loop: str
    place: int


CellType = Land | Hospital | Weaponry | Encephalitis | Delta | River | Pit

LAND = Land()
HOSPITAL = Hospital()
WEAPONRY = Weaponry()
ENCEPHALITIS = Encephalitis()
DELTA = Delta()

TYPE_NAMES: Mapping[type, str] = {
    Land: "land",
    Hospital: "hospital",
    Weaponry: "weaponry",
    Encephalitis: "encephalitis",
    Delta: "delta",
    River: "river",
    Pit: "pit",
}


def type_name(kind: CellType) -> str:
    """The type's name as the rule book says it: "land", "river", "pit", ..."""
    return TYPE_NAMES[type(kind)]


# --- what lies on and between cells ------------------------------------------------------


class Square(msgspec.Struct, frozen=True):
    """A cell of the plan and its type."""

    cell: Cell
    type: CellType


class Wall(msgspec.Struct, frozen=True):
    """An inner wall between the neighbouring cells a and b (a < b once built)."""

    a: Cell
    b: Cell
    destructible: bool = True


class Exit(msgspec.Struct, frozen=True):
    """An exit on the outer side `side` of `cell`: open, or closed by a destructible wall."""

    cell: Cell
    side: Direction
    open: bool


class Treasure(msgspec.Struct, frozen=True):
    """A treasure lying on `cell` at the start: the true one or a fake."""

    cell: Cell
    is_true: bool


class Items(msgspec.Struct, frozen=True):
    """Items lying on `cell` at the start (landmines not activated)."""

    cell: Cell
    bullets: int = 0
    grenades: int = 0
    landmines: int = 0


class Side(enum.Enum):
    """What is on one side of a cell."""

    PASSAGE = "passage"
    WALL = "wall"
    SOLID = "indestructible wall"
    OUTER_WALL = "outer wall"
    CLOSED_EXIT = "closed exit"
    OPEN_EXIT = "open exit"

    @property
    def blocks(self) -> bool:
        """A player moving this way hits a wall."""
        return self not in (Side.PASSAGE, Side.OPEN_EXIT)

    @property
    def destructible(self) -> bool:
        """A grenade blows it up (a wall, or a closed exit which becomes open)."""
        return self in (Side.WALL, Side.CLOSED_EXIT)

    @property
    def outer(self) -> bool:
        """A side on the labyrinth's outline: moving through it (when open) leaves."""
        return self in (Side.OUTER_WALL, Side.CLOSED_EXIT, Side.OPEN_EXIT)


_DIRECTION_ORDER = {d: i for i, d in enumerate(DIRECTIONS)}


class Plan(msgspec.Struct, frozen=True, dict=True):
    """A labyrinth plan; see the module's docstring. Built from iterables in any order."""

    squares: tuple[Square, ...]
    walls: tuple[Wall, ...] = ()
    exits: tuple[Exit, ...] = ()
    treasures: tuple[Treasure, ...] = ()
    items: tuple[Items, ...] = ()
    start: Cell | None = None
    name: str = ""

    def __post_init__(self) -> None:
        squares = tuple(sorted(self.squares, key=lambda s: s.cell))
        cells: set[Cell] = set()
        for square in squares:
            row, column = square.cell
            if row < 1 or column < 1:
                raise PlanError(f"cell {cell_name(square.cell)}: rows and columns count from 1", cell=square.cell)
            if square.cell in cells:
                raise PlanError(f"cell {cell_name(square.cell)} is given twice", cell=square.cell)
            cells.add(square.cell)
            _check_type(square)
        if not cells:
            raise PlanError("a plan has at least one cell")
        if min(r for r, _ in cells) != 1 or min(c for _, c in cells) != 1:
            raise PlanError("the plan's cells start at row 1 and at column 1")
        rows_used = {r for r, _ in cells}
        columns_used = {c for _, c in cells}
        for r in range(1, max(rows_used) + 1):
            if r not in rows_used:
                raise PlanError(f"row {r} has no cell: every row and column between the first and "
                                "the last has one")
        for c in range(1, max(columns_used) + 1):
            if c not in columns_used:
                raise PlanError(f"column {c} has no cell: every row and column between the first and "
                                "the last has one")

        walls: dict[tuple[Cell, Cell], Wall] = {}
        for wall in self.walls:
            a, b = sorted((wall.a, wall.b))
            for cell in (a, b):
                if cell not in cells:
                    raise PlanError(f"a wall at {cell_name(cell)}, which is not in the plan", cell=cell)
            if direction_between(a, b) is None:
                raise PlanError(
                    f"a wall between {cell_name(a)} and {cell_name(b)}, which are not neighbours", cell=a
                )
            if (a, b) in walls:
                raise PlanError(f"the wall between {cell_name(a)} and {cell_name(b)} is given twice", cell=a)
            walls[(a, b)] = Wall(a, b, wall.destructible)

        exits: dict[tuple[Cell, Direction], Exit] = {}
        for exit_ in self.exits:
            if exit_.cell not in cells:
                raise PlanError(f"an exit at {cell_name(exit_.cell)}, which is not in the plan", cell=exit_.cell)
            if exit_.side not in OFFSETS:
                raise PlanError(f"an exit at {cell_name(exit_.cell)} on side {exit_.side!r}", cell=exit_.cell)
            if step(exit_.cell, exit_.side) in cells:
                raise PlanError(
                    f"an exit on the {exit_.side} side of {cell_name(exit_.cell)}, which is not an outer side",
                    cell=exit_.cell,
                )
            key = (exit_.cell, exit_.side)
            if key in exits:
                raise PlanError(f"the exit on the {exit_.side} side of {cell_name(exit_.cell)} is given twice",
                                cell=exit_.cell)
            exits[key] = exit_

        treasures: dict[Cell, Treasure] = {}
        for treasure in self.treasures:
            if treasure.cell not in cells:
                raise PlanError(f"a treasure at {cell_name(treasure.cell)}, which is not in the plan",
                                cell=treasure.cell)
            if treasure.cell in treasures:
                raise PlanError(f"two treasures at {cell_name(treasure.cell)}: at most one a cell at the start",
                                cell=treasure.cell)
            treasures[treasure.cell] = treasure

        items: dict[Cell, Items] = {}
        for pile in self.items:
            if pile.cell not in cells:
                raise PlanError(f"items at {cell_name(pile.cell)}, which is not in the plan", cell=pile.cell)
            if pile.cell in items:
                raise PlanError(f"items at {cell_name(pile.cell)} are given twice", cell=pile.cell)
            counts = (pile.bullets, pile.grenades, pile.landmines)
            if min(counts) < 0 or sum(counts) == 0:
                raise PlanError(f"items at {cell_name(pile.cell)}: counts are 0 or more, at least one above 0",
                                cell=pile.cell)
            items[pile.cell] = pile

        if self.start is not None and self.start not in cells:
            raise PlanError(f"the start cell {cell_name(self.start)} is not in the plan", cell=self.start)
        if self.name != self.name.strip() or not self.name.isprintable():
            raise PlanError("a plan's name is one line of printable text without spaces at its ends")

        set_ = msgspec.structs.force_setattr
        set_(self, "squares", squares)
        set_(self, "walls", tuple(walls[k] for k in sorted(walls)))
        set_(self, "exits", tuple(exits[k] for k in sorted(exits, key=lambda k: (k[0], _DIRECTION_ORDER[k[1]]))))
        set_(self, "treasures", tuple(treasures[k] for k in sorted(treasures)))
        set_(self, "items", tuple(items[k] for k in sorted(items)))

    # --- lookups (computed once) ---------------------------------------------------------

    @cached_property
    def types(self) -> Mapping[Cell, CellType]:
        """Every cell of the plan and its type, in reading order."""
        return {square.cell: square.type for square in self.squares}

    @cached_property
    def cells(self) -> frozenset[Cell]:
        return frozenset(self.types)

    @cached_property
    def rows(self) -> int:
        """The bounding rectangle's height."""
        return max(r for r, _ in self.cells)

    @cached_property
    def columns(self) -> int:
        """The bounding rectangle's width."""
        return max(c for _, c in self.cells)

    @cached_property
    def _walls(self) -> Mapping[tuple[Cell, Cell], Wall]:
        return {(w.a, w.b): w for w in self.walls}

    @cached_property
    def _exits(self) -> Mapping[tuple[Cell, Direction], Exit]:
        return {(e.cell, e.side): e for e in self.exits}

    @cached_property
    def _treasures(self) -> Mapping[Cell, Treasure]:
        return {t.cell: t for t in self.treasures}

    @cached_property
    def _items(self) -> Mapping[Cell, Items]:
        return {i.cell: i for i in self.items}

    @cached_property
    def _loops(self) -> Mapping[str, tuple[Cell, ...]]:
        loops: dict[str, list[tuple[int, Cell]]] = {}
        for cell, kind in self.types.items():
            if isinstance(kind, Pit):
                loops.setdefault(kind.loop, []).append((kind.place, cell))
        return {name: tuple(c for _, c in sorted(pits)) for name, pits in sorted(loops.items())}

    # --- questions ---------------------------------------------------------------------------

    def __contains__(self, cell: object) -> bool:
        return cell in self.types

    def type_at(self, cell: Cell) -> CellType:
        """The type of a cell of the plan (KeyError for a cell not in it)."""
        return self.types[cell]

    def cells_of(self, kind: type[CellType]) -> tuple[Cell, ...]:
        """The cells of one type (`plan.cells_of(Hospital)`), in reading order."""
        return tuple(cell for cell, t in self.types.items() if isinstance(t, kind))

    def neighbour(self, cell: Cell, direction: Direction) -> Cell | None:
        """The neighbouring cell in `direction`, walls or not; None beyond the outline."""
        other = step(cell, direction)
        return other if other in self.types else None

    def neighbours(self, cell: Cell) -> dict[Direction, Cell]:
        """The cells of the plan next to `cell`, by direction, walls or not."""
        found: dict[Direction, Cell] = {}
        for direction in DIRECTIONS:
            other = self.neighbour(cell, direction)
            if other is not None:
                found[direction] = other
        return found

    def wall_between(self, a: Cell, b: Cell) -> Wall | None:
        """The inner wall between two neighbouring cells, if there is one."""
        first, second = sorted((a, b))
        return self._walls.get((first, second))

    def exit_at(self, cell: Cell, direction: Direction) -> Exit | None:
        """The exit on that outer side of `cell`, if there is one."""
        return self._exits.get((cell, direction))

    def side(self, cell: Cell, direction: Direction) -> Side:
        """What is on the `direction` side of a cell of the plan."""
        if cell not in self.types:
            raise KeyError(cell)
        other = self.neighbour(cell, direction)
        if other is None:
            found = self._exits.get((cell, direction))
            if found is None:
                return Side.OUTER_WALL
            return Side.OPEN_EXIT if found.open else Side.CLOSED_EXIT
        wall = self.wall_between(cell, other)
        if wall is None:
            return Side.PASSAGE
        return Side.WALL if wall.destructible else Side.SOLID

    def outer_sides(self) -> tuple[tuple[Cell, Direction], ...]:
        """Every outer side of the plan, cell by cell in reading order."""
        return tuple(
            (cell, direction)
            for cell in self.types
            for direction in DIRECTIONS
            if step(cell, direction) not in self.types
        )

    def river_next(self, cell: Cell) -> Cell | None:
        """The cell a river cell's flow points to (in the plan or not); None if not a river."""
        kind = self.types.get(cell)
        return step(cell, kind.flow) if isinstance(kind, River) else None

    def upstream(self, cell: Cell) -> tuple[Cell, ...]:
        """The river cells whose flow points into `cell`."""
        return tuple(
            other
            for direction in DIRECTIONS
            if (other := step(cell, direction)) in self.types and self.river_next(other) == cell
        )

    def pit_loops(self) -> Mapping[str, tuple[Cell, ...]]:
        """Every pit loop by name, its pits in the order of their places."""
        return self._loops

    def pit_next(self, cell: Cell) -> Cell | None:
        """The pit a player falling into this pit arrives at: the next place of its loop,
        after the highest the lowest. None when `cell` is not a pit. (With places given
        twice, which the validator refuses, the order is place, then reading order.)"""
        kind = self.types.get(cell)
        if not isinstance(kind, Pit):
            return None
        loop = self._loops[kind.loop]
        return loop[(loop.index(cell) + 1) % len(loop)]

    def treasure_at(self, cell: Cell) -> Treasure | None:
        return self._treasures.get(cell)

    def items_at(self, cell: Cell) -> Items | None:
        return self._items.get(cell)

    def true_treasures(self) -> tuple[Cell, ...]:
        return tuple(t.cell for t in self.treasures if t.is_true)

    def blow(self, cell: Cell, direction: Direction) -> Plan:
        """The plan after a grenade on that side of `cell`: a destructible inner wall is
        gone, a closed exit is open; anything else stays (the same plan is returned)."""
        kind = self.side(cell, direction)
        if kind is Side.WALL:
            other = step(cell, direction)
            gone = self.wall_between(cell, other)
            return msgspec.structs.replace(self, walls=tuple(w for w in self.walls if w is not gone))
        if kind is Side.CLOSED_EXIT:
            return msgspec.structs.replace(
                self,
                exits=tuple(
                    Exit(e.cell, e.side, True) if (e.cell, e.side) == (cell, direction) else e
                    for e in self.exits
                ),
            )
        return self


def _check_type(square: Square) -> None:
    kind = square.type
    where = cell_name(square.cell)
    if isinstance(kind, River) and kind.flow not in OFFSETS:
        raise PlanError(f"cell {where}: a river flows up, right, down or left, not {kind.flow!r}",
                        cell=square.cell)
    if isinstance(kind, Pit):
        if len(kind.loop) != 1 or kind.loop not in LOOP_NAMES:
            raise PlanError(f"cell {where}: a pit loop is named by one letter a-z, not {kind.loop!r}",
                            cell=square.cell)
        if not 1 <= kind.place <= MAX_PLACE:
            raise PlanError(f"cell {where}: a pit's place in its loop is 1 to {MAX_PLACE}, not {kind.place}",
                            cell=square.cell)


def plan_of(
    types: Mapping[Cell, CellType],
    walls: Iterable[Wall] = (),
    exits: Iterable[Exit] = (),
    treasures: Iterable[Treasure] = (),
    items: Iterable[Items] = (),
    start: Cell | None = None,
    name: str = "",
) -> Plan:
    """A plan from a mapping of cells to types and iterables of the rest."""
    return Plan(
        squares=tuple(Square(cell, kind) for cell, kind in types.items()),
        walls=tuple(walls),
        exits=tuple(exits),
        treasures=tuple(treasures),
        items=tuple(items),
        start=start,
        name=name,
    )
