"""Soak: two server processes on one Redis for a while; is their memory flat once warm?

    .venv/bin/python bench/soak.py [--duration 180] [--matches 20] [--runner-idle S]
                                   [--redis-url URL] [--sample 5] [--warmup S]

Everything runs on loopback, as separate processes: a `redis-server` on a free port (a
temporary directory, AOF everysec, no RDB snapshots; or the Redis of `--redis-url` /
REDIS_URL, which should hold no other matches: a server resumes every unfinished one)
and two `daedalus serve` processes on it, as behind a load balancer that sends the
HTTP requests to one and the websockets to the other:

- A creates every match (`POST /matches`) and seats its players (`POST .../seats`), and
  serves nothing else;
- B serves every websocket: two bots a match (clients.bots, the random bot), each on its
  own connection, play Five-Card Trick (dm12) to the end.

`--matches` matches are in play at once; each one that ends is replaced by a new one.
Every `--slow-every`-th match is slow (its bots wait `--slow-think` s before each
command, so it lasts longer than A's `runner_idle`, which A must then let go of for
idleness rather than at the end); the others wait `--think` s. The clock is the real one
(60 s rounds), but bots answer long before it.

Every `--sample` seconds: the resident memory (VmRSS) and the open descriptors of both
server processes, Redis's `used_memory` and client connections, and the matches started
and finished. Redis grows by design (a finished match's log stays until the operator
removes it); the servers should not. After `--duration` seconds no match is started;
those in play are finished, and every finished match's log is fetched and verified as
`daedalus replay --verify` does (clients.replay.verify_log).

The table, then the verdict, whose criterion is: after the warm-up (`--warmup`, by
default a third of the run and at least runner_idle + 30 s, so A holds a steady number
of matches) to the end of `--duration`, the least-squares line through a server's RSS
samples rises by less than max(2 MiB, 5% of its RSS at the start of that window) over it. The last line is
`flat=<yes|no> A_rss_rise_mib=... B_rss_rise_mib=... matches=<finished> verified=<ok>/<total>`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GAME = "five-card-trick"
VARIANT = "dm12"
API_KEY = "bench-soak-key"
AUTH = {"Authorization": f"Bearer {API_KEY}"}
MIB = 1024 * 1024


# --- processes ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port} within {timeout} s")


def stop(proc: subprocess.Popen[bytes] | None) -> int | None:
    """SIGTERM, then SIGKILL after 30 s; the exit status."""
    if proc is None:
        return None
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    return proc.returncode


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


class RedisServer:
    def __init__(self, workdir: str) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("no redis-server on PATH: give --redis-url (or REDIS_URL)")
        self.port = free_port()
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--dir", workdir, "--appendonly", "yes", "--appendfsync", "everysec"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_port(self.port, self.proc, "redis-server")
        self.url = f"redis://127.0.0.1:{self.port}/0"


class Server:
    """`daedalus serve` (python -m clients.cli serve) on a free port."""

    def __init__(self, name: str, redis_url: str, workdir: str, runner_idle: float | None) -> None:
        self.name = name
        self.port = free_port()
        self.log_path = os.path.join(workdir, f"server-{name}.log")
        env = dict(os.environ)
        env.pop("REDIS_URL", None)
        env["DAEDALUS_API_KEYS"] = API_KEY  # not held to the per-address creation limit
        env["DAEDALUS_LOG_LEVEL"] = "info"
        if runner_idle is not None:
            env["DAEDALUS_RUNNER_IDLE"] = str(runner_idle)
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "clients.cli", "serve", "--host", "127.0.0.1",
                 "--port", str(self.port), "--redis-url", redis_url],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            )
        wait_port(self.port, self.proc, f"server {name}")
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws = f"ws://127.0.0.1:{self.port}/ws"

    def events(self) -> dict[str, int]:
        """Its log lines by event (error and warning ones are what to look at)."""
        counts: dict[str, int] = {}
        with open(self.log_path, errors="replace") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                key = f"{record.get('level')}:{record.get('event')}"
                counts[key] = counts.get(key, 0) + 1
        return counts


# --- the matches ------------------------------------------------------------------------------


@dataclass
class Tally:
    started: int = 0
    finished: int = 0
    failed: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)  # finished matches, to verify
    seconds: dict[str, list[float]] = field(default_factory=dict)  # kind -> each match's

    def fail(self, exc: BaseException) -> None:
        self.failed += 1
        key = f"{type(exc).__name__}: {str(exc)[:80]}"
        self.failures[key] = self.failures.get(key, 0) + 1


async def play_seat(ws_url: str, match: str, token: str, bot: Any, think: float) -> None:
    """One bot's seat, on its own websocket, until the match ends: one command in flight
    at a time, at most 3 rejected ones between two updates (as clients.bots.play_bot)."""
    from websockets.asyncio.client import connect

    ids = itertools.count(1)
    async with connect(ws_url, max_size=None, open_timeout=60) as ws:
        await ws.send(json.dumps({"type": "hello", "match": match, "token": token, "since": 0}))
        view: dict[str, Any] | None = None
        queue: list[Any] = []  # commands the bot wants sent, after the one in flight
        flight: tuple[str, Any] | None = None  # (id, command) awaiting its answer
        rejections = 0
        async for raw in ws:
            msg = json.loads(raw)
            kind = msg.get("type")
            if kind == "error" and msg.get("code") not in ("rate_limited", "busy"):
                raise RuntimeError(f"error {msg.get('code')}: {msg.get('message')}")
            if kind in ("welcome", "update", "resync"):
                view = msg["view"]
                rejections = 0
                if view.get("ended"):
                    return
            elif kind in ("ack", "rejected") and flight is not None and msg.get("id") == flight[0]:
                accepted = kind == "ack"
                bot.feedback(flight[1], accepted, msg.get("warnings") or (), msg.get("code"))
                flight = None
                if not accepted:
                    rejections += 1
                    queue.clear()
            elif kind == "error" and flight is not None:
                queue.insert(0, flight[1])  # dropped (rate_limited, busy): sent again
                flight = None
                await asyncio.sleep(0.05)
            if flight is None and view is not None and rejections < 3:
                if not queue:
                    queue = list(bot.act(view))
                if queue:
                    if think:
                        await asyncio.sleep(think)
                    flight = (f"c{next(ids)}", queue.pop(0))
                    await ws.send(json.dumps({"type": "command", "id": flight[0], "command": flight[1]}))


async def one_match(http: Any, b_ws: str, index: int, think: float, tally: Tally, kind: str) -> None:
    from clients.bots import bot_factory

    began = time.monotonic()
    r = await http.post("/matches", json={"game": GAME, "variant": VARIANT}, headers=AUTH)
    r.raise_for_status()
    match = r.json()["match"]
    tally.started += 1
    tokens = []
    for seat in range(2):
        r = await http.post(f"/matches/{match}/seats", json={"name": f"bot {seat}", "seat": seat})
        r.raise_for_status()
        tokens.append(r.json()["token"])
    factory = bot_factory(GAME, "random")
    await asyncio.gather(*(
        play_seat(b_ws, match, token, factory(random.Random(f"soak:{index}:{seat}")), think)
        for seat, token in enumerate(tokens)
    ))
    tally.finished += 1
    tally.ids.append(match)
    tally.seconds.setdefault(kind, []).append(time.monotonic() - began)


async def slot(http: Any, b_ws: str, slot_no: int, args: argparse.Namespace, tally: Tally,
               until: float, counter: itertools.count[int]) -> None:
    """One of the matches in play: a new one each time the last ends, until `until`."""
    while time.monotonic() < until:
        index = next(counter)
        slow = args.slow_every > 0 and index % args.slow_every == args.slow_every - 1
        try:
            await asyncio.wait_for(
                one_match(http, b_ws, index, args.slow_think if slow else args.think, tally,
                          "slow" if slow else "quick"),
                args.match_timeout,
            )
        except Exception as exc:
            tally.fail(exc)
            await asyncio.sleep(1.0)


# --- sampling ---------------------------------------------------------------------------------


@dataclass
class Sample:
    t: float
    a_rss: int
    a_fds: int
    b_rss: int
    b_fds: int
    redis_mem: int
    redis_clients: int
    started: int
    finished: int


async def redis_info(url: str) -> tuple[int, int]:
    from redis.asyncio import Redis

    client = Redis.from_url(url)
    try:
        memory = await client.info("memory")
        clients = await client.info("clients")
        return int(memory["used_memory"]), int(clients["connected_clients"])
    finally:
        await client.aclose()


async def sampler(a: Server, b: Server, redis_url: str, every: float, tally: Tally,
                  samples: list[Sample], started: float, stop_at: asyncio.Event) -> None:
    while True:
        mem, clients = await redis_info(redis_url)
        samples.append(Sample(
            time.monotonic() - started, rss_bytes(a.proc.pid), open_fds(a.proc.pid),
            rss_bytes(b.proc.pid), open_fds(b.proc.pid), mem, clients,
            tally.started, tally.finished,
        ))
        s = samples[-1]
        print(f"{s.t:7.0f} {s.a_rss / MIB:8.1f} {s.a_fds:5d} {s.b_rss / MIB:8.1f} {s.b_fds:5d} "
              f"{s.redis_mem / MIB:9.1f} {s.redis_clients:6d} {s.started:8d} {s.finished:8d}",
              flush=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop_at.wait(), every)
            return


def rise(points: list[tuple[float, float]]) -> float:
    """The rise of the least-squares line through `points` (t, value) over their span."""
    if len(points) < 2:
        return 0.0
    ts = [t for t, _ in points]
    vs = [v for _, v in points]
    mt, mv = statistics.fmean(ts), statistics.fmean(vs)
    den = sum((t - mt) ** 2 for t in ts)
    if den == 0:
        return 0.0
    slope = sum((t - mt) * (v - mv) for t, v in points) / den
    return slope * (ts[-1] - ts[0])


# --- verification -----------------------------------------------------------------------------


async def verify(url: str, ids: list[str]) -> tuple[int, list[str]]:
    """Fetch each match's log (GET /matches/{id}/log) and verify it as `daedalus replay
    --verify` does; (how many verify and end, the others and why)."""
    import httpx

    from clients.client import decode_log
    from clients.replay import verify_log

    ok, bad = 0, []
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        for match in ids:
            r = await http.get(f"/matches/{match}/log")
            if r.status_code != 200:
                bad.append(f"{match}: GET log {r.status_code}")
                continue
            try:
                entries = decode_log(r.content)  # as `daedalus replay --verify` reads it
                good, why = verify_log(entries)
            except Exception as exc:  # a log that does not even decode is a failure too
                bad.append(f"{match}: {type(exc).__name__}: {exc}")
                continue
            ended = bool(entries) and entries[-1].kind != "create"
            if good and ended:
                ok += 1
            else:
                bad.append(f"{match}: {why}")
    return ok, bad


# --- main -------------------------------------------------------------------------------------


async def soak(args: argparse.Namespace, a: Server, b: Server, redis_url: str) -> int:
    import httpx

    tally = Tally()
    samples: list[Sample] = []
    started = time.monotonic()
    until = started + args.duration
    stop_sampling = asyncio.Event()
    print(f"{'t_s':>7} {'A_MiB':>8} {'A_fd':>5} {'B_MiB':>8} {'B_fd':>5} {'redis_MiB':>9} "
          f"{'r_conn':>6} {'started':>8} {'finished':>8}", flush=True)
    sampling = asyncio.create_task(
        sampler(a, b, redis_url, args.sample, tally, samples, started, stop_sampling))
    counter = itertools.count()
    limits = httpx.Limits(max_connections=args.matches)
    async with httpx.AsyncClient(base_url=a.url, timeout=60, limits=limits) as http:
        await asyncio.gather(*(
            slot(http, b.ws, i, args, tally, until, counter) for i in range(args.matches)
        ))
    await asyncio.sleep(args.sample)  # a last sample with nothing in play
    stop_sampling.set()
    await sampling
    elapsed = time.monotonic() - started

    warm = args.warmup
    verdicts = {}
    for name in ("A", "B"):
        window = [(s.t, pick_rss(s, name) / MIB) for s in samples if warm <= s.t <= args.duration]
        if len(window) < 3:
            verdicts[name] = (float("nan"), False)
            continue
        up = rise(window)
        allowed = max(2.0, 0.05 * window[0][1])
        verdicts[name] = (up, up < allowed)
        print(f"server {name}: RSS {window[0][1]:.1f} -> {window[-1][1]:.1f} MiB from the warm-up "
              f"({warm:.0f} s); least-squares rise {up:+.2f} MiB over {window[-1][0] - window[0][0]:.0f} s "
              f"(flat below {allowed:.1f}); peak {max(v for _, v in window):.1f} MiB; at the end "
              f"{pick_rss(samples[-1], name) / MIB:.1f} MiB; "
              f"descriptors {min(pick_fd(s, name) for s in samples if s.t >= warm)}-"
              f"{max(pick_fd(s, name) for s in samples if s.t >= warm)}")
    print(f"matches: {tally.started} started, {tally.finished} finished, {tally.failed} failed "
          f"in {elapsed:.0f} s")
    for kind, took in sorted(tally.seconds.items()):
        print(f"  {kind} matches: {len(took)}, {statistics.median(took):.1f} s each (median), "
              f"longest {max(took):.1f} s")
    for why, n in sorted(tally.failures.items()):
        print(f"  failed {n}x: {why}")
    for server in (a, b):
        noisy = {k: v for k, v in server.events().items() if not k.startswith("info:")
                 and not k.startswith("debug:")}
        print(f"server {server.name} log: warnings/errors {noisy or 'none'}; "
              f"match_over lines {server.events().get('info:match_over', 0)}")
    ok, bad = await verify(a.url, tally.ids)
    print(f"verified: {ok} of {len(tally.ids)} finished matches' logs ok")
    for line in bad[:10]:
        print(f"  NOT OK {line}")
    flat = all(good for _, good in verdicts.values())
    print(f"flat={'yes' if flat else 'no'} A_rss_rise_mib={verdicts['A'][0]:.2f} "
          f"B_rss_rise_mib={verdicts['B'][0]:.2f} matches={tally.finished} "
          f"verified={ok}/{len(tally.ids)}")
    return 0 if flat and ok == len(tally.ids) and not bad else 1


def pick_rss(s: Sample, name: str) -> int:
    return s.a_rss if name == "A" else s.b_rss


def pick_fd(s: Sample, name: str) -> int:
    return s.a_fds if name == "A" else s.b_fds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=180.0, help="seconds matches are started (default 180)")
    ap.add_argument("--matches", type=int, default=20, help="matches in play at once (default 20)")
    ap.add_argument("--think", type=float, default=0.05, help="a bot's pause before each command, s")
    ap.add_argument("--slow-every", type=int, default=5, help="every Nth match is slow (0: none)")
    ap.add_argument("--slow-think", type=float, default=2.5,
                    help="a slow match's bots' pause before each command, s (default 2.5: a match lasts "
                    "some 75 s, longer than runner_idle)")
    ap.add_argument("--match-timeout", type=float, default=600.0, help="a match not over by then is failed")
    ap.add_argument("--runner-idle", type=float, default=None,
                    help="DAEDALUS_RUNNER_IDLE for both servers (default: theirs, 60 s)")
    ap.add_argument("--sample", type=float, default=5.0, help="seconds between samples")
    ap.add_argument("--warmup", type=float, default=None,
                    help="seconds before the RSS is judged (default: max(duration/3, runner_idle + 30))")
    ap.add_argument("--redis-url", default=os.environ.get("REDIS_URL"),
                    help="a Redis to use (default REDIS_URL, else a redis-server started here)")
    args = ap.parse_args(argv)
    idle = args.runner_idle if args.runner_idle is not None else 60.0
    if args.warmup is None:
        args.warmup = max(args.duration / 3, idle + 30)
    workdir = tempfile.mkdtemp(prefix="daedalus-soak-")
    redis: RedisServer | None = None
    servers: list[Server] = []
    try:
        if args.redis_url:
            redis_url = args.redis_url
        else:
            redis = RedisServer(workdir)
            redis_url = redis.url
        a = Server("A", redis_url, workdir, args.runner_idle)
        servers.append(a)
        b = Server("B", redis_url, workdir, args.runner_idle)
        servers.append(b)
        print(f"redis {redis_url}; A (creates, seats) {a.url} pid {a.proc.pid}; "
              f"B (websockets) {b.url} pid {b.proc.pid}; logs in {workdir}", flush=True)
        code = asyncio.run(soak(args, a, b, redis_url))
    finally:
        statuses = {s.name: stop(s.proc) for s in servers}
        if redis is not None:
            stop(redis.proc)
    print(f"servers stopped by SIGTERM: exit statuses {statuses}")
    if any(status != 0 for status in statuses.values()):
        code = 1
    if code == 0:
        shutil.rmtree(workdir, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
