"""`daedalus serve --workers N`: N server processes on one port, one real Redis."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from clients.bots import BOTS, play_bot
from clients.client import MatchConnection, decode_log
from clients.replay import verify_entries
from tests.conftest import RedisServer, _free_port, wait_for_port
from tests.wsutil import new_match


class Workers:
    """`python -m clients.cli serve --workers N` on a free port; its log lines (JSON) kept."""

    def __init__(self, redis_url: str | None, log: Path, workers: int = 2) -> None:
        self.port = _free_port()
        self.log = log
        env = {**os.environ, "DAEDALUS_LOG_LEVEL": "info", "DAEDALUS_HEADER_TIMEOUT": "2"}
        env.pop("REDIS_URL", None)
        args = [sys.executable, "-m", "clients.cli", "serve", "--port", str(self.port),
                "--workers", str(workers)]
        if redis_url:
            args += ["--redis-url", redis_url]
        with log.open("wb") as out:
            self.proc = subprocess.Popen(args, env=env, stderr=out, stdout=out)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def lines(self) -> list[dict[str, Any]]:
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
        return found

    def wait_for(self, event: str, count: int, seconds: float = 20) -> list[dict[str, Any]]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = [x for x in self.lines() if x.get("event") == event]
            if len(found) >= count:
                return found
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"no {count} {event!r} lines:\n{self.log.read_text()[-4000:]}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                for pid in self.pids():
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                raise
        return self.proc.returncode

    def pids(self) -> list[int]:
        return [int(p) for x in self.lines() if x.get("event") == "workers" for p in x["pids"]]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def workers(real_redis: RedisServer, tmp_path: Path) -> Iterator[Workers]:
    import redis

    with redis.Redis.from_url(real_redis.url) as r:
        r.flushdb()  # a server resumes every unfinished match it finds: start clean
    w = Workers(real_redis.url, tmp_path / "serve.log")
    try:
        assert wait_for_port(w.port, 20), w.log.read_text()
        w.wait_for("listening", 2)
        yield w
    finally:
        w.stop()


def _joined(w: Workers, match: str, seat: int) -> list[int]:
    """The pids of the workers a seat's viewer joined, in order."""
    return [int(x["pid"]) for x in w.lines()
            if x.get("event") == "viewer_joined" and x.get("match") == match and x.get("seat") == seat]


async def _connect(
    w: Workers, match: str, token: str, seat: int, route: bool = True
) -> tuple[MatchConnection, int]:
    before = len(_joined(w, match, seat))
    conn = MatchConnection(w.url, match, token=token, resume=False, route=route)
    await conn.__aenter__()
    for _ in range(200):
        pids = _joined(w, match, seat)
        if len(pids) > before:
            return conn, pids[-1]
        await asyncio.sleep(0.02)
    raise AssertionError(f"seat {seat}'s hello was not logged:\n{w.log.read_text()[-3000:]}")


async def test_two_workers_serve_the_two_players_of_one_match(workers: Workers) -> None:
    w = workers
    listening = {int(x["pid"]) for x in w.wait_for("listening", 2)}
    assert listening == set(w.pids()) and len(listening) == 2
    match, (t0, t1) = await new_match(w.url, "five-card-trick")
    a, pid_a = await _connect(w, match, t0, 0, route=False)
    # Which worker accepts a connection is the kernel's choice (the match not named in the
    # URL, server/route.py): connect seat 1 again until it lands on the other worker (each
    # try is a new connection to the shared socket).
    for _ in range(40):
        b, pid_b = await _connect(w, match, t1, 1, route=False)
        if pid_b != pid_a:
            break
        await b.__aexit__(None, None, None)
    assert pid_a != pid_b, "forty connections all went to one worker"
    bots = BOTS["five-card-trick"]
    views = await asyncio.wait_for(asyncio.gather(
        play_bot(a, bots["random"](random.Random(1))), play_bot(b, bots["random"](random.Random(2))),
    ), 120)
    assert all(v["ended"] for v in views)
    async with httpx.AsyncClient(base_url=w.url) as http:
        r = await http.get(f"/matches/{match}/log")
        r.raise_for_status()
    entries = decode_log(r.content)
    assert verify_entries(entries).ok
    acked = {e.cid for e in entries if e.kind == "command" and e.seat == 1}
    assert acked, "the seat served by the other worker played"
    await a.__aexit__(None, None, None)
    await b.__aexit__(None, None, None)
    pids = w.pids()
    assert w.stop() == 0
    assert not [p for p in pids if alive(p)], "every worker stopped"
    stopped = [x for x in w.lines() if x.get("event") == "worker_stopped"]
    assert sorted(int(x["pid"]) for x in stopped) == sorted(pids)
    assert all(x["status"] == 0 for x in stopped)


