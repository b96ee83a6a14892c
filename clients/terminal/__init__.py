"""Each game's text front-end for `daedalus play` (and `daedalus replay --as`).

A registered game's terminal lives in `clients/terminal/<game>.py` (the game's name with
'-' as '_') as `TERMINAL`, an object that satisfies `Terminal`; `TERMINALS` finds it for
every game in `projections.registry.GAMES`. A game without one is shown as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

from clients.per_game import ByGame
from projections.common import ENGINE_EVENT_NAMES


class Terminal(Protocol):
    """A game's text front-end for `daedalus play`."""

    def help(self, view: dict[str, Any] | None) -> str:
        """What a player may type, for the match's variant as `view` shows it (every
        variant's commands while there is no view yet)."""
        ...

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

SPECTATOR_HELP = """\
you are watching (spectators cannot send commands):
  view | (empty line)     show the match again, with the time left
  history                 every event so far
  help | quit"""


def event_lines(terminal: Terminal | None, view: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
    """An update's events as lines: the engine's here, the game's by its terminal."""
    lines: list[str] = []
    for event in events:
        if event.get("type") in ENGINE_EVENT_NAMES:
            lines.append(engine_line(event))
        elif terminal is not None:
            lines.extend(terminal.render_events(view, [event]))
        else:
            lines.append(json.dumps(event, sort_keys=True))
    return lines


REVEALED_INLINE = 200
"""The longest revealed setup printed whole on its line."""


def engine_line(event: dict[str, Any]) -> str:
    """An engine event (projections.common.engine_event) in words."""
    kind = event["type"]
    if kind == "seat_taken":
        return f"{event['name']} takes seat {event['seat']}"
    if kind == "match_started":
        return "the match starts"
    if kind == "match_ended":
        winner = "a draw" if event.get("winner") is None else f"seat {event['winner']} wins"
        scores = list(event.get("scores") or ())
        return f"the match ends: {winner} ({event.get('reason')})" + (f", scores {scores}" if scores else "")
    if kind == "revealed":
        setup = json.dumps(event["setup"], sort_keys=True)
        if len(setup) > REVEALED_INLINE:  # a plan or a maze: the full view shows it drawn
            setup = f"({len(setup):,} characters of JSON: the log and the full view have it)"
        return f"revealed seed {event['seed']} and setup {setup}"
    return json.dumps(event, sort_keys=True)


__all__ = ["SPECTATOR_HELP", "TERMINALS", "Terminal", "engine_line", "event_lines"]
