"""What a server process lets go of: a match it follows for no viewer, a finished match,
and the memory of either; the end of a match said once; a clean SIGTERM.

Two app instances (two EmbeddedServers) on one real Redis stand for two processes: one
creates the matches and seats the players over HTTP, the players' websockets are on the
other, as behind a load balancer.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import signal
import subprocess
import sys
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog

from projections.contract import Viewer
from server.config import Settings
from server.hub import Hub, SendQueue, Subscriber
from server.main import EmbeddedServer
from server.storage import MemoryStore
from server.store import EventStore
from tests import toygame
from tests.conftest import RedisServer
from tests.test_hub import play_to_the_end, seated
from tests.wsutil import Raw, new_match

toygame.install()

ROOT = Path(__file__).resolve().parents[1]
IDLE = 0.3  # Settings.runner_idle in these tests


@pytest.fixture
async def two(real_redis: RedisServer) -> AsyncIterator[tuple[EmbeddedServer, EmbeddedServer]]:
    store = EventStore.from_url(real_redis.url)
    await store.reads.flushdb()  # a server resumes every unfinished match it finds
    await store.close()
    settings = Settings(redis_url=real_redis.url, runner_idle=IDLE)
    async with EmbeddedServer(settings) as a, EmbeddedServer(settings) as b:
        yield a, b


def hub(srv: EmbeddedServer) -> Hub:
    found: Hub = srv.app.state.hub
    return found


async def until(pred: Callable[[], bool], seconds: float = 5.0) -> bool:
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while not pred():
        if loop.time() > end:
            return False
        await asyncio.sleep(0.02)
    return True


async def seats(ws_url: str, match: str, tokens: list[str]) -> list[Raw]:
    players = []
    for token in tokens:
        player = await Raw.open(ws_url)
        assert (await player.hello(match, token))["type"] == "welcome"
        players.append(player)
    return players


async def play(players: list[Raw], turns: int | None = None) -> int:
    """The players add 3 each on their turn, for `turns` turns or to the end (a turn the
    clock passed meanwhile is played by the other); the turns played."""
    played = sent = turn = 0
    while turns is None or played < turns:
        sent += 1
        reply = await players[turn].command(f"c{sent}-{id(players)}", {"type": "add", "n": 3})
        if reply["type"] == "rejected" and reply["code"] == "match_over":
            return played
        if reply["type"] == "rejected" and reply["code"] == "not_your_turn":
            turn = 1 - turn
            continue
        assert reply["type"] == "ack", reply
        played += 1
        turn = 1 - turn
    return played


async def leave(players: list[Raw]) -> None:
    for player in players:
        await player.close()


# --- a process lets go of what nobody uses there ------------------------------------


async def test_a_process_that_only_seated_the_players_lets_go_of_the_match(
    two: tuple[EmbeddedServer, EmbeddedServer],
) -> None:
    """Failed before: the process that created the match and seated its players (A) kept
    following it, for nobody, until it ended, while the players played on the other (B).
    It lets go once they play there and it has not used the match for `runner_idle`; B,
    the last to play it, keeps it (and its clock) when the players leave; a viewer that
    comes back to A gets it loaded again and plays it to the end."""
    a, b = two
    match, tokens = await new_match(a.url, "toy", {"turn_ms": 300})
    assert match in hub(a).runners
    players = await seats(b.ws_url, match, tokens)
    await play(players, turns=2)  # 3 each: below any target (5 to 14)
    assert await until(lambda: match not in hub(a).runners), "A kept a match it had no use for"
    assert match not in hub(a).follower.runners
    assert match in hub(b).runners
    await leave(players)

    # Nobody anywhere now: B, which served the last command, keeps it and its clock runs.
    seq = hub(b).runners[match].current.seq
    await asyncio.sleep(4 * IDLE)
    assert match in hub(b).runners and match not in hub(a).runners
    ticked = hub(b).runners[match].current.seq
    assert ticked > seq, "the match's clock stopped"

    # The players come back on A: it loads the match again, they finish it there.
    players = await seats(a.ws_url, match, tokens)
    assert await play(players) > 0
    await leave(players)
    assert await until(lambda: match not in hub(a).runners and match not in hub(b).runners)
    async with httpx.AsyncClient(base_url=a.url) as http:
        status = (await http.get(f"/matches/{match}")).json()
    assert status["ended"] and status["result"]["winner"] in (0, 1)
    # the request's load stays for the next request until the sweep lets go of it
    assert match in hub(a).runners
    assert await until(lambda: match not in hub(a).runners), "A kept the finished match"


async def test_a_finished_match_a_request_loaded_is_let_go(
    two: tuple[EmbeddedServer, EmbeddedServer],
) -> None:
    """Failed before: a seat claim or a refused hello for a finished match loaded it, and
    nothing let go of it again."""
    a, b = two
    match, tokens = await new_match(a.url, "toy", {"turn_ms": 60_000})
    players = await seats(b.ws_url, match, tokens)
    await play(players)
    await leave(players)
    assert await until(lambda: match not in hub(a).runners and match not in hub(b).runners)
    async with httpx.AsyncClient(base_url=a.url) as http:
        claim = await http.post(f"/matches/{match}/seats", json={"name": "Cy"})
    assert claim.status_code == 409, claim.text
    late = await Raw.open(a.ws_url)
    assert (await late.hello(match, "x" * 40))["code"] == "bad_token"
    await late.close()
    assert await until(lambda: match not in hub(a).runners, 10 * IDLE), "A kept the finished match"


async def test_a_match_nobody_plays_elsewhere_is_kept(
    two: tuple[EmbeddedServer, EmbeddedServer],
) -> None:
    """A match seated and then left alone: no other process plays it, so the process
    that seated it keeps it (its clock must run, as before)."""
    a, _ = two
    match, _tokens = await new_match(a.url, "toy", {"turn_ms": 100})
    seq = hub(a).runners[match].current.seq
    await asyncio.sleep(5 * IDLE)
    assert match in hub(a).runners and hub(a).runners[match].current.seq > seq


# --- the end of a match is said once --------------------------------------------------


async def test_match_over_is_logged_once(two: tuple[EmbeddedServer, EmbeddedServer]) -> None:
    """Failed before: every process that folded the end said it, and every reload of the
    finished match (each GET of it) said it again."""
    a, b = two
    with structlog.testing.capture_logs() as logged:
        match, tokens = await new_match(a.url, "toy", {"turn_ms": 60_000})
        players = await seats(b.ws_url, match, tokens)
        await play(players)
        await leave(players)
        assert await until(lambda: match not in hub(a).runners and match not in hub(b).runners)
        for srv in (a, b, a, b):
            async with httpx.AsyncClient(base_url=srv.url) as http:
                assert (await http.get(f"/matches/{match}")).json()["ended"]
    said = [e for e in logged if e["event"] == "match_over"]
    assert len(said) == 1, said
    assert said[0]["match"] == match and said[0]["winner"] in (0, 1)


# --- a finished match is freed by reference counting ----------------------------------


@contextlib.contextmanager
def no_cycle_collector() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def test_a_released_match_is_freed_without_the_cycle_collector() -> None:
    """Failed before: a match's core and its viewers' streams referred to each other, so
    a finished match let go of stayed in memory until a full collection."""
    hub = Hub(MemoryStore(), Settings(tail_block_ms=200, runner_idle=IDLE))
    try:
        runner = await seated(hub)
        sub = Subscriber(Viewer(seat=0), SendQueue(1000))
        assert await runner.subscribe(sub, None, {"type": "welcome"}) is None
        await play_to_the_end(runner)
        assert runner.streams.length(Viewer(seat=0)) > 0
        with no_cycle_collector():
            dead: list[weakref.ref[Any]] = [weakref.ref(runner), weakref.ref(runner.core), weakref.ref(runner.streams)]
            runner.unsubscribe(sub)  # the last viewer leaves: the hub lets go of it
            del runner
            assert await until(lambda: not hub.runners and not hub._background)
            assert [ref() for ref in dead] == [None, None, None]
    finally:
        await hub.close()


async def test_a_match_let_go_for_idleness_is_freed_without_the_cycle_collector(
    two: tuple[EmbeddedServer, EmbeddedServer],
) -> None:
    """Nothing keeps a match let go of for idleness alive: neither the loop that lets go
    of it nor the follower's last read (each held the last one it handled)."""
    a, b = two
    match, tokens = await new_match(a.url, "toy", {"turn_ms": 60_000})
    players = await seats(b.ws_url, match, tokens)
    with no_cycle_collector():
        runner = hub(a).runners[match]
        dead: list[weakref.ref[Any]] = [weakref.ref(runner), weakref.ref(runner.core)]
        del runner
        await play(players, turns=2)
        assert await until(lambda: match not in hub(a).runners)
        await until(lambda: not hub(a)._background)
        assert await until(lambda: [ref() for ref in dead] == [None, None], 3.0)
    await leave(players)


# --- a clean SIGTERM ------------------------------------------------------------------


def test_serve_stopped_by_sigterm_exits_0() -> None:
    """Failed before: uvicorn raised the SIGTERM again once it had stopped, so a clean
    stop ended with status -15 (killed by the signal)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "clients.cli", "serve", "--port", "0"],
        cwd=ROOT, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stderr is not None
        events: list[Any] = []
        for line in proc.stderr:
            events.append(json.loads(line)["event"])
            if events[-1] == "listening":
                break
        assert events[-1] == "listening", events
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=30)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, rest
