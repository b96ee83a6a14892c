"""server/coalesce.py: the writes of one turn of the loop reach the socket as one."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from server.coalesce import CoalescingTransport, coalescing


class Recorder(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = self.aborted = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed or self.aborted

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 9)}.get(name, default)


async def test_the_writes_of_one_turn_are_one_write_in_their_order() -> None:
    real = Recorder()
    t = CoalescingTransport(real, asyncio.get_running_loop())
    t.write(b"update")
    t.write(b"")
    t.writelines([b"|ack", b"|more"])
    assert real.writes == []  # held until the end of the turn
    await asyncio.sleep(0)
    assert real.writes == [b"update|ack|more"]
    t.write(b"next")
    await asyncio.sleep(0)
    assert real.writes == [b"update|ack|more", b"next"]
    assert t.get_extra_info("peername") == ("127.0.0.1", 9)  # the rest is the real transport's


async def test_close_sends_what_is_held_first_and_abort_drops_it() -> None:
    real = Recorder()
    t = CoalescingTransport(real, asyncio.get_running_loop())
    t.write(b"close frame")
    t.close()
    assert real.writes == [b"close frame"] and real.closed
    await asyncio.sleep(0)
    assert real.writes == [b"close frame"]

    real = Recorder()
    t = CoalescingTransport(real, asyncio.get_running_loop())
    t.write(b"lost")
    t.abort()
    await asyncio.sleep(0)
    assert real.writes == [] and real.aborted


async def test_a_frame_is_held_as_its_header_then_its_data() -> None:
    real = Recorder()
    t = CoalescingTransport(real, asyncio.get_running_loop())
    t.write(b"ack|")
    t.write_frame(b"\x81\x02", b"{}")
    assert real.writes == [] and not t.is_closing()
    await asyncio.sleep(0)
    assert real.writes == [b"ack|\x81\x02{}"]
    real.closed = True
    assert t.is_closing()


async def test_nothing_is_written_to_a_transport_that_is_closing() -> None:
    real = Recorder()
    t = CoalescingTransport(real, asyncio.get_running_loop())
    t.write(b"late")
    real.closed = True  # the peer went away meanwhile
    await asyncio.sleep(0)
    assert real.writes == []


async def test_the_protocol_class_gets_the_coalescing_transport() -> None:
    seen: list[object] = []

    class Base(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            seen.append(transport)

    cls = coalescing(Base)
    assert issubclass(cls, Base) and cls.__name__ == "CoalescingBase"
    cls().connection_made(Recorder())
    assert isinstance(seen[0], CoalescingTransport)


def test_the_server_runs_uvicorns_own_websocket_protocol_coalescing() -> None:
    from uvicorn.config import WS_PROTOCOLS
    from uvicorn.importer import import_from_string

    from server.config import Settings
    from server.main import _uvicorn_config

    config = _uvicorn_config(object(), "127.0.0.1", 0, Settings())
    assert isinstance(config.ws, type) and config.ws.__name__.startswith("Coalescing")
    assert issubclass(config.ws, import_from_string(WS_PROTOCOLS["auto"]))


def test_the_websocket_implementation_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from uvicorn.config import WS_PROTOCOLS
    from uvicorn.importer import import_from_string

    from server.config import Settings
    from server.main import _uvicorn_config

    mp = monkeypatch
    mp.setenv("DAEDALUS_WS_PROTOCOL", "websockets-sansio")
    config = _uvicorn_config(object(), "127.0.0.1", 0, Settings())
    assert isinstance(config.ws, type)
    assert issubclass(config.ws, import_from_string(WS_PROTOCOLS["websockets-sansio"]))
    mp.setenv("DAEDALUS_WS_PROTOCOL", "nope")
    with pytest.raises(ValueError, match="DAEDALUS_WS_PROTOCOL must be one of auto"):
        Settings()


# --- SEND_TEXT: a text frame straight to the transport (websockets-sansio) -------------------


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_a_direct_frame_is_the_frame_websockets_serializes(size: int) -> None:
    from websockets.frames import Frame, Opcode

    from server.coalesce import text_frame_header

    data = b"x" * size
    assert text_frame_header(size) + data == Frame(Opcode.TEXT, data).serialize(mask=False)


# --- a uvicorn server on the protocol the server runs -----------------------------------------


@contextlib.asynccontextmanager
async def _serving(app: Any, protocol: type[asyncio.Protocol] | None = None) -> AsyncIterator[int]:
    """`app` served by uvicorn on the websocket protocol the server runs (`protocol`: that
    class, made by the caller), on a free port of 127.0.0.1: the port."""
    import socket

    import uvicorn

    from server.main import _ws_protocol

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(
        app, host="127.0.0.1", port=port, ws=protocol or _ws_protocol("websockets-sansio"),
        ws_per_message_deflate=False, log_level="warning", lifespan="off",
    ))
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        yield port
    finally:
        server.should_exit = True
        await serving


async def _opened(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A websocket to /ws opened by hand, for frames written as bytes."""
    import base64
    import os

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 101")
    return reader, writer


