"""The Labyrinth plan validator: section 8's mandatory rules, its recommendations, and the
limits a match sets under option 7.1.

`validate(plan, options, players)` returns a `Report`: its `errors` break a mandatory rule
(a plan with any is refused), its `warnings` go against a recommendation (a plan with
some may still be played). Each finding is a `Problem`: the rule it cites, the cell it
concerns (row, column from 1, written `3,4` as in the text format; None when the whole
plan is concerned), a short name, and a message a person can act on.
`check_text(text, ...)` parses a plan text first; a text that is no plan at all is one
error, with the parser's line and column (a cell written with two types is refused there,
rule 8.1).

Moving without grenades. Several rules ask where a player can get to. A player standing
on cell c who moves in a direction:
  - hits a wall (an inner wall of either kind, a closed exit, an outer wall) or walks out
    through an open exit (which leads nowhere inside): stays on c, and if c is a river
    cell is then carried one cell by its flow (4.6);
  - else enters the neighbour n: a river cell carries the player one cell along its flow
    (back onto c when n flows into c: "moving upstream" leaves the player in place), a pit
    sends the player to the next pit of its loop (4.4), any other cell keeps the player.
A player in a river may also go "by the flow" (one cell downstream), in a pit "by the loop"
(to the next pit). A player stands only where a movement ends, so a river source (a river
cell no flow leads into) is a cell nobody can reach.

Errors (a rule of the rule book broken):
  8.1  one type per cell. The plan holds one type per cell, so no plan breaks it; the
       text parser refuses a cell written with two types under this rule.
  4.4  pit loops: every loop has two pits or more, numbered 1 to N, each place once.
  4.5  river systems: every river cell flows into a neighbouring river or delta cell of
       the plan (not out of the labyrinth, not into land or a pit); following the flow
       reaches a delta (no river flows in a circle); every delta has a river flowing in;
       no wall lies across a river's flow (between a river cell and the cell it flows to).
  8.2  at least one weaponry, one hospital and one land cell.
  8.3  exactly one true treasure, and it lies on land (3.1: the fake ones too).
  8.4  at least two exits, open or closed; none from a cell nobody can reach (a river
       source).
  8.5  every cell but the river sources can be reached from every other one without
       grenades (moving as above). Cells that cannot are named by area: an area nobody
       can get into, an area nobody can get out of (a trap, such as a delta whose
       neighbours are rivers flowing in and walls), or both.
  8.6  the announced numbers: moves to heal after an infection (1 or more, or unlimited)
       and Nstop (1 or more; by default the number of cells).
  7.1  the match's limits (`PlanOptions`): no landmines lying on a cell when the match
       has none, no encephalitis cell when it has none, at most so many pits, pit loops,
       pits in a loop, river systems, branches (sources) of a river system and cells from
       a source to its delta; exactly so many weaponries, hospitals, treasures, inner
       walls and exits when the match fixes the number; no closed exit when exits may
       not start closed; an open exit when one is required; with `crossings`, a chain of
       land, hospital, weaponry and delta cells, no wall between two of them, from the
       left side to the right one and another from the top to the bottom.
  7.6  the common start cell, when the plan names one, is a cell a player can stand on.

Warnings (section 8's recommendations, cited 8.R1 to 8.R6, and two more):
  8.R1 two-weaponries, two-hospitals: fewer than two of either.
  8.R2 hospital-next-to-weaponry: a hospital and a weaponry on neighbouring cells.
  8.R3 fake-treasures: fewer than one fake treasure, or more than the players (when the
       number of players is known).
  8.R4 attractor: a delta with one way out or none (every other direction a wall or a
       river flowing in); adjacent-deltas: two deltas on neighbouring cells.
  8.R5 no-rivers-or-pits: nothing in the plan misleads a player; device-inside: a river
       system or pit loop with no cell on the outline.
  8.R6 treasure-near-exit: a treasure on a cell with an exit or next to one.
  5.7  exits-for-landmines: with landmines, no more exits than players.
  4.6  lost-items: items lying on a river source, which nobody can ever pick up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from domain.games.labyrinth.plan import (
    DIRECTIONS,
    Cell,
    Delta,
    Direction,
    Encephalitis,
    Hospital,
    Land,
    Pit,
    Plan,
    PlanError,
    River,
    Weaponry,
    cell_name,
    step,
    type_name,
)
from domain.games.labyrinth.plan_text import parse_plan
from domain.kit.options import Boolean, Integer, Option

# --- options -----------------------------------------------------------------------------


class PlanOptions(msgspec.Struct, frozen=True, kw_only=True):
    """The limits a match puts on its plan (option 7.1) and the numbers announced with it
    (8.6). None is "no limit" (for the counts, "any number")."""

    landmines: bool = True
    encephalitis: bool = True
    max_pits: int | None = None
    max_pit_loops: int | None = None
    max_loop_length: int | None = None
    max_rivers: int | None = None
    max_river_branches: int | None = None
    max_river_length: int | None = None
    weaponries: int | None = None
    hospitals: int | None = None
    treasures: int | None = None
    inner_walls: int | None = None
    exits: int | None = None
    closed_exits: bool = True
    open_exit: bool = False
    crossings: bool = False
    heal_moves: int | None = 10
    nstop: int | None = None


MAX_COUNT = 3600
"""The largest count an option may give (a 60x60 plan's cells)."""

PLAN_OPTIONS: tuple[Option, ...] = (
    Boolean("landmines", True, "each player starts with a landmine, and plans may hold some (7.1)"),
    Boolean("encephalitis", True, "plans may have encephalitis cells (7.1)"),
    Integer("max_pits", None, 0, MAX_COUNT, "the most pits a plan may have (7.1; null: any)",
            nullable=True),
    Integer("max_pit_loops", None, 0, MAX_COUNT, "the most pit loops (7.1; null: any)",
            nullable=True),
    Integer("max_loop_length", None, 2, MAX_COUNT, "the most pits in one loop (7.1; null: any)",
            nullable=True),
    Integer("max_rivers", None, 0, MAX_COUNT, "the most river systems (7.1; null: any)",
            nullable=True),
    Integer("max_river_branches", None, 1, MAX_COUNT,
            "the most sources (branches) of one river system (7.1; null: any)", nullable=True),
    Integer("max_river_length", None, 2, MAX_COUNT,
            "the most cells from a river's source to its delta, both counted (7.1; null: any)",
            nullable=True),
    Integer("weaponries", None, 1, MAX_COUNT, "exactly this many weaponries (7.1; null: any)",
            nullable=True),
    Integer("hospitals", None, 1, MAX_COUNT, "exactly this many hospitals (7.1; null: any)",
            nullable=True),
    Integer("treasures", None, 1, MAX_COUNT,
            "exactly this many treasures, the true one included (7.1; null: any)", nullable=True),
    Integer("inner_walls", None, 0, 2 * MAX_COUNT, "exactly this many inner walls (7.1; null: any)",
            nullable=True),
    Integer("exits", None, 2, MAX_COUNT, "exactly this many exits (7.1; null: any)",
            nullable=True),
    Boolean("closed_exits", True, "exits may start closed by a destructible wall (7.1)"),
    Boolean("open_exit", False, "at least one exit starts open (8.4: 'often agreed')"),
    Boolean("crossings", False,
            "walkable chains of land, hospital, weaponry and delta cells join the left and right "
            "sides, and the top and bottom ones (7.1)"),
    Integer("heal_moves", 10, 1, MAX_COUNT,
            "successful moves an infected player has to reach a hospital (4.7, 8.6; null: no limit)",
            nullable=True),
    Integer("nstop", None, 1, 1_000_000,
            "rounds without an irreversible change before a draw (3.6, 8.6; null: the number of cells)",
            nullable=True),
)
"""The declarations of `PlanOptions` for a game's option table (domain/kit/options.py)."""


def plan_options(values: Mapping[str, Any]) -> PlanOptions:
    """The PlanOptions among a match's checked option values (other keys are ignored)."""
    return PlanOptions(**{o.name: values[o.name] for o in PLAN_OPTIONS if o.name in values})


# --- findings ------------------------------------------------------------------------------


class Problem(msgspec.Struct, frozen=True):
    """One finding: the rule it cites ("8.5", "8.R4", "7.1"), the cell concerned (None:
    the whole plan), a short name ("unreachable", "attractor"), what is wrong, and whether
    it is only a warning (a recommendation not followed)."""

    rule: str
    cell: Cell | None
    name: str
    message: str
    warning: bool = False

    @property
    def text(self) -> str:
        """One line for a person: `error 8.5 at 3,4: ...` / `warning 8.R4 (attractor) at ...`."""
        kind = "warning" if self.warning else "error"
        label = f"{kind} {self.rule}" + (f" ({self.name})" if self.warning else "")
        where = f" at {cell_name(self.cell)}" if self.cell is not None else ""
        return f"{label}{where}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "cell": list(self.cell) if self.cell is not None else None,
            "name": self.name,
            "message": self.message,
            "warning": self.warning,
        }


