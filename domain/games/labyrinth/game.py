"""Labyrinth hosted: the game master of rules.py as a game of the engine (domain.contract.Game).

The module object is the Game. What it adds to rules.py is the match around the rules:

- **Options**: rules.OPTIONS (the match's, the plan's limits of 7.1, the game's of section
  7), with the checks across them: a host's plan (option `plan`) is validated against
  section 8 and the match's limits, and refused with the rule and the cell named; a plan
  to be drawn must be drawable from the options.
- **The setup**: the plan, drawn from the match's seed (generate.py) or the host's, as
  its text (so it is committed at the start and revealed at the end).
- **Commands**: `move` (a move, skip, status or recall, as text or as the structured JSON
  of moves.py: both parse to one moves.Command), `start` (the secret start choice, 6.1),
  `order` (a wounded player's new cell, 5.5, or a handicap's, 7.2), `ask` (a handicap's
  question, 7.2), `break` and `vote` (section 9).
- **One event a command**, `Resolved`: who did what (`act`, `body`), when (`at`), and
  everything the game master said about it (`said`: rules.Event, each with its audience).
  Folding it runs the same rule again on the state before: the rules are deterministic,
  so the state after is the one the decision saw. The projections filter `said` by
  audience (projections/labyrinth.py).
- **The clocks** (section 9): the seat the game waits for has `move_seconds` to act; a
  missed move loses (or is a skip under `missed_move`: rules.miss_move); a missed start
  choice is drawn by the game master from the seed among the cells the match's rules
  accept, and said. A break gives the player `break_seconds` more before its move, and
  a break agreed by vote gives them to the player to move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

import msgspec

from domain.contract import Accepted, Decision, OptionsError, Rejection, Result, VariantInfo
from domain.games.labyrinth import rules
from domain.games.labyrinth.generate import GenerateOptions, GenerationError, generate
from domain.games.labyrinth.moves import (
    MoveError,
    command_from_builtins,
    command_to_builtins,
    parse_any,
)
from domain.games.labyrinth.plan import Cell, Plan, cell_name
from domain.games.labyrinth.plan_text import parse_plan, render_plan
from domain.games.labyrinth.rules import Event, Options, RuleError
from domain.games.labyrinth.validate import PLAN_OPTIONS, PlanOptions, check_text, validate
from domain.kit.clocks import clock_ms
from domain.kit.options import OptionTable
from domain.rng import Rng

# --- identity --------------------------------------------------------------------------------

name: str = "labyrinth"
title: str = "Labyrinth"
rules_version: str = "lab-1"
variants: Sequence[VariantInfo] = (
    VariantInfo(
        "labyrinth", "Labyrinth",
        "2 to 5 players explore a secret plan with the computer as game master: find the "
        "true treasure and carry it out, or be the last one alive.",
    ),
)
default_variant: str = "labyrinth"

GENERATION_DRAWS = 20
"""Plans drawn from the setup's stream before a match gives up (each draw is itself many
attempts, generate.ATTEMPTS): options that `configure` accepted draw a plan in one."""


# --- options ---------------------------------------------------------------------------------


def _generate_options(options: Options) -> GenerateOptions:
    return GenerateOptions(rows=options.rows, columns=options.columns, players=options.players,
                           limits=options, common_start=options.common_start)


def _check(variant: str, values: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The checks across options: handicaps name players of the match; a host's plan is
    valid (section 8) under the match's limits; a plan to draw can be drawn."""
    players = values["players"]
    for handicap in values["handicaps"]:
        if handicap.player > players:
            raise OptionsError(f"option 'handicaps' names player {handicap.player}, and option "
                               f"'players' is {players}")
    options = rules.OPTIONS.struct(**{"variant": variant, **values})
    if values["plan"] is not None:
        plan, report = check_text(values["plan"], options, players)
        if plan is None:
            raise OptionsError(f"option 'plan' cannot be read: {report.errors[0].message}")
        if report.errors:
            problem = report.errors[0]
            where = f" at cell {cell_name(problem.cell)}" if problem.cell is not None else ""
            limits = ""
            if problem.rule == "7.1":
                named = [f"'{name}'" for name in _limits_broken(plan, values, players)]
                limits = f" (the match's limits: option{'s' if len(named) > 1 else ''} {', '.join(named)})"
            raise OptionsError(f"option 'plan' breaks rule {problem.rule}{where}: {problem.message}"
                               + limits + _more(len(report.errors)))
        if values["common_start"] and plan.start is None:
            raise OptionsError("option 'common_start' needs a start cell, and option 'plan' names "
                               "none (a line `start ROW,COLUMN`)")
        return None
    why = _undrawable(options)
    if why is not None:
        raise OptionsError(f"options 'rows', 'columns' and 'players' with these limits: {why}")
    return None


