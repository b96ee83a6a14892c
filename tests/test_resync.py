"""A store that loses entries it had acknowledged: the server refolds from its log.

A Redis killed under `appendfsync everysec` (or a failover to a lagging replica) comes
back without the last entries it had acknowledged. The matches go on from what the log
holds: each viewer whose stream changed gets a `resync` frame, the loss is logged once,
deadlines tick again, and every match finishes with each client's stream and view the
log's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import structlog

from clients.client import MatchConnection
from domain import engine
from domain.engine import Entry
from projections.common import match_view
from projections.contract import Viewer
from server.config import Settings
from server.core import MatchCore
from server.main import EmbeddedServer
from server.storage import MemoryStore, head_value
from server.store import EventStore, cids_key, head_key, log_key
from tests import toygame
from tests.conftest import RedisProcess, without_real_redis
from tests.wsutil import new_match

toygame.install()

_decode = msgspec.json.Decoder(Entry).decode


class Seat:
    """A seat's client: a bot that adds 1 on its turn (again after a resync), and every
    frame it received."""

    def __init__(self, conn: MatchConnection, seat: int, pause: float) -> None:
        self.conn = conn
        self.seat = seat
        self.pause = pause
        self.frames: list[dict[str, Any]] = []
        self.tasks = [asyncio.create_task(self._read()), asyncio.create_task(self._play())]

    async def _read(self) -> None:
        async for message in self.conn:
            self.frames.append(message)

    async def _play(self) -> None:
        acted: set[tuple[int, int]] = set()

        def due(v: dict[str, Any]) -> bool:
            return (
                v["started"] and not v["ended"] and v["game_state"]["turn"] == self.seat
                and (self.conn.resyncs, v["game_state"]["round"]) not in acted
            )

        while True:
            view = await self.conn.wait_view(due)
            acted.add((self.conn.resyncs, view["game_state"]["round"]))
            await asyncio.sleep(self.pause)
            await self.conn.send_command({"type": "add", "n": 1}, timeout=60)

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.conn.close()


def log_core(entries: list[tuple[str, Entry]]) -> MatchCore[str]:
    core: MatchCore[str] = MatchCore(entries[0][1], entries[0][0])
    folded = core.receive(entries[1:])
    assert folded.error is None and not folded.behind
    return core


def consistent(seat: Seat, core: MatchCore[str]) -> bool:
    """The client's stream length and view are the log's."""
    viewer = Viewer(seat=seat.seat)
    view = seat.conn.view
    return (
        view is not None and view["ended"] and core.current.ended
        and seat.conn.last_seq == core.streams.length(viewer)
        and view == msgspec.json.decode(msgspec.json.encode(match_view(core.hosted.views, core.current, viewer)))
    )


def check_stream(seat: Seat, core: MatchCore[str]) -> int:
    """Every update the client holds (those a resync did not withdraw) is the log's
    update of that number, events and time; numbers never skip or repeat. The number of
    resync frames received."""
    viewer = Viewer(seat=seat.seat)
    log_frames = [msgspec.json.decode(f) for f in core.streams.backlog(viewer, 0)]
    held: dict[int, dict[str, Any]] = {}
    last, resyncs = 0, 0
    for frame in seat.frames:
        if frame["type"] == "update":
            assert frame["seq"] == last + 1, (frame["seq"], last)
            held[last := frame["seq"]] = frame
        elif frame["type"] == "resync":
            resyncs += 1
            assert frame["kept"] <= last
            held = {n: f for n, f in held.items() if n <= frame["kept"]}
            last = frame["seq"]
    assert last == len(log_frames)
    for n, frame in held.items():
        want = log_frames[n - 1]
        assert (frame["events"], frame["ts"]) == (want["events"], want["ts"]), n
    return resyncs


async def until(predicate: Any, seconds: float) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while not await predicate():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.1)


def lose_from_memory(store: MemoryStore, match: str, count: int) -> list[Entry]:
    """What a store that lost its last `count` entries holds: the log, its head and its
    command keys as they were before them."""
    log = store._logs[match]
    lost = [_decode(raw) for raw in log.entries[-count:]]
    del log.entries[-count:]
    log.head = head_value(_decode(log.entries[-1]))
    log.keys = {key: seq for key, seq in log.keys.items() if seq <= len(log.entries)}
    return lost


async def test_lost_entries_are_resynced_and_the_match_finishes() -> None:
    """Failed before: every append after the loss was a conflict that folded nothing, the
    commands got `busy` and the clock never ticked again, so the match never ended."""
    store = MemoryStore()
    with structlog.testing.capture_logs() as logged:
        async with EmbeddedServer(Settings(), store=store) as srv:
            match, tokens = await new_match(srv.url, "toy", {"turn_ms": 300})
            seats = []
            for i, token in enumerate(tokens):
                conn = MatchConnection(srv.url, match, token=token)
                await conn.connect()
                seats.append(Seat(conn, i, 0.02))
            await seats[0].conn.wait_view(lambda v: v["game_state"]["round"] >= 4, timeout=20)
            lost = lose_from_memory(store, match, 3)

            async def finished() -> bool:
                core = log_core(await store.read(match))
                return all(consistent(s, core) for s in seats)

            await until(finished, 30)
            core = log_core(await store.read(match))
            resyncs = [check_stream(s, core) for s in seats]
            for s in seats:
                await s.stop()
    assert any(resyncs) and all(s.conn.resyncs == n for s, n in zip(seats, resyncs, strict=True))
    losses = [e for e in logged if e["event"] == "log_lost_entries"]
    assert len(losses) == 1, losses
    assert losses[0]["log_level"] == "error" and losses[0]["match"] == match
    assert losses[0]["entries"] == [f"{e.seq} {e.kind} seat={e.seat} cid={e.cid}" for e in lost]
    assert not [e for e in logged if e["event"] in ("tick_error", "log_integrity")]


# --- a real redis-server, killed -----------------------------------------------------------


@pytest.fixture
def everysec_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A private redis-server with `appendfsync everysec` (kill() stops it with SIGKILL)."""
    try:
        r = RedisProcess(str(tmp_path), appendfsync="everysec")
        r.start()
    except (FileNotFoundError, RuntimeError) as exc:
        without_real_redis(exc)
    yield r
    r.kill()


