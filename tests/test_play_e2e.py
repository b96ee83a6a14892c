"""`daedalus play` for a person, end to end, in Memory Maze and Keys to Success.

Every terminal is a real `python -m clients.cli play` subprocess against an embedded
server, driven through its stdin and read line by line from its stdout, as a person at
a terminal would (tests/test_cli_e2e.py does the same for Five-Card Trick). Keys to
Success's twelve other seats are bots in the test process, over real websockets.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from clients.bots import bot_factory, play_bot
from clients.client import DaedalusHttp, MatchConnection
from server.main import EmbeddedServer
from tests.mm_helpers import drawing, maze

ROOT = Path(__file__).resolve().parents[1]


class Term:
    """One `daedalus play` process: what it printed so far, and a keyboard.

    `expect` looks for a line from the mark on (the mark is set by `type` and `mark`),
    reading more output as needed, so what a command caused is found whatever order its
    lines came in."""

    def __init__(self, proc: asyncio.subprocess.Process, label: str) -> None:
        self.proc = proc
        self.label = label
        self.out: list[str] = []
        self.at = 0
        self.last = 0  # the line the latest `expect` found

    def mark(self) -> None:
        self.at = len(self.out)

    async def type(self, *lines: str) -> None:
        self.mark()
        assert self.proc.stdin is not None
        self.proc.stdin.write("".join(f"{line}\n" for line in lines).encode())
        await self.proc.stdin.drain()

    def find(self, pattern: str, since: int | None = None) -> re.Match[str] | None:
        start = self.at if since is None else since
        for i in range(start, len(self.out)):
            found = re.search(pattern, self.out[i])
            if found:
                self.last = i
                return found
        return None

    async def expect(self, pattern: str, timeout: float = 10) -> re.Match[str]:
        found = self.find(pattern)
        if found:
            return found
        assert self.proc.stdout is not None
        stdout = self.proc.stdout

        async def scan() -> re.Match[str]:
            while True:
                raw = await stdout.readline()
                if not raw:
                    raise AssertionError(f"{self.label}: no {pattern!r} before the end of:\n{self.text()}")
                self.out.append(raw.decode().rstrip("\n"))
                found = re.search(pattern, self.out[-1])
                if found:
                    self.last = len(self.out) - 1
                    return found

        try:
            return await asyncio.wait_for(scan(), timeout)
        except TimeoutError:
            raise AssertionError(f"{self.label}: no {pattern!r} within {timeout} s in:\n{self.text()}") from None

    async def finish(self, timeout: float = 10) -> int:
        """Read everything up to the process's exit; its exit code."""
        assert self.proc.stdout is not None
        rest = await asyncio.wait_for(self.proc.stdout.read(), timeout)
        self.out.extend(rest.decode().splitlines())
        return await asyncio.wait_for(self.proc.wait(), timeout)

    def text(self, upto: int | None = None) -> str:
        return "\n".join(self.out[:upto])

    def index(self, pattern: str) -> int:
        """The first line matching `pattern` (the number of lines if none does)."""
        return next((i for i, line in enumerate(self.out) if re.search(pattern, line)), len(self.out))


Launch = Callable[..., Awaitable[Term]]


@asynccontextmanager
async def terminals(url: str) -> AsyncIterator[Launch]:
    """Start `daedalus play --server url ...` processes; every one is killed at the end."""
    procs: list[asyncio.subprocess.Process] = []
    # Output to a pipe is block-buffered unless the command flushes it, as it must: run
    # it so whatever this shell has set (PYTHONUNBUFFERED would hide a missing flush).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}

    async def launch(label: str, *args: str) -> Term:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "clients.cli", "play", "--server", url, *args,
            cwd=ROOT, env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        procs.append(proc)
        return Term(proc, label)

    try:
        yield launch
    finally:  # a failed test leaves no client running
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


# --- Memory Maze: two people --------------------------------------------------------------

# The host's maze: open all round the edge, two walls inside (and their mirror images):
# above g6 (g6|g7, mirrored f7|g7) and above d4 (d4|d5, mirrored d4|e4).
MAZE = drawing(maze("black-garnet", walls=[("g6", "g7"), ("d4", "d5")]))
DRAWN = re.compile(r"^\s*\+[-+ ]+\+\s*$")  # a row of borders of a maze drawing


