"""Hostile and malformed input at the server's edge: every bad frame or body gets a clear
error, the connection goes on, and the log gets one info line, never a traceback."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import AsyncIterator, Iterator, MutableMapping
from typing import Any

import httpx
import pytest
import structlog
import websockets
import websockets.asyncio.client

from projections.contract import SPECTATOR
from server.config import Settings
from server.main import EmbeddedServer
from tests import toygame
from tests.wsutil import Raw, new_match

toygame.install()

DEEP = '{"type":"ping","x":' + "[" * 976 + "]" * 976 + "}"


@pytest.fixture
async def srv() -> AsyncIterator[EmbeddedServer]:
    async with EmbeddedServer(Settings(rate=500, burst=1000)) as s:
        yield s


class Logged:
    """What the server logged: structlog events and stdlib records (uvicorn's included)."""

    def __init__(self, events: list[MutableMapping[str, Any]], records: list[logging.LogRecord]) -> None:
        self.events = events
        self.records = records

    def tracebacks(self) -> list[str]:
        found = [r.getMessage() for r in self.records if r.exc_info or r.levelno >= logging.ERROR]
        found += [str(e) for e in self.events if "exc_info" in e or "exception" in e
                  or e.get("log_level") in ("error", "critical")]
        return found

    def codes(self) -> list[str]:
        return [e["code"] for e in self.events if e.get("event") == "client_error"]


@pytest.fixture
def logged(caplog: pytest.LogCaptureFixture) -> Iterator[Logged]:
    caplog.set_level(logging.INFO)
    with structlog.testing.capture_logs() as events:
        yield Logged(events, caplog.records)


async def test_deep_nesting_in_a_frame_is_bad_json_and_the_connection_goes_on(
    srv: EmbeddedServer, logged: Logged
) -> None:
    """Failed before: a RecursionError in the handler closed the connection (1000) with
    no error frame and a traceback in the log."""
    c = await Raw.open(srv.ws_url)
    for frame in (DEEP, DEEP.encode(), '{"type":"command","id":"d","command":' + "[" * 5000 + "]" * 5000 + "}"):
        await c.send(frame)
        err = await c.recv()
        assert err["type"] == "error" and err["code"] == "bad_json", err
    await c.send({"type": "ping"})
    assert (await c.recv())["type"] == "pong"
    await c.close()
    assert logged.tracebacks() == []
    assert logged.codes() == ["bad_json"] * 3


async def test_a_rate_limited_deep_frame_is_answered() -> None:
    """The id of a dropped frame is read by a decoder of its own (`command_id`)."""
    async with EmbeddedServer(Settings(rate=0.01, burst=1)) as s:
        c = await Raw.open(s.ws_url)
        await c.send({"type": "ping"})
        assert (await c.recv())["type"] == "pong"
        await c.send('{"type":"command","id":"q","command":' + "[" * 3000 + "]" * 3000 + "}")
        err = await c.recv()
        assert err["code"] == "rate_limited" and err["id"] is None
        await c.close()


async def test_deep_nesting_and_invalid_utf8_in_http_bodies_are_bad_json(
    srv: EmbeddedServer, logged: Logged
) -> None:
    """Failed before: both answered 500."""
    m, _ = await new_match(srv.url, "toy", names=())
    deep = '{"game":"toy","options":' + "[" * 976 + "]" * 976 + "}"
    async with httpx.AsyncClient(base_url=srv.url) as http:
        for path in ("/matches", f"/matches/{m}/seats"):
            for body in (deep.encode(), b'{"game":"toy","name":"\xff\xfe"}', b"\xc3(", b"[" * 60000):
                r = await http.post(path, content=body)
                assert r.status_code == 400, (path, body[:20], r.status_code)
                assert r.json()["error"]["code"] == "bad_json", r.json()
        r = await http.post(f"/matches/{m}/seats", json={"name": "Ann"})
        assert r.status_code == 201, "nothing else changed"
    assert logged.tracebacks() == []
    assert logged.codes() == ["bad_json"] * 8


async def test_binary_frames_are_read_as_json_and_invalid_utf8_in_one_is_bad_json(
    srv: EmbeddedServer, logged: Logged
) -> None:
    """Failed before: a binary frame that is not UTF-8 raised UnicodeDecodeError in the
    handler (a traceback, the connection gone)."""
    c = await Raw.open(srv.ws_url)
    await c.send(b'{"type":"ping"}')
    assert (await c.recv())["type"] == "pong"
    await c.send(b'{"type":"hello","match":"\xff"}')
    assert (await c.recv())["code"] == "bad_json"
    await c.send(b"\x00\x01\x02")
    assert (await c.recv())["code"] == "bad_json"
    await c.send({"type": "ping"})
    assert (await c.recv())["type"] == "pong"
    await c.close()
    assert logged.tracebacks() == []


async def test_client_errors_are_one_info_line_each(srv: EmbeddedServer, logged: Logged) -> None:
    """Malformed frames, bodies, paths and methods: an answer to the client, an info
    line with the code in the log, no traceback."""
    c = await Raw.open(srv.ws_url)
    for frame, code in (
        ("{nope", "bad_json"),
        ('{"type":"dance"}', "bad_message"),
        ('{"type":"hello","match":7}', "bad_message"),
        ("x" * (17 * 1024), "frame_too_large"),
    ):
        await c.send(frame)
        assert (await c.recv())["code"] == code
    await c.close()
    async with httpx.AsyncClient(base_url=srv.url) as http:
        assert (await http.post("/matches", content=b"{nope")).status_code == 400
        assert (await http.post("/matches", json=[1])).status_code == 400
        assert (await http.post("/matches", content=b"x" * (65 * 1024))).status_code == 413
        assert (await http.get("/nowhere")).status_code == 404
        assert (await http.delete("/matches")).status_code == 405
    await asyncio.sleep(0.05)
    assert logged.tracebacks() == []
    info = [e for e in logged.events if e.get("event") == "client_error"]
    assert all(e["log_level"] == "info" for e in info)
    assert [e["code"] for e in info] == [
        "bad_json", "bad_message", "bad_message", "frame_too_large",
        "bad_json", "bad_request", "too_large", "not_found", "method_not_allowed",
    ]


async def test_a_command_id_reused_for_another_command_is_refused(srv: EmbeddedServer) -> None:
    """Failed before: the second command was acked as a duplicate of the first."""
    m, (t0, t1) = await new_match(srv.url, "toy", {"turn_ms": 60000})
    a, b = await Raw.open(srv.ws_url), await Raw.open(srv.ws_url)
    await a.hello(m, t0)
    await b.hello(m, t1)
    first = await a.command("c1", {"type": "add", "n": 1})
    assert first["type"] == "ack" and not first["duplicate"]
    reused = await a.command("c1", {"type": "add", "n": 2})
    assert reused["type"] == "error" and reused["code"] == "id_reused" and reused["id"] == "c1"
    assert "c1" in reused["message"]
    again = await a.command("c1", {"type": "add", "n": 1})
    assert again == {**first, "duplicate": True}, "the same command is still a duplicate"
    rej = await a.command("c2", {"type": "add", "n": 1})
    assert rej["type"] == "rejected" and rej["code"] == "not_your_turn"
    assert (await a.command("c2", {"type": "add", "n": 3}))["code"] == "id_reused"
    assert (await b.command("c1", {"type": "add", "n": 3}))["type"] == "ack", "ids are per seat"
    async with httpx.AsyncClient(base_url=srv.url) as http:
        state = (await http.get(f"/matches/{m}")).json()
    assert state["game_state"]["totals"] == [1, 3], "the first outcome stands"
    for c in (a, b):
        await c.close()


async def test_http_errors_are_json_and_create_match_reads_its_body_strictly(srv: EmbeddedServer) -> None:
    """Failed before: 404 and 405 were plain text, `"options": []` was taken for no
    options, and `gatekeeping` (a name the CLI accepts) was an unknown game."""
    async with httpx.AsyncClient(base_url=srv.url) as http:
        for r, status, code in (
            (await http.get("/nowhere"), 404, "not_found"),
            (await http.get("/matches"), 405, "method_not_allowed"),
            (await http.put("/matches/abc/seats"), 405, "method_not_allowed"),
            (await http.get("/matches/abc"), 404, "unknown_match"),
        ):
            assert r.status_code == status and r.headers["content-type"] == "application/json"
            assert r.json()["error"]["code"] == code and r.json()["error"]["message"], r.text
        assert "POST" in (await http.get("/matches")).headers["allow"]
        for options in ([], "", 0, False, [1]):
            r = await http.post("/matches", json={"game": "toy", "options": options})
            assert r.status_code == 400 and r.json()["error"]["code"] == "bad_request", options
        assert (await http.post("/matches", json={"game": "toy", "options": None})).status_code == 201
        r = await http.post("/matches", json={"game": "five-card-trick", "options": {"clock_scale": 1e300}})
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_options"
        assert "clock_scale" in r.json()["error"]["message"]
        r = await http.post("/matches", json={"game": "gatekeeping"})
        assert r.status_code == 201, r.text
        assert (r.json()["game"], r.json()["variant"]) == ("keys-to-success", "gatekeeping")
        r = await http.post("/matches", json={"game": "gatekeeping", "variant": "nope"})
        assert r.status_code == 400 and r.json()["error"]["code"] == "unknown_game"


async def test_the_home_page_names_the_server_its_games_and_the_docs(srv: EmbeddedServer) -> None:
    """Failed before: `GET /` was a 404."""
    async with httpx.AsyncClient(base_url=srv.url) as http:
        r = await http.get("/")
        games = (await http.get("/games")).json()["games"]
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "Daedalus" in r.text and "docs/protocol.md" in r.text and "/ws" in r.text
    for g in games:
        assert g["name"] in r.text and g["title"] in r.text


async def test_a_refused_origin_is_http_403(srv: EmbeddedServer) -> None:
    """What docs/protocol.md says: refused before the handshake completes, as HTTP 403."""
    with pytest.raises(websockets.InvalidStatus) as info:
        await Raw.open(srv.ws_url, origin="https://evil.example")
    assert info.value.response.status_code == 403
    c = await Raw.open(srv.ws_url, origin="http://localhost:5173")
    await c.send({"type": "ping"})
    assert (await c.recv())["type"] == "pong"
    await c.close()


async def test_a_text_frame_that_is_not_utf8_closes_1007_with_no_traceback(
    srv: EmbeddedServer, logged: Logged
) -> None:
    """Failed before: uvicorn logged the UnicodeDecodeError with its traceback."""
    c = await Raw.open(srv.ws_url)
    await c.ws.send(b'{"type":"ping","x":"\xff"}', text=True)
    with pytest.raises(websockets.ConnectionClosed) as info:
        await c.recv()
    assert info.value.rcvd is not None and info.value.rcvd.code == 1007
    await asyncio.sleep(0.05)
    assert logged.tracebacks() == []
    assert "bad_utf8" in logged.codes()


async def test_a_client_that_stops_reading_is_closed_with_4008_after_what_was_sent() -> None:
    """What docs/protocol.md says of a reader that stops: once the network's buffers are
    full and `send_queue` more updates wait, the server sends it nothing more and closes
    with 4008; reading again, the client gets the updates already sent, without a gap,
    then the close, and resumes from the last one."""
    async with EmbeddedServer(Settings(rate=1e6, burst=10**6, send_queue=16)) as srv:
        m, _ = await new_match(srv.url, "toy", {"turn_ms": 2})  # a tick (an update) every 2 ms
        sock = cramped_socket(srv)
        slow = await websockets.asyncio.client.connect(srv.ws_url, sock=sock, max_queue=1, close_timeout=0.5)
        await slow.send(json.dumps({"type": "hello", "match": m, "since": "now"}))
        runner = await srv.app.state.hub.runner(m)
        loop = asyncio.get_running_loop()
        start = loop.time()
        while not any(s.queue.overflowed for s in runner.subscribers):
            assert loop.time() - start < 60, "the queue of a reader that stopped overflows"
            await asyncio.sleep(0.2)
        seqs = []
        with pytest.raises(websockets.ConnectionClosed) as info:
            while True:
                msg = json.loads(await asyncio.wait_for(slow.recv(), 10))
                if msg["type"] == "update":
                    seqs.append(msg["seq"])
        assert info.value.rcvd is not None and info.value.rcvd.code == 4008
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))) and len(seqs) > 16
        assert not runner.subscribers or all(s.queue.overflowed for s in runner.subscribers)
        again = await Raw.open(srv.ws_url)
        welcome = await again.hello(m, since=seqs[-1])
        assert welcome["type"] == "welcome" and welcome["seq"] >= seqs[-1]
        await again.close()


