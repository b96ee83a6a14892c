"""GET /metrics: the counters and gauges move by what a short match did (server/metrics.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from server.config import Settings
from server.main import EmbeddedServer
from server.metrics import Metrics
from tests import toygame
from tests.wsutil import Raw, new_match

toygame.install()

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


async def scrape(base: str) -> Samples:
    async with httpx.AsyncClient(base_url=base) as http:
        r = await http.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


@pytest.fixture
async def srv() -> AsyncIterator[EmbeddedServer]:
    async with EmbeddedServer(Settings(rate=200, burst=400)) as s:
        yield s


async def until_gauge(base: str, name: str, wanted: float) -> Samples:
    for _ in range(100):
        samples = await scrape(base)
        if value(samples, name) == wanted:
            return samples
        await asyncio.sleep(0.02)
    raise AssertionError(f"{name} stayed at {value(samples, name)}, not {wanted}")


async def test_metrics_move_by_what_a_match_did(srv: EmbeddedServer) -> None:
    before = await scrape(srv.url)
    assert value(before, "process_start_time_seconds") > 0
    match, tokens = await new_match(srv.url, "toy", {"turn_ms": 60_000})
    players = [await Raw.open(srv.ws_url) for _ in tokens]
    for raw, token in zip(players, tokens, strict=True):
        assert (await raw.hello(match, token))["type"] == "welcome"
    watcher = await Raw.open(srv.ws_url)
    assert (await watcher.hello(match, since=1))["type"] == "welcome"  # a resume

    during = await until_gauge(srv.url, "daedalus_connections", 3)
    assert value(during, "daedalus_viewers") == 3
    assert value(during, "daedalus_followed_matches") == 1

    out_of_turn = await players[1].command("early", {"type": "add", "n": 1})
    assert out_of_turn["type"] == "rejected" and out_of_turn["code"] == "not_your_turn"
    bad = await players[0].command("bad", {"type": "nope"})
    assert bad["type"] == "rejected"
    accepted = 0
    turn = 0
    while True:
        answer = await players[turn].command(f"c{accepted}", {"type": "add", "n": 3})
        assert answer["type"] == "ack", answer
        accepted += 1
        if accepted == 1:  # the same command again: a duplicate
            again = await players[0].command("c0", {"type": "add", "n": 3})
            assert again["type"] == "ack" and again["duplicate"] is True
        async with httpx.AsyncClient(base_url=srv.url) as http:
            status = (await http.get(f"/matches/{match}")).json()
        if status["ended"]:
            break
        turn = 1 - turn
    for raw in [*players, watcher]:
        await raw.close()

    after = await until_gauge(srv.url, "daedalus_connections", 0)
    game = {"game": "toy"}
    assert moved(before, after, "daedalus_commands_total", outcome="accepted", **game) == accepted
    assert moved(before, after, "daedalus_commands_total", outcome="rejected", **game) == 2
    assert moved(before, after, "daedalus_commands_total", outcome="duplicate", **game) == 1
    assert moved(before, after, "daedalus_commands_total", outcome="error", **game) == 0
    assert moved(before, after, "daedalus_matches_total", event="created") == 1
    assert moved(before, after, "daedalus_matches_total", event="finished") == 1
    assert moved(before, after, "daedalus_matches_total", event="expired") == 0
    assert moved(before, after, "daedalus_resumes_total") == 1
    # Appends tried: two joins, the out-of-turn command (the match had started), each
    # accepted command and the duplicate (the store finds its key); not the bad command,
    # refused before the rules saw it.
    assert moved(before, after, "daedalus_append_seconds_count") == 2 + 1 + accepted + 1
    assert moved(before, after, "daedalus_append_conflicts_total") == 0
    # Each accepted add ends a round of the toy game, the last one the match.
    assert moved(before, after, "daedalus_round_seconds_count", **game) == accepted
    assert moved(before, after, "daedalus_send_queue_overflows_total") == 0
    # Receipts: the creation's, the start's, and one for each round the adds ended (the
    # last one the match's end); one match alone: a signature each.
    assert moved(before, after, "daedalus_receipts_total") == 2 + accepted
    assert moved(before, after, "daedalus_receipt_signatures_total") == 2 + accepted
    assert value(after, "daedalus_viewers") == 0
    assert value(after, "daedalus_followed_matches") == 0


async def test_one_process_is_worker_0_of_1(srv: EmbeddedServer) -> None:
    samples = await scrape(srv.url)
    assert value(samples, "daedalus_worker", worker="0", workers="1") == 1
    assert ("daedalus_connections_handed_total", ()) not in samples  # (workers only)
    async with httpx.AsyncClient(base_url=srv.url) as http:
        assert (await http.get("/metrics?worker=0")).status_code == 200
        for asked in ("1", "x", "-1"):
            r = await http.get("/metrics", params={"worker": asked})
            assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_worker"


async def test_each_app_counts_apart(srv: EmbeddedServer) -> None:
    """Two servers in one process: each has its own registry, not the global one."""
    async with EmbeddedServer(Settings()) as other:
        await new_match(srv.url, "toy")
        mine, theirs = await scrape(srv.url), await scrape(other.url)
    assert value(mine, "daedalus_matches_total", event="created") == 1
    assert value(theirs, "daedalus_matches_total", event="created") == 0


def test_a_conflict_and_a_store_error_are_counted() -> None:
    metrics = Metrics()
    metrics.append_conflicts.inc()
    metrics.redis_error("tick")
    metrics.command("toy", "error")
    text = metrics.text().decode()
    assert "daedalus_append_conflicts_total 1.0" in text
    assert 'daedalus_redis_errors_total{where="tick"} 1.0' in text
    assert 'daedalus_commands_total{game="toy",outcome="error"} 1.0' in text


async def test_two_processes_count_a_match_once_and_their_follow_lag() -> None:
    """Two servers on one store, a player on each: each round and the match's end are
    counted once across both (by the process that appended the entry), and each
    process measures how late it folds the other's entries."""
    import fakeredis

    from server.store import EventStore

    shared = fakeredis.FakeServer()

    def store() -> EventStore:
        return EventStore(
            fakeredis.FakeAsyncRedis(server=shared), fakeredis.FakeAsyncRedis(server=shared),
            follows=fakeredis.FakeAsyncRedis(server=shared, single_connection_client=True),
            description="shared fakeredis",
        )

    async with EmbeddedServer(Settings(), store=store()) as a, EmbeddedServer(Settings(), store=store()) as b:
        match, tokens = await new_match(a.url, "toy", {"turn_ms": 60_000})
        players = [await Raw.open(a.ws_url), await Raw.open(b.ws_url)]
        for raw, token in zip(players, tokens, strict=True):
            assert (await raw.hello(match, token))["type"] == "welcome"
        accepted, turn = 0, 0
        while True:
            answer = await players[turn].command(f"c{accepted}", {"type": "add", "n": 3})
            assert answer["type"] == "ack", answer
            accepted += 1
            # an update reaches the other player (its process folds what it is sent)
            await players[1 - turn].until(lambda m: m["type"] == "update")
            async with httpx.AsyncClient(base_url=a.url) as http:
                if (await http.get(f"/matches/{match}")).json()["ended"]:
                    break
            turn = 1 - turn
        for raw in players:
            await raw.close()
        mine, theirs = await scrape(a.url), await scrape(b.url)
    both = [mine, theirs]
    assert sum(value(s, "daedalus_round_seconds_count", game="toy") for s in both) == accepted
    assert sum(value(s, "daedalus_matches_total", event="finished") for s in both) == 1
    assert sum(value(s, "daedalus_commands_total", game="toy", outcome="accepted") for s in both) == accepted
    for samples in both:
        assert value(samples, "daedalus_follow_lag_seconds_count") >= 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.0005, 0.001, 0.0049, 2.5, 5.0, 7.0]) | st.floats(0, 10), max_size=30))
