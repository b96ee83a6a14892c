"""Helpers for the Keys to Success / Gatekeeping tests: a match driven through the engine,
and the update frames a viewer receives, built exactly as the server does (server/core.py, server/streams.py)."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.engine import MatchState, Outcome
from domain.games import keys_to_success as kts
from domain.games.keys_to_success import RoundResolved, State
from projections import keys_to_success as views
from projections.common import project_events
from projections.contract import Viewer
from tests.match_driver import MatchDriver

SEED = bytes(range(32))
_encode = msgspec.json.Encoder().encode

ONE_LEVEL = "A:open B:open C:open D:open"
TWO_LEVELS = "A:open B:pass C:garnet\nD:open E:garnet"


class KtsMatch(MatchDriver):
    """A match of Keys to Success, every step proposed through the engine and logged."""

    def __init__(
        self,
        variant: str | None = None,
        names: tuple[str, ...] | None = None,
        ts: int = 1_000,
        match_id: str = "k1",
        seed: bytes = SEED,
        **options: Any,
    ) -> None:
        super().__init__(
            kts, variant=variant, names=names, ts=ts, match_id=match_id, seed=seed,
            options=options,
        )

    @property
    def gs(self) -> State:
        state: State = self.ms.game_state
        return state

    def submit(
        self, seat: int, gates: list[str] | str, cards: list[int], round: int | None = None
    ) -> Outcome:
        if isinstance(gates, str):
            gates = gates.split()
        body = {
            "type": "submit",
            "round": self.gs.round if round is None else round,
            "gates": list(gates),
            "cards": list(cards),
        }
        return self.propose("command", seat, body)

    def chat(self, seat: int, text: str) -> Outcome:
        return self.propose("command", seat, {"type": "chat", "text": text})

    def vote(self, seat: int, candidate: int) -> Outcome:
        return self.propose("command", seat, {"type": "vote", "candidate": candidate})

    def tick(self, ts: int | None = None) -> Outcome:
        due = self.gs.deadline if ts is None else ts
        assert due is not None
        return self.propose("tick", None, {"deadline": due}, ts=max(due, self.ts))

    def round_(self, moves: dict[int, tuple[str, list[int]]]) -> RoundResolved:
        """Every listed seat submits; the round's results (a tick closes it if needed)."""
        outs = []
        for seat, (gates, cards) in moves.items():
            out = self.submit(seat, gates, cards)
            assert out.rejection is None, (seat, out.rejection)
            outs.append(out)
        if not outs or not any(isinstance(e, RoundResolved) for e in outs[-1].events):
            outs.append(self.tick())
        found = [e for o in outs for e in o.events if isinstance(e, RoundResolved)]
        assert len(found) == 1, [o.events for o in outs]
        return found[0]

    def entered(self, resolved: RoundResolved) -> dict[int, str | None]:
        return {p.seat: p.entered for p in resolved.plays}

    def frames(self, viewer: Viewer) -> list[bytes]:
        """Every live update frame `viewer` receives, as the server builds and numbers it."""
        from tests.playthrough import received  # playthrough's KeysScript builds on KtsMatch

        return [f for f in received(self.entries, {"v": viewer}).live["v"] if f is not None]


def frame(ms: MatchState, outcome: Outcome, viewer: Viewer) -> list[dict[str, Any]] | None:
    """The events an entry (its outcome, the state right after it) shows `viewer`, or
    None when it shows nothing, so that no update is sent at all."""
    return project_events(views, ms, outcome, viewer) or None
