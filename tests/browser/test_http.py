"""What the server does for the browser client, without a browser: the page at `/` (and
a JSON index for a program), the client's files under /web/, the lobby's listing of
unfinished matches a page at a time, and websockets from the server's own origin."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
import websockets

from server.config import Settings
from server.main import EmbeddedServer
from tests.wsutil import Raw


@pytest.fixture
async def srv() -> AsyncIterator[EmbeddedServer]:
    async with EmbeddedServer() as s:
        yield s


async def test_a_browser_gets_the_client_and_a_program_a_json_index(srv: EmbeddedServer) -> None:
    async with httpx.AsyncClient(base_url=srv.url) as http:
        page = await http.get("/", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
        index = await http.get("/", headers={"Accept": "application/json"})
        script = await http.get("/web/app.js")
        board = await http.get("/web/boards/memory-maze.js")
        missing = await http.get("/web/nothing.js")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/web/app.js">' in page.text
    assert "<noscript>" in page.text and "five-card-trick" in page.text  # the index, without scripts
    assert index.status_code == 200 and index.headers["content-type"] == "application/json"
    assert {g["name"] for g in index.json()["games"]} >= {"five-card-trick", "memory-maze", "keys-to-success"}
    assert index.json()["links"]["lobby"] == "/lobby"
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert board.status_code == 200 and "export default" in board.text
    assert missing.status_code == 404


# The games with a board of their own (clients/web/boards/index.js names them too); any
# other game is shown by boards/generic.js.
OWN_BOARDS = ("five-card-trick", "memory-maze", "keys-to-success", "escalator", "labyrinth")


async def test_the_boards_are_served_and_every_command_has_a_form(srv: EmbeddedServer) -> None:
    """A game without a board of its own gets the generic one, whose forms are built from
    GET /schema: every hosted game's commands must be there as it reads them."""
    async with httpx.AsyncClient(base_url=srv.url) as http:
        for game in (*OWN_BOARDS, "generic"):
            r = await http.get(f"/web/boards/{game}.js")
            assert r.status_code == 200 and "export default" in r.text, game
        games = (await http.get("/games")).json()["games"]
        schema = (await http.get("/schema")).json()
        index = (await http.get("/web/boards/index.js")).text
    assert f"BOARDS = {list(OWN_BOARDS)}".replace("'", '"') in index
    assert set(OWN_BOARDS) <= {g["name"] for g in games}
    for g in games:
        commands = schema["$defs"][f"commands.{g['name']}"]
        for ref in commands.get("anyOf", [commands]):
            d = schema["$defs"][ref["$ref"].removeprefix("#/$defs/")] if "$ref" in ref else ref
            assert d["properties"]["type"]["enum"], (g["name"], d)


async def test_the_lobby_lists_waiting_and_playing_matches_a_page_at_a_time(srv: EmbeddedServer) -> None:
    async with httpx.AsyncClient(base_url=srv.url) as http:
        made = [(await http.post("/matches", json={"game": "five-card-trick"})).json()["match"] for _ in range(3)]
        started = made[0]
        for seat in (0, 1):
            r = await http.post(f"/matches/{started}/seats", json={"name": f"P{seat}", "seat": seat})
            assert r.status_code == 201
        half = made[1]
        assert (await http.post(f"/matches/{half}/seats", json={"name": "Solo", "seat": 1})).status_code == 201

        first = (await http.get("/lobby", params={"state": "waiting", "limit": 1})).json()
        assert len(first["matches"]) == 1 and first["next"] is not None
        second = (await http.get("/lobby", params={"state": "waiting", "after": first["next"]})).json()
        waiting = first["matches"] + second["matches"]
        assert second["next"] is None
        assert sorted(m["match"] for m in waiting) == sorted(made[1:])
        solo = next(m for m in waiting if m["match"] == half)
        assert solo["free"] == [0] and solo["seats"][1]["name"] == "Solo" and not solo["started"]
        assert solo["game"] == "five-card-trick" and solo["title"] == "Five-Card Trick"

        playing = (await http.get("/lobby", params={"state": "playing"})).json()
        assert [m["match"] for m in playing["matches"]] == [started]
        assert playing["matches"][0]["started"] and playing["matches"][0]["free"] == []

        for params, words in (
            ({"state": "over"}, "waiting or playing"),
            ({"limit": "0"}, "limit"),
            ({"limit": "x"}, "limit"),
            ({"limit": "101"}, "limit"),
            ({"page": "2"}, "unknown parameter 'page'"),
        ):
            r = await http.get("/lobby", params=params)
            assert r.status_code == 400 and r.json()["error"]["code"] == "bad_request", params
            assert words in r.json()["error"]["message"]


