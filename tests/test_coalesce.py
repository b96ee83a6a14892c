"""server/coalesce.py: the writes of one turn of the loop reach the socket as one."""

from __future__ import annotations

import asyncio
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


async def test_frames_sent_directly_reach_a_websocket_client_as_text() -> None:
    """A real uvicorn server on the protocol the server runs: frames written with the
    SEND_TEXT extension arrive as the text frames of the usual path, in order with them;
    while the socket is paused, or once the close is sent, it declines (False)."""
    import socket

    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    from server.coalesce import SEND_TEXT
    from server.main import _ws_protocol

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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(
        app, host="127.0.0.1", port=port, ws=_ws_protocol("websockets-sansio"),
        ws_per_message_deflate=False, log_level="warning", lifespan="off",
    ))
    serving = asyncio.create_task(server.serve())
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        async with connect(f"ws://127.0.0.1:{port}/ws", compression=None) as client:
            got = [await client.recv() for _ in range(5)]
            await client.send("bye")
            with pytest.raises(ConnectionClosed):
                await client.recv()
    finally:
        server.should_exit = True
        await serving
    assert got == [p.decode() for p in payloads] + ["the usual way", "resumed"]
    assert answers == [True, True, True, False, True, False]
