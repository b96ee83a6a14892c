"""Shared fixtures: the event store on fakeredis and on a real redis-server.

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

import pytest

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


class RedisServer:
    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = os.environ.get("DAEDALUS_TEST_REDIS_URL", "")
        self.dir: str | None = None

    def start(self) -> None:
        if self.url:
            return
        binary = shutil.which("redis-server")
        if binary is None:
            raise FileNotFoundError("redis-server")
        port = _free_port()
        self.dir = tempfile.mkdtemp(prefix="daedalus-redis-")
        self.proc = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--appendfsync", "always", "--dir", self.dir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        if not wait_for_port(port):
            raise RuntimeError("redis-server did not start")
        self.url = f"redis://127.0.0.1:{port}/0"

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


@pytest.fixture(scope="session")
def real_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    try:
        server.start()
    except (FileNotFoundError, RuntimeError) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a real Redis for the store tests: {exc}")
        pytest.skip(f"no real Redis here ({exc}); CI runs these")
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
