"""bench/leanws.py, the load generator's websocket client, against a conforming server
(the `websockets` library's), and bench/load.py end to end on a real server."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from bench.leanws import HandshakeError, LeanSocket
from tests.conftest import without_real_redis

ROOT = Path(__file__).resolve().parent.parent

Handler = Callable[[ServerConnection], Awaitable[None]]


@contextlib.asynccontextmanager
async def _server(handler: Handler, **kw: Any) -> AsyncIterator[str]:
    async with serve(handler, "127.0.0.1", 0, **kw) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}/ws?match=m1"


class Inbox:
    def __init__(self) -> None:
        self.messages: asyncio.Queue[bytes] = asyncio.Queue()

    def __call__(self, data: bytes) -> None:
        self.messages.put_nowait(data)

    async def next(self) -> bytes:
        return await asyncio.wait_for(self.messages.get(), 5)


async def test_messages_of_every_length_class_go_out_masked_and_come_back_whole() -> None:
    paths: list[str] = []

    async def echo(ws: ServerConnection) -> None:
        assert ws.request is not None
        paths.append(ws.request.path)
        async for message in ws:  # the library fails a connection on an unmasked frame
            await ws.send(message)

    async with _server(echo) as url:
        inbox = Inbox()
        sock = await LeanSocket.connect(url, inbox)
        sizes = [0, 1, 125, 126, 127, 65535, 65536, 200_003]
        for n in sizes:
            sock.send(("é" * (n // 2) + "x" * (n % 2)).encode())
        for n in sizes:
            got = await inbox.next()
            assert got == ("é" * (n // 2) + "x" * (n % 2)).encode()
        assert paths == ["/ws?match=m1"]
        await sock.close()
        assert sock.closed.done() and sock.close_code == 1000


async def test_a_fragmented_message_arrives_as_one_and_a_ping_is_answered() -> None:
    pong = asyncio.Event()

    async def talk(ws: ServerConnection) -> None:
        await ws.send(["fr", "ag", "mented"])  # three frames
        await ws.send("after")
        waiter = await ws.ping(b"p1")
        await asyncio.wait_for(waiter, 5)
        pong.set()
        await ws.wait_closed()

    async with _server(talk) as url:
        inbox = Inbox()
        sock = await LeanSocket.connect(url, inbox)
        assert await inbox.next() == b"fragmented"
        assert await inbox.next() == b"after"
        await asyncio.wait_for(pong.wait(), 5)
        await sock.close()


async def test_a_close_from_the_server_ends_the_connection_with_its_code() -> None:
    async def close(ws: ServerConnection) -> None:
        await ws.send("bye")
        await ws.close(4008, "too slow")

    async with _server(close) as url:
        inbox = Inbox()
        sock = await LeanSocket.connect(url, inbox)
        assert await inbox.next() == b"bye"
        await asyncio.wait_for(sock.closed, 5)
        assert sock.close_code == 4008
        sock.send(b"late")  # dropped: the connection is gone


async def test_a_refused_upgrade_is_a_handshake_error() -> None:
    async def never(ws: ServerConnection) -> None:
        raise AssertionError("not reached")

    def refuse(connection: ServerConnection, request: Any) -> Any:
        return connection.respond(HTTPStatus.FORBIDDEN, "no\n")

    async with _server(never, process_request=refuse) as url:
        with pytest.raises(HandshakeError, match="403"):
            await LeanSocket.connect(url, Inbox(), timeout=5)


def test_load_bench_runs_both_phases_against_a_real_server(real_redis: Any) -> None:
    """bench/load.py, briefly: bot seats on LeanSocket play closed and open loops (it starts
    its own redis-server; the fixture only says whether this machine has one)."""
    cmd = [sys.executable, str(ROOT / "bench" / "load.py"), "-k", "6", "--warmup", "0.5",
           "--duration", "1.5", "--rate", "40"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    except FileNotFoundError as exc:  # pragma: no cover
        without_real_redis(exc)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    fields = dict(part.split("=") for part in last.split())
    assert float(fields["commands/s"]) > 0
    assert fields["p99_ms"] != "nan"
    for phase in ("closed loop", "open loop"):
        section = proc.stdout.split(f"== {phase}")[1]
        assert "errors 0" in section.split("\n")[1] or "rate_limited" in section.split("\n")[1]
        assert "rejected 0" in section
