"""The projection of what every match has: seats, start, end, the reveal.

`updates` turns one folded log entry into what a viewer receives for it; `match_view`
is the viewer's whole picture of the match. The game's own projection module fills in
the game's part.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

from domain.canonical import to_builtins
from domain.engine import (
    ENGINE_EVENTS,
    MatchEnded,
    MatchStarted,
    MatchState,
    Outcome,
    Revealed,
    SeatTaken,
)
from projections.contract import NOTHING_SEALED, GameViews, Seals, Viewer


def who(ms: MatchState, seat: int) -> str:
    """A seat as the replay and audit lines name it: `seat 1 (Bob)`, or `seat 1` before
    anyone has taken it."""
    name = ms.names[seat] if seat < len(ms.names) else None
    return f"seat {seat} ({name})" if name else f"seat {seat}"


def seals(views: GameViews, ms: MatchState) -> bool:
    """Whether the match keeps secrets after its end: the game declares some (its
    `sealed`) and the match's log can keep them (version 3 or 4, domain/seal.py)."""
    return ms.log_version >= 3 and bool(sealed_of(views).fields)


def sealed_of(views: GameViews) -> Seals:
    """The game's declaration of what stays sealed (`GameViews.sealed`); a game's views
    that declare none seal nothing (the contract asks every registered game for one, and
    mypy checks the registry; views written before it, test doubles among them, go on
    revealing everything)."""
    declared: Seals = getattr(views, "sealed", NOTHING_SEALED)
    return declared


def effective(views: GameViews, ms: MatchState, viewer: Viewer) -> Viewer:
    """Once the match is over, every viewer sees everything, except in a match that
    seals: there a viewer stays what it is, and the game's projection shows it, once the
    match is over, everything but what stays sealed (its own secrets included)."""
    if ms.ended and not viewer.full and not seals(views, ms):
        return Viewer(seat=viewer.seat, full=True)
    return viewer


def engine_event(event: Any) -> dict[str, Any] | None:
    if isinstance(event, SeatTaken):
        return {"type": "seat_taken", "seat": event.seat, "name": event.name}
    if isinstance(event, MatchStarted):
        return {"type": "match_started", "at": event.at}
    if isinstance(event, MatchEnded):
        return {"type": "match_ended", **to_builtins(event.result)}
    if isinstance(event, Revealed):
        return {
            "type": "revealed",
            "seed": event.seed,
            "setup": event.setup,
            "commitment": event.commitment,
        }
    return None


# The wire `type` of each of domain.engine.ENGINE_EVENTS (its msgspec tag): how a client
# tells the engine's events in an update from the game's.
ENGINE_EVENT_NAMES: frozenset[str] = frozenset(str(e.__struct_config__.tag) for e in ENGINE_EVENTS)
# The same types, asked by exact type: an isinstance() against a tuple of msgspec Structs
# asks each class's metaclass for its __instancecheck__ (0.3 us for the four, against
# 0.04 a lookup here; a projected event is an engine event or a game's, never a subclass).
_ENGINE_TYPES: frozenset[type] = frozenset(ENGINE_EVENTS)


def project_events(
    views: GameViews, ms: MatchState, outcome: Outcome, viewer: Viewer
) -> list[dict[str, Any]]:
    """The events of one entry as `viewer` sees them (`ms`: the state after it)."""
    return _projected(views.event, ms, outcome, effective(views, ms, viewer))


def _projected(
    game_event: Callable[[MatchState, Any, Viewer], Any], ms: MatchState, outcome: Outcome, viewer: Viewer
) -> list[Any]:
    """The events of an entry as `viewer` (already effective) sees them, the game's by
    `game_event`."""
    out: list[Any] = []
    for event in outcome.events:
        projected = engine_event(event) if type(event) in _ENGINE_TYPES else game_event(ms, event, viewer)
        if projected is not None:
            out.append(projected)
    return out


def match_view(views: GameViews, ms: MatchState, viewer: Viewer) -> dict[str, Any]:
    """Everything `viewer` may see of the match now."""
    viewer = effective(views, ms, viewer)
    view: dict[str, Any] = {
        "match": ms.match_id,
        "game": ms.game,
        "variant": ms.variant,
        "rules_version": ms.rules_version,
        "commitment": ms.commitment,
        "seats": [
            {"seat": i, "name": name} for i, name in enumerate(ms.names)
        ],
        "you": viewer.seat,
        "started": ms.started,
        "ended": ms.ended,
        "result": to_builtins(ms.result) if ms.result is not None else None,
        "deadline": ms.rules.deadline(ms.game_state) if ms.started and not ms.ended else None,
        "options": to_builtins(ms.options),
        "game_state": views.view(ms, viewer),
    }
    if ms.ended:
        view["seed"] = ms.seed
        view["setup"] = ms.setup
    return view


_encode = msgspec.json.Encoder().encode
_MARK = "\x00deadline"  # (a placeholder no view's text holds)


def json_template(encoded: bytes, places: Iterable[tuple[str, bytes]]) -> bytes:
    """JSON made with placeholder strings (`places`: each with the %-format code that
    stands for its value, e.g. b"%d"), as a template for %-formatting: its per cent signs
    escaped and each placeholder's JSON string replaced by its code. The placeholders are
    strings no other text of it holds (a NUL in them, say)."""
    template = encoded.replace(b"%", b"%%")
    for mark, code in places:
        template = template.replace(_encode(mark), code, 1)
    return template