def test_the_lean_histogram_reads_as_the_client_librarys(values: list[float]) -> None:
    """The append and round histograms are kept as plain numbers (server/metrics.py
    _Observed): /metrics shows what prometheus_client's Histogram would for the same
    observations, bounds inclusive, and the command counter what its Counter would."""
    from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

    from server.metrics import APPEND_BUCKETS

    def lines(text: bytes, name: str) -> list[str]:
        return [
            line for line in text.decode().splitlines()
            if name in line and "_created" not in line and not line.startswith("#")
        ]

    theirs = CollectorRegistry()
    histogram = Histogram("daedalus_append_seconds", "h", buckets=APPEND_BUCKETS, registry=theirs)
    counter = Counter("daedalus_commands", "c", ["game", "outcome"], registry=theirs)
    ours = Metrics()
    for v in values:
        histogram.observe(v)
        ours.append_seconds.observe(v)
        counter.labels("toy", "accepted" if v < 1 else "rejected").inc()
        ours.command("toy", "accepted" if v < 1 else "rejected")
    mine = ours.text()
    for name in ("daedalus_append_seconds_bucket", "daedalus_append_seconds_count", "daedalus_commands_total"):
        assert sorted(lines(mine, name)) == sorted(lines(generate_latest(theirs), name))
    mine_sum = lines(mine, "daedalus_append_seconds_sum")
    assert float(mine_sum[0].split()[-1]) == pytest.approx(sum(values))
