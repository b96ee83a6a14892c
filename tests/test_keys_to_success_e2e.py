"""Keys to Success / Gatekeeping against a real server: `daedalus bots` with 13 bot
players over websockets for both themes, a spectator and a player watching a match live,
and `daedalus replay --verify` on the finished log."""

from __future__ import annotations

import asyncio
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clients.bots import bot_factory, play_bot
from clients.client import DaedalusHttp, MatchConnection
from clients.replay import verify_entries
from server.main import EmbeddedServer

ROOT = Path(__file__).resolve().parents[1]
GAME = "keys-to-success"
LINE = re.compile(r"^match [A-Za-z0-9_-]+ winner=(\d+|draw) rounds=\d+$")


@pytest.mark.parametrize("game", ["keys-to-success", "gatekeeping"])
def test_bots_command_plays_thirteen_seats_through_the_embedded_server(game: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "clients.cli", "bots", game, "--matches", "2", "--clock-scale", "0.01",
         "--seed", "7", "--verify"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2, done.stdout
    assert all(LINE.match(line) for line in lines), lines
    assert "2/2 matches finished" in done.stderr


async def _watch(conn: MatchConnection, seen: list[dict[str, Any]]) -> None:
    async for message in conn:
        if message.get("type") == "update":
            seen.append(message)
            if message["view"].get("ended"):
                return


async def test_thirteen_websocket_bots_a_spectator_and_replay_verify() -> None:
    async with EmbeddedServer() as srv, DaedalusHttp(srv.url) as http:
        games = {g["name"]: g for g in await http.games()}
        assert games[GAME]["seats"] == 13
        assert [v["name"] for v in games[GAME]["variants"]] == ["keys-to-success", "gatekeeping"]
        created = await http.create_match(GAME, "gatekeeping", {"clock_scale": 0.01})
        match = created["match"]
        assert created["seats"] == 13
        lineup = ["heuristic" if s % 2 == 0 else "random" for s in range(13)]
        tokens = [(await http.claim_seat(match, f"{name} {s}", s))["token"] for s, name in enumerate(lineup)]
        watcher = MatchConnection(srv.url, match)
        await watcher.connect()
        conns = [MatchConnection(srv.url, match, token=t) for t in tokens]
        for conn in conns:
            await conn.connect()
        spectated: list[dict[str, Any]] = []
        try:
            bots = [bot_factory(GAME, name)(random.Random(s)) for s, name in enumerate(lineup)]
            finals, _ = await asyncio.wait_for(
                asyncio.gather(
                    asyncio.gather(*(play_bot(c, b) for c, b in zip(conns, bots, strict=True))),
                    _watch(watcher, spectated),
                ),
                timeout=120,
            )
        finally:
            for conn in (*conns, watcher):
                await conn.close()
        assert all(v["ended"] for v in finals)
        result = finals[0]["result"]
        assert result["rounds"] <= 9

        # The spectator saw the clock only, until play ended.
        for update in spectated:
            gs = update["view"]["game_state"]
            if gs["phase"] == "play":
                assert gs["players"] is None and gs["level"] is None and gs["chat"] == []
                for event in update["events"]:
                    assert set(event) <= {"type", "round", "deadline", "at", "seat", "name"}, event

        entries = await http.log(match)
        assert verify_entries(entries).ok  # (the public log)
        replay = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "clients.cli", "replay", match, "--server", srv.url, "--verify",
            cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(replay.communicate(), timeout=60)
        assert replay.returncode == 0, err.decode()
        text = out.decode()
        assert "Round 1 results:" in text and "  Level 5 (gates A B C D E F G H I J):" in text
        assert re.search(r"player\s+gates\s+weapons\s+fighting strength\s+result", text)
        assert "Play ends after round" in text and "Game over after" in text
        assert text.strip().splitlines()[-1].startswith("verify: ok")
