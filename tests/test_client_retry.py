"""The client library rides out a server that goes away (clients/client.py: Backoff), and
creating a match is safe to send again (POST /matches with an Idempotency-Key).

A TCP proxy stands between the clients and a real embedded server: it goes down (refusing
connections and cutting those open) and comes back on the same port, or loses the answer
to a request that reached the server."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import httpx
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from clients.bots import bot_factory, play_bot
from clients.client import Backoff, DaedalusHttp, HttpError, MatchConnection
from domain.engine import Entry
from server.config import Settings
from server.main import EmbeddedServer
from server.storage import MemoryStore
from tests import toygame

toygame.install()

GAME = "five-card-trick"
FAST = Backoff(first=0.02, cap=0.2)
# Longer than the client used to try for: 8 reconnection attempts, about 5 s of pauses.
OUTAGE = 6.0


class Proxy:
    """A TCP proxy on a loopback port of its own to a server's port."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.port = 0
        self.lose_answers = 0  # the answers to lose, each to a connection's first request
        self.lost = 0
        self.creations = 0  # the POST /matches requests that went through
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def up(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def down(self) -> None:
        """Refuse connections and cut those open (as a server that died)."""
        assert self._server is not None
        self._server.close()
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()
        await self._server.wait_closed()
        self._server = None

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            client_w.transport.abort()
            return
        self._open |= {client_w, server_w}
        lose = self.lose_answers > 0
        if lose:
            self.lose_answers -= 1

        async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter, answers: bool) -> None:
            try:
                while data := await r.read(65536):
                    if answers and lose:  # the server answered: the client never hears it
                        self.lost += 1
                        client_w.transport.abort()
                        server_w.transport.abort()
                        return
                    if not answers:
                        self.creations += data.count(b"POST /matches ")
                    w.write(data)
                    await w.drain()
            except OSError:
                pass
            finally:
                w.transport.abort()

        await asyncio.gather(pipe(client_r, server_w, False), pipe(server_r, client_w, True))
        self._open -= {client_w, server_w}


