"""Websocket writes made in one turn of the event loop, sent to the socket as one.

A command answers its sender with two frames in a row (its update, then its ack), and a
catch-up with many. uvicorn's websocket protocols write each frame to the transport as
it is sent, and each write is a system call: under load the socket writes were the
largest single line of the server's profile (9% of its samples, docs/performance.md).
`coalescing(base)` is uvicorn's websocket protocol class `base` whose transport holds
the writes of a turn and sends them together at its end (`loop.call_soon`): the same
bytes in the same order, one system call, at most one turn of the loop later.

Everything else of the transport is the real one's: flow control (`pause_writing` still
comes from the socket's buffer), `close` (which sends what is held first), `abort`
(which drops it, as the transport drops its buffer)."""

from __future__ import annotations

import asyncio
from typing import Any


class CoalescingTransport:
    """A transport whose writes of one turn of the loop reach the real one as one."""

    __slots__ = ("_flushing", "_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []
        self._flushing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        self._held.append(bytes(data))
        if not self._flushing:
            self._flushing = True
            self._loop.call_soon(self.flush)

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        """Send what is held now."""
        self._flushing = False
        if not self._held:
            return
        data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
        self._held.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held.clear()
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def coalescing(base: type[asyncio.Protocol]) -> type[asyncio.Protocol]:
    """uvicorn's websocket protocol class `base`, on a CoalescingTransport."""

    class Coalescing(base):  # type: ignore[valid-type, misc]
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            wrapped = CoalescingTransport(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
            super().connection_made(wrapped)

    Coalescing.__name__ = Coalescing.__qualname__ = f"Coalescing{base.__name__}"
    return Coalescing
