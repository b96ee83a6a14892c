"""Spectator delay: spectators of a match created with a `spectator_delay` see it as it
was that many seconds, or rounds, ago (domain/kit/options.py declares the option).

The delay is the match's: the server records it in the create entry under
`spectator_delay` (`{"seconds": 30}` or `{"rounds": 2}`, only when set), so every
process that serves the match applies the same one, and logs made before it, and
matches without it, are as they were.

A `DelayedFeed` holds back the spectator stream of one match. The stream is the one an
undelayed spectator would receive, numbered the same, update for update, each with the
view it had then; only its entries are released late:

- an entry that leaves the match unstarted (a seat taken) at once: nothing is in play
  yet, and the lobby shows the seats as they are;
- under a delay in seconds, any other entry once the server's clock has passed its
  time (`ts`) by the delay;
- under a delay of N rounds, any other entry once the match is in round r + N, where r
  is the round the entry came in (the entry that started the match: the first round);
- once the match is over, everything, at once: nothing is left to keep from anyone.

Entries are released in order (a prefix of the log), so a delayed spectator never
receives anything sooner than its delay. The clock is read in the runner
(server/hub.py), which hands `now` in; the feed reads none.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec

from domain import engine
from domain.engine import Entry, MatchState, Outcome
from projections.common import match_view, project_events
from projections.contract import SPECTATOR, Viewer
from server.core import MatchCore, SinceOutOfRange, Subscribed, with_receipt

K = TypeVar("K", bound=Hashable)

_encode = msgspec.json.Encoder().encode

KEY = "spectator_delay"  # its name in the create entry's body


@dataclass(frozen=True)
class Delay:
    """A match's spectator delay: `seconds` or `rounds`."""

    seconds: float | None = None
    rounds: int | None = None

    @staticmethod
    def of(create: Entry) -> Delay | None:
        """The delay a create entry records (None: none)."""
        body = create.body if isinstance(create.body, dict) else {}
        recorded = body.get(KEY)
        if not isinstance(recorded, dict):
            return None
        seconds, rounds = recorded.get("seconds"), recorded.get("rounds")
        if isinstance(rounds, int) and not isinstance(rounds, bool) and rounds > 0:
            return Delay(rounds=rounds)
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds > 0:
            return Delay(seconds=seconds)
        return None

    def document(self) -> dict[str, Any]:
        """As the create entry records it and a delayed spectator's welcome says it."""
        return {"rounds": self.rounds} if self.rounds is not None else {"seconds": self.seconds}


def record(create: Entry, own: Mapping[str, Any]) -> Entry:
    """The create entry with the match's own options (kit.options.split_match_options)
    added to its body under their names, its digests made again (the digest of a create
    entry covers its whole body, so a log records them for good)."""
    if not own:
        return create
    return engine.seal(
        engine.GENESIS_HEAD, seq=1, ts=create.ts, kind="create", seat=None, cid="create",
        body={**create.body, **own}, outcome=Outcome(),
    )


def delayed(viewer: Viewer) -> bool:
    """Whether a delay applies to `viewer`: a spectator's (never a player's)."""
    return viewer.seat is None and not viewer.full


