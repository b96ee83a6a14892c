"""The clients against a real server: `daedalus bots` through the embedded server, and
the client library's resume, duplicate ids and spectators over real websockets."""

from __future__ import annotations

import asyncio
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from clients.bots import bot_factory, play_bot
from clients.client import DaedalusHttp, HttpError, MatchConnection
from clients.replay import verify_entries
from server.main import EmbeddedServer

ROOT = Path(__file__).resolve().parents[1]
GAME = "five-card-trick"
LINE = re.compile(r"^match [A-Za-z0-9_-]+ winner=(0|1|draw) rounds=\d+$")


def test_bots_command_plays_matches_through_the_embedded_server() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "clients.cli", "bots", GAME, "--matches", "2", "--clock-scale", "0.01",
         "--seed", "7"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2, done.stdout
    assert all(LINE.match(line) for line in lines), lines
    assert "bots: line-up heuristic random (the game's default" in done.stderr


async def _play_with_a_drop(url: str, match: str, token: str, bot: Any) -> list[int]:
    """Play a seat like play_bot, but cut the socket in round 3; the update seqs seen."""
    seqs: list[int] = []
    dropped = False
    async with MatchConnection(url, match, token=token) as conn:
        async for message in conn:
            if message["type"] == "update":
                seqs.append(message["seq"])
            view = conn.view
            if view is None or conn.backlog():
                continue
            if view["ended"]:
                break
            if not dropped and view["game_state"]["round"] == 3:
                dropped = True
                await conn.drop()
                assert conn.resumes == 1 and not conn.closed
            for command in bot.act(view):
                result = await conn.send_command(command)
                bot.feedback(command, result.accepted, result.warnings, result.code)
                assert result.accepted, result
    assert dropped
    return seqs


async def test_connection_resumes_after_a_drop_and_logs_verify() -> None:
    async with EmbeddedServer() as srv, DaedalusHttp(srv.url) as http:
        games = await http.games()
        assert any(g["name"] == GAME for g in games)
        created = await http.create_match(GAME, "dm12", {"clock_scale": 0.05, "rounds": 6, "max_rounds": 6})
        match = created["match"]
        tokens = [(await http.claim_seat(match, f"P{seat}", seat))["token"] for seat in (0, 1)]
        bots = [bot_factory(GAME, name)(random.Random(seat)) for seat, name in enumerate(("heuristic", "random"))]

        other = MatchConnection(srv.url, match, token=tokens[1])
        await other.connect()
        try:
            seqs, final = await asyncio.wait_for(
                asyncio.gather(_play_with_a_drop(srv.url, match, tokens[0], bots[0]), play_bot(other, bots[1])),
                timeout=60,
            )
        finally:
            await other.close()
        assert final["ended"] and final["result"]["rounds"] >= 6
        assert seqs == sorted(set(seqs)), "an update was repeated or came out of order"

        # A fresh connection from the start sees exactly the same entries.
        async with MatchConnection(srv.url, match, token=tokens[0]) as again:
            assert again.welcome is not None
            fresh: list[int] = []
            while not fresh or fresh[-1] < again.welcome["seq"]:
                message = await asyncio.wait_for(again.recv(), 10)
                if message is not None and message["type"] == "update":
                    assert message["view"]["ended"], "a catch-up carries the view as it is now"
                    fresh.append(message["seq"])
        assert fresh == seqs == list(range(1, len(seqs) + 1))

        entries = await http.log(match)
        checked = verify_entries(entries)  # (the public log: what stays sealed withheld)
        assert checked.ok, checked.failure
        assert checked.commitment == created["commitment"]

        replay = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "clients.cli", "replay", match, "--server", srv.url, "--verify",
            cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(replay.communicate(), timeout=60)
        assert replay.returncode == 0, err.decode()
        assert out.decode().strip().splitlines()[-1] == (
            f"verify: ok ({len(entries)} entries, commitment {created['commitment']})"
        )


