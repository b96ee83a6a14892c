"""bench/leanws.py, the load generator's websocket client, against a conforming server
(the `websockets` library's), and bench/load.py end to end on a real server."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from bench.leanws import HandshakeError, LeanSocket
from tests.conftest import without_real_redis

ROOT = Path(__file__).resolve().parent.parent

Handler = Callable[[ServerConnection], Awaitable[None]]


@contextlib.asynccontextmanager
async def _server(handler: Handler, **kw: Any) -> AsyncIterator[str]:
    async with serve(handler, "127.0.0.1", 0, **kw) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}/ws?match=m1"


class Inbox:
    def __init__(self) -> None:
        self.messages: asyncio.Queue[bytes] = asyncio.Queue()

    def __call__(self, data: bytes) -> None:
        self.messages.put_nowait(data)

    async def next(self) -> bytes:
        return await asyncio.wait_for(self.messages.get(), 5)


async def test_messages_of_every_length_class_go_out_masked_and_come_back_whole() -> None:
    paths: list[str] = []

    async def echo(ws: ServerConnection) -> None:
        assert ws.request is not None
        paths.append(ws.request.path)
        async for message in ws:  # the library fails a connection on an unmasked frame
            await ws.send(message)

    async with _server(echo) as url:
        inbox = Inbox()
        sock = await LeanSocket.connect(url, inbox)
        sizes = [0, 1, 125, 126, 127, 65535, 65536, 200_003]
        for n in sizes:
            sock.send(("é" * (n // 2) + "x" * (n % 2)).encode())
        for n in sizes:
            got = await inbox.next()
            assert got == ("é" * (n // 2) + "x" * (n % 2)).encode()
        assert paths == ["/ws?match=m1"]
        await sock.close()
        assert sock.closed.done() and sock.close_code == 1000


async def test_a_fragmented_message_arrives_as_one_and_a_ping_is_answered() -> None:
    pong = asyncio.Event()

    async def talk(ws: ServerConnection) -> None:
        await ws.send(["fr", "ag", "mented"])  # three frames
        await ws.send("after")
        waiter = await ws.ping(b"p1")
        await asyncio.wait_for(waiter, 5)
        pong.set()
        await ws.wait_closed()

    async with _server(talk) as url:
        inbox = Inbox()
        sock = await LeanSocket.connect(url, inbox)
        assert await inbox.next() == b"fragmented"
        assert await inbox.next() == b"after"
        await asyncio.wait_for(pong.wait(), 5)
        await sock.close()


async def test_a_close_from_the_server_ends_the_connection_with_its_code() -> None:
    async def close(ws: ServerConnection) -> None:
        await ws.send("bye")
        await ws.close(4008, "too slow")

    async with _server(close) as url:
        inbox = Inbox()
        sock = await LeanSocket.connect(url, inbox)
        assert await inbox.next() == b"bye"
        await asyncio.wait_for(sock.closed, 5)
        assert sock.close_code == 4008
        sock.send(b"late")  # dropped: the connection is gone


async def test_a_refused_upgrade_is_a_handshake_error() -> None:
    async def never(ws: ServerConnection) -> None:
        raise AssertionError("not reached")

    def refuse(connection: ServerConnection, request: Any) -> Any:
        return connection.respond(HTTPStatus.FORBIDDEN, "no\n")

    async with _server(never, process_request=refuse) as url:
        with pytest.raises(HandshakeError, match="403"):
            await LeanSocket.connect(url, Inbox(), timeout=5)


@pytest.mark.parametrize(("game", "updates"), [
    ("five-card-trick", "view"), ("five-card-trick", "events"), ("keys-to-success", "events"),
])
def test_load_bench_runs_both_phases_against_a_real_server(real_redis: Any, game: str, updates: str) -> None:
    """bench/load.py, briefly: bot seats on LeanSocket play closed and open loops (it starts
    its own redis-server; the fixture only says whether this machine has one), their
    updates with the view or the events only; Keys to Success's 13-seat matches too, one
    after another."""
    k, rate = ("6", "40") if game == "five-card-trick" else ("2", "30")
    cmd = [sys.executable, str(ROOT / "bench" / "load.py"), "--game", game, "-k", k,
           "--warmup", "0.5", "--duration", "1.5", "--rate", rate, "--updates", updates]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    except FileNotFoundError as exc:  # pragma: no cover
        without_real_redis(exc)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    fields = dict(part.split("=") for part in last.split())
    assert float(fields["commands/s"]) > 0
    assert fields["p99_ms"] != "nan"
    for phase in ("closed loop", "open loop"):
        section = proc.stdout.split(f"== {phase}")[1]
        assert "errors 0" in section.split("\n")[1] or "rate_limited" in section.split("\n")[1]
        assert "rejected 0" in section


@pytest.mark.parametrize("variant", ["keys-to-success", "gatekeeping"])
def test_a_keys_to_success_seat_on_events_only_keeps_the_chat_a_bot_reads(variant: str) -> None:
    """bench/load.py's Keys to Success seats on `--updates events` ask for their view after
    the updates KTS_VIEW_AFTER names and add chat messages to the view they have
    (follow_chat): after every update, the round's chat and the messages left are the
    server's, for every seat, over whole matches."""
    import json
    import random

    import msgspec

    from bench.load import KTS_VIEW_AFTER, follow_chat
    from clients.bots import BOTS, simulate
    from domain import engine
    from projections.common import match_view, project_events
    from projections.contract import Viewer
    from projections.registry import hosted

    game = "keys-to-success"
    h = hosted(game)
    followed = 0
    for m in range(2):
        bots = [BOTS[game]["heuristic" if i % 2 else "random"](random.Random(f"{variant}:{m}:{i}"))
                for i in range(13)]
        sim = simulate(game, bots, variant=variant, seed=bytes([m + 1]) * 32)
        ms = engine.open_match(h.rules, sim.entries[0])

        def view_of(ms: engine.MatchState, seat: int) -> dict[str, Any]:
            return json.loads(msgspec.json.encode(match_view(h.views, ms, Viewer(seat=seat))))

        models = [view_of(ms, seat) for seat in range(13)]
        for entry in sim.entries[1:]:
            ms, outcome = engine.apply(ms, entry)
            for seat in range(13):
                events = json.loads(msgspec.json.encode(project_events(h.views, ms, outcome, Viewer(seat=seat))))
                if not events:
                    continue
                server = view_of(ms, seat)
                if any(e["type"] in KTS_VIEW_AFTER for e in events):
                    models[seat] = server  # (asked for)
                    continue
                if follow_chat(models[seat], seat, events):
                    followed += 1
                mine, theirs = models[seat]["game_state"], server["game_state"]
                assert mine["chat"] == theirs["chat"], events
                if theirs.get("me") is not None:
                    assert mine["me"]["chats_left"] == theirs["me"]["chats_left"], events
    assert followed > 50


