"""Several server processes on one real Redis; a server killed mid-match and restarted."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from clients.client import decode_log
from domain import engine
from projections.seal import verify_public
from tests import toygame
from tests.conftest import RedisServer, _free_port, wait_for_port
from tests.wsutil import Raw, new_match


class Proc:
    """A server process (tests.serve_toy) on a free port; its stderr kept for failures."""

    STOP_WITHIN = 30.0  # past 20 s (3 graces of 5 s, and 5) a server exits 70 on its own

    def __init__(self, redis_url: str, log: Path) -> None:
        self.port = _free_port()
        self.redis_url = redis_url
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = log

    def start(self) -> None:
        env = {**os.environ, "DAEDALUS_LOG_LEVEL": "warning"}
        with self.log.open("ab") as stderr:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.serve_toy", str(self.port), self.redis_url],
                env=env, stderr=stderr,
            )
        if wait_for_port(self.port, 20):
            return
        self.proc.kill()
        raise RuntimeError(f"server process did not start:\n{self.output()}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def output(self) -> str:
        return self.log.read_bytes().decode(errors="replace")[-4000:]

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> float:
        """SIGTERM; the seconds it took the process to exit. A process that does not
        exit in STOP_WITHIN is killed (so it cannot outlive the test) and fails it."""
        if self.proc is None or self.proc.poll() is not None:
            return 0.0
        started = time.monotonic()
        self.proc.terminate()
        try:
            self.proc.wait(self.STOP_WITHIN)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError(
                f"the server did not exit within {self.STOP_WITHIN} s of SIGTERM:\n{self.output()}"
            ) from None
        # uvicorn ends by raising the signal it caught again; 70: its shutdown got stuck
        if self.proc.returncode not in (0, -signal.SIGTERM):
            raise AssertionError(
                f"the server exited with {self.proc.returncode} on SIGTERM:\n{self.output()}"
            )
        return time.monotonic() - started


@pytest.fixture
def two(real_redis: RedisServer, tmp_path: Path) -> Iterator[tuple[Proc, Proc]]:
    import redis

    with redis.Redis.from_url(real_redis.url) as r:
        r.flushdb()  # a server resumes every unfinished match it finds: start clean
    procs = (Proc(real_redis.url, tmp_path / "p1.log"), Proc(real_redis.url, tmp_path / "p2.log"))
    try:
        for p in procs:
            p.start()
        yield procs
    finally:
        failures = []
        for p in procs:  # every process is stopped, even when one fails to
            try:
                p.stop()
            except AssertionError as exc:
                failures.append(str(exc))
        assert not failures, "\n".join(failures)


async def _log(base: str, match: str) -> list[engine.Entry]:
    async with httpx.AsyncClient(base_url=base) as http:
        r = await http.get(f"/matches/{match}/log")
        r.raise_for_status()
    return decode_log(r.content)  # (the public log: projections/seal.py)


async def _play_to_the_end(players: dict[int, Raw], acked: list[str]) -> dict[str, object]:
    """Each player adds 1 on its turn until the match ends; returns the last view."""
    n = 0
    pending: dict[int, asyncio.Task[dict[str, object]]] = {}
    for seat, c in players.items():
        pending[seat] = asyncio.create_task(c.recv(10))
    while True:
        done, _ = await asyncio.wait(pending.values(), return_when=asyncio.FIRST_COMPLETED)
        for seat, task in list(pending.items()):
            if task not in done:
                continue
            msg = task.result()
            if msg["type"] == "ack":
                acked.append(str(msg["id"]))
            if msg["type"] == "update":
                view = msg["view"]
                if view["ended"]:  # type: ignore[index]
                    for t in pending.values():
                        t.cancel()
                    return view  # type: ignore[return-value]
                if view["game_state"]["turn"] == seat:  # type: ignore[index]
                    n += 1
                    await players[seat].send(
                        {"type": "command", "id": f"s{seat}-{n}", "command": {"type": "add", "n": 1}}
                    )
            pending[seat] = asyncio.create_task(players[seat].recv(10))


async def test_two_processes_serve_the_two_players_of_one_match(two: tuple[Proc, Proc]) -> None:
    p1, p2 = two
    match, (t0, t1) = await new_match(p1.url, "toy", {"turn_ms": 60000})
    a, b = await Raw.open(p1.ws), await Raw.open(p2.ws)
    assert (await a.hello(match, t0))["type"] == "welcome"
    assert (await b.hello(match, t1))["type"] == "welcome"
    acked: list[str] = []
    view = await _play_to_the_end({0: a, 1: b}, acked)
    assert view["result"]["winner"] in (0, 1)  # type: ignore[index]
    entries = await _log(p2.url, match)
    assert verify_public({"toy": (toygame, toygame.Views)}, entries).ok  # type: ignore[arg-type]
    assert set(acked) <= {e.cid for e in entries if e.kind == "command"}
    await a.close()
    await b.close()


async def test_ticks_from_two_processes_land_once(two: tuple[Proc, Proc]) -> None:
    p1, p2 = two
    match, (_t0, _t1) = await new_match(p1.url, "toy", {"turn_ms": 50})
    # both processes follow the match (each has a viewer), nobody plays: ticks only
    a, b = await Raw.open(p1.ws), await Raw.open(p2.ws)
    await a.hello(match)
    await b.hello(match)
    await asyncio.sleep(1.0)
    async with httpx.AsyncClient(base_url=p1.url) as http:
        seq = (await http.get(f"/matches/{match}")).json()["seq"]
    await a.close()
    await b.close()
    # the toy game never ends on ticks alone; read the stream directly
    from server.store import EventStore

    store = EventStore.from_url(p1.redis_url)
    entries = [e for _, e in await store.read(match)]
    await store.close()
    ticks = [e for e in entries if e.kind == "tick"]
    assert len(ticks) >= 5 and seq >= 5
    assert len({e.cid for e in ticks}) == len(ticks), "no deadline ticked twice"
    ms = engine.fold(toygame, entries)
    assert ms.seq == len(entries)


async def test_a_killed_server_restarts_and_the_match_goes_on(two: tuple[Proc, Proc]) -> None:
    p1, p2 = two
    match, (t0, t1) = await new_match(p1.url, "toy", {"turn_ms": 60000})
    a = await Raw.open(p1.ws)
    await a.hello(match, t0)
    acked: list[str] = []
    for i in range(2):
        reply = await a.command(f"x{i}", {"type": "add", "n": 1})
        assert reply["type"] == "ack"
        acked.append(f"x{i}")
        b = await Raw.open(p1.ws)
        await b.hello(match, t1, since=0)
        reply = await b.command(f"y{i}", {"type": "add", "n": 1})
        assert reply["type"] == "ack"
        acked.append(f"y{i}")
        await b.close()
    seen = max(x["seq"] for x in a.seen if x["type"] == "update")
    p1.kill()  # SIGKILL mid-match: no shutdown, no flush
    p1.start()  # a new process on the same port and Redis
    a = await Raw.open(p1.ws)
    welcome = await a.hello(match, t0, since=0)
    assert welcome["seq"] == seen + 1, "every accepted command is still there (and b's last)"
    caught_up = [await a.recv() for _ in range(welcome["seq"])]
    assert [x["seq"] for x in caught_up] == list(range(1, seen + 2))
    assert caught_up[-1]["view"]["game_state"]["totals"] == [2, 2]
    assert (await a.command("x2", {"type": "add", "n": 1}))["type"] == "ack"
    acked.append("x2")
    b = await Raw.open(p2.ws)
    await b.hello(match, t1)
    view = await _play_to_the_end({0: a, 1: b}, acked)
    assert view["ended"]
    entries = await _log(p1.url, match)
    assert verify_public({"toy": (toygame, toygame.Views)}, entries).ok  # type: ignore[arg-type]
    assert set(acked) <= {e.cid for e in entries}
    await a.close()
    await b.close()


async def test_sigterm_stops_a_server_with_viewers_connected(two: tuple[Proc, Proc]) -> None:
    """Connected viewers of a live, ticking match do not keep a server from stopping:
    they are told it restarts (1012), and the other process serves the match on."""
    p1, p2 = two
    match, (t0, t1) = await new_match(p1.url, "toy", {"turn_ms": 50})
    reader, idle = await Raw.open(p1.ws), await Raw.open(p1.ws)
    assert (await reader.hello(match, t0))["type"] == "welcome"
    assert (await idle.hello(match, t1))["type"] == "welcome"  # and reads nothing more
    other = await Raw.open(p2.ws)
    assert (await other.hello(match))["type"] == "welcome"
    await reader.until(lambda m: m["type"] == "update" and m["seq"] >= 3)
    took = await asyncio.to_thread(p1.stop)
    assert took < Proc.STOP_WITHIN
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await reader.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
    # the match goes on in the other process: its clock still ticks
    seq = (await other.until(lambda m: m["type"] == "update"))["seq"]
    await other.until(lambda m: m["type"] == "update" and m["seq"] >= seq + 3)
    await other.close()


STUCK_SERVER = """
import asyncio, contextlib, sys
import uvicorn
from starlette.applications import Starlette
from server.main import _Server