async def test_a_client_that_asks_and_never_reads_the_answers_is_closed_as_too_slow() -> None:
    """Failed before: the answers to a client's own messages (a `view` above all, a few
    kilobytes each; pongs, errors) were queued without bound behind a socket it no longer
    read, so a client asking for its view twenty times a second and reading nothing grew
    the server's memory for as long as it stayed. Its answers now count as its updates
    do: `send_queue` of them waiting, and it is closed with 4008."""
    async with EmbeddedServer(Settings(rate=1e6, burst=10**6, send_queue=16)) as srv:
        m, tokens = await new_match(srv.url, "toy", {"turn_ms": 600_000})
        sock = cramped_socket(srv)
        slow = await websockets.asyncio.client.connect(srv.ws_url, sock=sock, max_queue=1, close_timeout=0.5)
        await slow.send(json.dumps({"type": "hello", "match": m, "token": tokens[0], "updates": "events"}))
        assert json.loads(await slow.recv())["type"] == "welcome"  # then it reads no more
        runner = await srv.app.state.hub.runner(m)
        loop = asyncio.get_running_loop()
        start = loop.time()
        queued = 0
        # (until its queue overflows, and the connection ends: it is no subscriber then)
        while runner.subscribers and not any(s.queue.overflowed for s in runner.subscribers):
            assert loop.time() - start < 30, f"still open with {queued} answers queued"
            for _ in range(50):
                await slow.send('{"type":"view"}')
                await slow.send('{"type":"ping"}')
            await asyncio.sleep(0.02)
            queued = max((len(s.queue._items) for s in runner.subscribers), default=0)
            assert queued <= 17, "the answers waiting are bounded as the updates are"
        with pytest.raises(websockets.ConnectionClosed) as info:
            while True:
                await asyncio.wait_for(slow.recv(), 10)
        assert info.value.rcvd is not None and info.value.rcvd.code == 4008