@lru_cache(maxsize=256)
def _undrawable(options: Options) -> str | None:
    """Why no plan can be drawn under `options` (one trial draw), or None."""
    try:
        generate(_generate_options(options), Rng(b"labyrinth options check"))
    except GenerationError as exc:
        return str(exc)
    return None


def _limits_broken(plan: Plan, values: Mapping[str, Any], players: int) -> list[str]:
    """The plan limits (7.1) the plan breaks, each checked alone."""
    found = []
    for option in PLAN_OPTIONS:
        if values[option.name] != option.default:
            alone = PlanOptions(**{option.name: values[option.name]})
            if any(p.rule == "7.1" for p in validate(plan, alone, players).errors):
                found.append(option.name)
    return found


def _more(errors: int) -> str:
    return "" if errors == 1 else f" (and {errors - 1} more; `daedalus plan check FILE` lists them all)"


OPTIONS: OptionTable[Options] = OptionTable(Options, ("labyrinth",), rules.OPTIONS.options, checks=(_check,))


def options_schema(variant: str) -> dict[str, Any]:
    return OPTIONS.schema(variant)


def configure(variant: str, options: Mapping[str, Any]) -> Options:
    return OPTIONS.configure(variant, options)


def public_options(options: Options) -> Options:
    """A host's plan is secret: it is in the committed setup, not in the recorded options."""
    return msgspec.structs.replace(options, plan=None)


def seat_count(options: Any) -> int:
    return int(options.players)


def make_setup(options: Options, rng: Rng) -> Any:
    """The plan as text: the host's, or drawn from `rng` under the options."""
    if options.plan is not None:
        return {"source": "host", "plan": render_plan(parse_plan(options.plan))}
    last: GenerationError | None = None
    for _ in range(GENERATION_DRAWS):
        try:
            plan = generate(_generate_options(options), rng)
        except GenerationError as exc:
            last = exc
            continue
        return {"source": "seed", "plan": render_plan(plan)}
    raise OptionsError(f"no plan could be drawn: {last}")


def seeded_setup(setup: Any) -> bool:
    return bool(setup.get("source") == "seed")


def plan_of(setup: Any) -> Plan:
    return parse_plan(str(setup["plan"]))


def move_ms(options: Options) -> int:
    return clock_ms(options.move_seconds, options.clock_scale)


def break_ms(options: Options) -> int:
    return clock_ms(options.break_seconds, options.clock_scale)


# --- commands --------------------------------------------------------------------------------


class Move(msgspec.Struct, frozen=True, tag="move", forbid_unknown_fields=True):
    """A turn's command: a move, `skip`, `status` or `recall N`, as text ("go left, shoot
    up") or as the structured form (docs/rules/labyrinth.md, "Moves")."""

    move: str | dict[str, Any]


class Start(msgspec.Struct, frozen=True, tag="start", forbid_unknown_fields=True):
    """The secret choice of a start cell (6.1): [row, column]."""

    cell: tuple[int, int]


class Order(msgspec.Struct, frozen=True, tag="order", forbid_unknown_fields=True):
    """A new cell ordered on the turn after a wound (5.5) or with a handicap (7.2); null
    declines the order."""

    cell: tuple[int, int] | None = None


class Ask(msgspec.Struct, frozen=True, tag="ask", forbid_unknown_fields=True):
    """A handicap's question before the start (7.2): the type of a cell."""

    cell: tuple[int, int]


