"""A tiny game for testing the engine, store and server apart from any real game.

Two seats take turns adding 1 to 3 to their own total; the first whose total reaches the
secret target (drawn from the seed, revealed at the end) wins. A turn not played by its
deadline passes to the other seat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from domain.contract import Accepted, Decision, OptionsError, Rejection, Result, VariantInfo
from domain.engine import MatchState
from domain.kit.setup import all_public, always_seeded
from domain.rng import Rng
from projections.contract import NOTHING_SEALED, Viewer

name = "toy"
title = "Toy race"
rules_version = "toy-1"
variants: Sequence[VariantInfo] = (VariantInfo("plain", "Plain", "first to the secret target"),)
default_variant = "plain"


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    turn_ms: int = 1000


class Add(msgspec.Struct, frozen=True, tag="add"):
    n: int


command_type = Add


class State(msgspec.Struct, frozen=True):
    target: int
    turn_ms: int
    totals: tuple[int, int] = (0, 0)
    turn: int = 0
    round: int = 0
    deadline: int | None = None


class Added(msgspec.Struct, frozen=True, tag="added"):
    seat: int
    n: int
    deadline: int


class Passed(msgspec.Struct, frozen=True, tag="passed"):
    seat: int
    deadline: int


class Began(msgspec.Struct, frozen=True, tag="began"):
    deadline: int


def configure(variant: str, options: Mapping[str, Any]) -> Options:
    try:
        opts = msgspec.convert(dict(options), Options)
    except msgspec.ValidationError as exc:
        raise OptionsError(str(exc)) from None
    if opts.turn_ms < 1:
        raise OptionsError("turn_ms must be positive")
    return opts


def options_schema(variant: str) -> dict[str, Any]:
    return {"turn_ms": 1000}


def seat_count(options: Options) -> int:
    return 2


def make_setup(options: Options, rng: Rng) -> dict[str, Any]:
    return {"target": 5 + rng.below(10)}


public_options = all_public
seeded_setup = always_seeded


def initial_state(options: Options, setup: Any, seed: bytes) -> State:
    return State(target=setup["target"], turn_ms=options.turn_ms)


def start(state: State, now: int) -> tuple[Any, ...]:
    return (Began(deadline=now + state.turn_ms),)


def decide(state: State, seat: int, command: Add, now: int) -> Decision:
    if seat != state.turn:
        return Rejection("not_your_turn", f"it is seat {state.turn}'s turn")
    if not 1 <= command.n <= 3:
        return Rejection("bad_n", "add 1, 2 or 3")
    warnings = ("that was a small step",) if command.n == 1 else ()
    return Accepted((Added(seat, command.n, now + state.turn_ms),), warnings)


def evolve(state: State, event: Any) -> State:
    if isinstance(event, Began):
        return msgspec.structs.replace(state, deadline=event.deadline, round=1)
    if isinstance(event, Added):
        totals = list(state.totals)
        totals[event.seat] += event.n
        return msgspec.structs.replace(
            state, totals=(totals[0], totals[1]), turn=1 - event.seat,
            round=state.round + 1, deadline=event.deadline,
        )
    if isinstance(event, Passed):
        return msgspec.structs.replace(
            state, turn=1 - event.seat, round=state.round + 1, deadline=event.deadline
        )
    raise TypeError(event)


def deadline(state: State) -> int | None:
    return state.deadline


def expire(state: State, at: int) -> tuple[Any, ...]:
    return (Passed(state.turn, at + state.turn_ms),)


def result(state: State) -> Result | None:
    for seat in (0, 1):
        if state.totals[seat] >= state.target:
            return Result(winner=seat, reason="target", rounds=state.round, scores=state.totals)
    return None


def round_of(state: State) -> int:
    return state.round


# --- views -------------------------------------------------------------------------------


class Views:
    sealed = NOTHING_SEALED  # the target is revealed at the end

    @staticmethod
    def event(ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
        return msgspec.to_builtins(event)  # type: ignore[no-any-return]

    @staticmethod
    def view(ms: MatchState, viewer: Viewer) -> dict[str, Any]:
        gs: State = ms.game_state
        out: dict[str, Any] = {"totals": list(gs.totals), "turn": gs.turn, "round": gs.round}
        if viewer.full:
            out["target"] = gs.target
        return out

    @staticmethod
    def describe(ms: MatchState, event: Any) -> list[str]:
        return [repr(event)]


def install() -> None:
    """Register the toy game (tests only)."""
    import sys

    from projections.registry import GAMES, Hosted

    GAMES[name] = Hosted(rules=sys.modules[__name__], views=Views)  # type: ignore[arg-type]