class ViewEncoder:
    """`match_view` as JSON bytes, for frames: the same bytes as encoding its dict, with
    what every viewer's view of one state shares (all but `you` and `game_state`) built
    and encoded once for that state rather than once per viewer, and the match's options
    converted once while they stay the same object. Holds the last state it was given
    (states are immutable): the views of one entry for all its viewers are asked for in
    a row.

    The game's part is `views.view_json(ms, viewer)` when the game's projection module
    has one: the same bytes as encoding `views.view(ms, viewer)`, built with parts of the
    view that stay the same (encoded once, not rebuilt and encoded again for every
    viewer and entry); `_encode(views.view(ms, viewer))` otherwise."""

    def __init__(self, views: GameViews) -> None:
        self._views = views
        self._game_json: Callable[[MatchState, Viewer], bytes] | None = getattr(
            views, "view_json", None
        )
        # What gives the game's events for `events`: its `event_json`, or its `event`.
        game_event: Callable[[MatchState, Any, Viewer], Any] | None = getattr(
            views, "event_json", None
        )
        self._game_event: Callable[[MatchState, Any, Viewer], Any] = (
            views.event if game_event is None else game_event
        )
        self._ms: MatchState | None = None
        self._options: Any = None
        self._options_json = b""
        self._head = self._middle = self._tail = self._running = b""
        self._head_of: tuple[Any, ...] = ()

    def _share(self, ms: MatchState) -> None:
        if ms.options is not self._options:
            self._options_json = _encode(to_builtins(ms.options))
            self._options = ms.options
            # (the middle of a match in play: its deadline alone to fill in)
            self._running = json_template(self._middle_of(True, False, None, _MARK), [(_MARK, b"%b")])
        # The head changes only when a seat is taken: encoded again only then.
        head_of = (ms.match_id, ms.game, ms.variant, ms.rules_version, ms.commitment, ms.names)
        if head_of != self._head_of:
            head = _encode({
                "match": ms.match_id,
                "game": ms.game,
                "variant": ms.variant,
                "rules_version": ms.rules_version,
                "commitment": ms.commitment,
                "seats": [{"seat": i, "name": name} for i, name in enumerate(ms.names)],
            })
            self._head = head[:-1] + b',"you":'
            self._head_of = head_of
        if ms.started and not ms.ended and ms.result is None:
            self._middle = self._running % _encode(ms.rules.deadline(ms.game_state))
        else:
            self._middle = self._middle_of(
                ms.started, ms.ended, to_builtins(ms.result) if ms.result is not None else None,
                ms.rules.deadline(ms.game_state) if ms.started and not ms.ended else None,
            )
        self._tail = (
            b"," + _encode({"seed": ms.seed, "setup": ms.setup})[1:] if ms.ended else b"}"
        )
        self._ms = ms

    def _middle_of(self, started: bool, ended: bool, result: Any, deadline: Any) -> bytes:
        """A view's JSON from after `you` up to the game's state."""
        middle = _encode({"started": started, "ended": ended, "result": result, "deadline": deadline})
        return b"," + middle[1:-1] + b',"options":' + self._options_json + b',"game_state":'

    def encode(self, ms: MatchState, viewer: Viewer) -> bytes:
        """The JSON of `match_view(views, ms, viewer)`."""
        return b"".join(self.parts(ms, viewer))

    def parts(self, ms: MatchState, viewer: Viewer) -> tuple[bytes, ...]:
        """The JSON of `match_view(views, ms, viewer)` in pieces, for the caller to join
        with what goes around it (an update frame: a view of 2 kB copied once there
        rather than joined here first)."""
        return self._parts(ms, effective(self._views, ms, viewer))

    def _parts(self, ms: MatchState, viewer: Viewer) -> tuple[bytes, ...]:
        """`parts`, for a viewer made effective already."""
        if ms is not self._ms:
            self._share(ms)
        game = self._game_json
        return (
            self._head, _encode(viewer.seat), self._middle,
            game(ms, viewer) if game is not None else _encode(self._views.view(ms, viewer)),
            self._tail,
        )

    def events(self, ms: MatchState, outcome: Outcome, viewer: Viewer) -> bytes | None:
        """The JSON of `project_events(views, ms, outcome, viewer)` (None: it is empty).

        A game's projection module with an `event_json` gives there an event as `event`
        does, or its JSON where that is kept: Five-Card Trick's resolved round, the same
        kept bytes as the next round's views' last round, neither built as dicts nor
        encoded again for each viewer. (Live frames built with it rather than with
        `project_events`: bench/core.py under callgrind, Five-Card Trick 960,872 ->
        907,838 instructions a command, -5.5%; keys-to-success the same.)"""
        shown = self.update(ms, outcome, viewer, False)
        return None if shown is None else shown[0]

    def update(
        self, ms: MatchState, outcome: Outcome, viewer: Viewer, with_view: bool
    ) -> tuple[bytes, tuple[bytes, ...] | None] | None:
        """What an update of the entry that gave `ms` and `outcome` shows `viewer`: its
        events' JSON (`events`) and, `with_view`, its view's pieces (`parts`); None when
        it shows no events. One call for a live frame, the viewer made effective once."""
        viewer = effective(self._views, ms, viewer)
        out = _projected(self._game_event, ms, outcome, viewer)
        if not out:
            return None
        return _encode(out), self._parts(ms, viewer) if with_view else None
