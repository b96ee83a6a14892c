"""The `daedalus` command as a new user meets it: the commands it prints run as printed,
leaving a match says how to come back (or to replay it), `help` fits the viewer and the
variant, refusals say what to do instead, `replay` and `serve` fail with a clear line.

Terminals are real `daedalus play` processes against an embedded server (as in
tests/test_play_e2e.py); `serve` runs as a process of its own."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shlex
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest

from clients import cli
from clients.bots import five_card_trick as fct_bots
from clients.client import DaedalusHttp
from clients.play import Session
from clients.terminal import TERMINALS
from server.main import EmbeddedServer
from tests.test_clients import _started_view, hand_made_log, write_log
from tests.test_play_e2e import Term

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
DAEDALUS = VENV_BIN / "daedalus"  # the console script the README's setup installs
SHORT = ("--option", "rounds=1", "--option", "max_rounds=1", "--option", "clock_scale=0.5")


def _env_without_daedalus_on_path() -> dict[str, str]:
    """The environment of a shell after the README's setup: the venv is not activated."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if p and not (Path(p) / "daedalus").exists()
    )
    return env


@asynccontextmanager
async def processes() -> AsyncIterator[Any]:
    """Start commands (argument lists) as terminals; every one is killed at the end."""
    procs: list[asyncio.subprocess.Process] = []

    async def start(label: str, argv: list[str], cwd: Path) -> Term:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=_env_without_daedalus_on_path(), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )
        procs.append(proc)
        return Term(proc, label)

    try:
        yield start
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


# --- the board after every round -------------------------------------------------------


class _Conn:
    """What Session.on_update reads of a MatchConnection."""

    def __init__(self, view: dict[str, Any], last_seq: int, queued: int) -> None:
        self.view = view
        self.last_seq = last_seq
        self.welcome = {"seq": 0}
        self.queued = queued

    def backlog(self) -> int:
        return self.queued


