"""Connections handed to the worker that owns their match (`daedalus serve --workers N`).

Any worker can serve any match: each folds the match's Redis stream. But a match whose
players' connections land on two workers is folded, viewed and followed by both, about a
third more CPU a command (docs/performance.md), and the kernel spreads connections over
the workers at random. So a client may name its match in the websocket's URL
(`/ws?match=<id>`, docs/protocol.md), and the worker that accepts the connection hands
it, before anything is answered on it, to the match's owner: worker
`crc32(match) % N`. An HTTP connection whose first request is under `/matches/<id>`
(taking a seat, a match's state, log or replay) goes there too, so that the match is not
loaded by another worker for it, and so does a later request on a kept-alive connection
that names a match another worker owns (it is handed over between two requests, when
uvicorn's h11 protocol has answered the last one and holds nothing more). And
`GET /metrics?worker=<k>` goes to worker k, so that a scraper can read every worker's
metrics on the one port (each worker counts for itself), even on a connection it keeps.

The hand-off is the socket itself: its file descriptor and the bytes read from it so far
(the start of the HTTP request), sent over a Unix datagram socket to the owner (one per
worker, made before the workers are forked), which adopts it as if it had accepted it
(`loop.connect_accepted_socket`) and reads the request from those bytes on. When it
cannot be handed (no match in the URL, the owner gone or its queue full, a request line
longer than a datagram), the worker that has it serves it: nothing but the placement
depends on the hand-off.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import socket
import zlib
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, unquote

REQUEST_LINE_LIMIT = 8192
"""At most this many bytes are read looking for the request line (then: served here)."""
HANDOFF_LIMIT = 65536
"""At most this many bytes read from a connection go with it (more: served here)."""


def owner_of(match: str, workers: int) -> int:
    """The worker that owns `match` (the same in every process and on every run)."""
    return zlib.crc32(match.encode()) % workers


def _method_target(request_line: bytes) -> tuple[bytes, bytes]:
    """The method and the target of an HTTP request line."""
    method, _, rest = request_line.partition(b" ")
    return method, rest.rpartition(b" ")[0]


def _get_query(request_line: bytes, path: bytes, name: str) -> str | None:
    """The first value of query parameter `name` of a `GET <path>?...` request line."""
    method, target = _method_target(request_line)
    if method != b"GET" or not target.startswith(path + b"?"):
        return None
    try:
        found = parse_qs(target[len(path) + 1:].decode("ascii")).get(name)
    except UnicodeDecodeError:
        return None
    return found[0] if found else None


def match_in(request_line: bytes) -> str | None:
    """The match a request line names: `GET /ws?match=<id>`, or any request under
    `/matches/<id>` (a seat taken, a match's state, log or replay). None: no match."""
    target = _method_target(request_line)[1]
    if target.startswith(b"/matches/"):
        match = target[len(b"/matches/"):].split(b"?", 1)[0].split(b"/", 1)[0]
        try:
            return unquote(match.decode("ascii")) or None
        except UnicodeDecodeError:
            return None
    return _get_query(request_line, b"/ws", "match")


def worker_in(request_line: bytes) -> int | None:
    """The worker a request line names: `GET /metrics?worker=<k>` (None: none)."""
    found = _get_query(request_line, b"/metrics", "worker")
    return int(found) if found is not None and found.isdigit() else None


class Handoff:
    """One worker's ends of the hand-off channels: its own inbox, and a way into every
    other worker's."""

    def __init__(self, index: int, inbox: socket.socket, outboxes: list[socket.socket | None]) -> None:
        self.index = index
        self.workers = len(outboxes)
        self.inbox = inbox
        self.outboxes = outboxes
        self.handed = 0  # connections handed to another worker
        self.adopted = 0  # connections adopted from one

    @staticmethod
    def channels(workers: int) -> list[tuple[socket.socket, socket.socket]]:
        """(inbox, its sending end) for each worker, made before forking them."""
        pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM) for _ in range(workers)]
        for inbox, outbox in pairs:
            inbox.setblocking(False)
            outbox.setblocking(False)
        return pairs

    @classmethod
    def of_worker(cls, index: int, pairs: list[tuple[socket.socket, socket.socket]]) -> Handoff:
        """Worker `index`'s part (in the forked worker): the other workers' inboxes and its
        own sending end are closed here, so that a worker's inbox closes with it (what
        waits there then is dropped, and a hand-off to it fails at once)."""
        outboxes: list[socket.socket | None] = []
        for i, (inbox, outbox) in enumerate(pairs):
            if i != index:
                inbox.close()
                outboxes.append(outbox)
            else:
                outbox.close()
                outboxes.append(None)
        return cls(index, pairs[index][0], outboxes)

    def target(self, request_line: bytes) -> int | None:
        """The worker to hand a connection to, by its request line (None: keep it)."""
        match = match_in(request_line)
        if match is not None:
            owner: int | None = owner_of(match, self.workers)
        else:
            owner = worker_in(request_line)
            if owner is not None and owner >= self.workers:
                return None  # (no such worker: answered here, 404)
        return None if owner is None or owner == self.index else owner

    def send(self, target: int, fd: int, data: bytes) -> bool:
        """Hand the socket `fd` and the bytes read from it to worker `target`; False if
        it cannot take it (the caller keeps the connection)."""
        outbox = self.outboxes[target]
        if outbox is None or len(data) > HANDOFF_LIMIT:
            return False
        try:
            outbox.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
        except OSError:  # gone (ECONNREFUSED), its queue full (EAGAIN), too long (EMSGSIZE)
            return False
        self.handed += 1
        return True

    def listen(self, adopt: Callable[[socket.socket, bytes], None]) -> None:
        """Call `adopt(socket, bytes)` for each connection handed to this worker."""
        loop = asyncio.get_running_loop()
        loop.add_reader(self.inbox.fileno(), self._receive, adopt)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(self.inbox.fileno())

    def _receive(self, adopt: Callable[[socket.socket, bytes], None]) -> None:
        while True:
            try:
                data, fds, flags, _addr = socket.recv_fds(self.inbox, HANDOFF_LIMIT, 1)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.stop()
                return
            for fd in fds:
                sock = socket.socket(fileno=fd)
                if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):  # (not sent so: cannot be served)
                    sock.close()
                    continue
                sock.setblocking(False)
                self.adopted += 1
                adopt(sock, data)