async def test_frames_sent_directly_reach_a_websocket_client_as_text() -> None:
    """A real uvicorn server on the protocol the server runs: frames written with the
    SEND_TEXT extension arrive as the text frames of the usual path, in order with them;
    while the socket is paused, or once the close is sent, it declines (False)."""
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    from server.coalesce import SEND_TEXT

    payloads = [b'{"a":1}', ('{"big":"' + "\u00e9" * 40_000 + '"}').encode(), b"[]"]
    answers: list[object] = []

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        direct = ws.scope["extensions"][SEND_TEXT]
        answers.extend(direct(p) for p in payloads)
        await ws.send_text("the usual way")
        protocol = direct.__self__
        protocol.pause_writing()
        answers.append(direct(b"paused"))
        protocol.resume_writing()
        answers.append(direct(b"resumed"))
        await ws.receive_text()
        await ws.close()
        answers.append(direct(b"closed"))

    app = Starlette(routes=[WebSocketRoute("/ws", endpoint)])
    async with _serving(app) as port, connect(f"ws://127.0.0.1:{port}/ws", compression=None) as client:
        got = [await client.recv() for _ in range(5)]
        await client.send("bye")
        with pytest.raises(ConnectionClosed):
            await client.recv()
    assert got == [p.decode() for p in payloads] + ["the usual way", "resumed"]
    assert answers == [True, True, True, False, True, False]


async def test_direct_frames_are_declined_once_the_client_closed_or_left() -> None:
    """send_text keeps its answer about the connection while nothing it rests on changes:
    uvicorn's flags set (a close sent, the client gone) have it ask again, and a close
    the client sent (the connection closing) or the client gone are declined."""
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket
    from websockets.asyncio.client import connect

    from server.coalesce import SEND_TEXT

    answers: list[object] = []
    done = asyncio.Event()

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        direct = ws.scope["extensions"][SEND_TEXT]
        answers.append(direct(b'"open"'))  # (its answer kept from here on)
        protocol = direct.__self__
        for flag in ("close_sent", "disconnected"):  # (uvicorn's, set by hand)
            setattr(protocol, flag, True)
            answers.append(direct(b'"declined"'))
            setattr(protocol, flag, False)
        answers.append(direct(b'"open again"'))
        assert (await ws.receive())["type"] == "websocket.disconnect"  # the client's close
        answers.append(direct(b'"after the close"'))
        protocol.connection_lost(None)
        answers.append(direct(b'"gone"'))
        done.set()

    app = Starlette(routes=[WebSocketRoute("/ws", endpoint)])
    async with _serving(app) as port:
        async with connect(f"ws://127.0.0.1:{port}/ws", compression=None) as client:
            assert [await client.recv(), await client.recv()] == ['"open"', '"open again"']
        await asyncio.wait_for(done.wait(), 5)
    assert answers == [True, False, False, True, False, False]


# --- RECEIVE: messages straight from the protocol (websockets-sansio) ------------------------


async def test_messages_come_through_receive_in_order_whichever_parser_read_them() -> None:
    """A real uvicorn server on the protocol the server runs, and a client writing frames
    chunk by chunk: whole text frames are read directly, anything else (a ping, fragments,
    a frame split across chunks, binary, a long frame) by the `websockets` parser, and the
    app's RECEIVE gets every message in the order sent; invalid UTF-8 closes the connection
    with 1007 as before, and RECEIVE then says the client is gone (None)."""
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket
    from websockets.frames import Frame, Opcode

    from server.coalesce import RECEIVE
    from server.main import _ws_protocol

    protocol = _ws_protocol("websockets-sansio")
    direct_reads: list[list[str]] = []
    simple_frames = protocol._simple_frames

    def recording(self: Any, data: bytes) -> list[str] | None:
        texts = simple_frames(self, data)
        if texts is not None:
            direct_reads.append(texts)
        return texts

    got: list[object] = []
    arrived = asyncio.Event()

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        receive = ws.scope["extensions"][RECEIVE]
        while True:
            data = await receive()
            got.append(data)
            arrived.set()
            if data is None:
                assert await receive() is None  # and so on
                return

    app = Starlette(routes=[WebSocketRoute("/ws", endpoint)])
    protocol._simple_frames = recording  # type: ignore[attr-defined]
    try:
        async with _serving(app, protocol) as port:
            reader, writer = await _opened(port)

            def text(data: str, fin: bool = True) -> bytes:
                return Frame(Opcode.TEXT, data.encode(), fin=fin).serialize(mask=True)

            long = "y" * 70_000
            split = text("g" * 300)
            chunks = [
                text("a"),
                text("b") + text("c"),
                Frame(Opcode.PING, b"p").serialize(mask=True) + text("d"),
                text("e", fin=False) + Frame(Opcode.CONT, b"f").serialize(mask=True),
                split[:100],
                split[100:],
                text("h\u00e9"),
                Frame(Opcode.BINARY, b"\x00\x01").serialize(mask=True),
                text(long),
                text("i"),
                Frame(Opcode.TEXT, b"\xff\xfe").serialize(mask=True),
            ]
            expected: list[object] = [
                "a", "b", "c", "d", "ef", "g" * 300, "h\u00e9", b"\x00\x01", long, "i", None,
            ]
            for chunk in chunks:
                arrived.clear()
                writer.write(chunk)
                await writer.drain()
                await asyncio.sleep(0.05)
            async with asyncio.timeout(5):
                while len(got) < len(expected):
                    arrived.clear()
                    await arrived.wait()
            answers = await asyncio.wait_for(reader.read(), 5)  # to the server's close
            writer.close()
    finally:
        protocol._simple_frames = simple_frames  # type: ignore[attr-defined]
    assert got == expected
    assert direct_reads == [["a"], ["b", "c"], ["h\u00e9"], ["i"]]
    assert b"\x8a\x01p" in answers  # the pong
    assert answers.endswith(b"\x88\x02\x03\xef")  # close 1007: invalid UTF-8