async def test_duplicate_ids_spectators_and_errors() -> None:
    async with EmbeddedServer() as srv, DaedalusHttp(srv.url) as http:
        created = await http.create_match(GAME, None, {"clock_scale": 0.5})
        match = created["match"]
        try:
            await http.log(match)
        except HttpError as exc:
            assert (exc.status, exc.code) == (409, "match_not_over")
        else:
            raise AssertionError("the log of a running match was served")
        seat0 = await http.claim_seat(match, "Ann")
        seat1 = await http.claim_seat(match, "Bob")
        assert (seat0["seat"], seat1["seat"]) == (0, 1)
        try:
            await http.claim_seat(match, "Cat")
        except HttpError as exc:
            assert exc.status == 409
        else:
            raise AssertionError("a third seat was claimed")

        async with (
            MatchConnection(srv.url, match, token=seat0["token"]) as ann,
            MatchConnection(srv.url, match) as watcher,
        ):
            assert (ann.role, ann.seat) == ("player", 0)
            assert (watcher.role, watcher.seat) == ("spectator", None)
            view = await ann.wait_view(lambda v: v["started"], timeout=10)
            command = {"type": "submit", "round": view["game_state"]["round"], "actions": ["score", "grow"],
                       "block": None, "items": []}
            first = await ann.send_command(command, id="same-id")
            again = await ann.send_command(command, id="same-id")
            assert first.accepted and not first.duplicate
            assert again.accepted and again.duplicate and again.seq == first.seq
            stale = await ann.send_command({**command, "round": 99})
            assert not stale.accepted and stale.code == "wrong_round"
            refused = await watcher.send_command(command)
            assert not refused.accepted and refused.code == "not_a_player"
            status = await http.status(match)
            assert status["you"] is None and status["seq"] >= first.seq
            assert status["game_state"]["seats"][0]["submitted"] is True
            assert status["game_state"]["seats"][0]["pending"] is None  # hidden from spectators

        bad = MatchConnection(srv.url, match, token="not-a-token")
        try:
            await bad.connect()
        except Exception as exc:
            assert getattr(exc, "code", None) == "bad_token"
        else:
            raise AssertionError("a bad token was welcomed")


async def _read_until(stream: asyncio.StreamReader, pattern: str, seen: list[str], timeout: float = 20) -> re.Match[str]:
    async def scan() -> re.Match[str]:
        while True:
            raw = await stream.readline()
            if not raw:
                raise AssertionError(f"no {pattern!r} in:\n" + "".join(seen))
            seen.append(raw.decode())
            found = re.search(pattern, seen[-1])
            if found:
                return found

    return await asyncio.wait_for(scan(), timeout)


async def test_play_two_people_in_the_terminal() -> None:
    procs: list[asyncio.subprocess.Process] = []
    async with EmbeddedServer() as srv:
        async def play(*args: str) -> Any:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "clients.cli", "play", "--server", srv.url, *args,
                cwd=ROOT, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            procs.append(proc)
            return proc

        try:
            await _two_people_play(play)
        finally:  # a failed test leaves no client running
            for proc in procs:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()


async def _two_people_play(play: Any) -> None:
    ann = await play("--name", "Ann", "--option", "rounds=1", "--option", "max_rounds=1")
    ann_out: list[str] = []
    found = await _read_until(ann.stdout, r"--match (\S+)$", ann_out)
    match = found.group(1)
    await _read_until(ann.stdout, r"waiting for seat", ann_out)
    bob = await play("--match", match, "--name", "Bob")
    bob_out: list[str] = []
    await _read_until(bob.stdout, r"round 1 of 1", bob_out)
    await _read_until(ann.stdout, r"round 1 of 1", ann_out)

    ann.stdin.write(b"s grow\nscore grow\n")
    await ann.stdin.drain()
    await _read_until(ann.stdout, r"could be Score, Steal", ann_out)
    await _read_until(ann.stdout, r"^ok$", ann_out)
    bob.stdin.write(b"claim block:steal\n")
    await bob.stdin.drain()
    await _read_until(bob.stdout, r"MATCH OVER: Bob \(seat 1\) wins", bob_out)
    await _read_until(ann.stdout, r"Bob: Claim \[resolved\], Block\(Steal\) \[resolved\]", ann_out)
    for proc in (ann, bob):
        assert await asyncio.wait_for(proc.wait(), 20) == 0