def test_the_board_is_drawn_for_the_latest_update_whatever_else_is_queued(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The player whose command closes a round gets the round's update and then its ack:
    the ack, still queued, did not stop the new board from being drawn."""
    view = _started_view()
    message = {"type": "update", "seq": 7, "ts": 0, "view": view, "events": []}
    session = Session(_Conn(view, last_seq=7, queued=1), TERMINALS["five-card-trick"], "m", "t", None)  # type: ignore[arg-type]
    assert session.on_update(message) is False
    assert "round 1 of 25" in capsys.readouterr().out
    # An update older than one already received is not drawn: the newer one will be.
    session = Session(_Conn(view, last_seq=8, queued=1), TERMINALS["five-card-trick"], "m", "t", None)  # type: ignore[arg-type]
    session.on_update(message)
    assert "round 1 of 25" not in capsys.readouterr().out


# --- printed commands, leaving, the end of a match --------------------------------------


def test_program_names_what_runs_this_daedalus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    script = tmp_path / "bin" / "daedalus"
    script.parent.mkdir()
    script.write_text("")
    monkeypatch.setattr(sys, "argv", [str(script)])
    monkeypatch.setenv("PATH", "/nonexistent")
    assert cli.program() == str(script.resolve())  # not on PATH: its path
    monkeypatch.setenv("PATH", str(script.parent))
    script.chmod(0o755)
    assert cli.program() == "daedalus"  # the one on PATH
    monkeypatch.setattr(sys, "argv", [str(ROOT / "clients" / "cli.py")])
    assert cli.program() == f"{shlex.quote(sys.executable)} -m clients.cli"


async def test_printed_commands_run_as_printed_and_leaving_says_how_to_come_back(tmp_path: Path) -> None:
    """The README's setup, then `.venv/bin/daedalus play` from another directory: the
    command printed for the other player, the one to rejoin, and the one to replay and
    verify at the end all run as printed, with no `daedalus` on PATH."""
    assert DAEDALUS.exists(), "the console script of `pip install -e .`"
    async with EmbeddedServer() as srv, processes() as start:
        await asyncio.wait_for(_printed_commands(srv.url, start, tmp_path), 90)


async def _printed_commands(url: str, start: Any, cwd: Path) -> None:
    ann = await start("Ann", [str(DAEDALUS), "play", "--server", url, "--name", "Ann", *SHORT], cwd)
    joins = shlex.split((await ann.expect(r"the other player joins with: (.+)$")).group(1))
    assert joins[0] == str(DAEDALUS), joins  # its own path: `daedalus` is not on PATH
    bob = await start("Bob", [*joins, "--name", "Bob"], cwd)
    await bob.expect(r"you are Bob in seat 1")
    await bob.expect(r"round 1 of 1")
    # Bob quits: he is told how to rejoin, and that command takes him back to his seat.
    await bob.type("quit")
    assert await bob.finish() == 0, bob.text()
    rejoin = bob.find(r"To rejoin: (.+ --token \S+)$", since=0)
    assert rejoin is not None, bob.text()
    assert rejoin.group(1).split()[-1] == bob.find(r"--token (\S+)$", since=0).group(1)  # type: ignore[union-attr]
    bob = await start("Bob again", shlex.split(rejoin.group(1)), cwd)
    await bob.expect(r"connected to match \S+ as the player in seat 1")

    await ann.type("score grow")
    await ann.expect(r"^ok$")
    await bob.type("claim block:steal")
    for term in (ann, bob):
        await term.expect(r"MATCH OVER")
        assert await term.finish() == 0, term.text()
        assert term.out[-1] == "match over.", term.text()
    replay = ann.find(r"^replay and verify it: (.+)$", since=0)
    assert replay is not None, ann.text()
    done = await asyncio.create_subprocess_exec(
        *shlex.split(replay.group(1)), cwd=cwd, env=_env_without_daedalus_on_path(),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(done.communicate(), 60)
    assert done.returncode == 0, err.decode()
    assert out.decode().splitlines()[-1].startswith("verify: ok"), out.decode()


async def test_ctrl_c_reminds_the_player_of_the_token() -> None:
    async with EmbeddedServer() as srv, DaedalusHttp(srv.url) as http, processes() as start:
        match = (await http.create_match("five-card-trick", None, {}))["match"]
        token = (await http.claim_seat(match, "Ann"))["token"]
        ann = await start(
            "Ann", [sys.executable, "-m", "clients.cli", "play", "--server", srv.url, "--match", match,
                    "--token", token], ROOT,
        )
        await ann.expect(r"waiting for seat\(s\) 1 to be taken")
        ann.proc.send_signal(signal.SIGINT)
        assert await ann.finish() == 130, ann.text()
        assert ann.find(rf"To rejoin: .* play --server \S+ --match {match} --token {token}$", since=0), ann.text()


# --- help --------------------------------------------------------------------------------


def test_help_lists_what_the_variant_allows_and_explains_the_dmo() -> None:
    fct = TERMINALS["five-card-trick"]
    dm12 = fct.help(_started_view("dm12"))
    assert "score grow" in dm12 and "DMO" in dm12 and "Death Match Opponent" in dm12
    for final_only in ("+overload", "claim claim", "claim_priority"):
        assert final_only not in dm12, dm12
    final = fct.help(_started_view("final"))
    assert all(word in final for word in ("+overload", "claim claim", "claim_priority", "unused items"))

    maze = TERMINALS["memory-maze"]
    assert "`pass`" in maze.help({"variant": "black-garnet", "game_state": {"turns": True}})
    assert "pass" not in maze.help({"variant": "crazy", "game_state": {"turns": False}})
    assert "pass" not in maze.help({"variant": "crazy"})


def test_a_spectators_help_lists_a_spectators_commands() -> None:
    view = _started_view(seat=None)  # type: ignore[arg-type]
    conn = _Conn(view, last_seq=0, queued=0)
    watcher = Session(conn, TERMINALS["five-card-trick"], "m", None, None)  # type: ignore[arg-type]
    text = watcher.help()
    assert "spectators cannot send commands" in text and "history" in text
    assert "score grow" not in text and "claim" not in text
    player = Session(conn, TERMINALS["five-card-trick"], "m", "token", None)  # type: ignore[arg-type]
    assert "score grow" in player.help()


# --- refusals that say what to do instead ----------------------------------------------


def test_play_token_without_match_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # No server answers on this port: a refusal must come before any request.
    assert cli.main(["play", "--server", "http://127.0.0.1:9", "--token", "x" * 32]) == 2
    assert "--match" in capsys.readouterr().err


async def test_joining_a_full_match_suggests_spectating() -> None:
    async with EmbeddedServer() as srv, DaedalusHttp(srv.url) as http:
        match = (await http.create_match("five-card-trick", None, {}))["match"]
        for name in ("Ann", "Bob"):
            await http.claim_seat(match, name)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "clients.cli", "play", "--server", srv.url, "--match", match, "--name", "Cat",
            cwd=ROOT, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 1
    text = err.decode()
    assert "match_started" in text, text
    assert re.search(rf"--match {match} --spectate$", text, re.M), text


# --- replay --------------------------------------------------------------------------------


def test_replay_of_a_missing_file_says_no_such_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for missing in (str(tmp_path / "match.jsonl"), "match.jsonl"):
        assert cli.main(["replay", missing, "--server", "http://127.0.0.1:9"]) == 1
        err = capsys.readouterr().err
        assert f"no such file: {missing}" in err, err
        assert "connect" not in err.lower(), err


def test_replay_prints_deadlines_as_times(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "hand.jsonl"
    write_log(log, hand_made_log())  # created at ts 10,000; round 1 opens at 11,000 for 60 s
    assert cli.main(["replay", str(log)]) == 0
    out = capsys.readouterr().out
    assert "Round 1 begins; submissions close at 00:01:11 UTC (+61.000s)." in out, out
    assert not re.search(r"\d{4,} ms", out), out


def test_a_failed_verify_is_said_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entries = hand_made_log()
    entries[6] = msgspec.structs.replace(entries[6], body=fct_bots.submit(2, ["score", "claim"]))
    log = tmp_path / "tampered.jsonl"
    write_log(log, entries)
    assert cli.main(["replay", str(log), "--verify"]) == 1
    failed = [line for line in capsys.readouterr().out.splitlines() if "FAILED" in line]
    assert len(failed) == 1 and failed[0].startswith("verify: FAILED at entry 7 (round 2)"), failed


# --- the parser ------------------------------------------------------------------------------


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    assert re.fullmatch(r"daedalus \S+\n", capsys.readouterr().out)


def test_every_flag_has_help_and_its_default() -> None:
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subparsers.choices.items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
                continue
            label = f"{name} {'/'.join(action.option_strings) or action.dest}"
            assert action.help, f"{label} has no help"
            if action.option_strings:
                assert "default" in action.help, f"{label} does not say its default: {action.help!r}"
        sub.format_help()  # every %(default)s expands