class DelayedFeed(Generic[K]):
    """The spectator stream of one delayed match, released as its delay allows (see the
    module). The subscribers are the core's too (MatchCore.hold): the core sends them
    nothing, this feed does."""

    def __init__(self, core: MatchCore[K], delay: Delay) -> None:
        self.core = core
        self.delay = delay
        self.released = 1  # the last log entry released (the create entry shows nothing)
        self._subs: dict[K, int] = {}  # subscriber -> the last log entry it was sent
        self._bare: set[K] = set()  # subscribers whose updates carry no view ("updates": "events")
        self._round_of: tuple[int, int | None] | None = None  # (seq, the round it came in)

    # -- what is released --------------------------------------------------------------------

    def _came_in(self, seq: int) -> int | None:
        """The round entry `seq` came in (None: it left the match unstarted)."""
        if self._round_of is not None and self._round_of[0] == seq:
            return self._round_of[1]
        rules = self.core.hosted.rules
        before = self.core.at(seq - 1)[0]
        after = self.core.at(seq)[0]
        if not after.started:
            found = None
        else:
            found = rules.round_of((before if before.started else after).game_state)
        self._round_of = (seq, found)
        return found

    def _due(self, seq: int, now: int) -> bool:
        if not self.core.at(seq)[0].started:
            return True
        if self.delay.rounds is not None:
            came = self._came_in(seq)
            live = self.core.hosted.rules.round_of(self.core.current.game_state)
            return came is None or live >= came + self.delay.rounds
        assert self.delay.seconds is not None
        return self.core.times[seq - 1] + round(self.delay.seconds * 1000) <= now

    def point(self, now: int) -> int:
        """The last log entry released at `now` (server ms)."""
        current = self.core.current
        if current.ended:
            self.released = current.seq
            return self.released
        seq = self.released
        while seq < current.seq and self._due(seq + 1, now):
            seq += 1
        self.released = seq
        return seq

    def due(self, now: int) -> int | None:
        """When (server ms) the next entry is released by the clock (None: no entry
        waits on the clock: a delay in rounds, or nothing held back)."""
        point = self.point(now)
        if self.delay.seconds is None or point >= self.core.current.seq:
            return None
        return self.core.times[point] + round(self.delay.seconds * 1000)

    def state(self, now: int) -> MatchState:
        """The match as a delayed spectator sees it at `now`."""
        return self.core.at(self.point(now))[0]

    def view(self, now: int) -> dict[str, Any]:
        return match_view(self.core.hosted.views, self.state(now), SPECTATOR)

    def length(self, now: int) -> int:
        """How many updates the delayed spectator stream has at `now`."""
        return self.core.streams.count_before(SPECTATOR, self.point(now) + 1)

    # -- subscribers ---------------------------------------------------------------------

    @property
    def subscribers(self) -> int:
        return len(self._subs)

    def subscribe(
        self, key: K, since: int | None, welcome: dict[str, Any], now: int, with_view: bool = True
    ) -> Subscribed:
        """As MatchCore.subscribe, over the stream released at `now`: the welcome (with
        the view as released, and `delay`) and the updates after `since`, each with that
        view (`with_view` false: without, and so are its live updates), made as they are
        taken. SinceOutOfRange for a `since` beyond what is released."""
        point = self.point(now)
        length = self.core.streams.count_before(SPECTATOR, point + 1)
        if since is None:
            since = length
        if not 0 <= since <= length:
            raise SinceOutOfRange(f"since must be between 0 and {length}, the updates in your stream")
        view = self.view(now)
        welcome_frame = _encode({**welcome, "seq": length, "view": view, "delay": self.delay.document()})
        self._subs[key] = point
        if not with_view:
            self._bare.add(key)
        self.core.hold(key, SPECTATOR)
        return Subscribed(welcome_frame, self.core.catch_up(SPECTATOR, since, length, view if with_view else None))

    def unsubscribe(self, key: K) -> None:
        self._subs.pop(key, None)
        self._bare.discard(key)

    def _frame(
        self, number: int, seq: int, events: list[dict[str, Any]], view: dict[str, Any] | None
    ) -> bytes:
        frame = {"type": "update", "seq": number, "ts": self.core.times[seq - 1], "events": events}
        if view is not None:
            frame["view"] = view
        return _encode(frame)

    def advance(self, now: int) -> list[tuple[K, bytes]]:
        """The frames released since each subscriber's last, to send now: each update
        with the view after its entry, as it went live; the match's last (every viewer's,
        at the end) with the end's receipt, as MatchCore sends it."""
        point = self.point(now)
        sends: list[tuple[K, bytes]] = []
        built: dict[tuple[int, bool], bytes | None] = {}
        for key, upto in list(self._subs.items()):
            if upto >= point:
                continue
            with_view = key not in self._bare
            for seq in range(upto + 1, point + 1):
                if (seq, with_view) not in built:
                    built[seq, with_view] = self._live(seq, with_view)
                frame = built[seq, with_view]
                if frame is not None:
                    sends.append((key, frame))
            self._subs[key] = point
        return sends

    def _live(self, seq: int, with_view: bool) -> bytes | None:
        core = self.core
        ms, outcome = core.at(seq)
        views = core.hosted.views
        events = project_events(views, ms, outcome, SPECTATOR)
        frame = None
        if events:
            number = core.streams.count_before(SPECTATOR, seq + 1)
            view = match_view(views, ms, SPECTATOR) if with_view else None
            frame = self._frame(number, seq, events, view)
        checkpoint = core.checkpoint
        if checkpoint is not None and checkpoint[0] == seq and checkpoint[2] == "ended":
            receipt = core.receipt_frame(*checkpoint)
            if receipt is not None:
                frame = with_receipt(frame, receipt)
        return frame

    def resynced(self, first: int, before: Mapping[K, int], now: int) -> list[tuple[K, bytes]]:
        """The core was folded again from a log that lost entries from `first` on
        (MatchCore.resync): each subscriber whose stream changed gets a `resync` frame
        (`before`: each one's stream length before), as the core's subscribers do."""
        self.released = min(self.released, first - 1)
        self._round_of = None
        point = self.point(now)
        streams = self.core.streams
        length = streams.count_before(SPECTATOR, point + 1)
        kept = streams.count_before(SPECTATOR, first)
        view = self.view(now)
        sends: list[tuple[K, bytes]] = []
        for key in list(self._subs):
            old = before.get(key, 0)
            self._subs[key] = point
            if kept < old or length != old:
                frame = {"type": "resync", "seq": length, "kept": min(kept, old), "view": view}
                sends.append((key, _encode(frame)))
        return sends

    def lengths(self) -> dict[K, int]:
        """Each subscriber's stream length now (before a resync)."""
        streams = self.core.streams
        return {key: streams.count_before(SPECTATOR, upto + 1) for key, upto in self._subs.items()}
