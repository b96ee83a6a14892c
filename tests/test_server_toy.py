"""The server's protocol end to end, through real websockets on loopback, on the toy game."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import websockets

from server.config import Settings
from server.hub import SendQueue
from server.main import EmbeddedServer
from tests import toygame
from tests.wsutil import Raw, new_match

toygame.install()


@pytest.fixture
async def srv() -> AsyncIterator[EmbeddedServer]:
    async with EmbeddedServer(Settings(rate=200, burst=400)) as s:
        yield s


async def test_http_surface(srv: EmbeddedServer) -> None:
    async with httpx.AsyncClient(base_url=srv.url) as http:
        games = (await http.get("/games")).json()["games"]
        assert "toy" in [g["name"] for g in games]
        r = await http.post("/matches", json={"game": "nope"})
        assert r.status_code == 400 and r.json()["error"]["code"] == "unknown_game"
        r = await http.post("/matches", json={"game": "toy", "options": {"bogus": 1}})
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_options"
        r = await http.post("/matches", content=b"{nope")
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_json"
        r = await http.post("/matches", json={"game": "toy"})
        assert r.status_code == 201
        created = r.json()
        assert len(created["commitment"]) == 64 and created["rules_version"] == "toy-1"
        m = created["match"]
        r = await http.post(f"/matches/{m}/seats", json={"name": "Ann", "seat": 1})
        assert r.status_code == 201 and r.json()["seat"] == 1
        r = await http.post(f"/matches/{m}/seats", json={"name": "Bob", "seat": 1})
        assert r.status_code == 409 and r.json()["error"]["code"] == "seat_taken"
        r = await http.get(f"/matches/{m}/log")
        assert r.status_code == 409 and r.json()["error"]["code"] == "match_not_over"
        status = (await http.get(f"/matches/{m}")).json()
        assert status["seats"][1]["name"] == "Ann" and not status["started"]
        assert "target" not in status["game_state"], "the secret stays secret"
        assert (await http.get("/matches/zzz")).status_code == 404


async def test_ids_and_tokens_are_letters_and_digits(srv: EmbeddedServer) -> None:
    """Both are typed on command lines (`daedalus play --match ID --token T`): a leading
    "-" would be read as an option there, so neither has one, nor "-" or "_" at all."""
    matches, tokens = set(), set()
    async with httpx.AsyncClient(base_url=srv.url) as http:
        for _ in range(40):
            m = (await http.post("/matches", json={"game": "toy"})).json()["match"]
            seats = [(await http.post(f"/matches/{m}/seats", json={"name": n})).json() for n in "AB"]
            matches.add(m)
            tokens.update(s["token"] for s in seats)
    assert len(matches) == 40 and len(tokens) == 80
    assert all(re.fullmatch(r"[A-Za-z0-9]{12}", m) for m in matches), matches
    assert all(re.fullmatch(r"[A-Za-z0-9]{32}", t) for t in tokens), tokens


async def test_a_seat_claimed_again_with_its_own_token_is_the_same_seat(srv: EmbeddedServer) -> None:
    """A client may choose its token: sent again (its answer was lost), the claim gets
    the seat it already has, even once the match is full and has started."""
    mine, theirs = "A" * 16 + "b-_9" * 4, "z" * 40
    async with httpx.AsyncClient(base_url=srv.url) as http:
        m = (await http.post("/matches", json={"game": "toy"})).json()["match"]
        first = await http.post(f"/matches/{m}/seats", json={"name": "Ann", "token": mine})
        assert first.status_code == 201 and first.json()["token"] == mine
        assert first.json()["duplicate"] is False
        again = await http.post(f"/matches/{m}/seats", json={"name": "Ann", "token": mine})
        assert again.status_code == 201
        assert again.json() == {**first.json(), "duplicate": True}
        other = await http.post(f"/matches/{m}/seats", json={"name": "Bob", "token": theirs})
        assert other.json()["seat"] == 1 - first.json()["seat"]
        status = (await http.get(f"/matches/{m}")).json()
        assert status["started"] and [s["name"] for s in status["seats"]].count("Ann") == 1
        late = await http.post(f"/matches/{m}/seats", json={"name": "Bob", "token": theirs})
        assert late.status_code == 201 and late.json()["seat"] == other.json()["seat"]
        full = await http.post(f"/matches/{m}/seats", json={"name": "Cy"})
        assert full.status_code == 409 and full.json()["error"]["code"] == "match_started"
        for bad in ("short", "x" * 129, "has space" * 4, 7):
            r = await http.post(f"/matches/{m}/seats", json={"name": "Cy", "token": bad})
            assert r.status_code == 400 and r.json()["error"]["code"] == "bad_token", bad
    c = await Raw.open(srv.ws_url)
    assert (await c.hello(m, mine))["seat"] == first.json()["seat"]
    await c.close()


async def test_play_ack_updates_and_spectator(srv: EmbeddedServer) -> None:
    m, (t0, t1) = await new_match(srv.url, "toy", {"turn_ms": 60000})
    a, b, spec = [await Raw.open(srv.ws_url) for _ in range(3)]
    assert (await a.hello(m, t0))["seat"] == 0
    assert (await b.hello(m, t1))["role"] == "player"
    welcome = await spec.hello(m)
    assert welcome["role"] == "spectator" and welcome["seat"] is None
    reply = await a.command("c1", {"type": "add", "n": 1})
    assert reply["type"] == "ack" and reply["warnings"] == ["that was a small step"]
    upd = next(x for x in a.seen if x["type"] == "update" and x["seq"] == reply["seq"])
    assert upd["events"][0]["type"] == "added" and upd["view"]["game_state"]["totals"] == [1, 0]
    got = await spec.until(lambda x: x["type"] == "update" and x["seq"] == reply["seq"])
    assert "target" not in got["view"]["game_state"]
    rej = await a.command("c2", {"type": "add", "n": 1})
    assert rej["type"] == "rejected" and rej["code"] == "not_your_turn" and "seq" not in rej
    dup = await a.command("c1", {"type": "add", "n": 1})
    assert dup["type"] == "ack" and dup["duplicate"] and dup["seq"] == reply["seq"]
    # Each viewer's updates are numbered in its own stream, without gaps: the rejected
    # command (logged) shows nobody anything and leaves no hole in anyone's numbering.
    reply = await b.command("b1", {"type": "add", "n": 2})
    def seat1_added(x: dict[str, Any]) -> bool:
        return x["type"] == "update" and any(
            e["type"] == "added" and e["seat"] == 1 for e in x["events"]
        )

    for c in (a, b, spec):
        if not any(seat1_added(x) for x in c.seen):
            await c.until(seat1_added)
        seqs = [x["seq"] for x in c.seen if x["type"] == "update"]
        assert seqs == list(range(1, len(seqs) + 1)), seqs
    await spec.send({"type": "command", "id": "s1", "command": {"type": "add", "n": 1}})
    err = await spec.until(lambda x: x["type"] == "error")
    assert err["code"] == "not_a_player"
    for c in (a, b, spec):
        await c.close()


async def test_bad_input_gets_errors_and_the_connection_survives(srv: EmbeddedServer) -> None:
    m, (t0, _) = await new_match(srv.url, "toy", {"turn_ms": 60000})
    c = await Raw.open(srv.ws_url)
    await c.send("{not json")
    assert (await c.recv())["code"] == "bad_json"
    await c.send({"type": "dance"})
    assert (await c.recv())["code"] == "bad_message"
    await c.send({"type": "command", "id": "x", "command": {"type": "add", "n": 1}})
    assert (await c.recv())["code"] == "not_ready"
    assert (await c.hello("nomatch"))["code"] == "unknown_match"
    assert (await c.hello(m, "wrong-token"))["code"] == "bad_token"
    assert (await c.hello(m, t0, since=999))["code"] == "bad_since"
    assert (await c.hello(m, t0))["type"] == "welcome"
    await c.send("x" * (17 * 1024))
    assert (await c.until(lambda x: x["type"] == "error"))["code"] == "frame_too_large"
    bad = await c.command("b1", {"type": "teleport"})
    assert bad["type"] == "rejected" and bad["code"] == "bad_command"
    bad = await c.command("b2", {"type": "add", "n": "many"})
    assert bad["code"] == "bad_command"
    await c.send({"type": "command", "id": "", "command": {"type": "add", "n": 1}})
    assert (await c.until(lambda x: x["type"] == "error"))["code"] == "bad_id"
    await c.send({"type": "ping"})
    assert (await c.until(lambda x: x["type"] == "pong"))
    ok = await c.command("g1", {"type": "add", "n": 2})
    assert ok["type"] == "ack", "after all that the connection still plays"
    await c.close()


async def test_a_frame_over_the_hard_limit_closes_with_1009(srv: EmbeddedServer) -> None:
    c = await Raw.open(srv.ws_url, max_size=None)
    await c.send("x" * (srv.settings.hard_frame_limit + 10))
    with pytest.raises(websockets.ConnectionClosed) as info:
        await c.recv()
    assert info.value.rcvd is not None and info.value.rcvd.code == 1009


async def test_rate_limit() -> None:
    async with EmbeddedServer(Settings(rate=1, burst=3)) as s:
        c = await Raw.open(s.ws_url)
        for _ in range(6):
            await c.send({"type": "ping"})
        codes = [(await c.recv())["type"] for _ in range(6)]
        assert codes.count("pong") == 3
        assert [(x.get("code")) for x in c.seen if x["type"] == "error"] == ["rate_limited"] * 3
        await c.close()


async def test_origin_allow_list(srv: EmbeddedServer) -> None:
    with pytest.raises(websockets.InvalidStatus) as info:
        await websockets.connect(srv.ws_url, origin="https://evil.example")  # type: ignore[arg-type]
    assert info.value.response.status_code == 403
    ok = await websockets.connect(srv.ws_url, origin="http://localhost:5173")  # type: ignore[arg-type]
    await ok.close()
    async with EmbeddedServer(Settings(allowed_origins=("https://play.example",), strict_origins=True)) as s:
        ok = await websockets.connect(s.ws_url, origin="https://play.example")  # type: ignore[arg-type]
        await ok.close()
        with pytest.raises(websockets.InvalidStatus):
            await websockets.connect(s.ws_url, origin="http://localhost:5173")  # type: ignore[arg-type]


async def test_deadlines_tick_and_the_match_ends_with_its_log(srv: EmbeddedServer) -> None:
    m, (t0, _t1) = await new_match(srv.url, "toy", {"turn_ms": 80})
    a = await Raw.open(srv.ws_url)
    await a.hello(m, t0)
    passed = await a.until(lambda x: x["type"] == "update" and x["events"][0]["type"] == "passed", 3)
    assert passed["view"]["game_state"]["turn"] in (0, 1)
    # play seat 0 only: seat 1 always times out; seat 0 must eventually win
    n = 0
    while True:
        msg = await a.recv(5)
        if msg["type"] == "update" and msg["view"]["ended"]:
            break
        if msg["type"] == "update" and msg["view"]["game_state"]["turn"] == 0:
            n += 1
            await a.send({"type": "command", "id": f"m{n}", "command": {"type": "add", "n": 3}})
    assert msg["view"]["result"]["winner"] == 0
    assert "target" in msg["view"]["game_state"], "after the match everything shows"
    async with httpx.AsyncClient(base_url=srv.url) as http:
        r = await http.get(f"/matches/{m}/log")
    assert r.status_code == 200
    lines = [json.loads(x) for x in r.text.splitlines()]
    assert lines[0]["kind"] == "create" and lines[-1]["seq"] == len(lines)
    assert {x["kind"] for x in lines} >= {"create", "join", "command", "tick"}
    reply = await a.command("late", {"type": "add", "n": 1})
    assert reply["type"] == "rejected" and reply["code"] == "match_over"
    hub = srv.app.state.hub
    assert m not in hub.follower.runners, "nothing is appended to a finished match"
    await a.close()
    async with httpx.AsyncClient(base_url=srv.url) as http:
        for _ in range(50):  # the server sees the close; then nobody follows the match
            if m not in hub.runners or not hub.runners[m].subscribers:
                break
            await asyncio.sleep(0.02)
        assert (await http.get(f"/matches/{m}")).json()["ended"]
    # kept for the next request (Hub.linger) until the sweep lets go of it, unused
    assert m in hub.runners and hub.runners[m].current.ended
    hub._release_idle(grace=0.0)
    assert m not in hub.runners, "a finished match nobody follows leaves memory"


async def test_resume_loses_and_repeats_nothing(srv: EmbeddedServer) -> None:
    m, (t0, t1) = await new_match(srv.url, "toy", {"turn_ms": 60000})
    a, b = await Raw.open(srv.ws_url), await Raw.open(srv.ws_url)
    await a.hello(m, t0)
    await b.hello(m, t1)
    before: list[dict[str, Any]] = []
    for i in range(6):
        mover = a if i % 2 == 0 else b
        await mover.command(f"k{i}", {"type": "add", "n": 1})
        if i == 2:
            # b drops mid-match; its peer plays on (one move refused, one taken while b is
            # away); b resumes from the last update it saw
            before = [x for x in b.seen if x["type"] == "update"]
            await b.close()
            await a.command("k2b", {"type": "add", "n": 1})
            b = await Raw.open(srv.ws_url)
            welcome = await b.hello(m, t1, since=before[-1]["seq"])
            assert welcome["seq"] >= before[-1]["seq"]
            b.seen.clear()
    for c in (a, b):
        while True:
            try:
                await c.recv(0.2)
            except TimeoutError:
                break
    got = before + [x for x in b.seen if x["type"] == "update"]
    assert [x["seq"] for x in got] == list(range(1, len(got) + 1)), "none lost, none repeated"
    a_got = [x for x in a.seen if x["type"] == "update"]
    assert [x["events"] for x in got] == [x["events"] for x in a_got], "the same updates as a"
    await a.close()
    await b.close()


async def test_the_welcome_carries_the_view_and_since_now_skips_the_catch_up(
    srv: EmbeddedServer,
) -> None:
    async with httpx.AsyncClient(base_url=srv.url) as http:
        m = (await http.post("/matches", json={"game": "toy"})).json()["match"]
    early = await Raw.open(srv.ws_url)
    welcome = await early.hello(m)  # before anyone sat down: no update yet, still a view
    assert welcome["seq"] == 0 and welcome["view"]["match"] == m
    assert [s["name"] for s in welcome["view"]["seats"]] == [None, None]
    await early.close()

    m, (t0, t1) = await new_match(srv.url, "toy", {"turn_ms": 60000})
    a = await Raw.open(srv.ws_url)
    await a.hello(m, t0)
    for i in range(2):
        await a.command(f"n{i}", {"type": "add", "n": 1})
        b = await Raw.open(srv.ws_url)
        await b.hello(m, t1)
        await b.command(f"m{i}", {"type": "add", "n": 1})
        await b.close()
    await a.until(lambda x: x["type"] == "update" and x["view"]["game_state"]["totals"] == [2, 2])
    full = [x for x in a.seen if x["type"] == "update"]
    late = await Raw.open(srv.ws_url)
    welcome = await late.hello(m, t0, since="now")  # type: ignore[arg-type]
    assert welcome["seq"] == full[-1]["seq"], "the same stream, numbered as ever"
    assert welcome["view"] == full[-1]["view"]
    assert welcome["view"]["game_state"]["totals"] == [2, 2]
    with pytest.raises(TimeoutError):
        await late.recv(0.3)  # no catch-up
    await a.command("n2", {"type": "add", "n": 1})
    live = await late.until(lambda x: x["type"] == "update")
    assert live["seq"] == welcome["seq"] + 1, "live updates go on from there"
    await late.send({"type": "hello", "match": m, "since": "later"})
    assert (await late.until(lambda x: x["type"] == "error"))["code"] in ("bad_message", "already_joined")
    fresh = await Raw.open(srv.ws_url)
    await fresh.send({"type": "hello", "match": m, "since": "later"})
    assert (await fresh.until(lambda x: x["type"] == "error"))["code"] == "bad_message"
    for c in (a, late, fresh):
        await c.close()


async def test_send_queue_overflow_marks_slow_reader() -> None:
    q = SendQueue(limit=3)
    for i in range(3):
        q.push(b"%d" % i)
    assert not q.overflowed
    q.push(b"x")
    assert q.overflowed
    assert await q.get() is None, "the reader is told to close at once"
    q2 = SendQueue(limit=1)
    for _ in range(10):
        q2.push(b"catch-up", bounded=False)
    assert not q2.overflowed