@contextlib.asynccontextmanager
async def lifespan(app):
    yield
    while True:  # a shutdown step that ignores being cancelled
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(1)

config = uvicorn.Config(Starlette(lifespan=lifespan), port=int(sys.argv[1]), log_level="error")
_Server(config, stuck_after=1.0).run()
"""


def test_a_server_whose_shutdown_is_stuck_exits_anyway(tmp_path: Path) -> None:
    port = _free_port()
    with (tmp_path / "err").open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", STUCK_SERVER, str(port)], stdout=err, stderr=err
        )
    try:
        assert wait_for_port(port, 20), "the server did not start"
        proc.terminate()
        assert proc.wait(15) == 70
    finally:
        proc.kill()
        proc.wait()
    assert "shutdown_stuck" in (tmp_path / "err").read_text()


async def test_a_restarted_server_resumes_every_unfinished_match(two: tuple[Proc, Proc]) -> None:
    """Nobody connects after the restart: the match's clock runs again all the same,
    because a server follows every unfinished match it finds (in the background: it
    serves meanwhile, and /health counts what is still to resume)."""
    p1, p2 = two
    match, _tokens = await new_match(p1.url, "toy", {"turn_ms": 200})
    p2.kill()
    p1.kill()
    from server.store import EventStore

    store = EventStore.from_url(p1.redis_url)
    before = len(await store.read(match))
    p1.start()
    async with httpx.AsyncClient(base_url=p1.url) as http:
        for _ in range(100):
            health = (await http.get("/health")).json()
            if health["resuming"] == 0:
                break
            await asyncio.sleep(0.05)
        assert health == {"ok": True, "resuming": 0}
    for _ in range(100):
        entries = [e for _, e in await store.read(match)]
        if len(entries) >= before + 3:
            break
        await asyncio.sleep(0.05)
    await store.close()
    assert [e.kind for e in entries[before:]][:3] == ["tick"] * 3, "its clock runs again"
