"""Escalator states built and played through the pure rules (no engine, no clock)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from domain.contract import Accepted, Rejection
from domain.games import escalator as esc
from domain.games.escalator import Given, PlayerState, State, StepResolved


def started(seats: int = 6, **options: Any) -> State:
    """A match of `seats` players right after its start (step 1, round 1 in Fetch)."""
    opts = esc.configure("escalator", {"seats": seats, **options})
    state = esc.initial_state(opts, {}, bytes(32))
    for event in esc.start(state, 0):
        state = esc.evolve(state, event)
    return state


def with_players(state: State, **by_seat: Mapping[str, Any]) -> State:
    """`state` with some players changed: with_players(s, p3={"level": 0, "fell": 1})."""
    players = list(state.players)
    for key, changes in by_seat.items():
        seat = int(key[1:])
        players[seat] = msgspec.structs.replace(players[seat], **changes)
    return msgspec.structs.replace(state, players=tuple(players))


def apply(state: State, events: tuple[Any, ...] | list[Any]) -> State:
    for event in events:
        state = esc.evolve(state, event)
    return state


def command(state: State, seat: int, body: Any) -> tuple[State, tuple[Any, ...]]:
    """Decide `body` for `seat`; the state after and the events (AssertionError if refused)."""
    decision = esc.decide(state, seat, body, 1)
    assert isinstance(decision, Accepted), decision
    return apply(state, decision.events), decision.events


def refused(state: State, seat: int, body: Any) -> Rejection:
    decision = esc.decide(state, seat, body, 1)
    assert isinstance(decision, Rejection), decision
    return decision


def fetch(state: State, seat: int, name: str, target: int) -> esc.Fetch:
    return esc.Fetch(round=state.fetch_round or 0, command=name, target=target)


def decode(state: State, name: str) -> esc.Decode:
    return esc.Decode(round=state.decode_round or 0, command=name)


def step(
    state: State,
    fetches: Mapping[int, tuple[str, int]] | None = None,
    decodes: Mapping[int, str] | None = None,
) -> tuple[State, StepResolved, list[Any]]:
    """One step: the Fetches and Decode choices given, then the deadline closes it (if
    it did not close early). The state after, the step's StepResolved and every event."""
    events: list[Any] = []
    for seat, name in (decodes or {}).items():
        state, evs = command(state, seat, decode(state, name))
        events.extend(evs)
    for seat, (name, target) in (fetches or {}).items():
        state, evs = command(state, seat, fetch(state, seat, name, target))
        events.extend(evs)
    if not any(isinstance(e, StepResolved) for e in events):
        assert state.deadline is not None
        evs2 = esc.expire(state, state.deadline)
        state = apply(state, evs2)
        events.extend(evs2)
    resolved = [e for e in events if isinstance(e, StepResolved)]
    return state, resolved[0], events


def given(command: str, user: int, target: int) -> Given:
    return Given(command=command, user=user, target=target)


def levels(state: State) -> list[int]:
    return [p.level for p in state.players]


__all__ = [
    "PlayerState", "apply", "command", "decode", "fetch", "given", "levels", "refused",
    "started", "step", "with_players",
]
