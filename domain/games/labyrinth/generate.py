"""Labyrinth plans drawn from a seed, following section 8: its rules and its recommendations.

`generate(options, rng)` draws a plan from `rng` (a `domain.rng.Rng`; a match passes the
one its seed gives, so a replay draws the same plan) and nothing else. The plan passes
`validate` with no error, and with no warning but those the options make unavoidable
(`expected_warnings`: say, a match that fixes one weaponry gets 8.R1). Impossible options
(more cells asked for than there are) raise `GenerationError` at once; options that leave
too little room fail after a bounded number of attempts with the same error.

How a plan is drawn, in order (cells as in plan.py: (row, column) from 1):

1. Shape: the rectangle `rows` x `columns`, or (`corners=False`) the rectangle without
   its four corner cells. The outline cells are those with an outer side.
2. Rivers (8.R5: along the outer wall). The number of river systems is about one for
   every 15 cells (at most `max_rivers`). A river is a walk of one to three river cells
   along the outline, ending in a delta: the next outline cell, or the cell inside next to
   the last river cell. A third of the systems (when `max_river_branches` allows) are two
   branches meeting on an outline cell that flows inside into the delta. A delta is never
   a cell with two outer sides, never next to another delta, and keeps two sides or more
   that no river flows in through (8.R4: no strong attractor).
3. Pits: about one loop for every 40 cells, of 2 to 4 pits, on outline cells where there
   is room (8.R5), in a drawn order.
4. Two weaponries and two hospitals (three each from 36 cells; `weaponries`,
   `hospitals` fix them), never a hospital next to a weaponry (8.R2).
5. Exits: two, or one more than the players when the match has landmines (5.7), on
   outline cells that are not rivers (8.4); each starts closed with chance 1/3 when
   `closed_exits` allows, but one at least is open.
6. Treasures: the true one and 1 to `players` fakes (8.R3), on land cells neither at an
   exit nor next to one (8.R6). One encephalitis cell from 16 cells (two from 49), next
   to the true treasure half of the time (8.R5: it hinders access); every other cell is
   land.
7. Walls: every border between two cells is a destructible wall, then walls are removed
   in a drawn order wherever they separate two regions not yet joined (a spanning tree;
   the border a river flows across is open from the start), and each remaining wall is
   removed with chance 15%, which makes loops. A river source gets a way in (else the
   river below it is out of reach) and a delta two ways out.
8. Repeating patterns (8.R5; `repeat`, the default): steps 2 to 7 work on pairs of cells
   symmetric through the centre, so a river, a pit loop, weaponries, hospitals, exits and
   walls each have a twin a half-turn away, and a fake treasure lies where the true one's
   twin is. A player cannot tell the two halves apart by what it meets.
9. Checks: the plan is validated; while some cells cannot be reached (8.5) or a delta is
   an attractor (8.R4), a wall next to them is removed and it is checked again. A plan
   still failing is drawn again, at most `ATTEMPTS` times.

With `inner_walls` fixed, step 7 keeps the spanning tree's walls (no random loops), and
after the checks walls are removed at random (which never puts a cell out of reach) or
added where they break nothing, to that number, in halving batches and at most
`WALL_CHECKS` validations a draw. A count above the borders less the passages every cell
needs is refused at once; one that `WALL_ATTEMPTS` draws cannot reach, after them.

With `crossings` (option 7.1), before the checks the walls along a shortest chain of land,
hospital, weaponry and delta cells from the left side to the right one are removed, and
along one from the top to the bottom (adding walls for `inner_walls` keeps them: a plan
is only kept when it passes the validator). A draw whose cell types leave no such chain
is drawn again.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import msgspec

from domain.games.labyrinth.plan import (
    DELTA,
    DIRECTIONS,
    ENCEPHALITIS,
    HOSPITAL,
    LAND,
    OPPOSITE,
    WEAPONRY,
    Cell,
    CellType,
    Direction,
    Exit,
    Pit,
    Plan,
    River,
    Treasure,
    Wall,
    direction_between,
    plan_of,
    step,
)
from domain.games.labyrinth.validate import (
    CROSSINGS,
    Moves,
    PlanOptions,
    Problem,
    components,
    crossing,
    river_sources,
    validate,
)
from domain.rng import Rng

ATTEMPTS = 40
"""How many plans are drawn before the options are declared too tight."""
WALL_ATTEMPTS = 8
"""How many draws may fall short of the inner walls the options fix before they are
declared too many."""
WALL_CHECKS = 60
"""The most validations a draw spends adding walls to reach the inner walls fixed."""
MIN_SIDE, MAX_SIDE = 3, 30


class GenerateOptions(msgspec.Struct, frozen=True, kw_only=True):
    """What to draw: the size (rows, columns), the players the plan is for, the match's
    limits (`PlanOptions`), whether the corners are left out, whether the layout repeats
    itself (8.R5), and whether the plan names a common start cell (option 7.6)."""

    rows: int = 5
    columns: int = 5
    players: int = 2
    limits: PlanOptions = PlanOptions()
    corners: bool = True
    repeat: bool = True
    common_start: bool = False


class GenerationError(ValueError):
    """Options no plan can satisfy (or that left no room in ATTEMPTS draws)."""


def expected_warnings(options: GenerateOptions) -> frozenset[str]:
    """The warnings the options make unavoidable; a generated plan has no other."""
    lim = options.limits
    found: set[str] = set()
    if lim.weaponries is not None and lim.weaponries < 2:
        found.add("two-weaponries")
    if lim.hospitals is not None and lim.hospitals < 2:
        found.add("two-hospitals")
    if lim.treasures is not None and not 2 <= lim.treasures <= options.players + 1:
        found.add("fake-treasures")
    if not _rivers_allowed(lim) and not _pits_allowed(lim):
        found.add("no-rivers-or-pits")
    if lim.landmines and lim.exits is not None and lim.exits <= options.players:
        found.add("exits-for-landmines")
    return frozenset(found)


def _rivers_allowed(lim: PlanOptions) -> bool:
    return (lim.max_rivers is None or lim.max_rivers > 0) and (
        lim.max_river_length is None or lim.max_river_length >= 2
    )


def _pits_allowed(lim: PlanOptions) -> bool:
    return (
        (lim.max_pits is None or lim.max_pits >= 2)
        and (lim.max_pit_loops is None or lim.max_pit_loops > 0)
        and (lim.max_loop_length is None or lim.max_loop_length >= 2)
    )


def generate(options: GenerateOptions, rng: Rng) -> Plan:
    """A plan drawn from `rng` under `options`; GenerationError when none can be."""
    _check_options(options)
    allowed = expected_warnings(options)
    why = ""
    short = 0
    for _ in range(ATTEMPTS):
        plan, why, walls = _attempt(options, rng, allowed)
        if plan is not None:
            return plan
        if walls is not None:
            short += 1
            if short >= WALL_ATTEMPTS:
                raise GenerationError(
                    f"{options.limits.inner_walls} inner walls do not fit in a plan of "
                    f"{options.rows}x{options.columns} cells where every cell stays within reach "
                    f"(8.5): {WALL_ATTEMPTS} draws took {walls} at most; ask for fewer"
                )
    raise GenerationError(
        f"no plan of {options.rows}x{options.columns} cells fits these options after "
        f"{ATTEMPTS} draws (the last one: {why}); allow a larger plan or fewer features"
    )


def _check_options(options: GenerateOptions) -> None:
    lim = options.limits
    for what, value in (("rows", options.rows), ("columns", options.columns)):
        if not MIN_SIDE <= value <= MAX_SIDE:
            raise GenerationError(f"{what}: {value}; a generated plan has {MIN_SIDE} to {MAX_SIDE}")
    if not 1 <= options.players <= 6:
        raise GenerationError(f"players: {options.players}; 1 to 6")
    shape = _shape(options)
    cells = len(shape)
    weaponries, hospitals = _count(lim.weaponries, cells), _count(lim.hospitals, cells)
    treasures = lim.treasures or 2
    exits = _exit_count(options)
    if weaponries < 1 or hospitals < 1:
        raise GenerationError("a plan has at least one weaponry and one hospital (8.2)")
    if exits < 2:
        raise GenerationError("a plan has at least two exits (8.4)")
    if lim.treasures is not None and lim.treasures < 1:
        raise GenerationError("a plan has a true treasure (8.3)")
    if weaponries + hospitals + treasures > cells:
        raise GenerationError(
            f"{weaponries} weaponries, {hospitals} hospitals and {treasures} treasures on land "
            f"do not fit in {cells} cells"
        )
    outline = sum(1 for c in shape if _outer_sides(c, shape))
    borders = sum(1 for r, c in shape for n in ((r, c + 1), (r + 1, c)) if n in shape)
    pits = lim.max_pits if lim.max_pits is not None else 4 * max(1, cells // 40)
    most = borders - (cells - 1) + pits
    if lim.inner_walls is not None and lim.inner_walls > most:
        raise GenerationError(
            f"{lim.inner_walls} inner walls do not fit in a plan of {options.rows}x"
            f"{options.columns} cells: of its {borders} borders between cells, {cells - 1 - pits} "
            f"at least must be open for every cell to be within reach (8.5)"
        )
    if exits > outline:
        raise GenerationError(f"{exits} exits, and the outline has {outline} cells")
    if (lim.heal_moves is not None and lim.heal_moves < 1) or (lim.nstop is not None and lim.nstop < 1):
        raise GenerationError("the moves to heal and Nstop are 1 or more (8.6)")


def _count(value: int | None, cells: int) -> int:
    return value if value is not None else (2 if cells < 36 else 3)


def _exit_count(options: GenerateOptions) -> int:
    lim = options.limits
    if lim.exits is not None:
        return lim.exits
    return max(2, options.players + 1) if lim.landmines else 2


def _shape(options: GenerateOptions) -> frozenset[Cell]:
    rows, columns = options.rows, options.columns
    corners = {(1, 1), (1, columns), (rows, 1), (rows, columns)}
    return frozenset(
        (r, c)
        for r in range(1, rows + 1)
        for c in range(1, columns + 1)
        if options.corners or (r, c) not in corners
    )


def _outer_sides(cell: Cell, cells: frozenset[Cell]) -> list[Direction]:
    return [d for d in DIRECTIONS if step(cell, d) not in cells]


# --- one attempt ---------------------------------------------------------------------------


class _Draft:
    """A plan being drawn: the shape, the types given so far, the twin of each cell."""

    def __init__(self, options: GenerateOptions, rng: Rng) -> None:
        self.options = options
        self.lim = options.limits
        self.rng = rng
        self.cells = _shape(options)
        self.order = sorted(self.cells)
        self.outline = [c for c in self.order if _outer_sides(c, self.cells)]
        self.near = {c: [n for d in DIRECTIONS if (n := step(c, d)) in self.cells]
                     for c in self.order}
        self.types: dict[Cell, CellType] = {}
        self.deltas: list[Cell] = []
        self.why = "no room for every feature"
        self.short_of_walls: int | None = None

    def twin(self, cell: Cell) -> Cell:
        return (self.options.rows + 1 - cell[0], self.options.columns + 1 - cell[1])

    def free(self, cell: Cell) -> bool:
        return cell in self.cells and cell not in self.types

    def neighbours(self, cell: Cell) -> list[Cell]:
        return self.near[cell]

    def chance(self, percent: int) -> bool:
        return self.rng.below(100) < percent

    def pick(self, cells: Sequence[Cell]) -> Cell | None:
        return self.rng.choice(cells) if cells else None

    def paired(self, cells: Iterable[Cell]) -> list[Cell]:
        """Cells whose twin is another cell (and free when the cell is)."""
        return [c for c in cells if self.twin(c) != c and self.free(self.twin(c))]


def _attempt(
    options: GenerateOptions, rng: Rng, allowed: frozenset[str]
) -> tuple[Plan | None, str, int | None]:
    """A plan, or None and why not (and the inner walls placed, when a draw could not
    place as many as the options fix)."""
    draft = _Draft(options, rng)
    _draw_rivers(draft)
    _draw_pits(draft)
    if not _draw_specials(draft):
        return None, draft.why, None
    exits = _draw_exits(draft)
    if exits is None:
        return None, draft.why, None
    treasures = _draw_treasures(draft, exits)
    if treasures is None:
        return None, draft.why, None
    _draw_encephalitis(draft, treasures)
    for cell in draft.order:
        draft.types.setdefault(cell, LAND)
    start = None
    if options.common_start:
        lands = [c for c in draft.order if draft.types[c] == LAND and c not in {t.cell for t in treasures}]
        start = draft.pick(lands)
    walls = _draw_walls(draft)
    if draft.lim.crossings and not _open_crossings(draft, walls):
        return None, draft.why, None
    plan = plan_of(draft.types, walls.values(), exits, treasures, start=start)
    settled, why = _settle(draft, plan, allowed)
    return settled, why, draft.short_of_walls


# --- rivers ------------------------------------------------------------------------------------


def _draw_rivers(draft: _Draft) -> None:
    lim, cells = draft.lim, len(draft.cells)
    if not _rivers_allowed(lim):
        return
    want = max(1, min(6, round(cells / 15)))
    if lim.max_rivers is not None:
        want = min(want, lim.max_rivers)
    longest = lim.max_river_length if lim.max_river_length is not None else 4
    placed = 0
    for _ in range(4 * want):
        if placed >= want:
            break
        two = (lim.max_river_branches is None or lim.max_river_branches >= 2) and draft.chance(33)
        system = _branched_river(draft, longest) if two and longest >= 3 else _river(draft, longest)
        if system is None:
            continue
        twin_system = None
        if draft.options.repeat and want - placed >= 2:
            twin_system = _twin_river(draft, system)
        for cell, kind in system.items():
            draft.types[cell] = kind
        placed += 1
        draft.deltas.extend(c for c, k in system.items() if k == DELTA)
        if twin_system is not None:
            for cell, kind in twin_system.items():
                draft.types[cell] = kind
            draft.deltas.extend(c for c, k in twin_system.items() if k == DELTA)
            placed += 1


def _delta_fits(draft: _Draft, delta: Cell, taken: Iterable[Cell], inflow: Iterable[Cell]) -> bool:
    """A delta here has one outer side at most, no delta next to it, and two sides or more
    no river flows in through."""
    taken = set(taken)
    if not draft.free(delta) or delta in taken:
        return False
    if len(_outer_sides(delta, draft.cells)) > 1:
        return False
    near = draft.neighbours(delta)
    if any(n in draft.deltas for n in near):
        return False
    return sum(1 for n in near if n not in set(inflow)) >= 2


def _walk(draft: _Draft, start: Cell, steps: int, avoid: set[Cell]) -> list[Cell]:
    """A walk from `start` along free outline cells, `steps` cells more at most."""
    path = [start]
    outline = set(draft.outline)
    for _ in range(steps):
        ahead = [n for n in draft.neighbours(path[-1])
                 if n in outline and draft.free(n) and n not in path and n not in avoid]
        if not ahead:
            break
        path.append(draft.rng.choice(ahead))
    return path


def _flowing(path: Sequence[Cell], delta: Cell) -> dict[Cell, CellType]:
    """River cells along `path` flowing towards its end, then into `delta`."""
    system: dict[Cell, CellType] = {}
    for here, there in zip(path, [*path[1:], delta], strict=True):
        direction = direction_between(here, there)
        assert direction is not None
        system[here] = River(direction)
    system[delta] = DELTA
    return system


def _river(draft: _Draft, longest: int) -> dict[Cell, CellType] | None:
    """One branch: one to three river cells along the outline and a delta."""
    start = draft.pick([c for c in draft.outline if draft.free(c)])
    if start is None:
        return None
    length = 1 + draft.rng.below(min(3, longest - 1))
    path = _walk(draft, start, length - 1, set())
    last = path[-1]
    ends = [n for n in draft.neighbours(last) if n not in path]
    if draft.chance(50):
        ends.reverse()
    inside = [n for n in ends if not _outer_sides(n, draft.cells)]
    along = [n for n in ends if n in set(draft.outline)]
    for delta in (inside + along) if draft.chance(50) else (along + inside):
        if _delta_fits(draft, delta, path, [last]):
            return _flowing(path, delta)
    return None


def _branched_river(draft: _Draft, longest: int) -> dict[Cell, CellType] | None:
    """Two branches along the outline meeting on an outline cell that flows inside into
    the delta."""
    outline = set(draft.outline)
    merges = [c for c in draft.outline if draft.free(c) and len(_outer_sides(c, draft.cells)) == 1]
    for merge in draft.rng.shuffle(merges)[:6]:
        inside = [n for n in draft.neighbours(merge) if draft.free(n) and n not in outline]
        arms = [n for n in draft.neighbours(merge) if draft.free(n) and n in outline]
        if not inside or len(arms) < 2:
            continue
        delta = draft.rng.choice(inside)
        if not _delta_fits(draft, delta, [merge, *arms], [merge]):
            continue
        first, second = draft.rng.shuffle(arms)[:2]
        reach = min(2, longest - 2)
        arm_a = _walk(draft, first, draft.rng.below(reach), {merge, second, delta})
        arm_b = _walk(draft, second, draft.rng.below(reach), {merge, delta, *arm_a})
        system: dict[Cell, CellType] = {}
        for arm in (arm_a, arm_b):
            system.update(_flowing(list(reversed(arm)), merge))
        system.update(_flowing([merge], delta))
        return system
    return None


def _twin_river(draft: _Draft, system: dict[Cell, CellType]) -> dict[Cell, CellType] | None:
    """The system turned a half-turn about the centre, when its cells are free and apart
    from the original's."""
    twin: dict[Cell, CellType] = {}
    for cell, kind in system.items():
        other = draft.twin(cell)
        if not draft.free(other) or other in system:
            return None
        twin[other] = River(OPPOSITE[kind.flow]) if isinstance(kind, River) else kind
    if any(n in system for c in twin for n in draft.neighbours(c)):
        return None
    delta = next(c for c, k in twin.items() if k == DELTA)
    if any(n in draft.deltas or system.get(n) == DELTA for n in draft.neighbours(delta)):
        return None
    return twin