class Recording(MatchConnection):
    """A connection that notes the seq of every update the server sends it."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.seqs: list[int] = []

    async def _dispatch(self, message: dict[str, Any]) -> None:
        if message.get("type") == "update":
            self.seqs.append(int(message["seq"]))
        await super()._dispatch(message)


class Held:
    """A bot that stops acting at `round` until `go` is set (so the match waits there)."""

    def __init__(self, bot: Any, round: int, go: asyncio.Event) -> None:
        self.bot, self.round, self.go = bot, round, go
        self.waiting = False

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        if view["game_state"]["round"] >= self.round and not self.go.is_set():
            self.waiting = True
            return []
        commands: list[dict[str, Any]] = self.bot.act(view)
        return commands

    def feedback(self, *args: Any) -> None:
        self.bot.feedback(*args)


async def until(predicate: Any, seconds: float = 10) -> None:
    end = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < end, "timed out"
        await asyncio.sleep(0.01)


# --- the client across an outage ------------------------------------------------------------


async def test_bots_finish_across_an_outage_longer_than_the_old_limit() -> None:
    """The server is away for 6 s mid-match (the client used to give up after about 5):
    both bots reconnect, resume from their last update (none missed, none twice) and
    finish the match; a match created during the outage is created once it is back."""
    async with EmbeddedServer() as srv:
        proxy = Proxy(srv.port)
        await proxy.up()
        async with DaedalusHttp(proxy.url, backoff=FAST) as http:
            created = await http.create_match(GAME, "dm12", {"rounds": 4, "max_rounds": 4})
            match = created["match"]
            tokens = [(await http.claim_seat(match, f"bot {s}", s))["token"] for s in range(2)]
            conns = [Recording(proxy.url, match, token=t, backoff=FAST) for t in tokens]
            go = asyncio.Event()
            bots = [
                Held(bot_factory(GAME, "random")(random.Random(s)), 3, go) for s in range(2)
            ]
            for conn in conns:
                await conn.connect()
            playing = asyncio.gather(*(play_bot(c, b) for c, b in zip(conns, bots, strict=True)))
            await until(lambda: all(b.waiting for b in bots))  # round 3, waiting for them

            await proxy.down()
            go.set()
            creating = asyncio.create_task(http.create_match(GAME, "dm12", {}))
            await asyncio.sleep(OUTAGE)
            assert not creating.done() and not playing.done()
            assert not any(c.closed for c in conns)
            await proxy.up()

            views = await asyncio.wait_for(playing, 30)
            second = await asyncio.wait_for(creating, 10)
        assert all(v["ended"] and v["result"]["rounds"] >= 4 for v in views)
        for conn in conns:
            assert conn.resumes >= 1
            assert conn.seqs == list(range(1, conn.last_seq + 1)), "none missed, none twice"
            again = MatchConnection(srv.url, match, token=conn.token)
            assert (await again.connect())["seq"] == conn.last_seq
            await again.close()
            await conn.close()
        assert await srv.app.state.hub.store.active() == [second["match"]]  # the other ended


async def test_a_connection_gives_up_after_its_time() -> None:
    async with EmbeddedServer() as srv:
        proxy = Proxy(srv.port)
        await proxy.up()
        async with DaedalusHttp(srv.url) as http:
            match = (await http.create_match("toy"))["match"]
        conn = MatchConnection(proxy.url, match, backoff=Backoff(first=0.01, cap=0.05, give_up_after=0.5))
        await conn.connect()
        started = time.monotonic()
        await proxy.down()
        await until(lambda: conn.closed, 5)
        assert 0.3 < time.monotonic() - started < 2.0
        assert conn.close_reason is not None and conn.close_reason.startswith("could not resume")
        await conn.close()


async def test_a_creation_gives_up_after_its_time_and_a_refusal_is_not_sent_again() -> None:
    async with EmbeddedServer() as srv:
        proxy = Proxy(srv.port)
        await proxy.up()
        async with DaedalusHttp(proxy.url, backoff=Backoff(first=0.01, cap=0.05, give_up_after=0.4)) as http:
            with pytest.raises(HttpError) as refused:
                await http.create_match("no-such-game")
            assert refused.value.status == 400 and proxy.creations == 1, "a 4xx is not sent again"
            await proxy.down()
            started = time.monotonic()
            with pytest.raises(ConnectionError):
                await http.create_match("toy")
            assert 0.2 < time.monotonic() - started < 2.0


async def test_each_retry_is_told_to_the_caller_with_its_failure_and_pause() -> None:
    """`on_retry` hears every try that failed and will be made again (how `daedalus play`
    says that the server does not answer, instead of waiting in silence)."""
    heard: list[tuple[Exception, float]] = []
    async with EmbeddedServer() as srv:
        proxy = Proxy(srv.port)
        await proxy.up()
        await proxy.down()
        async with DaedalusHttp(proxy.url, backoff=Backoff(first=0.01, cap=0.05, give_up_after=0.3),
                                on_retry=lambda exc, pause: heard.append((exc, pause))) as http:
            with pytest.raises(ConnectionError):
                await http.create_match("toy")
    assert len(heard) >= 2
    assert all(isinstance(exc, ConnectionError) and 0 <= pause <= 0.05 for exc, pause in heard)


async def test_a_creation_whose_answer_is_lost_is_not_made_twice() -> None:
    """The request reaches the server, which creates the match, but its answer is lost:
    the client sends it again under the same key and gets that match; the server holds
    one match."""
    async with EmbeddedServer() as srv:
        proxy = Proxy(srv.port)
        await proxy.up()
        proxy.lose_answers = 1
        async with DaedalusHttp(proxy.url, backoff=FAST) as http:
            created = await http.create_match("toy", None, {"turn_ms": 5000})
        assert proxy.lost == 1 and proxy.creations == 2, "the first answer was lost, and sent again"
        assert await srv.app.state.hub.store.active() == [created["match"]]
        assert created["options"]["turn_ms"] == 5000


# --- POST /matches with an Idempotency-Key --------------------------------------------------


async def post(http: httpx.AsyncClient, body: dict[str, Any], key: str | None) -> httpx.Response:
    return await http.post("/matches", json=body, headers={"Idempotency-Key": key} if key else {})


async def test_the_same_key_and_body_get_the_same_match() -> None:
    async with EmbeddedServer() as srv, httpx.AsyncClient(base_url=srv.url) as http:
        body = {"game": "toy", "options": {"turn_ms": 5000}}
        key = "k" * 16
        first = await post(http, body, key)
        again = await post(http, {"options": {"turn_ms": 5000}, "game": "toy"}, key)  # keys reordered
        assert first.status_code == again.status_code == 201
        assert first.json() == again.json()
        other = await post(http, body, "k" * 15 + "2")
        assert other.status_code == 201 and other.json()["match"] != first.json()["match"]
        plain = [await post(http, body, None) for _ in range(2)]
        assert plain[0].json()["match"] != plain[1].json()["match"], "no key: a match each"
        assert len(await srv.app.state.hub.store.active()) == 4


async def test_the_same_key_with_another_body_is_refused() -> None:
    async with EmbeddedServer() as srv, httpx.AsyncClient(base_url=srv.url) as http:
        key = "a-key-of-my-own-1"
        first = await post(http, {"game": "toy"}, key)
        assert first.status_code == 201
        other = await post(http, {"game": "toy", "options": {"turn_ms": 5}}, key)
        assert other.status_code == 409
        error = other.json()["error"]
        assert error["code"] == "idempotency_key_reused" and "another request" in error["message"]
        assert await srv.app.state.hub.store.active() == [first.json()["match"]]


@pytest.mark.parametrize("key", ["short", "x" * 129, "with space in it!", "ünïcödé-key-1234"])
async def test_a_bad_key_is_refused(key: str) -> None:
    async with EmbeddedServer() as srv, httpx.AsyncClient(base_url=srv.url) as http:
        r = await http.post(
            "/matches", json={"game": "toy"}, headers=[(b"Idempotency-Key", key.encode())]
        )
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_idempotency_key"
        assert await srv.app.state.hub.store.active() == []


async def test_a_refused_creation_leaves_its_key_free() -> None:
    async with EmbeddedServer() as srv, httpx.AsyncClient(base_url=srv.url) as http:
        key = "b-key-of-my-own-1"
        bad = await post(http, {"game": "toy", "options": {"turn_ms": "soon"}}, key)
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_options"
        good = await post(http, {"game": "toy"}, key)
        assert good.status_code == 201


async def test_a_key_is_forgotten_after_its_time() -> None:
    async with EmbeddedServer(Settings(idempotency_key_ttl=0.2)) as srv, httpx.AsyncClient(base_url=srv.url) as http:
        key = "c-key-of-my-own-1"
        first = await post(http, {"game": "toy"}, key)
        await asyncio.sleep(0.4)
        later = await post(http, {"game": "toy"}, key)
        assert later.status_code == 201 and later.json()["match"] != first.json()["match"]


class FailingOnce(MemoryStore):
    """A store whose first create fails as a Redis out of reach would."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 1

    async def create(self, match_id: str, entry: Entry) -> bool:
        if self.failures:
            self.failures -= 1
            raise RedisConnectionError("the store is away")
        return await super().create(match_id, entry)