class Break(msgspec.Struct, frozen=True, tag="break", forbid_unknown_fields=True):
    """A break before the player's own move (section 9)."""


class Vote(msgspec.Struct, frozen=True, tag="vote", forbid_unknown_fields=True):
    """A vote on a break (section 9): yes opens a vote when none is open."""

    yes: bool


Command = Move | Start | Order | Ask | Break | Vote
command_type: Any = Command

Act = Literal["open", "move", "start", "drawn", "order", "ask", "break", "vote", "missed"]


# --- events and state ------------------------------------------------------------------------


class Resolved(msgspec.Struct, frozen=True, tag="resolved"):
    """One command (or the opening, or a missed deadline) as the game master resolved it.

    `body`: the command as the rules read it (a move as moves.command_to_builtins, a cell
    as [row, column], a vote as true or false; None for the opening and a missed move).
    `said`: what the game master said, each with its audience."""

    seat: int | None
    act: Act
    body: Any
    at: int
    said: tuple[Event, ...]


Standing = Literal["playing", "dead", "lost", "won"]


class State(msgspec.Struct, frozen=True):
    options: Options
    core: rules.State
    seed: bytes
    opening: tuple[Event, ...]
    started: bool = False
    deadline: int | None = None
    standings: tuple[Standing, ...] = ()
    """What everyone has been told of each player: still playing, dead, lost, won."""
    started_on: tuple[str | None, ...] = ()
    """The type of each player's start cell, as everyone was told it (6.2)."""
    moves: tuple[int, ...] = ()
    """The moves each player has made (skips and missed moves counted): with the last
    move everyone heard (rules.State.last), what lets a client see a new one."""
    told: tuple[tuple[Event, ...], ...] = ()
    """What the game master said to each player alone (6.1, 5.5, 7.2, 6.7, 6.8), in order."""


def initial_state(options: Options, setup: Any, seed: bytes) -> State:
    core, opening = rules.start_game(plan_of(setup), options.players, options, Rng(seed, "order"))
    n = options.players
    return State(options=options, core=core, seed=seed, opening=opening,
                 standings=tuple("playing" for _ in range(n)), started_on=(None,) * n,
                 moves=(0,) * n, told=((),) * n)


def start(state: State, now: int) -> tuple[Any, ...]:
    return (Resolved(None, "open", None, now, state.opening),)


def _cell(value: Sequence[int]) -> Cell:
    return (int(value[0]), int(value[1]))


def _run(core: rules.State, seat: int | None, act: Act, body: Any) -> tuple[rules.State, tuple[Event, ...]]:
    """The rule behind `act`, on `core`: what decide does and evolve does again."""
    if act == "open":
        return core, ()
    assert seat is not None
    if act == "move":
        return rules.play(core, seat, command_from_builtins(body))
    if act in ("start", "drawn"):
        return rules.choose_start(core, seat, _cell(body))
    if act == "order":
        return rules.order_cell(core, seat, None if body is None else _cell(body))
    if act == "ask":
        return rules.ask_cell(core, seat, _cell(body))
    if act == "break":
        return rules.take_break(core, seat)
    if act == "vote":
        return rules.vote_break(core, seat, bool(body))
    if act == "missed":
        return rules.miss_move(core, seat)
    raise TypeError(f"not a Labyrinth act: {act!r}")


def decide(state: State, seat: int, command: Any, now: int) -> Decision:
    act: Act
    body: Any
    if isinstance(command, Move):
        try:
            parsed = parse_any(command.move)
        except MoveError as exc:
            return Rejection("bad_move", str(exc))
        act, body = "move", command_to_builtins(parsed)
    elif isinstance(command, Start):
        act, body = "start", list(command.cell)
    elif isinstance(command, Order):
        act, body = "order", None if command.cell is None else list(command.cell)
    elif isinstance(command, Ask):
        act, body = "ask", list(command.cell)
    elif isinstance(command, Break):
        act, body = "break", None
    elif isinstance(command, Vote):
        act, body = "vote", command.yes
    else:
        return Rejection("bad_command", f"not a Labyrinth command: {command!r}")
    try:
        _, said = _run(state.core, seat, act, body)
    except RuleError as exc:
        return Rejection(exc.code, exc.reason)
    return Accepted(events=(Resolved(seat, act, body, now, said),))


