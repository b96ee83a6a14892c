"""Redis going away mid-match and coming back: clear errors meanwhile, nothing lost."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import httpx

from clients.client import DaedalusHttp, MatchConnection
from domain import engine
from server.config import Settings
from server.main import EmbeddedServer
from server.store import EventStore
from tests import toygame
from tests.conftest import RedisProcess
from tests.wsutil import Raw, new_match

toygame.install()


async def test_a_redis_outage_mid_match_loses_nothing(private_redis: RedisProcess) -> None:
    """While Redis is away every request that needs it gets `store_unavailable` (and the
    websocket stays open); once it is back the same command ids go through, once each."""
    async with EmbeddedServer(Settings(redis_url=private_redis.url)) as srv:
        match, (t0, t1) = await new_match(srv.url, "toy", {"turn_ms": 60000})
        a = await Raw.open(srv.ws_url)
        await a.hello(match, t0)
        async with MatchConnection(srv.url, match, token=t1) as b:
            assert (await a.command("a1", {"type": "add", "n": 1}))["type"] == "ack"
            assert (await b.send_command({"type": "add", "n": 1}, id="b1")).accepted

            await asyncio.to_thread(private_redis.stop)
            reply = await a.command("a2", {"type": "add", "n": 2})
            assert reply["type"] == "error" and reply["code"] == "store_unavailable", reply
            assert "same id" in reply["message"]
            await a.send({"type": "ping"})
            assert (await a.until(lambda m: m["type"] == "pong"))["type"] == "pong"
            other = await Raw.open(srv.ws_url)
            refused = await other.hello("NoSuchMatch1")  # not in memory: needs Redis
            assert refused["code"] == "store_unavailable", refused
            async with httpx.AsyncClient(base_url=srv.url) as http:
                r = await http.post("/matches", json={"game": "toy"})
                assert r.status_code == 503 and r.json()["error"]["code"] == "store_unavailable"
                assert (await http.get("/health")).status_code == 503

            await asyncio.to_thread(private_redis.start)
            reply = await a.command("a2", {"type": "add", "n": 2})
            assert reply["type"] == "ack" and not reply["duplicate"], reply
            assert (await other.hello("NoSuchMatch1"))["code"] == "unknown_match"
            await other.close()

            # a second outage: b's client sends its command again by itself until Redis
            # is back
            await asyncio.to_thread(private_redis.stop)
            b_turn = asyncio.create_task(b.send_command({"type": "add", "n": 1}, id="b2"))
            await asyncio.sleep(0.8)
            assert not b_turn.done()
            await asyncio.to_thread(private_redis.start)
            result = await asyncio.wait_for(b_turn, 15)
            assert result.accepted and not result.duplicate, result
            await a.until(lambda m: m["type"] == "update" and m["view"]["game_state"]["totals"] == [3, 2])

        store = EventStore.from_url(private_redis.url)
        entries = [e for _, e in await store.read(match)]
        await store.close()
        cids = [e.cid for e in entries if e.kind == "command"]
        assert cids == ["a1", "b1", "a2", "b2"], "every acked command, once, in order"
        assert engine.fold(toygame, entries).seq == len(entries)
        await a.close()


async def test_the_clock_ticks_again_after_an_outage(private_redis: RedisProcess) -> None:
    async with EmbeddedServer(Settings(redis_url=private_redis.url)) as srv:
        match, _tokens = await new_match(srv.url, "toy", {"turn_ms": 200})
        watcher = await Raw.open(srv.ws_url)
        await watcher.hello(match)  # followed: its clock runs in this process
        first = await watcher.until(lambda m: m["type"] == "update" and m["view"]["started"])
        await asyncio.to_thread(private_redis.stop)
        await asyncio.sleep(1.5)  # deadlines pass while nothing can be appended
        await asyncio.to_thread(private_redis.start)
        later = await watcher.until(
            lambda m: m["type"] == "update" and m["seq"] >= first["seq"] + 3, timeout=15
        )
        assert later["view"]["game_state"]["round"] > first["view"]["game_state"]["round"]
        await watcher.close()
    store = EventStore.from_url(private_redis.url)
    entries = [e for _, e in await store.read(match)]
    await store.close()
    ticks = [e for e in entries if e.kind == "tick"]
    assert len({e.cid for e in ticks}) == len(ticks), "no deadline ticked twice"
    assert engine.fold(toygame, entries).seq == len(entries)


async def test_a_seat_claimed_while_redis_restarts_is_claimed_once(
    private_redis: RedisProcess,
) -> None:
    async with EmbeddedServer(Settings(redis_url=private_redis.url)) as srv:
        async with DaedalusHttp(srv.url) as http:
            match = (await http.create_match("toy"))["match"]
            await asyncio.to_thread(private_redis.stop)
            claim = asyncio.create_task(http.claim_seat(match, "Ann"))
            await asyncio.sleep(0.8)
            assert not claim.done()  # answered 503 so far, and sent again
            await asyncio.to_thread(private_redis.start)
            claimed = await asyncio.wait_for(claim, 15)
            status = await http.status(match)
        assert [s["name"] for s in status["seats"]] == ["Ann", None]
        a = await Raw.open(srv.ws_url)
        assert (await a.hello(match, claimed["token"]))["seat"] == claimed["seat"] == 0
        await a.close()


async def test_health_answers_in_bounded_time_while_redis_is_stalled(
    private_redis: RedisProcess,
) -> None:
    """A Redis that stops answering (SIGSTOP, as a stall or a long fork) must not stall the
    health check: it answers 503 within its timeout, saying why, and 200 once Redis is
    back. Failed before: no answer at all while Redis was stopped."""
    assert private_redis.proc is not None
    pid = private_redis.proc.pid
    settings = Settings(redis_url=private_redis.url, health_timeout=0.5)
    async with EmbeddedServer(settings) as srv, httpx.AsyncClient(base_url=srv.url, timeout=5) as http:
        assert (await http.get("/health")).status_code == 200
        os.kill(pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            r = await http.get("/health")
            took = time.monotonic() - started
        finally:
            os.kill(pid, signal.SIGCONT)
        assert r.status_code == 503 and took < 2.0, (r.status_code, took)
        assert r.json() == {"ok": False, "error": "the store did not answer a ping within 0.5 s"}
        for _ in range(50):
            r = await http.get("/health")
            if r.status_code == 200:
                break
            await asyncio.sleep(0.1)
        assert r.status_code == 200 and r.json()["ok"] is True


async def test_a_command_sent_once_is_no_duplicate_after_a_stall(private_redis: RedisProcess) -> None:
    """Redis stalls (SIGSTOP) for longer than the server's command timeout: the append
    times out, lands once Redis goes on, and the server learns so when it looks again.
    That entry is the server's own append of the command, not an earlier one: the
    sender, who sent the command once, gets an ack with `duplicate: false`, and the log
    holds it once. Failed before: `duplicate: true`."""
    assert private_redis.proc is not None
    pid = private_redis.proc.pid
    settings = Settings(redis_url=private_redis.url, redis_timeout=0.5)
    async with EmbeddedServer(settings) as srv:
        match, (t0, _t1) = await new_match(srv.url, "toy", {"turn_ms": 60000})
        a = await Raw.open(srv.ws_url)
        await a.hello(match, t0)
        os.kill(pid, signal.SIGSTOP)
        try:
            await a.send({"type": "command", "id": "a1", "command": {"type": "add", "n": 2}})
            await asyncio.sleep(0.9)  # the append has timed out (0.5 s)
        finally:
            os.kill(pid, signal.SIGCONT)
        reply = await a.until(lambda m: m.get("id") == "a1" and m["type"] != "update", timeout=15)
        assert reply["type"] == "ack" and reply["duplicate"] is False, reply
        await a.close()
    store = EventStore.from_url(private_redis.url)
    entries = [e for _, e in await store.read(match)]
    await store.close()
    assert [e.cid for e in entries if e.kind == "command"] == ["a1"]
