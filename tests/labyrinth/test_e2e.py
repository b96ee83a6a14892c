"""Labyrinth end to end through a real server and real websockets: a host creates a match
from its own plan file (a broken one is refused with the rule and the cell), two players
join, choose their starts and play moves typed as text; a dark move's private answer
reaches its player alone; the host watches with the full view by the match's audit key;
the finished log verifies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from clients.client import DaedalusHttp, MatchConnection
from clients.replay import verify_entries
from domain.games.labyrinth.plan_text import parse_plan
from server.main import EmbeddedServer
from tests.wsutil import Raw

PLAN_FILE = Path(__file__).parents[2] / "domain" / "games" / "labyrinth" / "plans" / "example.txt"
GAME = "labyrinth"


async def create(http: httpx.AsyncClient, options: dict[str, Any]) -> httpx.Response:
    return await http.post("/matches", json={"game": GAME, "options": options})


async def hello(srv: EmbeddedServer, frame: dict[str, Any]) -> tuple[Raw, dict[str, Any]]:
    raw = await Raw.open(srv.ws_url)
    await raw.send({"type": "hello", **frame})
    return raw, await raw.until(lambda m: m["type"] in ("welcome", "error"))


def said(update: dict[str, Any]) -> list[str]:
    """The game master's words in an update's `resolved` events, as phrase keys."""
    return [s["key"] for e in update["events"] if e.get("type") == "resolved" for s in e["said"]]


async def updates_until(conn: MatchConnection, pred: Any, timeout: float = 10) -> list[dict[str, Any]]:
    """The updates `conn` receives up to and including the first for which pred holds."""
    seen = []
    while True:
        message = await conn.recv(timeout)
        assert message is not None, "the connection ended"
        if message.get("type") == "update":
            seen.append(message)
            if pred(message):
                return seen


async def test_a_hosts_plan_two_players_a_dark_move_the_hosts_view_and_the_verified_log() -> None:
    text = PLAN_FILE.read_text()
    async with EmbeddedServer() as srv, httpx.AsyncClient(base_url=srv.url) as http:
        # a broken plan is refused, naming the rule and the cell
        broken = await create(http, {"players": 2, "plan": text.replace("treasure 2,3 true", "treasure 5,6 true")})
        assert broken.status_code == 400
        assert broken.json()["error"] == {
            "code": "bad_options",
            "message": "option 'plan' breaks rule 8.3 at cell 5,6: the true treasure lies on weaponry; "
                       "it must lie on land"}
        # the host's own plan file: secret in the answer's options, committed
        r = await create(http, {"players": 2, "plan": text, "clock_scale": 0.5})
        assert r.status_code == 201, r.text
        created = r.json()
        match, audit = created["match"], created["audit_key"]
        assert created["options"]["plan"] is None and created["seats"] == 2

        # the host watches with the full view from before the start, by the audit key
        host, welcome = await hello(srv, {"match": match, "full": True, "audit": audit})
        assert welcome["type"] == "welcome" and welcome["role"] == "auditor", welcome
        full = welcome["view"]["game_state"]["full"]
        assert parse_plan(full["plan_text"]) == parse_plan(text)
        # nobody else: not without the key, not with another, not with a seat's token
        for frame, code in (({}, "match_not_over"), ({"audit": "00" * 32}, "bad_audit_key")):
            raw, refused = await hello(srv, {"match": match, "full": True, **frame})
            assert refused["type"] == "error" and refused["code"] == code, refused
            await raw.close()

        tokens = []
        for name in ("Ann", "Bob"):
            claim = await http.post(f"/matches/{match}/seats", json={"name": name})
            assert claim.status_code == 201
            tokens.append(claim.json()["token"])
        raw, refused = await hello(srv, {"match": match, "full": True, "audit": audit, "token": tokens[0]})
        assert refused["type"] == "error" and refused["code"] == "match_not_over"
        assert "without a seat's token" in refused["message"]
        await raw.close()
        spectator, welcome = await hello(srv, {"match": match})
        assert welcome["role"] == "spectator" and welcome["view"]["game_state"]["full"] is None

        conns = [MatchConnection(srv.url, match, token=t) for t in tokens]
        try:
            for conn in conns:
                await conn.connect()
            view = await conns[0].wait_view(lambda v: v["started"], timeout=10)
            order = view["game_state"]["order"]
            assert sorted(order) == [0, 1]
            first, second = order
            # the starts, in turn order: the fake treasure lies left of 3,2
            starts = {first: [3, 2], second: [5, 2]}
            for seat in order:
                result = await conns[seat].send_command({"type": "start", "cell": starts[seat]}, timeout=10)
                assert result.accepted, result
            view = await conns[first].wait_view(lambda v: v["game_state"]["phase"] == "play", timeout=10)
            assert view["game_state"]["to_act"] == first
            assert [p["started_on"] for p in view["game_state"]["players"]] == ["land", "land"]

            # a dark move: its pick-up is told to its player alone, over the wire
            result = await conns[first].send_command(
                {"type": "move", "move": "go left, don't tell the result"}, timeout=10)
            assert result.accepted, result
            mine = await updates_until(conns[first], lambda u: "dark_done" in said(u))
            theirs = await updates_until(conns[second], lambda u: "dark_done" in said(u))
            watched = await spectator.until(lambda m: m["type"] == "update" and "dark_done" in said(m))
            hosted = await host.until(lambda m: m["type"] == "update" and "dark_done" in said(m))
            assert said(mine[-1]) == ["move", "dark_done", "picked", "turn"]
            assert [s["text"] for e in mine[-1]["events"] for s in e["said"] if "to" in s] == [
                "You picked up a treasure"]
            assert said(theirs[-1]) == ["move", "dark_done", "turn"]
            assert said(watched) == ["move", "dark_done", "turn"]
            assert said(hosted) == ["move", "dark_done", "land", "found", "picked", "turn"]
            assert mine[-1]["view"]["game_state"]["me"]["carries"] == "treasure"
            assert "treasure" not in str(theirs[-1]["view"]["game_state"])
            host_full = hosted["view"]["game_state"]["full"]
            assert host_full["players"][first]["cell"] == [3, 1]
            assert host_full["players"][first]["carries"] == "treasure"

            # text moves: a wall, a status question, then both skip: a draw (6.6)
            result = await conns[second].send_command({"type": "move", "move": "go left, shoot up"}, timeout=10)
            assert result.accepted, result
            status = await conns[first].send_command({"type": "move", "move": "status"}, timeout=10)
            assert status.accepted
            for seat in (first, second):
                result = await conns[seat].send_command({"type": "move", "move": "skip"}, timeout=10)
                assert result.accepted, result
            final = await conns[second].wait_view(lambda v: v["ended"], timeout=10)
        finally:
            for conn in conns:
                await conn.close()
            await spectator.close()
        assert final["result"]["winner"] is None
        assert final["result"]["reason"] == "every player skipped: a draw (6.6)"
        last = await host.until(lambda m: m["type"] == "update" and m["view"]["ended"])
        assert last["view"]["game_state"]["full"] is not None
        await host.close()

        async with DaedalusHttp(srv.url) as client:
            entries = await client.log(match)
    checked = verify_entries(entries)
    assert checked.ok, checked.failure
    assert checked.setup == "host"


async def test_a_match_drawn_from_the_seed_has_no_full_view_before_its_end() -> None:
    async with EmbeddedServer() as srv, httpx.AsyncClient(base_url=srv.url) as http:
        r = await create(http, {"players": 2})
        assert r.status_code == 201
        match, audit = r.json()["match"], r.json()["audit_key"]
        for _ in range(2):
            assert (await http.post(f"/matches/{match}/seats", json={"name": "P"})).status_code == 201
        raw, refused = await hello(srv, {"match": match, "full": True, "audit": audit})
        assert refused == {"type": "error", "code": "match_not_over",
                           "message": "the full view opens when the match is over (this match's "
                           "setup was drawn from its seed: nobody sees it before)", "id": None}
        await raw.close()
