"""What the Labyrinth leak properties (tests/labyrinth/test_leaks.py) are built from.

Two worlds of one match: the same public options, the same commands, and a hidden
difference (a cell of the plan, a start cell, what a dark move finds). Both are played
through the engine (projections.contract.Rehearsal), and each viewer's update frames are
built as the server builds them (tests/conformance/leaks.py: server/streams.py's frames,
right after each entry) and compared byte for byte.

How far a viewer's frames are compared is decided by the rules, never by the projection
under test: every viewer is compared up to the first entry whose public words (the
game master's events addressed to everyone, and whether a command was accepted) differ
between the worlds; a seat is compared only up to the first entry at which the rules
tell it something that differs (an event addressed to it, or its own belongings and
health, which a player knows at the table and may ask for at any time, 6.4).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
from hypothesis import strategies as st

from domain.contract import OptionsError
from domain.engine import Outcome
from domain.games.labyrinth import game as lab
from domain.games.labyrinth import rules
from domain.games.labyrinth.moves import (
    MOVEMENTS,
    Action,
    Command,
    Shoot,
    Throw,
    command_to_builtins,
    parse_any,
    render_command,
)
from domain.games.labyrinth.plan import (
    DELTA,
    DIRECTIONS,
    ENCEPHALITIS,
    HOSPITAL,
    LAND,
    WEAPONRY,
    Cell,
    CellType,
    Items,
    Pit,
    Plan,
    River,
    Square,
    Treasure,
    step,
)
from domain.games.labyrinth.plan_text import render_plan
from projections.contract import AUDITOR, SPECTATOR, Rehearsal, TwinWorld, Viewer
from projections.registry import GAMES, Hosted
from tests.conformance.leaks import Played, _compare, _frames, play, streams
from tests.labyrinth.test_moves import commands

LAB: Hosted = GAMES["labyrinth"]
VARIANT = "labyrinth"
T0 = 1_000_000

# --- the match ---------------------------------------------------------------------------------

game_options: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries({}, optional={
    "rivers": st.sampled_from(rules.RIVERS),
    "blow_report": st.sampled_from(rules.BLOW_REPORTS),
    "shoot_through": st.booleans(),
    "shooting_range": st.integers(1, 3),
    "damp_powder": st.booleans(),
    "named_target": st.booleans(),
    "weaponry_landmines": st.booleans(),
    "mine_reorder": st.booleans(),
    "shared_starts": st.booleans(),
    "river_starts": st.booleans(),
    "missed_move": st.sampled_from(rules.MISSED_MOVES),
})
"""Options that change what happens in a match (6.1's starts, section 7's, section 9's
missed move); the plan's limits stay the defaults, which every generated plan keeps."""


def match_options(plan: Plan, players: int, extra: Mapping[str, Any]) -> dict[str, Any]:
    """A host's match on `plan`: the plan is secret (game.public_options), so two worlds
    whose plans differ have the same public options."""
    return {"players": players, "plan": render_plan(plan), "clock_scale": 0.001, **extra}


def accepts(plan: Plan, players: int, extra: Mapping[str, Any]) -> bool:
    """Whether a host may create the match (the plan valid under section 8 and the match's
    limits: what game.configure checks)."""
    try:
        lab.configure(VARIANT, match_options(plan, players, extra))
    except OptionsError:
        return False
    return True


def rehearsal(plan: Plan, players: int, extra: Mapping[str, Any], seed: bytes) -> Rehearsal:
    return Rehearsal(lab, VARIANT, match_options(plan, players, extra), seed, T0)


# --- commands ------------------------------------------------------------------------------------

plain_moves: st.SearchStrategy[Command] = st.builds(
    lambda go, dark, tell: Command(go=go, dark=dark, tell_wall=dark and tell),
    st.sampled_from(MOVEMENTS), st.booleans(), st.booleans())
"""A movement alone, told, dark or semi-dark."""

turn_commands: st.SearchStrategy[Command] = st.one_of(plain_moves, plain_moves, commands())
"""What a player says on its turn: mostly a movement alone, else any command (actions
before and after, conditions, skip, status, recall)."""


def move_body(data: st.DataObject, command: Command) -> dict[str, Any]:
    """The `move` command, as text or as the structured form (both parse the same)."""
    text = data.draw(st.booleans(), label="as text")
    return {"type": "move", "move": render_command(command) if text else command_to_builtins(command)}


