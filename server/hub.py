"""Match runners: each folds one match's log in this process and serves its viewers.

A runner is the asyncio shell around the match's MatchCore (server/core.py), which
folds, numbers each viewer's stream and decides what a command is; the runner holds the
lock, the store, the clock's timer and the subscribers' queues, and delivers what the
core returns. The follower (server/follower.py) hands it what other processes append.

Any number of processes may run a runner for the same match: each tails the stream,
folds every entry (checking its digests), and appends commands conditionally on the head
it has folded. A deadline is appended as a `tick` entry keyed by the deadline, so when
several processes notice it at once it lands once.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Coroutine, Iterator, KeysView, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from domain import engine
from domain.engine import Entry, IntegrityError, MatchState, Outcome
from domain.kit.options import split_match_options
from projections.contract import SPECTATOR, Viewer
from projections.registry import Hosted, hosted
from server import logs
from server.config import Settings
from server.core import (
    Answer,
    Append,
    Awaiting,
    Folded,
    Frame,
    MatchCore,
    SinceOutOfRange,
    Submitted,
)
from server.delay import Delay, DelayedFeed, delayed, record
from server.expiry import Expiry, expired_message
from server.follower import Follower
from server.ids import new_match_id
from server.keys import Batch, ServerKey
from server.limits import Limits
from server.metrics import Metrics
from server.replays import ReplayCache
from server.storage import Appended, Store
from server.store import UNAVAILABLE
from server.streams import Streams

log = logs.get("daedalus.hub")


CLOSE_INTERNAL = 1011
"""The close code of a connection the server failed to serve (its catch-up failed)."""


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class SendQueue:
    """A viewer's outgoing frames: bounded for live traffic and for the answers to the
    client's own messages, not for its own catch-up.

    With `direct` (the connection's SEND_TEXT, server/coalesce.py), a frame pushed while
    nothing waits before it is written to the socket at once, without waking the
    connection's sender task (a future and a task switch a frame); when `direct` declines
    (the socket's buffer is full, the connection closing) it queues as any other, so a
    slow reader still fills the queue. The sender marks the frame it sends the usual way
    as `sending`, so that no frame overtakes it.

    A live frame finding `limit` frames waiting, or an answer (a view, a pong, an ack, an
    error) finding `limit` answers waiting, overflows the queue: the reader is too slow,
    and gets nothing more. Answers are counted apart, so that a client still catching up
    on a long backlog may send a command or a ping.

    A frame whose receipt waits for its batch's signature (`Awaiting`, server/keys.py
    `Batch`, signed at the next turn of the loop) waits as a frame does, and the frames
    pushed after it wait behind it. With `direct`, one that reaches the head of the
    queue is written when its batch is signed, with what waits behind it, still
    without waking the sender (the queue is `_parked` until then); the sender, woken
    for another reason (a catch-up, a close, a socket that took no more), takes them
    over, and has the batch signed at once if it is not yet.

    A catch-up (`push_catch_up`) waits as one item, however long: its frames are made
    as the sender takes them, which it does as the socket takes them, so a client that
    asks for a whole long match and reads nothing costs its socket's buffers, not the
    match's frames (they were made at once before, a hundred such spectators of one
    long match grew a server by 700 MB)."""

    def __init__(self, limit: int, direct: Callable[[bytes], bool] | None = None) -> None:
        self.limit = limit
        self.direct = direct
        self.sending = False
        self._items: collections.deque[bytes | Awaiting | Iterator[bytes] | None] = collections.deque()
        self._ready = asyncio.Event()
        self.overflowed = False  # (a plain flag: it is read for every frame and message)
        self.close_code: int | None = None  # see close
        self.close_reason = ""
        # The answers waiting: the number each was queued as (frames are numbered as
        # they are queued, `_queued`, and taken, `_taken`); made when one first waits (an
        # empty deque is 624 bytes, and most connections never have an answer wait).
        self._answers: collections.deque[int] | None = None
        self._queued = 0
        self._taken = 0
        self._parked = False  # the head waits for its receipt's signature: see _drain

    def push(self, frame: Frame, *, bounded: bool = True, answer: bool = False) -> None:
        """Send `frame` after those before it: a live one (`bounded`), one of a catch-up
        (not `bounded`), or the answer to one of the client's own messages (`answer`)."""
        if self.overflowed:
            return
        if isinstance(frame, Awaiting) and frame.ticket.signed:
            frame = frame.frame()
        direct = self.direct
        if direct is not None and not self._items and not self.sending:
            if not isinstance(frame, Awaiting):
                if direct(frame):
                    return
            elif not self._parked:
                self._park(frame)
        if answer:
            answers, taken = self._answers, self._taken
            if answers is None:
                answers = self._answers = collections.deque()
            while answers and answers[0] < taken:
                answers.popleft()
            if len(answers) >= self.limit:
                self._overflow()
                return
            answers.append(self._queued)
        elif bounded and len(self._items) >= self.limit:
            self._overflow()
            return
        self._items.append(frame)
        self._queued += 1
        if not self._parked:
            self._ready.set()

    def _park(self, head: Awaiting) -> None:
        self._parked = True
        head.ticket.then(self._drain)

    def _drain(self) -> None:
        """The receipt the head waited for is signed: write what can be written (and
        wake the sender for the rest), unless the sender took over in the meantime."""
        if not self._parked:
            return
        self._parked = False
        items, direct = self._items, self.direct
        assert direct is not None
        while items and not self.sending:
            item = items[0]
            if isinstance(item, Awaiting):
                if not item.ticket.signed:  # another batch's
                    self._park(item)
                    return
                frame = item.frame()
            elif isinstance(item, bytes):
                frame = item
            else:  # a catch-up, or the close: the sender's
                break
            if not direct(frame):
                break
            items.popleft()
            self._taken += 1
        if items:
            self._ready.set()

    def push_catch_up(self, frames: Iterator[bytes]) -> None:
        """Send `frames` after those before it, each made when the sender takes it (not
        bounded, as a catch-up is not: it waits as one item)."""
        if self.overflowed:
            return
        self._items.append(frames)
        self._queued += 1
        self._ready.set()

    def _overflow(self) -> None:
        self.overflowed = True
        self._drop_waiting()
        self.close()  # (all that is left to take)

    def _drop_waiting(self) -> None:
        """Nothing waiting any more, frames or answers."""
        self._parked = False
        self._items.clear()
        self._answers = None
        self._queued = self._taken = 0

    def close(self, code: int | None = None, reason: str = "") -> None:
        """No more frames; with `code`, the connection is to be closed with it."""
        if code is not None and self.close_code is None:
            self.close_code, self.close_reason = code, reason
        self._items.append(None)
        self._queued += 1
        self._ready.set()

    async def get(self) -> bytes | None:
        """The next frame to send (None: close)."""
        items = self._items
        while True:
            while not items:
                self._ready.clear()
                await self._ready.wait()
            self._parked = False  # (whatever the head waited for: the sender's now)
            item = items[0]
            if item is None or isinstance(item, bytes):
                self._taken += 1
                items.popleft()
                return item
            if isinstance(item, Awaiting):
                self._taken += 1
                items.popleft()
                return item.frame()
            try:
                frame = next(item, None)
            except Exception:
                log.exception("catch_up_failed")
                self._drop_waiting()
                self.close(CLOSE_INTERNAL, "the server failed: resume from your last seq")
                continue
            if frame is not None:
                return frame
            self._taken += 1
            items.popleft()


