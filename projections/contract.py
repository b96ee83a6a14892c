"""What a game's projection module provides, and who is looking.

A viewer is a seat (a player), a spectator (seat None), or anyone with the full view
(`full=True`: the after-the-match view and an auditor's). Once a match has ended every
viewer gets the full view.

Projections return JSON-ready builtins (dicts, lists, scalars). Two viewers who may know
the same things must get the same values, and a value may depend only on what the viewer
may know: the property tests compare encoded bytes.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

from domain.engine import MatchState


class Viewer(msgspec.Struct, frozen=True):
    seat: int | None = None
    full: bool = False

    @property
    def role(self) -> str:
        if self.full:
            return "auditor"
        return "spectator" if self.seat is None else "player"


SPECTATOR = Viewer()
AUDITOR = Viewer(full=True)


class GameViews(Protocol):
    """A game's projection module (projections/<game>.py)."""

    def event(self, ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
        """One of the game's events as `viewer` sees it (None: not at all).

        `ms` is the match state right after the entry that produced the event."""
        ...

    def view(self, ms: MatchState, viewer: Viewer) -> dict[str, Any]:
        """The game's state as `viewer` sees it."""
        ...

    def describe(self, ms: MatchState, event: Any) -> list[str]:
        """Lines for a human reading the whole match (replay, audits): full view."""
        ...