async def test_a_connection_naming_its_match_is_served_by_the_matchs_worker(workers: Workers) -> None:
    """The match in the websocket's URL: whichever worker accepts the connection, the one
    that owns the match (server/route.py) serves it, and the players play to the end on
    connections handed over that way."""
    from server.route import owner_of

    w = workers
    pid_of = {int(x["worker"]): int(x["pid"]) for x in w.wait_for("listening", 2)}
    owners: dict[int, tuple[str, list[str]]] = {}
    while len(owners) < 2:  # a match owned by each worker
        match, tokens = await new_match(w.url, "five-card-trick")
        owners.setdefault(owner_of(match, 2), (match, tokens))
    for owner, (match, (t0, t1)) in owners.items():
        conns = []
        for _ in range(4):  # the kernel would put about half on the other worker
            for seat, token in ((0, t0), (1, t1)):
                conn, pid = await _connect(w, match, token, seat)
                assert pid == pid_of[owner], (match, seat, pid, pid_of)
                conns.append(conn)
        for conn in conns[:-2]:
            await conn.__aexit__(None, None, None)
        a, b = conns[-2:]
        bots = BOTS["five-card-trick"]
        views = await asyncio.wait_for(asyncio.gather(
            play_bot(a, bots["random"](random.Random(1))), play_bot(b, bots["random"](random.Random(2))),
        ), 120)
        assert all(v["ended"] for v in views)
        await a.__aexit__(None, None, None)
        await b.__aexit__(None, None, None)
    assert w.stop() == 0


async def test_a_seat_taken_on_a_new_connection_is_taken_by_the_matchs_worker(workers: Workers) -> None:
    """An HTTP connection whose first request is under /matches/<id> goes to the match's
    worker too (server/route.py): each seat claimed on a connection of its own is logged
    by the owner, whichever worker accepted it."""
    from server.route import owner_of

    w = workers
    pid_of = {int(x["worker"]): int(x["pid"]) for x in w.wait_for("listening", 2)}
    for _ in range(3):
        async with httpx.AsyncClient(base_url=w.url) as http:
            r = await http.post("/matches", json={"game": "keys-to-success", "options": {}})
            r.raise_for_status()
            match = r.json()["match"]
        for seat in range(4):
            async with httpx.AsyncClient(base_url=w.url) as http:  # a connection of its own
                r = await http.post(f"/matches/{match}/seats", json={"name": f"p{seat}"})
                r.raise_for_status()
        claimed = [int(x["pid"]) for x in w.lines() if x.get("event") == "seat_claimed" and x.get("match") == match]
        assert claimed == [pid_of[owner_of(match, 2)]] * 4, (match, claimed, pid_of)
    assert w.stop() == 0


