"""Memory Maze end to end: `daedalus bots memory-maze` for each edition through the
embedded server (websockets, the server's clock on real time), then `daedalus replay
--verify` on a finished match's log, fetched over HTTP and saved to a file."""

from __future__ import annotations

import asyncio
import random
import re
import sys
from pathlib import Path

import msgspec

from clients.bots import BOTS, play_bot
from clients.client import DaedalusHttp, MatchConnection
from server.main import EmbeddedServer

ROOT = Path(__file__).resolve().parents[1]
GAME = "memory-maze"
VARIANTS = ("black-garnet", "minos", "crazy")
LINE = re.compile(r"^match [A-Za-z0-9_-]+ winner=(0|1) rounds=\d+$")


async def _bots(variant: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "clients.cli", "bots", GAME, "--variant", variant,
        "--matches", "2", "--clock-scale", "0.01", "--seed", "7", "--verify",
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=240)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_bots_play_every_edition_through_the_embedded_server() -> None:
    # The three editions run side by side (crazy's cooldowns take real time).
    results = await asyncio.gather(*(_bots(v) for v in VARIANTS))
    for variant, (code, out, err) in zip(VARIANTS, results, strict=True):
        assert code == 0, f"{variant}: {err}"
        lines = out.splitlines()
        assert len(lines) == 2 and all(LINE.match(line) for line in lines), (variant, out)
        assert "2/2 matches finished" in err


async def test_a_match_over_websockets_replays_and_verifies(tmp_path: Path) -> None:
    async with EmbeddedServer() as srv, DaedalusHttp(srv.url) as http:
        games = {g["name"]: g for g in await http.games()}
        assert [v["name"] for v in games[GAME]["variants"]] == list(VARIANTS)
        created = await http.create_match(GAME, "minos", {"clock_scale": 0.01})
        assert created["options"]["maze"] is None
        match = created["match"]
        tokens = [(await http.claim_seat(match, f"P{seat}", seat))["token"] for seat in (0, 1)]
        conns = [MatchConnection(srv.url, match, token=t) for t in tokens]
        try:
            for conn in conns:
                await conn.connect()
            bots = [BOTS[GAME]["explorer"](random.Random(s)) for s in (0, 1)]
            finals = await asyncio.wait_for(
                asyncio.gather(*(play_bot(c, b) for c, b in zip(conns, bots, strict=True))),
                timeout=60,
            )
        finally:
            for conn in conns:
                await conn.close()
        assert finals[0]["ended"] and finals[0]["game_state"]["maze"] is not None
        entries = await http.log(match)
        log = tmp_path / "match.jsonl"
        log.write_bytes(b"\n".join(msgspec.json.encode(e) for e in entries) + b"\n")

    replay = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "clients.cli", "replay", str(log), "--verify",
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(replay.communicate(), timeout=60)
    assert replay.returncode == 0, err.decode()
    text = out.decode()
    assert "Turn 1:" in text and "The maze (8x8" in text and "Legend:" in text
    assert text.strip().splitlines()[-1].startswith(f"verify: ok ({len(entries)} entries")


async def test_quick_commands_are_paced_under_the_servers_rate_limit() -> None:
    """Sixty commands as fast as a bot can send them (the server drops frames beyond about
    20 a second, bursts of 40): the client paces them, so each gets its answer."""
    async with EmbeddedServer() as srv, DaedalusHttp(srv.url) as http:
        match = (await http.create_match(GAME, "crazy", {}))["match"]
        token = (await http.claim_seat(match, "Quick", 0))["token"]
        await http.claim_seat(match, "Idle", 1)
        async with MatchConnection(srv.url, match, token=token) as conn:
            await conn.wait_view(lambda v: v["started"], timeout=10)
            results = [
                await conn.send_command({"type": "move", "moves": "U"}, timeout=5) for _ in range(60)
            ]
        assert results[0].accepted
        assert all(not r.accepted and r.code == "cooldown" for r in results[1:])
