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

And the receive side, RECEIVE: `await receive()` gives the data of the connection's next
message (str for text, bytes for binary) and None once the client is gone, in the order
of uvicorn's own queue (a Starlette `receive()` before it, e.g. the accept's, took its
messages from the same queue), without Starlette's and uvicorn's layers of a
`websocket.receive` message nor asyncio.Queue's wait (a bare future, woken when the
queue gets a message). Client frames the simple common way (a whole, final, masked text
frame of less than 64 KiB, each of a chunk of data, with the `websockets` parser between
frames) are read here rather than by that parser: unmasked, decoded and, once the app
has asked RECEIVE for a message, kept for it in a queue of texts of its own while
uvicorn's is empty (else queued there as uvicorn queues them); reading is paused until
the app takes them, but for the one text it waits for. Anything else in a chunk (a
control frame, a fragment, a frame split across chunks, invalid UTF-8, a frame over the
size limit) and the whole chunk goes to the `websockets` parser as before, which answers
it as it always has.
"""

from __future__ import annotations

import asyncio
import collections
import operator
import struct
from typing import Any

from websockets.protocol import State

try:
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover (websockets builds its C speedups on our platforms)
    from websockets.utils import apply_mask

SEND_TEXT = "daedalus.send_text"
"""The ASGI scope extension of a websocket connection: its `send_text(data) -> bool`."""
RECEIVE = "daedalus.receive"
"""The ASGI scope extension of a websocket connection: `await receive()`, the data of its
next message (None: the client is gone)."""


_OPEN = State.OPEN


_HEADER_16 = struct.Struct("!BBH").pack
"""The header of a text frame of 126 to 65,535 bytes, given 0x81, 126 and the size
(send_text packs it itself, a Python call fewer a frame: most updates are of this size)."""


def text_frame_header(size: int) -> bytes:
    """The header of an unmasked, final text frame of `size` bytes (RFC 6455 5.2)."""
    if size < 126:
        return bytes((0x81, size))
    if size < 65536:
        return _HEADER_16(0x81, 126, size)
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

    def write_frame(self, header: bytes, data: bytes) -> bool:
        """`write(header)` then `write(data)`, in one call (a frame from SEND_TEXT); False,
        and nothing held, once the transport is closing."""
        if self._transport.is_closing():
            return False
        self._held += (header, data)
        if not self._flushing:
            self._flushing = True
            self._loop.call_soon(self.flush)
        return True

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    # (uvicorn pauses reading for each message until the app takes it: not through __getattr__)
    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def flush(self) -> None:
        """Send what is held now: its pieces in one `writelines` (uvloop's transport
        writes them with one writev, no copy of them joined first; asyncio's joins them)."""
        self._flushing = False
        if not self._held:
            return
        held, self._held = self._held, []
        if not self._transport.is_closing():
            self._transport.writelines(held)

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
            _waiter: asyncio.Future[None] | None = None  # RECEIVE waiting for a message
            _writing_paused = False  # uvicorn's `writable` cleared (read by send_text)
            read_paused: bool  # (uvicorn's)

            # What send_text asks of the connection, answered once and kept while it
            # holds (`_writable`: True, or None to ask again), rather than asked at each
            # of a command's three frames: uvicorn's attributes it reads are properties
            # here whose setting has it asked again (`_asks_again`), and so does pausing
            # and resuming the writing. The websockets connection leaves its OPEN state
            # only where uvicorn, in the same call, sets `close_sent` (a close sent, a
            # failure) or closes the transport (a close received, the end of the
            # stream), which write_frame sees; its extensions are settled with its
            # handshake, and it expects a continuation frame only after a fragment the
            # server sent, which it never sends.
            _writable: bool | None = None
            close_sent = _asks_again("close_sent")
            disconnected = _asks_again("disconnected")
            handshake_complete = _asks_again("handshake_complete")
            initial_response = _asks_again("initial_response")

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self.queue = _WakingQueue(self)
                # The texts read directly while uvicorn's queue was empty, for RECEIVE
                # before anything queued there after them (see data_received).
                self._texts: collections.deque[str] = collections.deque()
                self._parser_idle = False  # _between_frames held, and the parser not fed since
                self._receiving = False  # the app takes its messages through RECEIVE

            def handle_connect(self, event: Any) -> None:
                super().handle_connect(event)
                scope = getattr(self, "scope", None)  # (none when the handshake was refused)
                if scope is not None:
                    scope["extensions"][SEND_TEXT] = self.send_text
                    scope["extensions"][RECEIVE] = self.receive_data

            async def receive_data(self) -> str | bytes | None:
                """The data of the next message (None: the client is gone)."""
                self._receiving = True
                texts, queue = self._texts, self.queue
                if not texts and queue.empty():
                    self._waiter = waiter = self.loop.create_future()
                    try:
                        await waiter
                    finally:
                        self._waiter = None
                if texts:  # (read before whatever uvicorn's queue holds: see data_received)
                    text = texts.popleft()
                    if not texts and self.read_paused and queue.empty():
                        self.read_paused = False
                        self.transport.resume_reading()
                    return text
                message = queue.get_nowait()
                if self.read_paused and queue.empty():
                    self.read_paused = False
                    self.transport.resume_reading()
                if message["type"] != "websocket.receive":  # websocket.disconnect
                    queue.put_nowait(message)  # (and so for any later call)
                    return None
                text = message.get("text")
                return text if text is not None else message.get("bytes") or b""

            def shutdown(self) -> None:
                # uvicorn sends each connection a close frame (1012) as the server stops,
                # which `websockets` refuses (InvalidState) once the closing handshake has
                # begun: the client sent its close and the answer waits, say behind updates
                # it does not read. Raised there, it cut uvicorn's shutdown short. Such a
                # connection has nothing more to say: it is dropped.
                if self.handshake_complete and not self.close_sent and self.conn.state is not _OPEN:
                    self.stop_keepalive()
                    self.transport.abort()
                    return
                super().shutdown()

            def data_received(self, data: bytes) -> None:
                texts = self._simple_frames(data)
                if texts is None:
                    self._parser_idle = False
                    super().data_received(data)
                    return
                if not texts:
                    return
                waiter = self._waiter
                if self._receiving and self.queue.empty():
                    # Kept here rather than queued as uvicorn queues a message (a dict, and
                    # asyncio.Queue's put and get), for an app that takes its messages
                    # through RECEIVE (not Starlette's receive, which reads only that
                    # queue): nothing is queued there before them, and what is queued
                    # after them is read after them. Reading pauses as uvicorn pauses it,
                    # but for the one text the app waits for now, which it takes before
                    # this connection's next read.
                    self._texts.extend(texts)
                    if waiter is not None and not waiter.done():
                        waiter.set_result(None)
                        if len(self._texts) == 1:
                            return
                else:
                    put = self.queue.put_nowait
                    for text in texts:
                        put({"type": "websocket.receive", "text": text})
                if not self.read_paused:
                    self.read_paused = True
                    self.transport.pause_reading()

            def _simple_frames(self, data: bytes) -> list[str] | None:
                """The texts of `data` if it is whole, final, masked text frames of less
                than 64 KiB each, read where the `websockets` parser stands between two
                frames; None: the parser's to read."""
                conn = self.conn
                if not self.handshake_complete or self.close_sent or conn.state is not _OPEN:
                    return None
                if not self._parser_idle:  # (it stays so until the parser is fed again)
                    if (
                        conn.expect_continuation_frame or conn.reader.buffer
                        or not _between_frames(conn.parser)
                    ):
                        return None
                    self._parser_idle = True
                limit = conn.max_message_size
                texts: list[str] = []
                pos, end = 0, len(data)
                while pos < end:
                    if end - pos < 6 or data[pos] != 0x81:  # FIN, no RSV bits, text
                        return None
                    size = data[pos + 1]
                    if size < 0x80:  # not masked
                        return None
                    size &= 0x7F
                    start = pos + 6
                    if size == 126:
                        if end - pos < 8:
                            return None
                        size = (data[pos + 2] << 8) | data[pos + 3]
                        start = pos + 8
                    elif size == 127:
                        return None
                    stop = start + size
                    if stop > end or (limit is not None and size > limit):
                        return None
                    try:
                        texts.append(apply_mask(data[start:stop], data[start - 4:start]).decode())
                    except UnicodeDecodeError:
                        return None
                    pos = stop
                return texts

            def pause_writing(self) -> None:
                super().pause_writing()
                self._writing_paused = True
                self._writable = None

            def resume_writing(self) -> None:
                super().resume_writing()
                self._writing_paused = False
                self._writable = None

            def _check_writable(self) -> bool:
                conn = self.conn
                writable = not (
                    self.close_sent or self.disconnected or not self.handshake_complete
                    or self.initial_response is not None or self._writing_paused
                    or conn.state is not _OPEN or conn.extensions or conn.expect_continuation_frame
                )
                self._writable = writable or None  # (not kept while it is not)
                return writable

            def send_text(self, data: bytes) -> bool:
                """Write a text frame of `data` now, if the connection is open and
                writable (True); False: send it as a `websocket.send` message."""
                if self._writable is None and not self._check_writable():
                    return False
                size = len(data)
                if size < 126:
                    header = _SHORT[size]
                elif size < 65536:
                    header = _HEADER_16(0x81, 126, size)
                else:
                    header = text_frame_header(size)
                transport: CoalescingTransport = self.transport
                # (False: the transport is closing)
                return transport.write_frame(header, data)

        Coalescing = Direct  # type: ignore[misc]

    Coalescing.__name__ = Coalescing.__qualname__ = f"Coalescing{base.__name__}"
    return Coalescing


_SHORT = [text_frame_header(size) for size in range(126)]


def _asks_again(name: str) -> property:
    """An attribute of uvicorn's protocol that send_text's kept answer rests on: read as
    a plain one (C's attrgetter under the property), set with the kept answer dropped."""
    key = f"_kept_{name}"

    def set_(self: Any, value: Any) -> None:
        self.__dict__[key] = value
        self._writable = None

    return property(operator.attrgetter(key), set_)


def _between_frames(parser: Any) -> bool:
    """Whether the `websockets` parser (a generator) waits for the next frame's first
    byte, rather than for the rest of a frame or of the handshake."""
    inner = parser.gi_yieldfrom
    while inner is not None:
        parser, inner = inner, getattr(inner, "gi_yieldfrom", None)
    return getattr(parser, "__name__", None) == "at_eof"


class _WakingQueue(asyncio.Queue[Any]):
    """uvicorn's queue of a connection's ASGI messages, which wakes RECEIVE's waiter when
    a message is put (by uvicorn or by the frames read directly)."""

    def __init__(self, protocol: Any) -> None:
        super().__init__()
        self._protocol = protocol

    def put_nowait(self, item: Any) -> None:
        super().put_nowait(item)
        waiter = self._protocol._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