async def test_each_workers_metrics_are_read_on_the_one_port(workers: Workers) -> None:
    """GET /metrics?worker=k is answered by worker k, whichever accepted the connection
    (server/route.py); its hand-off counters count the connections it handed and adopted."""
    from prometheus_client.parser import text_string_to_metric_families

    w = workers
    pid_of = {int(x["worker"]): int(x["pid"]) for x in w.wait_for("listening", 2)}
    seen: dict[int, list[float]] = {0: [], 1: []}
    kept = httpx.AsyncClient(base_url=w.url)  # one kept-alive connection, as a scraper keeps
    for i in range(12):
        for k in (0, 1):
            if i % 2:
                r = await kept.get("/metrics", params={"worker": str(k)})
            else:
                async with httpx.AsyncClient(base_url=w.url) as http:  # a connection of its own
                    r = await http.get("/metrics", params={"worker": str(k)})
            assert r.status_code == 200, r.text
            samples = {
                (s.name, tuple(sorted(s.labels.items()))): s.value
                for family in text_string_to_metric_families(r.text) for s in family.samples
            }
            assert samples[("daedalus_worker", (("worker", str(k)), ("workers", "2")))] == 1
            assert samples[("process_start_time_seconds", ())] > 0
            seen[k].append(samples[("daedalus_connections_handed_total", ())]
                           + samples[("daedalus_connections_adopted_total", ())])
    # Twelve connections, about half accepted by the other worker: each hand-off counted
    # once by the worker that handed it and once by the one that adopted it.
    assert sum(max(v) for v in seen.values()) >= 2
    r = await kept.get("/metrics", params={"worker": "2"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_worker"
    await kept.aclose()
    assert sorted(pid_of) == [0, 1]
    assert w.stop() == 0


async def test_seats_taken_over_one_kept_alive_connection_are_taken_by_each_matchs_worker(
    workers: Workers,
) -> None:
    """A later request on a kept-alive connection naming a match another worker owns is
    handed to that worker between two requests: matches of both owners set up over one
    connection (as bench/load.py does) each have their seats claimed by their own worker."""
    from server.route import owner_of

    w = workers
    pid_of = {int(x["worker"]): int(x["pid"]) for x in w.wait_for("listening", 2)}
    matches: list[str] = []
    async with httpx.AsyncClient(base_url=w.url) as http:
        while {owner_of(m, 2) for m in matches} != {0, 1} or len(matches) < 4:
            r = await http.post("/matches", json={"game": "keys-to-success", "options": {}})
            r.raise_for_status()
            match = r.json()["match"]
            matches.append(match)
            for seat in range(3):
                r = await http.post(f"/matches/{match}/seats", json={"name": f"p{seat}"})
                r.raise_for_status()
                r = await http.get(f"/matches/{match}")
                r.raise_for_status()
    for match in matches:
        claimed = [int(x["pid"]) for x in w.lines() if x.get("event") == "seat_claimed" and x.get("match") == match]
        assert claimed == [pid_of[owner_of(match, 2)]] * 3, (match, claimed, pid_of)
    assert w.stop() == 0


async def test_a_connection_whose_request_line_does_not_come_is_closed(workers: Workers) -> None:
    """Before a worker knows whose a connection is (its request line not in), the time
    limit on a request's line and headers holds too (DAEDALUS_HEADER_TIMEOUT, 2 s here)."""
    loop = asyncio.get_running_loop()
    for said in (b"", b"GET /ws?match=ab"):
        reader, writer = await asyncio.open_connection("127.0.0.1", workers.port)
        start = loop.time()
        writer.write(said)
        assert await asyncio.wait_for(reader.read(), 10) == b""
        assert 1.5 < loop.time() - start < 6
        writer.close()


def test_a_dead_worker_stops_the_others_with_status_1(workers: Workers) -> None:
    pids = workers.pids()
    os.kill(pids[0], signal.SIGKILL)
    workers.proc.wait(30)
    assert workers.proc.returncode == 1
    assert not [p for p in pids if alive(p)]
    exited = [x for x in workers.lines() if x.get("event") == "worker_exited"]
    assert [(x["pid"], x["status"]) for x in exited] == [(pids[0], -signal.SIGKILL)]


def test_workers_need_a_real_redis(tmp_path: Path) -> None:
    w = Workers(None, tmp_path / "serve.log")
    assert w.proc.wait(30) == 2
    lines = w.log.read_text().splitlines()
    assert len(lines) == 1 and "needs a real Redis" in lines[0], lines
