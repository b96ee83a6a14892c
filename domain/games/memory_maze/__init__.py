"""Memory Maze: a two-player race through a maze of invisible walls.

Each player tries sequences of moves from where it stands. A sequence that crosses no wall
moves the player; one that crosses a wall anywhere ("bonks") leaves it where it was, and
nobody is told where the wall is. The first to visit the three other corners (`minos`:
collect the three keys lying there) and come back to its start wins. See
docs/rules/memory-maze.md for the rules as implemented, edition by edition.

Variants: `black-garnet` (default; 8x8, alternate turns of 0-100 moves, corners count
when passed, five 60 s periods), `minos` (8x8, turns of 0-10 moves, keys, 60 s a move
plus a 300 s reserve) and `crazy` (10x10, no turns: 25 s / 35 s cooldowns, corners count
only when stopped on, colored walls).

The maze is drawn from the match seed (or supplied by the host as a drawing, option
`maze`) in make_setup, so it is part of the committed secret setup and revealed at the
end. The module object itself is the Game (domain.contract.Game). Everything is pure.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from domain.contract import Accepted, Decision, OptionsError, Rejection, Result, VariantInfo
from domain.games.memory_maze.maze import (
    COLOR_FORMS,
    Cell,
    Maze,
    MazeError,
    cell_name,
    colored_form,
    corners,
    generate,
    parse,
    render,
    start_of,
    trace,
)
from domain.games.memory_maze.moves import MoveError, parse_moves
from domain.kit.clocks import clock_ms
from domain.kit.options import ClockScale, Custom, Integer, OptionTable
from domain.kit.seats import replace_at, update_at
from domain.rng import Rng

# --- identity --------------------------------------------------------------------------

name: str = "memory-maze"
title: str = "Memory Maze"
rules_version: str = "mm-1"

variants: Sequence[VariantInfo] = (
    VariantInfo(
        "black-garnet",
        "The Genius: Black Garnet, Death Match 8",
        "8x8; players alternate turns of 0 to 100 moves; a corner counts when passed; "
        "five 60 s periods.",
    ),
    VariantInfo(
        "minos",
        "Minos' Labyrinth",
        "8x8; turns of 0 to 10 moves; three keys in the other corners, collected by passing "
        "or stopping; 60 s a move plus a 300 s reserve that never refills.",
    ),
    VariantInfo(
        "crazy",
        "DM-C: Crazy Memory Maze",
        "10x10; no turns: move again 25 s after a success, 35 s after a bonk; a corner counts "
        "only when stopped on; colored walls only their owner passes.",
    ),
)
default_variant: str = "black-garnet"
VARIANT_NAMES = tuple(v.name for v in variants)
TURN_VARIANTS = ("black-garnet", "minos")

SEATS = 2
SIZE: Mapping[str, int] = {"black-garnet": 8, "minos": 8, "crazy": 10}
AXIS: Mapping[str, str] = {"black-garnet": "rising", "minos": "rising", "crazy": "falling"}


class Terms(msgspec.Struct, frozen=True):
    goal: str
    goals: str
    visit: str  # the verb: "visits" / "collects the key in"


TERMS: Mapping[str, Terms] = {
    "black-garnet": Terms("corner", "corners", "visits"),
    "minos": Terms("key", "keys", "collects the key in"),
    "crazy": Terms("corner", "corners", "visits"),
}


def has_turns(variant: str) -> bool:
    return variant in TURN_VARIANTS


def counts_passing(variant: str) -> bool:
    """Whether a corner (key) counts when passed during a successful attempt, or only
    when the attempt ends on it (crazy, by its amendment)."""
    return variant != "crazy"


# --- options ---------------------------------------------------------------------------


class Options(msgspec.Struct, frozen=True, kw_only=True):
    variant: str = "black-garnet"
    clock_scale: float = 1.0
    bottom_left_seat: int = 0
    first_seat: int | None = 0
    max_moves: int = 100
    periods: int | None = None
    period_seconds: int | None = None
    move_seconds: int | None = None
    reserve_seconds: int | None = None
    cooldown_success_seconds: int | None = None
    cooldown_bonk_seconds: int | None = None
    colored_pairs: int | None = None
    colored_symmetry: str | None = None
    maze: str | None = None


def _maze(value: Any, variant: str) -> str:
    """The `maze` option: a drawing (a string, or a list of lines) that parses."""
    drawing = value
    if isinstance(drawing, list | tuple) and all(isinstance(line, str) for line in drawing):
        drawing = "\n".join(drawing)
    if not isinstance(drawing, str):
        raise OptionsError("must be a drawing: a string, or a list of lines")
    try:
        parse(drawing, SIZE[variant], AXIS[variant], colored=variant == "crazy")
    except MazeError as exc:
        raise OptionsError(str(exc)) from None
    return drawing


def _colored_symmetry(value: Any, variant: str) -> str:
    if not isinstance(value, str) or value not in COLOR_FORMS:
        raise OptionsError(f"must be one of {', '.join(map(repr, COLOR_FORMS))}")
    return str(value)


def _maze_form(variant: str, values: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """`colored_symmetry` made definite (crazy): a host's maze must be drawn in the form
    asked for; without one asked for, its form is the one it is drawn in; a generated
    maze's is 'swap' unless asked for."""
    if variant != "crazy":
        return None
    asked, drawing = values["colored_symmetry"], values["maze"]
    if drawing is None:
        return {"colored_symmetry": asked or "swap"}
    n, axis = SIZE[variant], AXIS[variant]
    try:
        maze = parse(drawing, n, axis, colored=True, colors=asked)
    except MazeError as exc:  # (it parsed in its own form: `asked` is another)
        raise OptionsError(
            f"option 'maze' is not drawn in the form option 'colored_symmetry' asks for "
            f"({asked!r}): {exc}"
        ) from None
    return {"colored_symmetry": asked or colored_form(maze)}