async def test_memory_maze_two_people_in_two_terminals() -> None:
    async with EmbeddedServer() as srv, terminals(srv.url) as launch:
        await asyncio.wait_for(_memory_maze(launch), 60)


async def _memory_maze(launch: Launch) -> None:
    ann = await launch(
        "Ann", "--game", "memory-maze", "--name", "Ann", "--option", "clock_scale=0.5",
        "--option", f"maze={MAZE}",
    )
    match = (await ann.expect(r"--match (\S+)$")).group(1)
    await ann.expect(r"created match \S+ \(memory-maze, black-garnet\)")
    await ann.expect(r"you are Ann in seat 0")
    await ann.expect(r"Type a sequence of moves")  # the help, printed on joining
    await ann.expect(r"waiting for seat\(s\) 1 to be taken")
    bob = await launch("Bob", "--match", match, "--name", "Bob")
    await bob.expect(r"you are Bob in seat 1")
    watcher = await launch("watcher", "--match", match, "--spectate")
    await watcher.expect(r"connected to match \S+ as a spectator")

    # Turn 1 is Ann's (seat 0 moves first, from a1; Bob starts on h8).
    await ann.expect(r"turn 1: your move")
    await ann.expect(r"turn 1: your move \(at most 100 moves\) · \d+ s left")
    await bob.expect(r"turn 1: Ann's move")
    await bob.expect(r"^\s+Ann \(A, from a1\) on a1 · corners: a8· h1· h8·")
    await watcher.expect(r"turn 1: Ann's move")

    # Out of turn, and a sequence in two styles: refused with a message saying why.
    await bob.type("up")
    await bob.expect(r"^! rejected \(not_your_turn\): ")
    await ann.type("up N")
    found = await ann.expect(r"^\? ")
    assert "N" in found.string and "up" in found.string, found.string
    # Left from a1 runs into the outer wall: a bonk, and everyone sees only that.
    await ann.type("L")
    await ann.expect(r"^ok$")
    await ann.expect(r"^\* you: L from a1 BONKED \(stays on a1\)$")
    for term in (bob, watcher):
        await term.expect(r"^\* Ann: L from a1 BONKED \(stays on a1\)$")
    await bob.expect(r"^\* turn 2: your move$")
    await watcher.expect(r"^\* turn 2: Bob's move$")

    # Bob bonks inside the maze (g7 down to g6 crosses a wall): nobody is told where.
    await bob.type("down left down")
    await bob.expect(r"^ok$")
    await bob.expect(r"^\* you: DLD from h8 BONKED \(stays on h8\)$")
    await ann.expect(r"^\* Bob: DLD from h8 BONKED \(stays on h8\)$")
    await ann.type("u u")
    await ann.expect(r"^\* you: UU from a1 -> a3$")
    await bob.expect(r"^\* Ann: UU from a1 -> a3$")
    await bob.type("pass")
    await bob.expect(r"^\* you: \(no moves\) from h8 -> h8$")
    await ann.expect(r"^\* Bob: \(no moves\) from h8 -> h8$")
    await ann.expect(r"^\* turn 5: your move$")

    # Black Garnet deletes a player's previous sequence when it submits a new one: the
    # view holds only the latest (the live lines above were the news of their time).
    await ann.type("view")
    await ann.expect(r"^      last: Bob: \(no moves\) from h8 -> h8$")
    shown = ann.out[ann.at :]
    assert not any("DLD" in line for line in shown), "\n".join(shown)
    # and `history` keeps nothing the rules deleted either
    await ann.type("history")
    await ann.expect(r"^\(this edition deletes each earlier sequence; the latest ones:\)$")
    await ann.expect(r"^Bob: \(no moves\) from h8 -> h8$")
    assert not any("DLD" in line for line in ann.out[ann.at :]), "\n".join(ann.out[ann.at :])
    await ann.type("help")
    await ann.expect(r"`pass` \(or `-`\) plays zero moves in a turn")

    # Round the edge: a8, h8, h1 and back home to a1 wins.
    await ann.type("north north north north north east east east east east east east "
                   "south south south south south south south west west west west west west west")
    await ann.expect(r"^ok$")
    await ann.expect(r"you: U{5}R{7}D{7}L{7} from a3 -> a1 \(got a8, h8, h1\)")
    for term in (ann, bob, watcher):
        await term.expect(r"game over: Ann wins \(all three corners and back to a1\)")
        await term.expect(r"MATCH OVER: Ann \(seat 0\) wins — all three corners and back to a1")
        # Now, and only now, the maze is shown: the host's drawing, row for row.
        await term.expect(r"^    \+ \+ \+ \+ \+ \+ \+-\+ \+$")
        assert await term.finish() == 0, term.text()
        assert term.out[-1] == "match over.", term.text()

    for term in (ann, bob, watcher):
        before_end = term.index(r"^\* game over: ")
        early = [line for line in term.out[:before_end] if DRAWN.match(line) or "revealed" in line]
        assert early == [], f"{term.label} saw the maze during play:\n{term.text()}"
        drawn = [line.strip() for line in term.out[before_end:] if DRAWN.match(line)]
        assert drawn == [row for row in MAZE.splitlines() if row.startswith("+")], term.text()
    # The spectator watched: it never had the player's help or a seat.
    assert watcher.find(r"Type a sequence of moves", since=0) is None
    assert watcher.find(r"you: ", since=0) is None


