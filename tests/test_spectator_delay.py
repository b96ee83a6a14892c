"""A spectator delay (the match option `spectator_delay`, server/delay.py): spectators
receive every update no sooner than its delay, in seconds or in rounds; players are not
delayed; GET /matches/{id} and the lobby are held back the same; the end shows everything
at once; every server process applies the match's recorded delay."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from clients.client import decode_log
from clients.replay import verify_entries
from projections.contract import SPECTATOR
from server.config import Settings
from server.main import EmbeddedServer
from server.store import EventStore
from tests import toygame
from tests.conftest import RedisServer
from tests.wsutil import Raw, new_match

toygame.install()

DELAY_MS = 500


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@pytest.fixture
async def srv() -> AsyncIterator[EmbeddedServer]:
    async with EmbeddedServer(Settings(rate=200, burst=400)) as s:
        yield s


class Watcher:
    """A spectator's socket that notes when each frame arrived (server ms)."""

    def __init__(self, raw: Raw) -> None:
        self.raw = raw
        self.frames: list[tuple[int, dict[str, Any]]] = []
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while True:
            msg = await self.raw.recv(timeout=30)
            self.frames.append((now_ms(), msg))

    def updates(self) -> list[tuple[int, dict[str, Any]]]:
        return [(at, m) for at, m in self.frames if m["type"] == "update"]

    async def close(self) -> None:
        self.task.cancel()
        await self.raw.close()


async def watch(srv: EmbeddedServer, match: str, since: int | str = 0) -> tuple[dict[str, Any], Watcher]:
    raw = await Raw.open(srv.ws_url)
    await raw.send({"type": "hello", "match": match, "since": since})
    welcome = await raw.recv()
    return welcome, Watcher(raw)


async def play(players: list[Raw], moves: int, pause: float = 0.0, first: int = 0) -> list[dict[str, Any]]:
    """`moves` turns of the toy race (1 each, so the match runs long), from move
    `first` (seat 0 plays the even ones); the acks."""
    acks = []
    for i in range(first, first + moves):
        ack = await players[i % 2].command(f"m{i}", {"type": "add", "n": 1})
        assert ack["type"] == "ack", ack
        acks.append(ack)
        if pause:
            await asyncio.sleep(pause)
    return acks