@functools.cache
def _example_maze(variant: str) -> str:
    """A valid drawing for the schema's examples: the maze a fixed seed draws."""
    n, axis = SIZE[variant], AXIS[variant]
    colored = 1 if variant == "crazy" else 0
    return "\n".join(render(generate(n, axis, Rng(b"example", "setup"), colored_pairs=colored)))


# Every option but the clock scale and the maze may be given as null: its variant's default.
OPTIONS: OptionTable[Options] = OptionTable(
    Options,
    VARIANT_NAMES,
    [
        ClockScale(nullable=True),
        Integer(
            "bottom_left_seat", 0, 0, SEATS - 1,
            "the seat that starts in the bottom-left corner (A); the other starts top-right (B)",
            nullable=True,
        ),
        Integer(
            "first_seat", 0, 0, SEATS - 1, "the seat that plays the first turn",
            variants=TURN_VARIANTS, defaults={"crazy": None}, nullable=True,
        ),
        Integer(
            "max_moves", 100, 1, 10_000, "the most moves one submission may hold",
            defaults={"minos": 10, "crazy": 1000}, nullable=True,
        ),
        Integer(
            "periods", None, 0, 1000,
            "periods each player has; one is spent each time a turn runs past "
            "period_seconds, and with none left the turn is a pass",
            variants=("black-garnet",), defaults={"black-garnet": 5}, nullable=True,
        ),
        Integer(
            "period_seconds", None, 1, 86_400, "seconds a turn has before a period is spent",
            variants=("black-garnet",), defaults={"black-garnet": 60}, nullable=True,
        ),
        Integer(
            "move_seconds", None, 1, 86_400, "seconds each move has before the reserve is used",
            variants=("minos",), defaults={"minos": 60}, nullable=True,
        ),
        Integer(
            "reserve_seconds", None, 0, 864_000,
            "seconds of reserve time for the whole match; never refilled; with none left "
            "the move is zero moves",
            variants=("minos",), defaults={"minos": 300}, nullable=True,
        ),
        Integer(
            "cooldown_success_seconds", None, 0, 86_400,
            "seconds a player waits after a successful submission",
            variants=("crazy",), defaults={"crazy": 25}, nullable=True,
        ),
        Integer(
            "cooldown_bonk_seconds", None, 0, 86_400,
            "seconds a player waits after a submission that bonked",
            variants=("crazy",), defaults={"crazy": 35}, nullable=True,
        ),
        Integer(
            "colored_pairs", None, 0, 40,
            "pairs of colored walls in a generated maze (one wall of each pair per player, "
            "mirror images of each other)",
            variants=("crazy",), defaults={"crazy": 3}, nullable=True,
        ),
        Custom(
            "colored_symmetry", None,
            "how the mirror maps colored walls: 'swap' (a wall of A's mirrors onto one of "
            "B's, so each player faces the mirror image of the other's maze) or 'keep' (onto "
            "one of A's own, as the historical tournament mazes do); null: 'swap' for a "
            "generated maze, the form a host's maze is drawn in for that one",
            type="string", parse=_colored_symmetry, variants=("crazy",), nullable=True,
            schema={"enum": [*COLOR_FORMS, None]},
        ),
        Custom(
            "maze", None,
            "a maze drawn as text instead of one drawn from the seed (see "
            "docs/rules/memory-maze.md); secret: it goes into the committed setup",
            type=["string", "array"], parse=_maze, nullable=True,
            schema=lambda variant: {
                "items": {"type": "string"},
                "examples": [_example_maze(variant)],
            },
        ),
    ],
    checks=[_maze_form],
)