@pytest.mark.parametrize("variant", ["dm12", "gauntlet", "setnas-curse"])
async def test_a_seat_on_events_only_keeps_the_view_a_bot_reads(variant: str) -> None:
    """bench/load.py's `--updates events` seats keep the welcome's view up to date from the
    events (follow_events): after every update, what a bot reads of it is the server's."""
    import json
    import random

    import msgspec

    from bench.load import Event, follow_events
    from clients.bots import bot_factory
    from server.config import Settings
    from server.main import EmbeddedServer
    from tests.wsutil import Raw, new_match

    def read(view: dict[str, Any]) -> Any:
        gs = view["game_state"]
        seats = [{k: s[k] for k in ("chips", "lights", "blocked", "history", "submitted")}
                 for s in gs["seats"]]
        return (view["started"], view["ended"], gs["round"], gs["pot"], gs["end_round"],
                gs["replays"], gs["over"] is not None, seats)

    events_of = msgspec.json.Decoder(list[Event]).decode
    async with EmbeddedServer(Settings(rate=1000, burst=2000)) as srv:
        match, tokens = await new_match(
            srv.url, "five-card-trick", {"rounds": 12, "max_rounds": 12}, variant=variant)
        raws, models = [], []
        bots = [bot_factory("five-card-trick", "random")(random.Random(f"{variant}:{i}")) for i in range(2)]
        for token in tokens:
            raw = await Raw.open(srv.ws_url)
            welcome = await raw.hello(match, token)
            raws.append(raw)
            models.append(welcome["view"])
        compared, ended = 0, False
        while not ended:
            for seat, raw in enumerate(raws):
                for command in bots[seat].act(models[seat]):
                    await raw.send({"type": "command", "id": f"c{compared}-{seat}", "command": command})
            for seat, raw in enumerate(raws):
                while True:
                    try:
                        msg = await raw.recv(timeout=0.3)
                    except TimeoutError:
                        break
                    assert msg["type"] != "rejected", msg
                    if msg["type"] != "update":
                        continue
                    follow_events(models[seat], events_of(json.dumps(msg["events"]).encode()))
                    assert read(models[seat]) == read(msg["view"]), msg["events"]
                    compared += 1
                    ended = ended or msg["view"]["ended"]
        for raw in raws:
            await raw.close()
    assert compared > 40