async def test_a_creation_cut_short_is_completed_by_the_request_sent_again() -> None:
    """The key is kept, then the store fails before the match is created (503): the same
    request sent again creates the match, under the id the key was given, once."""
    store = FailingOnce()
    async with EmbeddedServer(store=store) as srv, httpx.AsyncClient(base_url=srv.url) as http:
        key = "d-key-of-my-own-1"
        failed = await post(http, {"game": "toy"}, key)
        assert failed.status_code == 503 and failed.json()["error"]["code"] == "store_unavailable"
        done = await post(http, {"game": "toy"}, key)
        again = await post(http, {"game": "toy"}, key)
        assert done.status_code == again.status_code == 201
        assert done.json() == again.json()
        assert await store.active() == [done.json()["match"]]


async def test_a_key_of_an_expired_match_answers_that_it_expired() -> None:
    settings = Settings(unfilled_ttl=0.3, tail_block_ms=200)
    async with EmbeddedServer(settings) as srv, httpx.AsyncClient(base_url=srv.url) as http:
        key = "e-key-of-my-own-1"
        match = (await post(http, {"game": "toy"}, key)).json()["match"]
        for _ in range(50):
            if (await http.get(f"/matches/{match}")).status_code == 410:
                break
            await asyncio.sleep(0.05)
        again = await post(http, {"game": "toy"}, key)
        assert again.status_code == 410 and again.json()["error"]["code"] == "match_expired"
        assert await srv.app.state.hub.store.active() == []


async def test_a_command_the_client_sent_again_by_itself_is_no_duplicate_to_its_caller() -> None:
    """The connection drops before the answer; the resume sends the command again, and
    the server answers that one as a duplicate (the first sending landed). The caller
    sent it once: its result is no duplicate. A second call with the same id is one."""
    import json

    from websockets.asyncio.server import ServerConnection, serve

    hellos = 0

    async def handler(ws: ServerConnection) -> None:
        nonlocal hellos
        await ws.recv()
        hellos += 1
        await ws.send(json.dumps({"type": "welcome", "match": "m", "game": GAME, "variant": "dm12",
                                  "role": "player", "seat": 0, "seq": 0}))
        command = json.loads(await ws.recv())
        if hellos == 1:  # applied, but the answer never leaves
            await ws.close(4008, "too slow: resume from your last seq")
            return
        while True:
            await ws.send(json.dumps({"type": "ack", "id": command["id"], "seq": 1, "warnings": [],
                                      "duplicate": True}))
            command = json.loads(await ws.recv())

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with MatchConnection(f"http://127.0.0.1:{port}", "m", token="t", backoff=FAST) as conn:
            first = await conn.send_command({"type": "submit"}, id="c1", timeout=5)
            assert conn.resumes == 1 and first.accepted
            assert not first.duplicate and first.raw["duplicate"] is True
            again = await conn.send_command({"type": "submit"}, id="c1", timeout=5)
            assert again.accepted and again.duplicate