def options_schema(variant: str) -> dict[str, Any]:
    """The options a client may set for `variant`: type, bounds, default and description."""
    return OPTIONS.schema(variant)


def configure(variant: str, options: Mapping[str, Any]) -> Options:
    """Validated options for `variant`; OptionsError names the offending option."""
    return OPTIONS.configure(variant, options)


def public_options(options: Options) -> Options:
    """The options as recorded in the log's create entry and shown to everyone: a maze a
    host supplied is secret, so it is left out (it is in the committed setup instead)."""
    return msgspec.structs.replace(options, maze=None)


def _ms(seconds: int | None, scale: float, least: int = 0) -> int:
    return clock_ms(seconds, scale, least)


def period_ms(options: Options) -> int:
    return _ms(options.period_seconds, options.clock_scale, 1)


def move_ms(options: Options) -> int:
    return _ms(options.move_seconds, options.clock_scale, 1)


def reserve_ms(options: Options) -> int:
    return _ms(options.reserve_seconds, options.clock_scale)


def cooldown_ms(options: Options, bonked: bool) -> int:
    seconds = options.cooldown_bonk_seconds if bonked else options.cooldown_success_seconds
    return _ms(seconds, options.clock_scale)


def seat_count(options: Any) -> int:
    return SEATS


def make_setup(options: Options, rng: Rng) -> Any:
    """The maze: the host's drawing if one was given, else drawn from the seed."""
    variant = options.variant
    n, axis = SIZE[variant], AXIS[variant]
    if options.maze is not None:
        maze = parse(options.maze, n, axis, colored=variant == "crazy", colors=options.colored_symmetry)
        source = "host"
    else:
        maze = generate(
            n, axis, rng, colored_pairs=options.colored_pairs or 0,
            colors=options.colored_symmetry or "swap",
        )
        source = "seed"
    return {"size": n, "symmetry": axis, "source": source, "drawing": render(maze)}


def seeded_setup(setup: Any) -> bool:
    """Whether the maze was drawn from the seed (a host's own is not): `replay --verify`
    then draws it again to check."""
    return bool(setup.get("source") == "seed")


def maze_of(setup: Any, variant: str) -> Maze:
    return parse(setup["drawing"], SIZE[variant], AXIS[variant], colored=variant == "crazy")


# --- commands --------------------------------------------------------------------------


class Move(msgspec.Struct, frozen=True, tag="move", forbid_unknown_fields=True):
    """A sequence of moves. `turn`: the turn it is for (black-garnet, minos); none in crazy."""

    moves: str
    turn: int | None = None


command_type: Any = Move


# --- events ----------------------------------------------------------------------------


class TurnStarted(msgspec.Struct, frozen=True, tag="turn_started"):
    turn: int
    seat: int
    at: int
    deadline: int


class PeriodSpent(msgspec.Struct, frozen=True, tag="period_spent"):
    """black-garnet: the turn ran past its time; a period is spent and the turn goes on."""

    seat: int
    turn: int
    periods_left: int
    deadline: int


class Moved(msgspec.Struct, frozen=True, tag="moved"):
    """One attempt: the sequence (canonical UDLR), from where, and what came of it.

    `turn` is the turn (turn editions) or the submission's number (crazy). `bonk_index`
    (which move crossed a wall) is for auditors only. `collected`: corners (keys) first
    visited by this attempt. `timed_out`: the clock submitted zero moves for the player."""

    seat: int
    turn: int
    at: int
    moves: str
    from_cell: Cell
    to_cell: Cell
    bonked: bool
    bonk_index: int | None
    collected: tuple[Cell, ...]
    timed_out: bool = False
    periods_left: int | None = None  # black-garnet
    reserve_left: int | None = None  # minos, ms
    cooldown_until: int | None = None  # crazy


class CooldownOver(msgspec.Struct, frozen=True, tag="cooldown_over"):
    """crazy: the seat may submit again."""

    seat: int
    at: int


class GameOver(msgspec.Struct, frozen=True, tag="game_over"):
    winner: int
    reason: str
    turns: int
    collected: tuple[int, ...]


Event = TurnStarted | PeriodSpent | Moved | CooldownOver | GameOver