TURNS: frozenset[str] = frozenset({"open", "start", "drawn", "missed"})
"""Acts after which the clock restarts for whoever the game waits for (a move too,
unless it was a status question or a recall, which cost nothing)."""


def evolve(state: State, event: Any) -> State:
    if not isinstance(event, Resolved):
        raise TypeError(f"not a Labyrinth event: {event!r}")
    core, _ = _run(state.core, event.seat, event.act, event.body)
    options = state.options
    deadline = state.deadline
    restart = event.act in TURNS or (event.act == "move" and event.body.get("kind") in (None, "move", "skip"))
    if restart or rules.to_act(core) != rules.to_act(state.core):
        deadline = event.at + move_ms(options)
    if event.act == "break":
        deadline = event.at + break_ms(options) + move_ms(options)
    if any(e.key == "break_agreed" for e in event.said) and deadline is not None:
        deadline += break_ms(options)
    if core.phase == "over":
        deadline = None
    moves = state.moves
    if event.seat is not None and (event.act == "missed" or (
            event.act == "move" and event.body.get("kind") in (None, "move", "skip"))):
        moves = tuple(m + 1 if s == event.seat else m for s, m in enumerate(moves))
    return msgspec.structs.replace(
        state, core=core, started=True, deadline=deadline, moves=moves,
        standings=_standings(state.standings, event.said, core),
        started_on=tuple(_started_on(state.started_on, event.said)),
        told=tuple(told + tuple(e for e in event.said if e.to is not None and seat in e.to)
                   for seat, told in enumerate(state.told)))


def _started_on(types: tuple[str | None, ...], said: Sequence[Event]) -> list[str | None]:
    found = list(types)
    for event in said:
        if event.key == "start_on" and event.seat is not None:
            found[event.seat] = str(event.args["where"])
    return found


TOLD: Mapping[str, Standing] = {
    "dead": "dead", "died_of_infection": "dead", "timed_out": "dead",
    "lost_outside": "lost", "won_treasure": "won", "won_kill": "won",
}


def _standings(standings: tuple[Standing, ...], said: Sequence[Event], core: rules.State) -> tuple[Standing, ...]:
    found = list(standings)
    for event in said:
        if event.to is None and event.key in TOLD and event.seat is not None:
            told = TOLD[event.key]
            if event.key == "timed_out" and core.players[event.seat].alive:
                told = "lost"  # it was outside the labyrinth: lost, not killed (section 9, 3.4)
            found[event.seat] = told
    return tuple(found)


def deadline(state: State) -> int | None:
    return state.deadline if state.started and state.core.phase != "over" else None


def expire(state: State, at: int) -> tuple[Any, ...]:
    core = state.core
    seat = rules.to_act(core)
    assert seat is not None
    if core.phase == "start":
        cells = rules.start_candidates(core, seat)
        draws = sum(len(r) for _, r in core.refused) + len(core.choices)
        cell = Rng(state.seed, f"drawn start {core.round} {draws}").choice(cells)
        _, said = rules.choose_start(core, seat, cell)
        return (Resolved(seat, "drawn", list(cell), at, (Event("start_drawn", seat), *said)),)
    _, said = rules.miss_move(core, seat)
    return (Resolved(seat, "missed", None, at, said),)


REASONS: Mapping[str, str] = {
    "treasure": "carried the true treasure out of the labyrinth (3.2)",
    "kill": "the last one alive (3.5)",
    "nstop": "rounds without a change: a draw (3.6)",
    "skips": "every player skipped: a draw (6.6)",
    "treasure_lost": "the true treasure is lost: a draw (5.2)",
    "no_survivor": "nobody is left alive: a draw",
    "survivor_failed": "the last one alive did not carry the true treasure out in time: a draw (7.9)",
}


def result(state: State) -> Result | None:
    outcome = state.core.outcome
    if outcome is None:
        return None
    return Result(winner=outcome.winner, reason=REASONS[outcome.reason], rounds=state.core.round)


def round_of(state: State) -> int:
    return state.core.round