def next_command(data: st.DataObject, gs: lab.State, dark: int | None = None
                 ) -> tuple[int | None, dict[str, Any]]:
    """A command for the match in state `gs` and who sends it: the start choice of the
    player choosing (any cell), a wounded (or handicapped) player's order now and then, a
    status question or recall by anyone, a break or a vote, a missed move now and then
    (sender None: the tick at the deadline), and mostly the move of the player to play
    (seat `dark`'s moves mostly dark or semi-dark)."""
    core = gs.core
    seat = rules.to_act(core)
    assert seat is not None
    if core.phase == "start":
        return seat, {"type": "start", "cell": list(data.draw(st.sampled_from(sorted(core.plan.cells))))}
    players = len(core.players)
    player = core.players[seat]
    if (player.may_order or player.extra_orders) and data.draw(st.booleans()):
        ordered = data.draw(st.none() | st.sampled_from(sorted(core.plan.cells)))
        return seat, {"type": "order", "cell": None if ordered is None else list(ordered)}
    kind = data.draw(st.sampled_from(["move"] * 12 + ["talk", "break", "vote", "late"]))
    if kind == "late" and gs.deadline is not None:  # the player to move lets its clock run out (9)
        return None, {"deadline": gs.deadline}
    if kind == "talk":
        sender = data.draw(st.integers(0, players - 1))
        talk = data.draw(st.sampled_from([Command(kind="status"), Command(kind="recall", player=1 + seat)]))
        return sender, {"type": "move", "move": render_command(talk)}
    if kind == "break":
        return seat, {"type": "break"}
    if kind == "vote":
        return data.draw(st.integers(0, players - 1)), {"type": "vote", "yes": data.draw(st.booleans())}
    command = data.draw(turn_commands)
    if seat == dark and command.kind == "move" and not command.dark and data.draw(st.integers(0, 3)):
        command = msgspec.structs.replace(command, dark=True, tell_wall=data.draw(st.booleans()))
    return seat, move_body(data, command)


def _propose(w: Rehearsal, seat: int | None, body: dict[str, Any], ts: int) -> Outcome:
    """A command of `seat`, or (seat None) the tick at the deadline `body` names."""
    if seat is None:
        return w.step("tick", None, body, max(ts, body["deadline"]))
    return w.step("command", seat, body, ts)


@dataclass(frozen=True)
class Step:
    """One accepted command (or tick) of a rehearsed world: who sent what (None: the
    tick), the game's state before and after it, and its outcome."""

    seat: int | None
    body: dict[str, Any]
    before: lab.State
    after: lab.State
    outcome: Outcome


def play_alone(w: Rehearsal, data: st.DataObject, entries: int) -> list[Step]:
    """Up to `entries` accepted commands drawn by `next_command` (a refused one is taken
    back: it is not in the script)."""
    done: list[Step] = []
    for _ in range(4 * entries):
        if len(done) >= entries or w.ms.ended:
            break
        before = w.gs
        seat, body = next_command(data, before)
        mark = w.mark()
        outcome = _propose(w, seat, body, w.ts + 1)
        if outcome.rejection is not None:
            w.rewind(mark)
            continue
        done.append(Step(seat, body, before, w.gs, outcome))
    return done


SKIP: dict[str, Any] = {"type": "move", "move": "skip"}
WAYS_BACK: tuple[dict[str, Any], ...] = tuple({"type": "move", "move": f"go {d}"} for d in DIRECTIONS)
"""A player outside the labyrinth may not skip: it walks back in (or is lost, 3.4)."""


def _closing(gs: lab.State, seat: int) -> tuple[dict[str, Any], ...]:
    """What `seat` tries, in order, to bring the match to its end: a start cell the rules
    accept while the starts are chosen; then a skip, or a way back in from outside."""
    if gs.core.phase == "start":
        return tuple({"type": "start", "cell": list(c)} for c in rules.start_candidates(gs.core, seat))
    return (SKIP, *WAYS_BACK)


def finish(w: Rehearsal) -> list[Step]:
    """Every player skips (or walks back in from outside) until the match ends, by the
    skips (6.6) or otherwise: the accepted commands (the start cells chosen first, if
    they are not yet)."""
    done: list[Step] = []
    for _ in range(200):
        if w.ms.ended:
            return done
        seat = rules.to_act(w.gs.core)
        assert seat is not None
        for body in _closing(w.gs, seat):
            before, mark = w.gs, w.mark()
            outcome = w.step("command", seat, body, w.ts + 1)
            if outcome.rejection is None:
                done.append(Step(seat, body, before, w.gs, outcome))
                break
            w.rewind(mark)
    raise AssertionError("the skips did not end the match")