async def test_a_page_of_the_server_itself_may_open_a_websocket() -> None:
    """With strict origins (only the listed ones), a page the server serves, whose origin
    is the server's own address, is still let in; another origin is not."""
    async with EmbeddedServer(Settings(strict_origins=True)) as srv:
        own = f"http://127.0.0.1:{srv.port}"
        c = await Raw.open(srv.ws_url, origin=own)
        await c.send({"type": "ping"})
        assert (await c.recv())["type"] == "pong"
        await c.close()
        for other in ("http://localhost:1", f"http://127.0.0.1:{srv.port + 1}", "https://evil.example"):
            with pytest.raises(websockets.InvalidStatus) as info:
                await Raw.open(srv.ws_url, origin=other)
            assert info.value.response.status_code == 403


async def _played(srv: EmbeddedServer) -> tuple[str, list[str]]:
    """A short Five-Card Trick match played to its end by two bots; its id and tokens."""
    import random

    from clients.bots import BOTS, play_bot
    from clients.client import MatchConnection

    async with httpx.AsyncClient(base_url=srv.url) as http:
        match = (await http.post("/matches", json={"game": "five-card-trick", "options": {"rounds": 3}})).json()["match"]
        r = await http.get(f"/matches/{match}/replay")
        assert r.status_code == 409 and r.json()["error"]["code"] == "match_not_over"
        tokens = [(await http.post(f"/matches/{match}/seats", json={"name": n})).json()["token"] for n in ("A", "B")]
    conns = [MatchConnection(srv.url, match, token=t) for t in tokens]
    for c in conns:
        await c.connect()
    bots = [BOTS["five-card-trick"]["heuristic"](random.Random(s)) for s in (0, 1)]
    await asyncio.wait_for(asyncio.gather(*(play_bot(c, b) for c, b in zip(conns, bots, strict=True))), 30)
    for c in conns:
        await c.close()
    return match, tokens


async def test_a_replay_is_each_viewers_stream_with_the_view_it_had_then(srv: EmbeddedServer) -> None:
    match, tokens = await _played(srv)
    async with httpx.AsyncClient(base_url=srv.url) as http:
        # (a seat's own replay shows what the rules keep sealed: it takes the seat's token)
        replays = {
            who: (
                await http.get(f"/matches/{match}/replay", params={"as": who, **({"token": t} if t else {})})
            ).json()
            for who, t in (("0", tokens[0]), ("1", tokens[1]), ("spectator", None), ("full", None))
        }
        for params in ({"as": "2"}, {"as": "seat"}, {"round": "1"}):
            r = await http.get(f"/matches/{match}/replay", params=params)
            assert r.status_code == 400 and r.json()["error"]["code"] == "bad_request", params
    for who, token_ in (("0", tokens[0]), ("1", tokens[1]), ("spectator", None), ("full", None)):
        replay = replays[who]
        assert replay["verified"]["ok"] and replay["verified"]["failure"] is None
        assert replay["verified"]["commitment"] and replay["verified"]["setup"] is not None
        updates = replay["updates"]
        assert [u["n"] for u in updates] == list(range(1, len(updates) + 1))
        # the same updates, with the same events, as the viewer's stream over a websocket
        hello: dict[str, object] = {"type": "hello", "match": match, "since": 0}
        if token_:
            hello["token"] = token_
        if who == "full":
            hello["full"] = True
        ws = await Raw.open(srv.ws_url)
        await ws.send(hello)
        welcome = await ws.recv()
        assert welcome["type"] == "welcome" and welcome["seq"] == len(updates), who
        for u in updates:
            frame = await ws.recv()
            # (the replay's viewer must be the one a hello gets: server/app.py replay_viewer
            # and Connection.hello; a replay that showed more would leak it)
            assert (frame["seq"], frame["events"]) == (u["n"], u["events"]), who
        await ws.close()
        # each view is the one of its time: the match ends only at the last
        assert all(not u["view"]["ended"] for u in updates[:-1]) and updates[-1]["view"]["ended"]
    # during play, seat 0 saw its own submissions and not seat 1's; the full view both
    mine = [u for u in replays["0"]["updates"][:-1] if any(e["type"] == "submitted" for e in u["events"])]
    assert mine and all(e.get("seat") == 0 for u in mine for e in u["events"] if "actions" in e)
    pending = [s["pending"] for u in replays["0"]["updates"][:-1] for s in u["view"]["game_state"]["seats"] if s["seat"] == 1]
    assert all(p is None for p in pending)
    assert len(replays["full"]["updates"]) >= len(replays["spectator"]["updates"])