# --- pits, weaponries, hospitals ---------------------------------------------------------------


def _draw_pits(draft: _Draft) -> None:
    lim = draft.lim
    if not _pits_allowed(lim):
        return
    loops = max(1, len(draft.cells) // 40)
    if lim.max_pit_loops is not None:
        loops = min(loops, lim.max_pit_loops)
    budget = lim.max_pits if lim.max_pits is not None else 4 * loops
    longest = min(4, lim.max_loop_length or 4)
    for index in range(loops):
        size = min(2 + draft.rng.below(longest - 1), budget)
        if draft.options.repeat and size % 2 and size > 2:
            size -= 1
        if size < 2:
            return
        pits = _pit_cells(draft, size)
        if pits is None:
            return
        name = "abcdefghijklmnopqrstuvwxyz"[index]
        for place, cell in enumerate(draft.rng.shuffle(pits), start=1):
            draft.types[cell] = Pit(name, place)
        budget -= size


def _pit_cells(draft: _Draft, size: int) -> list[Cell] | None:
    """`size` free cells for a loop, on the outline where there is room (in twin pairs when
    the layout repeats), one at least on it."""
    chosen: list[Cell] = []
    pools = ([c for c in draft.outline if draft.free(c)], [c for c in draft.order if draft.free(c)])
    for pool in pools:
        pool = draft.rng.shuffle(pool)
        for cell in pool:
            if len(chosen) >= size:
                break
            if cell in chosen or not draft.free(cell):
                continue
            twin = draft.twin(cell)
            if draft.options.repeat and size - len(chosen) >= 2:
                if twin == cell or not draft.free(twin) or twin in chosen:
                    continue
                chosen.extend((cell, twin))
            else:
                chosen.append(cell)
    outline = set(draft.outline)
    if len(chosen) < size or not any(c in outline for c in chosen):
        return None
    return chosen[:size]


def _draw_specials(draft: _Draft) -> bool:
    """Weaponries and hospitals, no hospital next to a weaponry (8.R2)."""
    cells = len(draft.cells)
    wanted = ((WEAPONRY, _count(draft.lim.weaponries, cells)),
              (HOSPITAL, _count(draft.lim.hospitals, cells)))
    for kind, count in wanted:
        other = HOSPITAL if kind == WEAPONRY else WEAPONRY
        placed = 0
        while placed < count:
            ok = [c for c in draft.order if draft.free(c)
                  and not any(draft.types.get(n) == other for n in draft.neighbours(c))]
            if draft.options.repeat and count - placed >= 2:
                pairs = [c for c in draft.paired(ok) if draft.twin(c) in ok
                         and draft.twin(c) not in draft.neighbours(c)]
                if pairs:
                    cell = draft.rng.choice(pairs)
                    draft.types[cell] = draft.types[draft.twin(cell)] = kind
                    placed += 2
                    continue
            single = draft.pick(ok)
            if single is None:
                draft.why = "no room for the weaponries and hospitals apart (8.R2)"
                return False
            draft.types[single] = kind
            placed += 1
    return True


# --- exits, treasures, encephalitis ----------------------------------------------------------


def _draw_exits(draft: _Draft) -> list[Exit] | None:
    count = _exit_count(draft.options)
    may = [c for c in draft.outline if not isinstance(draft.types.get(c), River)]
    chosen: list[Cell] = []
    for cell in draft.rng.shuffle(may):
        if len(chosen) >= count:
            break
        if cell in chosen:
            continue
        twin = draft.twin(cell)
        if draft.options.repeat and count - len(chosen) >= 2:
            if twin == cell or twin not in may or twin in chosen:
                continue
            chosen.extend((cell, twin))
        else:
            chosen.append(cell)
    if len(chosen) < count:
        draft.why = f"no room for {count} exits on the outline (not on a river)"
        return None
    exits: list[Exit] = []
    sides: dict[Cell, Direction] = {}
    for cell in chosen:
        outer = _outer_sides(cell, draft.cells)
        twin_side = sides.get(draft.twin(cell))
        side = OPPOSITE[twin_side] if twin_side in outer else draft.rng.choice(outer)
        sides[cell] = side
        closed = draft.lim.closed_exits and draft.chance(33)
        exits.append(Exit(cell, side, not closed))
    if not any(e.open for e in exits):
        first = exits[0]
        exits[0] = Exit(first.cell, first.side, True)
    return exits


def _draw_treasures(draft: _Draft, exits: Sequence[Exit]) -> list[Treasure] | None:
    lim = draft.lim
    total = lim.treasures if lim.treasures is not None else 2 + draft.rng.below(draft.options.players)
    at_exit = {e.cell for e in exits}
    spots = [c for c in draft.order if draft.free(c) and c not in at_exit
             and not any(n in at_exit for n in draft.neighbours(c))]
    if lim.treasures is None:
        total = min(total, len(spots))
    if len(spots) < max(total, 2):
        draft.why = (f"{max(total, 2)} treasures and {len(spots)} land cells away from the "
                     f"exits to put them on (8.R6)")
        return None
    true = draft.rng.choice(spots)
    chosen = [true]
    twin = draft.twin(true)
    if draft.options.repeat and total > 1 and twin != true and twin in spots:
        chosen.append(twin)
    rest = [c for c in draft.rng.shuffle(spots) if c not in chosen]
    chosen.extend(rest[: total - len(chosen)])
    return [Treasure(c, c == true) for c in chosen]


def _draw_encephalitis(draft: _Draft, treasures: Sequence[Treasure]) -> None:
    if not draft.lim.encephalitis:
        return
    cells = len(draft.cells)
    count = 0 if cells < 16 else 1 if cells < 49 else 2
    lying = {t.cell for t in treasures}
    true = next(t.cell for t in treasures if t.is_true)
    for _ in range(count):
        free = [c for c in draft.order if draft.free(c) and c not in lying]
        near = [c for c in free if c in draft.neighbours(true)]
        cell = draft.pick(near if near and draft.chance(50) else free)
        if cell is None:
            return
        draft.types[cell] = ENCEPHALITIS


# --- walls -------------------------------------------------------------------------------------


Border = tuple[Cell, Cell]


def _borders(draft: _Draft) -> list[Border]:
    return [(c, n) for c in draft.order for n in (step(c, "right"), step(c, "down")) if n in draft.cells]


def _twin_border(draft: _Draft, border: Border) -> Border:
    a, b = sorted((draft.twin(border[0]), draft.twin(border[1])))
    return (a, b)


def _draw_walls(draft: _Draft) -> dict[Border, Wall]:
    """A spanning tree of passages, the river's flow open, then a quarter of the rest."""
    parent = {c: c for c in draft.order}

    def find(c: Cell) -> Cell:
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    walls = {b: Wall(*b) for b in _borders(draft)}

    def open_(border: Border) -> None:
        walls.pop(border, None)
        ra, rb = find(border[0]), find(border[1])
        if ra != rb:
            parent[ra] = rb

    for cell, kind in draft.types.items():
        if isinstance(kind, River):
            a, b = sorted((cell, step(cell, kind.flow)))
            open_((a, b))
    groups: list[list[Border]] = []
    seen: set[Border] = set()
    for border in _borders(draft):
        if border in seen:
            continue
        group = [border]
        if draft.options.repeat:
            twin = _twin_border(draft, border)
            if twin != border:
                group.append(twin)
        seen.update(group)
        groups.append(group)
    for group in draft.rng.shuffle(groups):
        if any(find(a) != find(b) for a, b in group):
            for border in group:
                open_(border)
    loops = draft.lim.inner_walls is None  # else the count is set later, removing walls
    for group in draft.rng.shuffle(groups) if loops else ():
        if group[0] in walls and draft.chance(15):
            for border in group:
                walls.pop(border, None)
    _open_rivers(draft, walls)
    return walls


def _open_rivers(draft: _Draft, walls: dict[Border, Wall]) -> None:
    """Open a way into every river source (else the river below it is out of reach) and
    two ways out of every delta (8.R4), with their twins when the layout repeats."""

    def border(a: Cell, b: Cell) -> Border:
        first, second = sorted((a, b))
        return (first, second)

    def open_one(cell: Cell, around: list[Cell]) -> None:
        if not around:
            return
        other = draft.rng.choice(around)
        gone = [border(cell, other)]
        if draft.options.repeat:
            gone.append(_twin_border(draft, gone[0]))
        for b in gone:
            walls.pop(b, None)

    types = draft.types
    for cell in draft.order:
        kind = types.get(cell)
        if isinstance(kind, River) and not any(
            isinstance(k := types.get(n), River) and step(n, k.flow) == cell
            for n in draft.neighbours(cell)
        ):
            entries = [n for n in draft.neighbours(cell)
                       if n != step(cell, kind.flow) and not isinstance(types.get(n), River)]
            if entries and all(border(cell, n) in walls for n in entries):
                open_one(cell, entries)
        elif kind == DELTA:
            outs = [n for n in draft.neighbours(cell)
                    if not (isinstance(k := types.get(n), River) and step(n, k.flow) == cell)]
            while sum(1 for n in outs if border(cell, n) not in walls) < 2:
                shut = [n for n in outs if border(cell, n) in walls]
                if not shut:
                    break
                open_one(cell, shut)


def _open_crossings(draft: _Draft, walls: dict[Border, Wall]) -> bool:
    """Open the walls along a chain of land, hospital, weaponry and delta cells from the
    left side to the right one, and along one from the top to the bottom (option 7.1);
    False when the cell types leave no such chain."""
    plan = plan_of(draft.types)
    for across, (start, end) in CROSSINGS.items():
        chain = crossing(plan, start, end, walls=False)
        if chain is None:
            draft.why = f"no chain of land, hospital, weaponry and delta cells {across} (7.1)"
            return False
        for a, b in itertools.pairwise(chain):
            border = (min(a, b), max(a, b))
            walls.pop(border, None)
            if draft.options.repeat:
                walls.pop(_twin_border(draft, border), None)
    return True


# --- settling ----------------------------------------------------------------------------------


_FIXABLE = {"unreachable", "attractor"}
_REPAIRS = 60


def _unwanted(plan: Plan, draft: _Draft, allowed: frozenset[str], walls: bool = True) -> list[Problem]:
    """The errors, and the warnings not allowed; `walls=False` leaves the number of inner
    walls (option 7.1) unchecked, for the repairs that come before it is set."""
    limits = draft.lim if walls else msgspec.structs.replace(draft.lim, inner_walls=None)
    report = validate(plan, limits, draft.options.players)
    return [*report.errors, *(w for w in report.warnings if w.name not in allowed)]


def _settle(draft: _Draft, plan: Plan, allowed: frozenset[str]) -> tuple[Plan | None, str]:
    """The plan with walls removed until nothing but fixable problems are left, then the
    inner walls brought to the number the match fixes; None when that fails."""
    for _ in range(_REPAIRS):
        problems = _unwanted(plan, draft, allowed, walls=False)
        if not problems:
            break
        if any(p.name not in _FIXABLE for p in problems):
            return None, _why(problems)
        gone = _repair_walls(draft, plan, problems)
        if not gone:
            return None, _why(problems)
        plan = _without(draft, plan, gone)
    else:
        return None, _why(_unwanted(plan, draft, allowed))
    target = draft.lim.inner_walls
    if target is not None and len(plan.walls) > target:
        extra = draft.rng.shuffle(list(plan.walls))[: len(plan.walls) - target]
        plan = plan_of(plan.types, [w for w in plan.walls if w not in extra], plan.exits,
                       plan.treasures, start=plan.start)
    elif target is not None and len(plan.walls) < target:
        flows = {tuple(sorted((c, step(c, k.flow)))) for c, k in plan.types.items()
                 if isinstance(k, River)}
        have = {(w.a, w.b) for w in plan.walls}
        free = [b for b in draft.rng.shuffle(_borders(draft)) if b not in have and b not in flows]
        plan = _add_walls(draft, plan, free, target - len(plan.walls), allowed)
        if len(plan.walls) < target:
            draft.short_of_walls = len(plan.walls)
            return None, (f"{len(plan.walls)} inner walls at most, where every cell stays "
                          f"within reach (8.5)")
    left = _unwanted(plan, draft, allowed)
    return (None, _why(left)) if left else (plan, "")


def _add_walls(
    draft: _Draft, plan: Plan, free: Sequence[Border], need: int, allowed: frozenset[str]
) -> Plan:
    """The plan with up to `need` walls more, taken in order from `free` where they break
    nothing: as many at once as still missing, halved while the plan fails (so a border
    that breaks something costs a few checks, not one for every wall), and at most
    WALL_CHECKS checks in all."""
    i, checks = 0, 0
    while need > 0 and i < len(free) and checks < WALL_CHECKS:
        batch = min(need, len(free) - i)
        while batch >= 1 and checks < WALL_CHECKS:
            checks += 1
            trial = plan_of(plan.types, [*plan.walls, *(Wall(*b) for b in free[i:i + batch])],
                            plan.exits, plan.treasures, start=plan.start)
            if not _unwanted(trial, draft, allowed, walls=False):
                plan, need, i = trial, need - batch, i + batch
                break
            batch //= 2
        else:
            i += 1
    return plan


def _why(problems: Sequence[Problem]) -> str:
    return "; ".join(p.text for p in problems[:2]) or "no problem"


def _repair_walls(draft: _Draft, plan: Plan, problems: Sequence[Problem]) -> list[Wall]:
    """Walls to remove, one drawn for each problem: for an attractor delta, one of its
    walls; for each area of cells outside the largest one (8.5), a wall between the area
    (or a river source above it, where a player gets into the river) and another area."""
    gone: list[Wall] = []
    for p in problems:
        if p.name == "attractor" and p.cell is not None:
            around = [w for w in plan.walls if p.cell in (w.a, w.b)]
            if around:
                gone.append(draft.rng.choice(around))
    if any(p.name == "unreachable" for p in problems):
        sources = set(river_sources(plan))
        nodes = [c for c in plan.types if c not in sources]
        moves = Moves(plan)
        succ = {c: moves.ends(c) for c in nodes}
        areas = components(nodes, succ)
        main = max(areas, key=len)
        area_of = {c: i for i, area in enumerate(areas) for c in area}
        for i, area in enumerate(areas):
            if area is main:
                continue
            inside = set(area)
            for cell in area:
                inside |= _sources_above(plan, cell)
            between = [w for w in plan.walls if (w.a in inside) != (w.b in inside)
                       or (w.a in inside and area_of.get(w.a, i) != area_of.get(w.b, i))]
            if between:
                gone.append(draft.rng.choice(between))
    return gone


def _sources_above(plan: Plan, cell: Cell) -> set[Cell]:
    found: set[Cell] = set()
    todo = list(plan.upstream(cell))
    while todo:
        c = todo.pop()
        if c in found:
            continue
        found.add(c)
        todo.extend(plan.upstream(c))
    return found


def _without(draft: _Draft, plan: Plan, gone: Sequence[Wall]) -> Plan:
    """The plan with these walls (and, when the layout repeats, their twins) removed."""
    drop = {(w.a, w.b) for w in gone}
    if draft.options.repeat:
        drop |= {_twin_border(draft, b) for b in list(drop)}
    return msgspec.structs.replace(plan, walls=tuple(w for w in plan.walls if (w.a, w.b) not in drop))
