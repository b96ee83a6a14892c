"""Through a load balancer: matches played behind nginx (TLS, no sticky sessions) while a
server process is killed and started again (deploy/stack.py builds the stack).

nginx and redis-server come from Debian's packages: where either is missing the test is
skipped on a developer's machine and fails under CI (CI=true)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import ssl
import sys
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "deploy"))

from stack import Stack

from clients.bots import bot_factory, play_bot
from clients.client import DaedalusHttp, MatchConnection
from clients.replay import verify_log

MATCHES = 6


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Any:
    try:
        s = Stack(servers=2, env={"DAEDALUS_LOG_LEVEL": "warning"})
        s.start()
    except (FileNotFoundError, RuntimeError) as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs nginx and redis-server for the proxy test: {exc}")
        pytest.skip(f"no proxy stack here ({exc}); CI runs it")
    # The clients trust the stack's certificate as they would a real one: through the
    # environment (httpx and the ssl module's default context both read it).
    monkeypatch.setenv("SSL_CERT_FILE", str(s.ca_file))
    yield s
    s.stop()


async def watch(url: str, match: str, ca: str, seen: list[int], views: list[dict[str, Any]]) -> None:
    """A spectator on the raw protocol that resumes by itself with `since`, recording the
    seq of every update it is sent (so a repeat or a gap would show)."""
    context = ssl.create_default_context(cafile=ca)
    ws_url = url.replace("https://", "wss://") + "/ws"
    while True:
        try:
            async with connect(ws_url, ssl=context, open_timeout=5) as ws:
                await ws.send(json.dumps({"type": "hello", "match": match,
                                          "since": seen[-1] if seen else 0}))
                async for raw in ws:
                    msg = json.loads(raw)
                    if msg["type"] == "update":
                        seen.append(int(msg["seq"]))
                        views.append(msg["view"])
                        if msg["view"].get("ended"):
                            return
                    elif msg["type"] == "welcome" and msg["view"].get("ended") and not seen:
                        views.append(msg["view"])
                        return
        except (TimeoutError, ConnectionClosed, OSError):
            await asyncio.sleep(0.2)


async def test_matches_go_on_through_the_proxy_while_a_server_is_killed_and_restarted(stack: Stack) -> None:
    url, ca = stack.url, str(stack.ca_file)
    async with DaedalusHttp(url) as http:
        matches: list[str] = []
        seats: list[list[MatchConnection]] = []
        for _ in range(MATCHES):
            created = await http.create_match("five-card-trick", None, {"rounds": 40})
            match = created["match"]
            conns = []
            for seat in range(2):
                claimed = await http.claim_seat(match, f"bot {seat}", seat)
                conns.append(MatchConnection(url, match, token=claimed["token"]))
            matches.append(match)
            seats.append(conns)
        for conns in seats:
            for conn in conns:
                await conn.connect()

        seen: list[list[int]] = [[] for _ in matches]
        watched: list[list[dict[str, Any]]] = [[] for _ in matches]
        spectators = [asyncio.create_task(watch(url, m, ca, seen[i], watched[i]))
                      for i, m in enumerate(matches)]
        players = [
            asyncio.create_task(play_bot(conn, bot_factory("five-card-trick", "random")(
                random.Random(f"{i}:{seat}"))))
            for i, conns in enumerate(seats) for seat, conn in enumerate(conns)
        ]

        # Once play is under way everywhere, server 0 dies (SIGKILL, as a crash) and its
        # supervisor starts it again a moment later.
        while not all(len(s) >= 3 for s in seen):
            await asyncio.sleep(0.05)
        in_play = sum(1 for w in watched if not w[-1].get("ended"))
        await asyncio.to_thread(stack.kill_server, 0)
        await asyncio.sleep(1.0)
        await asyncio.to_thread(stack.start_server, 0)

        finals = await asyncio.wait_for(asyncio.gather(*players), 240)
        await asyncio.wait_for(asyncio.gather(*spectators), 60)
        resumed = sum(conn.resumes for conns in seats for conn in conns)
        for conns in seats:
            for conn in conns:
                await conn.close()

        assert in_play == MATCHES, "every match was in play when the server was killed"
        assert resumed > 0, "players were connected to the killed server and resumed elsewhere"
        assert all(view["ended"] and view["result"] is not None for view in finals)
        for i, match in enumerate(matches):
            # The spectator's stream went on across the crash: 1, 2, 3, ... with nothing
            # missed and nothing sent twice, ending with the match's end.
            assert seen[i] == list(range(1, len(seen[i]) + 1)), (match, seen[i])
            assert watched[i][-1]["ended"]
            assert watched[i][-1]["result"] == finals[2 * i]["result"]
            ok, failure = verify_log(await http.log(match))
            assert ok, (match, failure)


def test_the_production_nginx_conf_is_the_tested_one() -> None:
    """deploy/nginx.conf and the compose file's hold the proxy settings this test runs,
    with production names."""
    from stack import production_conf

    deploy = Path(__file__).resolve().parent.parent / "deploy"
    assert (deploy / "nginx.conf").read_text() == production_conf(), (
        "deploy/nginx.conf is stale: python deploy/stack.py --production-conf > deploy/nginx.conf"
    )
    assert (deploy / "compose" / "nginx.conf").read_text() == production_conf(compose=True), (
        "deploy/compose/nginx.conf is stale: "
        "python deploy/stack.py --compose-conf > deploy/compose/nginx.conf"
    )


def test_the_proxy_keeps_the_metrics_private(stack: Stack) -> None:
    import urllib.error
    import urllib.request

    context = ssl.create_default_context(cafile=str(stack.ca_file))
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{stack.url}/metrics", context=context, timeout=5)
    assert refused.value.code == 404
    direct = f"http://127.0.0.1:{stack.server_ports[0]}/metrics"
    with urllib.request.urlopen(direct, timeout=5) as answer:
        assert b"daedalus_" in answer.read()