async def test_a_spectator_receives_each_update_no_sooner_than_its_delay(srv: EmbeddedServer) -> None:
    match, tokens = await new_match(srv.url, "toy", {"turn_ms": 60_000, "spectator_delay": "0.5s"})
    welcome, early = await watch(srv, match)
    assert welcome["type"] == "welcome" and welcome["delay"] == {"seconds": 0.5}
    players = [await Raw.open(srv.ws_url) for _ in tokens]
    for raw, token in zip(players, tokens, strict=True):
        player_welcome = await raw.hello(match, token)
        assert "delay" not in player_welcome  # players are not delayed
    started = now_ms()
    await play(players, 4, pause=0.15)
    # Players see their moves at once: the last ack's update came long before the delay.
    assert now_ms() - started < 4 * 150 + DELAY_MS
    await asyncio.sleep(DELAY_MS / 1000 + 0.3)
    updates = early.updates()
    assert len(updates) == 6  # two seats taken (the second starts the match), four moves
    for at, update in updates:
        if update["view"]["started"]:
            assert at >= update["ts"] + DELAY_MS, (at - update["ts"], update["events"])
        else:  # a seat taken before the start: nothing is in play yet (as the lobby shows)
            assert update["events"] == [{"type": "seat_taken", "seat": 0, "name": "Ann"}]
    assert [u["seq"] for _, u in updates] == list(range(1, len(updates) + 1))

    # The public view and a new spectator's stream: as they were DELAY_MS ago.
    await players[0].command("m4", {"type": "add", "n": 1})
    async with httpx.AsyncClient(base_url=srv.url) as http:
        held = (await http.get(f"/matches/{match}")).json()
        assert held["game_state"]["round"] == 5 and held["seq"] == len(updates)
        lobby = (await http.get("/lobby", params={"state": "playing"})).json()
        listed = next(m for m in lobby["matches"] if m["match"] == match)
        assert listed["spectator_delay"] == {"seconds": 0.5} and listed["deadline"] == held["deadline"]
        late_welcome, late = await watch(srv, match, since=2)
        assert late_welcome["seq"] == len(updates) and late_welcome["view"]["game_state"]["round"] == 5
        now_welcome, now_watcher = await watch(srv, match, since="now")
        assert now_welcome["seq"] == len(updates)
        beyond = await Raw.open(srv.ws_url)
        refused = await beyond.hello(match, since=len(updates) + 1)  # the next update exists, held back
        assert refused["type"] == "error" and refused["code"] == "bad_since"
        await beyond.close()
        await asyncio.sleep(DELAY_MS / 1000 + 0.2)
        assert (await http.get(f"/matches/{match}")).json()["game_state"]["round"] == 6
        # Not over: no log, no replay.
        assert (await http.get(f"/matches/{match}/log")).status_code == 409
        assert (await http.get(f"/matches/{match}/replay")).status_code == 409
    assert [u["seq"] for _, u in late.updates()] == list(range(3, len(updates) + 2))
    assert [u["seq"] for _, u in now_watcher.updates()] == [len(updates) + 1]
    for watcher in (early, late, now_watcher):
        at, last = watcher.updates()[-1]
        assert at >= last["ts"] + DELAY_MS and last["view"]["game_state"]["round"] == 6

    # The end shows everything at once, to every spectator, with the end's receipt.
    i = 5
    ended: dict[str, Any] | None = None
    while ended is None:
        answer = await players[i % 2].command(f"m{i}", {"type": "add", "n": 3})
        assert answer["type"] == "ack"
        update = players[i % 2].seen[-2]
        if update["view"]["ended"]:
            ended = update
        i += 1
    end_ts = ended["ts"]
    for watcher in (early, late, now_watcher):
        last = await _until(watcher, lambda m: m["type"] == "update" and m["view"]["ended"])
        assert last["receipt"]["what"] == "ended" and last["ts"] == end_ts
        for at, update in watcher.updates():
            if update["view"]["started"]:
                assert at >= min(update["ts"] + DELAY_MS, end_ts), update["events"]
        await watcher.close()
    async with httpx.AsyncClient(base_url=srv.url) as http:
        assert (await http.get(f"/matches/{match}")).json()["ended"] is True
        log = (await http.get(f"/matches/{match}/log")).content
        replay = (await http.get(f"/matches/{match}/replay")).json()
    entries = decode_log(log)
    assert entries[0].body["spectator_delay"] == {"seconds": 0.5}
    assert verify_entries(entries).ok
    # The delayed stream is the spectator's stream, update for update.
    assert [(u["n"], u["ts"], u["events"]) for u in replay["updates"]] == [
        (u["seq"], u["ts"], u["events"]) for _, u in early.updates()
    ]
    for raw in players:
        await raw.close()


async def _until(watcher: Watcher, pred: Any, timeout: float = 5) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for _at, msg in watcher.frames:
            if pred(msg):
                return msg
        await asyncio.sleep(0.02)
    raise AssertionError("never came")


async def test_a_round_delay_shows_round_r_once_round_r_plus_n_has_started(srv: EmbeddedServer) -> None:
    match, tokens = await new_match(srv.url, "toy", {"turn_ms": 60_000, "spectator_delay": "2 rounds"})
    welcome, watcher = await watch(srv, match)
    assert welcome["delay"] == {"rounds": 2}
    players = [await Raw.open(srv.ws_url) for _ in tokens]
    for raw, token in zip(players, tokens, strict=True):
        await raw.hello(match, token)
    async with httpx.AsyncClient(base_url=srv.url) as http:
        for i in range(6):
            await play(players, 1, first=i)
            update = [m for m in players[i % 2].seen if m["type"] == "update"][-1]
            live = update["view"]["game_state"]["round"]
            assert live == i + 2  # the toy race: a move is a round
            await asyncio.sleep(0.1)
            shown = [u["view"]["game_state"]["round"] for _, u in watcher.updates()]
            # Round r's entries come once round r + 2 has started: the latest shown is the
            # state after round live - 2, which is round live - 1 (not before it exists).
            wanted = live - 1 if live >= 3 else 0
            assert max(shown, default=0) == wanted, (live, shown)
            held = (await http.get(f"/matches/{match}")).json()
            assert held["game_state"]["round"] == wanted
    await watcher.close()
    for raw in players:
        await raw.close()