@dataclass(eq=False)
class Subscriber:
    viewer: Viewer
    queue: SendQueue
    with_view: bool = True  # False: its updates carry no view (a hello's "updates": "events")


class Busy(Exception):
    pass


@dataclass(frozen=True)
class _Unfolded:
    """An append MatchRunner._land did not fold, for its command to be caught up on and
    answered or decided again: what the store said of it (`ok`: it holds the entry,
    which giving up an entry before it left unfolded here), and whether a `conflict`
    is the store's own (its head was not the one the entry was decided on) rather than
    the failure of an entry before it."""

    decided: Append
    result: Appended
    conflict: bool


class MatchLock(asyncio.Lock):
    """A match's lock: asyncio's, with `take_now` for a command's way in (MatchRunner.submit)."""

    _locked: bool  # (asyncio.Lock's own flag, as `locked` reads it)

    def take_now(self) -> bool:
        """Take the lock if `acquire` would take it without waiting (it is free and no
        task waits for it), at once; False: await `acquire`. Taken so, it saves the
        three coroutines `async with` makes (`__aenter__`, `acquire`, `__aexit__`): a
        command's way in takes it uncontended all but always."""
        if self._locked or self._waiters:
            return False
        self._locked = True
        return True


class MatchRunner:
    """The shell around one match's MatchCore (server/core.py): the lock appends are
    decided under, the store, the clock's timer, and the subscribers' queues."""

    # The event loop its appends settle in, kept from the first (as its lock is bound to
    # it): asyncio.get_running_loop asks the kernel for the process's id at every call
    # (Python 3.11), 0.24 us a command.
    _loop: asyncio.AbstractEventLoop | None = None

    def __init__(self, hub: Hub, match_id: str, entries: list[tuple[str, Entry]]) -> None:
        self.hub = hub
        self.store = hub.store
        self.match_id = match_id
        sid, first = entries[0]
        self.core: MatchCore[Subscriber] = MatchCore(first, stream_id=sid, key=hub.receipts)
        self.hosted: Hosted = self.core.hosted
        # A match created with a spectator delay holds its spectators back (server/delay.py).
        delay = Delay.of(first)
        self.delayed = DelayedFeed(self.core, delay) if delay is not None else None
        self._delay_timer: asyncio.TimerHandle | None = None
        self.lock = MatchLock()
        self.tokens: dict[str, int] = {}
        # The record of the match's expiry, once another process expired it (see _resync_locked).
        self.expired: dict[str, Any] | None = None
        # The clock: a timer armed for the next deadline (re-armed when it moves), and the
        # tick being appended, if any.
        self._running = False
        self._clock_due: int | None = None
        self._clock_timer: asyncio.TimerHandle | None = None
        self._timer_due = 0  # when the armed timer rings (a deadline it was armed for)
        self._ticking: asyncio.Task[None] | None = None
        self._tick_failures = 0  # ticks that failed in a row (the store away)
        # The stream id up to which the follower has handed entries still to be folded.
        self.reading: str | None = None
        # The appends begun and not settled (see submit), in order: each one's settling.
        # (A tuple: none kept in every match, bench/memory.py.)
        self._flights: tuple[asyncio.Future[None], ...] = ()
        # Whether the hub let go of it (Hub.forget); a viewer may still take it back.
        self.released = False
        # When this process last used the match (a request, a viewer, a command of its
        # own; not a tick) and the log's length then; the last entry other than a tick
        # that another process appended (see releasable).
        self.used_at = time.monotonic()
        self.used_seq = 0
        self.others_seq = 0
        loaded = self.core.receive(entries[1:])
        if loaded.error is not None:
            raise loaded.error
        self.used_seq = self.current.seq
        if loaded.ended:  # a finished match loaded again: its end was said when it came
            self._over(announce=False)

    # -- state ---------------------------------------------------------------------------

    @property
    def current(self) -> MatchState:
        return self.core.current

    @property
    def states(self) -> Sequence[MatchState]:
        """The state after each entry (states[seq - 1]), folded again when asked for."""
        return self.core.states

    @property
    def outcomes(self) -> Sequence[Outcome]:
        """The outcome of each entry (outcomes[seq - 1]), folded again when asked for."""
        return self.core.outcomes

    @property
    def streams(self) -> Streams:
        """The viewers' streams (new ones after a resync)."""
        return self.core.streams

    @property
    def appending(self) -> bool:
        """Whether an append of this process to the match is in flight."""
        return bool(self._flights)

    @property
    def stream_id(self) -> str:
        """The stream id of the last entry folded."""
        return self.core.stream_id

    @property
    def subscribers(self) -> KeysView[Subscriber]:
        return self.core.subscribers

    def start(self) -> None:
        self._running = True
        self._arm_clock()
        self.hub.expiry.watch(self)  # an unfilled match expires (server/expiry.py)
        if not self.current.ended:  # nothing is appended to a finished match
            self.hub.follower.add(self)

    def halt(self) -> asyncio.Task[None] | None:
        """Stop the clock, the expiry and the following at once (start() begins them
        again); the tick being appended, if any, is cancelled and returned."""
        self._running = False
        self.hub.expiry.unwatch(self)
        self.hub.follower.remove(self)
        if self._clock_timer is not None:
            self._clock_timer.cancel()
            self._clock_timer = None
        self._clock_due = None
        if self._delay_timer is not None:
            self._delay_timer.cancel()
            self._delay_timer = None
        ticking, self._ticking = self._ticking, None
        if ticking is not None:
            ticking.cancel()
        return ticking

    async def stop(self) -> None:
        ticking = self.halt()
        if ticking is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await ticking
        for sub in list(self.subscribers):
            sub.queue.close()

    # -- when this process may let go of it ------------------------------------------------

    def touch(self) -> None:
        """This process uses the match now (a request, a viewer, a command of its own)."""
        self.used_at = time.monotonic()
        self.used_seq = self.core.current.seq

    def releasable(self, now: float, idle: float, grace: float) -> bool:
        """Whether the hub may let go of it at `now` (time.monotonic()): nobody views it
        here and nothing holds its lock; and it is over and unused for `grace` seconds,
        or unused for `idle` seconds while another process appended to it (other than
        a tick) since this one last used it. A match that nobody plays anywhere is kept
        by the process that played it last, so that its clock keeps running."""
        if self.subscribers or self.lock.locked() or self._flights or self.reading is not None:
            return False
        unused = now - self.used_at
        if self.current.ended:
            return unused >= grace
        return unused >= idle and self.others_seq > self.used_seq

    def _others_folded(self, before: int) -> None:
        """Entries after `before` were folded from what other processes appended: note
        the last one that is not a tick."""
        for seq in range(self.current.seq, max(before, self.others_seq), -1):
            if self.core.entry(seq).kind != "tick":
                self.others_seq = seq
                return

    # -- folding -----------------------------------------------------------------------------

    def _deliver(self, folded: Folded[Subscriber], *, own: bool = False) -> None:
        """Send what the core folded to its subscribers; the clock follows the state.
        `own`: the entry this process appended (the match's end is said by the process
        whose entry ended it, once, not by every process folding it)."""
        self._arm_clock()
        for sub, frame in folded.sends:
            sub.queue.push(frame)
        self._release_delayed()
        if folded.ended:
            self._over(announce=own or folded.ended_own)

    def _release_delayed(self, now: int | None = None) -> None:
        """Send the delayed spectators what their delay releases now (`now`: that time),
        and arm a timer for the next release (server/delay.py)."""
        feed = self.delayed
        if feed is None or not feed.subscribers:
            return
        if now is None:
            now = now_ms()
        for sub, frame in feed.advance(now):
            sub.queue.push(frame)
        if self._delay_timer is not None:
            self._delay_timer.cancel()
            self._delay_timer = None
        due = feed.due(now)
        if due is not None:
            self._delay_timer = asyncio.get_running_loop().call_later(
                max(0.0, (due - now) / 1000), self._release_delayed
            )

    def _over(self, *, announce: bool) -> None:
        ms = self.current
        winner = ms.result.winner if ms.result else None
        if announce:
            log.info("match_over", match=self.match_id, game=ms.game, winner=winner)
            self.hub.metrics.match("finished")
        else:
            log.debug("match_over_folded", match=self.match_id, winner=winner)
        self.hub.spawn(self.store.mark_over(self.match_id))
        if self._running:
            self.hub.follower.remove(self)
            if self.core.idle:  # nobody to tell: nothing of it need stay
                self.hub.forget(self.match_id, self)

    async def _catch_up_locked(self, *, conflict: bool = False) -> None:
        """Fold what the store holds beyond what is folded here. After a `conflict` (the
        store's head is not the one folded here), finding nothing beyond means the store
        is behind: it lost entries (see _resync_locked)."""
        before = self.current.seq
        folded = self.core.receive(await self.store.read(self.match_id, after=self.stream_id))
        self._others_folded(before)
        self._deliver(folded)
        stuck = conflict and folded.error is None and self.current.seq == before
        if folded.behind or stuck or folded.error is not None:
            if await self._resync_locked() or folded.error is None:
                return
            raise folded.error

    # -- a store that lost entries ---------------------------------------------------------

    async def _resync_locked(self) -> bool:
        """If the store's log no longer holds every entry folded here (a Redis killed
        under `appendfsync everysec`, a failover to a lagging replica), fold the log
        again from its start and tell each viewer whose stream changed (a `resync`
        frame, MatchCore.resync); the loss is logged once, as an error naming the
        entries lost. False if the log holds every entry folded here."""
        items = await self.store.read(self.match_id)
        if not items:
            record = await self.store.expired(self.match_id)
            if record is not None:  # not a loss: another process expired the match first
                self.expired = record
                self.hub.spawn(self.hub.expiry.expire(self))
                return True
        held = self.delayed.lengths() if self.delayed is not None else {}
        try:
            resynced = self.core.resync(items)
        except (IntegrityError, ValueError) as exc:
            log.error("log_integrity", match=self.match_id, error=str(exc))
            return False
        if resynced is None:
            return False
        lost = resynced.lost
        log.error(
            "log_lost_entries",
            match=self.match_id,
            lost=len(lost),
            entries=[f"{e.seq} {e.kind} seat={e.seat} cid={e.cid}" for e in lost],
            log_length=self.current.seq,
            viewers_resynced=len(resynced.sends),
        )
        self.tokens.clear()  # a lost join took its seat's token with it
        for sub, frame in resynced.sends:
            sub.queue.push(frame, bounded=False)
        if self.delayed is not None and lost:
            for sub, frame in self.delayed.resynced(lost[0].seq, held, now_ms()):
                sub.queue.push(frame, bounded=False)
        self._arm_clock(again=True)
        if resynced.reopened and self._running:
            self.hub.follower.add(self)
        if resynced.ended:
            self._over(announce=False)
        return True

    async def check_log(self) -> None:
        """After the store was away: if its log is now shorter than what is folded here,
        it lost entries (resync). Entries replaced beyond its length are found as they
        are read (MatchCore.receive) or appended (a conflict)."""
        with contextlib.suppress(*UNAVAILABLE):
            if await self.store.length(self.match_id) >= self.current.seq:
                return
            async with self.lock:
                await self._resync_locked()

    async def _verify(self, error: IntegrityError | None) -> None:
        """What the follower handed over did not fold (`error`) or showed the store behind
        (no error): resync from the store's log if it lost entries, else it is an
        integrity error of the log."""
        try:
            async with self.lock:
                resynced = await self._resync_locked()
        except UNAVAILABLE:
            return  # the follower reads again after its pause
        if resynced:
            self.hub.follower.resume(self)
        elif error is not None:
            log.error("log_integrity", match=self.match_id, error=str(error))

    # -- what viewers receive ----------------------------------------------------------------

    def view(self, viewer: Viewer) -> dict[str, Any]:
        return self.core.view(viewer)

    def spectator_view(self) -> tuple[dict[str, Any], int]:
        """A spectator's view now and how many updates its stream has: as the match's
        spectator delay releases them (server/delay.py), if it has one."""
        return self.view_now(SPECTATOR)

    def _held_back(self, viewer: Viewer) -> DelayedFeed[Subscriber] | None:
        """The match's spectator delay, if it holds `viewer`'s stream back now."""
        if self.delayed is not None and delayed(viewer) and not self.current.ended:
            return self.delayed
        return None

    def view_now(self, viewer: Viewer) -> tuple[dict[str, Any], int]:
        """`viewer`'s view now and how many updates its stream has (a delayed spectator's:
        as the delay releases them, the updates due released to its subscribers first, so
        that the view is the one after the last update each of them was sent)."""
        feed = self._held_back(viewer)
        if feed is not None:
            now = now_ms()
            self._release_delayed(now)
            return feed.view(now), feed.length(now)
        return self.view(viewer), self.streams.length(viewer)

    def view_frame(self, viewer: Viewer) -> bytes:
        """The answer to a `view` request: {"type": "view", "seq": ..., "view": ...} with
        `view_now`'s view and length (an undelayed view's JSON built as an update's is)."""
        if self._held_back(viewer) is not None:
            view, seq = self.view_now(viewer)
            return msgspec.json.encode({"type": "view", "seq": seq, "view": view})
        seq = self.streams.length(viewer)
        return b'{"type":"view","seq":%d,"view":%b}' % (seq, self.streams.view_json(viewer))

    async def subscribe(
        self, sub: Subscriber, since: int | None, welcome: dict[str, Any]
    ) -> str | None:
        """Send the welcome (with the viewer's view now) and every update of the viewer's
        stream after `since` (None: none, from now on), then the live ones; or say why
        not (a `since` beyond the stream)."""
        async with self.lock:
            if self.released and not self.current.ended and not self.hub.keep(self):
                return "the match was loaded again here meanwhile: say hello again"
            try:
                feed = self._held_back(sub.viewer)
                if feed is not None:
                    frames = feed.subscribe(sub, since, welcome, now_ms(), sub.with_view)
                else:
                    frames = self.core.subscribe(sub, sub.viewer, since, welcome, sub.with_view)
            except SinceOutOfRange as exc:
                return str(exc)
            self.touch()
            sub.queue.push(frames.welcome, bounded=False)
            sub.queue.push_catch_up(frames.catch_up)
            self._release_delayed()
        return None

    def unsubscribe(self, sub: Subscriber) -> None:
        self.core.unsubscribe(sub)
        if self.delayed is not None:
            self.delayed.unsubscribe(sub)
        self.touch()
        if self.core.idle:  # over, and its last viewer gone: kept a while (a reconnection)
            self.hub.linger(self)

    # -- appending -------------------------------------------------------------------------

    async def seat_of(self, token: str) -> int | None:
        digest = token_digest(token)
        if digest not in self.tokens:
            seat = await self.store.seat_for_token(self.match_id, digest)
            if seat is None:
                return None
            self.tokens[digest] = seat
        return self.tokens[digest]

    async def submit(
        self,
        *,
        kind: engine.EntryKind,
        seat: int | None,
        key: str,
        body: Any,
        cid: str | None = None,
        token_hash: str | None = None,
        command: Any = None,
    ) -> Submitted | None:
        """Decide (MatchCore.propose) and append one entry; None for a tick that found
        nothing due. What is answered without being appended is answered at once.

        The lock is held while the entry is decided and its append begun, not through
        the append: on an `ordered` store the match's next command is decided on this
        one meanwhile and its append begun right behind it (the store tries them in
        that order, each on the head of the one before), so the two seats of a round
        go to the store in one batch and their updates to each player in one write.
        Entries are folded in the order they were decided, each once its append and
        those before it are settled. An append that fails (another process appended
        first, a duplicate key, the store away) takes the entries decided on it with
        it; each of their commands is decided again after a catch-up."""
        failed: _Unfolded | None = None
        lock = self.lock
        for _ in range(20):
            # (`async with lock`, but taken at once when it is free: lock.take_now)
            if not lock.take_now():
                await lock.acquire()
            try:
                if failed is not None:
                    found = await self._after_failure(failed)
                    if found is not None:
                        return found
                if not self.store.ordered:  # (appends tried in any order: one at a time)
                    await self._settled()
                while True:
                    decided = self.core.propose(
                        kind=kind, seat=seat, cid=cid, body=body, now=now_ms(), command=command
                    )
                    if decided is None:
                        return None
                    if not isinstance(decided, Answer):
                        break
                    if not self._flights:
                        return decided.submitted
                    # An answer is final: it is decided on what the log holds, not on
                    # entries that may yet fail (none begins while the lock is held).
                    await self._settled()
                taken = decided.seat if token_hash is not None else None
                outcome = self.store.begin_append(
                    self.match_id,
                    decided.entry,
                    expected_head=decided.expected_head,
                    key=key,
                    token_hash=token_hash if taken is not None else None,
                    seat=taken,
                    encoded=decided.raw,
                )
                self.core.begin(decided)
                after = self._flights[-1] if self._flights else None
                loop = self._loop
                if loop is None:
                    loop = self._loop = asyncio.get_running_loop()
                settled: asyncio.Future[None] = loop.create_future()
                self._flights = (*self._flights, settled)
            finally:
                lock.release()
            landed = await self._land(decided, outcome, after, settled, token_hash, taken)
            if isinstance(landed, Submitted):
                return landed
            failed = landed
            if failed.result.status != "ok":
                self.hub.metrics.append_retries.inc()
        raise Busy(f"match {self.match_id} is too busy; try again")

    async def _land(
        self,
        decided: Append,
        outcome: Coroutine[Any, Any, Appended],
        after: asyncio.Future[None] | None,
        settled: asyncio.Future[None],
        token_hash: str | None,
        taken: int | None,
    ) -> Submitted | _Unfolded:
        """Await the append of `decided` begun by `submit`, and the entries begun before
        it (`after`: the last one's settling); then fold and deliver it. What is not
        answered here is the caller's to catch up on (see _Unfolded)."""
        started = time.perf_counter()
        metrics = self.hub.metrics
        try:
            result = await outcome
            metrics.append_seconds.observe(time.perf_counter() - started)
            if after is not None and not after.done():
                await asyncio.shield(after)
            first = self.core.next_begun is decided
            if result.status != "ok":
                self.core.drop(decided)
                # (not the first: the entry it was decided on did not land, hence this)
                conflict = first and result.status == "conflict"
                if conflict:
                    metrics.append_conflicts.inc()
                return _Unfolded(decided, result, conflict)
            if token_hash is not None and taken is not None:
                self.tokens[token_hash] = taken
            if first:
                assert result.stream_id is not None
                done, folded = self.core.appended(result.stream_id, decided)
                if folded.round_ms is not None:
                    metrics.round_ended(self.hosted.rules.name, folded.round_ms)
                self._deliver(folded, own=True)
            else:  # read from the store meanwhile, or one before it was given up on
                landed = self.core.landed(decided)
                if landed is None:
                    return _Unfolded(decided, result, False)
                done = landed
            if decided.entry.kind != "tick":
                self.touch()
            return done
        except BaseException:
            self.core.drop(decided)  # (its entry, if the store has it, is read from there)
            raise
        finally:
            flights = self._flights
            # (settled in the order begun, but for a failure: most often the first)
            self._flights = flights[1:] if flights and flights[0] is settled else tuple(
                f for f in flights if f is not settled
            )
            if not settled.done():
                settled.set_result(None)

    async def _settled(self) -> None:
        """Wait until every append begun is settled (see submit)."""
        while self._flights:
            await asyncio.shield(self._flights[-1])

    async def _after_failure(self, failed: _Unfolded) -> Submitted | None:
        """Under the lock, after an append that was not folded (see `_land`): catch up
        with the store, and answer the command if the store holds it (a duplicate key,
        or an append that landed unfolded)."""
        await self._catch_up_locked(conflict=failed.conflict)
        if failed.result.status == "ok":
            landed = self.core.landed(failed.decided)  # (None: not read yet; tried again, a dup)
            if landed is not None and failed.decided.entry.kind != "tick":
                self.touch()
            return landed
        if self.expired is not None:
            raise MatchExpired(self.match_id, self.expired)
        if failed.result.status == "dup":
            assert failed.result.seq is not None
            return self.core.duplicate(failed.result.seq)
        return None

    # -- background --------------------------------------------------------------------------

    def take(self, items: list[tuple[str, bytes]]) -> bool:
        """Entries the follower read from the stream: fold those not folded yet. Whether
        any was news to this process (not only its own appends: see Follower).

        Most are this process's own appends, already folded: they are skipped by stream
        id before being decoded. New ones are folded now, or after the append in flight
        if there is one (under the lock)."""
        fresh = self.core.unseen(items)
        if not fresh:
            return False
        # The follower often reads appends of this process before their replies are in:
        # those entries (the same bytes) are folded by the appends themselves, and need
        # no task waiting for the lock (a few per cent of a command's CPU). Only when
        # they are all that is new: entries after them (another process's, decided on
        # them) are folded after them, in order (the core folds those it had begun as
        # its own, whatever becomes of their replies).
        if self._flights and self.core.all_begun(fresh):
            return False
        if self.lock.locked():
            self.reading = fresh[-1][0]
            self.hub.spawn(self._take_locked(fresh))
            return True
        self._take_now(fresh)
        return True

    async def _take_locked(self, fresh: list[tuple[str, bytes]]) -> None:
        async with self.lock:
            self.reading = None
            self._take_now(fresh)

    def _take_now(self, fresh: list[tuple[str, bytes]]) -> None:
        before = self.current.seq
        folded = self.core.receive(fresh)
        self._others_folded(before)
        if self.current.seq > before:  # the newest entry, by its appender's clock
            self.hub.metrics.follow_lag.observe(max(0, now_ms() - self.core.times[-1]) / 1000)
        self._deliver(folded)
        if folded.error is not None or folded.behind:
            self.hub.follower.pause(self, 5.0)
            self.hub.spawn(self._verify(folded.error))

    # The clock: when a deadline passes, a `tick` keyed by it is appended. A timer (not a
    # task woken by every entry) waits for the deadline; it is re-armed when it moves.

    def _arm_clock(self, *, again: bool = False) -> None:
        """Have the timer ring by the next deadline. A deadline that moves later (a new
        round's) keeps the timer armed for the earlier one, which finds it early and
        waits for the rest: re-arming a timer at every round was 1-2% of a command's CPU."""
        if not self._running:
            return
        due = self.core.deadline()
        if due == self._clock_due and not again:
            return
        self._clock_due = due
        if self._clock_timer is not None:
            if due is not None and self._timer_due <= due and not again:
                return
            self._clock_timer.cancel()
            self._clock_timer = None
        if due is None:
            return
        delay = max(0.0, (due - now_ms()) / 1000)
        self._timer_due = due
        self._clock_timer = asyncio.get_running_loop().call_later(delay, self._clock_rings)

    def _clock_rings(self) -> None:
        self._clock_timer = None
        due = self._clock_due
        if not self._running or due is None:
            return
        if due > now_ms():  # early (by the wall clock, or the deadline moved): wait for the rest
            self._arm_clock(again=True)
        elif self._ticking is None:  # else the tick in flight re-arms the clock when done
            self._ticking = asyncio.create_task(self._tick(due), name=f"tick {self.match_id}")

    async def _tick(self, due: int) -> None:
        try:
            await self.submit(
                kind="tick", seat=None, key=f"tick:{due}", cid=f"tick:{due}", body={"deadline": due}
            )
            self._tick_failures = 0
        except asyncio.CancelledError:
            if self._ticking is asyncio.current_task():
                self._ticking = None
            raise
        except Exception as exc:
            # Said once, not at every try, while the store is away; tried again after
            # 0.2 s, then less and less often, at the longest every 5 s.
            if not self._tick_failures:
                log.warning("tick_error", match=self.match_id, error=repr(exc))
            if isinstance(exc, UNAVAILABLE):
                self.hub.metrics.redis_error("tick")
            await asyncio.sleep(min(5.0, 0.2 * 2**self._tick_failures))
            self._tick_failures += 1
        if self._ticking is asyncio.current_task():
            self._ticking = None
        self._arm_clock(again=True)