class Report(msgspec.Struct, frozen=True):
    """What the validator found: errors refuse the plan, warnings do not."""

    errors: tuple[Problem, ...] = ()
    warnings: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def problems(self) -> tuple[Problem, ...]:
        return self.errors + self.warnings

    def rules(self) -> set[str]:
        """The rules the errors cite."""
        return {p.rule for p in self.errors}

    def names(self) -> set[str]:
        """The names of the warnings."""
        return {p.name for p in self.warnings}


class _Findings:
    def __init__(self) -> None:
        self.found: list[Problem] = []

    def error(self, rule: str, cell: Cell | None, name: str, message: str) -> None:
        self.found.append(Problem(rule, cell, name, message))

    def warn(self, rule: str, cell: Cell | None, name: str, message: str) -> None:
        self.found.append(Problem(rule, cell, name, message, warning=True))

    def report(self) -> Report:
        return Report(
            errors=tuple(p for p in self.found if not p.warning),
            warnings=tuple(p for p in self.found if p.warning),
        )


# --- movement ------------------------------------------------------------------------------


def river_sources(plan: Plan) -> tuple[Cell, ...]:
    """The river cells no flow leads into: nobody can reach them (8.4, 8.5)."""
    return tuple(c for c in plan.cells_of(River) if not plan.upstream(c))