# --- Keys to Success: one person among twelve bots, and a spectator -----------------------

GAME = "keys-to-success"
# One Room with one door: one player a round gets through it and has escaped. A person
# who plays 2+2+3+3 (10) in round 1 outbids any bot (at most three cards, 8) and is the
# only first escaper; nine rounds of cards let at most nine through, so play ends with
# several losers and the person, the only winner, votes the Elimination Candidate.
OPTIONS = {"layout": "A:open", "clock_scale": 0.1, "vote_seconds": 90}  # 12 s rounds, a 9 s vote
BOT_SAYS = "b1 in Room 1, round {}"


class Chatty:
    """A bot that also says something in its level's channel every round it is in Room 1."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.said: int | None = None

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = self.inner.act(view)
        gs = view.get("game_state") or {}
        me = gs.get("me") or {}
        if (
            view.get("started") and not view.get("ended") and gs.get("phase") == "play"
            and me.get("depth") == 0 and self.said != gs["round"] and me.get("chats_left", 0) > 0
        ):
            self.said = gs["round"]
            out.insert(0, {"type": "chat", "text": BOT_SAYS.format(gs["round"])})
        return out

    def feedback(self, command: dict[str, Any], accepted: bool, warnings: Any, code: str | None) -> None:
        if command.get("type") != "chat":
            self.inner.feedback(command, accepted, warnings, code)


async def _keys_to_success(url: str, launch: Launch, *, watch: bool) -> tuple[Term, Term | None]:
    """Pat in a terminal (seat 0), twelve bots, and if `watch` a spectator terminal; the
    match played to its end. Pat's side is checked on the way."""
    async with DaedalusHttp(url) as http:
        created = await http.create_match(GAME, None, OPTIONS)
        match = created["match"]
        watcher = None
        if watch:
            watcher = await launch("watcher", "--match", match, "--spectate")
            await watcher.expect(r"^connected to match \S+ as a spectator$")
            await watcher.type("say hi")
            await watcher.expect(r"^spectators cannot send commands \(help, view, history, quit\)$")
        pat = await launch("Pat", "--match", match, "--name", "Pat")
        await pat.expect(r"^you are Pat in seat 0$")
        await pat.expect(r"^  say TEXT ")  # the help, printed on joining
        await pat.expect(r"waiting for seat\(s\) 1, 2, .* to be taken")

        lineup = ["heuristic" if s % 2 else "random" for s in range(1, 13)]
        tokens = [(await http.claim_seat(match, f"b{s}", s))["token"] for s in range(1, 13)]
        conns = [MatchConnection(url, match, token=t) for t in tokens]
        bots: list[Any] = [bot_factory(GAME, name)(random.Random(s)) for s, name in enumerate(lineup, 1)]
        bots[0] = Chatty(bots[0])
        try:
            for conn in conns:
                await conn.connect()
            playing = asyncio.gather(*(play_bot(c, b) for c, b in zip(conns, bots, strict=True)))
            try:
                await _pat_plays(pat)
                finals = await asyncio.wait_for(playing, 20)
            finally:
                playing.cancel()
        finally:
            for conn in conns:
                await conn.close()
        assert all(view["ended"] for view in finals)
        assert finals[0]["result"]["winner"] == 0
    if watcher is not None:
        await watcher.expect(r"^  MATCH OVER: winners: seat 0; ")
        assert await watcher.finish() == 0, watcher.text()
        assert watcher.out[-1] == "match over.", watcher.text()
    return pat, watcher