def test_the_websockets_parser_is_between_frames_only_at_a_frame_boundary() -> None:
    from websockets.frames import Frame, Opcode
    from websockets.protocol import Protocol, Side

    from server.coalesce import _between_frames

    p = Protocol(Side.SERVER)
    assert _between_frames(p.parser)
    frame = Frame(Opcode.TEXT, b"x" * 300).serialize(mask=True)
    for cut in (1, 2, 4, 6, 100):  # in the header, the mask, the payload
        p.receive_data(frame[:cut])
        assert not _between_frames(p.parser)
        p.receive_data(frame[cut:])
        assert _between_frames(p.parser) and not p.reader.buffer
    assert [e.data for e in p.events_received()] == [b"x" * 300] * 5


# --- RECEIVE against the websockets parser, on random traffic ------------------------------


class _Server:
    """A uvicorn server on the protocol the server runs, in a thread of its own, whose
    endpoint records every message RECEIVE gives, by connection (`?c=N`)."""

    def __init__(self) -> None:
        import socket
        import threading

        import uvicorn
        from starlette.applications import Starlette
        from starlette.routing import WebSocketRoute
        from starlette.websockets import WebSocket

        from server.coalesce import RECEIVE
        from server.main import _ws_protocol

        self.got: dict[str, list[object]] = {}
        self.changed = threading.Condition()

        async def endpoint(ws: WebSocket) -> None:
            await ws.accept()
            key = ws.query_params["c"]
            receive = ws.scope["extensions"][RECEIVE]
            while True:
                data = await receive()
                with self.changed:
                    self.got.setdefault(key, []).append(data)
                    self.changed.notify_all()
                if data is None:
                    return

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(
            Starlette(routes=[WebSocketRoute("/ws", endpoint)]), host="127.0.0.1",
            port=self.port, ws=_ws_protocol("websockets-sansio"),
            ws_per_message_deflate=False, log_level="warning", lifespan="off",
        ))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            threading.Event().wait(0.01)

    def messages(self, key: str, count: int, timeout: float = 5.0) -> list[object]:
        with self.changed:
            self.changed.wait_for(lambda: len(self.got.get(key, [])) >= count, timeout)
            return list(self.got.get(key, []))

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def receiving() -> Any:
    server = _Server()
    yield server
    server.stop()


