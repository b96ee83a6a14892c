"""GET /matches/{id}/replay and /log: a finished match's replay for a viewer, and its
log, are made once and kept (server/replays.py), within a budget of bytes; and the
finished match itself stays loaded for the next request (Hub.linger)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from server import app as server_app
from server.config import Settings
from server.main import EmbeddedServer
from server.replays import ReplayCache
from tests import toygame
from tests.wsutil import Raw, new_match

toygame.install()


async def _finished_toy(srv: EmbeddedServer) -> str:
    match, tokens = await new_match(srv.url, "toy", {"turn_ms": 60_000})
    players = [await Raw.open(srv.ws_url) for _ in tokens]
    for raw, token in zip(players, tokens, strict=True):
        await raw.hello(match, token)
    for i in range(200):
        ack = await players[i % 2].command(f"m{i}", {"type": "add", "n": 3})
        if ack["type"] != "ack":
            break
    async with httpx.AsyncClient(base_url=srv.url) as http:
        assert (await http.get(f"/matches/{match}")).json()["ended"] is True
    for raw in players:
        await raw.close()
    return match


async def test_a_finished_matchs_replay_is_made_once_per_viewer(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []
    replay_updates = server_app.replay_updates

    def counting(entries: list[Any], viewer: Any) -> dict[str, Any]:
        made.append(viewer)
        return replay_updates(entries, viewer)

    monkeypatch.setattr(server_app, "replay_updates", counting)
    async with EmbeddedServer(Settings()) as srv, httpx.AsyncClient(base_url=srv.url) as http:
        match = await _finished_toy(srv)
        first = await http.get(f"/matches/{match}/replay", params={"as": "full"})
        again = await http.get(f"/matches/{match}/replay", params={"as": "full"})
        assert first.status_code == again.status_code == 200
        assert first.headers["content-type"] == "application/json"
        assert again.content == first.content and first.json()["verified"]["ok"] is True
        assert len(made) == 1, "the second is the kept answer"
        seat = await http.get(f"/matches/{match}/replay", params={"as": "0"})
        assert seat.json()["as"] == 0 and seat.content != first.content
        assert len(made) == 2, "each viewer's own"
        refused = await http.get(f"/matches/{match}/replay", params={"as": "nobody"})
        assert refused.status_code == 400 and len(made) == 2


def test_the_replays_kept_fit_their_budget_the_least_recently_asked_going_first() -> None:
    kept = ReplayCache(max_bytes=10)
    kept.put("a", b"aaaa")
    kept.put("b", b"bbbb")
    assert kept.get("a") == b"aaaa"  # a is now the most recently asked
    kept.put("c", b"cccc")  # 12 bytes: b goes
    assert (kept.get("b"), kept.get("a"), kept.get("c")) == (None, b"aaaa", b"cccc")
    assert kept.size == 8 and len(kept) == 2
    kept.put("big", b"x" * 11)  # alone over the budget: not kept, nothing dropped for it
    assert kept.get("big") is None and len(kept) == 2
    kept.put("a", b"aaaaaa")  # kept again, its new size counted
    assert kept.size == 10 and kept.get("a") == b"aaaaaa"


async def test_a_finished_matchs_log_is_made_once_and_its_audited_form_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Failed before: the public form of a sealed log folds the whole log again, at
    each request (130 ms of the server's time for a 1,000-round Five-Card Trick)."""
    made: list[int] = []
    public_log = server_app.seal.public_log

    def counting(*args: Any) -> Any:
        made.append(1)
        return public_log(*args)

    monkeypatch.setattr(server_app.seal, "public_log", counting)
    async with EmbeddedServer(Settings()) as srv, httpx.AsyncClient(base_url=srv.url) as http:
        created = await http.post("/matches", json={"game": "toy", "options": {"turn_ms": 60_000}})
        match, audit = created.json()["match"], created.json()["audit_key"]
        tokens = [(await http.post(f"/matches/{match}/seats", json={"name": n})).json()["token"] for n in "AB"]
        players = [await Raw.open(srv.ws_url) for _ in tokens]
        for raw, token in zip(players, tokens, strict=True):
            await raw.hello(match, token)
        for i in range(200):
            if (await players[i % 2].command(f"m{i}", {"type": "add", "n": 3}))["type"] != "ack":
                break
        for raw in players:
            await raw.close()
        first = await http.get(f"/matches/{match}/log")
        again = await http.get(f"/matches/{match}/log")
        assert first.status_code == again.status_code == 200
        assert again.content == first.content and len(made) == 1
        assert first.headers["content-type"] == "application/x-ndjson"
        wrong = await http.get(f"/matches/{match}/log", params={"audit": "0" * 64})
        assert wrong.status_code == 403 and wrong.json()["error"]["code"] == "bad_audit_key"
        whole = await http.get(f"/matches/{match}/log", headers={"Audit-Key": audit})
        assert whole.status_code == 200 and whole.content != first.content
        assert (await http.get(f"/matches/{match}/log", params={"audit": audit})).content == whole.content
        assert len(made) == 1, "the audited log is the log itself, kept apart"


async def test_a_finished_match_that_requests_use_is_loaded_once_and_let_go_later() -> None:
    """Failed before: a request for a finished match nobody follows loaded it (its whole
    log read and folded again: 86 ms for a 1,000-round Five-Card Trick) and let go of it
    at once, so every GET /matches/{id} of it loaded it again. It stays loaded now, for
    the next request, until the sweep lets go of it; `finished_kept` at most."""
    async with EmbeddedServer(Settings(runner_idle=1.0, finished_kept=2)) as srv, \
            httpx.AsyncClient(base_url=srv.url) as http:
        hub = srv.app.state.hub
        matches = [await _finished_toy(srv) for _ in range(3)]
        loads: list[str] = []
        load = hub._load

        async def counting(match_id: str) -> Any:
            loads.append(match_id)
            return await load(match_id)

        hub._load = counting
        loop = asyncio.get_running_loop()
        start = loop.time()
        while any(m in hub.runners for m in matches):  # the sweep lets go of them
            assert loop.time() - start < 10
            await asyncio.sleep(0.05)
        for m in matches[:2]:
            for path in ("", "/log", "/replay", ""):
                assert (await http.get(f"/matches/{m}{path}")).status_code == 200
        assert loads == matches[:2] and set(hub.runners) == set(matches[:2])
        assert (await http.get(f"/matches/{matches[2]}")).status_code == 200
        assert set(hub.runners) == set(matches[1:]), "the least recently used let go of"
        start = loop.time()
        while hub.runners:  # and the sweep lets go of the others, unused
            assert loop.time() - start < 10
            await asyncio.sleep(0.05)