async def _pat_plays(pat: Term) -> None:
    await pat.expect(r"^\* round 1 begins in Room 1$")
    await pat.expect(r"· round 1 · play · \d+ s left$")
    await pat.expect(r"^  you: Room 1 · key-cards: 1 1 1 1 2 2 2 3 3 · garnets 0 · Pass doors 0$")
    await pat.expect(r"^  in Room 1: Pat, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12$")
    await pat.expect(r"^  doors: A\[O\]$")
    await pat.expect(rf"^\* \[Room 1\] b1: {BOT_SAYS.format(1)}$")  # its level's chat

    await pat.type("say hello from Pat")
    await pat.expect(r"^ok$")
    await pat.expect(r"^\* \[Room 1\] Pat: hello from Pat$")
    await pat.type("B 1")
    await pat.expect(r"^\? 'B' is neither a gate of your level \(A\) nor a card 1, 2, 3$")
    await pat.type("A 3 3 3")
    await pat.expect(r"^! rejected \(not_held\): you do not hold 3, 3, 3 \(you hold 1, 1, 1, 1, 2, 2, 2, 3, 3\)$")
    await pat.type("a 3 3 2 2")
    await pat.expect(r"^ok$")
    await pat.expect(r"^\* you submitted 2\+2\+3\+3 at A$")
    await pat.expect(r"^\* round 1 in Room 1:$")
    await pat.expect(r"^\*   Pat: 4 card\(s\) used, entered A$")
    await pat.expect(r"^\*   b1: \d card\(s\) used, stayed$")
    await pat.expect(r"^\* round 2 begins in Room 2$")
    escaped = pat.last
    await pat.type("history")  # what this terminal was shown, from the start
    await pat.expect(r"^\[Room 1\] Pat: hello from Pat$")

    ended = await pat.expect(r"^\* play is over after round \d: winners Pat, losers (b\d+(?:, b\d+)+)$")
    losers = [int(name[1:]) for name in ended.group(1).split(", ")]
    # The vote window is under 10 s: the terminal says so, and that Pat, a winner, has
    # not voted (not that he, who has nothing to submit any more, has not submitted).
    # (The reminder follows the latest view, which may come before the lines of the
    # update that brought it.)
    pat.at = escaped
    await pat.expect(r"^\(\d+ s left, and you have not voted\)$")
    assert "not submitted" not in pat.text()[len(pat.text(escaped)) :], pat.text()
    await pat.type("vote 0")
    await pat.expect(r"^! rejected \(not_a_loser\): ")
    await pat.type(f"vote {losers[-1]}")
    await pat.expect(r"^ok$")
    await pat.expect(
        rf"^\* game over: winners: seat 0; losers: seats [\d, ]+; "
        rf"Elimination Candidate: seat {losers[-1]} \(by the winners' vote\)$"
    )
    await pat.expect(rf"^  Elimination Candidate: b{losers[-1]} \(vote\)$")
    await pat.expect(r"^  MATCH OVER: winners: seat 0; ")
    assert await pat.finish() == 0, pat.text()
    assert pat.out[-1] == "match over.", pat.text()


def play_over(term: Term) -> int:
    """The first line of the update that ended play: from there on everyone sees
    everything (starting with the last round's results in full)."""
    return min(term.index(r"^\* round \d+ results:$"), term.index(r"^\* play is over"))