class Moves:
    """Where movements end in one plan (the pit loops looked up once): build it once and
    ask it for many cells."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.next_pit: dict[Cell, Cell] = {}
        for loop in plan.pit_loops().values():
            for i, cell in enumerate(loop):
                self.next_pit[cell] = loop[(i + 1) % len(loop)]

    def carried(self, cell: Cell) -> Cell:
        """Where the flow of a river cell carries a player: the next cell, when the flow
        leads to a river or delta of the plan (a broken flow, refused under 4.5, carries
        nowhere)."""
        target = self.plan.river_next(cell)
        if target is not None and isinstance(self.plan.types.get(target), River | Delta):
            return target
        return cell

    def entered(self, cell: Cell) -> Cell:
        """Where a player walking into `cell` ends the movement."""
        kind = self.plan.types[cell]
        if isinstance(kind, River):
            return self.carried(cell)
        if isinstance(kind, Pit):
            return self.next_pit[cell]
        return cell

    def result(self, cell: Cell, direction: Direction) -> Cell:
        """Where a player on `cell` ends a movement in `direction` with no grenade thrown."""
        other = self.plan.neighbour(cell, direction)
        if other is None or self.plan.side(cell, direction).blocks:
            return self.carried(cell) if isinstance(self.plan.types[cell], River) else cell
        return self.entered(other)

    def ends(self, cell: Cell) -> tuple[Cell, ...]:
        """The cells one movement from `cell` can end on (itself included when it may),
        without grenades: the four directions, and by the flow or by the loop."""
        found = [self.result(cell, d) for d in DIRECTIONS]
        kind = self.plan.types[cell]
        if isinstance(kind, River):
            found.append(self.carried(cell))
        elif isinstance(kind, Pit):
            found.append(self.next_pit[cell])
        return tuple(dict.fromkeys(found))

    def ways_out(self, cell: Cell) -> int:
        """How many of the four directions take a player on `cell` somewhere else."""
        return sum(1 for d in DIRECTIONS if self.result(cell, d) != cell)


def move_result(plan: Plan, cell: Cell, direction: Direction) -> Cell:
    """Where a player on `cell` ends a movement in `direction` with no grenade thrown."""
    return Moves(plan).result(cell, direction)


def moves_from(plan: Plan, cell: Cell) -> tuple[Cell, ...]:
    """The cells one movement from `cell` can end on (`Moves.ends`)."""
    return Moves(plan).ends(cell)


def ways_out(plan: Plan, cell: Cell) -> int:
    """How many of the four directions take a player on `cell` somewhere else."""
    return Moves(plan).ways_out(cell)


def components(nodes: Sequence[Cell], succ: Mapping[Cell, Iterable[Cell]]) -> list[list[Cell]]:
    """The strongly connected components of a graph over `nodes` (edges to other cells
    ignored), each listed in the order of `nodes` (Kosaraju's algorithm, iteratively)."""
    index = {c: i for i, c in enumerate(nodes)}
    out = {c: [n for n in succ[c] if n in index] for c in nodes}
    seen: set[Cell] = set()
    order: list[Cell] = []
    for root in nodes:
        if root in seen:
            continue
        seen.add(root)
        stack: list[tuple[Cell, int]] = [(root, 0)]
        while stack:
            cell, i = stack[-1]
            if i < len(out[cell]):
                stack[-1] = (cell, i + 1)
                nxt = out[cell][i]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, 0))
            else:
                stack.pop()
                order.append(cell)
    into: dict[Cell, list[Cell]] = {c: [] for c in nodes}
    for c in nodes:
        for n in out[c]:
            into[n].append(c)
    owner: dict[Cell, int] = {}
    found: list[list[Cell]] = []
    for root in reversed(order):
        if root in owner:
            continue
        owner[root] = len(found)
        members = [root]
        todo = [root]
        while todo:
            c = todo.pop()
            for p in into[c]:
                if p not in owner:
                    owner[p] = len(found)
                    members.append(p)
                    todo.append(p)
        found.append(sorted(members, key=index.__getitem__))
    return found