async def test_the_option_in_the_schema_and_refused_outside_it(srv: EmbeddedServer) -> None:
    async with httpx.AsyncClient(base_url=srv.url) as http:
        listing = (await http.get("/games")).json()
        entry = listing["match_options"]["spectator_delay"]
        assert entry["type"] == ["string", "null"] and entry["default"] is None
        assert all("spectator_delay" not in v["options"] for g in listing["games"] for v in g["variants"])
        for bad in ("5 minutes", "-1s", "2.5 rounds", 30):
            r = await http.post("/matches", json={"game": "five-card-trick", "options": {"spectator_delay": bad}})
            assert r.status_code == 400 and "spectator_delay" in r.json()["error"]["message"], bad
        plain = await http.post("/matches", json={"game": "five-card-trick", "options": {"spectator_delay": "0s"}})
        match = plain.json()["match"]
        assert plain.status_code == 201 and "spectator_delay" not in plain.json()["options"]
        # No delay: nothing recorded, the create entry as it always was.
        runner = await srv.app.state.hub.runner(match)
        assert "spectator_delay" not in runner.core.entry(1).body and runner.delayed is None


async def test_every_process_applies_the_recorded_delay(real_redis: RedisServer) -> None:
    """Two servers on one Redis, each with its own connections: the spectator of one
    is delayed as the match, created on the other, records."""
    settings = Settings(rate=200, burst=400)
    stores = [EventStore.from_url(real_redis.url) for _ in range(2)]
    await stores[0].reads.flushdb()
    async with EmbeddedServer(settings, store=stores[0]) as a, EmbeddedServer(settings, store=stores[1]) as b:
        match, tokens = await new_match(a.url, "toy", {"turn_ms": 60_000, "spectator_delay": "0.5s"})
        players = [await Raw.open(a.ws_url) for _ in tokens]
        for raw, token in zip(players, tokens, strict=True):
            await raw.hello(match, token)
        welcome, watcher = await watch(b, match)  # a spectator on the other process
        assert welcome["delay"] == {"seconds": 0.5}
        await play(players, 3, pause=0.1)
        await asyncio.sleep(DELAY_MS / 1000 + 0.4)
        updates = watcher.updates()
        assert [u["view"]["game_state"]["round"] for _, u in updates][-1] == 4
        for at, update in updates:
            assert at >= update["ts"] + DELAY_MS or not update["view"]["started"]
        await watcher.close()
        for raw in players:
            await raw.close()
    for store in stores:
        await store.close()


async def test_a_delayed_spectator_is_resynced_when_the_store_loses_entries() -> None:
    """The store loses entries a delayed spectator had received: it gets a `resync`
    (kept, the stream's length, the view as released) as any viewer does, and at the end
    holds the log's spectator stream."""
    from clients.client import MatchConnection
    from server.core import MatchCore
    from server.storage import MemoryStore
    from tests.test_resync import Seat, log_core, lose_from_memory, until

    store = MemoryStore()
    async with EmbeddedServer(Settings(), store=store) as srv:
        match, tokens = await new_match(srv.url, "toy", {"turn_ms": 300, "spectator_delay": "1 round"})
        watcher = MatchConnection(srv.url, match)
        frames: list[dict[str, Any]] = []
        await watcher.connect()

        async def read() -> None:
            async for message in watcher:
                frames.append(message)

        reader = asyncio.create_task(read())
        seats = []
        for i, token in enumerate(tokens):
            conn = MatchConnection(srv.url, match, token=token)
            await conn.connect()
            seats.append(Seat(conn, i, 0.02))
        await watcher.wait_view(lambda v: v["started"] and v["game_state"]["round"] >= 4, timeout=20)
        lose_from_memory(store, match, 3)  # the last one or two were released to it

        async def finished() -> bool:
            return watcher.view is not None and watcher.view["ended"]

        await until(finished, 30)
        core: MatchCore[str] = log_core(await store.read(match))
        for s in seats:
            await s.stop()
        reader.cancel()
        await watcher.close()
    log_frames = [json.loads(f) for f in core.streams.backlog(SPECTATOR, 0)]
    held: dict[int, dict[str, Any]] = {}
    last, resyncs = 0, 0
    for frame in frames:
        if frame["type"] == "update":
            assert frame["seq"] == last + 1, (frame["seq"], last)
            held[last := frame["seq"]] = frame
        elif frame["type"] == "resync":
            resyncs += 1
            assert frame["kept"] <= last
            held = {n: f for n, f in held.items() if n <= frame["kept"]}
            last = frame["seq"]
    assert resyncs == 1 == watcher.resyncs
    assert last == len(log_frames)
    for n, frame in held.items():
        assert (frame["events"], frame["ts"]) == (log_frames[n - 1]["events"], log_frames[n - 1]["ts"]), n
