"""A websocket client for the load generator: only what a bot seat needs, and cheap.

The bot client processes of `bench/load.py` share the machine with the server they
measure. Through the `websockets` library's asyncio client a seat cost the client about
twice what a command costs the server (a task woken for every message, the library's
frame parser, a future per send), so on 2 cores the clients took CPU the server could
have used. This client is an `asyncio.Protocol`: the handshake is written and checked by
hand, the server's frames (never masked) are parsed in `data_received` and each text
message is handed at once to a callback, which may send (a write to the transport, no
await). What it leaves out, a server of ours never sends: extensions (none is offered),
binary messages. Fragmented messages are put together; pings are answered; a close is
echoed and ends the connection.

    sock = await LeanSocket.connect("ws://127.0.0.1:8000/ws?match=ab12", on_message)
    sock.send(b'{"type": "hello", ...}')
    await sock.closed        # set when the connection is gone, whoever closed it
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import random
import struct
from collections.abc import Callable
from typing import cast
from urllib.parse import urlsplit

try:
    from websockets.speedups import apply_mask  # C, from the `websockets` package
except ImportError:  # pragma: no cover - the package builds it on every platform we use
    from websockets.utils import apply_mask


_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455, 1.3
_TEXT, _BINARY, _CONTINUATION = 0x1, 0x2, 0x0
_CLOSE, _PING, _PONG = 0x8, 0x9, 0xA
_MAX_HEADERS = 64 * 1024


class HandshakeError(Exception):
    """The server did not switch to the websocket protocol (its status line, and the body's
    first bytes if any, say why)."""


class LeanSocket(asyncio.Protocol):
    """One client websocket. `on_message(data)` gets each text message's bytes (UTF-8),
    in order, from the event loop's callback for the data that completed it."""

    def __init__(self, on_message: Callable[[bytes], None], key: bytes) -> None:
        self.on_message = on_message
        self._key = key
        loop = asyncio.get_running_loop()
        self.opened: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()
        self.close_code: int | None = None
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._open = False
        self._closing = False  # a close frame was sent
        self._parts: list[bytes] | None = None  # a fragmented message's frames so far
        self._masks = random.Random(os.urandom(16))

    @classmethod
    async def connect(
        cls, url: str, on_message: Callable[[bytes], None], *, timeout: float = 60,
        headers: dict[str, str] | None = None,
    ) -> LeanSocket:
        """Open `url` (ws://host:port/path?query) and return once the handshake is done."""
        parts = urlsplit(url)
        if parts.scheme != "ws" or not parts.hostname:
            raise ValueError(f"not a ws:// URL: {url}")
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        port = parts.port or 80
        key = base64.b64encode(os.urandom(16))
        loop = asyncio.get_running_loop()
        _, sock = await asyncio.wait_for(
            loop.create_connection(lambda: cls(on_message, key), parts.hostname, port), timeout
        )
        host = parts.hostname if port == 80 else f"{parts.hostname}:{port}"
        lines = [
            f"GET {target} HTTP/1.1", f"Host: {host}", "Upgrade: websocket",
            "Connection: Upgrade", f"Sec-WebSocket-Key: {key.decode()}",
            "Sec-WebSocket-Version: 13",
            *(f"{k}: {v}" for k, v in (headers or {}).items()),
        ]
        assert sock._transport is not None
        sock._transport.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        try:
            await asyncio.wait_for(asyncio.shield(sock.opened), timeout)
        except BaseException:
            sock.abort()
            raise
        return sock

    # --- sending ------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Send one text message (UTF-8 bytes). Dropped once the connection is closing."""
        self._send_frame(_TEXT, data)

    def _send_frame(self, opcode: int, data: bytes) -> None:
        t = self._transport
        if t is None or t.is_closing() or self._closing:
            return
        n = len(data)
        if n < 126:
            header = bytes((0x80 | opcode, 0x80 | n))
        elif n < 65536:
            header = struct.pack("!BBH", 0x80 | opcode, 0xFE, n)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0xFF, n)
        mask = self._masks.getrandbits(32).to_bytes(4, "big")
        t.write(header + mask + apply_mask(data, mask))

    async def close(self, code: int = 1000, timeout: float = 10) -> None:
        """Send a close frame and wait for the server's (then the connection's end)."""
        if self._transport is not None and not self._closing:
            self._send_frame(_CLOSE, code.to_bytes(2, "big"))
            self._closing = True
        try:
            await asyncio.wait_for(asyncio.shield(self.closed), timeout)
        except TimeoutError:
            self.abort()

    def abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()

    # --- asyncio.Protocol ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # (uvloop's is not a subclass)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(exc or ConnectionError("closed during the handshake"))
        if not self.closed.done():
            self.closed.set_result(None)

    def data_received(self, data: bytes) -> None:
        buf = self._buffer
        buf += data
        if not self._open and not self._handshake():
            return
        pos = 0
        end = len(buf)
        while end - pos >= 2:
            b0 = buf[pos]
            b1 = buf[pos + 1]
            n = b1 & 0x7F
            start = pos + 2
            if n == 126:
                if end - pos < 4:
                    break
                n = (buf[pos + 2] << 8) | buf[pos + 3]
                start = pos + 4
            elif n == 127:
                if end - pos < 10:
                    break
                n = int.from_bytes(buf[pos + 2:pos + 10], "big")
                start = pos + 10
            if b1 & 0x80 or b0 & 0x70:  # a masked frame, or a reserved bit: not from a server
                self._fail(1002)
                return
            stop = start + n
            if stop > end:
                break
            payload = bytes(buf[start:stop])
            pos = stop
            if not self._frame(b0 & 0x80, b0 & 0x0F, payload):
                return
        del buf[:pos]

    # --- what the bytes say -------------------------------------------------------------

    def _handshake(self) -> bool:
        buf = self._buffer
        head_end = buf.find(b"\r\n\r\n")
        if head_end < 0:
            if len(buf) > _MAX_HEADERS:
                self._refuse(HandshakeError("no end to the response's headers"))
            return False
        head = bytes(buf[:head_end]).decode("latin-1").split("\r\n")
        del buf[:head_end + 4]
        status = head[0]
        fields = {}
        for line in head[1:]:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        expected = base64.b64encode(hashlib.sha1(self._key + _GUID).digest()).decode()
        if status.split(" ")[1:2] != ["101"]:
            self._refuse(HandshakeError(f"{status} {bytes(buf[:200])!r}"))
            return False
        if fields.get("sec-websocket-accept") != expected:
            self._refuse(HandshakeError("Sec-WebSocket-Accept does not match the key sent"))
            return False
        if fields.get("sec-websocket-extensions"):
            self._refuse(HandshakeError("an extension was not offered"))
            return False
        self._open = True
        self.opened.set_result(None)
        return True

    def _frame(self, fin: int, opcode: int, payload: bytes) -> bool:
        """Handle one frame; False once the connection is failing or closed."""
        if opcode in (_TEXT, _BINARY):
            if self._parts is not None:
                self._fail(1002)
                return False
            if not fin:
                self._parts = [payload]
                return True
            self.on_message(payload)
        elif opcode == _CONTINUATION:
            if self._parts is None:
                self._fail(1002)
                return False
            self._parts.append(payload)
            if fin:
                message = b"".join(self._parts)
                self._parts = None
                self.on_message(message)
        elif opcode == _PING:
            self._send_frame(_PONG, payload)
        elif opcode == _PONG:
            pass
        elif opcode == _CLOSE:
            self.close_code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
            if not self._closing:
                self._send_frame(_CLOSE, payload[:2])
                self._closing = True
            if self._transport is not None:
                self._transport.close()
            return False
        else:
            self._fail(1002)
            return False
        return True

    def _fail(self, code: int) -> None:
        self.close_code = code
        if not self._closing:
            self._send_frame(_CLOSE, code.to_bytes(2, "big"))
            self._closing = True
        if self._transport is not None:
            self._transport.close()

    def _refuse(self, exc: Exception) -> None:
        if not self.opened.done():
            self.opened.set_exception(exc)
        self.abort()