# --- state -----------------------------------------------------------------------------


class SeatState(msgspec.Struct, frozen=True):
    letter: str  # "A" (started bottom-left) or "B" (top-right)
    start: Cell
    pos: Cell
    targets: tuple[Cell, ...]  # the three other corners
    visited: tuple[Cell, ...] = ()  # targets visited / keys collected, in targets order
    attempts: tuple[Moved, ...] = ()  # every attempt (projections decide who sees which)
    periods: int | None = None  # black-garnet
    reserve: int | None = None  # minos, ms left
    cooldown_until: int | None = None  # crazy: while cooling down
    ready: bool = True  # crazy: may submit

    @property
    def last(self) -> Moved | None:
        return self.attempts[-1] if self.attempts else None


class State(msgspec.Struct, frozen=True):
    options: Options
    maze: Maze
    seats: tuple[SeatState, ...]
    turn: int = 0  # the turn in play (turn editions) / submissions so far (crazy)
    to_move: int | None = None
    turn_started: int | None = None
    deadline: int | None = None
    finished: GameOver | None = None

    @property
    def variant(self) -> str:
        return self.options.variant


def initial_state(options: Options, setup: Any, seed: bytes) -> State:
    maze = maze_of(setup, options.variant)
    n = maze.size
    seats = []
    for s in range(SEATS):
        letter = "A" if s == options.bottom_left_seat else "B"
        start = start_of(letter, n)
        seats.append(
            SeatState(
                letter=letter,
                start=start,
                pos=start,
                targets=tuple(c for c in corners(n) if c != start),
                periods=options.periods if options.variant == "black-garnet" else None,
                reserve=reserve_ms(options) if options.variant == "minos" else None,
            )
        )
    return State(options=options, maze=maze, seats=tuple(seats))


def _turn_deadline(state: State, seat: int, at: int) -> int:
    if state.variant == "minos":
        return at + move_ms(state.options) + (state.seats[seat].reserve or 0)
    return at + period_ms(state.options)


def start(state: State, now: int) -> tuple[Event, ...]:
    if not has_turns(state.variant):
        return ()
    first = state.options.first_seat or 0
    return (TurnStarted(turn=1, seat=first, at=now, deadline=_turn_deadline(state, first, now)),)


# --- playing ---------------------------------------------------------------------------


def _attempt(state: State, seat: int, moves: str, now: int, timed_out: bool) -> list[Event]:
    """The events of one attempt by `seat` (and what follows: the next turn or the end)."""
    variant = state.variant
    me = state.seats[seat]
    tr = trace(state.maze, me.letter, me.pos, moves)
    visited = list(me.visited)
    won = False
    if not tr.bonked:
        passed = tr.cells[1:] if counts_passing(variant) else tr.cells[-1:]
        for cell in passed:
            if cell in me.targets and cell not in visited:
                visited.append(cell)
            if cell == me.start and len(visited) == len(me.targets):
                won = True
    collected = tuple(c for c in visited if c not in me.visited)
    turn = state.turn if has_turns(variant) else state.turn + 1
    periods_left: int | None = None
    reserve_left: int | None = None
    cooldown_until: int | None = None
    if variant == "black-garnet":
        periods_left = me.periods
    elif variant == "minos":
        if timed_out:
            reserve_left = 0
        else:
            started = state.turn_started if state.turn_started is not None else now
            over = max(0, now - started - move_ms(state.options))
            reserve_left = max(0, (me.reserve or 0) - over)
    else:
        cooldown_until = now + cooldown_ms(state.options, tr.bonked)
    moved = Moved(
        seat=seat,
        turn=turn,
        at=now,
        moves=moves,
        from_cell=me.pos,
        to_cell=tr.cells[-1] if not tr.bonked else me.pos,
        bonked=tr.bonked,
        bonk_index=tr.bonk_index,
        collected=collected,
        timed_out=timed_out,
        periods_left=periods_left,
        reserve_left=reserve_left,
        cooldown_until=cooldown_until,
    )
    events: list[Event] = [moved]
    after = evolve(state, moved)
    if won:
        terms = TERMS[variant]
        events.append(
            GameOver(
                winner=seat,
                reason=f"all three {terms.goals} and back to {cell_name(me.start)}",
                turns=turn,
                collected=tuple(len(s.visited) for s in after.seats),
            )
        )
    elif has_turns(variant):
        nxt = 1 - seat
        events.append(
            TurnStarted(turn=turn + 1, seat=nxt, at=now, deadline=_turn_deadline(after, nxt, now))
        )
    return events


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f}".rstrip("0").rstrip(".") + " s"


