"""Unfilled matches expire (server/expiry.py): on every store backend, with a tiny
configured time; over several processes sharing a store; after a restart; and as
clients see it over HTTP and websockets."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable

import fakeredis
import httpx
import pytest
import structlog.testing
import websockets

from projections.contract import Viewer
from server.config import Settings
from server.expiry import CLOSE_MATCH_EXPIRED
from server.hub import Hub, MatchExpired, MatchRunner, SendQueue, Subscriber, token_digest
from server.main import EmbeddedServer
from server.storage import MemoryStore, Store
from server.store import EventStore
from tests import toygame
from tests.conftest import RedisServer
from tests.wsutil import Raw

toygame.install()

TTL = 0.3  # seconds: the configured time of these tests


def settings(ttl: float = TTL) -> Settings:
    return Settings(tail_block_ms=200, unfilled_ttl=ttl)


@pytest.fixture(params=["memory", "fakeredis", "redis"])
async def stores(request: pytest.FixtureRequest) -> AsyncIterator[Callable[[], Store]]:
    """Stores on one backend, as server processes have (each its own clients of one
    Redis; in memory, one store shared)."""
    made: list[Store] = []
    memory = MemoryStore()
    fake = fakeredis.FakeServer()
    url = ""
    if request.param == "redis":
        server: RedisServer = request.getfixturevalue("real_redis")
        url = server.url
        flusher = EventStore.from_url(url)
        await flusher.reads.flushdb()
        await flusher.close()

    def make() -> Store:
        if request.param == "memory":
            return memory
        if request.param == "fakeredis":
            store = EventStore(
                fakeredis.FakeAsyncRedis(server=fake), fakeredis.FakeAsyncRedis(server=fake),
                follows=fakeredis.FakeAsyncRedis(server=fake, single_connection_client=True),
                description="fakeredis",
            )
        else:
            store = EventStore.from_url(url)
        made.append(store)
        return store

    yield make
    for store in made:
        await store.close()


@pytest.fixture
async def hubs(stores: Callable[[], Store]) -> AsyncIterator[Callable[..., Hub]]:
    """Hubs on one store (as server processes on one Redis), closed at the end."""
    made: list[Hub] = []

    def make(ttl: float = TTL) -> Hub:
        made.append(Hub(stores(), settings(ttl)))
        return made[-1]

    yield make
    for hub in made:
        await hub.close()


async def take_seat(runner: MatchRunner, name: str) -> None:
    digest = token_digest(f"token-{name}-{runner.match_id}")
    await runner.submit(kind="join", seat=None, key=f"join:{digest}", body={"name": name},
                        token_hash=digest)


async def until(pred: Callable[[], object], seconds: float = 5.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while not pred():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.01)


async def test_an_unfilled_match_expires(hubs: Callable[..., Hub]) -> None:
    """One seat of two taken: after the configured time the match is removed from the
    store, with its reason recorded, and its viewer is told and closed (4010); a match
    whose seats filled in time stays."""
    hub = hubs()
    store = hub.store
    waiting = await hub.runner((await hub.create_match("toy", None, {})).match_id)
    await take_seat(waiting, "Ann")
    full = await hub.runner((await hub.create_match("toy", None, {})).match_id)
    await take_seat(full, "Ann")
    await take_seat(full, "Bob")
    assert full.current.started
    queue = SendQueue(100)
    assert await waiting.subscribe(Subscriber(Viewer(seat=0), queue), None, {"type": "welcome"}) is None
    await until(lambda: waiting.match_id not in hub.runners)
    await until(lambda: not hub._background)
    assert await store.read(waiting.match_id) == []
    assert await store.active() == [full.match_id]
    record = await store.expired(waiting.match_id)
    assert record is not None and record["reason"] == "unfilled" and record["taken"] == 1
    assert "1 of its 2 seats" in record["message"]
    with pytest.raises(MatchExpired) as info:
        await hub.runner(waiting.match_id)
    assert "expired" in str(info.value)
    frames = []
    while (frame := await asyncio.wait_for(queue.get(), 1)) is not None:
        frames.append(json.loads(frame))
    assert frames[-1]["type"] == "error" and frames[-1]["code"] == "match_expired"
    assert queue.close_code == CLOSE_MATCH_EXPIRED
    await asyncio.sleep(TTL)
    assert full.match_id in hub.runners and await store.length(full.match_id) == 3
    assert len(hub.expiry) == 0, "the started match's timer rang and was dropped"


async def test_a_seat_taken_in_time_keeps_the_match(hubs: Callable[..., Hub]) -> None:
    hub = hubs(ttl=0.5)
    runner = await hub.runner((await hub.create_match("toy", None, {})).match_id)
    await take_seat(runner, "Ann")
    await asyncio.sleep(0.2)
    await take_seat(runner, "Bob")
    await asyncio.sleep(0.6)
    assert hub.runners == {runner.match_id: runner}
    assert await hub.store.length(runner.match_id) == 3
    assert await hub.store.expired(runner.match_id) is None


# A MemoryStore is one process's: several processes share only a Redis.
shared_by_processes = pytest.mark.parametrize("stores", ["fakeredis", "redis"], indirect=True)


@shared_by_processes
async def test_several_processes_expire_a_match_once(hubs: Callable[..., Hub]) -> None:
    """Every process following the match tries at the same moment; one expires it, the
    others find it gone, and each lets go of its runner."""
    processes = [hubs(ttl=0.4) for _ in range(3)]
    match_id = (await processes[0].create_match("toy", None, {})).match_id
    runners = [await hub.runner(match_id) for hub in processes]
    done = await asyncio.gather(*(hub.expiry.expire(r) for hub, r in zip(processes, runners, strict=True)))
    assert all(done)
    assert all(match_id not in hub.runners for hub in processes)
    assert await processes[0].store.read(match_id) == []
    assert await processes[0].store.active() == []
    record = await processes[0].store.expired(match_id)
    assert record is not None and record["match"] == match_id


@shared_by_processes
async def test_a_seat_taken_elsewhere_wins_over_a_stale_expiry(hubs: Callable[..., Hub]) -> None:
    """A process that has not folded the last seat yet tries to expire the match: the
    store refuses (its head moved), and once folded the match is seen started."""
    a, b = hubs(ttl=3600), hubs(ttl=3600)
    match_id = (await a.create_match("toy", None, {})).match_id
    ra, rb = await a.runner(match_id), await b.runner(match_id)
    b.follower.remove(rb)  # b folds nothing new until asked
    await take_seat(ra, "Ann")
    await take_seat(ra, "Bob")
    assert not await b.expiry.expire(rb)
    assert await a.store.length(match_id) == 3
    assert await a.store.expired(match_id) is None
    assert ra.current.started


async def test_a_restart_does_not_resume_an_expired_match(hubs: Callable[..., Hub]) -> None:
    """A match whose time passed while no process ran is expired when a process
    resumes, not resumed; one expired already is not active at all."""
    before = hubs(ttl=3600)
    stale = (await before.create_match("toy", None, {})).match_id
    kept = await before.runner((await before.create_match("toy", None, {})).match_id)
    await take_seat(kept, "Ann")
    await take_seat(kept, "Bob")
    await before.close()
    await asyncio.sleep(0.35)
    after = hubs(ttl=TTL)
    store = after.store
    await after.resume_active()
    await until(lambda: stale not in after.runners)
    await until(lambda: not after._background)
    assert list(after.runners) == [kept.match_id]
    assert await store.active() == [kept.match_id]
    assert await store.read(stale) == []
    assert (await store.expired(stale) or {}).get("reason") == "unfilled"


async def test_a_left_over_active_id_is_cleared_on_resume() -> None:
    """A process that stopped between removing a match's keys and taking it out of the
    active set leaves its id behind: resuming takes it out, without an error."""
    store = MemoryStore()
    store._active.add("ghost")
    hub = Hub(store, settings())
    try:
        await hub.resume_active()
        assert await store.active() == [] and hub.runners == {}
    finally:
        await hub.close()


async def test_clients_see_an_expired_match() -> None:
    """Over the wire: the viewer of an expiring match gets the error `match_expired` and
    close code 4010; afterwards GET /matches/{id} and a seat claim answer 410 with the
    reason, and a hello the error `match_expired`."""
    config = Settings(unfilled_ttl=0.4)
    async with EmbeddedServer(config) as srv, httpx.AsyncClient(base_url=srv.url) as http:
        m = (await http.post("/matches", json={"game": "toy"})).json()["match"]
        token = (await http.post(f"/matches/{m}/seats", json={"name": "Ann"})).json()["token"]
        c = await Raw.open(srv.ws_url)
        assert (await c.hello(m, token))["type"] == "welcome"
        err = await c.until(lambda f: f["type"] == "error", timeout=5)
        assert err["code"] == "match_expired" and "1 of its 2 seats" in err["message"]
        with pytest.raises(websockets.ConnectionClosed) as info:
            await c.recv()
        assert info.value.rcvd is not None and info.value.rcvd.code == CLOSE_MATCH_EXPIRED
        r = await http.get(f"/matches/{m}")
        assert r.status_code == 410 and r.json()["error"]["code"] == "match_expired"
        assert "expired" in r.json()["error"]["message"]
        r = await http.post(f"/matches/{m}/seats", json={"name": "Bob"})
        assert r.status_code == 410 and r.json()["error"]["code"] == "match_expired"
        c2 = await Raw.open(srv.ws_url)
        again = await c2.hello(m)
        assert again["type"] == "error" and again["code"] == "match_expired"
        await c2.close()
        assert (await http.get("/matches/nope")).status_code == 404


def test_the_time_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAEDALUS_UNFILLED_TTL", "90")
    assert Settings().unfilled_ttl == 90.0
    monkeypatch.delenv("DAEDALUS_UNFILLED_TTL")
    assert Settings().unfilled_ttl == 3600.0
    for bad in ("soon", "0", "-5"):
        monkeypatch.setenv("DAEDALUS_UNFILLED_TTL", bad)
        with pytest.raises(ValueError, match="DAEDALUS_UNFILLED_TTL"):
            Settings()


@shared_by_processes
async def test_a_claim_in_a_process_that_has_not_expired_the_match_yet_is_told_it_expired(
    hubs: Callable[..., Hub],
) -> None:
    """Another process expired the match: a seat claim here finds the log gone. That is
    no loss of entries (no resync, nothing logged as an error): the claim is told the
    match expired, and this process lets go of it too. Failed before: the claim found the
    log empty, logged the match's entries as lost and the log as broken, and was busy."""
    a, b = hubs(ttl=3600), hubs(ttl=3600)
    match_id = (await a.create_match("toy", None, {})).match_id
    ra, rb = await a.runner(match_id), await b.runner(match_id)
    with structlog.testing.capture_logs() as logs:
        assert await a.expiry.expire(ra)
        with pytest.raises(MatchExpired) as info:
            await take_seat(rb, "Ann")
        assert "expired" in str(info.value)
        await until(lambda: match_id not in b.runners)
    assert not [e for e in logs if e["log_level"] == "error"], logs
