"""Match runners: each folds one match's log in this process and serves its viewers.

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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import msgspec

from domain import engine
from domain.engine import Entry, MatchState, Outcome
from projections.common import match_view
from projections.contract import Viewer
from projections.registry import Hosted, hosted
from server import logs
from server.config import Settings
from server.ids import new_match_id
from server.store import UNAVAILABLE, EventStore
from server.streams import Streams

log = logs.get("daedalus.hub")
_encode = msgspec.json.Encoder().encode
_entry_decoder = msgspec.json.Decoder(Entry)
# A runner keeps the state after every CHECKPOINT-th entry (see MatchRunner._history).
CHECKPOINT = 32


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class SendQueue:
    """A viewer's outgoing frames: bounded for live traffic, not for its own catch-up."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._items: collections.deque[bytes | None] = collections.deque()
        self._ready = asyncio.Event()
        self.overflowed = asyncio.Event()

    def push(self, frame: bytes, *, bounded: bool = True) -> None:
        if self.overflowed.is_set():
            return
        if bounded and len(self._items) >= self.limit:
            self.overflowed.set()
            self._items.clear()
            self._items.append(None)
            self._ready.set()
            return
        self._items.append(frame)
        self._ready.set()

    def close(self) -> None:
        self._items.append(None)
        self._ready.set()

    async def get(self) -> bytes | None:
        while not self._items:
            self._ready.clear()
            await self._ready.wait()
        return self._items.popleft()


@dataclass(eq=False)
class Subscriber:
    viewer: Viewer
    queue: SendQueue


@dataclass(frozen=True)
class Submitted:
    seq: int
    outcome: Outcome
    duplicate: bool


class Busy(Exception):
    pass


