"""A local Redis Cluster from Debian's redis-server: 3 masters, a replica each, on loopback.

    python deploy/cluster.py [--masters 3] [--replicas 1] [--dir DIR] [--appendfsync always]

Prints `ready redis://127.0.0.1:PORT nodes=P1,P2,...` once every node reports
`cluster_state:ok` and every replica is attached, then runs until interrupted. Give that
URL to the server as `REDIS_URL` with `DAEDALUS_REDIS_CLUSTER=1` (deploy/README.md).

The tests use `Cluster` directly: `kill_master(port)` stops a master as a crash would
(SIGKILL) and waits until its replica has been promoted in its place; `restart(node)`
brings a stopped node back (it rejoins as a replica of the promoted one).

Nodes use a short `cluster-node-timeout` (default 2 s) so a failover takes seconds, and
`appendonly yes` with the chosen fsync policy in a directory of their own.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


def _free_cluster_port() -> int:
    """A loopback port whose cluster bus port (port + 10000) is free too."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port + 10000 > 65535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


@dataclass
class Node:
    port: int
    dir: Path
    proc: subprocess.Popen[bytes] | None = None


@dataclass
class Cluster:
    masters: int = 3
    replicas: int = 1
    appendfsync: str = "always"
    node_timeout_ms: int = 2000
    directory: str | None = None
    nodes: list[Node] = field(default_factory=list)

    def __post_init__(self) -> None:
        server = shutil.which("redis-server")
        cli = shutil.which("redis-cli")
        if server is None or cli is None:
            raise FileNotFoundError("redis-server and redis-cli")
        self.server_bin, self.cli_bin = server, cli
        self.own_dir = self.directory is None
        self.dir = Path(self.directory or tempfile.mkdtemp(prefix="daedalus-cluster-"))

    @property
    def url(self) -> str:
        """A URL of one node: a cluster client finds the others from it."""
        return f"redis://127.0.0.1:{self.nodes[0].port}/0"

    @property
    def startup_nodes(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", n.port) for n in self.nodes]

    # --- nodes ---------------------------------------------------------------------------

    def start_node(self, node: Node) -> None:
        node.dir.mkdir(parents=True, exist_ok=True)
        node.proc = subprocess.Popen(
            [self.server_bin, "--port", str(node.port), "--bind", "127.0.0.1",
             "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
             "--cluster-node-timeout", str(self.node_timeout_ms),
             "--appendonly", "yes", "--appendfsync", self.appendfsync, "--save", "",
             "--dir", str(node.dir), "--logfile", str(node.dir / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        _wait(lambda: self.cli(node.port, "ping") == "PONG", 10,
              f"cluster node {node.port} did not start")

    def stop_node(self, node: Node, sig: int = signal.SIGTERM) -> None:
        if node.proc is not None:
            node.proc.send_signal(sig)
            node.proc.wait(timeout=20)
            node.proc = None

    def cli(self, port: int, *args: str) -> str:
        res = subprocess.run([self.cli_bin, "-p", str(port), *args],
                             capture_output=True, text=True, timeout=10)
        return res.stdout.strip()

    def info(self, port: int) -> dict[str, str]:
        out = self.cli(port, "cluster", "info")
        return dict(line.split(":", 1) for line in out.splitlines() if ":" in line)

    def roles(self) -> dict[int, str]:
        """port -> 'master' or 'slave', as the running nodes say."""
        out: dict[int, str] = {}
        for n in self.nodes:
            if n.proc is None:
                continue
            first = self.cli(n.port, "role").splitlines()[:1]
            if first:
                out[n.port] = first[0]
        return out

    def healthy(self) -> bool:
        running = [n for n in self.nodes if n.proc is not None]
        if not running:
            return False
        for n in running:
            info = self.info(n.port)
            if info.get("cluster_state") != "ok":
                return False
            if int(info.get("cluster_known_nodes", "0")) < len(self.nodes):
                return False
        roles = self.roles()
        return sum(1 for r in roles.values() if r == "master") == self.masters

    # --- the cluster -----------------------------------------------------------------------

    def start(self) -> Cluster:
        try:
            total = self.masters * (1 + self.replicas)
            self.nodes = [Node(p, self.dir / str(p)) for p in
                          (_free_cluster_port() for _ in range(total))]
            for n in self.nodes:
                self.start_node(n)
            res = subprocess.run(
                [self.cli_bin, "--cluster", "create",
                 *(f"127.0.0.1:{n.port}" for n in self.nodes),
                 "--cluster-replicas", str(self.replicas), "--cluster-yes"],
                capture_output=True, text=True, timeout=60,
            )
            if res.returncode != 0:
                raise RuntimeError(f"redis-cli --cluster create failed: {res.stdout[-2000:]}{res.stderr}")
            _wait(self.healthy, 60, "the cluster did not reach cluster_state:ok")
            _wait(lambda: self._replicas_attached(), 60, "the replicas did not attach")
        except BaseException:
            self.stop()
            raise
        return self

    def _replicas_attached(self) -> bool:
        """Every replica has finished its first sync (one that never did cannot be
        promoted: its data would be too old)."""
        replicas = [p for p, r in self.roles().items() if r == "slave"]
        if len(replicas) != self.masters * self.replicas:
            return False
        return all("master_link_status:up" in self.cli(p, "info", "replication")
                   for p in replicas)

    def master_ports(self) -> list[int]:
        return sorted(p for p, r in self.roles().items() if r == "master")

    def node(self, port: int) -> Node:
        return next(n for n in self.nodes if n.port == port)

    def replica_of(self, port: int, seconds: float = 30.0) -> Node:
        """The (first) replica of the master on `port`, waiting up to `seconds` for the
        master to list one (a node that just rejoined is listed a moment later)."""
        master_id = self.cli(port, "cluster", "myid")
        deadline = time.monotonic() + seconds
        while True:
            for line in self.cli(port, "cluster", "nodes").splitlines():
                fields = line.split()
                if len(fields) > 3 and "slave" in fields[2] and fields[3] == master_id:
                    return self.node(int(fields[1].split("@")[0].rsplit(":", 1)[1]))
            if time.monotonic() > deadline:
                raise RuntimeError(f"master {port} has no replica")
            time.sleep(0.1)

    def kill_master(self, port: int, then: Callable[[], object] | None = None) -> Node:
        """Kill the master on `port` (SIGKILL), run `then` (if given), and wait until a
        replica took its place."""
        node = self.node(port)
        self.stop_node(node, signal.SIGKILL)
        if then is not None:
            then()
        _wait(lambda: len(self.master_ports()) == self.masters and self._all_ok(), 60,
              f"no replica was promoted after master {port} died")
        return node

    def restart(self, node: Node) -> None:
        """Start a stopped node again and wait until it has rejoined (a master killed
        and replaced comes back as a replica of its replacement) and synced."""
        self.start_node(node)
        _wait(lambda: self._all_ok() and self._replicas_attached(), 60,
              f"node {node.port} did not rejoin the cluster")

    def settle(self) -> None:
        """Wait until every node says the cluster is ok and every replica is in sync
        (after a failover, the former master syncs from the new one first)."""
        _wait(lambda: self._all_ok() and self._replicas_attached(), 60, "the cluster did not settle")

    def _all_ok(self) -> bool:
        return all(self.info(n.port).get("cluster_state") == "ok"
                   for n in self.nodes if n.proc is not None)

    def stop(self) -> None:
        for n in self.nodes:
            if n.proc is not None and n.proc.poll() is None:
                n.proc.terminate()
        for n in self.nodes:
            if n.proc is not None:
                try:
                    n.proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    n.proc.kill()
                    n.proc.wait()
                n.proc = None
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _wait(ok: object, seconds: float, message: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if ok():  # type: ignore[operator]
                return
        except (OSError, subprocess.SubprocessError, ValueError):
            pass
        time.sleep(0.1)
    raise RuntimeError(message)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--masters", type=int, default=3)
    p.add_argument("--replicas", type=int, default=1)
    p.add_argument("--appendfsync", choices=["always", "everysec", "no"], default="always")
    p.add_argument("--dir", default=None, help="working directory, kept (default: a temporary one)")
    args = p.parse_args(argv)
    try:
        cluster = Cluster(args.masters, args.replicas, args.appendfsync, directory=args.dir).start()
    except (FileNotFoundError, RuntimeError) as exc:
        print(f"cluster: {exc}", file=sys.stderr)
        return 1
    # Blocked only now: the nodes must not inherit a mask that keeps SIGTERM from them.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    print(f"ready {cluster.url} nodes=" + ",".join(str(n.port) for n in cluster.nodes), flush=True)
    try:
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