# --- what the rules said -------------------------------------------------------------------------


def resolved(outcome: Outcome) -> list[lab.Resolved]:
    return [e for e in outcome.events if isinstance(e, lab.Resolved)]


def public_words(outcome: Outcome) -> Any:
    """What everyone hears of an entry, by the rules: whether it was accepted, and each
    command's actor, act and the game master's words to everyone (a move's words include
    the move itself); the engine's events."""
    if outcome.rejection is not None:
        return ("refused", outcome.rejection.code, outcome.rejection.reason)
    out: list[Any] = []
    for event in outcome.events:
        if isinstance(event, lab.Resolved):
            out.append((event.seat, event.act, [e for e in event.said if e.to is None]))
        else:
            out.append(msgspec.json.encode(event))
    return out


def told(outcome: Outcome, seat: int) -> list[rules.Event]:
    """What the rules tell `seat` alone in an entry (events addressed to it)."""
    return [e for r in resolved(outcome) for e in r.said if e.to is not None and seat in e.to]


def own_state(gs: lab.State, seat: int) -> Any:
    """What a player knows of itself at the table: its status (6.4: belongings, health,
    outside), whether it may order a cell, its orders left, its start choices."""
    p = gs.core.players[seat]
    return (rules.status_event(gs.core, seat), p.may_order, p.orders, p.extra_orders,
            dict(gs.core.refused).get(seat), dict(gs.core.choices).get(seat))


# --- what could reveal a cell --------------------------------------------------------------------


def _actions(command: Command) -> Iterator[Action]:
    yield from command.before
    yield from command.after
    for when in command.when:
        yield from when.then


def line(plan: Plan, cell: Cell, direction: str) -> Iterator[Cell]:
    """The cells a bullet from `cell` could cross going `direction`: up to the first wall
    or the outline, whatever stands in between."""
    at = cell
    while True:
        side = plan.side(at, direction)  # type: ignore[arg-type]
        if side.blocks or side.outer:
            return
        at = step(at, direction)  # type: ignore[arg-type]
        yield at


def could_reveal(plan: Plan, history: Sequence[Step]) -> set[Cell]:
    """Every cell whose type or things lying there a rule could have read during the
    play of `history` (a superset: a cell outside it can change without changing
    anything the game master says):

    - every cell a player stood on after any entry (arrivals, starts, ordered cells,
      pits and rivers it was carried to; where it stood when it walked out);
    - every cell named in a start choice, an order or a question (refused ones too);
    - for each move, from the cell the player stood on before and after it: the cell
      in the direction it went (walked into, or the far side of a wall), the cell in the
      direction of every action (thrown onto, mine set on, wall blown towards, first cell
      a bullet enters), every cell a bullet could cross (up to a wall, in the plan after
      the move, which has only lost walls), and the neighbours of a throw's target (a
      river source is told apart from a river cell by its upstream neighbours: a true
      treasure thrown onto a source is lost, 5.2);
    - closed under the flow and the loops: a river cell's next cell (carried() reads
      its type), a pit's next pit (landed on)."""
    found: set[Cell] = set()

    def add(cell: Cell | None) -> None:
        if cell is not None and cell in plan:
            found.add(cell)

    for h in history:
        for gs in (h.before, h.after):
            for p in gs.core.players:
                add(p.cell)
                if p.outside is not None:
                    add(p.outside[0])
        if h.body.get("type") in ("start", "order", "ask") and h.body.get("cell") is not None:
            add((int(h.body["cell"][0]), int(h.body["cell"][1])))
        if h.body.get("type") != "move":
            continue
        assert h.seat is not None
        command = parse_any(h.body["move"])
        if command.kind != "move":
            continue
        now = h.after.core.plan
        for cell in (h.before.core.players[h.seat].cell, h.after.core.players[h.seat].cell):
            if cell is None:
                continue
            if command.go in DIRECTIONS:
                add(step(cell, command.go))
            for action in _actions(command):
                direction = getattr(action, "direction", None)
                if direction is None:
                    continue
                target = step(cell, direction)
                add(target)
                if isinstance(action, Shoot):
                    found.update(line(now, cell, direction))
                if isinstance(action, Throw):
                    for d in DIRECTIONS:
                        add(step(target, d))
    todo = list(found)
    while todo:
        cell = todo.pop()
        for nxt in (plan.river_next(cell), plan.pit_next(cell)):
            if nxt is not None and nxt in plan and nxt not in found:
                found.add(nxt)
                todo.append(nxt)
    return found