class MatchRunner:
    def __init__(self, hub: Hub, match_id: str, entries: list[tuple[str, Entry]]) -> None:
        self.hub = hub
        self.store = hub.store
        self.match_id = match_id
        first = entries[0][1]
        self.hosted: Hosted = hosted(first.body["game"])
        ms = engine.open_match(self.hosted.rules, first)
        # The match's history, kept small for the garbage collector: every entry as its
        # JSON bytes, the state after every CHECKPOINT-th entry, and the latest state and
        # outcome. A past entry's state and outcome are folded again from the checkpoint
        # before it (see _history): only a catch-up needs them. (Keeping every state kept
        # about a dozen tracked objects per entry alive, and the cycle collector's pauses
        # grew with them.)
        self._entries: list[bytes] = [_encode(first)]
        self.times: list[int] = [first.ts]
        self.streams = Streams(self.hosted.views, self._history, self.times, lambda: self._current)
        self._checkpoints: dict[int, MatchState] = {1: ms}
        self._current = ms
        self._outcome = Outcome()
        self._cursor: tuple[int, MatchState, Outcome] | None = None
        self.stream_id = entries[0][0]
        self.lock = asyncio.Lock()
        self.subscribers: set[Subscriber] = set()
        self.tokens: dict[str, int] = {}
        # The clock: a timer armed for the next deadline (re-armed when it moves), and the
        # tick being appended, if any.
        self._running = False
        self._clock_due: int | None = None
        self._clock_timer: asyncio.TimerHandle | None = None
        self._ticking: asyncio.Task[None] | None = None
        self._tick_failures = 0  # ticks that failed in a row (the store away)
        # The stream id up to which the follower has handed entries still to be folded.
        self.reading: str | None = None
        for sid, entry in entries[1:]:
            self._fold(sid, entry, broadcast=False)

    # -- state ---------------------------------------------------------------------------

    @property
    def current(self) -> MatchState:
        return self._current

    @property
    def states(self) -> Sequence[MatchState]:
        """The state after each entry (states[seq - 1]), folded again when asked for."""
        return _Folded(self, 0)

    @property
    def outcomes(self) -> Sequence[Outcome]:
        """The outcome of each entry (outcomes[seq - 1]), folded again when asked for."""
        return _Folded(self, 1)

    def _history(self, first: int) -> Iterator[tuple[int, MatchState, Outcome]]:
        """(seq, state after it, its outcome) for every entry from `first` on."""
        last = self._current.seq
        if first > last:
            return
        if first == last:
            yield last, self._current, self._outcome
            return
        cursor = self._cursor  # where the last refold stopped: catch-ups go forward
        if cursor is not None and first - CHECKPOINT < cursor[0] <= first:
            seq, ms, outcome = cursor
            if seq == first:
                yield cursor
        elif first == 1:
            seq, ms, outcome = 1, self._checkpoints[1], Outcome()
            yield seq, ms, outcome
        else:
            seq = max(1, (first - 1) // CHECKPOINT * CHECKPOINT)
            ms, outcome = self._checkpoints[seq], Outcome()
        while seq < last:
            entry = _entry_decoder.decode(self._entries[seq])
            new, outcome = engine.step(ms, kind=entry.kind, seat=entry.seat, body=entry.body, ts=entry.ts)
            ms = msgspec.structs.replace(new, seq=entry.seq, head=entry.digest)  # as engine.apply
            seq += 1
            if seq >= first:
                self._cursor = (seq, ms, outcome)
                yield seq, ms, outcome

    def _at(self, seq: int) -> tuple[MatchState, Outcome]:
        if seq == self._current.seq:
            return self._current, self._outcome
        for _seq, ms, outcome in self._history(seq):
            return ms, outcome
        raise IndexError(seq)

    def start(self) -> None:
        self._running = True
        self._arm_clock()
        if not self.current.ended:  # nothing is appended to a finished match
            self.hub.follower.add(self)

    async def stop(self) -> None:
        self._running = False
        self.hub.follower.remove(self)
        if self._clock_timer is not None:
            self._clock_timer.cancel()
            self._clock_timer = None
        if self._ticking is not None:
            self._ticking.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._ticking
        for sub in list(self.subscribers):
            sub.queue.close()

    def _fold(
        self, sid: str, entry: Entry, *, broadcast: bool = True, raw: bytes | None = None
    ) -> None:
        ms, outcome = engine.apply(self.current, entry)
        self._folded(sid, entry, ms, outcome, broadcast=broadcast, raw=raw)

    def _folded(
        self,
        sid: str,
        entry: Entry,
        ms: MatchState,
        outcome: Outcome,
        *,
        broadcast: bool = True,
        raw: bytes | None = None,
    ) -> None:
        was_over = self.current.ended
        self._entries.append(raw if raw is not None else _encode(entry))
        self.times.append(entry.ts)
        self._current, self._outcome = ms, outcome
        if ms.seq % CHECKPOINT == 0:
            self._checkpoints[ms.seq] = ms
        self.stream_id = sid
        self._arm_clock()
        if broadcast:
            self._broadcast(entry.seq, ms, outcome)
        if ms.ended and not was_over:
            log.info("match_over", match=self.match_id, winner=ms.result.winner if ms.result else None)
            self.hub.spawn(self.store.mark_over(self.match_id))
            if self._running:
                self.hub.follower.remove(self)

    async def _catch_up_locked(self) -> None:
        for sid, entry in await self.store.read(self.match_id, after=self.stream_id):
            if entry.seq <= self.current.seq:
                continue
            self._fold(sid, entry)

    # -- what viewers receive ----------------------------------------------------------------

    def _broadcast(self, seq: int, ms: MatchState, outcome: Outcome) -> None:
        cache: dict[Viewer, bytes | None] = {}
        for sub in list(self.subscribers):
            if sub.viewer not in cache:
                cache[sub.viewer] = self.streams.live(sub.viewer, seq, ms, outcome)
            data = cache[sub.viewer]
            if data is not None:
                sub.queue.push(data)

    def view(self, viewer: Viewer) -> dict[str, Any]:
        return match_view(self.hosted.views, self.current, viewer)

    async def subscribe(
        self, sub: Subscriber, since: int | None, welcome: dict[str, Any]
    ) -> str | None:
        """Send the welcome (with the viewer's view now) and every update of the viewer's
        stream after `since` (None: none, from now on), then the live ones; or say why
        not (a `since` beyond the stream)."""
        async with self.lock:
            length = self.streams.length(sub.viewer)
            if since is None:
                since = length
            if not 0 <= since <= length:
                return f"since must be between 0 and {length}, the updates in your stream"
            view = self.streams.view(sub.viewer)
            sub.queue.push(_encode({**welcome, "seq": length, "view": view}), bounded=False)
            for frame in self.streams.backlog(sub.viewer, since, view):
                sub.queue.push(frame, bounded=False)
            self.subscribers.add(sub)
        return None

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)
        if not self.subscribers and self.current.ended:
            self.hub.forget(self.match_id, self)

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
    ) -> Submitted | None:
        """Decide and append one entry; None for a tick that found nothing due.

        A join or a command that the rules reject before the match starts or after it
        ends is answered without being appended (the log of a match stays its play)."""
        async with self.lock:
            for _ in range(20):
                ms = self.current
                entry, new, outcome = engine.propose(
                    ms, kind=kind, seat=seat, cid=cid, body=body, ts=now_ms()
                )
                if kind == "tick" and not outcome.events:
                    return None
                if outcome.rejection is not None and (kind == "join" or not ms.started or ms.ended):
                    return Submitted(0, outcome, False)
                taken = None
                if kind == "join" and token_hash is not None:
                    taken = next(e.seat for e in outcome.events if isinstance(e, engine.SeatTaken))
                result = await self.store.append(
                    self.match_id,
                    entry,
                    expected_head=f"{ms.seq}:{ms.head}",
                    key=key,
                    token_hash=token_hash if taken is not None else None,
                    seat=taken,
                )
                if result.status == "ok":
                    assert result.stream_id is not None
                    if token_hash is not None and taken is not None:
                        self.tokens[token_hash] = taken
                    self._folded(result.stream_id, entry, new, outcome)
                    return Submitted(entry.seq, outcome, False)
                await self._catch_up_locked()
                if result.status == "dup":
                    assert result.seq is not None
                    if result.seq <= self.current.seq:
                        return Submitted(result.seq, self._at(result.seq)[1], True)
            raise Busy(f"match {self.match_id} is too busy; try again")

    # -- background --------------------------------------------------------------------------

    def take(self, items: list[tuple[str, bytes]]) -> None:
        """Entries the follower read from the stream: fold those not folded yet.

        Most are this process's own appends, already folded: they are skipped by stream
        id before being decoded. New ones are folded now, or after the append in flight
        if there is one (under the lock)."""
        last = sid_order(self.stream_id)
        fresh = [(sid, raw) for sid, raw in items if sid_order(sid) > last]
        if not fresh:
            return
        if self.lock.locked():
            self.reading = fresh[-1][0]
            self.hub.spawn(self._take_locked(fresh))
            return
        self._take_now(fresh)

    async def _take_locked(self, fresh: list[tuple[str, bytes]]) -> None:
        async with self.lock:
            self.reading = None
            self._take_now(fresh)

    def _take_now(self, fresh: list[tuple[str, bytes]]) -> None:
        try:
            for sid, raw in fresh:
                entry = self.store.decode(raw)
                if entry.seq > self.current.seq:
                    self._fold(sid, entry, raw=raw)
        except engine.IntegrityError as exc:
            log.error("log_integrity", match=self.match_id, error=str(exc))
            self.hub.follower.pause(self, 5.0)

    # The clock: when a deadline passes, a `tick` keyed by it is appended. A timer (not a
    # task woken by every entry) waits for the deadline; it is re-armed when it moves.

    def _arm_clock(self, *, again: bool = False) -> None:
        if not self._running:
            return
        due = engine.deadline(self.current)
        if due == self._clock_due and not again:
            return
        self._clock_due = due
        if self._clock_timer is not None:
            self._clock_timer.cancel()
            self._clock_timer = None
        if due is None:
            return
        delay = max(0.0, (due - now_ms()) / 1000)
        self._clock_timer = asyncio.get_running_loop().call_later(delay, self._clock_rings, due)

    def _clock_rings(self, due: int) -> None:
        self._clock_timer = None
        if not self._running or due != self._clock_due:
            return
        if due > now_ms():  # early by the wall clock: wait for the rest
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
            self._ticking = None
            raise
        except Exception as exc:
            # Said once, not at every try, while the store is away; tried again after
            # 0.2 s, then less and less often, at the longest every 5 s.
            if not self._tick_failures:
                log.warning("tick_error", match=self.match_id, error=repr(exc))
            await asyncio.sleep(min(5.0, 0.2 * 2**self._tick_failures))
            self._tick_failures += 1
        self._ticking = None
        self._arm_clock(again=True)


