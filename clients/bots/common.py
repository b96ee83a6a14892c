"""What every game's bots are, and what they read from a view before they decide anything."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol


class Bot(Protocol):
    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        """Commands to send now, given the seat's latest view (empty: nothing to do).

        Called after every update the bot has caught up with, so it must remember what it
        already sent (a round it has submitted in, an item it has used)."""
        ...

    def feedback(
        self, command: dict[str, Any], accepted: bool, warnings: Sequence[str], code: str | None
    ) -> None:
        """What became of a command from `act` (a rejection lets the bot try again)."""
        ...


BotFactory = Callable[[random.Random], Bot]


def seat_in_play(view: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
    """(our seat, the game state) while the match is on and we hold a seat; else None."""
    me = view.get("you")
    gs = view.get("game_state")
    if me is None or not isinstance(gs, dict) or not view.get("started") or view.get("ended"):
        return None
    return me, gs
