"""Rate limits (server/limits.py): frames per seat and per spectator address whatever the
number of connections, connections per seat, match creation per address, the API key;
and nothing of them kept once the connections are gone."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
import websockets

from server.config import Settings
from server.limits import CLOSE_TOO_MANY_CONNECTIONS, Limits
from server.main import EmbeddedServer
from tests import toygame
from tests.wsutil import Raw, new_match

toygame.install()


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def limits(**kw: Any) -> tuple[Limits, Clock]:
    clock = Clock()
    return Limits(Settings(**kw), clock=clock), clock


def test_a_seat_shares_one_bucket_however_many_connections() -> None:
    lim, clock = limits(rate=1.0, burst=4, seat_connections=30)
    leases = [lim.join_seat("m", 0) for _ in range(20)]
    assert all(lease is not None for lease in leases)
    taken = sum(lease.bucket.take() for lease in leases for _ in range(10) if lease)
    assert taken == 4
    clock.now += 2
    assert sum(lease.bucket.take() for lease in leases for _ in range(10) if lease) == 2
    other = lim.join_seat("m", 1)
    assert other is not None and other.bucket.take(), "another seat has its own"
    spectators = [lim.join_address("10.0.0.1") for _ in range(5)]
    assert sum(s.bucket.take() for s in spectators for _ in range(10)) == 4
    assert lim.join_address("10.0.0.2").bucket.take()


def test_a_seat_holds_at_most_its_connections() -> None:
    lim, _ = limits(seat_connections=2)
    a, b = lim.join_seat("m", 0), lim.join_seat("m", 0)
    assert a is not None and b is not None
    assert lim.join_seat("m", 0) is None
    a.release()
    a.release()  # once only
    c = lim.join_seat("m", 0)
    assert c is not None and lim.join_seat("m", 0) is None


def test_buckets_go_once_nobody_holds_them_and_they_are_full() -> None:
    """Reconnecting does not refill an emptied bucket; a bucket nobody holds goes once it
    would be full again (burst / rate seconds), so nothing stays for long."""
    lim, clock = limits(rate=10.0, burst=5, seat_connections=2)
    lease = lim.join_seat("m", 0)
    assert lease is not None
    while lease.bucket.take():
        pass
    lease.release()
    again = lim.join_seat("m", 0)
    assert again is not None and not again.bucket.take(), "reconnecting refills nothing"
    again.release()
    for i in range(50):
        lim.join_address(f"10.0.0.{i}").release()
    assert lim.held()["shared"] == 51
    clock.now += 0.49
    assert lim.held()["shared"] == 51
    clock.now += 0.02
    assert lim.held() == {"shared": 0, "creations": 0}


def test_creation_per_address_and_the_api_key() -> None:
    lim, clock = limits(create_rate=0.5, create_burst=3)
    assert [lim.may_create("1.2.3.4", None) for _ in range(3)] == [None] * 3
    refused = lim.may_create("1.2.3.4", None)
    assert refused is not None and refused.status == 429 and refused.code == "rate_limited"
    assert refused.headers["Retry-After"] == "2"
    assert lim.may_create("5.6.7.8", None) is None, "another address has its own"
    clock.now += 2
    assert lim.may_create("1.2.3.4", None) is None
    clock.now += 3600
    assert lim.held()["creations"] == 0
    keyed, _ = limits(create_rate=0.5, create_burst=1, api_keys=("k-old", "k-new"))
    for header in (None, "Bearer", "Bearer nope", "Basic k-new", "k-new"):
        no = keyed.may_create("1.2.3.4", header)
        assert no is not None and no.status == 401 and no.code == "unauthorized", header
        assert "Bearer" in no.headers["WWW-Authenticate"]
    assert all(keyed.may_create("1.2.3.4", "Bearer k-new") is None for _ in range(10)), (
        "a key holder is not limited by address"
    )
    assert keyed.may_create("1.2.3.4", "bearer  k-old ") is None


async def test_twenty_connections_of_one_seat_share_its_rate() -> None:
    """Twenty connections with one seat's token sending as fast as they can: the seat
    gets no more commands through than one connection would."""
    rate, burst = 5.0, 10
    async with EmbeddedServer(Settings(rate=rate, burst=burst, seat_connections=32)) as srv:
        m, (t0, _t1) = await new_match(srv.url, "toy", {"turn_ms": 60_000})
        conns = [await Raw.open(srv.ws_url) for _ in range(20)]
        for c in conns:
            assert (await c.hello(m, t0))["type"] == "welcome"
        loop = asyncio.get_running_loop()
        started = loop.time()
        for i, c in enumerate(conns):
            for j in range(15):
                await c.send({"type": "command", "id": f"{i}-{j}", "command": {"type": "add", "n": 1}})

        async def answers(c: Raw) -> list[dict[str, Any]]:
            got: list[dict[str, Any]] = []
            while len(got) < 15:
                frame = await c.recv()
                if frame["type"] in ("ack", "rejected", "error"):
                    got.append(frame)
            return got

        every = [f for got in await asyncio.gather(*(answers(c) for c in conns)) for f in got]
        elapsed = loop.time() - started
        passed = [f for f in every if f.get("code") != "rate_limited"]
        assert len(every) == 300
        assert len(passed) <= burst + rate * elapsed + 1, (len(passed), elapsed)
        assert len(passed) >= burst
        for c in conns:
            await c.close()


async def test_a_seat_over_its_connections_is_refused_with_4009() -> None:
    async with EmbeddedServer(Settings(seat_connections=2)) as srv:
        m, (t0, _t1) = await new_match(srv.url, "toy", {"turn_ms": 60_000})
        a, b = await Raw.open(srv.ws_url), await Raw.open(srv.ws_url)
        assert (await a.hello(m, t0))["type"] == "welcome"
        assert (await b.hello(m, t0))["type"] == "welcome"
        c = await Raw.open(srv.ws_url)
        refused = await c.hello(m, t0)
        assert refused["type"] == "error" and refused["code"] == "too_many_connections"
        with pytest.raises(websockets.ConnectionClosed) as info:
            await c.recv()
        assert info.value.rcvd is not None and info.value.rcvd.code == CLOSE_TOO_MANY_CONNECTIONS
        spectators = [await Raw.open(srv.ws_url) for _ in range(4)]
        for s in spectators:
            assert (await s.hello(m))["type"] == "welcome", "spectators are not capped"
        await a.close()
        hub = srv.app.state.hub
        loop = asyncio.get_running_loop()
        end = loop.time() + 5
        while hub.limits._shared[("seat", m, 0)].holders > 1:
            assert loop.time() < end
            await asyncio.sleep(0.01)
        d = await Raw.open(srv.ws_url)
        assert (await d.hello(m, t0))["type"] == "welcome", "a seat let go of may be taken again"
        for x in (b, d, *spectators):
            await x.close()
        end = loop.time() + 5
        while hub.limits.held()["shared"]:  # full buckets nobody holds go (burst/rate: 2 s)
            assert loop.time() < end, hub.limits.held()
            await asyncio.sleep(0.05)


async def test_a_creation_flood_from_one_address_is_refused() -> None:
    config = Settings(create_burst=5, create_rate=0.01)
    async with EmbeddedServer(config) as srv, httpx.AsyncClient(base_url=srv.url) as http:
        codes = [(await http.post("/matches", json={"game": "toy"})).status_code for _ in range(8)]
        assert codes == [201] * 5 + [429] * 3
        r = await http.post("/matches", json={"game": "toy"})
        assert r.json()["error"]["code"] == "rate_limited" and int(r.headers["retry-after"]) >= 1
        assert (await http.get("/games")).status_code == 200, "only creation is limited"


async def test_a_deployment_may_require_an_api_key() -> None:
    config = Settings(api_keys=("s3cret-key",), create_burst=2)
    async with EmbeddedServer(config) as srv, httpx.AsyncClient(base_url=srv.url) as http:
        r = await http.post("/matches", json={"game": "toy"})
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
        assert r.headers["www-authenticate"].startswith("Bearer")
        r = await http.post("/matches", json={"game": "toy"},
                            headers={"Authorization": "Bearer wrong"})
        assert r.status_code == 401
        auth = {"Authorization": "Bearer s3cret-key"}
        for _ in range(4):
            r = await http.post("/matches", json={"game": "toy"}, headers=auth)
            assert r.status_code == 201
        m = r.json()["match"]
        r = await http.post(f"/matches/{m}/seats", json={"name": "Ann"})
        assert r.status_code == 201, "seats need no key"


def test_the_api_keys_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAEDALUS_API_KEYS", " k1, k2 ,")
    assert Settings().api_keys == ("k1", "k2")
    monkeypatch.delenv("DAEDALUS_API_KEYS")
    assert Settings().api_keys == ()


def test_the_frame_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (Settings().rate, Settings().burst) == (20.0, 40)
    monkeypatch.setenv("DAEDALUS_FRAME_RATE", "500")
    monkeypatch.setenv("DAEDALUS_FRAME_BURST", "1000")
    assert (Settings().rate, Settings().burst) == (500.0, 1000)
    for name in ("DAEDALUS_FRAME_RATE", "DAEDALUS_FRAME_BURST"):
        for bad in ("fast", "0", "-5", "inf") + (("0.5", "2.5") if name.endswith("BURST") else ()):
            monkeypatch.setenv(name, bad)
            with pytest.raises(ValueError, match=name):
                Settings()
        monkeypatch.setenv(name, "100")


def test_the_header_timeout_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().header_timeout == 15.0
    monkeypatch.setenv("DAEDALUS_HEADER_TIMEOUT", "2.5")
    assert Settings().header_timeout == 2.5
    for bad in ("soon", "0", "-1"):
        monkeypatch.setenv("DAEDALUS_HEADER_TIMEOUT", bad)
        with pytest.raises(ValueError, match="DAEDALUS_HEADER_TIMEOUT"):
            Settings()


async def test_a_higher_frame_rate_from_the_environment_lets_a_burst_through(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DAEDALUS_FRAME_BURST", "200")
    async with EmbeddedServer(Settings()) as srv:
        raw = await Raw.open(srv.ws_url)
        for _ in range(100):
            await raw.send({"type": "ping"})
        answers = [await raw.recv() for _ in range(100)]
        assert all(a["type"] == "pong" for a in answers)
        await raw.close()
