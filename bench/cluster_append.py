"""What waiting for a replica costs an append: appends through server.store.EventStore on
a local Redis Cluster (deploy/cluster.py: 3 masters with a replica each, AOF with
appendfsync always, on loopback), with `wait_replicas` 0 and then 1.

    .venv/bin/python bench/cluster_append.py [--matches 200] [--duration 10] [--appendfsync always]

`--matches` writers, one match each, append one entry after another (each on the head
the previous one left) for `--duration` seconds per setting, in two halves alternated
with the other setting's (after a warm-up); the store batches what is decided at the
same moment, as the server does. Printed per run: appends a second and the latency of
one append (p50, p99, ms); the last line has both settings' figures over their runs
(`wait0_per_s=... wait0_p50_ms=... wait0_p99_ms=... wait1_...`).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "deploy"))

from cluster import Cluster  # noqa: E402

from server.storage import head_value  # noqa: E402
from server.store import EventStore  # noqa: E402
from tests.test_store_contract import fresh, join  # noqa: E402


async def run(url: str, wait: int, matches: int, duration: float) -> tuple[float, list[float]]:
    store = EventStore.from_url(url, cluster=True, wait_replicas=wait)
    await store.reads.flushdb()
    latencies: list[float] = []
    count = 0
    stop = time.monotonic() + duration

    async def writer(m: str) -> None:
        nonlocal count
        first, ms = fresh(m)
        await store.create(m, first)
        last = first
        n = 0
        while time.monotonic() < stop:
            entry, ms = join(ms, f"p{n}", 1100 + n)
            started = time.perf_counter()
            res = await store.append(m, entry, expected_head=head_value(last), key=f"k{n}")
            latencies.append(time.perf_counter() - started)
            assert res.status == "ok", res
            last = entry
            count += 1
            n += 1

    began = time.monotonic()
    await asyncio.gather(*(writer(f"b{wait}-{i}") for i in range(matches)))
    elapsed = time.monotonic() - began
    await store.close()
    return count / elapsed, latencies


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--matches", type=int, default=200)
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--appendfsync", choices=["always", "everysec", "no"], default="always")
    args = p.parse_args()
    figures: dict[str, float] = {}
    rates: dict[int, list[float]] = {0: [], 1: []}
    latencies: dict[int, list[float]] = {0: [], 1: []}
    with Cluster(appendfsync=args.appendfsync) as cluster:
        asyncio.run(run(cluster.url, 0, args.matches, 2.0))  # warm-up, not counted
        for wait in (0, 1, 0, 1):  # alternated: a machine busy meanwhile weighs on both
            rate, lat = asyncio.run(run(cluster.url, wait, args.matches, args.duration / 2))
            q = statistics.quantiles(lat, n=100)
            print(f"wait_replicas={wait}: {rate:.0f} appends/s, p50 {q[49] * 1000:.1f} ms, "
                  f"p99 {q[98] * 1000:.1f} ms ({len(lat)} appends, {args.matches} writers)", flush=True)
            rates[wait].append(rate)
            latencies[wait].extend(lat)
    for wait in (0, 1):
        q = statistics.quantiles(latencies[wait], n=100)
        figures[f"wait{wait}_per_s"] = statistics.mean(rates[wait])
        figures[f"wait{wait}_p50_ms"] = q[49] * 1000
        figures[f"wait{wait}_p99_ms"] = q[98] * 1000
    print(" ".join(f"{k}={v:.1f}" for k, v in sorted(figures.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
