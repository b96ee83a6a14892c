"""What every game's bots read from a view before they decide anything."""

from __future__ import annotations

from typing import Any


def seat_in_play(view: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
    """(our seat, the game state) while the match is on and we hold a seat; else None."""
    me = view.get("you")
    gs = view.get("game_state")
    if me is None or not isinstance(gs, dict) or not view.get("started") or view.get("ended"):
        return None
    return me, gs
