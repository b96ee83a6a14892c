"""The event store and the server on a Redis Cluster: 3 masters with a replica each,
started once per session from the `redis-server` on PATH (deploy/cluster.py). Where there
is none, skipped on a developer's machine and a failure under CI, like the real-Redis
tests (tests/conftest.py).

- the event-store contract suite (tests/test_store_contract.py) over a cluster-backed store;
- what only a cluster has: a follow and a batch of appends spread over every node;
- bots play every hosted game through `daedalus serve` processes on the cluster;
- a failover mid-match (the master owning the match's slot killed, its replica promoted):
  the match goes on and finishes, every viewer's stream whole;
- the fate of an acknowledged append when its master dies: lost with the master when no
  replica had it (appendfsync always does not help: the promoted replica never saw it),
  kept when the append waited for a replica (`wait_replicas`, Redis's WAIT).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
import redis.asyncio as aioredis
from redis.asyncio import RedisCluster
from redis.exceptions import MovedError, ResponseError
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from clients.bots import bot_factory, play_bot
from clients.client import DaedalusHttp, MatchConnection
from clients.replay import verify_log
from server.storage import AppendUnknown, head_value
from server.store import EventStore, ReplicasBehind, log_key
from tests import test_store_contract as contract
from tests.conftest import RedisProcess, wait_for_port, without_real_redis
from tests.test_store_contract import fresh, join

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "deploy"))

from cluster import Cluster


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[Cluster]:
    try:
        cluster = Cluster().start()
    except (FileNotFoundError, RuntimeError) as exc:
        without_real_redis(exc)
    yield cluster
    cluster.stop()


async def cluster_store(cluster: Cluster, **kwargs: Any) -> EventStore:
    store = EventStore.from_url(cluster.url, cluster=True, **kwargs)
    await store.reads.flushdb()  # every master's
    return store


@pytest.fixture(params=[0, 1], ids=["cluster", "cluster-wait1"])
async def any_store(redis_cluster: Cluster, request: pytest.FixtureRequest) -> AsyncIterator[EventStore]:
    """The contract suite's store, here on the cluster (overrides tests/conftest.py's),
    once as it is by default and once waiting for a replica after each append."""
    store = await cluster_store(redis_cluster, wait_replicas=request.param)
    yield store
    await store.close()


# The contract suite, every test of it, over the cluster-backed `any_store` above.
globals().update({name: f for name, f in vars(contract).items() if name.startswith("test_")})


async def master_of(store: EventStore, match: str) -> int:
    cluster = store.reads
    assert isinstance(cluster, RedisCluster)
    await cluster.initialize()
    node = cluster.get_node_from_key(log_key(match))
    assert node is not None
    return int(node.port)


async def matches_on_every_master(store: EventStore, cluster: Cluster, per_node: int) -> list[str]:
    """Match ids whose logs lie on every master, `per_node` on each."""
    found: dict[int, list[str]] = {p: [] for p in cluster.master_ports()}
    i = 0
    while any(len(ms) < per_node for ms in found.values()):
        m = f"m{i}"
        i += 1
        port = await master_of(store, m)
        if len(found[port]) < per_node:
            found[port].append(m)
    return [m for ms in found.values() for m in ms]


async def test_follow_reads_streams_of_every_node_which_one_xread_cannot(
    redis_cluster: Cluster, any_store: EventStore
) -> None:
    store = any_store
    matches = await matches_on_every_master(store, redis_cluster, 3)
    for m in matches:
        assert await store.create(m, fresh(m)[0])
    with pytest.raises(ResponseError, match="same slot"):
        # The single-node follow's one XREAD: the cluster refuses keys of different slots.
        await store.reads.execute_command(  # type: ignore[no-untyped-call]
            "XREAD", "STREAMS", log_key(matches[0]), log_key(matches[1]), "0-0", "0-0",
            target_nodes=store.reads.get_node_from_key(log_key(matches[0])),  # type: ignore[attr-defined]
        )
    found = await store.follow({m: "0-0" for m in matches}, 100)
    assert sorted(found) == sorted(matches)
    assert all(len(items) == 1 for items in found.values())
    # A batch of appends, one per match, lands on each match's node.
    firsts = {m: fresh(m) for m in matches}
    results = await asyncio.gather(*(
        store.append(m, join(ms, "Ann", 1100)[0], expected_head=head_value(first), key="k")
        for m, (first, ms) in firsts.items()
    ))
    assert [r.status for r in results] == ["ok"] * len(matches)
    after = {m: items[0][0] for m, items in found.items()}
    again = await store.follow(after, 100)
    assert sorted(again) == sorted(matches)
    assert all(len(items) == 1 for items in again.values())


async def test_an_append_answered_moved_twice_then_noscript_still_lands(
    redis_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a failover the append may meet a stale slot map more than once and then a
    promoted replica without the script (Redis does not hand scripts to replicas): the
    script is loaded and the append sent again; loading does not use up the rounds the
    slot map is given."""
    store = await cluster_store(redis_cluster)
    try:
        first, ms = fresh("noscript")
        assert await store.create("noscript", first)
        await store.writes.script_flush()  # every master's
        real = store._node_appends
        moved = 0

        async def stale_twice(cluster: Any, node: Any, items: list[Any]) -> list[Any]:
            nonlocal moved
            if moved < 2:
                moved += 1
                return [MovedError(f"1 {node.host}:{node.port}") for _ in items]
            return await real(cluster, node, items)

        monkeypatch.setattr(store, "_node_appends", stale_twice)
        result = await store.append("noscript", join(ms, "Ann", 1100)[0], expected_head=head_value(first), key="k")
        assert (result.status, moved) == ("ok", 2)
        assert await store.length("noscript") == 2
    finally:
        await store.close()


