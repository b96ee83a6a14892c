"""Memory: what a server process holds per followed match, and how long a restart takes.

    .venv/bin/python bench/memory.py [--sizes 1000x20,1000x200,100x2000] [--seed S]

A server keeps every unfinished match it follows in memory (its runner: the log entries
as JSON bytes, a state checkpoint every 32 entries, the latest state, the viewers'
stream indexes) until the match ends and its last viewer leaves. At start-up it resumes
every unfinished match in Redis, folding each log again.

For each size KxL: a fresh `redis-server` on a free port gets K unfinished Five-Card
Trick (dm12) matches of about L log entries each, written through the event store as a
server would (two joins, then bot commands with the end pushed out of reach, at the
real clock so that no deadline passes during the run). Then `daedalus serve` starts on
it and resumes all K in the background (its port is open at once; /health counts what
is left), and its resident memory (VmRSS, /proc/<pid>/status) is read once all are
resumed, against the same server on an empty Redis. Printed per size: when the port
opened and when every match was resumed, the RSS, and the RSS above the empty server per
match and per log entry. Each size is measured `--repeat` times (fresh processes);
medians.

The last line is `bytes_per_entry=<at the largest L> bytes_per_match=<at the smallest L>
resume_s=<at the largest K*L>`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import Redis, Server  # noqa: E402  (bench/load.py: the same processes)
from machine import interpreter  # noqa: E402

from clients.bots import BOTS  # noqa: E402
from domain import engine  # noqa: E402
from projections.registry import hosted  # noqa: E402
from server.store import EventStore  # noqa: E402

GAME = "five-card-trick"


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def command_script(length: int, seed: str) -> list[tuple[int, Any]]:
    """(seat, command body) for about `length` entries of one match: two bots playing,
    each seeing only its own view, proposed through the engine (not timed)."""
    from projections.common import match_view
    from projections.contract import Viewer

    rules = hosted(GAME).rules
    first = engine.create_entry(
        rules, match_id="script", variant=None, options={"rounds": 1000, "max_rounds": 1000},
        seed=bytes(32), ts=0,
    )
    ms = engine.open_match(rules, first)
    for name in ("A", "B"):
        ms = engine.propose(ms, kind="join", seat=None, cid=None, body={"name": name}, ts=1)[1]
    bots = [BOTS[GAME]["random"](random.Random(f"{seed}:{s}")) for s in range(2)]
    script: list[tuple[int, Any]] = []
    ts = 2
    while len(script) + 3 < length:
        sent = False
        for seat, bot in enumerate(bots):
            for body in bot.act(match_view(hosted(GAME).views, ms, Viewer(seat=seat))):
                _, ms, outcome = engine.propose(ms, kind="command", seat=seat, cid=f"s{ts}", body=body, ts=ts)
                bot.feedback(body, outcome.rejection is None, outcome.warnings,
                             outcome.rejection.code if outcome.rejection else None)
                script.append((seat, body))
                ts += 1
                sent = True
        if not sent:
            raise RuntimeError("the bots stopped sending")
    return script


async def fill(redis_url: str, matches: int, script: list[tuple[int, Any]]) -> int:
    """Write `matches` unfinished matches playing `script` into Redis; the entries written."""
    rules = hosted(GAME).rules
    store = EventStore.from_url(redis_url)
    now = int(time.time() * 1000)
    written = 0

    async def one(i: int) -> int:
        ts = now
        first = engine.create_entry(
            rules, match_id=f"mem{i:06d}", variant=None,
            options={"rounds": 1000, "max_rounds": 1000}, seed=os.urandom(32), ts=ts,
        )
        assert await store.create(first.body["match"], first)
        ms = engine.open_match(rules, first)
        steps: list[tuple[engine.EntryKind, int | None, Any]] = [
            ("join", None, {"name": "A"}), ("join", None, {"name": "B"}),
            *(("command", seat, body) for seat, body in script),
        ]
        for n, (kind, seat, body) in enumerate(steps):
            ts += 1
            entry, new, _ = engine.propose(ms, kind=kind, seat=seat, cid=f"c{n}", body=body, ts=ts)
            done = await store.append(
                first.body["match"], entry, expected_head=f"{ms.seq}:{ms.head}", key=f"k{n}"
            )
            assert done.status == "ok", done
            ms = new
        return ms.seq

    for start in range(0, matches, 100):  # 100 matches at a time: their appends pipeline
        written += sum(await asyncio.gather(*(one(i) for i in range(start, min(matches, start + 100)))))
    await store.close()
    return written


def wait_resumed(url: str, timeout: float = 600) -> float:
    """Seconds until the server's /health says nothing is left to resume."""
    import httpx

    started = time.monotonic()
    with httpx.Client(base_url=url) as http:
        while time.monotonic() - started < timeout:
            if http.get("/health").json().get("resuming") == 0:
                return time.monotonic() - started
            time.sleep(0.02)
    raise RuntimeError("the server did not finish resuming")


def measure(workdir: str, matches: int, length: int, script: list[tuple[int, Any]], tag: str) -> dict[str, float]:
    redis = Redis(workdir, "off")
    try:
        entries = asyncio.run(fill(redis.url, matches, script)) if matches else 0
        started = time.monotonic()
        server = Server(redis.url, workdir, tag, "warning")
        try:
            open_s = time.monotonic() - started
            resume_s = wait_resumed(server.url) + open_s
            time.sleep(1.0)  # let the process settle (its first collections)
            rss = rss_bytes(server.pid)
        finally:
            server.stop()
    finally:
        redis.stop()
    return {"entries": entries, "rss": rss, "resume_s": resume_s, "open_s": open_s}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1000x20,1000x200,100x2000",
                   help="K x L pairs: K matches of about L log entries each")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", default="memory")
    args = p.parse_args(argv)
    sizes = [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",")]
    print(f"machine: {interpreter()}; {GAME} dm12, random bots; medians of {args.repeat}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="daedalus-memory-") as workdir:
        n = 0

        def sub() -> str:
            nonlocal n
            n += 1
            path = os.path.join(workdir, str(n))
            os.mkdir(path)
            return path

        base = statistics.median(measure(sub(), 0, 0, [], "empty")["rss"] for _ in range(args.repeat))
        print(f"empty server: RSS {base / 2**20:.1f} MiB")
        for matches, length in sizes:
            script = command_script(length, args.seed)
            runs = [measure(sub(), matches, length, script, f"{matches}x{length}") for _ in range(args.repeat)]
            entries = runs[0]["entries"]
            rss = statistics.median(r["rss"] for r in runs)
            resume = statistics.median(r["resume_s"] for r in runs)
            opened = statistics.median(r["open_s"] for r in runs)
            per_match = (rss - base) / matches
            per_entry = (rss - base) / entries
            rows.append((matches, length, entries, per_match, per_entry, resume))
            each = ", ".join(f"{r['rss'] / 2**20:.1f} MiB / {r['resume_s']:.2f} s" for r in runs)
            print(
                f"{matches} matches x {entries / matches:.0f} entries: RSS {rss / 2**20:.1f} MiB "
                f"(+{(rss - base) / 2**20:.1f}), {per_match / 1024:.1f} KiB a match, "
                f"{per_entry:.0f} bytes an entry; serving after {opened:.2f} s, all resumed after "
                f"{resume:.2f} s (runs: {each})"
            )
    longest = max(rows, key=lambda r: r[1])
    shortest = min(rows, key=lambda r: r[1])
    biggest = max(rows, key=lambda r: r[2])
    print(f"bytes_per_entry={longest[4]:.0f} bytes_per_match={shortest[3]:.0f} resume_s={biggest[5]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
