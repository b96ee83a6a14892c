"""The Redis store's connections (server/store.py): each pool is bounded, and connections
left unused are closed, so neither a burst nor a stalled Redis leaves its peak open."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import redis.asyncio as aioredis

from server.config import Settings
from server.main import EmbeddedServer
from server.storage import AppendUnknown, head_value
from server.store import UNAVAILABLE, EventStore, _Pool
from tests import toygame
from tests.conftest import RedisProcess
from tests.test_store_contract import fresh, join

toygame.install()

BOUND = 4
IDLE = 0.3


async def open_clients(monitor: aioredis.Redis) -> int:
    """The connections Redis has open, the monitor's own left out."""
    return len(await monitor.client_list()) - 1


def held(client: aioredis.Redis) -> int:
    """The connections a client's pool holds open now, in use or not."""
    pool = client.connection_pool
    return len(pool._in_use_connections) + sum(1 for c in pool._available_connections if c.is_connected)


class Peaks:
    """While a burst runs: the most connections one pool of `store` held, and the most
    Redis saw open (it sees a connection closed a moment after the pool let it go)."""

    def __init__(self, store: EventStore, monitor: aioredis.Redis) -> None:
        self.store, self.monitor = store, monitor
        self.pool = self.redis = 0
        self._done = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def _sample(self) -> None:
        while not self._done.is_set():
            self.pool = max(self.pool, held(self.store.reads), held(self.store.writes))
            self.redis = max(self.redis, await open_clients(self.monitor))
            await asyncio.sleep(0.002)

    async def __aenter__(self) -> Peaks:
        self._task = asyncio.create_task(self._sample())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._done.set()
        assert self._task is not None
        await self._task


async def burst(store: EventStore, n: int, tag: str) -> list[object]:
    """n matches created, joined and read at once, each step taken in its own turn."""

    async def one(i: int) -> object:
        match_id = f"{tag}{i}"
        first, ms = fresh(match_id)
        await asyncio.sleep(0.001 * (i % 20))
        assert await store.create(match_id, first)
        entry, _ = join(ms, "Ann", 1100)
        res = await store.append(match_id, entry, expected_head=head_value(first), key="j")
        await asyncio.gather(store.read(match_id), store.length(match_id), store.seat_for_token(match_id, "h"))
        return res.status

    return list(await asyncio.gather(*(one(i) for i in range(n)), return_exceptions=True))


async def test_a_burst_stays_under_the_bound_and_its_connections_are_closed_after(
    private_redis: RedisProcess,
) -> None:
    """With redis-py's pools as they were (unbounded, nothing closed), 300 matches at once
    left 549 connections open for good."""
    # A request waits for a free connection up to the timeout: on a busy machine, 300
    # matches at once through 4 connections may take longer than the default 5 s.
    store = EventStore.from_url(
        private_redis.url, max_connections=BOUND, idle_timeout=IDLE, timeout=30
    )
    monitor = aioredis.Redis.from_url(private_redis.url)
    try:
        async with Peaks(store, monitor) as peaks:
            results = await burst(store, 300, "b")
        assert results == ["ok"] * 300, [r for r in results if r != "ok"][:3]
        assert peaks.pool == BOUND, peaks.pool
        assert peaks.redis >= BOUND, peaks.redis
        await asyncio.sleep(IDLE * 3)
        assert await open_clients(monitor) == 0, "every connection unused since was closed"
        # and the store goes on: connections are opened again as needed
        assert await store.length("b7") == 2
    finally:
        await store.close()
        await monitor.aclose()


async def test_connections_opened_during_a_stall_are_closed_after_it(
    private_redis: RedisProcess,
) -> None:
    """A stalled Redis (SIGSTOP): every command waits for its timeout holding its
    connection, and the pool lends at most its bound; once Redis answers again and the
    work is done, the connections go."""
    assert private_redis.proc is not None
    pid = private_redis.proc.pid
    store = EventStore.from_url(
        private_redis.url, max_connections=BOUND, idle_timeout=IDLE, timeout=0.5
    )
    monitor = aioredis.Redis.from_url(private_redis.url)
    try:
        first, _ = fresh("s")
        assert await store.create("s", first)
        os.kill(pid, signal.SIGSTOP)
        try:
            stalled = asyncio.gather(*(stall_step(store, i) for i in range(40)), return_exceptions=True)
            await asyncio.sleep(0.8)
            assert len(store.writes.connection_pool._in_use_connections) <= BOUND
            assert len(store.reads.connection_pool._in_use_connections) <= BOUND
        finally:
            os.kill(pid, signal.SIGCONT)
        outcomes = await stalled
        unexpected = [o for o in outcomes if isinstance(o, BaseException) and not isinstance(o, UNAVAILABLE)]
        assert not unexpected, unexpected[:3]
        await asyncio.sleep(IDLE * 3)
        assert await open_clients(monitor) == 0
    finally:
        await store.close()
        await monitor.aclose()


async def stall_step(store: EventStore, i: int) -> None:
    await asyncio.sleep(0.01 * i)  # one batch of appends after another
    first, _ = fresh(f"x{i}")
    with contextlib.suppress(AppendUnknown):
        await store.create(f"x{i}", first)
    await store.length(f"x{i}")


async def test_the_servers_settings_reach_its_store(private_redis: RedisProcess) -> None:
    settings = Settings(
        redis_url=private_redis.url, redis_max_connections=3, redis_idle_timeout=7.0, redis_timeout=1.5
    )
    async with EmbeddedServer(settings) as srv:
        store = srv.app.state.hub.store
        assert isinstance(store, EventStore)
        for client in (store.reads, store.writes):
            pool = client.connection_pool
            assert isinstance(pool, _Pool)
            assert (pool.max_connections, pool.idle_timeout, pool.timeout) == (3, 7.0, 1.5)
            assert pool.connection_kwargs["socket_timeout"] == 1.5


async def test_a_servers_connections_come_back_down_after_a_burst(private_redis: RedisProcess) -> None:
    """A server on a real Redis: 80 matches created and their seats claimed at once, then
    a pause; its connections stay within its pools' bound (and the follower's own), and
    those left unused are closed."""
    import httpx

    settings = Settings(  # a generous timeout: the burst queues for 4 connections
        redis_url=private_redis.url, redis_max_connections=BOUND, redis_idle_timeout=IDLE,
        redis_timeout=30,
    )
    monitor = aioredis.Redis.from_url(private_redis.url)

    async def one(http: httpx.AsyncClient) -> int:
        r = await http.post("/matches", json={"game": "toy", "options": {"turn_ms": 60000}})
        match = r.json()["match"]
        claims = await asyncio.gather(*(
            http.post(f"/matches/{match}/seats", json={"name": n}) for n in ("Ann", "Bob")
        ))
        return r.status_code + sum(c.status_code for c in claims)

    try:
        async with EmbeddedServer(settings) as srv, httpx.AsyncClient(base_url=srv.url, timeout=30) as http:
            store = srv.app.state.hub.store
            assert isinstance(store, EventStore)
            async with Peaks(store, monitor) as peaks:
                statuses = await asyncio.gather(*(one(http) for _ in range(80)))
            assert statuses == [3 * 201] * 80
            assert peaks.pool == BOUND, peaks.pool
            assert peaks.redis >= BOUND, peaks.redis
            await asyncio.sleep(IDLE * 4)
            assert await open_clients(monitor) <= 2, "the follower's, and one at most in use"
    finally:
        await monitor.aclose()