def _message_frames() -> Any:
    """Strategy: (the messages a client sends, each as str or bytes; its frames, masked:
    text and binary, whole or in fragments, some with a ping before them)."""
    from hypothesis import strategies as st
    from websockets.frames import Frame, Opcode

    sizes = st.one_of(st.integers(0, 130), st.sampled_from([125, 126, 127, 65535]), st.integers(131, 70_000))

    @st.composite
    def one(draw: Any) -> tuple[object, list[bytes]]:
        size = draw(sizes)  # the payload's bytes
        data: object
        if draw(st.integers(0, 3)) == 0:  # a quarter binary
            start = draw(st.integers(0, 255))
            data = payload = (bytes(range(256)) * (size // 256 + 2))[start : start + size]
        else:  # text of one- to four-byte characters
            chars = draw(st.sampled_from(["a", "é", "€", "𝄞", 'a{"}é']))
            reps = size // len(chars.encode())
            data = chars * reps + "x" * (size - reps * len(chars.encode()))
            payload = data.encode()
        # A quarter in fragments cut anywhere in the payload (in a character too: the
        # message is whole).
        cuts: list[int] = []
        if size > 1 and draw(st.integers(0, 3)) == 0:
            cuts = sorted(set(draw(st.lists(st.integers(1, size - 1), min_size=1, max_size=2))))
        parts = [payload[a:b] for a, b in zip([0, *cuts], [*cuts, size], strict=True)]
        frames = []
        if draw(st.integers(0, 3)) == 0:
            frames.append(Frame(Opcode.PING, b"p").serialize(mask=True))
        for i, part in enumerate(parts):
            opcode = (Opcode.BINARY if isinstance(data, bytes) else Opcode.TEXT) if i == 0 else Opcode.CONT
            frames.append(Frame(opcode, part, fin=i == len(parts) - 1).serialize(mask=True))
        return data, frames

    return st.lists(one(), min_size=1, max_size=8)


def test_receive_gives_what_the_websockets_parser_would_on_random_traffic(receiving: _Server) -> None:
    """Messages of every length class (7-bit, 16-bit and 64-bit lengths), text (one- to
    four-byte UTF-8) and binary, whole or fragmented, with pings between them, written in
    chunks cut anywhere (in a header, a mask, a payload, between frames): RECEIVE gives
    every message, in order, whichever parser read it."""
    import base64
    import itertools
    import os
    import socket
    import time

    from hypothesis import given, settings
    from hypothesis import strategies as st

    ids = itertools.count()

    @settings(max_examples=60, deadline=None)
    @given(messages=_message_frames(), data=st.data())
    def check(messages: list[tuple[object, list[bytes]]], data: Any) -> None:
        frames = [f for _, fs in messages for f in fs]
        stream = b"".join(frames)
        # Chunks cut between frames (each boundary, one time in two) and anywhere (up to
        # three cuts: in a header, a mask, a payload).
        boundaries = list(itertools.accumulate(len(f) for f in frames))[:-1]
        cuts = sorted(
            {b for b in boundaries if data.draw(st.booleans())}
            | set(data.draw(st.lists(st.integers(1, max(1, len(stream) - 1)), max_size=3)))
        )
        chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
        key = str(next(ids))
        with socket.create_connection(("127.0.0.1", receiving.port)) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            handshake = (
                f"GET /ws?c={key} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            )
            sock.sendall(handshake.encode())
            answer = b""
            while b"\r\n\r\n" not in answer:
                answer += sock.recv(4096)
            assert answer.startswith(b"HTTP/1.1 101"), answer
            for chunk in chunks:
                sock.sendall(chunk)
                time.sleep(0.002)  # each chunk a read of its own, mostly
            got = receiving.messages(key, len(messages))
        assert got[: len(messages)] == [m for m, _ in messages]

    check()



async def test_texts_read_directly_pause_reading_while_the_app_does_not_take_them() -> None:
    """Texts read directly and kept for RECEIVE hold the socket's reading as uvicorn's
    queue does: a client writing frame after frame while the app takes none gets one
    read's worth kept and reading paused (the rest waits in the socket's buffers); the
    app then gets every one in order, and reading resumes once it has taken them all.
    A text that comes while the app waits for one does not pause reading."""
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket
    from websockets.frames import Frame, Opcode

    from server.coalesce import RECEIVE

    first_taken, go = asyncio.Event(), asyncio.Event()
    seen: dict[str, Any] = {}
    got: list[object] = []

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        receive = ws.scope["extensions"][RECEIVE]
        protocol = receive.__self__
        got.append(await receive())
        seen["paused_after_first"] = protocol.read_paused
        first_taken.set()
        await go.wait()
        seen["paused"] = protocol.read_paused
        seen["kept"] = len(protocol._texts)
        while len(got) < 41:
            got.append(await receive())
        seen["paused_at_end"] = protocol.read_paused

    app = Starlette(routes=[WebSocketRoute("/ws", endpoint)])
    async with _serving(app) as port:
        _, writer = await _opened(port)
        writer.write(Frame(Opcode.TEXT, b"0").serialize(mask=True))
        await asyncio.wait_for(first_taken.wait(), 5)
        for i in range(1, 41):  # each in a read of its own
            writer.write(Frame(Opcode.TEXT, str(i).encode()).serialize(mask=True))
            await writer.drain()
            await asyncio.sleep(0.005)
        go.set()
        async with asyncio.timeout(5):
            while len(got) < 41:
                await asyncio.sleep(0.01)
        writer.close()
    assert got == [str(i) for i in range(41)]
    assert seen["paused_after_first"] is False
    assert seen["paused"] is True and 1 <= seen["kept"] <= 2
    assert seen["paused_at_end"] is False
