"""Each viewer's own numbered stream of update frames.

A viewer (a seat, a spectator, the after-the-match full view) receives one update frame
for each log entry that shows it something, numbered 1, 2, 3, ... in its own stream.
Numbering by log position instead would tell a player, by the gaps, how much happened
that it may not see (other levels' chat, an opponent's rejected commands), so the log
position never leaves the server.

Whether an entry shows a viewer something, and what, is decided by the state right after
that entry: a stream never changes once written, every process derives the same one from
the log, and a viewer may resume from the last number it saw on any process. The `view`
in a frame is the viewer's whole view when the frame is sent: live, the state right after
the entry; when catching up after a (re)connect, the state now, so that rules that delete
history (Memory Maze's earlier sequences) delete it on reconnect too. A connection that
asked for events only (`"updates": "events"`) gets the same frames without the view, whose
projection is then not made for it.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import msgspec

from domain.engine import MatchState, Outcome
from projections.common import ViewEncoder, match_view, project_events
from projections.contract import GameViews, Viewer

_encode = msgspec.json.Encoder().encode

_HEAD = b'{"type":"update","seq":%d,"ts":%d,"events":'
"""An update frame up to its events (`Streams.frame`): its number and the entry's time."""

History = Callable[[int], Iterator[tuple[int, MatchState, Outcome]]]
"""history(first): (seq, state after the entry, its outcome) for each entry from `first`."""


class _Stream:
    """One viewer's stream so far: the log seq of each of its frames (in order), and the
    last log seq looked at for it."""

    __slots__ = ("index", "upto")

    def __init__(self) -> None:
        self.index: list[int] = []
        self.upto = 0


class Streams:
    def __init__(
        self,
        views: GameViews,
        history: History,
        times: Sequence[int],
        current: Callable[[], MatchState],
    ) -> None:
        self._views = views
        self._history = history
        self._times = times
        self._current = current
        # viewer -> its stream. (One record per viewer rather than a dict of indexes and
        # one of last seqs: `live` runs for every viewer on every entry, and one lookup
        # there instead of four saved 28,000 instructions a command with 13 seats, 0.8%
        # of bench/core.py's keys-to-success.)
        self._streams: dict[Viewer, _Stream] = {}
        self._view_json = ViewEncoder(views)

    def _stream(self, viewer: Viewer) -> _Stream:
        stream = self._streams.get(viewer)
        if stream is None:
            stream = self._streams[viewer] = _Stream()
        return stream

    def _extend(self, viewer: Viewer, upto: int | None = None) -> list[int]:
        """`viewer`'s index, brought up to log entry `upto` (default: the last)."""
        stream = self._stream(viewer)
        last = self._current().seq if upto is None else upto
        if stream.upto < last:
            index = stream.index
            for seq, ms, outcome in self._history(stream.upto + 1):
                if seq > last:
                    break
                if project_events(self._views, ms, outcome, viewer):
                    index.append(seq)
            stream.upto = last
        return stream.index

    def length(self, viewer: Viewer) -> int:
        """How many frames `viewer`'s stream has now."""
        return len(self._extend(viewer))

    def count_before(self, viewer: Viewer, seq: int) -> int:
        """How many frames of `viewer`'s stream come from log entries before `seq`."""
        return bisect.bisect_left(self._extend(viewer), seq)

    def number_of(self, viewer: Viewer, seq: int) -> int | None:
        """The number of log entry `seq`'s frame in `viewer`'s stream (None: it has none)."""
        index = self._extend(viewer)
        at = bisect.bisect_left(index, seq)
        return at + 1 if at < len(index) and index[at] == seq else None

    def index(self, viewer: Viewer) -> list[int]:
        """The log seq of each frame of `viewer`'s stream so far, in order (the list
        itself, which grows as entries are folded: not to be changed)."""
        return self._extend(viewer)

    def frame(self, number: int, seq: int, events: bytes, view: bytes | None) -> bytes:
        """The update frame: the JSON of {"type": "update", "seq": number, "ts": the entry's
        time, "events": events, "view": the view}, the events and the view given as JSON
        (no view: no `view` field)."""
        head = _HEAD % (number, self._times[seq - 1])
        if view is None:
            return b"".join((head, events, b"}"))
        return b"".join((head, events, b',"view":', view, b"}"))

    def live(
        self, viewer: Viewer, seq: int, ms: MatchState, outcome: Outcome, with_view: bool = True
    ) -> bytes | None:
        """The frame of the entry just folded (`seq`, the state after it, its outcome)
        for `viewer`, or None if it shows `viewer` nothing (`with_view` false: the frame
        without the view). Asked again for the same entry and viewer, the other form."""
        stream = self._streams.get(viewer)
        if stream is None or stream.upto < seq - 1:  # (live, it is up to the entry before)
            self._extend(viewer, seq - 1)
            stream = self._streams[viewer]
        # The events' JSON straight from the projection (ViewEncoder.update, as `events`
        # gives it: a resolved round's kept JSON, not a dict built and encoded again per
        # viewer) and the view's pieces, in one call.
        shown = self._view_json.update(ms, outcome, viewer, with_view)
        index = stream.index
        if stream.upto < seq:
            stream.upto = seq
            if shown is not None:
                index.append(seq)
        if shown is None:
            return None
        events, view = shown
        number = bisect.bisect_left(index, seq) + 1
        head = _HEAD % (number, self._times[seq - 1])
        if view is None:
            return b"".join((head, events, b"}"))
        # (`frame`'s bytes, joined once with the view's pieces)
        return b"".join((head, events, b',"view":', *view, b"}"))

    def view(self, viewer: Viewer) -> dict[str, Any]:
        """`viewer`'s whole view of the match now."""
        return match_view(self._views, self._current(), viewer)

    def view_json(self, viewer: Viewer) -> bytes:
        """The JSON of `view(viewer)` (built as an update's view is)."""
        return self._view_json.encode(self._current(), viewer)

    def backlog(
        self, viewer: Viewer, since: int, view: dict[str, Any] | None = None,
        with_view: bool = True,
    ) -> list[bytes]:
        """Frames since+1 .. now for a viewer catching up, each with its view as of now
        (`view`, when the caller has it already; encoded once for all of them), or none
        (`with_view` false), all made at once. (A subscriber's catch-up is made as it is
        sent, MatchCore.catch_up; this is what the tests hold it against.)"""
        index = self._extend(viewer)
        if since >= len(index):
            return []
        view_json = None
        if with_view:
            view_json = _encode(self.view(viewer) if view is None else view)
        wanted = index[since:]
        frames: list[bytes] = []
        number = since
        for seq, ms, outcome in self._history(wanted[0]):
            if seq > wanted[-1]:
                break
            events = project_events(self._views, ms, outcome, viewer)
            if events:
                number += 1
                frames.append(self.frame(number, seq, _encode(events), view_json))
        return frames