# --- a plan changed in one cell ------------------------------------------------------------------


def with_type(plan: Plan, cell: Cell, kind: CellType) -> Plan:
    squares = tuple(Square(s.cell, kind) if s.cell == cell else s for s in plan.squares)
    return msgspec.structs.replace(plan, squares=squares)


def with_items(plan: Plan, cell: Cell, items: Items | None) -> Plan:
    kept = tuple(i for i in plan.items if i.cell != cell)
    return msgspec.structs.replace(plan, items=kept if items is None else (*kept, items))


def with_fake_treasure(plan: Plan, cell: Cell) -> Plan:
    return msgspec.structs.replace(plan, treasures=(*plan.treasures, Treasure(cell, False)))


def without_treasure(plan: Plan, cell: Cell) -> Plan:
    return msgspec.structs.replace(plan, treasures=tuple(t for t in plan.treasures if t.cell != cell))


def changes(plan: Plan, cell: Cell) -> list[tuple[str, Plan]]:
    """Every way to change `cell` alone, in words: its type (any, pits of the plan's loops
    at any place, rivers flowing any way), what lies there (bullets, grenades, landmines;
    a fake treasure more, its treasure gone). Not all of them are valid plans."""
    kinds: list[CellType] = [LAND, HOSPITAL, WEAPONRY, ENCEPHALITIS, DELTA]
    kinds += [River(d) for d in DIRECTIONS]
    for loop, pits in plan.pit_loops().items():
        kinds += [Pit(loop, place) for place in range(1, len(pits) + 2)]
    out = [(f"type {k!r}", with_type(plan, cell, k)) for k in kinds if k != plan.type_at(cell)]
    for b, g, m in ((2, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1), (3, 0, 0)):
        items = Items(cell, b, g, m)
        if plan.items_at(cell) != items:
            out.append((f"items {items!r}", with_items(plan, cell, items)))
    if plan.items_at(cell) is not None:
        out.append(("no items", with_items(plan, cell, None)))
    if plan.treasure_at(cell) is None:
        out.append(("a fake treasure", with_fake_treasure(plan, cell)))
    else:
        out.append(("no treasure", without_treasure(plan, cell)))
    return out


def first_valid(data: st.DataObject, ways: Sequence[tuple[str, Plan]],
                valid: Callable[[Plan], bool]) -> tuple[str, Plan] | None:
    """The first of `ways` in an order drawn by hypothesis whose plan is `valid`."""
    order = data.draw(st.permutations(range(len(ways))), label="the changes tried in order")
    for i in order:
        if valid(ways[i][1]):
            return ways[i]
    return None


def pits_kept(a: Plan, b: Plan, cells: set[Cell]) -> bool:
    """Whether every pit of `cells` leads to the same pit in both plans (changing a cell
    into a pit of a loop, or out of one, changes where that loop's other pits lead)."""
    return all(a.pit_next(c) == b.pit_next(c) for c in cells if isinstance(a.type_at(c), Pit))


# --- comparing two worlds' streams ---------------------------------------------------------------


@dataclass
class Cuts:
    """How many script steps of two twin worlds each viewer's frames are compared for:
    `everyone` (the spectator, and every seat up to it), and earlier cuts for seats the
    rules told something that differs; `excluded` seats are not compared at all."""

    everyone: int | None
    seats: dict[int, int]
    excluded: tuple[int, ...] = ()


def play_both(worlds: tuple[TwinWorld, TwinWorld], steps: int | None = None,
              hosted: Hosted = LAB) -> tuple[Played, Played]:
    """Both worlds played through the engine, `steps` script steps compared (None: all)."""
    return play(hosted, VARIANT, worlds[0], steps), play(hosted, VARIANT, worlds[1], steps)