def _hand(handoff: Handoff, transport: asyncio.Transport, read: bytes) -> bool:
    """Hand the connection to the worker its request (the start of `read`) is for, if
    that is another one and it takes it (True: the transport is done with here)."""
    end = read.find(b"\r\n")
    target = handoff.target(read[:end]) if end >= 0 else None
    if target is None or transport.get_extra_info("sslcontext") is not None:
        return False
    sock = transport.get_extra_info("socket")
    if sock is None or not handoff.send(target, sock.fileno(), read):
        return False
    transport.abort()  # (the socket lives on in the other worker)
    return True


def rerouting(inner: type[asyncio.Protocol], handoff: Handoff) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class `inner`, whose kept-alive connections are handed
    to another worker when a request after the first is for it: between two requests
    (uvicorn's h11 protocol idle, with nothing of a next request read yet), a request
    whose line arrives whole at the start of the data. (uvicorn's httptools protocol
    is not looked into: its later requests are served where they land.)"""
    try:
        import h11
        from uvicorn.protocols.http.h11_impl import H11Protocol
    except ImportError:  # pragma: no cover
        return inner
    if not issubclass(inner, H11Protocol):
        return inner
    idle = h11.IDLE

    class Rerouting(inner):  # type: ignore[valid-type, misc]
        def data_received(self, data: bytes) -> None:
            conn = self.conn
            if (
                conn.our_state is idle and conn.their_state is idle and not conn.trailing_data[0]
                and (self.cycle is None or self.cycle.response_complete)
                and _hand(handoff, self.transport, data)
            ):
                self._unset_keepalive_if_required()
                return
            super().data_received(data)

    Rerouting.__name__ = Rerouting.__qualname__ = f"Rerouting{inner.__name__}"
    return Rerouting


def routed(inner: type[asyncio.Protocol], handoff: Handoff, timeout: float | None = None) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class `inner`, but a connection whose request names a
    match another worker owns is handed to it before `inner` sees it (and, served here,
    a later request of it too: `rerouting`). `timeout`: the connection is closed if its
    request line is not in by then (server/header_timeout.py; `inner` times the rest)."""
    serving = rerouting(inner, handoff)

    class Routed(asyncio.Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self._made: Callable[[], asyncio.Protocol] = lambda: serving(*args, **kwargs)
            self._transport: asyncio.Transport | None = None
            self._read = b""
            self._timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self._transport = transport  # type: ignore[assignment]
            if timeout is not None:
                self._timer = asyncio.get_running_loop().call_later(timeout, self._late)

        def data_received(self, data: bytes) -> None:
            self._read += data
            end = self._read.find(b"\r\n")
            if end < 0 and len(self._read) < REQUEST_LINE_LIMIT:
                return  # the request line is not all in yet
            self._untime()
            transport = self._transport
            assert transport is not None
            if not _hand(handoff, transport, self._read):
                self._keep()

        def _late(self) -> None:
            self._timer = None
            if self._transport is not None and not self._transport.is_closing():
                self._transport.close()

        def _untime(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def eof_received(self) -> bool | None:
            self._untime()
            if self._read:  # (a request cut short: the HTTP protocol answers it)
                return self._keep().eof_received()
            return False  # closed before saying anything: close it

        def connection_lost(self, exc: Exception | None) -> None:
            self._untime()
            self._transport = None

        def _keep(self) -> asyncio.Protocol:
            """Serve the connection here: `inner` takes over the transport."""
            transport = self._transport
            assert transport is not None
            read, self._read = self._read, b""
            return take_over(transport, self._made(), read)

    Routed.__name__ = Routed.__qualname__ = f"Routed{inner.__name__}"
    return Routed


def take_over(transport: asyncio.BaseTransport, protocol: asyncio.Protocol, read: bytes) -> asyncio.Protocol:
    """`protocol` serves the connection from now on, as if it had read `read` itself."""
    transport.set_protocol(protocol)
    protocol.connection_made(transport)
    if read:
        protocol.data_received(read)
    return protocol


class Adopting(asyncio.Protocol):
    """The protocol of a connection handed to this worker (loop.connect_accepted_socket):
    as it is made, `made()` takes it over with the bytes the other worker read, before
    anything more is read from the socket."""

    def __init__(self, made: Callable[[], asyncio.Protocol], read: bytes) -> None:
        self._made = made
        self._read = read

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        take_over(transport, self._made(), self._read)
