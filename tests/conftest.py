"""Shared fixtures: the event store on fakeredis and on a real redis-server (and, for the
store contract, in memory too).

The real Redis is taken from DAEDALUS_TEST_REDIS_URL, or started from the
`redis-server` on PATH on a free loopback port. Where neither is there the real-Redis
half is skipped on a developer's machine and fails under CI (CI=true): CI must test both.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from server.storage import MemoryStore, Store
from server.store import EventStore


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, seconds: float = 10) -> bool:
    """Whether something listens on loopback `port` within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


class RedisProcess:
    """A redis-server of the tests' own on a free loopback port (AOF, fsync always),
    keeping its data in `directory`: it may be stopped and started again, same port,
    same data. FileNotFoundError where there is no `redis-server` on PATH."""

    def __init__(self, directory: str, appendfsync: str = "always") -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server")
        self.binary = binary
        self.dir = directory
        self.port = _free_port()
        self.appendfsync = appendfsync
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--appendfsync", self.appendfsync, "--dir", self.dir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        if not wait_for_port(self.port):
            raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None

    def kill(self) -> None:
        """Stop it as a crash would (SIGKILL): whatever it had not written is lost."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc = None


def without_real_redis(exc: Exception) -> NoReturn:
    """No real Redis: skipped on a developer's machine, a failure under CI."""
    if os.environ.get("CI"):
        pytest.fail(f"CI needs a real Redis for these tests: {exc}")
    pytest.skip(f"no real Redis here ({exc}); CI runs these")


class RedisServer:
    """The real Redis of the session: DAEDALUS_TEST_REDIS_URL, else a RedisProcess."""

    def __init__(self) -> None:
        self.url = os.environ.get("DAEDALUS_TEST_REDIS_URL", "")
        self.process: RedisProcess | None = None

    def start(self) -> None:
        if self.url:
            return
        self.process = RedisProcess(tempfile.mkdtemp(prefix="daedalus-redis-"))
        self.process.start()
        self.url = self.process.url

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A redis-server of the test's own (AOF, fsync always), to stop and start again."""
    try:
        r = RedisProcess(str(tmp_path))
        r.start()
    except (FileNotFoundError, RuntimeError) as exc:
        without_real_redis(exc)
    yield r
    r.stop()


@pytest.fixture(scope="session")
def real_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    try:
        server.start()
    except (FileNotFoundError, RuntimeError) as exc:
        without_real_redis(exc)
    yield server
    server.stop()


@pytest.fixture(params=["fakeredis", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[EventStore]:
    """The event store, once on fakeredis and once on a real redis-server."""
    if request.param == "fakeredis":
        s = EventStore.embedded()
    else:
        server: RedisServer = request.getfixturevalue("real_redis")
        s = EventStore.from_url(server.url)
        await s.reads.flushdb()
    yield s
    await s.close()


@pytest.fixture(params=["memory", "fakeredis", "redis"])
async def any_store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    """Every backend of server.storage.Store: in memory, on fakeredis and on a real
    redis-server (the contract suite, tests/test_store_contract.py, runs over each)."""
    s: Store
    if request.param == "memory":
        s = MemoryStore()
    elif request.param == "fakeredis":
        s = EventStore.embedded()
    else:
        server: RedisServer = request.getfixturevalue("real_redis")
        redis_store = EventStore.from_url(server.url)
        await redis_store.reads.flushdb()
        s = redis_store
    yield s
    await s.close()
