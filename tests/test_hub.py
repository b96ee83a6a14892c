"""The hub (server/hub.py) without sockets: what a process keeps of a match, and when it
lets go of it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from projections.contract import Viewer
from server.config import Settings
from server.hub import Hub, MatchLock, MatchRunner, SendQueue, Subscriber, token_digest
from server.storage import MemoryStore, Store
from server.store import EventStore
from tests import toygame
from tests.conftest import RedisServer

toygame.install()


@pytest.fixture(params=["memory", "redis"])
async def hub(request: pytest.FixtureRequest) -> AsyncIterator[Hub]:
    store: Store
    if request.param == "memory":
        store = MemoryStore()
    else:
        server: RedisServer = request.getfixturevalue("real_redis")
        redis_store = EventStore.from_url(server.url)
        await redis_store.reads.flushdb()
        store = redis_store
    the_hub = Hub(store, Settings(tail_block_ms=200))
    yield the_hub
    await the_hub.close()
    await store.close()


def held(hub: Hub) -> dict[str, int]:
    """Everything this process keeps per match, counted."""
    counts = {
        "runners": len(hub.runners),
        "loading": len(hub._loading),
        "followed": len(hub.follower.runners),
        "paused": len(hub.follower.paused),
    }
    if isinstance(hub.store, EventStore):
        counts["key_args"] = len(hub.store._key_args)
        counts["append_keys"] = len(hub.store._append_keys)
    return counts


async def seated(hub: Hub) -> MatchRunner:
    ms = await hub.create_match("toy", None, {"turn_ms": 60_000})
    runner = await hub.runner(ms.match_id)
    for name in ("Ann", "Bob"):
        digest = token_digest(f"token-{name}-{ms.match_id}")
        await runner.submit(kind="join", seat=None, key=f"join:{digest}", body={"name": name},
                            token_hash=digest)
    assert runner.current.started
    return runner


async def play_to_the_end(runner: MatchRunner) -> None:
    n = 0
    while not runner.current.ended:
        n += 1
        seat = runner.current.game_state.turn
        await runner.submit(kind="command", seat=seat, key=f"c:{seat}:{n}", cid=str(n),
                            body={"type": "add", "n": 3})


async def settled(hub: Hub, pred: object, seconds: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while not pred() and loop.time() < end:  # type: ignore[operator]
        await asyncio.sleep(0.01)


async def test_nothing_of_a_match_stays_once_it_is_over_and_unfollowed(hub: Hub) -> None:
    """Matches that ended, whether watched to the end (the viewer leaves after: kept for
    a reconnection until the sweep), asked for over HTTP afterwards (loaded again, then
    let go), or ended with nobody watching: once over and unfollowed, and swept, the
    process holds nothing of any of them."""
    watched = []
    for _ in range(3):
        runner = await seated(hub)
        sub = Subscriber(Viewer(seat=0), SendQueue(1000))
        assert await runner.subscribe(sub, None, {"type": "welcome"}) is None
        watched.append((runner, sub))
    unwatched = [await seated(hub) for _ in range(3)]
    everyone = [r.match_id for r, _ in watched] + [r.match_id for r in unwatched]
    if isinstance(hub.store, EventStore):  # the follower has read every match's stream
        await settled(hub, lambda: set(hub.store._key_args) >= set(everyone))  # type: ignore[attr-defined]
    assert held(hub)["runners"] == held(hub)["followed"] == 6
    for runner, sub in watched:
        await play_to_the_end(runner)
        runner.unsubscribe(sub)
    for runner in unwatched:
        await play_to_the_end(runner)
    await settled(hub, lambda: not hub._background)
    assert set(hub.runners) == {r.match_id for r, _ in watched}  # (lingering)
    assert not hub.follower.runners
    hub._release_idle(grace=0.0)  # the sweep, once their grace is past
    await settled(hub, lambda: not hub._background)
    assert held(hub) == dict.fromkeys(held(hub), 0)
    for match_id in everyone:  # as GET /matches/{id} does: load, look, let go
        again = await hub.runner(match_id)
        assert again.current.ended
        hub.forget(match_id, again)
    await settled(hub, lambda: not hub._background)
    assert held(hub) == dict.fromkeys(held(hub), 0)


async def test_a_finished_match_whose_last_viewer_left_is_kept_for_a_reconnection(hub: Hub) -> None:
    """Failed before: the last viewer of a finished match leaving let go of it at once,
    so its reconnection (or anyone's hello, connection after connection) loaded it
    again, its whole log read and folded: 26 ms of the server's time a hello for a
    300-round Five-Card Trick. It stays until the sweep lets go of it."""
    runner = await seated(hub)
    sub = Subscriber(Viewer(seat=0), SendQueue(1000))
    assert await runner.subscribe(sub, None, {"type": "welcome"}) is None
    await play_to_the_end(runner)
    runner.unsubscribe(sub)
    assert hub.runners.get(runner.match_id) is runner
    assert await hub.runner(runner.match_id) is runner  # a hello again finds it
    hub._release_idle(grace=0.0)
    assert runner.match_id not in hub.runners


async def test_a_match_in_play_is_kept_with_nobody_watching(hub: Hub) -> None:
    """Its clock must run: unfinished, it is followed whether or not anyone watches."""
    runner = await seated(hub)
    sub = Subscriber(Viewer(seat=1), SendQueue(1000))
    await runner.subscribe(sub, None, {"type": "welcome"})
    runner.unsubscribe(sub)
    await asyncio.sleep(0.05)
    assert hub.runners == {runner.match_id: runner}
    assert hub.follower.runners == {runner.match_id: runner}
    assert await hub.runner(runner.match_id) is runner


async def test_the_clock_keeps_its_timer_for_a_later_deadline_and_rings_by_it(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deadline that moves later leaves the timer armed for the earlier one, which
    finds it early and waits for the rest; one that moves earlier re-arms it."""
    from server.hub import now_ms

    runner = await seated(hub)
    rang: list[int] = []

    async def tick(due: int) -> None:
        rang.append(due)
        runner._ticking = None

    monkeypatch.setattr(runner, "_tick", tick)
    due = now_ms() + 100
    monkeypatch.setattr(runner.core, "deadline", lambda: due)
    runner._arm_clock()
    timer = runner._clock_timer
    assert timer is not None
    due = now_ms() + 250  # later: the same timer
    runner._arm_clock()
    assert runner._clock_timer is timer
    await asyncio.sleep(0.15)
    assert rang == [] and runner._clock_timer is not timer  # rang early, armed again
    await asyncio.sleep(0.2)
    assert rang == [due]
    due = now_ms() + 60_000
    runner._arm_clock()
    timer = runner._clock_timer
    due = now_ms() + 50  # earlier: armed again for it
    runner._arm_clock()
    assert runner._clock_timer is not timer and timer is not None and timer.cancelled()
    await asyncio.sleep(0.15)
    assert rang[-1] == due


async def test_the_followers_read_of_an_append_in_flight_is_left_to_the_append(hub: Hub) -> None:
    """While appends are in flight, the follower may read their entries before the
    replies are in: those entries are the appends' to fold, and no task waits for the
    lock for them; entries read with one after them are folded in order (after the lock,
    if it is held)."""
    import msgspec

    from domain.engine import Outcome
    from server.core import Append

    runner = await seated(hub)
    spawned: list[str] = []

    def spawn(coro: Any) -> None:  # noted, not run
        spawned.append(coro.__qualname__)
        coro.close()

    hub.spawn = spawn  # type: ignore[method-assign]
    entry = runner.core.entry(runner.current.seq)
    later = msgspec.structs.replace(entry, seq=entry.seq + 1)
    state = msgspec.structs.replace(runner.current, seq=later.seq)
    async with runner.lock:
        begun = Append(later, state, Outcome(), f"{runner.current.seq}:{runner.current.head}", None)
        runner.core.begin(begun)
        runner._flights = (asyncio.get_running_loop().create_future(),)
        # (its own append's entry: no news, for the follower's wait)
        assert runner.take([("9999999999999-0", msgspec.json.encode(later))]) is False
        assert spawned == [] and runner.reading is None
        other = msgspec.structs.replace(later, ts=later.ts + 1)
        assert runner.take(
            [("9999999999999-0", msgspec.json.encode(later)), ("9999999999999-1", msgspec.json.encode(other))]
        ) is True
        # with an entry after it, both wait for the lock, to be folded in order
        assert spawned == ["MatchRunner._take_locked"] and runner.reading == "9999999999999-1"
        runner.core.drop(begun)
        runner._flights = ()
    runner.reading = None
    assert runner.core.next_begun is None and runner.core.tip is runner.current


async def test_a_match_lock_is_taken_at_once_only_where_acquire_would_not_wait() -> None:
    lock = MatchLock()
    assert lock.take_now() and lock.locked()
    assert not lock.take_now()  # held
    waiter = asyncio.ensure_future(lock.acquire())
    await asyncio.sleep(0)
    lock.release()  # free, but its waiter is woken and not yet run: its turn, not ours
    assert not lock.locked() and not lock.take_now()
    assert await waiter is True and lock.locked()
    lock.release()
    assert lock.take_now()
    lock.release()
    assert not lock.locked()


async def test_a_command_waits_for_the_match_lock_held_by_another_task(hub: Hub) -> None:
    """submit takes the lock at once only when it is free: while another task holds it
    (a catch-up, say), the command is neither decided nor appended; it goes on, in
    turn, once the lock is let go, and lets it go itself after its append begins."""
    runner = await seated(hub)
    before = runner.current.seq
    seat = runner.current.game_state.turn
    await runner.lock.acquire()
    try:
        task = asyncio.ensure_future(runner.submit(
            kind="command", seat=seat, key="c:held", cid="held", body={"type": "add", "n": 1},
        ))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not task.done() and runner.current.seq == before and runner.core.next_begun is None
    finally:
        runner.lock.release()
    submitted = await task
    assert submitted is not None and runner.current.seq == before + 1
    assert not runner.lock.locked()
    # The same command again is answered from what is folded, under the lock, which it
    # lets go too.
    again = await runner.submit(
        kind="command", seat=seat, key="c:held", cid="held", body={"type": "add", "n": 1},
    )
    assert again is not None and again.duplicate and again.seq == submitted.seq
    assert not runner.lock.locked() and runner.current.seq == before + 1


async def appended_elsewhere(hub: Hub, runner: MatchRunner) -> tuple[Any, Any]:
    """Another process appends the next entry of `runner`'s match (a toy game's `add`):
    the state it was decided on, and the entry."""
    from domain import engine

    ms = runner.current
    seat = ms.game_state.turn
    entry, _, _ = engine.propose(
        ms, kind="command", seat=seat, cid="elsewhere", body={"type": "add", "n": 1}, ts=ms.last_ts + 1
    )
    appended = await hub.store.append(
        runner.match_id, entry, expected_head=f"{ms.seq}:{ms.head}", key=f"c:{seat}:elsewhere"
    )
    assert appended.status == "ok"
    return ms, entry


async def test_a_match_with_an_append_in_flight_is_left_out_of_the_followers_reads(hub: Hub) -> None:
    """The follower leaves out of its reads a match with an append in flight (what it
    would read of it is that append's own entry, its reply's to fold), without waiting
    in such a read; what another process appended meanwhile is folded soon after the
    append settles."""
    runner, other = await seated(hub), await seated(hub)  # (the other: read meanwhile)
    assert hub.follower.runners == {runner.match_id: runner, other.match_id: other}
    reads: list[tuple[set[str], int | None]] = []
    follow = hub.store.follow

    async def recording(after: Any, block_ms: int | None) -> Any:
        reads.append((set(after), block_ms))
        return await follow(after, block_ms)

    hub.store.follow = recording  # type: ignore[method-assign]
    in_flight: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    runner._flights = (in_flight,)
    await settled(hub, lambda: any(runner.match_id not in after for after, _ in reads))
    left_out = len(reads)
    assert left_out and reads[-1] == ({other.match_id}, None)
    ms, entry = await appended_elsewhere(hub, runner)
    await asyncio.sleep(0.05)
    assert runner.current.seq == ms.seq  # not read while the append is in flight
    assert len(reads) > left_out  # read again meanwhile, every MIN_INTERVAL ...
    assert all(runner.match_id not in after and block is None for after, block in reads[left_out - 1:])
    runner._flights = ()  # ... and once it settles, the entry is read at the next one
    in_flight.set_result(None)
    await settled(hub, lambda: runner.current.seq == ms.seq + 1, 0.5)
    assert runner.current.seq == ms.seq + 1 and runner.core.entry(ms.seq + 1).digest == entry.digest
    assert any(runner.match_id in after for after, _ in reads[left_out:])


def recorded_reads(hub: Hub) -> list[tuple[float, set[str]]]:
    """The follower's reads from now on, each as its wait before it and the matches it
    found entries of."""
    reads: list[tuple[float, set[str]]] = []
    follow = hub.store.follow

    async def recording(after: Any, block_ms: int | None) -> Any:
        interval = hub.follower._interval
        found = await follow(after, block_ms)
        reads.append((interval, set(found)))
        return found

    hub.store.follow = recording  # type: ignore[method-assign]
    return reads


async def test_reads_that_bring_nothing_space_out_and_an_entry_brings_them_back(hub: Hub) -> None:
    """Under load (a match with an append in flight: reads that do not wait), reads that
    bring nothing, past PATIENCE of them in a row, double the follower's wait before the
    next, up to MAX_INTERVAL; a read that brings another process's entry takes it back to
    MIN_INTERVAL."""
    from server.follower import Follower

    runner, other = await seated(hub), await seated(hub)
    loop = asyncio.get_running_loop()
    reads = recorded_reads(hub)
    in_flight: asyncio.Future[None] = loop.create_future()
    runner._flights = (in_flight,)
    try:
        await asyncio.sleep(0.3)
        # at MIN_INTERVAL throughout it would have read some 60 times
        assert 3 < len(reads) < 30 and reads[-1][0] == Follower.MAX_INTERVAL
        ms, _ = await appended_elsewhere(hub, other)
        await settled(hub, lambda: other.current.seq == ms.seq + 1, 0.5)
        found_at = next(i for i, (_, found) in enumerate(reads) if found)
        await settled(hub, lambda: len(reads) > found_at + 1, 0.5)
        assert reads[found_at + 1][0] == Follower.MIN_INTERVAL
    finally:
        runner._flights = ()
        in_flight.set_result(None)


async def test_reads_that_bring_only_this_processs_own_appends_space_out_too(hub: Hub) -> None:
    """Under a moderate load (a command now and then, each append waking the blocked
    read with its own entry, which the append's reply folds), reads that bring only
    this process's own appends count as bringing nothing: the follower's wait grows to
    MAX_INTERVAL (it stayed at MIN_INTERVAL, some 150 reads a second over every match
    followed, a fifth of a command's server CPU at 1,000 commands/s); another process's
    entry still takes it back to MIN_INTERVAL."""
    from server.follower import Follower

    # (a match lasts 9 adds of 1 at least: 12 outlast the 0.35 s's 88 commands at most)
    played = [await seated(hub) for _ in range(12)]
    other = await seated(hub)
    loop = asyncio.get_running_loop()
    reads = recorded_reads(hub)
    n = 0
    end = loop.time() + 0.35
    while loop.time() < end:  # a command every 4 ms, of one match after another
        n += 1
        runner = played[n % len(played)]
        assert not runner.current.ended
        seat = runner.current.game_state.turn
        await runner.submit(kind="command", seat=seat, key=f"c:{seat}:{n}", cid=str(n),
                            body={"type": "add", "n": 1})
        await asyncio.sleep(0.004)
    own = {r.match_id for r in played}
    assert any(found & own for _, found in reads), "no read brought an append of this process"
    assert reads[-1][0] == Follower.MAX_INTERVAL, [interval for interval, _ in reads]
    ms, _ = await appended_elsewhere(hub, other)
    await settled(hub, lambda: other.current.seq == ms.seq + 1, 0.5)
    found_at = next(i for i, (_, found) in enumerate(reads) if other.match_id in found)
    await settled(hub, lambda: len(reads) > found_at + 1, 0.5)
    assert reads[found_at + 1][0] == Follower.MIN_INTERVAL


# --- SendQueue: frames written straight to the socket ----------------------------------------


class Socket:
    """A connection's SEND_TEXT: takes frames while `open`."""

    def __init__(self) -> None:
        self.open = True
        self.written: list[bytes] = []

    def __call__(self, frame: bytes) -> bool:
        if self.open:
            self.written.append(frame)
        return self.open


async def test_a_frame_goes_straight_to_the_socket_when_nothing_waits_before_it() -> None:
    socket = Socket()
    q = SendQueue(10, socket)
    q.push(b"1")
    q.push(b"2", bounded=False)
    assert socket.written == [b"1", b"2"]
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(q.get(), 0.01)  # nothing left for the sender


async def test_once_a_frame_waits_the_next_ones_wait_behind_it() -> None:
    socket = Socket()
    q = SendQueue(10, socket)
    socket.open = False  # the socket's buffer is full: the frame waits for the sender
    q.push(b"1")
    socket.open = True
    q.push(b"2")  # would be taken, but must not overtake "1"
    assert socket.written == []
    assert [await q.get(), await q.get()] == [b"1", b"2"]
    q.sending = True  # the sender is sending one the usual way
    q.push(b"3")
    q.sending = False
    assert socket.written == [] and await q.get() == b"3"
    q.push(b"4")
    assert socket.written == [b"4"]


async def test_a_reader_too_slow_for_the_socket_still_overflows_the_queue() -> None:
    socket = Socket()
    socket.open = False
    q = SendQueue(2, socket)
    for frame in (b"1", b"2", b"3"):
        q.push(frame)
    assert q.overflowed and await q.get() is None
    q.push(b"4")  # nothing after the overflow, not even straight to the socket
    socket.open = True
    q.push(b"5")
    assert socket.written == []


async def test_answers_are_bounded_apart_from_a_catch_up_and_free_their_place_when_sent() -> None:
    """The answers to a client's own messages (server/app.py's `reply`) wait in order
    with its updates, but are counted apart: a long catch-up waiting does not make an
    answer overflow the queue, `limit` answers waiting do, and an answer sent frees its
    place."""
    socket = Socket()
    socket.open = False
    q = SendQueue(3, socket)
    for i in range(10):
        q.push(b"catch-up %d" % i, bounded=False)
    q.push(b"pong 1", answer=True)
    q.push(b"pong 2", answer=True)
    assert not q.overflowed
    for i in range(10):
        assert await q.get() == b"catch-up %d" % i
    assert await q.get() == b"pong 1"  # in order, and its place freed
    q.push(b"view 3", answer=True)
    q.push(b"view 4", answer=True)  # three waiting: "pong 2", "view 3", "view 4"
    assert not q.overflowed
    q.push(b"view 5", answer=True)
    assert q.overflowed and await q.get() is None
    q.push(b"view 6", answer=True)  # nothing after the overflow
    socket.open = True
    q.push(b"view 7", answer=True)
    assert socket.written == []


async def test_an_answer_goes_straight_to_the_socket_when_nothing_waits() -> None:
    socket = Socket()
    q = SendQueue(1, socket)
    for i in range(5):
        q.push(b"%d" % i, answer=True)
    assert socket.written == [b"0", b"1", b"2", b"3", b"4"] and not q.overflowed


# --- SendQueue: a catch-up made as it is taken -------------------------------------------------


class Made:
    """A catch-up of `n` frames that counts how many were made."""

    def __init__(self, n: int, fail_at: int | None = None) -> None:
        self.n, self.fail_at, self.made = n, fail_at, 0

    def __iter__(self) -> Iterator[bytes]:
        for i in range(self.n):
            if i == self.fail_at:
                raise RuntimeError("a bug in a projection")
            self.made += 1
            yield b"catch-up %d" % i


async def test_a_catch_up_is_made_as_it_is_taken_and_waits_as_one_item() -> None:
    """Failed before (every frame of a catch-up was made and queued at the hello): a
    client that asked for a long match and read nothing held all of it in memory. Now
    nothing is made until the sender takes it, live frames and answers wait behind it in
    order, and it counts as one item against the queue's bound."""
    socket = Socket()
    socket.open = False
    q = SendQueue(4, socket)
    q.push(b"welcome", bounded=False)
    catch_up = Made(1000)
    q.push_catch_up(iter(catch_up))
    q.push(b"live 1")
    q.push(b"ack", answer=True)
    assert catch_up.made == 0 and not q.overflowed
    assert await q.get() == b"welcome"
    for i in range(3):
        assert await q.get() == b"catch-up %d" % i
    assert catch_up.made == 3
    q.push(b"live 2")  # four waiting, the catch-up one of them (its 997 frames unmade)
    assert not q.overflowed and catch_up.made == 3
    assert [await q.get() for _ in range(997)] == [b"catch-up %d" % i for i in range(3, 1000)]
    assert [await q.get(), await q.get(), await q.get()] == [b"live 1", b"ack", b"live 2"]
    socket.open = True
    q.push(b"live 3")  # nothing waits now: straight to the socket
    assert socket.written == [b"live 3"]


async def test_live_frames_behind_a_catch_up_are_bounded_apart_from_it() -> None:
    socket = Socket()
    socket.open = False
    q = SendQueue(2, socket)
    q.push_catch_up(iter(Made(50)))
    q.push(b"live 1")
    assert not q.overflowed  # the catch-up and one live frame: two waiting
    q.push(b"live 2")
    assert q.overflowed and await q.get() is None


async def test_a_catch_up_that_fails_closes_the_connection_as_the_servers_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """What the sender is given instead of the rest: the close, with code 1011, so that
    the client resumes from the last update it has; the error is the server's, logged."""
    q = SendQueue(10)
    q.push_catch_up(iter(Made(5, fail_at=2)))
    q.push(b"live")
    assert [await q.get(), await q.get()] == [b"catch-up 0", b"catch-up 1"]
    assert await q.get() is None
    assert q.close_code == 1011 and "resume" in q.close_reason
    assert not q.overflowed
