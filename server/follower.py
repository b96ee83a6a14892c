"""The follower: one reader of what other processes append to the matches followed here."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from server import logs
from server.core import sid_order

if TYPE_CHECKING:
    from server.hub import Hub, MatchRunner

log = logs.get("daedalus.hub")


async def cancel_and_wait(task: asyncio.Task[None]) -> None:
    """Cancel `task` and wait until it has ended, cancelling again while it runs on.

    One cancellation is not always enough: on Python 3.11, `asyncio.wait_for` returns the
    result of a future that completes as the cancellation arrives and drops the
    cancellation, and a read that then waits again without a timeout (fakeredis's blocking
    reads do) would never end, nor would a shutdown waiting for it."""
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=0.1)
    if not task.cancelled():
        task.exception()  # retrieved, so an error at shutdown is not reported as lost


class Follower:
    """Reads what other processes append to the matches this process follows.

    One blocking XREAD over every followed match's stream (not one per match), from
    each runner's last folded entry. Its own appends wake it too; under load it reads
    again at most every MIN_INTERVAL seconds, so one read brings many entries instead
    of one read per append. A match that starts being followed ends a blocked read
    (CLIENT UNBLOCK), so its entries are read from then on without waiting.

    Under load most reads bring nothing new: what this process appends it folds from
    the append's reply, and another process's entries are read only where one appends
    to a match followed here (a spectator's, a player's on another worker). A read that
    brings only this process's own appends (a blocked read woken by one, as under a
    moderate load where the appends go one by one) brings nothing new either. After
    PATIENCE reads in a row that brought nothing new, each one more doubles the wait
    before the next, up to MAX_INTERVAL; a read that brings another process's entry, or
    a match newly followed, takes it back to MIN_INTERVAL. (Counting the own appends as
    news kept a process alone on its matches reading 150 times a second at 1,000
    commands/s, 39 since: a tenth of a command's instructions there, docs/performance.md.)
    So a process alone on its matches reads some 40 times a second under load, not 200
    (each read is an XREAD over every match followed here not appending, and the
    follower's walk over them: about 1% of a command's server CPU at K=200 in
    bench/load.py), while one that shares its matches with another keeps reading every
    MIN_INTERVAL; the first of another process's entries after a quiet spell of 20 ms or
    more waits at most MAX_INTERVAL. (An idle process waits in a blocking read, woken by
    the entry itself.)

    A match with an append of this process in flight is left out of the read: what
    the read would bring of it is, but for a race, that append's own entry, which its
    reply folds (reading it back was a twentieth of a command's instructions under
    load: docs/performance.md, "A ninth sitting"). What another process appended to it
    meanwhile is read once the append settles: an entry before it makes the append a
    conflict, caught up on at once; one after it is in the next read. A read that left
    a match out does not wait (the append's end would not end the wait): it answers at
    once, and the follower reads again after its interval, so such an entry is read
    within MAX_INTERVAL of the append's settling.
    """

    MIN_INTERVAL = 0.005
    MAX_INTERVAL = 0.025
    PATIENCE = 4  # reads in a row that bring nothing before the wait grows

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
        self._interval = self.MIN_INTERVAL  # the least time between two reads, now
        self._empty = 0  # reads in a row that brought nothing

    def add(self, runner: MatchRunner) -> None:
        self.runners[runner.match_id] = runner
        self._added.set()
        self._empty, self._interval = 0, self.MIN_INTERVAL
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="follower")
        elif self._reading and self._client_id is not None:
            self.hub.spawn(self._unblock(self._reading, self._client_id))

    def remove(self, runner: MatchRunner) -> None:
        """Follow `runner`'s match no more; the store drops what it keeps to read it."""
        if self.runners.get(runner.match_id) is runner:
            del self.runners[runner.match_id]
            self.paused.pop(runner.match_id, None)
            self.hub.store.forget(runner.match_id)

    def pause(self, runner: MatchRunner, seconds: float) -> None:
        self.paused[runner.match_id] = asyncio.get_running_loop().time() + seconds

    def resume(self, runner: MatchRunner) -> None:
        """Follow a paused match again now (a blocked read ends, as for a new match)."""
        if self.paused.pop(runner.match_id, None) is not None and self.runners.get(runner.match_id) is runner:
            self.add(runner)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            await cancel_and_wait(task)

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
        self.hub.metrics.redis_error("follow")
        if self._down_since is None:
            self._down_since = now
        if self._said_at is None or now - self._said_at >= 30:
            self._said_at = now
            log.warning("tail_error", error=repr(exc), down_s=round(now - self._down_since, 1))

    def _positions(self, now: float) -> tuple[dict[str, str], bool]:
        """Where to read each followed match from, and whether a match was left out for
        its append in flight (see the class)."""
        positions = {}
        appending = False
        for match_id, runner in self.runners.items():
            until = self.paused.get(match_id)
            if until is not None:
                if now < until:
                    continue
                del self.paused[match_id]
            if runner.appending:
                appending = True
                continue
            sid = runner.stream_id
            if runner.reading is not None and sid_order(runner.reading) > sid_order(sid):
                sid = runner.reading
            positions[match_id] = sid
        return positions, appending

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
                        # A store that restarted may have lost what it had acknowledged.
                        for held in list(self.hub.runners.values()):
                            self.hub.spawn(held.check_log())
                positions, appending = self._positions(started)
                if not positions and appending:  # (only matches with appends in flight)
                    await asyncio.sleep(self._interval)
                    continue
                if not positions:  # nothing to follow (or only paused matches): wait
                    self._added.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._added.wait(), 1.0 if self.paused else None)
                    continue
                self._reads += 1
                self._reading = self._reads
                try:
                    found = await store.follow(positions, None if appending else block_ms)
                finally:
                    self._reading = 0
                news = False  # (an entry of another process's: see the class)
                for match_id, items in found.items():
                    runner = self.runners.get(match_id)
                    if runner is not None and runner.take(items):
                        news = True
                if news:
                    self._empty, self._interval = 0, self.MIN_INTERVAL
                else:
                    self._empty += 1
                    if self._empty >= self.PATIENCE:
                        self._interval = min(self.MAX_INTERVAL, 2 * self._interval)
                # Not held through the next read: a runner let go of meanwhile is freed.
                runner = found = None  # type: ignore[assignment]
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the store went away: keep trying
                self._client_id = None
                self._failing(loop.time(), exc)
                await asyncio.sleep(0.5)
                continue
            rest = self._interval - (loop.time() - started)
            if rest > 0:
                await asyncio.sleep(rest)