def test_the_server_speaks_http_with_h11_whatever_else_is_installed() -> None:
    """uvicorn's `auto` takes httptools where it is installed, which reads a request's
    line and headers without a bound: the server names h11 itself."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from server.main import _uvicorn_config

    config = _uvicorn_config(object(), "127.0.0.1", 0, Settings())
    assert isinstance(config.http, type) and issubclass(config.http, H11Protocol)


async def test_a_request_whose_headers_never_end_is_cut_off_early() -> None:
    """A client sending one endless header is refused after a few KiB, not read into the
    server's memory (with uvicorn's httptools protocol, 200 MB of it were)."""
    async with EmbeddedServer() as srv:
        _reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
        writer.write(b"GET /games HTTP/1.1\r\nHost: x\r\nX-Long: ")
        sent = 0
        with pytest.raises(ConnectionError):
            for _ in range(64):  # up to 64 MiB
                writer.write(b"a" * (1 << 20))
                await asyncio.wait_for(writer.drain(), 10)
                sent += 1
        assert sent < 8, f"{sent} MiB of a header were taken"
        writer.close()


async def _closed_after(port: int, data: bytes, then: bytes = b"", limit: float = 10.0) -> float:
    """Seconds until the server closes a connection that sent `data` (and, once that was
    answered, `then`); its answers are read as they come."""
    loop = asyncio.get_running_loop()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    start = loop.time()
    writer.write(data)
    if then:
        await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), limit)  # the answer's head
        start = loop.time()
        writer.write(then)
    try:
        while await asyncio.wait_for(reader.read(65536), limit):
            pass
    finally:
        writer.close()
    return loop.time() - start


async def test_a_request_whose_line_and_headers_do_not_come_in_time_is_closed() -> None:
    """Failed before: a connection that said nothing, or half a request line, or began a
    second request and stopped, stayed open as long as its client liked (a few thousand of
    them use up the server's file descriptors). Each is closed `header_timeout` after the
    connection or the request's first byte; a request that takes its time but comes whole
    within it is answered, and a websocket lives on past it."""
    async with EmbeddedServer(Settings(header_timeout=0.5)) as srv:
        assert 0.4 < await _closed_after(srv.port, b"") < 3
        assert 0.4 < await _closed_after(srv.port, b"GET /ga") < 3
        head = b"GET /games HTTP/1.1\r\nHost: x\r\n\r\n"
        assert 0.4 < await _closed_after(srv.port, head, then=b"GET /") < 3
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
        writer.write(b"GET /games HTTP/1.1\r\n")
        await asyncio.sleep(0.3)
        writer.write(b"Host: x\r\nConnection: close\r\n\r\n")
        assert (await asyncio.wait_for(reader.read(), 5)).startswith(b"HTTP/1.1 200")
        writer.close()
        raw = await Raw.open(srv.ws_url)
        await asyncio.sleep(1.2)
        await raw.send({"type": "ping"})
        assert (await raw.recv(timeout=5))["type"] == "pong"
        await raw.close()


def _rss_mb() -> int:
    with open("/proc/self/status") as status:
        return int(status.read().split("VmRSS:")[1].split()[0]) // 1024


async def test_a_body_over_64_kib_is_refused_before_it_is_read_whole() -> None:
    """Failed before: the server read a request's whole body before it looked at its size,
    so a 300 MB body grew it by 300 MB before the 413. A body declared too long is refused
    at once, one sent in chunks as soon as it passes 64 KiB, and the rest is never kept;
    a body that trickles in is cut off after `header_timeout` (408)."""
    head = b"POST /matches HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    async with EmbeddedServer(Settings(header_timeout=0.5)) as srv:
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
        writer.write(head + b"Content-Length: %d\r\n\r\n" % (300 << 20))  # and no body
        answer = await asyncio.wait_for(reader.read(), 5)
        assert answer.startswith(b"HTTP/1.1 413") and b'"too_large"' in answer
        writer.close()

        before = _rss_mb()
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
        writer.write(head + b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (1 << 20, b" " * (1 << 20))
        with contextlib.suppress(ConnectionError, TimeoutError):
            for _ in range(200):
                writer.write(chunk)
                await asyncio.wait_for(writer.drain(), 5)
        answer = b""
        with contextlib.suppress(ConnectionError):  # (the 413, then a reset: more was sent)
            answer = await asyncio.wait_for(reader.read(), 5)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert _rss_mb() - before < 50, "the body's rest is not kept"
        writer.close()

        reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
        writer.write(head + b"Content-Length: 100\r\n\r\n{\"game\"")
        answer = await asyncio.wait_for(reader.read(), 5)
        assert answer.startswith(b"HTTP/1.1 408") and b'"request_timeout"' in answer
        writer.close()


async def test_unknown_fields_in_http_bodies_are_refused_as_in_every_message(
    srv: EmbeddedServer,
) -> None:
    """Failed before: a misspelt field (`varient`) was ignored and the match created with
    the default variant, the way a misspelt seat (`sit`) claimed the first free one."""
    async with httpx.AsyncClient(base_url=srv.url) as http:
        r = await http.post("/matches", json={"game": "five-card-trick", "varient": "final"})
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_request"
        assert "'varient'" in r.json()["error"]["message"]
        assert "game, variant, options" in r.json()["error"]["message"]
        m = (await http.post("/matches", json={"game": "toy"})).json()["match"]
        r = await http.post(f"/matches/{m}/seats", json={"name": "Ann", "sit": 1})
        assert r.status_code == 400 and "'sit'" in r.json()["error"]["message"]
        assert (await http.get(f"/matches/{m}")).json()["seats"] == [
            {"seat": 0, "name": None}, {"seat": 1, "name": None},
        ]
        r = await http.post(f"/matches/{m}/seats", json={"name": "Ann", "seat": 1})
        assert r.status_code == 201 and r.json()["seat"] == 1, r.text


def catch_up_made(sub: Any) -> int | None:
    """How many frames the catch-up waiting in a subscriber's queue has made (None:
    none waits)."""
    for item in sub.queue._items:
        frame = getattr(item, "gi_frame", None)
        if frame is not None:
            return int(frame.f_locals["number"])
    return None


async def long_match(srv: EmbeddedServer, rounds: int = 300) -> str:
    """A finished Five-Card Trick of `rounds` rounds, played through the server's hub."""
    m, _ = await new_match(srv.url, "five-card-trick", {"rounds": rounds, "max_rounds": rounds})
    runner = await srv.app.state.hub.runner(m)
    for r in range(1, rounds + 1):
        for seat in (0, 1):
            done = await runner.submit(
                kind="command", seat=seat, key=f"c:{seat}:{r}", cid=f"{r}",
                body={"type": "submit", "round": r, "actions": ["score", "grow"], "block": None, "items": []},
            )
            assert done is not None and done.outcome.rejection is None
    assert runner.current.ended
    return m