async def _finished(task: asyncio.Task[None]) -> None:
    """Wait for a cancelled task to end."""
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


class UnknownMatch(Exception):
    pass


class MatchExpired(UnknownMatch):
    """The match expired (server/expiry.py); `record` says why."""

    def __init__(self, match_id: str, record: dict[str, Any]) -> None:
        super().__init__(match_id)
        self.record = record

    def __str__(self) -> str:
        return expired_message(self.record)


class Hub:
    """This process's match runners."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self.runners: dict[str, MatchRunner] = {}
        # Matches being loaded, each once however many ask for it; gone once loaded.
        self._loading: dict[str, asyncio.Future[MatchRunner]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self.follower = Follower(self)
        self._key: ServerKey | None = None
        self.receipts: Batch | None = None  # see `key`
        self.limits = Limits(settings)  # shared rate limits (server/limits.py)
        self.replays = ReplayCache(settings.replay_cache_bytes)  # (server/replays.py)
        # Finished matches nobody follows that requests used, the least recently used
        # first (see linger).
        self._lingering: collections.OrderedDict[str, MatchRunner] = collections.OrderedDict()
        self.expiry = Expiry(self)
        # Unfinished matches found at start-up and not followed yet (None: not listed yet).
        self.to_resume: int | None = None
        self._sweeper: asyncio.Task[None] | None = None  # lets go of idle runners
        self.metrics = Metrics(self)  # GET /metrics (server/metrics.py)

    @property
    def key(self) -> ServerKey | None:
        """The key that signs receipts (the app loads it: server/keys.py). The receipts of
        the checkpoints reached in one turn of the event loop are signed together
        (`receipts`, a Batch signing at the next turn): under load many matches end a
        round in a turn, and one Ed25519 signature (20 us) is a sixth of a command's
        server CPU when each round's receipt has its own."""
        return self._key

    @key.setter
    def key(self, key: ServerKey | None) -> None:
        self._key = key
        self.receipts = None if key is None else Batch(key, schedule=asyncio.get_running_loop().call_soon)

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def runner(self, match_id: str) -> MatchRunner:
        """The match's runner, loaded from the store if this process has none (once,
        however many ask at the same time); UnknownMatch if there is no such match."""
        found = self.runners.get(match_id)
        if found is not None:
            found.touch()
            return found
        loading = self._loading.get(match_id)
        if loading is None:
            loading = self._loading[match_id] = asyncio.ensure_future(self._load(match_id))
            loading.add_done_callback(lambda done: self._loaded(match_id, done))
        # Shielded: one caller that gives up does not cancel the load for the others.
        return await asyncio.shield(loading)

    async def _load(self, match_id: str) -> MatchRunner:
        entries = await self.store.read(match_id)
        if not entries:
            record = await self.store.expired(match_id)
            if record is not None:
                raise MatchExpired(match_id, record)
            raise UnknownMatch(match_id)
        runner = MatchRunner(self, match_id, entries)
        runner.start()
        self.runners[match_id] = runner
        if self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep(), name="release idle runners")
        return runner

    def _loaded(self, match_id: str, done: asyncio.Future[MatchRunner]) -> None:
        if self._loading.get(match_id) is done:
            del self._loading[match_id]
        if not done.cancelled():
            done.exception()  # retrieved: its callers have it, if any is left

    def linger(self, runner: MatchRunner) -> None:
        """A finished match nobody follows, that a request or a viewer used: it stays
        loaded until the sweep lets go of it (unused for its grace), so that the next
        request or hello (a poll, a reconnection, a crowd after a famous match) does not
        fold its whole log again; `Settings.finished_kept` of them at most, the least
        recently used let go of first."""
        lingering = self._lingering
        lingering[runner.match_id] = runner
        lingering.move_to_end(runner.match_id)
        while len(lingering) > self.settings.finished_kept:
            match_id, oldest = lingering.popitem(last=False)
            if not oldest.subscribers:
                self.forget(match_id, oldest)

    def forget(self, match_id: str, runner: MatchRunner) -> None:
        """Let go of a runner: it stops, and nothing of its match stays in the process
        (once the requests that hold it are done). A later request loads it again."""
        if self._lingering.get(match_id) is runner:
            del self._lingering[match_id]
        if self.runners.get(match_id) is runner:
            del self.runners[match_id]
            runner.released = True
            ticking = runner.halt()
            if ticking is not None:
                self.spawn(_finished(ticking))

    def keep(self, runner: MatchRunner) -> bool:
        """Take back a runner let go of while a request still held it (a viewer says
        hello to it): it runs again, from where it stopped. False if another runner of
        its match has been loaded meanwhile."""
        if not runner.released:
            return True
        if runner.match_id in self.runners or runner.match_id in self._loading:
            return False
        runner.released = False
        self.runners[runner.match_id] = runner
        runner.start()
        return True

    async def _sweep(self) -> None:
        """Let go of the runners nobody uses (MatchRunner.releasable): a finished match
        nobody views, within a few seconds; an unfinished one that only other processes have played
        since this one last used it, after `Settings.runner_idle` seconds."""
        every = min(self.settings.runner_idle / 2, 5.0)
        while True:
            await asyncio.sleep(every)
            self._release_idle(grace=every)

    def _release_idle(self, grace: float) -> None:
        # Apart from _sweep, so that no runner let go of stays referred to by its frame.
        now, idle = time.monotonic(), self.settings.runner_idle
        for match_id, runner in list(self.runners.items()):
            if runner.releasable(now, idle, grace=grace):
                log.debug("runner_released", match=match_id, ended=runner.current.ended)
                self.forget(match_id, runner)

    async def create_match(
        self,
        game: str,
        variant: str | None,
        options: Mapping[str, Any],
        match_id: str | None = None,
    ) -> MatchState:
        """A new match; with `match_id` (a creation under an idempotency key, server/app.py)
        that one, or the match created under that id already."""
        rules = hosted(game).rules
        wanted = match_id
        options, own = split_match_options(options)  # a spectator delay: server/delay.py
        for _ in range(5):
            match_id = wanted or new_match_id()
            entry = record(engine.create_entry(
                rules, match_id=match_id, variant=variant, options=options,
                seed=os.urandom(32), ts=now_ms(), audit_key=os.urandom(32),
            ), own)
            if await self.store.create(match_id, entry):
                runner = await self.runner(match_id)
                log.info("match_created", match=match_id, game=game, variant=runner.current.variant)
                self.metrics.match("created")
                return runner.current
            if wanted is not None:  # created by an earlier request under the same key
                return (await self.runner(wanted)).current
        raise RuntimeError("could not find a free match id")

    async def resume_active(self) -> None:
        """Follow every unfinished match in Redis again, so their clocks run here.

        Run in the background from start-up: the server serves meanwhile (a match asked
        for first is loaded at once); `to_resume` counts the matches still to come. While
        Redis cannot be reached the list is asked for again, less and less often."""
        started = time.monotonic()
        delay = 0.5
        while True:
            try:
                matches = await self.store.active()
                break
            except UNAVAILABLE as exc:
                log.warning("resume_waiting", error=repr(exc), retry_s=delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)
        self.to_resume = len(matches)
        for match_id in matches:
            try:
                runner = await self.runner(match_id)
                if runner.current.ended:
                    await self.store.mark_over(match_id)
                    self.forget(match_id, runner)
            except UnknownMatch:  # expired, its id left behind by a process that stopped
                await self.store.mark_over(match_id)
            except Exception as exc:
                log.error("resume_failed", match=match_id, error=repr(exc))
            finally:
                self.to_resume -= 1
        log.info("resumed", matches=len(matches), seconds=round(time.monotonic() - started, 2))

    async def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        await self.follower.stop()
        for runner in list(self.runners.values()):
            await runner.stop()
        self.runners.clear()
        for task in list(self._background):
            task.cancel()