def decide(state: State, seat: int, command: Any, now: int) -> Decision:
    if not isinstance(command, Move):
        return Rejection("bad_command", "unknown command")
    variant = state.variant
    if state.finished is not None:
        return Rejection("not_in_play", "the game is over")
    if has_turns(variant):
        if state.to_move is None:
            return Rejection("not_in_play", "no turn is in play")
        if seat != state.to_move:
            return Rejection(
                "not_your_turn", f"turn {state.turn} is seat {state.to_move}'s; wait for yours"
            )
        if command.turn != state.turn:
            said = "no turn" if command.turn is None else f"turn {command.turn}"
            return Rejection(
                "wrong_turn", f"that was for {said}; turn {state.turn} is in play (send its number)"
            )
    else:
        if command.turn is not None:
            return Rejection(
                "no_turns", f"{variant} has no turns: send the moves without a turn number"
            )
        me = state.seats[seat]
        if not me.ready and me.cooldown_until is not None:
            last = me.last
            after = "a bonk" if last is not None and last.bonked else "a successful move"
            return Rejection(
                "cooldown",
                f"discarded: you are still waiting after {after} for another "
                f"{_seconds(me.cooldown_until - now)} (until {me.cooldown_until}); "
                "submit again when your wait is over",
            )
    try:
        moves = parse_moves(command.moves)
    except MoveError as exc:
        return Rejection("bad_moves", str(exc))
    if not moves and not has_turns(variant):
        return Rejection("no_moves", "a submission needs at least one move (there are no turns to pass)")
    limit = state.options.max_moves
    if len(moves) > limit:
        return Rejection(
            "too_many_moves", f"{len(moves)} moves; a submission holds at most {limit}"
        )
    return Accepted(events=tuple(_attempt(state, seat, moves, now, timed_out=False)))


# --- time ------------------------------------------------------------------------------


def deadline(state: State) -> int | None:
    if state.finished is not None:
        return None
    if has_turns(state.variant):
        return state.deadline
    waits = [s.cooldown_until for s in state.seats if not s.ready and s.cooldown_until is not None]
    return min(waits) if waits else None


def expire(state: State, at: int) -> tuple[Event, ...]:
    if not has_turns(state.variant):
        return tuple(
            CooldownOver(seat=i, at=at)
            for i, s in enumerate(state.seats)
            if not s.ready and s.cooldown_until == at
        )
    seat = state.to_move
    assert seat is not None
    me = state.seats[seat]
    if state.variant == "black-garnet" and (me.periods or 0) > 0:
        left = (me.periods or 0) - 1
        return (
            PeriodSpent(
                seat=seat, turn=state.turn, periods_left=left, deadline=at + period_ms(state.options)
            ),
        )
    return tuple(_attempt(state, seat, "", at, timed_out=True))


# --- folding ---------------------------------------------------------------------------


def evolve(state: State, event: Any) -> State:
    rep = msgspec.structs.replace
    if isinstance(event, TurnStarted):
        return rep(
            state, turn=event.turn, to_move=event.seat, turn_started=event.at, deadline=event.deadline
        )
    if isinstance(event, PeriodSpent):
        seats = update_at(state.seats, event.seat, periods=event.periods_left)
        return rep(state, seats=seats, deadline=event.deadline)
    if isinstance(event, Moved):
        old = state.seats[event.seat]
        me = rep(
            old,
            pos=event.to_cell,
            visited=tuple(c for c in old.targets if c in old.visited or c in event.collected),
            attempts=(*old.attempts, event),
            periods=event.periods_left if event.periods_left is not None else old.periods,
            reserve=event.reserve_left if event.reserve_left is not None else old.reserve,
            cooldown_until=event.cooldown_until,
            ready=event.cooldown_until is None,
        )
        return rep(
            state,
            seats=replace_at(state.seats, event.seat, me),
            turn=event.turn,
            to_move=None,
            deadline=None,
        )
    if isinstance(event, CooldownOver):
        return rep(state, seats=update_at(state.seats, event.seat, ready=True, cooldown_until=None))
    if isinstance(event, GameOver):
        return rep(state, finished=event, to_move=None, deadline=None)
    raise TypeError(f"not a {name} event: {event!r}")


def result(state: State) -> Result | None:
    over = state.finished
    if over is None:
        return None
    return Result(winner=over.winner, reason=over.reason, rounds=over.turns, scores=over.collected)


def round_of(state: State) -> int:
    if has_turns(state.variant) or state.finished is not None:
        return state.turn
    return state.turn + 1