async def test_keys_to_success_one_person_among_twelve_bots() -> None:
    async with EmbeddedServer() as srv, terminals(srv.url) as launch:
        pat, _ = await asyncio.wait_for(_keys_to_success(srv.url, launch, watch=False), 60)
    # Once out of Room 1 Pat hears nothing of it: not b1's chat there in later rounds,
    # until play is over.
    during = pat.text(play_over(pat))
    assert re.findall(r"b1 in Room 1, round \d", during) == [BOT_SAYS.format(1)] * len(
        re.findall(r"b1 in Room 1, round 1", during)
    ), during
    # Others' plays (gates, card values) are never shown during play: only how many
    # cards each member of Pat's level used, and who entered.
    assert not re.search(r"^\*? *Room 1: b\d+: |→", during, re.M), during
    assert re.search(r"^\*   b\d+: \d card\(s\) used, stayed$", during, re.M), during


async def test_keys_to_success_spectator_terminal_sees_only_the_public_part() -> None:
    async with EmbeddedServer() as srv, terminals(srv.url) as launch:
        pat, watcher = await asyncio.wait_for(_keys_to_success(srv.url, launch, watch=True), 60)
    assert watcher is not None
    # After play, everything: the results, the last round in full, the chat.
    assert watcher.find(r"^\* play is over after round \d: winners Pat, losers b\d+", since=0), watcher.text()
    assert watcher.find(r"^\*   Room 1: b\d+: .* with .* → ", since=0), watcher.text()
    during = watcher.out[: play_over(watcher)]
    text = "\n".join(during)
    assert re.search(r"^\* Pat takes seat 0$", text, re.M), text
    assert re.search(r"^\* round 1 begins$", text, re.M), text
    assert re.search(r"^\* round 1 is over$", text, re.M), text
    assert re.search(r"^== keys-to-success · match \S+ · round \d · play", text, re.M), text
    # Nothing of a level, a hand, a submission, a chat or a result per player (which
    # Pat's terminal did show).
    assert all(shown in pat.text() for shown in ("[Room 1] Pat: hello from Pat", "you submitted"))
    for secret in ("hello from Pat", "b1 in Room", "[Room", "in Room", "you:", "submitted",
                   "card(s) used", "entered", "key-cards", "Pat:"):
        assert secret not in text, f"the spectator saw {secret!r}:\n{text}"


# --- a host watching its own Labyrinth plan -------------------------------------------------

LABYRINTH_PLAN = ROOT / "domain" / "games" / "labyrinth" / "plans" / "example.txt"


async def test_a_host_creates_a_match_on_its_plan_and_watches_it_with_the_full_view() -> None:
    async with EmbeddedServer() as srv, terminals(srv.url) as launch:
        host = await launch("host", "--host", "--game", "labyrinth", "--option", f"plan=@{LABYRINTH_PLAN}",
                            "--option", "players=2")
        match = (await host.expect(r"^created match (\S+) \(labyrinth")).group(1)
        key = (await host.expect(r"audit key \(keep it secret\): ([0-9a-f]{64})$")).group(1)
        await host.expect(rf"--match {match} --audit {key}$")
        await host.expect("as an auditor, with the full view")
        assert host.find("you are ") is None, "a host takes no seat"
        await host.type("quit")
        await host.expect(rf"to watch again as its host: .* --match {match} --audit {key}$")
        assert await host.finish() == 0
        again = await launch("again", "--match", match, "--audit", key)
        await again.expect("as an auditor, with the full view")
        await again.type("quit")
        assert await again.finish() == 0
        wrong = await launch("wrong", "--match", match, "--audit", "0" * 64)
        await wrong.expect("bad_audit_key")
        assert await wrong.finish() != 0
        drawn = await launch("drawn", "--host", "--game", "labyrinth", "--option", "players=2")
        await drawn.expect("match_not_over: the full view opens when the match is over .*drawn from its seed")
        assert await drawn.finish() != 0
        async with DaedalusHttp(srv.url) as http:
            assert (await http.status(match))["seats"][0]["name"] is None