async def test_an_append_the_cluster_keeps_moving_is_unknown_not_a_redis_error(
    redis_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slot map that stays stale through every round: the append's outcome is looked
    into and tried again, then AppendUnknown (what the server reports to the sender),
    never the MOVED reply raised out of the store."""
    store = await cluster_store(redis_cluster)
    try:
        first, ms = fresh("moving")
        assert await store.create("moving", first)

        async def always_moved(cluster: Any, node: Any, items: list[Any]) -> list[Any]:
            return [MovedError(f"1 {node.host}:{node.port}") for _ in items]

        monkeypatch.setattr(store, "_node_appends", always_moved)
        with pytest.raises(AppendUnknown):
            await store.append("moving", join(ms, "Ann", 1100)[0], expected_head=head_value(first), key="k")
        assert await store.length("moving") == 1
    finally:
        await store.close()


async def test_appends_and_follow_find_the_new_master_after_a_manual_failover(
    redis_cluster: Cluster, any_store: EventStore
) -> None:
    """A replica takes over from its master, both alive (CLUSTER FAILOVER): the store's
    slot maps are stale. An append sent to the old master is answered MOVED and sent to
    the new one; a follow round on the old master's connection finds the key not local
    (raised: the follower tries again), the slot map is read again, and the next round
    reads from the new master."""
    store = any_store
    first, ms = fresh("moved")
    assert await store.create("moved", first)
    ((sid, _),) = (await store.follow({"moved": "0-0"}, 10))["moved"]
    # A replica still syncing cannot take over (nor, just after the failover of the
    # test before, be listed yet as its master's): settle first.
    await asyncio.to_thread(redis_cluster.settle)
    port = await master_of(store, "moved")
    replica = redis_cluster.replica_of(port)
    # A manual failover the replica cannot finish within Redis's own limit (5 s: a
    # loaded machine) is abandoned by Redis: ask again, up to three times.
    for _ in range(3):
        assert redis_cluster.cli(replica.port, "cluster", "failover") == "OK"
        for _ in range(160):
            if replica.port in redis_cluster.master_ports() and port not in redis_cluster.master_ports():
                break
            await asyncio.sleep(0.05)
        else:
            continue
        break
    else:
        pytest.fail("the replica did not take over (three manual failovers asked)")
    e2, _ = join(ms, "Ann", 1100)
    res = await store.append("moved", e2, expected_head=head_value(first), key="k")
    assert res.status == "ok"
    # Each failed round reads the slot map again, from a node that may not have heard
    # of the failover yet (the cluster's gossip): the follower waits between rounds, and
    # so does this (three rounds in a row all met the old map once, on a quiet machine).
    found = None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while found is None and loop.time() < deadline:
        try:
            found = await store.follow({"moved": sid}, 100)
        except ResponseError as exc:
            assert "non local key" in str(exc)
            await asyncio.sleep(0.1)
    assert found is not None and [s for s, _ in found["moved"]] == [res.stream_id]
    assert await master_of(store, "moved") == replica.port
    await asyncio.to_thread(redis_cluster.settle)


# --- servers on the cluster ------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    """`daedalus serve` processes on the cluster, whose appends wait for a replica
    (DAEDALUS_REDIS_WAIT_REPLICAS=1): a failover loses nothing they acknowledged, so a
    viewer's stream goes on with no resync."""

    def __init__(self, cluster: Cluster, directory: Path, count: int) -> None:
        self.urls: list[str] = []
        self.procs: list[subprocess.Popen[bytes]] = []
        self.logs: list[Path] = []
        env = dict(os.environ, REDIS_URL=cluster.url, DAEDALUS_REDIS_CLUSTER="1",
                   DAEDALUS_REDIS_WAIT_REPLICAS="1", DAEDALUS_KEY_FILE=str(directory / "key.pem"))
        for i in range(count):
            port = _free_port()
            log = directory / f"server{i}.log"
            with log.open("wb") as out:
                self.procs.append(subprocess.Popen(
                    [sys.executable, "-m", "clients.cli", "serve", "--port", str(port)],
                    env=env, stdout=out, stderr=subprocess.STDOUT,
                ))
            self.logs.append(log)
            self.urls.append(f"http://127.0.0.1:{port}")
            if not wait_for_port(port, 20):
                self.stop()
                raise RuntimeError(f"the server did not start:\n{log.read_text()}")

    def problems(self) -> list[str]:
        """Log lines at error level, and tracebacks."""
        out = []
        for log in self.logs:
            for line in log.read_text().splitlines():
                if '"level": "error"' in line or "Traceback" in line:
                    out.append(line)
        return out

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def served(redis_cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    flusher = redis.RedisCluster.from_url(redis_cluster.url)
    flusher.flushdb()  # a server resumes every unfinished match it finds: start clean
    flusher.close()
    servers = Served(redis_cluster, tmp_path_factory.mktemp("served"), 2)
    yield servers
    servers.stop()


def test_bots_play_every_game_through_a_server_on_the_cluster(served: Served) -> None:
    games = [g["name"] for g in httpx.get(f"{served.urls[0]}/games").json()["games"]]
    assert games, "the server hosts games"
    for game in games:
        res = subprocess.run(
            [sys.executable, "-m", "clients.cli", "bots", game, "--server", served.urls[0],
             "--matches", "3", "--verify", "--seed", "7"],
            capture_output=True, text=True, timeout=300,
        )
        assert res.returncode == 0, (game, res.stdout[-2000:], res.stderr[-2000:])
        assert "3/3 matches finished" in res.stdout + res.stderr, (game, res.stdout[-2000:])
    assert served.problems() == []


async def _watch(url: str, match: str, seen: list[int], views: list[dict[str, Any]]) -> None:
    """A spectator of `match` on the server at `url`, resuming after its last seq."""
    ws = url.replace("http://", "ws://") + "/ws"
    while True:
        try:
            async with connect(ws) as conn:
                hello: dict[str, Any] = {"type": "hello", "match": match}
                if seen:
                    hello["after"] = seen[-1]
                await conn.send(json.dumps(hello))
                async for raw in conn:
                    msg = json.loads(raw)
                    if msg["type"] == "update":
                        seen.append(int(msg["seq"]))
                        views.append(msg["view"])
                        if msg["view"].get("ended"):
                            return
        except (TimeoutError, ConnectionClosed, OSError):
            await asyncio.sleep(0.2)


async def test_a_match_goes_on_through_a_failover_of_its_master(
    redis_cluster: Cluster, served: Served
) -> None:
    """The master owning the match's slot dies mid-match (SIGKILL) and its replica is
    promoted, and it is started again: the players (one on each server process) and a
    spectator (on the process that does not take the first player's commands, so it
    follows them from the store) go on to the end, the spectator's stream whole (nothing
    acknowledged was lost: the servers wait for a replica), the log verified."""
    a, b = served.urls
    async with DaedalusHttp(a) as http:
        created = await http.create_match("five-card-trick", None, {"rounds": 40})
        match = created["match"]
        conns = []
        for seat, url in enumerate((a, b)):
            claimed = await http.claim_seat(match, f"bot {seat}", seat)
            conns.append(MatchConnection(url, match, token=claimed["token"]))
        for conn in conns:
            await conn.connect()
        seen: list[int] = []
        views: list[dict[str, Any]] = []
        spectator = asyncio.create_task(_watch(b, match, seen, views))
        players = [
            asyncio.create_task(play_bot(conn, bot_factory("five-card-trick", "random")(random.Random(seat))))
            for seat, conn in enumerate(conns)
        ]
        store = EventStore.from_url(redis_cluster.url, cluster=True)
        try:
            port = await master_of(store, match)
        finally:
            await store.close()
        while len(seen) < 6:
            await asyncio.sleep(0.05)
        assert not views[-1].get("ended"), "the match is in play"
        killed = await asyncio.to_thread(redis_cluster.kill_master, port)
        # As a supervisor would, the dead node is started again: it rejoins as a replica
        # of the promoted one. Until then the shard has no replica, and the servers'
        # appends, which wait for one, answer store_unavailable (the clients send again).
        await asyncio.to_thread(redis_cluster.restart, killed)
        finals = await asyncio.wait_for(asyncio.gather(*players), 120)
        await asyncio.wait_for(spectator, 60)
        for conn in conns:
            await conn.close()
        assert all(view["ended"] and view["result"] is not None for view in finals)
        assert seen == list(range(1, len(seen) + 1)), seen
        assert views[-1]["result"] == finals[0]["result"]
        ok, failure = verify_log(await http.log(match))
        assert ok, failure
    assert served.problems() == []
    # The followers noticed the node gone and came back once every master answered (then
    # checked the logs they hold against the store).
    said = [line for log in served.logs for line in log.read_text().splitlines()]
    assert any('"tail_error"' in line for line in said)
    assert any('"tail_recovered"' in line for line in said)


async def test_an_acked_append_survives_a_failover_only_if_it_waited_for_a_replica(
    redis_cluster: Cluster,
) -> None:
    """appendfsync always makes a master write an entry to its disk before it answers,
    but a failover promotes a replica, whose copy is what counts from then on. Without
    WAIT an acknowledged append the replica never received is lost; with
    `wait_replicas=1` such an append is not acknowledged (ReplicasBehind: the sender
    sends it again), and one that is acknowledged is on the replica and survives."""
    plain = await cluster_store(redis_cluster)
    # (WAIT for 1 s: a replica just restarted and synced answered none within 500 ms
    # once, in CI, on a busy machine)
    waiting = EventStore.from_url(redis_cluster.url, cluster=True, wait_replicas=1, timeout=2.0)
    try:
        first, ms = fresh("fate")
        assert await waiting.create("fate", first), "created, and on the replica"
        port = await master_of(plain, "fate")
        replica = redis_cluster.replica_of(port)
        assert replica.proc is not None
        e2, ms2 = join(ms, "Ann", 1100)
        e3, _ = join(ms2, "Bob", 1200)
        # The replica falls behind: stopped, and its link cut (what the master had sent
        # before would still reach it, from its socket, once it runs again).
        replica.proc.send_signal(signal.SIGSTOP)
        redis_cluster.cli(port, "client", "kill", "type", "replica")

        def resume() -> None:
            if replica.proc is not None:
                replica.proc.send_signal(signal.SIGCONT)

        try:
            with pytest.raises(ReplicasBehind):
                await waiting.append("fate", e2, expected_head=head_value(first), key="ann")
            assert await plain.length("fate") == 2, "in the master's log, not acknowledged"
            acked = await plain.append("fate", e3, expected_head=head_value(e2), key="bob")
            assert acked.status == "ok", "acknowledged without a replica"
        finally:
            # The master dies before the replica could catch up; then it runs again.
            killed = await asyncio.to_thread(redis_cluster.kill_master, port, resume)
        assert [e.seq for _, e in await plain.read("fate")] == [1], "the acknowledged append is lost"
        await asyncio.to_thread(redis_cluster.restart, killed)  # a replica again

        # The same with a replica that keeps up: the append waits for it, and survives.
        port = await master_of(plain, "fate")
        kept = await waiting.append("fate", e2, expected_head=head_value(first), key="ann")
        assert kept.status == "ok"
        killed = await asyncio.to_thread(redis_cluster.kill_master, port)
        assert [e.seq for _, e in await plain.read("fate")] == [1, 2], "the waited-for append survives"
        await asyncio.to_thread(redis_cluster.restart, killed)
    finally:
        await plain.close()
        await waiting.close()


async def test_one_redis_with_a_replica_acknowledges_an_append_once_the_replica_has_it(
    private_redis: RedisProcess, tmp_path: Path
) -> None:
    """`wait_replicas` on one Redis (no cluster): each batch of appends ends with WAIT on
    its connection; an append no replica confirms in time is ReplicasBehind, not `ok`."""
    (tmp_path / "replica").mkdir()
    replica = RedisProcess(str(tmp_path / "replica"))
    replica.start()
    async with aioredis.Redis.from_url(replica.url) as r:
        await r.replicaof("127.0.0.1", private_redis.port)
        for _ in range(200):
            if (await r.info("replication")).get("master_link_status") == "up":
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the replica did not attach")
    store = EventStore.from_url(private_redis.url, wait_replicas=1, timeout=1.0)
    wanting_two = EventStore.from_url(private_redis.url, wait_replicas=2, timeout=1.0)
    try:
        await store.reads.flushdb()
        firsts = {m: fresh(m) for m in ("a", "b", "c")}
        for m, (first, _) in firsts.items():
            assert await store.create(m, first)
        await store.writes.script_flush()  # the batch finds its script gone, loads it again
        results = await asyncio.gather(*(  # one batch: one pipeline, one WAIT
            store.append(m, join(ms, "Ann", 1100)[0], expected_head=head_value(first), key="k")
            for m, (first, ms) in firsts.items()
        ))
        assert [r.status for r in results] == ["ok"] * 3
        first, _ = fresh("d")
        with pytest.raises(ReplicasBehind):
            await wanting_two.create("d", first)  # there is one replica only
        assert await store.length("d") == 1, "in the master's log all the same"
        dup = await store.append("a", join(firsts["a"][1], "Ann", 1100)[0],
                                 expected_head=head_value(firsts["a"][0]), key="k")
        assert dup.status == "dup", "a duplicate wrote nothing to wait for"
    finally:
        await store.close()
        await wanting_two.close()
        replica.stop()


@pytest.mark.parametrize(("name", "value"), [
    ("DAEDALUS_REDIS_CLUSTER", "maybe"), ("DAEDALUS_REDIS_WAIT_REPLICAS", "-1"),
    ("DAEDALUS_REDIS_WAIT_REPLICAS", "one"),
])
def test_a_bad_redis_setting_stops_serve_with_one_line(name: str, value: str) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "clients.cli", "serve", "--port", "0"],
        env=dict(os.environ, **{name: value}), capture_output=True, text=True, timeout=60,
    )
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    (line,) = res.stderr.strip().splitlines()
    said = json.loads(line)
    assert said["event"] == "bad_setting" and name in said["error"] and repr(value) in said["error"]
