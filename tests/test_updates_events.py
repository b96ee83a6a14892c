"""Updates without the view (a hello's `"updates": "events"`) and the `view` request.

A connection that asks for events only gets the very frames a connection of the same
viewer gets, each without its `view` (the same numbers, times, events and receipts), live
and when catching up; it asks for the view with `{"type": "view"}` and gets it with the
number of the update it is the view after. Spectators, delayed ones too, the same."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from server.config import Settings
from server.main import EmbeddedServer
from server.messages import server_decoder
from tests import toygame
from tests.wsutil import Raw, new_match

toygame.install()


@pytest.fixture
async def srv(tmp_path: Path) -> AsyncIterator[EmbeddedServer]:
    settings = Settings(rate=500, burst=1000, key_file=str(tmp_path / "key.pem"))
    async with EmbeddedServer(settings) as s:
        yield s


async def joined(
    srv: EmbeddedServer, match: str, token: str | None, updates: str | None = None, since: int = 0
) -> tuple[Raw, dict[str, Any]]:
    raw = await Raw.open(srv.ws_url)
    hello: dict[str, Any] = {"type": "hello", "match": match, "token": token, "since": since}
    if updates is not None:
        hello["updates"] = updates
    await raw.send(hello)
    welcome = await raw.until(lambda m: m["type"] in ("welcome", "error"))
    assert welcome["type"] == "welcome", welcome
    return raw, welcome


async def frames_until_quiet(raw: Raw, quiet: float = 0.3) -> list[dict[str, Any]]:
    """Every frame the connection received (those a command waited through too), once
    none has come for `quiet` seconds."""
    while True:
        try:
            await raw.recv(timeout=quiet)
        except TimeoutError:
            return raw.seen


def without_view(frame: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in frame.items() if k != "view"}


async def play_toy(players: list[Raw], moves: int, first: int = 0) -> None:
    for i in range(first, first + moves):
        ack = await players[i % 2].command(f"m{i}", {"type": "add", "n": 1})
        assert ack["type"] == "ack", ack


async def test_events_only_updates_are_the_view_updates_without_their_view(srv: EmbeddedServer) -> None:
    match, tokens = await new_match(srv.url, "toy", {"turn_ms": 60_000})
    a, _ = await joined(srv, match, tokens[0])
    b, _ = await joined(srv, match, tokens[1])
    a_bare, welcome = await joined(srv, match, tokens[0], "events")
    spectator, _ = await joined(srv, match, None)
    spectator_bare, _ = await joined(srv, match, None, "events")
    assert "view" in welcome  # the welcome carries the view in either form
    await play_toy([a, b], 6)
    seen = {name: await frames_until_quiet(raw) for name, raw in
            [("a", a), ("a_bare", a_bare), ("spectator", spectator), ("spectator_bare", spectator_bare)]}
    for full, bare in [("a", "a_bare"), ("spectator", "spectator_bare")]:
        with_views = [f for f in seen[full] if f["type"] in ("update", "receipt")]
        bare_frames = [f for f in seen[bare] if f["type"] in ("update", "receipt")]
        assert with_views and all("view" in f for f in with_views if f["type"] == "update")
        assert all("view" not in f for f in bare_frames)
        assert bare_frames == [without_view(f) for f in with_views]
        for frame in bare_frames:  # each one a server message as the schema has it
            server_decoder.decode(json.dumps(frame).encode())
    # A player's round receipts come in its updates in either form.
    assert any("receipt" in f for f in seen["a_bare"] if f["type"] == "update")

    # The view asked for is the view after the last update sent, as the other form has it.
    await a_bare.send({"type": "view"})
    answer = await a_bare.until(lambda m: m["type"] == "view")
    last = [f for f in seen["a"] if f["type"] == "update"][-1]
    assert answer == {"type": "view", "seq": last["seq"], "view": last["view"]}
    server_decoder.decode(json.dumps(answer).encode())
    # On a connection with views too, and for a spectator.
    await a.send({"type": "view"})
    assert (await a.until(lambda m: m["type"] == "view"))["view"] == last["view"]
    await spectator_bare.send({"type": "view"})
    seen_by_spectator = [f for f in seen["spectator"] if f["type"] == "update"][-1]
    answer = await spectator_bare.until(lambda m: m["type"] == "view")
    assert (answer["seq"], answer["view"]) == (seen_by_spectator["seq"], seen_by_spectator["view"])
    for raw in (a, b, a_bare, spectator, spectator_bare):
        await raw.close()


async def test_catching_up_without_views_and_a_view_asked_for_midway(srv: EmbeddedServer) -> None:
    match, tokens = await new_match(srv.url, "toy", {"turn_ms": 60_000})
    a, _ = await joined(srv, match, tokens[0])
    b, _ = await joined(srv, match, tokens[1])
    await play_toy([a, b], 4)
    updates = [f for f in await frames_until_quiet(b) if f["type"] == "update"]
    later, welcome = await joined(srv, match, tokens[1], "events", since=1)
    backlog = [f for f in await frames_until_quiet(later) if f["type"] == "update"]
    # Caught up, each update carried the view as of now (here: none), and no receipt (the
    # latest is in the welcome) in either form.
    assert backlog == [{k: v for k, v in f.items() if k not in ("view", "receipt")} for f in updates[1:]]
    assert welcome["seq"] == updates[-1]["seq"] and welcome["receipt"]["what"] == "round"
    # Asked for between two commands, the view follows the last update sent before it.
    await later.send({"type": "view"})
    await play_toy([a, b], 1, first=4)
    frames = await frames_until_quiet(later)
    kinds = [f["type"] for f in frames]
    view_at = kinds.index("view")
    answer = frames[view_at]
    sent_before = [f["seq"] for f in frames[:view_at] if f["type"] == "update"]
    assert answer["seq"] == (sent_before[-1] if sent_before else welcome["seq"])
    for raw in (a, b, later):
        await raw.close()


async def test_a_view_request_before_the_hello_and_a_bad_updates_field_are_refused(
    srv: EmbeddedServer,
) -> None:
    match, _ = await new_match(srv.url, "toy", {"turn_ms": 60_000})
    raw = await Raw.open(srv.ws_url)
    await raw.send({"type": "view"})
    error = await raw.recv()
    assert (error["type"], error["code"]) == ("error", "not_ready")
    await raw.send({"type": "hello", "match": match, "updates": "patches"})
    error = await raw.recv()
    assert (error["type"], error["code"]) == ("error", "bad_message")
    await raw.send({"type": "view", "since": 3})
    error = await raw.recv()
    assert (error["type"], error["code"]) == ("error", "bad_message")
    await raw.close()


async def test_a_delayed_spectator_without_views(srv: EmbeddedServer) -> None:
    match, tokens = await new_match(srv.url, "toy", {"turn_ms": 60_000, "spectator_delay": "0.4s"})
    a, _ = await joined(srv, match, tokens[0])
    b, _ = await joined(srv, match, tokens[1])
    watcher, _ = await joined(srv, match, None)
    bare, _ = await joined(srv, match, None, "events")
    await play_toy([a, b], 4)
    await asyncio.sleep(0.6)
    with_views = [f for f in await frames_until_quiet(watcher) if f["type"] == "update"]
    bare_frames = [f for f in await frames_until_quiet(bare) if f["type"] == "update"]
    assert with_views and bare_frames == [without_view(f) for f in with_views]
    await bare.send({"type": "view"})
    answer = await bare.until(lambda m: m["type"] == "view")
    assert (answer["seq"], answer["view"]) == (with_views[-1]["seq"], with_views[-1]["view"])
    # Right after a command, the view is as the delay releases it, not the match now.
    await play_toy([a, b], 1, first=4)
    await bare.send({"type": "view"})
    answer = await bare.until(lambda m: m["type"] == "view")
    assert answer["seq"] == with_views[-1]["seq"]
    for raw in (a, b, watcher, bare):
        await raw.close()


async def test_the_client_library_on_events_only(srv: EmbeddedServer) -> None:
    from clients.client import MatchConnection

    with pytest.raises(ValueError, match="updates"):
        MatchConnection(srv.url, "m", updates="patches")
    match, tokens = await new_match(srv.url, "toy", {"turn_ms": 60_000})
    async with MatchConnection(srv.url, match, tokens[0], updates="events") as a, \
            MatchConnection(srv.url, match, tokens[1]) as b:
        welcome_view = a.view
        assert welcome_view is not None
        for _ in range(3):
            assert (await a.send_command({"type": "add", "n": 1})).accepted
            assert (await b.send_command({"type": "add", "n": 1})).accepted
        assert a.view == welcome_view  # updates without a view leave it as it was
        await a.drop()  # the resume's hello asks for events only again
        assert (await a.send_command({"type": "add", "n": 1})).accepted
        view = await a.request_view()
        mine = await b.request_view()  # (b's own view, to compare the shared part)
        assert view["game_state"] == mine["game_state"] and view["you"] == 0
        seen: list[dict[str, Any]] = []
        while a.backlog():
            message = await a.recv()
            assert message is not None
            seen.append(message)
        kinds = {m["type"] for m in seen}
        assert "update" in kinds and "view" in kinds
        assert all("view" not in m for m in seen if m["type"] == "update")


async def test_the_protocol_version_is_in_every_welcome_and_in_the_index(srv: EmbeddedServer) -> None:
    """A client can tell whether the server knows `"updates": "events"` and `view` before
    it asks for them: version 2 (docs/protocol.md, Versions)."""
    import httpx

    from server.messages import PROTOCOL

    assert PROTOCOL == 2
    match, tokens = await new_match(srv.url, "toy", {"turn_ms": 60_000})
    for token, updates in [(tokens[0], None), (None, "events")]:
        raw, welcome = await joined(srv, match, token, updates)
        assert welcome["protocol"] == PROTOCOL
        server_decoder.decode(json.dumps(welcome))  # the schema's Welcome: protocol >= 2
        await raw.close()
    async with httpx.AsyncClient(base_url=srv.url) as http:
        index = (await http.get("/", headers={"accept": "application/json"})).json()
    assert index["protocol"] == PROTOCOL
