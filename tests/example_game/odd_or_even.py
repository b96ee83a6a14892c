"""Odd or Even, the rules (docs/adding-a-game.md, section 1).

Two players each secretly show 1 or 2 fingers a round; an even sum scores for seat 0, an
odd one for seat 1. Nine rounds, 30 s a round; a missed round shows 1 finger. The module
itself is the game (domain.contract.Game); everything here is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from domain.contract import Decision, Rejection, Result, VariantInfo
from domain.kit.clocks import clock_ms
from domain.kit.options import Boolean, ClockScale, Integer, OptionTable
from domain.kit.rounds import SimultaneousRound
from domain.kit.seats import update_at
from domain.kit.setup import all_public, always_seeded
from domain.rng import Rng

name = "odd-or-even"
title = "Odd or Even"
rules_version = "ooe-1"
variants: Sequence[VariantInfo] = (VariantInfo("classic", "Classic", "9 rounds of 1 or 2 fingers"),)
default_variant = "classic"


class Options(msgspec.Struct, frozen=True, kw_only=True):
    variant: str = "classic"
    rounds: int = 9
    round_seconds: int = 30
    clock_scale: float = 1.0
    early_close: bool = True


OPTIONS: OptionTable[Options] = OptionTable(Options, ("classic",), [
    Integer("rounds", 9, 1, 99, "rounds in the match"),
    Integer("round_seconds", 30, 1, 86_400, "seconds to choose in a round"),
    ClockScale(),
    Boolean("early_close", True, "resolve a round as soon as both have chosen"),
])


def options_schema(variant: str) -> dict[str, Any]:
    return OPTIONS.schema(variant)


def configure(variant: str, options: Mapping[str, Any]) -> Options:
    return OPTIONS.configure(variant, options)


def seat_count(options: Any) -> int:
    return 2


def make_setup(options: Any, rng: Rng) -> Any:
    return {}


public_options = all_public
seeded_setup = always_seeded


class Choose(msgspec.Struct, frozen=True, tag="choose", forbid_unknown_fields=True):
    round: int
    fingers: int


command_type: Any = Choose


class RoundStarted(msgspec.Struct, frozen=True, tag="round_started"):
    round: int
    deadline: int


class Chosen(msgspec.Struct, frozen=True, tag="chosen"):
    seat: int
    round: int
    fingers: int  # hidden from the opponent until the round resolves


class RoundResolved(msgspec.Struct, frozen=True, tag="round_resolved"):
    round: int
    fingers: tuple[int, int]
    missed: tuple[bool, bool]
    scores: tuple[int, int]


class GameOver(msgspec.Struct, frozen=True, tag="game_over"):
    winner: int | None
    scores: tuple[int, int]


class SeatState(msgspec.Struct, frozen=True):
    score: int = 0
    pending: int | None = None


class State(msgspec.Struct, frozen=True):
    options: Options
    seats: tuple[SeatState, ...] = (SeatState(), SeatState())
    round: int = 0
    deadline: int | None = None
    finished: GameOver | None = None


def round_ms(options: Options) -> int:
    return clock_ms(options.round_seconds, options.clock_scale)


def _close(state: State, at: int) -> list[Any]:
    shown = ROUND.plays(state, default=lambda s, seat: 1)  # a missed round shows 1
    fingers = (shown[0] or 1, shown[1] or 1)
    missed = (state.seats[0].pending is None, state.seats[1].pending is None)
    even = (fingers[0] + fingers[1]) % 2 == 0
    scores = (
        state.seats[0].score + (1 if even else 0),
        state.seats[1].score + (0 if even else 1),
    )
    events: list[Any] = [RoundResolved(state.round, fingers, missed, scores)]
    if state.round == state.options.rounds:
        winner = None if scores[0] == scores[1] else (0 if scores[0] > scores[1] else 1)
        events.append(GameOver(winner, scores))
    else:
        events.append(RoundStarted(state.round + 1, at + round_ms(state.options)))
    return events


ROUND: SimultaneousRound[State, int] = SimultaneousRound(
    seats=lambda state: 2,
    pending=lambda state, seat: state.seats[seat].pending,
    in_play=lambda state, seat: True,
    early_close=lambda state: state.options.early_close,
    close=lambda state, at: _close(state, at),
    evolve=lambda state, event: evolve(state, event),
)


def initial_state(options: Options, setup: Any, seed: bytes) -> State:
    return State(options=options)


def start(state: State, now: int) -> tuple[Any, ...]:
    return (RoundStarted(1, now + round_ms(state.options)),)


def decide(state: State, seat: int, command: Any, now: int) -> Decision:
    if state.finished is not None or command.round != state.round:
        return Rejection("wrong_round", f"round {state.round} is in play")
    if command.fingers not in (1, 2):
        return Rejection("bad_fingers", "show 1 or 2 fingers")
    return ROUND.accept(state, Chosen(seat, state.round, command.fingers), now)


def evolve(state: State, event: Any) -> State:
    rep = msgspec.structs.replace
    if isinstance(event, RoundStarted):
        return rep(state, round=event.round, deadline=event.deadline,
                   seats=tuple(rep(s, pending=None) for s in state.seats))
    if isinstance(event, Chosen):
        return rep(state, seats=update_at(state.seats, event.seat, pending=event.fingers))
    if isinstance(event, RoundResolved):
        return rep(state, deadline=None, seats=tuple(SeatState(score=s) for s in event.scores))
    if isinstance(event, GameOver):
        return rep(state, finished=event, deadline=None)
    raise TypeError(f"not an {name} event: {event!r}")


def deadline(state: State) -> int | None:
    return None if state.finished is not None else state.deadline


def expire(state: State, at: int) -> tuple[Any, ...]:
    return tuple(_close(state, at))


def result(state: State) -> Result | None:
    over = state.finished
    return None if over is None else Result(over.winner, "more points", state.round, over.scores)


def round_of(state: State) -> int:
    return state.round
