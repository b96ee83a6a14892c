"""What every game's terminal front-end reads from a view the same way."""

from __future__ import annotations

from typing import Any


def seat_names(view: dict[str, Any]) -> dict[int, str]:
    """Each seat's player name (`seat N` for a seat nobody has taken)."""
    return {s["seat"]: s.get("name") or f"seat {s['seat']}" for s in view.get("seats", [])}


def game_state_to_play(view: dict[str, Any] | None) -> dict[str, Any]:
    """The game state a typed command is read against (ValueError while the match has
    not started, or once it is over)."""
    if view is None or not view.get("started"):
        raise ValueError("the match has not started yet (it starts when every seat is taken)")
    if view.get("ended"):
        raise ValueError("the match is over")
    gs: dict[str, Any] = view["game_state"]
    return gs


def waiting_for_seats(view: dict[str, Any], head: str) -> str | None:
    """`head` and the seats still free, before the match starts; None once it has."""
    if view.get("started"):
        return None
    free = [s["seat"] for s in view.get("seats", []) if s.get("name") is None]
    return f"{head} · waiting for seat(s) {', '.join(map(str, free))} to be taken"