@pytest.mark.parametrize("files", ["its own", "a lagging copy"])
async def test_redis_killed_under_everysec_mid_match(everysec_redis: RedisProcess, files: str) -> None:
    """redis-server is killed (SIGKILL) mid-match, right after a burst of appends, and
    started again on its own files, or on a copy of them taken half a second earlier (as
    a failover to a lagging replica: acknowledged entries are lost for certain). Two
    server processes serve the matches, each seat on a different one. Every match
    finishes, each client's stream and view are the log's."""
    redis = everysec_redis
    settings = Settings(redis_url=redis.url)
    async with EmbeddedServer(settings) as one, EmbeddedServer(settings) as two:
        matches: dict[str, list[Seat]] = {}
        for _ in range(4):
            match, tokens = await new_match(one.url, "toy", {"turn_ms": 400})
            matches[match] = []
            for i, (srv, token) in enumerate(zip((one, two), tokens, strict=True)):
                conn = MatchConnection(srv.url, match, token=token)
                await conn.connect()
                matches[match].append(Seat(conn, i, 0.05))
        seats = [s for group in matches.values() for s in group]
        await until(lambda: _all(s.conn.view and s.conn.view["game_state"]["round"] >= 2 for s in seats), 20)
        copy = Path(redis.dir) / "lagging"
        aof = Path(redis.dir) / "appendonlydir"
        if files == "a lagging copy":
            shutil.copytree(aof, copy)
        await asyncio.sleep(0.5)
        await asyncio.to_thread(redis.kill)
        if files == "a lagging copy":
            shutil.rmtree(aof)
            copy.rename(aof)
        await asyncio.sleep(0.3)
        await asyncio.to_thread(redis.start)
        store = EventStore.from_url(redis.url)

        async def finished() -> bool:
            for match, group in matches.items():
                core = log_core(await store.read(match))
                if not all(consistent(s, core) for s in group):
                    return False
            return True

        try:
            await until(finished, 60)
            resyncs = 0
            for match, group in matches.items():
                core = log_core(await store.read(match))
                resyncs += sum(check_stream(s, core) for s in group)
                assert engine.fold(toygame, [e for _, e in await store.read(match)]).ended
        finally:
            for s in seats:
                await s.stop()
            await store.close()
    if files == "a lagging copy":
        assert resyncs, "entries were lost: some stream restarted"


async def _all(values: Any) -> bool:
    return all(values)


async def test_a_client_resuming_beyond_a_shortened_stream_goes_on_from_it() -> None:
    """A client away while its stream restarted comes back with a `since` beyond it:
    `bad_since`. Failed before: the resume was refused and the connection ended; now the
    client says hello again from the stream as it is."""
    async with EmbeddedServer(Settings(), store=MemoryStore()) as srv:
        match, tokens = await new_match(srv.url, "toy", {"turn_ms": 60000})
        async with MatchConnection(srv.url, match, token=tokens[0]) as conn:
            welcome = conn.welcome
            assert welcome is not None and welcome["view"]["started"]
            await conn.wait_view(lambda v: conn.last_seq == welcome["seq"], timeout=5)
            length = conn.last_seq
            conn.last_seq = length + 5  # what it saw of updates the log no longer holds
            await conn.drop()
            assert not conn.closed and conn.resumes == 1 and conn.resyncs == 1
            assert conn.last_seq == conn.hello_since == length
            result = await conn.send_command({"type": "add", "n": 2})
            assert result.accepted
            await conn.wait_view(lambda v: v["game_state"]["totals"] == [2, 0], timeout=5)
            assert conn.last_seq == length + 1