class _Folded(Sequence[Any]):
    """A runner's states (pick 0) or outcomes (pick 1) by position, as a sequence.

    The latest is at hand; an earlier one is folded again from the checkpoint before
    it, and going forward from the last one asked for costs one step each."""

    def __init__(self, runner: MatchRunner, pick: int) -> None:
        self._runner = runner
        self._pick = pick

    def __len__(self) -> int:
        return self._runner.current.seq

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(index)
        return self._runner._at(index + 1)[self._pick]

    def __iter__(self) -> Iterator[Any]:
        for _seq, ms, outcome in self._runner._history(1):
            yield (ms, outcome)[self._pick]


def sid_order(sid: str) -> tuple[int, int]:
    """A Redis stream id ("<ms>-<n>") as a sortable pair."""
    ms, _, n = sid.partition("-")
    return int(ms), int(n or 0)


class Follower:
    """Reads what other processes append to the matches this process follows.

    One blocking XREAD over every followed match's stream (not one per match), from
    each runner's last folded entry. Its own appends wake it too; under load it reads
    again at most every MIN_INTERVAL seconds, so one read brings many entries instead
    of one read per append. A match that starts being followed ends a blocked read
    (CLIENT UNBLOCK), so its entries are read from then on without waiting.
    """

    MIN_INTERVAL = 0.005

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.runners: dict[str, MatchRunner] = {}
        self.paused: dict[str, float] = {}  # match -> loop time it is followed again
        self._added = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._client_id: int | None = None
        self._reading = 0  # the number of the read in flight (0: none)
        self._reads = 0
        self._down_since: float | None = None  # loop time of the first failed read
        self._said_at: float | None = None  # when that was last logged

    def add(self, runner: MatchRunner) -> None:
        self.runners[runner.match_id] = runner
        self._added.set()
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="follower")
        elif self._reading and self._client_id is not None:
            self.hub.spawn(self._unblock(self._reading, self._client_id))

    def remove(self, runner: MatchRunner) -> None:
        if self.runners.get(runner.match_id) is runner:
            del self.runners[runner.match_id]
            self.paused.pop(runner.match_id, None)

    def pause(self, runner: MatchRunner, seconds: float) -> None:
        self.paused[runner.match_id] = asyncio.get_running_loop().time() + seconds

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    async def _unblock(self, reading: int, client_id: int) -> None:
        # The read may not have reached Redis yet: try again while it is the one in flight.
        for delay in (0.0, 0.002, 0.01, 0.05, 0.2):
            await asyncio.sleep(delay)
            if self._reading != reading:
                return
            with contextlib.suppress(Exception):
                if await self.hub.store.unblock(client_id):
                    return

    def _failing(self, now: float, exc: Exception) -> None:
        """A failed read: said at once, then every 30 s while the store stays away."""
        if self._down_since is None:
            self._down_since = now
        if self._said_at is None or now - self._said_at >= 30:
            self._said_at = now
            log.warning("tail_error", error=repr(exc), down_s=round(now - self._down_since, 1))

    def _positions(self, now: float) -> dict[str, str]:
        positions = {}
        for match_id, runner in self.runners.items():
            until = self.paused.get(match_id)
            if until is not None:
                if now < until:
                    continue
                del self.paused[match_id]
            sid = runner.stream_id
            if runner.reading is not None and sid_order(runner.reading) > sid_order(sid):
                sid = runner.reading
            positions[match_id] = sid
        return positions

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        store = self.hub.store
        block_ms = self.hub.settings.tail_block_ms
        while True:
            started = loop.time()
            try:
                if self._client_id is None:
                    self._client_id = await store.follows_id()
                    if self._down_since is not None:  # the store answers again
                        log.info("tail_recovered", after_s=round(loop.time() - self._down_since, 1))
                        self._down_since = self._said_at = None
                positions = self._positions(started)
                if not positions:  # nothing to follow (or only paused matches): wait
                    self._added.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._added.wait(), 1.0 if self.paused else None)
                    continue
                self._reads += 1
                self._reading = self._reads
                try:
                    found = await store.follow(positions, block_ms)
                finally:
                    self._reading = 0
                for match_id, items in found.items():
                    runner = self.runners.get(match_id)
                    if runner is not None:
                        runner.take(items)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the store went away: keep trying
                self._client_id = None
                self._failing(loop.time(), exc)
                await asyncio.sleep(0.5)
                continue
            rest = self.MIN_INTERVAL - (loop.time() - started)
            if rest > 0:
                await asyncio.sleep(rest)


