"""server/route.py: which worker owns a match, and what names one (the hand-off itself is
tested through `daedalus serve --workers 2` in tests/test_workers.py)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from server.route import HANDOFF_LIMIT, Handoff, match_in, owner_of, worker_in


@pytest.mark.parametrize(("line", "match"), [
    (b"GET /ws?match=abcDEF123456 HTTP/1.1", "abcDEF123456"),
    (b"GET /ws?x=1&match=a%2Fb HTTP/1.1", "a/b"),
    (b"GET /ws HTTP/1.1", None),
    (b"GET /ws?other=1 HTTP/1.1", None),
    (b"POST /ws?match=a HTTP/1.1", None),
    (b"GET /wsx?match=a HTTP/1.1", None),
    (b"GET /games?match=a HTTP/1.1", None),
    (b"POST /matches/abcDEF123456/seats HTTP/1.1", "abcDEF123456"),
    (b"GET /matches/abcDEF123456 HTTP/1.1", "abcDEF123456"),
    (b"GET /matches/abcDEF123456/log?public=1 HTTP/1.1", "abcDEF123456"),
    (b"GET /matches/a%2Fb/log HTTP/1.1", "a/b"),
    (b"POST /matches HTTP/1.1", None),
    (b"POST /matches/ HTTP/1.1", None),
    (b"GET /ws?match=\xff HTTP/1.1", None),
    (b"", None),
])
def test_the_match_a_request_line_names(line: bytes, match: str | None) -> None:
    assert match_in(line) == match


@pytest.mark.parametrize(("line", "worker"), [
    (b"GET /metrics?worker=1 HTTP/1.1", 1),
    (b"GET /metrics?x=2&worker=0 HTTP/1.1", 0),
    (b"GET /metrics HTTP/1.1", None),
    (b"GET /metrics?worker=-1 HTTP/1.1", None),
    (b"GET /metrics?worker=one HTTP/1.1", None),
    (b"POST /metrics?worker=1 HTTP/1.1", None),
    (b"GET /metricsx?worker=1 HTTP/1.1", None),
    (b"GET /metrics?worker=\xff HTTP/1.1", None),
])
def test_the_worker_a_metrics_request_names(line: bytes, worker: int | None) -> None:
    assert worker_in(line) == worker


def test_a_request_goes_to_the_owner_of_its_match_or_to_the_worker_it_names() -> None:
    h = Handoff(0, socket.socket(), [None, None, None])
    try:
        match = next(f"m{i:05d}" for i in range(100) if owner_of(f"m{i:05d}", 3) == 2)
        assert h.target(f"GET /ws?match={match} HTTP/1.1".encode()) == 2
        assert h.target(b"GET /metrics?worker=1 HTTP/1.1") == 1
        assert h.target(b"GET /metrics?worker=0 HTTP/1.1") is None  # this worker
        assert h.target(b"GET /metrics?worker=3 HTTP/1.1") is None  # none such: a 404 here
        assert h.target(b"GET /metrics HTTP/1.1") is None
    finally:
        h.inbox.close()


def test_matches_are_spread_over_the_workers_the_same_way_everywhere() -> None:
    owners = [owner_of(f"m{i:05d}", 2) for i in range(1000)]
    assert 400 < owners.count(0) < 600
    assert owner_of("m00001", 3) == owner_of("m00001", 3) in (0, 1, 2)
    assert owner_of("abcDEF123456", 2) == 1  # crc32: no per-process hash seed


async def test_a_socket_handed_over_arrives_with_the_bytes_read_from_it() -> None:
    pairs = Handoff.channels(2)
    # Both workers' parts in one process: worker 1's inbox is read here.
    inbox, outbox = pairs[1]
    sender = Handoff(0, pairs[0][0], [None, outbox])
    receiver = Handoff(1, inbox, [pairs[0][1], None])
    assert sender.target(b"GET /ws?match=abcDEF123456 HTTP/1.1") == 1
    assert receiver.target(b"GET /ws?match=abcDEF123456 HTTP/1.1") is None  # its own
    a, b = socket.socketpair()
    got: list[tuple[socket.socket, bytes]] = []
    arrived = asyncio.Event()

    def adopt(sock: socket.socket, data: bytes) -> None:
        got.append((sock, data))
        arrived.set()

    receiver.listen(adopt)
    try:
        read = b"GET /ws?match=abcDEF123456 HTTP/1.1\r\nCookie: " + b"c" * 20_000  # (big headers)
        assert sender.send(1, a.fileno(), read)
        a.close()  # the connection lives on in the handed copy
        await asyncio.wait_for(arrived.wait(), 5)
        sock, data = got[0]
        assert data == read and (sender.handed, receiver.adopted) == (1, 1)
        sock.setblocking(True)
        sock.sendall(b"answered by the owner")
        assert b.recv(100) == b"answered by the owner"
        sock.close()
    finally:
        receiver.stop()
        b.close()
    e, f = socket.socketpair()
    assert not sender.send(1, e.fileno(), b"GET /ws?match=x HTTP/1.1\r\n" + b"x" * HANDOFF_LIMIT)
    e.close(), f.close()  # (more than goes with a connection: kept where it landed)
    inbox.close()  # a worker gone: a hand-off to it fails, and the connection stays
    c, d = socket.socketpair()
    assert not sender.send(1, c.fileno(), b"GET /ws?match=x HTTP/1.1\r\n")
    for s in (c, d, outbox, *pairs[0]):
        s.close()
