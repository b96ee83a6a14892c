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
(which drops it, as the transport drops its buffer).

On uvicorn's `websockets-sansio` protocol (its default), the connection's scope also
carries `send_text(data: bytes) -> bool` as the ASGI extension SEND_TEXT: it writes a
text frame of `data` (UTF-8 JSON as the server encodes it) straight to the transport,
without a return to the event loop and without the layers of a `websocket.send`
message (Starlette's WebSocket, uvicorn's `send`, the `websockets` Frame; and the frame's
bytes decoded to a str for them and encoded back). The frame is the same bytes as
`websockets` serializes (a server's frames are unmasked; per-message deflate is off).
It writes only while the connection is open and writable (False otherwise: the caller
sends the frame the usual way, which waits for the socket or raises as it should).
"""

from __future__ import annotations

import asyncio
from typing import Any

from websockets.protocol import State

SEND_TEXT = "daedalus.send_text"
"""The ASGI scope extension of a websocket connection: its `send_text(data) -> bool`."""


_OPEN = State.OPEN


def text_frame_header(size: int) -> bytes:
    """The header of an unmasked, final text frame of `size` bytes (RFC 6455 5.2)."""
    if size < 126:
        return bytes((0x81, size))
    if size < 65536:
        return b"\x81\x7e" + size.to_bytes(2, "big")
    return b"\x81\x7f" + size.to_bytes(8, "big")


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

    def write_frame(self, header: bytes, data: bytes) -> None:
        """`write(header)` then `write(data)`, in one call (a frame from SEND_TEXT)."""
        self._held += (header, data)
        if not self._flushing:
            self._flushing = True
            self._loop.call_soon(self.flush)

    def is_closing(self) -> bool:
        return self._transport.is_closing()

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


def _sansio(base: type[asyncio.Protocol]) -> bool:
    """Whether `base` is uvicorn's websockets-sansio protocol (what send_text relies on)."""
    try:
        from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    except ImportError:  # pragma: no cover (an uvicorn without it)
        return False
    return issubclass(base, WebSocketsSansIOProtocol)


def coalescing(base: type[asyncio.Protocol]) -> type[asyncio.Protocol]:
    """uvicorn's websocket protocol class `base`, on a CoalescingTransport (and on the
    websockets-sansio protocol, with the SEND_TEXT extension)."""

    class Coalescing(base):  # type: ignore[valid-type, misc]
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            wrapped = CoalescingTransport(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
            super().connection_made(wrapped)

    if _sansio(base):

        class Direct(Coalescing):
            def handle_connect(self, event: Any) -> None:
                super().handle_connect(event)
                scope = getattr(self, "scope", None)  # (none when the handshake was refused)
                if scope is not None:
                    scope["extensions"][SEND_TEXT] = self.send_text

            def send_text(self, data: bytes) -> bool:
                """Write a text frame of `data` now, if the connection is open and
                writable (True); False: send it as a `websocket.send` message."""
                conn = self.conn
                if (
                    self.close_sent or self.disconnected or not self.handshake_complete
                    or self.initial_response is not None or not self.writable.is_set()
                    or conn.state is not _OPEN or conn.extensions
                    or conn.expect_continuation_frame
                ):
                    return False
                transport = self.transport
                if transport.is_closing():
                    return False
                size = len(data)
                transport.write_frame(_SHORT[size] if size < 126 else text_frame_header(size), data)
                return True

        Coalescing = Direct  # type: ignore[misc]

    Coalescing.__name__ = Coalescing.__qualname__ = f"Coalescing{base.__name__}"
    return Coalescing


_SHORT = [text_frame_header(size) for size in range(126)]