class _Conn:
    """What daedalus play's Session reads of a MatchConnection."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages
        self.view: dict[str, Any] | None = None
        self.last_seq = 0
        self.welcome: dict[str, Any] | None = None
        self.hello_since = 0
        self.close_reason = "closed"

    def backlog(self) -> int:
        return 0

    async def _iterate(self) -> Any:
        for message in self.messages:  # as MatchConnection._dispatch keeps them
            if message["type"] == "welcome":
                self.welcome = message
            else:
                self.last_seq = message["seq"]
                if self.welcome is not None:
                    self.welcome = {**self.welcome, "seq": self.last_seq}
            self.view = message["view"]
            yield message

    def __aiter__(self) -> Any:
        return self._iterate()


async def test_daedalus_play_says_a_resync_and_draws_the_board_the_log_has(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Failed before: `daedalus play` ignored the frame, and its board stayed the one of
    the moves lost until another update came."""
    from clients.play import Session

    def view(totals: list[int], ended: bool = False) -> dict[str, Any]:
        return {"started": True, "ended": ended, "deadline": None,
                "game_state": {"totals": totals, "turn": 0, "round": 3}}

    conn = _Conn([
        {"type": "welcome", "seq": 0, "view": view([0, 0])},
        {"type": "update", "seq": 1, "ts": 0, "events": [{"type": "added"}], "view": view([3, 0])},
        {"type": "resync", "seq": 0, "kept": 0, "view": view([0, 0])},
        {"type": "update", "seq": 1, "ts": 0, "events": [{"type": "added"}], "view": view([2, 0])},
        {"type": "resync", "seq": 1, "kept": 1, "view": view([2, 3], ended=True)},
        {"type": "update", "seq": 9, "ts": 0, "events": [], "view": view([9, 9])},  # never read
    ])
    session = Session(conn, None, "m", "t", None)  # type: ignore[arg-type]
    await session.receive()
    out = capsys.readouterr().out
    assert out.count("went back to its log") == 2
    boards = [json.loads(b) for b in re.findall(r"^\{\n.*?^\}$", out, re.M | re.S)]
    assert [b["game_state"]["totals"] for b in boards] == [[0, 0], [3, 0], [0, 0], [2, 0], [2, 3]]
    assert "[9, 9]" not in out, "the match ended with the resync: nothing more is read"
    assert any("went back to its log" in line for line in session.history)


async def lose_from_redis(store: EventStore, match: str, count: int) -> list[Entry]:
    """What a replica that lagged by `count` entries holds: the stream without them (its
    last id stays, so entries appended later get ids beyond theirs), the head and the
    command keys as they were before them."""
    entries = await store.read(match)
    kept, lost = entries[:-count], entries[-count:]
    r = store.writes
    await r.xdel(log_key(match), *[sid for sid, _ in lost])
    await r.set(head_key(match), head_value(kept[-1][1]))
    keys = await r.hgetall(cids_key(match))
    gone = [k for k, seq in keys.items() if int(seq) > len(kept)]
    await r.hdel(cids_key(match), *gone)
    return [e for _, e in lost]


async def test_a_process_that_only_reads_notices_the_loss_in_what_it_reads(
    private_redis: RedisProcess,
) -> None:
    """A process that appends nothing (a spectator's; no deadline is due) reads, after
    the loss, entries beyond its last one whose seqs it has folded: it folds the log
    again and resyncs its viewer, as the process that appended them did. Failed before:
    the players' process answered `busy`, and the reader skipped those entries."""
    settings = Settings(redis_url=private_redis.url)
    store = EventStore.from_url(private_redis.url)
    with structlog.testing.capture_logs() as logged:
        async with EmbeddedServer(settings) as players, EmbeddedServer(settings) as reader:
            match, tokens = await new_match(players.url, "toy", {"turn_ms": 60000})
            seats = [MatchConnection(players.url, match, token=t) for t in tokens]
            watcher = MatchConnection(reader.url, match)
            for conn in [*seats, watcher]:
                await conn.connect()
            for seat in (0, 1, 0, 1):
                assert (await seats[seat].send_command({"type": "add", "n": 1})).accepted
            await watcher.wait_view(lambda v: v["game_state"]["totals"] == [2, 2], timeout=5)
            lost = await lose_from_redis(store, match, 2)
            # the log holds one addition each (totals 1 and 1): seat 0's turn again
            result = await seats[0].send_command({"type": "add", "n": 3})
            assert result.accepted, result
            await watcher.wait_view(lambda v: v["game_state"]["totals"] == [4, 1], timeout=5)
            core = log_core(await store.read(match))
            want = msgspec.json.decode(msgspec.json.encode(
                match_view(core.hosted.views, core.current, Viewer(seat=None))
            ))
            assert watcher.view == want and watcher.last_seq == core.streams.length(Viewer(seat=None))
            assert watcher.resyncs == 1 and seats[0].resyncs == seats[1].resyncs == 1
            for conn in [*seats, watcher]:
                await conn.close()
    await store.close()
    losses = [e for e in logged if e["event"] == "log_lost_entries"]
    assert len(losses) == 2, "once in each process"
    named = [f"{e.seq} {e.kind} seat={e.seat} cid={e.cid}" for e in lost]
    assert all(e["entries"] == named for e in losses)
    assert not [e for e in logged if e["event"] in ("log_integrity", "tick_error")]
