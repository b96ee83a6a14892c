"""Odd or Even's bots (docs/adding-a-game.md, section 4): `BOTS` and the `LINEUP`."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any


class RandomBot:
    """Shows 1 or 2 at random, once a round."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.sent: int | None = None

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        gs, me = view["game_state"], view["you"]
        if view["ended"] or not view["started"] or me is None or gs["round"] == self.sent:
            return []
        self.sent = gs["round"]
        return [{"type": "choose", "round": gs["round"], "fingers": self.rng.choice((1, 2))}]

    def feedback(
        self, command: dict[str, Any], accepted: bool, warnings: Sequence[str], code: str | None
    ) -> None:
        if not accepted:
            self.sent = None


BOTS = {"random": RandomBot}
LINEUP = ("random",)