@pytest.mark.parametrize("variant", ["dm12", "gauntlet", "setnas-curse", "final"])
def test_a_random_bot_acts_the_same_on_the_part_of_the_view_the_bench_decodes(variant: str) -> None:
    """bench/load.py decodes for a random bot only the fields of a view it reads
    (bot_view_of, from an update frame's bytes): over whole matches, after every entry
    each seat's bot sends on that part exactly what the same bot (the same seed) sends on
    the whole view, and the part holds the whole view's values. The peek read with the
    message (PeekedMessage) is the one read from the view alone."""
    import json
    import random

    import msgspec

    from bench.load import PeekedMessage, bot_view_of
    from clients.bots import BOTS, simulate
    from domain import engine
    from projections.common import match_view, project_events
    from projections.contract import Viewer
    from projections.registry import hosted

    def within(part: Any, whole: Any) -> bool:
        if isinstance(part, dict):
            return isinstance(whole, dict) and all(k in whole and within(v, whole[k]) for k, v in part.items())
        if isinstance(part, list):
            return isinstance(whole, list) and len(part) == len(whole) and all(map(within, part, whole))
        return bool(part == whole)

    game = "five-card-trick"
    h = hosted(game)
    peeked = msgspec.json.Decoder(PeekedMessage).decode
    acted = 0
    for m in range(2):
        sim = simulate(game, [BOTS[game]["random"](random.Random(f"{variant}:{m}:{i}")) for i in range(2)],
                       variant=variant, seed=bytes([m + 1]) * 32)
        on_whole = [BOTS[game]["random"](random.Random(f"{variant}:{m}:bench:{i}")) for i in range(2)]
        on_part = [BOTS[game]["random"](random.Random(f"{variant}:{m}:bench:{i}")) for i in range(2)]
        ms = engine.open_match(h.rules, sim.entries[0])
        for n, entry in enumerate(sim.entries[1:], 1):
            ms, outcome = engine.apply(ms, entry)
            for seat in range(2):
                viewer = Viewer(seat=seat)
                frame = msgspec.json.encode({
                    "type": "update", "seq": n, "ts": entry.ts,
                    "events": project_events(h.views, ms, outcome, viewer),
                    "view": match_view(h.views, ms, viewer),
                })
                whole = json.loads(frame)["view"]
                part = bot_view_of("random", frame)
                assert within(part, whole)
                assert part["game_state"]["seats"][seat].keys() < whole["game_state"]["seats"][seat].keys()
                peek = peeked(frame).view
                assert peek is not None
                assert (peek.started, peek.ended) == (whole["started"], whole["ended"])
                gs = whole["game_state"]
                assert (peek.game_state and peek.game_state.round) == (gs and gs["round"])
                sent = on_whole[seat].act(whole)
                assert on_part[seat].act(part) == sent
                acted += bool(sent)
    assert acted > 40
