"""Each game's text front-end for `daedalus play` (and `daedalus replay --as`).

A registered game's terminal lives in `clients/terminal/<game>.py` (the game's name with
'-' as '_') as `TERMINAL`, an object that satisfies `Terminal`; `TERMINALS` finds it for
every game in `projections.registry.GAMES`. A game without one is shown as JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from clients.per_game import ByGame


class Terminal(Protocol):
    """A game's text front-end for `daedalus play`."""

    help: str

    def render(self, view: dict[str, Any], seconds_left: float | None) -> str:
        """The view as a person reads it."""
        ...

    def render_events(self, view: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
        """The game's events of one update as lines (the engine's are shown by the caller)."""
        ...

    def parse(self, line: str, view: dict[str, Any] | None) -> dict[str, Any]:
        """A typed line as a game command (ValueError with a helpful message if not)."""
        ...

    def awaiting(self, view: dict[str, Any]) -> str | None:
        """What the clock is waiting for from the viewer, for the reminder before a
        deadline ("you have not voted"), or None if nothing."""
        ...

    def recall(self, view: dict[str, Any]) -> list[str] | None:
        """What the `history` command shows: None for every line printed so far, or,
        where the rules take things back (Memory Maze deletes earlier sequences), only
        what the view still holds, so the client keeps nothing the rules delete."""
        ...


TERMINALS: Mapping[str, Terminal] = ByGame("clients.terminal", "TERMINAL")

__all__ = ["TERMINALS", "Terminal"]
