"""Helpers for the Five-Card Trick tests: a match driven through the engine."""

from __future__ import annotations

from typing import Any

import msgspec

from domain.engine import Outcome
from domain.games import five_card_trick as fct
from domain.games.five_card_trick import RoundResolved, State
from tests.match_driver import MatchDriver

SEED = bytes(range(32))


class FctMatch(MatchDriver):
    """A match of Five-Card Trick, every step proposed through the engine and logged."""

    def __init__(
        self,
        variant: str | None = None,
        names: tuple[str, str] = ("Black", "White"),
        ts: int = 1_000,
        match_id: str = "m1",
        **options: Any,
    ) -> None:
        super().__init__(
            fct, variant=variant, names=names, ts=ts, match_id=match_id, seed=SEED,
            options=options,
        )

    @property
    def gs(self) -> State:
        state: State = self.ms.game_state
        return state

    def submit(
        self,
        seat: int,
        actions: list[str] | tuple[str, ...],
        block: str | None = None,
        items: list[str] | tuple[str, ...] = (),
        round: int | None = None,
        ts: int | None = None,
    ) -> Outcome:
        body = {
            "type": "submit",
            "round": self.gs.round if round is None else round,
            "actions": list(actions),
            "block": block,
            "items": list(items),
        }
        return self.propose("command", seat, body, ts)

    def use_item(
        self, seat: int, item: str, round: int | None = None, ts: int | None = None
    ) -> Outcome:
        body = {"type": "use_item", "item": item, "round": self.gs.round if round is None else round}
        return self.propose("command", seat, body, ts)

    def tick(self, ts: int) -> Outcome:
        return self.propose("tick", None, None, ts)

    def play(
        self,
        a0: list[str] | tuple[str, ...],
        a1: list[str] | tuple[str, ...],
        block0: str | None = None,
        block1: str | None = None,
        items0: list[str] | tuple[str, ...] = (),
        items1: list[str] | tuple[str, ...] = (),
    ) -> RoundResolved:
        """Both seats submit; the round's results."""
        first = self.submit(0, a0, block0, items0)
        assert first.rejection is None, first.rejection
        out = self.submit(1, a1, block1, items1)
        assert out.rejection is None, out.rejection
        resolved = [e for e in out.events if isinstance(e, RoundResolved)]
        assert len(resolved) == 1, out.events
        return resolved[0]

    def chips(self) -> tuple[int, int]:
        return (self.gs.seats[0].chips, self.gs.seats[1].chips)

    def lights(self, seat: int) -> tuple[str, ...]:
        return self.gs.seats[seat].lights


def statuses(resolved: RoundResolved, seat: int) -> dict[str, str]:
    """{action: status} for one seat, with the reason appended where there is one."""
    out = {}
    for play in resolved.seats[seat].plays:
        out[play.action] = play.status + (f":{play.reason}" if play.reason else "")
    return out


def encoded(value: Any) -> bytes:
    return msgspec.json.encode(value)