def _reach(start: Iterable[Cell], succ: Mapping[Cell, Iterable[Cell]]) -> set[Cell]:
    seen = set(start)
    todo = list(seen)
    while todo:
        for n in succ.get(todo.pop(), ()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen


# --- rivers and pits -------------------------------------------------------------------------


def river_systems(plan: Plan) -> dict[Cell, tuple[Cell, ...]]:
    """Each delta and the river cells whose flow leads to it, in reading order (cells of a
    broken river, refused under 4.5, belong to none)."""
    systems: dict[Cell, list[Cell]] = {d: [] for d in plan.cells_of(Delta)}
    ends, _ = flows(plan)
    for cell in plan.cells_of(River):
        end = ends[cell]
        if end is not None:
            systems[end].append(cell)
    return {d: tuple(cells) for d, cells in systems.items()}


def flows(plan: Plan) -> tuple[dict[Cell, Cell | None], list[list[Cell]]]:
    """For every river cell the delta its flow ends in (None when the flow leaves the
    plan, reaches another type or goes round in a circle), and the circles; each cell is
    followed once, so a long river costs no more than its length."""
    ends: dict[Cell, Cell | None] = {}
    circles: list[list[Cell]] = []
    for start in plan.cells_of(River):
        path: list[Cell] = []
        at: dict[Cell, int] = {}
        cell = start
        while True:
            if cell in ends:
                end = ends[cell]
                break
            kind = plan.types.get(cell)
            if isinstance(kind, Delta):
                end = cell
                break
            if not isinstance(kind, River):
                end = None
                break
            if cell in at:
                circles.append(path[at[cell]:])
                end = None
                break
            at[cell] = len(path)
            path.append(cell)
            cell = step(cell, kind.flow)
        for c in path:
            ends[c] = end
    return ends, circles


def river_length(plan: Plan, cells: Sequence[Cell], delta: Cell) -> tuple[int, Cell | None]:
    """The most cells on a way from a source of the system (`cells`, flowing into
    `delta`) down to its delta, both counted, and that source."""
    depth: dict[Cell, int] = {delta: 1}
    best, where = 0, None
    for source in cells:
        path: list[Cell] = []
        cell = source
        while cell not in depth:
            path.append(cell)
            nxt = plan.river_next(cell)
            assert nxt is not None
            cell = nxt
        for c in reversed(path):
            depth[c] = depth[cell] + 1
            cell = c
        if depth[source] > best and not plan.upstream(source):
            best, where = depth[source], source
    return best, where


def _check_pits(plan: Plan, out: _Findings) -> None:
    places: dict[str, dict[int, list[Cell]]] = {}
    for cell in plan.cells_of(Pit):
        kind = plan.types[cell]
        assert isinstance(kind, Pit)
        places.setdefault(kind.loop, {}).setdefault(kind.place, []).append(cell)
    for loop, by_place in sorted(places.items()):
        pits = sorted(c for cells in by_place.values() for c in cells)
        for place, cells in sorted(by_place.items()):
            if len(cells) > 1:
                out.error("4.4", cells[1], "pit-loop",
                          f"pit {loop}{place} is also at {cell_name(cells[0])}; "
                          f"each place of a loop is one pit")
        if len(pits) < 2:
            out.error("4.4", pits[0], "pit-loop",
                      f"pit loop {loop} has one pit; a loop has two pits or more")
            continue
        n = len(by_place)
        wrong = sorted(p for p in by_place if p > n)
        if wrong:
            missing = [p for p in range(1, n + 1) if p not in by_place]
            out.error("4.4", by_place[wrong[0]][0], "pit-loop",
                      f"pit {loop}{wrong[0]}: the pits of loop {loop} are numbered 1 to {n}, "
                      f"and {', '.join(f'{loop}{p}' for p in missing)} is missing")


def _check_rivers(plan: Plan, out: _Findings) -> None:
    for cell in plan.cells_of(River):
        kind = plan.types[cell]
        assert isinstance(kind, River)
        nxt = step(cell, kind.flow)
        target = plan.types.get(nxt)
        if target is None:
            out.error("4.5", cell, "river",
                      f"the river flows {kind.flow}, out of the labyrinth; a river flows into a "
                      f"river or delta cell")
            continue
        if not isinstance(target, River | Delta):
            out.error("4.5", cell, "river",
                      f"the river flows {kind.flow} into {type_name(target)} at {cell_name(nxt)}; "
                      f"a river flows into a river or delta cell")
            continue
        if plan.wall_between(cell, nxt) is not None:
            out.error("4.5", cell, "wall-across-river",
                      f"a wall between {cell_name(cell)} and {cell_name(nxt)} lies across the "
                      f"river's flow ({kind.flow}); a wall cannot block a river")
    for circle in flows(plan)[1]:
        cells = sorted(circle)
        out.error("4.5", cells[0], "river",
                  f"the river flows in a circle ({_and_others(cells, 8)}); following the flow "
                  f"must lead to a delta")
    for delta in plan.cells_of(Delta):
        if not plan.upstream(delta):
            out.error("4.5", delta, "river",
                      "no river flows into this delta; a delta ends a river system of one "
                      "river cell or more")


# --- the checks ------------------------------------------------------------------------------


def validate(plan: Plan, options: PlanOptions | None = None, players: int | None = None) -> Report:
    """Check a plan against section 8 and the match's options; `players` (when known)
    enables the checks that depend on it (8.R3's upper bound, 5.7)."""
    options = options or PlanOptions()
    out = _Findings()
    _check_pits(plan, out)
    _check_rivers(plan, out)
    _check_kinds(plan, out)
    _check_treasures(plan, out)
    sources = set(river_sources(plan))
    _check_exits(plan, out, sources)
    _check_reachable(plan, out, sources)
    _check_announced(plan, out, options)
    _check_limits(plan, out, options)
    if plan.start is not None and plan.start in sources:
        out.error("7.6", plan.start, "start",
                  "the common start cell is a river source, where nobody can stand")
    _recommendations(plan, out, options, players, sources)
    return out.report()


def _check_kinds(plan: Plan, out: _Findings) -> None:
    for kind in (Weaponry, Hospital, Land):
        if not plan.cells_of(kind):
            out.error("8.2", None, "missing-type",
                      f"the labyrinth has no {TYPE_WORDS[kind]} cell; it needs at least one "
                      f"weaponry, one hospital and one land cell")


TYPE_WORDS: Mapping[type, str] = {Weaponry: "weaponry", Hospital: "hospital", Land: "land"}


def _check_treasures(plan: Plan, out: _Findings) -> None:
    true = plan.true_treasures()
    if not true:
        out.error("8.3", None, "true-treasure",
                  "there is no true treasure; there must be exactly one")
    for extra in true[1:]:
        out.error("8.3", extra, "true-treasure",
                  f"a second true treasure (the first is at {cell_name(true[0])}); there must be "
                  f"exactly one")
    for treasure in plan.treasures:
        kind = plan.types[treasure.cell]
        if isinstance(kind, Land):
            continue
        if treasure.is_true:
            out.error("8.3", treasure.cell, "true-treasure",
                      f"the true treasure lies on {type_name(kind)}; it must lie on land")
        else:
            out.error("3.1", treasure.cell, "treasure",
                      f"a fake treasure lies on {type_name(kind)}; treasures lie on land at the start")


def _check_exits(plan: Plan, out: _Findings, sources: set[Cell]) -> None:
    if len(plan.exits) < 2:
        out.error("8.4", plan.exits[0].cell if plan.exits else None, "exits",
                  f"the labyrinth has {len(plan.exits)} exit{'' if len(plan.exits) == 1 else 's'}; "
                  f"it needs at least two (open or closed)")
    for exit_ in plan.exits:
        if exit_.cell in sources:
            out.error("8.4", exit_.cell, "exit-unreachable",
                      f"the exit on the {exit_.side} side is on a river source, a cell nobody "
                      f"can reach")


def _check_reachable(plan: Plan, out: _Findings, sources: set[Cell]) -> None:
    nodes = [c for c in plan.types if c not in sources]
    if not nodes:
        return
    moves = Moves(plan)
    succ = {c: moves.ends(c) for c in nodes}
    areas = components(nodes, succ)
    if len(areas) == 1:
        return
    main = max(areas, key=len)  # the first of the largest, in reading order of roots
    back: dict[Cell, list[Cell]] = {c: [] for c in nodes}
    for c in nodes:
        for n in succ[c]:
            if n in back:
                back[n].append(c)
    into_main = _reach(main, back)
    from_main = _reach(main, succ)
    for area in sorted(areas, key=lambda a: a[0]):
        if area is main:
            continue
        first = area[0]
        others = _and_others(area[1:])
        can_enter, can_leave = first in from_main, first in into_main
        if can_leave and not can_enter:
            what = "cannot be reached from the rest of the labyrinth without grenades"
        elif can_enter and not can_leave:
            what = ("is a trap: the rest of the labyrinth cannot be reached from it without "
                    "grenades")
        else:
            what = "is cut off: no way in from the rest of the labyrinth or out to it without grenades"
        subject = f"cell {cell_name(first)}" + (f" (with {others})" if others else "")
        out.error("8.5", first, "unreachable", f"{subject} {what}")


def _and_others(cells: Sequence[Cell], shown: int = 5) -> str:
    names = [cell_name(c) for c in cells[:shown]]
    if len(cells) > shown:
        names.append(f"{len(cells) - shown} more")
    return ", ".join(names)


def _check_announced(plan: Plan, out: _Findings, options: PlanOptions) -> None:
    if options.heal_moves is not None and options.heal_moves < 1:
        out.error("8.6", None, "announced",
                  f"the moves to heal after an infection are {options.heal_moves}; at least 1 "
                  f"(or no limit)")
    if options.nstop is not None and options.nstop < 1:
        out.error("8.6", None, "announced", f"Nstop is {options.nstop}; at least 1")


def _check_limits(plan: Plan, out: _Findings, options: PlanOptions) -> None:
    def limit(value: int | None, count: int, what: str, cell: Cell | None = None,
              exact: bool = False) -> None:
        if value is None or (count == value if exact else count <= value):
            return
        want = f"exactly {value}" if exact else f"at most {value}"
        out.error("7.1", cell, "option", f"the plan has {count} {what}; the match allows {want}")

    if not options.landmines:
        for pile in plan.items:
            if pile.landmines:
                out.error("7.1", pile.cell, "option",
                          "a landmine lies here, and the match is played without landmines")
    if not options.encephalitis:
        for cell in plan.cells_of(Encephalitis):
            out.error("7.1", cell, "option",
                      "an encephalitis cell, and the match is played without encephalitis")
    pits = plan.cells_of(Pit)
    limit(options.max_pits, len(pits), "pits", pits[0] if pits else None)
    loops = plan.pit_loops()
    limit(options.max_pit_loops, len(loops), "pit loops")
    for name, members in loops.items():
        limit(options.max_loop_length, len(members), f"pits in loop {name}", members[0])
    systems = river_systems(plan)
    limit(options.max_rivers, len(systems), "river systems")
    for delta, cells in systems.items():
        if not cells:
            continue
        branches = sum(1 for c in cells if not plan.upstream(c))
        limit(options.max_river_branches, branches, f"sources in the river system of delta "
              f"{cell_name(delta)}", delta)
        length, source = river_length(plan, cells, delta)
        limit(options.max_river_length, length, f"cells from the source at "
              f"{cell_name(source) if source else '?'} to the delta at {cell_name(delta)}", source)
    limit(options.weaponries, len(plan.cells_of(Weaponry)), "weaponries", exact=True)
    limit(options.hospitals, len(plan.cells_of(Hospital)), "hospitals", exact=True)
    limit(options.treasures, len(plan.treasures), "treasures", exact=True)
    limit(options.inner_walls, len(plan.walls), "inner walls", exact=True)
    limit(options.exits, len(plan.exits), "exits", exact=True)
    if not options.closed_exits:
        for exit_ in plan.exits:
            if not exit_.open:
                out.error("7.1", exit_.cell, "option",
                          f"the exit on the {exit_.side} side is closed, and the match has every "
                          f"exit open at the start")
    if options.crossings:
        for across, (start, end) in CROSSINGS.items():
            if crossing(plan, start, end) is None:
                out.error("7.1", None, "option",
                          f"no chain of land, hospital, weaponry and delta cells without walls "
                          f"between them joins the {start} and {end} sides ({across}), and the "
                          f"match wants one")
    if options.open_exit and plan.exits and not any(e.open for e in plan.exits):
        out.error("7.1", plan.exits[0].cell, "option",
                  "every exit is closed, and the match wants at least one open at the start")


CROSSINGS: Mapping[str, tuple[Direction, Direction]] = {
    "across": ("left", "right"),
    "down": ("up", "down"),
}
CROSSING_TYPES = (Land, Hospital, Weaponry, Delta)
"""The cell types a crossing (option 7.1) may be made of."""


def crossing(plan: Plan, start: Direction, end: Direction,
             walls: bool = True) -> list[Cell] | None:
    """A shortest chain of neighbouring cells of the CROSSING_TYPES, from a cell with an
    outer side towards `start` to one with an outer side towards `end`, with no wall
    between two cells of the chain (`walls=False`: walls or not); None if there is none."""
    def ok(cell: Cell) -> bool:
        return isinstance(plan.types[cell], CROSSING_TYPES)

    first = [c for c in plan.types if ok(c) and step(c, start) not in plan.types]
    came: dict[Cell, Cell | None] = {c: None for c in first}
    frontier = first
    while frontier:
        after: list[Cell] = []
        for cell in frontier:
            if step(cell, end) not in plan.types:
                chain = [cell]
                while (back := came[chain[-1]]) is not None:
                    chain.append(back)
                return chain[::-1]
            for direction, other in plan.neighbours(cell).items():
                if other in came or not ok(other):
                    continue
                if walls and plan.side(cell, direction).blocks:
                    continue
                came[other] = cell
                after.append(other)
        frontier = after
    return None


def near_exit(plan: Plan, cell: Cell) -> bool:
    """Whether a cell, or a cell next to it, has an exit (8.R6)."""
    with_exit = {e.cell for e in plan.exits}
    return cell in with_exit or any(n in with_exit for n in plan.neighbours(cell).values())


def on_outline(plan: Plan, cell: Cell) -> bool:
    """Whether a cell has an outer side."""
    return any(step(cell, d) not in plan.types for d in DIRECTIONS)


def _recommendations(
    plan: Plan, out: _Findings, options: PlanOptions, players: int | None, sources: set[Cell]
) -> None:
    weaponries, hospitals = plan.cells_of(Weaponry), plan.cells_of(Hospital)
    if len(weaponries) < 2:
        out.warn("8.R1", None, "two-weaponries",
                 f"{len(weaponries)} weaponr{'y' if len(weaponries) == 1 else 'ies'}; two or "
                 f"more make wounded players' lives easier and dark moves harder to follow")
    if len(hospitals) < 2:
        out.warn("8.R1", None, "two-hospitals",
                 f"{len(hospitals)} hospital{'' if len(hospitals) == 1 else 's'}; two or more "
                 f"make wounded players' lives easier and dark moves harder to follow")
    for h in hospitals:
        for w in plan.neighbours(h).values():
            if isinstance(plan.types[w], Weaponry):
                out.warn("8.R2", h, "hospital-next-to-weaponry",
                         f"a hospital next to the weaponry at {cell_name(w)}: a wounded player "
                         f"heals and rearms at once (a cyclical stalemate)")
    fakes = sum(1 for t in plan.treasures if not t.is_true)
    if fakes < 1:
        out.warn("8.R3", None, "fake-treasures", "no fake treasure; one or more is recommended")
    elif players is not None and fakes > players:
        out.warn("8.R3", None, "fake-treasures",
                 f"{fakes} fake treasures for {players} players; at most one a player is "
                 f"recommended")
    deltas = plan.cells_of(Delta)
    moves = Moves(plan)
    for d in deltas:
        n = moves.ways_out(d)
        if n <= 1:
            out.warn("8.R4", d, "attractor",
                     f"a delta with {'one way' if n == 1 else 'no way'} out (the other sides are "
                     f"walls or rivers flowing in): a strong attractor")
        for other in plan.neighbours(d).values():
            if other > d and isinstance(plan.types[other], Delta):
                out.warn("8.R4", d, "adjacent-deltas",
                         f"deltas on neighbouring cells ({cell_name(d)} and {cell_name(other)}): "
                         f"a strong attractor")
    systems = river_systems(plan)
    loops = plan.pit_loops()
    if not plan.cells_of(River) and not loops:
        out.warn("8.R5", None, "no-rivers-or-pits",
                 "no river and no pit: nothing misleads a player about where it is")
    for delta, cells in systems.items():
        if cells and not any(on_outline(plan, c) for c in (*cells, delta)):
            out.warn("8.R5", delta, "device-inside",
                     "no cell of this river system lies along the outer wall, where rivers "
                     "mislead best")
    for name, members in loops.items():
        if not any(on_outline(plan, c) for c in members):
            out.warn("8.R5", members[0], "device-inside",
                     f"no pit of loop {name} lies along the outer wall, where pits mislead best")
    for treasure in plan.treasures:
        if near_exit(plan, treasure.cell):
            which = "the true treasure" if treasure.is_true else "a fake treasure"
            out.warn("8.R6", treasure.cell, "treasure-near-exit",
                     f"{which} lies at or next to an exit")
    if options.landmines and players is not None and len(plan.exits) <= players:
        out.warn("5.7", None, "exits-for-landmines",
                 f"{len(plan.exits)} exit{'' if len(plan.exits) == 1 else 's'} for {players} "
                 f"players; with landmines, more exits than players are recommended")
    for pile in plan.items:
        if pile.cell in sources:
            out.warn("4.6", pile.cell, "lost-items",
                     "items lie on a river source, where nobody can ever pick them up")


# --- text --------------------------------------------------------------------------------------


def check_text(text: str, options: PlanOptions | None = None,
               players: int | None = None) -> tuple[Plan | None, Report]:
    """Parse a plan text and validate it: (the plan, the report), or (None, a report with
    the parser's error, whose rule is "8.1" for a cell of two types, else "format")."""
    try:
        plan = parse_plan(text)
    except PlanError as exc:
        return None, Report(errors=(Problem(exc.rule or "format", exc.cell,
                                            "one-type" if exc.rule == "8.1" else "format",
                                            str(exc)),))
    return plan, validate(plan, options, players)