def cramped_socket(srv: EmbeddedServer) -> socket.socket:
    """A client socket connected to `srv` with a small receive buffer."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", srv.port))
    return sock


def server_side(srv: EmbeddedServer, sock: socket.socket) -> Any | None:
    """The server's protocol of the connection `sock` made (None: not accepted yet)."""
    port = sock.getsockname()[1]
    found = [c for c in srv._server.server_state.connections if c.client and c.client[1] == port]
    return found[0] if found else None


async def cramp(srv: EmbeddedServer, sock: socket.socket) -> Any:
    """The server's protocol of `sock`'s connection, its socket given a small send
    buffer: the kernel would take megabytes into it first (loopback grows a send buffer
    up to tcp_wmem's 4 MB), as a congested network would not."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while (theirs := server_side(srv, sock)) is None:
        assert loop.time() - start < 5, "the connection was not accepted"
        await asyncio.sleep(0.01)
    theirs.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
    return theirs


async def hog(srv: EmbeddedServer, match: str) -> Any:
    """A spectator that asks for the whole of `match` and reads nothing, on a cramped
    connection."""
    sock = cramped_socket(srv)
    client = await websockets.asyncio.client.connect(srv.ws_url, sock=sock, max_queue=1, max_size=None)
    client.theirs = await cramp(srv, sock)
    await client.send(json.dumps({"type": "hello", "match": match, "since": 0}))
    return client


async def test_spectators_that_ask_for_a_long_match_and_read_nothing_hold_little() -> None:
    """Failed before: every update of a catch-up was made, each with the view, and
    queued at the hello, so a client saying hello with "since": 0 to a long match on
    many connections and reading nothing grew the server by the match's whole stream a
    connection (a hundred such spectators of a 1,000-round Five-Card Trick: 700 MB). Now
    each catch-up is made as the socket takes it: a connection that reads nothing holds
    what its socket's buffers hold."""
    async with EmbeddedServer(Settings(rate=1e6, burst=10**6)) as srv:
        m = await long_match(srv)
        hub = srv.app.state.hub
        streams = (await hub.runner(m)).streams
        total = streams.length(SPECTATOR)
        assert total > 600 and len(streams.view_json(SPECTATOR)) * total > 1_500_000  # views of ~3 KB
        hogs = [await hog(srv, m) for _ in range(8)]
        await asyncio.sleep(1.0)
        runner = await hub.runner(m)  # (the finished match, let go of meanwhile, loaded again)
        made = [catch_up_made(s) for s in runner.subscribers]
        assert len(made) == 8 and all(n is not None and n < total // 3 for n in made), (made, total)
        # a client that reads gets the whole stream, in order
        reader = await websockets.asyncio.client.connect(srv.ws_url, max_size=None)
        await reader.send(json.dumps({"type": "hello", "match": m, "since": 0}))
        welcome = json.loads(await reader.recv())
        seqs = [json.loads(await reader.recv())["seq"] for _ in range(total)]
        assert welcome["seq"] == total and seqs == list(range(1, total + 1))
        await reader.close()
        for client in hogs:
            client.transport.abort()


async def test_the_server_stops_while_a_client_that_said_close_reads_nothing() -> None:
    """Failed before (websockets.exceptions.InvalidState out of uvicorn's shutdown, which
    then skipped the rest of it): uvicorn sends every connection a close frame when the
    server stops, and `websockets` refuses one to a connection whose closing handshake
    has begun, as it has when the client sent its close and the answer waits behind
    updates the client does not read."""
    srv = EmbeddedServer(Settings(rate=1e6, burst=10**6))
    await srv.__aenter__()
    try:
        m = await long_match(srv, rounds=100)
        client = await hog(srv, m)
        await asyncio.sleep(0.2)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(client.close(), 0.3)  # its close goes; it reads nothing
        loop = asyncio.get_running_loop()
        start = loop.time()
        while client.theirs.conn.state.name != "CLOSING":
            assert loop.time() - start < 5
            await asyncio.sleep(0.02)
    finally:
        await asyncio.wait_for(srv.__aexit__(None, None, None), 10)
    client.transport.abort()


async def test_a_client_that_asks_for_a_long_replay_and_reads_nothing_holds_little() -> None:
    """Failed before: a replay or a log (megabytes for a long match) was handed to the
    HTTP layer whole, which copied it to write it at once; what the socket did not take
    waited in the server's memory for as long as the client kept the connection open
    without reading. It is written a slice at a time now, as the client reads."""
    async with EmbeddedServer(Settings(rate=1e6, burst=10**6)) as srv:
        m = await long_match(srv)
        async with httpx.AsyncClient(base_url=srv.url) as http:
            whole = await http.get(f"/matches/{m}/replay")
            log = await http.get(f"/matches/{m}/log")  # (a slice at a time too: 230 KB)
        assert whole.status_code == log.status_code == 200 and len(log.content.splitlines()) > 600
        assert len(whole.content) > 1_500_000 and whole.json()["verified"]["ok"] is True
        assert int(whole.headers["content-length"]) == len(whole.content)
        sock = cramped_socket(srv)
        theirs = await cramp(srv, sock)
        sock.sendall(f"GET /matches/{m}/replay HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        await asyncio.sleep(0.5)
        waiting = theirs.transport.get_write_buffer_size()
        assert waiting < 300_000 < len(whole.content), waiting
        sock.close()


async def test_an_answer_its_client_does_not_read_is_given_up_after_send_timeout() -> None:
    """Failed before (the connection stayed, its task waiting to write, for as long as
    the client liked): HTTP has no keepalive ping to end a connection whose client has
    stopped reading, as a websocket has. Writing paused `send_timeout` seconds, it is
    aborted."""
    async with EmbeddedServer(Settings(rate=1e6, burst=10**6, send_timeout=1.0)) as srv:
        m = await long_match(srv)
        sock = cramped_socket(srv)
        await cramp(srv, sock)
        loop = asyncio.get_running_loop()
        start = loop.time()
        sock.sendall(f"GET /matches/{m}/replay HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        await asyncio.sleep(0.5)
        assert server_side(srv, sock) is not None, "still trying to send"
        while server_side(srv, sock) is not None:
            assert loop.time() - start < 10, "the connection whose client reads nothing stays"
            await asyncio.sleep(0.1)
        assert loop.time() - start > 1.0
        sock.close()