def check_streams(played: tuple[Played, Played], cuts: Cuts, hosted: Hosted = LAB,
                  where: str = "labyrinth") -> None:
    """AssertionError naming the first differing frame unless every seat (but the
    excluded) and a spectator receive the same bytes of both worlds up to its cut, and
    the full view of both differs over the steps compared (else the check proves
    nothing)."""
    seats = played[0].states[0].seats
    groups: dict[int | None, dict[str, Viewer]] = {cuts.everyone: {"spectator": SPECTATOR}}
    for s in range(seats):
        if s in cuts.excluded:
            continue
        cut = cuts.seats.get(s, cuts.everyone)
        if cut is not None and cuts.everyone is not None:
            cut = min(cut, cuts.everyone)
        groups.setdefault(cut, {})[f"seat {s}"] = Viewer(seat=s)
    for cut, viewers in groups.items():
        pair = (_cut(played[0], cut), _cut(played[1], cut))
        got = (streams(hosted, pair[0], viewers), streams(hosted, pair[1], viewers))
        for label in viewers:
            _compare(where, label, pair, (got[0][label], got[1][label]))
    full = {"the full view": AUDITOR}
    if _frames(streams(hosted, played[0], full)["the full view"]) == _frames(
            streams(hosted, played[1], full)["the full view"]):
        raise AssertionError(f"{where}: the two worlds are the same in the full view over the "
                             f"{played[0].cut} entries compared: the check would prove nothing")


def _cut(played: Played, steps: int | None) -> Played:
    if steps is None:
        return played
    return dataclasses.replace(played, cut=min(played.cut, played.joined + steps))


# --- two worlds played side by side --------------------------------------------------------------

Scripted = tuple[int, dict[str, Any], dict[str, Any]]
"""A command chosen for both worlds: the sender, its body in the first and in the second."""


@dataclass
class Pair:
    """Two rehearsed worlds played with the same commands (but for the scripted ones),
    and what the rules told whom: `until`, the first step whose public words differ;
    `informed`, for a seat, the first step at which it was told something that differs."""

    a: Rehearsal
    b: Rehearsal
    excluded: tuple[int, ...]
    until: int | None = None
    informed: dict[int, int] = dataclasses.field(default_factory=dict)

    @property
    def steps(self) -> int:
        return len(self.a.steps)

    def cuts(self) -> Cuts:
        return Cuts(self.until, dict(self.informed), self.excluded)

    def worlds(self) -> tuple[TwinWorld, TwinWorld]:
        return self.a.world(), self.b.world()

    def step(self, seat: int | None, body_a: dict[str, Any], body_b: dict[str, Any]
             ) -> tuple[Outcome, Outcome] | None:
        """Both worlds take one command; None when both refused it (then it is taken back).
        Sets `until` when what everyone hears differs (or only one world refused it: the
        other's words are heard), and `informed` for seats told something that differs.
        AssertionError when a seat not excluded nor informed is refused in one world only:
        its refusal would tell it what it may not know."""
        marks = self.a.mark(), self.b.mark()
        ts = max(self.a.ts, self.b.ts) + 1
        oa = _propose(self.a, seat, body_a, ts)
        ob = _propose(self.b, seat, body_b, ts)
        if oa.rejection is not None and ob.rejection is not None and oa.rejection == ob.rejection:
            self.a.rewind(marks[0])
            self.b.rewind(marks[1])
            return None
        index = self.steps - 1
        if oa.rejection != ob.rejection and seat is not None and seat not in self.excluded \
                and seat not in self.informed:
            raise AssertionError(
                    f"step {index}: seat {seat}'s {body_a} is refused in one world only "
                    f"({oa.rejection} / {ob.rejection}), yet it was told nothing that differs")
        if public_words(oa) != public_words(ob):
            self.until = index
            return oa, ob
        for s in range(len(self.a.gs.core.players)):
            if s in self.excluded or s in self.informed:
                continue
            if told(oa, s) != told(ob, s) or own_state(self.a.gs, s) != own_state(self.b.gs, s):
                self.informed[s] = index
        return oa, ob

    def finish(self) -> None:
        """Every player skips (or walks back in from outside) until the match ends or what
        everyone hears differs."""
        for _ in range(200):
            if self.until is not None or self.a.ms.ended or self.b.ms.ended:
                return
            seat = rules.to_act(self.a.gs.core)
            assert seat is not None
            for body in _closing(self.a.gs, seat):
                if self.step(seat, body, body) is not None:
                    break
        raise AssertionError("the skips did not end the match")

    def play(self, data: st.DataObject, entries: int, dark: int | None = None) -> None:
        """Up to `entries` more accepted commands drawn from the first world's state (the
        same in both; seat `dark`'s moves mostly in the dark), until what everyone hears
        differs or the match ends."""
        for _ in range(4 * entries):
            if self.until is not None or entries <= 0 or self.a.ms.ended or self.b.ms.ended:
                return
            seat, body = next_command(data, self.a.gs, dark)
            if self.step(seat, body, body) is not None:
                entries -= 1