class UnknownMatch(Exception):
    pass


class Hub:
    """This process's match runners."""

    def __init__(self, store: EventStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self.runners: dict[str, MatchRunner] = {}
        self._loading: dict[str, asyncio.Lock] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self.follower = Follower(self)
        # Unfinished matches found at start-up and not followed yet (None: not listed yet).
        self.to_resume: int | None = None

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def runner(self, match_id: str) -> MatchRunner:
        found = self.runners.get(match_id)
        if found is not None:
            return found
        lock = self._loading.setdefault(match_id, asyncio.Lock())
        async with lock:
            found = self.runners.get(match_id)
            if found is not None:
                return found
            entries = await self.store.read(match_id)
            if not entries:
                raise UnknownMatch(match_id)
            runner = MatchRunner(self, match_id, entries)
            runner.start()
            self.runners[match_id] = runner
            return runner

    def forget(self, match_id: str, runner: MatchRunner) -> None:
        if self.runners.get(match_id) is runner:
            del self.runners[match_id]
            self.spawn(runner.stop())

    async def create_match(
        self, game: str, variant: str | None, options: Mapping[str, Any]
    ) -> MatchState:
        rules = hosted(game).rules
        for _ in range(5):
            match_id = new_match_id()
            entry = engine.create_entry(
                rules, match_id=match_id, variant=variant, options=options,
                seed=os.urandom(32), ts=now_ms(),
            )
            if await self.store.create(match_id, entry):
                runner = await self.runner(match_id)
                log.info("match_created", match=match_id, game=game, variant=runner.current.variant)
                return runner.current
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
            except Exception as exc:
                log.error("resume_failed", match=match_id, error=repr(exc))
            finally:
                self.to_resume -= 1
        log.info("resumed", matches=len(matches), seconds=round(time.monotonic() - started, 2))

    async def close(self) -> None:
        await self.follower.stop()
        for runner in list(self.runners.values()):
            await runner.stop()
        self.runners.clear()
        for task in list(self._background):
            task.cancel()
