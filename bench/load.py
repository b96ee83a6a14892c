"""Load on a real server: K concurrent bot matches over websockets, a real redis-server.

    .venv/bin/python bench/load.py [--game five-card-trick|keys-to-success] [-k 200]
                                   [--rate 1000] [--warmup 5] [--duration 20] [--clients 2] [--appendfsync everysec] [--only closed|open]
                                   [--workers N [--no-route]] [--updates view|events]

Everything runs on loopback, as separate processes: a `redis-server` on a free port
(a temporary directory, AOF with the chosen fsync policy, no RDB snapshots), the server
(`python -m clients.cli serve --redis-url ... --port ...`, the `daedalus serve` command,
logging as deployed; `--workers N`: N server processes on the port, `daedalus serve --workers N`,
each connection served by its match's worker as the clients name the match in the URL, or
where the kernel put it with `--no-route`: server/route.py)
and `--clients` bot processes sharing the K matches between them.
Each match is Five-Card Trick (dm12) with the clock at its real pace (60 s rounds,
clock_scale 1) and the end pushed to round 1000, so no deadline and no match end falls
in the measurement. Each bot seat has its own websocket and speaks the protocol of
docs/protocol.md (a lean client, bench/leanws.py: an asyncio protocol on uvloop, each message handled in
the callback of its data, the view decoded only when a bot looks at it, and only as much of it
as the bot reads (a random Five-Card Trick bot: `bot_view_of`); a Five-Card Trick bot is
asked once a round and after a rejection); bots are `clients.bots` bots (random by default: cheap for the
client processes, which share the machine with the server). With `--updates events` the seats'
hello asks for updates without the view (docs/protocol.md): each seat keeps the welcome's view
up to date from the events itself (`follow_events`), as a client with its own model does, and
asks for the view only after a rejection; a Keys to Success seat asks for its view after the
updates that may make its bot act (a round begins or ends, the vote, the end) and adds its
level's chat messages to the view it has. The server's frame limits are raised for every run
(its bots play a dozen rounds a second).

Two phases, each against a fresh server process (redis flushed in between):

- closed loop: every bot answers at once on each update (so a match always has its next
  command in flight). Reported: the commands acked per second over the window.
- open loop: each match sends its commands on a fixed timetable (seat 0's submission, then
  seat 1's, `K/rate` s apart, so a round every `2K/rate` s, with a random phase per
  match), so the K matches together offer `--rate` commands a second whatever the
  server does. A command is sent
  at its slot, or when its round is in play if that comes later (counted as `late`).
  Latency: from the send of the command that completes a round (the second submission,
  the one whose ack carries the round_resolved entry's seq) to that round's
  round_resolved update having reached both players. Reported: p50 and p99 in ms.

Each phase: set-up (create matches, claim seats, connect), `--warmup` seconds, then the
`--duration`-second window that is measured. Server, redis and client CPU are read from
/proc/<pid>/stat (utime+stime) over the window.

`--game keys-to-success` (default K=20 matches = 260 websockets, default rate 300/s: a
13-seat match is 6.5 times the connections of a Five-Card Trick match, and its bot
clients share the 2 cores): each match has 13 seats (variants keys-to-success and
gatekeeping alternating), the real clock (120 s rounds that close as soon as everyone
still in play has submitted, so no deadline falls in the window), random bots by
default (chat, submissions, votes). A match lasts at most nine rounds plus its vote, so
each of the K slots replaces an ended match at once by a new one (create, 13 seats,
13 connections: that set-up is part of the measured load, and its count is printed).
Closed loop as above. Open loop: each match sends one command every `K/rate` s, from
the next seat (in turn) that has one to send; latency: from the send of the command
that completes a round (the last submission, found in the sender's own stream: its
ack's seq is the update carrying the round_resolved) to that round's round_resolved
having reached every player still in play (a player who escaped earlier sees none).

`--callgrind PREFIX` runs the server under valgrind's callgrind, counting nothing until
the window and then every instruction of the server's process (Python's, the C
libraries', not the kernel's) until its end, and prints them per acked command. Unlike
the CPU time, that count hardly depends on what else the machine does (two runs of the
same code: within about 2%), so a change of a few per cent shows in one pair of runs
(`--server-root` for the code before it). The server runs some 25 times slower under it:
use a few matches (`-k 20`) and a longer `--setup-timeout`; at that pace every turn of
its loop is full, as on a saturated server.

`--bytecodes PREFIX` runs the server through bench/bytecodes.py, which counts the
bytecodes each of its Python functions runs over the window, and the calls, and prints
them a command (the functions that ran the most, and the files): the same whatever the
machine's speed, for a change of a few bytecodes where `--callgrind`'s count moves with
how many commands a turn of the server's loop gathers.

`--perf PREFIX` samples the server's processes over the window with perf's software
clock (which a virtual machine without the CPU's counters has too) and prints the share
of the samples by native code: the interpreter's own, the kernel's, msgspec's, libc's,
uvloop's, the hashing's and the signatures', and the functions that took the most. It
counts time, not instructions: what a command's memory costs (an allocation, an object
freed, a cold cache line) shows there and not under callgrind.

The last line is `commands/s=<closed loop> p50_ms=<open loop> p99_ms=<open loop> rate=<offered>`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import multiprocessing as mp
import os
import random
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bytecodes import report as bytecodes_report  # noqa: E402
from bench.leanws import LeanSocket  # noqa: E402
from bench.machine import interpreter  # noqa: E402

GAME = "five-card-trick"
CLK_TCK = os.sysconf("SC_CLK_TCK")


# --- processes ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port} within {timeout} s")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine_ticks() -> list[int]:
    """The machine's CPU time by kind (/proc/stat: user nice system idle iowait irq softirq steal)."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:9]]


def stop_process(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


class Redis:
    def __init__(self, workdir: str, appendfsync: str) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.port = free_port()
        self.dir = os.path.join(workdir, "redis")
        os.mkdir(self.dir)
        aof = ["--appendonly", "no"] if appendfsync == "off" else [
            "--appendonly", "yes", "--appendfsync", appendfsync]
        self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--dir", self.dir, *aof],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_port(self.port, self.proc, "redis-server")
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def flush(self) -> None:
        import redis

        client = redis.Redis.from_url(self.url)
        client.flushall()
        client.close()

    def stop(self) -> None:
        stop_process(self.proc)
        self.proc = None


API_KEY = "bench-load-key"
AUTH = {"Authorization": f"Bearer {API_KEY}"}


class Server:
    def __init__(
        self, redis_url: str, workdir: str, name: str, log_level: str | None, workers: int = 1,
        root: Path = ROOT, wrapper: Sequence[str] = (),
    ) -> None:
        self.port = free_port()
        self.log_path = os.path.join(workdir, f"server-{name}.log")
        env = dict(os.environ)
        env.pop("REDIS_URL", None)
        # Its clients create K matches from one address at once: with an API key they are
        # not held to the per-address creation limit (server/limits.py).
        env["DAEDALUS_API_KEYS"] = API_KEY
        # Its bots play at machine speed: a seat sends a command a round (and, with
        # --updates events, a view request), a dozen rounds a second and more, above the
        # default 20 frames a second a seat; the limit is raised for every run alike.
        env["DAEDALUS_FRAME_RATE"] = "1000"
        env["DAEDALUS_FRAME_BURST"] = "2000"
        if log_level:
            env["DAEDALUS_LOG_LEVEL"] = log_level
        with open(self.log_path, "wb") as log:
            self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [*wrapper, sys.executable, "-m", "clients.cli", "serve", "--host", "127.0.0.1",
                 "--port", str(self.port), "--redis-url", redis_url, "--workers", str(workers)],
                cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
            )
        wait_port(self.port, self.proc, "the server", timeout=600 if wrapper else 30)
        self.url = f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def pids(self) -> list[int]:
        """The server's process and, with --workers N > 1, its N workers (its children)."""
        try:
            with open(f"/proc/{self.pid}/task/{self.pid}/children") as f:
                return [self.pid, *(int(x) for x in f.read().split())]
        except OSError:
            return [self.pid]

    def cpu_seconds(self) -> float:
        return sum(cpu_seconds(pid) for pid in self.pids())

    def stop(self) -> None:
        stop_process(self.proc)
        self.proc = None


# --- the bot client processes -----------------------------------------------------------------


@dataclass
class PhaseConfig:
    mode: str  # "closed" | "open"
    url: str
    matches: int
    rate: float  # commands/s offered by all the K matches together (open loop)
    total_matches: int
    rounds: int
    bots: tuple[str, ...]
    seed: str
    index: int  # of this client process
    game: str = GAME
    client_loop: str = "uvloop"  # the client processes' event loop: "uvloop" or "asyncio"
    route: bool = True  # the match in the websocket's URL (a worker of several serves it)
    updates: str = "view"  # the hello's "updates": "view" or "events"


@dataclass
class Stats:
    acked: int = 0  # acks arriving in the window
    per_second: list[int] = field(default_factory=list)  # acks in each second of the window
    sent: int = 0  # commands sent in the window
    late: int = 0  # open loop: sends later than their slot (round not yet in play)
    rejected: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)  # seconds, completing send in window
    matches: int = 0
    ended: int = 0
    started: int = 0  # keys-to-success: matches set up in the window to replace ended ones
    setup_s: float = 0.0
    cpu_s: float = 0.0  # this process's CPU over the window


class Event(msgspec.Struct):
    """What a seat reads of an update's event (a resolved round's seats kept as their
    bytes: read only by a seat that follows the view from the events, `follow_events`)."""

    type: str = ""
    round: Any = None
    seat: Any = None
    seats: msgspec.Raw = msgspec.Raw()
    pot_after: Any = None
    deadline: Any = None
    until: Any = None
    replays: Any = None


class _MessageFields(msgspec.Struct):
    """What a seat reads of a server message but its view."""

    type: str
    seq: Any = None
    id: Any = None
    code: Any = None
    warnings: Any = None
    events: list[Event] = []


class Message(_MessageFields):
    """What a seat reads of a server message: the view is kept as its bytes, decoded only
    when a bot looks at it (most updates it never does: `Seat.act_now`)."""

    view: msgspec.Raw = msgspec.Raw()  # (empty: the message has none)


class _PeekState(msgspec.Struct):
    round: Any = None


class Peek(msgspec.Struct):
    """The few fields of a view read on every update (the rest skipped, not decoded)."""

    started: bool = False
    ended: bool = False
    game_state: _PeekState | None = None


_decode_view = msgspec.json.Decoder().decode


class PeekedMessage(_MessageFields):
    """What a Five-Card Trick seat on whole views reads of a server message: `Message`,
    with the view's few fields of `Peek` read in the same pass and the rest of the view
    skipped (neither kept as its bytes nor scanned again for the peek: the view a bot
    reads is decoded from the frame's bytes once a round, when the bot is asked)."""

    view: Peek | None = None


# What a random Five-Card Trick bot (clients/bots/five_card_trick.py, RandomBot: the
# bench's default) reads of a view, as dicts (TypedDicts: plain dicts, the fields not
# named here skipped, not decoded): a view decoded whole once a round, and dropped at the
# next update, was half of a bench client's CPU a command with whole views (its terms,
# its last round, the options). tests/test_leanws.py holds the bot's commands on these
# against its commands on the whole view.
class _RandomBotSeat(TypedDict, total=False):
    history: dict[str, Any]
    chips: int
    lights: list[str]
    limit_reset_last: bool
    blocked: list[str]
    items: list[str]
    used_items: list[str]
    claim_priority_available: bool
    submitted: bool


class _RandomBotGame(TypedDict, total=False):
    variant: str
    round: Any
    pot: int
    end_round: int
    max_rounds: int
    over: Any
    seats: list[_RandomBotSeat]


class _RandomBotView(TypedDict, total=False):
    you: Any
    started: bool
    ended: bool
    game_state: _RandomBotGame


class _ViewOf(msgspec.Struct):
    """An update frame's view (the rest of the frame skipped)."""

    view: dict[str, Any] = {}


class _RandomBotViewOf(msgspec.Struct):
    view: _RandomBotView = {}


_decode_view_of: dict[str, Callable[[bytes], Any]] = {
    "random": msgspec.json.Decoder(_RandomBotViewOf).decode,
}
"""A bot's name -> what reads the view it acts on from an update frame's bytes (a bot
not named here: the whole view)."""
_decode_whole_view_of = msgspec.json.Decoder(_ViewOf).decode


def bot_view_of(bot: str, frame: bytes) -> dict[str, Any]:
    """The view `frame` (an update, a welcome) carries, as much of it as bot `bot` reads."""
    return _decode_view_of.get(bot, _decode_whole_view_of)(frame).view  # type: ignore[no-any-return]


class _SeatOutcome(msgspec.Struct):
    """What `follow_events` reads of a seat's part of a resolved round (the rest of it
    skipped, not decoded)."""

    effective: Any = None
    chips: Any = None
    lights: Any = None
    blocked_next: Any = None


_decode_outcomes = msgspec.json.Decoder(list[_SeatOutcome]).decode


def follow_events(view: dict[str, Any], events: list[Event]) -> None:
    """Bring a Five-Card Trick player's view (dm12, setnas-curse, gauntlet: no items) up
    to date with an update's events, in place, as far as a bot reads it (the round, the
    pot, each seat's chips, lights, blocked actions, last two rounds and whether it has
    submitted; the end): what a client on `"updates": "events"` that keeps its own model
    does instead of asking for the view (docs/protocol.md). tests/test_leanws.py holds it
    against the server's views."""
    gs = view["game_state"]
    for event in events:
        kind = event.type
        if kind == "submitted":
            gs["seats"][event.seat]["submitted"] = True
        elif kind == "round_resolved":
            for seat, out in zip(gs["seats"], _decode_outcomes(event.seats), strict=True):
                history = seat["history"]
                history["r-2"], history["r-1"] = history["r-1"], out.effective
                seat["chips"] = out.chips
                seat["lights"] = out.lights
                seat["blocked"] = out.blocked_next
                seat["submitted"] = False
                seat["pending"] = None
            gs["pot"] = event.pot_after
            gs["replays"] = 0
            gs["deadline"] = None
        elif kind == "round_started":
            gs["round"] = event.round
            gs["deadline"] = event.deadline
        elif kind == "round_replayed":
            gs["deadline"] = event.deadline
            gs["replays"] = event.replays
        elif kind == "extended":
            gs["end_round"] = event.until
        elif kind == "game_over":
            gs["over"] = True
            gs["deadline"] = None
        elif kind == "match_ended":
            view["ended"] = True


class Seat:
    """One bot seat on its own websocket (bench/leanws.py): each server message is handled
    in the callback of the data that completed it, and a command is sent from there."""

    # Whether the seat, on whole views, reads each message as a PeekedMessage (below); a
    # seat that reads its views otherwise says False (Message, the view kept as its bytes).
    PEEKS = True

    def __init__(self, match: Match, seat: int, token: str, bot: Any, bot_name: str = "") -> None:
        self.frame = b""  # the latest update's bytes
        self.match = match
        self.worker = match.worker
        self.seat = seat
        self.token = token
        self.bot = bot
        self.ws: LeanSocket | None = None
        self.view_raw: msgspec.Raw | None = None
        self._view: dict[str, Any] | None = None
        self.peek: Peek | None = None
        self.asked: tuple[bool, Any] | None = None  # (started, round) the bot was last asked at
        self.live = False  # the phase has begun: updates are acted on (closed loop)
        self.closed_loop = self.worker.cfg.mode == "closed"
        self.last_seq = 0
        self.round_at: dict[int, int] = {}  # own seq -> round resolved in that update
        self.pending: dict[str, tuple[dict[str, Any], float, bytes]] = {}
        self.resend_at: asyncio.TimerHandle | None = None
        self.changed = asyncio.Event()
        self.welcomed: asyncio.Future[None] | None = None
        self.ids = itertools.count(1)
        self.prefix = f"b{match.index}s{seat}"
        # "updates": "events": no view in the updates; the seat keeps the welcome's view up
        # to date from the events (follow_events), and asks for the view (`view`) only
        # after a rejection.
        self.bare = self.worker.cfg.updates == "events"
        # With whole views: each message read as a PeekedMessage, and the view the bot
        # acts on read from the latest update's bytes (`view_frame`), as much of it as the
        # bot reads (bot_view_of).
        self.peeking = self.PEEKS and not self.bare
        self.decode: Callable[[bytes], Any] = (
            self.worker.decode_peeked if self.peeking else self.worker.decode
        )
        self.bot_name = bot_name
        self.view_frame: bytes | None = None

    @property
    def view(self) -> dict[str, Any] | None:
        """The latest update's view (decoded once, when first asked for)."""
        if self._view is None:
            if self.view_frame is not None:
                self._view = bot_view_of(self.bot_name, self.view_frame)
            elif self.view_raw is not None:
                self._view = _decode_view(self.view_raw)
        return self._view

    async def connect(self, ws_url: str) -> None:
        if self.worker.cfg.route:  # as clients/client.py does
            ws_url = f"{ws_url}?match={self.match.id}"
        self.welcomed = asyncio.get_running_loop().create_future()
        self.ws = await LeanSocket.connect(ws_url, self.receive, timeout=60)
        hello = {"type": "hello", "match": self.match.id, "token": self.token, "since": 0}
        if self.bare:
            hello["updates"] = "events"
        self.ws.send(self.worker.encode(hello))
        await asyncio.wait([self.welcomed, self.ws.closed], timeout=60,
                           return_when=asyncio.FIRST_COMPLETED)
        if not self.welcomed.done():
            self.ws.abort()
            raise RuntimeError(f"no welcome (close code {self.ws.close_code})")
        self.welcomed.result()

    async def read(self) -> None:
        """Act on updates from now on; return when the connection is gone."""
        self.live = True
        assert self.ws is not None
        await self.ws.closed

    def send_now(self, command: dict[str, Any]) -> None:
        cid = f"{self.prefix}-{next(self.ids)}"
        frame = self.worker.encode({"type": "command", "id": cid, "command": command})
        now = time.monotonic()
        self.pending[cid] = (command, now, frame)
        self.worker.count_send(now)
        assert self.ws is not None
        self.ws.send(frame)

    async def send(self, command: dict[str, Any]) -> None:
        self.send_now(command)

    def act_now(self) -> None:
        """Send what the bot wants to send now (closed loop). The bot is asked once a
        round (and again after a rejection): it sends one submission a round, so asking on
        every update (the opponent's submission, its own) would only decode views for
        nothing."""
        if self.bare:  # (the model's own fields, not a Peek made of them for every update)
            model = self._view
            if model is None or model["ended"]:
                return
            key = (model["started"], model["game_state"]["round"])
        else:
            peek = self.peek
            if peek is None or peek.ended:
                return
            key = (peek.started, peek.game_state.round if peek.game_state is not None else None)
        if key == self.asked:
            return
        self.asked = key
        view = self.view
        assert view is not None
        for command in self.bot.act(view):
            self.send_now(command)

    async def act(self) -> None:
        self.act_now()

    def _ask(self) -> None:
        """Ask for the view (events only)."""
        assert self.ws is not None
        self.ws.send(b'{"type":"view"}')

    def _take(self, msg: Message) -> bool:
        """Take an update's view as the latest (False: an update seen already)."""
        if msg.seq <= self.last_seq:
            return False
        self.last_seq = msg.seq
        if not self.bare:
            if self.peeking:
                self.view_frame = self.frame  # (this update's: `receive` keeps it)
            else:
                self.view_raw = msg.view
            self._view = None
        return True

    def _take_view(self, raw: msgspec.Raw) -> None:
        """A view asked for (or the welcome's): the model the events update from now on."""
        self.view_raw = None
        self._view = view = _decode_view(raw)
        self._ended(view["ended"])

    def _ended(self, ended: bool) -> None:
        if ended and not self.match.ended:
            self.match.ended = True
            self.worker.stats.ended += 1

    def on_update(self, msg: Message, now: float) -> None:
        if not self._take(msg):
            return
        seq = msg.seq
        for event in msg.events:
            if event.type == "round_resolved":
                self.round_at[seq] = event.round
                self.match.resolved(event.round, self.seat, now)
        if self.bare:
            if self._view is not None:
                follow_events(self._view, msg.events)
                self._ended(self._view["ended"])
            return
        peek: Any = msg.view  # (a PeekedMessage's: its Peek, read with the message)
        assert isinstance(peek, Peek)
        self.peek = peek
        self._ended(peek.ended)

    def acked(self, seq: int, sent_at: float) -> None:
        """The ack's seq is the update (in this seat's own stream) its command made: if
        that update resolved a round, this command completed it."""
        for older in [s for s in self.round_at if s < seq]:
            del self.round_at[older]
        completed = self.round_at.pop(seq, None)
        if completed is not None:
            self.match.acked(completed, sent_at)

    def receive(self, data: bytes) -> None:
        """One message from the server (LeanSocket's callback)."""
        now = time.monotonic()
        worker = self.worker
        msg = self.decode(data)
        kind = msg.type
        if kind == "update":
            self.frame = data  # (a seat that reads more of it than `Message` does)
            self.on_update(msg, now)
            self.changed.set()
            if self.live and self.closed_loop:
                self.act_now()
        elif kind == "ack" or kind == "rejected":
            pending = self.pending.pop(msg.id, None)
            if pending is None:
                return
            command, sent_at, _ = pending
            accepted = kind == "ack"
            if accepted:
                worker.count_ack(now)
                if msg.seq:
                    self.acked(msg.seq, sent_at)
            else:
                worker.stats.rejected += 1
            self.bot.feedback(command, accepted, msg.warnings or (), msg.code)
            self.changed.set()
            if not accepted:
                self.asked = None  # the bot may send again in this round
                if self.bare:  # (decided again on the server's view, not the model)
                    self._ask()
                elif self.live and self.closed_loop:
                    self.act_now()
        elif kind == "view":
            self._take_view(msg.view)
            self.changed.set()
            if self.live and self.closed_loop:
                self.act_now()
        elif kind == "welcome":
            if self.bare:
                self._take_view(msg.view)
            if self.welcomed is not None and not self.welcomed.done():
                self.welcomed.set_result(None)
        elif kind == "error":
            code = str(msg.code)
            if self.welcomed is not None and not self.welcomed.done():
                self.welcomed.set_exception(RuntimeError(f"hello refused: {code}"))
                return
            worker.stats.errors[code] = worker.stats.errors.get(code, 0) + 1
            if code in ("rate_limited", "busy") and self.resend_at is None:
                # Send what waits for an answer again, under the same ids, a bit later.
                self.resend_at = asyncio.get_running_loop().call_later(0.05, self._resend)

    def _resend(self) -> None:
        self.resend_at = None
        assert self.ws is not None
        for _command, _sent, frame in list(self.pending.values()):
            self.ws.send(frame)


class Match:
    def __init__(self, worker: Worker, index: int) -> None:
        self.worker = worker
        self.index = index
        self.id = ""
        self.seats: list[Seat] = []
        self.ended = False
        self.arrivals: dict[int, dict[int, float]] = {}  # round -> seat -> round_resolved arrival
        self.completions: dict[int, float] = {}  # round -> send time of the command completing it

    async def setup(self, http: Any, ws_url: str) -> None:
        from clients.bots import bot_factory

        options = {"rounds": self.worker.cfg.rounds, "max_rounds": self.worker.cfg.rounds,
                   "clock_scale": 1}
        r = await http.post("/matches", json={"game": GAME, "variant": "dm12", "options": options})
        r.raise_for_status()
        self.id = r.json()["match"]
        cfg = self.worker.cfg
        for seat in range(2):
            r = await http.post(f"/matches/{self.id}/seats", json={"name": f"bot {seat}", "seat": seat})
            r.raise_for_status()
            name = cfg.bots[seat % len(cfg.bots)]
            bot = bot_factory(GAME, name)(random.Random(f"{cfg.seed}:{cfg.index}:{self.index}:{seat}"))
            self.seats.append(Seat(self, seat, r.json()["token"], bot, name))
        for s in self.seats:
            await s.connect(ws_url)

    def resolved(self, round_: int, seat: int, at: float) -> None:
        self.arrivals.setdefault(round_, {})[seat] = at
        self._complete(round_)

    def acked(self, round_: int, sent_at: float) -> None:
        self.completions[round_] = sent_at
        self._complete(round_)

    def _complete(self, round_: int) -> None:
        arrivals = self.arrivals.get(round_)
        sent_at = self.completions.get(round_)
        if arrivals is None or sent_at is None or len(arrivals) < len(self.seats):
            return
        del self.arrivals[round_]
        del self.completions[round_]
        self.worker.count_round(sent_at, max(arrivals.values()))

    async def paced(self, base: float, gap: float) -> None:
        """Open loop: command i at base + i*gap, seats taking turns."""
        for i in itertools.count():
            slot = base + i * gap
            delay = slot - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            seat = self.seats[i % 2]
            late = False
            while True:
                if self.ended or seat.view is None or seat.view.get("ended"):
                    return
                commands = seat.bot.act(seat.view)
                if commands:
                    break
                late = True
                seat.changed.clear()
                await seat.changed.wait()
            if late and time.monotonic() > slot + 0.001 and slot >= self.worker.t_measure:
                self.worker.stats.late += 1
            for command in commands:
                await seat.send(command)


# --- Keys to Success: 13-seat matches, replaced as they end ------------------------------------

KTS = "keys-to-success"
KTS_SEATS = 13
KTS_VARIANTS = ("keys-to-success", "gatekeeping")


# The events after which a Keys to Success seat on events only asks for its view: those
# after which its bot may act (a round begins or ends, the vote, the end), not its own
# submission; a chat message it adds to the view it has (`follow_chat`).
KTS_VIEW_AFTER = frozenset({
    "match_started", "round_started", "round_resolved", "play_ended", "vote_cast",
    "game_over", "match_ended",
})


def follow_chat(view: dict[str, Any], seat: int, events: list[dict[str, Any]]) -> bool:
    """Add an update's chat messages to a Keys to Success player's view (the round's
    chat, as the view shows it: each message as its event; the sender's own messages
    left): what a client on events only does with them. Whether there was one."""
    gs = view["game_state"]
    found = False
    for event in events:
        if event.get("type") == "chat":
            found = True
            gs["chat"].append(event)
            me = gs.get("me")
            if event.get("seat") == seat and isinstance(me, dict):
                me["chats_left"] = max(0, me["chats_left"] - 1)
    return found


class KtsSeat(Seat):
    """A Keys to Success seat. Its stream's seqs are its own (docs/protocol.md), so the
    completing command is found in the sender's stream (the ack's seq is the update that
    carries the round_resolved), and the rounds are matched across seats by number.

    On `--updates events` it asks for its view (`view`) after the updates whose events may
    make its bot act (KTS_VIEW_AFTER; one request in flight at a time, asked again when
    more came meanwhile) and adds chat messages to the view it has (`follow_chat`); its
    bot acts on each view that comes back and after each chat message, as on every
    update with views."""

    PEEKS = False  # (its view read whole, on every update: Message)

    def __init__(self, match: KtsMatch, seat: int, token: str, bot: Any) -> None:
        super().__init__(match, seat, token, bot)  # type: ignore[arg-type]
        self.kmatch = match
        self.changed = match.changed  # the open-loop driver waits on any seat of its match
        self.prefix = f"b{match.index}g{match.generation}s{seat}"
        self.ack_seqs: dict[int, float] = {}  # own seq -> send time, not yet seen as update
        self.resolved_seqs: dict[int, int] = {}  # own seq -> round resolved there, not yet acked
        self.round_seen = 0
        self.asking = False  # (events only) a view request is in flight
        self.ask_again = False  # (events only) and another is due when it is answered
        self.fresh = False  # (events only) a view has come that the bot has not acted on

    def acked(self, seq: int, sent_at: float) -> None:
        r = self.resolved_seqs.pop(seq, None)
        if r is not None:
            self.kmatch.completed(r, sent_at)
        elif seq > self.last_seq:
            self.ack_seqs[seq] = sent_at

    def act_now(self) -> None:
        """A Keys to Success bot may send several commands a round (chat, a submission,
        votes): it is asked on every update, as a seat of the protocol's clients would (on
        events only: on every view that comes)."""
        if self.bare:
            if not self.fresh or self.asking:
                return
            self.fresh = False
        view = self.view
        if view is None or view.get("ended"):
            return
        for command in self.bot.act(view):
            self.send_now(command)

    def _ask(self) -> None:
        if self.asking:
            self.ask_again = True
            return
        self.asking = True
        assert self.ws is not None
        self.ws.send(b'{"type":"view"}')

    def _take_view(self, raw: msgspec.Raw) -> None:
        self.view_raw = None
        self._view = view = _decode_view(raw)
        self.fresh = True
        self.asking = False
        if self.ask_again:
            self.ask_again = False
            self._ask()
        self._seen(view)

    def on_update(self, msg: Message, now: float) -> None:
        if not self._take(msg):
            return
        seq = msg.seq
        m = self.kmatch
        resolved = None
        ask = False
        for event in msg.events:
            if event.type == "round_resolved":
                resolved = int(event.round)
                self.round_seen = resolved
                m.resolved(resolved, self.seat, now)
            if event.type in KTS_VIEW_AFTER:
                ask = True
        sent_at = self.ack_seqs.pop(seq, None)
        if resolved is not None:
            if sent_at is not None:
                m.completed(resolved, sent_at)
            else:
                self.resolved_seqs[seq] = resolved
        if self.bare:
            if ask:
                self._ask()
            elif any(e.type == "chat" for e in msg.events) and self._view is not None:
                follow_chat(self._view, self.seat, _decode_view(self.frame)["events"])
                self.fresh = True
            return
        view = self.view
        assert view is not None
        self._seen(view)

    def _seen(self, view: dict[str, Any]) -> None:
        """What the bench reads of a view: whether the seat escaped, whether it ended."""
        m = self.kmatch
        gs = view.get("game_state")
        me = gs.get("me") if isinstance(gs, dict) else None
        if me and me.get("escaped") and self.seat not in m.escaped_after:
            m.escaped_after[self.seat] = self.round_seen
            m.recheck()
        if view.get("ended") and not m.ended:
            m.ended = True
            m.worker.stats.ended += 1
            m.done.set()


class KtsMatch:
    def __init__(self, worker: Worker, index: int, generation: int) -> None:
        self.worker = worker
        self.index = index
        self.generation = generation
        self.id = ""
        self.seats: list[KtsSeat] = []
        self.ended = False
        self.done = asyncio.Event()
        self.changed = asyncio.Event()
        self.arrivals: dict[int, dict[int, float]] = {}  # round -> seat -> round_resolved arrival
        self.completions: dict[int, float] = {}  # round -> send time of its completing command
        self.escaped_after: dict[int, int] = {}  # seat -> round after which its view said escaped

    async def setup(self, http: Any, ws_url: str) -> None:
        from clients.bots import bot_factory

        cfg = self.worker.cfg
        variant = KTS_VARIANTS[(self.index + self.generation) % len(KTS_VARIANTS)]
        # Real clock (120 s rounds, clock_scale 1): rounds close early when all have submitted.
        r = await http.post("/matches", json={"game": KTS, "variant": variant, "options": {}})
        r.raise_for_status()
        self.id = r.json()["match"]
        for seat in range(KTS_SEATS):
            r = await http.post(f"/matches/{self.id}/seats", json={"name": f"bot {seat}", "seat": seat})
            r.raise_for_status()
            name = cfg.bots[seat % len(cfg.bots)]
            rng = random.Random(f"{cfg.seed}:{cfg.index}:{self.index}:{self.generation}:{seat}")
            self.seats.append(KtsSeat(self, seat, r.json()["token"], bot_factory(KTS, name)(rng)))
        await asyncio.gather(*(s.connect(ws_url) for s in self.seats))

    def resolved(self, round_: int, seat: int, at: float) -> None:
        self.arrivals.setdefault(round_, {})[seat] = at
        self._complete(round_)

    def completed(self, round_: int, sent_at: float) -> None:
        self.completions[round_] = sent_at
        self._complete(round_)

    def recheck(self) -> None:
        for round_ in list(self.completions):
            self._complete(round_)

    def _complete(self, round_: int) -> None:
        arrivals = self.arrivals.get(round_)
        sent_at = self.completions.get(round_)
        if arrivals is None or sent_at is None:
            return
        # Every player still in play at that round (one that escaped earlier sees no result).
        for s in range(len(self.seats)):
            after = self.escaped_after.get(s)
            if (after is None or after >= round_) and s not in arrivals:
                return
        del self.arrivals[round_]
        del self.completions[round_]
        self.worker.count_round(sent_at, max(arrivals.values()))

    async def paced(self, base: float, gap: float) -> None:
        """Open loop: command i at base + i*gap, from the next seat (in turn) with one to send."""
        n = len(self.seats)
        queues: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        ptr = 0
        for i in itertools.count():
            slot = base + i * gap
            delay = slot - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            late = False
            while True:
                if self.ended:
                    return
                found = None
                for k in range(n):
                    s = (ptr + k) % n
                    seat = self.seats[s]
                    if not queues[s] and seat.view is not None and not seat.view.get("ended"):
                        queues[s].extend(seat.bot.act(seat.view))
                    if queues[s]:
                        found = s
                        break
                if found is not None:
                    break
                late = True
                self.changed.clear()
                await self.changed.wait()
            if late and time.monotonic() > slot + 0.001 and slot >= self.worker.t_measure:
                self.worker.stats.late += 1
            ptr = (found + 1) % n
            await self.seats[found].send(queues[found].pop(0))

    async def close(self) -> None:
        tasks = [asyncio.ensure_future(s.ws.close()) for s in self.seats if s.ws is not None]
        for task in tasks:  # retrieve every outcome, even if this is cancelled meanwhile
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=10)
            for task in pending:
                task.cancel()


class Worker:
    def __init__(self, cfg: PhaseConfig) -> None:
        self.cfg = cfg
        self.stats = Stats(matches=cfg.matches)
        self._decoder = msgspec.json.Decoder(Message)
        self._peeked_decoder = msgspec.json.Decoder(PeekedMessage)
        self._encoder = msgspec.json.Encoder()
        self.t_measure = float("inf")
        self.t_end = float("inf")

    def decode(self, raw: bytes) -> Message:
        return self._decoder.decode(raw)

    def decode_peeked(self, raw: bytes) -> PeekedMessage:
        return self._peeked_decoder.decode(raw)

    def encode(self, value: Any) -> bytes:
        return self._encoder.encode(value)

    def count_send(self, now: float) -> None:
        if self.t_measure <= now < self.t_end:
            self.stats.sent += 1

    def count_round(self, sent_at: float, last_arrival: float) -> None:
        """A round completed by a command sent at `sent_at`, its result reaching the last
        of its players at `last_arrival`: its latency counts if sent in the window."""
        if self.t_measure <= sent_at < self.t_end:
            self.stats.latencies.append(last_arrival - sent_at)

    def count_ack(self, now: float) -> None:
        if self.t_measure <= now < self.t_end:
            self.stats.acked += 1
            second = int(now - self.t_measure)
            per = self.stats.per_second
            while len(per) <= second:
                per.append(0)
            per[second] += 1

    async def run_kts(self, conn: Any) -> None:
        """K slots, each playing one 13-seat match after another until the window ends."""
        import httpx

        cfg = self.cfg
        ws_url = cfg.url.replace("http://", "ws://") + "/ws"
        t0 = time.monotonic()
        limit = asyncio.Semaphore(8)
        gap = cfg.total_matches / cfg.rate  # between two commands of one match (open loop)

        async def setup(m: KtsMatch) -> KtsMatch:
            async with limit:
                await m.setup(http, ws_url)
            return m

        async def slot(first: KtsMatch, rng: random.Random) -> None:
            m = first
            readers: list[asyncio.Future[Any]] = []
            try:
                await play(m, rng, readers)
            finally:
                for task in readers:
                    task.cancel()

        async def play(m: KtsMatch, rng: random.Random, readers: list[asyncio.Future[Any]]) -> None:
            while True:
                readers[:] = [asyncio.ensure_future(s.read()) for s in m.seats]
                watch = asyncio.ensure_future(asyncio.wait(readers, return_when=asyncio.FIRST_COMPLETED))
                driver = None
                if cfg.mode == "closed":
                    await asyncio.gather(*(s.act() for s in m.seats))
                else:
                    base = max(time.monotonic(), t_start) + rng.random() * gap
                    driver = asyncio.ensure_future(m.paced(base, gap))
                done = asyncio.ensure_future(m.done.wait())
                await asyncio.wait([done, watch], return_when=asyncio.FIRST_COMPLETED)
                if not m.done.is_set():  # a socket closed before the match ended
                    key = "connection_closed"
                    self.stats.errors[key] = self.stats.errors.get(key, 0) + 1
                for task in (driver, done, watch, *readers):
                    if task is not None:
                        task.cancel()
                await m.close()
                if time.monotonic() >= self.t_end:
                    return
                m = KtsMatch(self, m.index, m.generation + 1)
                try:
                    await m.setup(http, ws_url)
                except BaseException:
                    await m.close()
                    raise
                if self.t_measure <= time.monotonic() < self.t_end:
                    self.stats.started += 1

        async with httpx.AsyncClient(base_url=cfg.url, timeout=60, headers=AUTH) as http:
            matches = await asyncio.gather(*(setup(KtsMatch(self, i, 0)) for i in range(cfg.matches)))
            self.stats.setup_s = time.monotonic() - t0
            loop = asyncio.get_running_loop()
            conn.send(("ready", self.stats.setup_s))
            message = await loop.run_in_executor(None, conn.recv)
            assert message[0] == "go"
            t_start, self.t_measure, self.t_end = message[1:]
            await asyncio.sleep(max(0.0, t_start - time.monotonic()))
            rng = random.Random(f"{cfg.seed}:{cfg.index}:phase")
            slots = [asyncio.ensure_future(slot(m, rng)) for m in matches]
            await asyncio.sleep(max(0.0, self.t_measure - time.monotonic()))
            cpu0 = _own_cpu()
            await asyncio.sleep(max(0.0, self.t_end - time.monotonic()))
            self.stats.cpu_s = _own_cpu() - cpu0
            for task in slots:
                task.cancel()
            results = await asyncio.gather(*slots, return_exceptions=True)
            for r in results:
                if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError):
                    key = type(r).__name__
                    self.stats.errors[key] = self.stats.errors.get(key, 0) + 1
        conn.send(("result", self.stats))

    async def run(self, conn: Any) -> None:
        import httpx

        cfg = self.cfg
        if cfg.game == KTS:
            await self.run_kts(conn)
            return
        ws_url = cfg.url.replace("http://", "ws://") + "/ws"
        t0 = time.monotonic()
        matches = [Match(self, i) for i in range(cfg.matches)]
        limit = asyncio.Semaphore(16)

        async def setup(m: Match) -> None:
            async with limit:
                await m.setup(http, ws_url)

        async with httpx.AsyncClient(base_url=cfg.url, timeout=60, headers=AUTH) as http:
            await asyncio.gather(*(setup(m) for m in matches))
        self.stats.setup_s = time.monotonic() - t0
        loop = asyncio.get_running_loop()
        conn.send(("ready", self.stats.setup_s))
        message = await loop.run_in_executor(None, conn.recv)
        assert message[0] == "go"
        t_start, self.t_measure, self.t_end = message[1:]
        readers = [asyncio.ensure_future(s.read()) for m in matches for s in m.seats]
        drivers: list[asyncio.Future[Any]] = []
        await asyncio.sleep(max(0.0, t_start - time.monotonic()))
        if cfg.mode == "closed":
            await asyncio.gather(*(s.act() for m in matches for s in m.seats))
        else:
            gap = cfg.total_matches / cfg.rate  # between the two seats' commands of a match
            rng = random.Random(f"{cfg.seed}:{cfg.index}:phase")
            for m in matches:
                base = t_start + rng.random() * 2 * gap
                drivers.append(asyncio.ensure_future(m.paced(base, gap)))
        await asyncio.sleep(max(0.0, self.t_measure - time.monotonic()))
        cpu0 = _own_cpu()
        await asyncio.sleep(max(0.0, self.t_end - time.monotonic()))
        self.stats.cpu_s = _own_cpu() - cpu0
        for task in drivers:
            task.cancel()
        await asyncio.gather(*drivers, return_exceptions=True)
        for r in readers:
            r.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                asyncio.gather(*(s.ws.close() for m in matches for s in m.seats if s.ws is not None),
                               return_exceptions=True), 10)
        conn.send(("result", self.stats))


def _own_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def worker_main(conn: Any, cfg: PhaseConfig) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the run
    try:
        if cfg.client_loop == "uvloop":
            import uvloop

            uvloop.run(Worker(cfg).run(conn))
        else:
            asyncio.run(Worker(cfg).run(conn))
    except BaseException as exc:
        with contextlib.suppress(Exception):
            conn.send(("error", repr(exc)))
        raise


# --- one phase ----------------------------------------------------------------------------------


@dataclass
class PhaseResult:
    mode: str
    window: float
    stats: list[Stats]
    server_cpu: float
    redis_cpu: float
    setup_s: float
    machine: list[int]  # /proc/stat ticks over the window
    instructions: int | None = None  # the server's over the window (--callgrind)

    @property
    def acked(self) -> int:
        return sum(s.acked for s in self.stats)

    @property
    def sent(self) -> int:
        return sum(s.sent for s in self.stats)

    @property
    def latencies(self) -> list[float]:
        return sorted(x for s in self.stats for x in s.latencies)

    @property
    def client_cpu(self) -> float:
        return sum(s.cpu_s for s in self.stats)


# Where the server's samples go (--py-spy): each raw py-spy stack is counted once, under
# the first of these lines one of whose prefixes starts one of its frames ("function
# (file:line)"), so time spent in C, which py-spy without --native does not see, counts for
# the Python function that called it (a socket write for the websocket layer's send,
# msgspec's encoder for the frame being built). A stack whose innermost frame is the event
# loop's run is the loop itself: its C code (uvloop: polling, callbacks, transport reads)
# or idle.
SPY_SHARES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("engine.propose (rules, sealing, digests)", ("MatchCore.propose (",)),
    ("receipt signing (once a round)", ("ServerKey.receipt (", "MatchCore.receipt (")),
    ("projections: the game's view (views.view)", ("view (projections/", "view_json (projections/")),
    ("projections: each viewer's events (project_events)", ("project_events (",)),
    # (Before the send row: reading pauses and resumes through CoalescingTransport.)
    ("websocket receive and frame decoding", (
        "Connection._next_frame (", "WebSocket.receive (", "WebSocketsSansIOProtocol.data_received (",
        "coalescing.<locals>.Direct.data_received (", "coalescing.<locals>.Direct.receive_data (",
        "_WakingQueue.")),
    # (Before the rows whose code pushes frames: a frame pushed while nothing waits before
    # it is written from there, server/coalesce.py's SEND_TEXT.)
    ("websocket send (Starlette, uvicorn, websockets, socket writes)", (
        "Connection.sender (", "CoalescingTransport.", "SendQueue.push (")),
    ("update frames: the engine's part of the view, encoding, assembly", (
        "match_view (", "ViewEncoder.", "Streams._frame (", "Streams.live (", "MatchCore._broadcast (")),
    ("fold bookkeeping (core, hub delivery, clock)", (
        "MatchCore._folded (", "MatchCore.appended (", "MatchRunner._deliver (", "MatchRunner._arm_clock (")),
    ("redis append", ("EventStore.append (", "EventStore._send (", "EventStore._run_script (",
                      "EventStore._flush (", "EventStore._append_in_order (",
                      "AbstractConnection._send_packed_command (")),
    ("follower (XREAD, skipping the process's own entries)", (
        "Follower._run (", "EventStore.follow (", "EventStore._follow_lean (", "MatchRunner._take_locked (")),
    ("command handling (app, hub, metrics, acks)", (
        "MatchRunner.submit (", "Connection._command (", "Connection.receive_loop (")),
    ("ASGI and uvicorn's websocket protocol, other", (
        "WebSocketsSansIOProtocol.", "websocket_session", "Starlette.__call__ (")),
)


def spy_shares(path: str) -> list[tuple[str, float]]:
    """The share of py-spy's samples (raw format, idle included) in each of SPY_SHARES,
    then the event loop's own and the rest."""
    counts: dict[str, int] = {}
    total = 0
    with open(path) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if not n.isdigit():
                continue
            frames = stack.split(";")[1:]
            total += int(n)
            name = "other"
            if frames and frames[-1].startswith("Runner.run ("):
                name = "event loop itself (uvloop's C code, polling, idle)"
            else:
                for label, prefixes in SPY_SHARES:
                    if any(fr.startswith(x) for fr in frames for x in prefixes):
                        name = label
                        break
            counts[name] = counts.get(name, 0) + int(n)
    return sorted(((k, v / max(1, total)) for k, v in counts.items()), key=lambda kv: -kv[1])


# Where the server's CPU time goes by native code (--perf): perf's samples of the server's
# processes (a software clock: a virtual machine without the CPU's counters has it too)
# by the shared object they were taken in, each under the first of these lines one of
# whose names is a prefix of the object's file name. Unlike py-spy, which credits C to the
# Python function that called it, this tells the interpreter's own work from the
# libraries' and the kernel's; unlike callgrind, it counts time, memory stalls included.
PERF_SHARES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the Python interpreter (libpython: bytecode, objects, dicts, allocator, collector)",
     ("libpython", "python3")),
    ("the kernel (system calls: sockets, epoll; the loopback's network stack)", ("[kernel",)),
    ("msgspec (JSON encoding and decoding, Structs)", ("_core.cpython",)),
    ("libc (malloc beyond Python's allocator, memcpy)", ("libc.so", "libm.so")),
    ("uvloop (the event loop, transports)", ("loop.cpython",)),
    ("OpenSSL's libcrypto (SHA-256 of the digests)", ("libcrypto",)),
    ("cryptography (Ed25519: receipts' signatures)", ("_rust.abi3",)),
    ("hashlib, hiredis, asyncio's C parts", ("_hashlib.cpython", "hiredis.cpython", "_asyncio.cpython")),
)


def perf_shares(path: str) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """The share of perf's samples of `path` in each of PERF_SHARES (then the rest), and
    the native functions that took the most (perf report, self time)."""
    def report(key: str) -> list[tuple[str, float]]:
        out = subprocess.run(
            ["perf", "report", "-i", path, "--no-children", "-F", f"overhead,{key}", "--stdio"],
            capture_output=True, text=True, timeout=300,
        ).stdout
        rows = []
        for line in out.splitlines():
            found = re.match(r"\s*([\d.]+)%\s+(.*?)\s*$", line)
            if found:
                rows.append((found.group(2), float(found.group(1)) / 100))
        return rows

    counts: dict[str, float] = {}
    for dso, share in report("dso"):
        name = next((label for label, prefixes in PERF_SHARES
                     if any(dso.startswith(x) for x in prefixes)), "other")
        counts[name] = counts.get(name, 0.0) + share
    shares = sorted(counts.items(), key=lambda kv: -kv[1])
    symbols = [(re.sub(r"^\[(.)\]\s+", lambda m: "(kernel) " if m.group(1) == "k" else "", name), share)
               for name, share in report("sym")[:12]]
    return shares, symbols


def percentile(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(p / 100 * len(sorted_values) + 0.5) - 1))
    return sorted_values[k]


def callgrind_control(pid: int, *what: str) -> None:
    subprocess.run(["callgrind_control", *what, str(pid)], check=True, stdout=subprocess.DEVNULL,
                   timeout=120)


def callgrind_instructions(prefix: str, mode: str, pid: int) -> int | None:
    """The instructions callgrind counted over the window: its dump triggered as "window"."""
    folder, name = Path(prefix).parent, Path(prefix).name
    for path in folder.glob(f"{name}.{mode}.{pid}.*"):
        with path.open(errors="replace") as f:
            head = f.read(4096)
        if "desc: Trigger: dump window" in head:
            found = re.search(r"^summary: (\d+)$", head, re.M)
            if found:
                return int(found.group(1))
    return None


def run_phase(args: argparse.Namespace, mode: str, redis: Redis, workdir: str) -> PhaseResult:
    redis.flush()
    wrapper: list[str] = []
    if args.callgrind:
        # The server under callgrind, counting nothing until the window (callgrind_control).
        wrapper = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                   f"--callgrind-out-file={args.callgrind}.{mode}.%p"]
    counted = f"{args.bytecodes}.{mode}.json" if args.bytecodes else None
    if counted:
        # The server run by bench/bytecodes.py, counting nothing until the window (SIGUSR1).
        with contextlib.suppress(FileNotFoundError):
            os.remove(counted)
        wrapper = [sys.executable, str(Path(__file__).resolve().parent / "bytecodes.py"), counted, "--"]
    server = Server(redis.url, workdir, mode, args.log_level, args.workers, args.server_root, wrapper)
    ctx = mp.get_context("spawn")
    procs: list[Any] = []
    pipes: list[Any] = []
    try:
        per = [args.matches // args.clients + (1 if i < args.matches % args.clients else 0)
               for i in range(args.clients)]
        for i, n in enumerate(per):
            if n == 0:
                continue
            cfg = PhaseConfig(
                mode=mode, url=server.url, matches=n, rate=args.rate, total_matches=args.matches,
                rounds=args.rounds, bots=tuple(args.bot), seed=f"{args.seed}:{mode}", index=i,
                game=args.game, client_loop=args.client_loop, route=not args.no_route,
                updates=args.updates,
            )
            parent, child = ctx.Pipe()
            p = ctx.Process(target=worker_main, args=(child, cfg), daemon=True)
            p.start()
            procs.append(p)
            pipes.append(parent)
        setup = 0.0
        for pipe in pipes:
            if not pipe.poll(args.setup_timeout):
                raise RuntimeError("a client process did not finish its set-up in time")
            message = pipe.recv()
            if message[0] != "ready":
                raise RuntimeError(f"client process failed: {message[1]}")
            setup = max(setup, message[1])
        t_start = time.monotonic() + 0.5
        t_measure = t_start + args.warmup
        t_end = t_measure + args.duration
        for pipe in pipes:
            pipe.send(("go", t_start, t_measure, t_end))
        time.sleep(max(0.0, t_measure - time.monotonic()))
        s0, r0 = server.cpu_seconds(), cpu_seconds(redis.proc.pid)  # type: ignore[union-attr]
        m0 = machine_ticks()
        spy = None
        if args.py_spy:
            # Sample the server over the window (py-spy is not a dependency: pip install py-spy).
            spy = subprocess.Popen(
                [args.py_spy_bin, "record", "-p", str(server.pid), "--subprocesses",
                 "-d", str(int(args.duration)), "-r", str(args.py_spy_rate),
                 *(["--nonblocking"] if args.py_spy_nonblocking else []),
                 "--idle", "-f", "raw", "-o", f"{args.py_spy}.{mode}.txt"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        perf = None
        if args.perf:
            # perf's software clock over the window, every server process (not a dependency).
            perf_log = open(f"{args.perf}.{mode}.log", "wb")  # noqa: SIM115 (closed after the window)
            perf = subprocess.Popen(
                ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(args.perf_rate),
                 "-p", ",".join(str(pid) for pid in server.pids()), "-o", f"{args.perf}.{mode}.data",
                 "--", "sleep", str(args.duration)],
                stdout=subprocess.DEVNULL, stderr=perf_log,
            )
        if args.callgrind:
            callgrind_control(server.pid, "-i", "on")
        if counted:
            os.kill(server.pid, signal.SIGUSR1)
        time.sleep(max(0.0, t_end - time.monotonic()))
        if args.callgrind:
            callgrind_control(server.pid, "-d", "window")
            callgrind_control(server.pid, "-i", "off")
        if counted:
            os.kill(server.pid, signal.SIGUSR2)
        s1, r1 = server.cpu_seconds(), cpu_seconds(redis.proc.pid)  # type: ignore[union-attr]
        machine = [b - a for a, b in zip(m0, machine_ticks(), strict=True)]
        if spy is not None:
            spy.wait(60)
        if perf is not None:
            perf.wait(60)
            perf_log.close()
        stats = []
        for pipe in pipes:
            if not pipe.poll(60):
                raise RuntimeError("a client process did not report")
            message = pipe.recv()
            if message[0] != "result":
                raise RuntimeError(f"client process failed: {message[1]}")
            stats.append(message[1])
        for p in procs:
            p.join(10)
        instructions = callgrind_instructions(args.callgrind, mode, server.pid) if args.callgrind else None
        return PhaseResult(mode, t_end - t_measure, stats, s1 - s0, r1 - r0, setup, machine, instructions)
    except BaseException:
        with contextlib.suppress(OSError), open(server.log_path, "rb") as f:
            tail = f.read()[-4000:].decode(errors="replace")
        print(f"--- the server's log (last lines) ---\n{tail}", file=sys.stderr)
        raise
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(5)
        server.stop()


def report(res: PhaseResult, args: argparse.Namespace) -> None:
    w = res.window
    lat = res.latencies
    errors: dict[str, int] = {}
    for s in res.stats:
        for k, v in s.errors.items():
            errors[k] = errors.get(k, 0) + v
    print(f"\n== {res.mode} loop: {args.matches} matches, {len(res.stats)} client process(es), "
          f"set-up {res.setup_s:.1f} s, warm-up {args.warmup:g} s, window {w:g} s")
    print(f"commands sent {res.sent} ({res.sent / w:,.0f}/s), acked {res.acked} "
          f"({res.acked / w:,.0f}/s); rejected {sum(s.rejected for s in res.stats)}, "
          f"errors {errors or 0}, matches ended {sum(s.ended for s in res.stats)}")
    per: list[int] = []
    for s in res.stats:
        for i, n in enumerate(s.per_second):
            per.extend([0] * (i + 1 - len(per)))
            per[i] += n
    if per:
        print("acked per second, by 5-second slice of the window: "
              + " ".join(f"{sum(per[i:i + 5]) / len(per[i:i + 5]):.0f}" for i in range(0, len(per), 5)))
    if res.mode == "open":
        print(f"offered {args.rate:g} commands/s; sends later than their slot: "
              f"{sum(s.late for s in res.stats)}")
    if args.game == KTS:
        print(f"matches set up in the window to replace ended ones: {sum(s.started for s in res.stats)}")
    if lat and args.game == KTS:
        ms = [x * 1000 for x in lat]
        print(f"round latency (completing send -> round_resolved at every player still in play), "
              f"{len(ms)} rounds: p50 {percentile(ms, 50):.1f} ms, p90 {percentile(ms, 90):.1f} ms, "
              f"p99 {percentile(ms, 99):.1f} ms, max {ms[-1]:.1f} ms, mean {statistics.fmean(ms):.1f} ms")
    elif lat:
        ms = [x * 1000 for x in lat]
        print(f"round latency (completing send -> round_resolved at both players), {len(ms)} rounds: "
              f"p50 {percentile(ms, 50):.1f} ms, p90 {percentile(ms, 90):.1f} ms, "
              f"p99 {percentile(ms, 99):.1f} ms, max {ms[-1]:.1f} ms, mean {statistics.fmean(ms):.1f} ms")
    print(f"CPU over the window (share of one core): server {res.server_cpu / w:.0%}, "
          f"redis {res.redis_cpu / w:.0%}, bot clients {res.client_cpu / w:.0%}; "
          f"server CPU per acked command {res.server_cpu / max(1, res.acked) * 1e6:.0f} us")
    total = sum(res.machine) or 1
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    shares = ", ".join(f"{n} {t / total:.0%}" for n, t in zip(names, res.machine, strict=True) if t)
    busy = (total - res.machine[3] - res.machine[4]) / CLK_TCK  # CPU-seconds in use
    ours = res.server_cpu + res.redis_cpu + res.client_cpu
    print(f"machine ({os.cpu_count()} CPUs) over the window: {shares}; "
          f"other processes than this bench's: {max(0.0, busy - ours) / w:.0%} of one core")
    if args.callgrind:
        counted = "not found" if res.instructions is None else (
            f"{res.instructions:,} in all, {res.instructions / max(1, res.acked):,.0f} per acked command")
        print(f"server instructions over the window (callgrind, {args.callgrind}.{res.mode}.*): {counted}")
    if args.bytecodes:
        path = f"{args.bytecodes}.{res.mode}.json"
        for _ in range(300):  # (written as the server takes SIGUSR2)
            if os.path.exists(path):
                break
            time.sleep(0.1)
        if not os.path.exists(path):
            print(f"the server wrote no {path} (its log says why)")
        else:
            print(f"the server's Python over the window ({path}), acked commands "
                  f"{res.acked:,}:")
            for line in bytecodes_report(path, res.acked, str(args.server_root)):
                print(f"  {line}")
    data = f"{args.perf}.{res.mode}.data" if args.perf else None
    if data and not os.path.exists(data):
        said = ""
        with contextlib.suppress(OSError), open(f"{args.perf}.{res.mode}.log", errors="replace") as f:
            said = f.read().strip()[-300:]
        print(f"perf recorded nothing ({args.perf}.{res.mode}.log: {said or 'empty'}); "
              "attaching to a process may need kernel.perf_event_paranoid at 1 or less")
    elif data:
        native, symbols = perf_shares(data)
        print(f"perf samples of the server ({data}), by the native code they were taken in:")
        for label, part in native:
            print(f"  {part:6.1%}  {label}")
        print("  the native functions that took the most: " + ", ".join(
            f"{label} {part:.1%}" for label, part in symbols))
    spy = f"{args.py_spy}.{res.mode}.txt" if args.py_spy else None
    if spy and os.path.exists(spy):
        print(f"py-spy samples of the server ({spy}), by where they were taken:")
        for name, share in spy_shares(spy):
            print(f"  {share:6.1%}  {name}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", choices=[GAME, KTS], default=GAME,
                   help="five-card-trick (2 seats, default) or keys-to-success (13 seats)")
    p.add_argument("-k", "--matches", type=int, default=None,
                   help="concurrent matches (K; default 200, keys-to-success 20 = 260 connections)")
    p.add_argument("--rate", type=float, default=None,
                   help="open loop: commands/s offered in all (default 1000, keys-to-success 300)")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds before each window")
    p.add_argument("--duration", type=float, default=20.0, help="seconds measured per phase")
    p.add_argument("--clients", type=int, default=2, help="bot client processes")
    p.add_argument("--client-loop", choices=["uvloop", "asyncio"], default="uvloop",
                   help="the bot client processes' event loop (default uvloop: less of the "
                   "machine's CPU for the clients, more for the server measured)")
    p.add_argument("--workers", type=int, default=1,
                   help="server processes on the one port (daedalus serve --workers; default 1); "
                   "the server's CPU is theirs and their parent's")
    p.add_argument("--no-route", action="store_true",
                   help="leave the match out of the websocket's URL: with --workers N, the "
                   "kernel's choice of worker serves each connection (server/route.py)")
    p.add_argument("--updates", choices=["view", "events"], default="view",
                   help="what the seats' hello asks each update to carry (docs/protocol.md): "
                   "the whole view (default), or the events only (a five-card-trick seat keeps "
                   "the view up to date from them and asks for it after a rejection; a "
                   "keys-to-success seat asks for it after the updates its bot may act on)")
    p.add_argument("--bot", action="append", default=[], help="bot per seat (default: random random)")
    p.add_argument("--rounds", type=int, default=1000, help="scheduled rounds of each match")
    p.add_argument("--appendfsync", choices=["off", "everysec", "always"], default="everysec",
                   help="redis AOF fsync policy (off: no AOF)")
    p.add_argument("--log-level", default=None,
                   help="DAEDALUS_LOG_LEVEL of the server (default: as deployed, info)")
    p.add_argument("--only", choices=["closed", "open"], default=None)
    p.add_argument("--seed", default="load")
    p.add_argument("--py-spy", default=None, metavar="PREFIX",
                   help="profile the server over each window with py-spy (raw stacks, idle "
                   "included) into PREFIX.<phase>.txt, and print the share of its samples by "
                   "where they were taken (SPY_SHARES)")
    p.add_argument("--py-spy-rate", type=int, default=100,
                   help="py-spy's samples per second (default 100; each sample pauses the "
                   "server: at 200 a second it acked a fifth fewer commands)")
    p.add_argument("--py-spy-nonblocking", action="store_true",
                   help="sample without pausing the server (py-spy --nonblocking): less "
                   "slowdown, but a tenth of the stacks come out torn and count as 'other'")
    p.add_argument("--perf", default=None, metavar="PREFIX",
                   help="sample the server's processes over each window with perf (its "
                   "software clock, idle not included) into PREFIX.<phase>.data, and print the "
                   "share of its samples by native code: the interpreter's own, the kernel's, "
                   "each library's (PERF_SHARES), and the functions that took the most")
    p.add_argument("--perf-rate", type=int, default=999,
                   help="perf's samples per second (default 999)")
    p.add_argument("--callgrind", default=None, metavar="PREFIX",
                   help="run the server under valgrind's callgrind and count its instructions "
                   "over each window (one worker; the server is some 25 times slower: a few "
                   "matches, e.g. -k 20, and a longer --setup-timeout). Printed per acked "
                   "command: unlike its CPU time, the same whatever else the machine runs")
    p.add_argument("--bytecodes", default=None, metavar="PREFIX",
                   help="count the bytecodes each Python function of the server runs, and the "
                   "calls, over each window (bench/bytecodes.py; one worker; the server some twenty "
                   "times slower) into PREFIX.<phase>.json, and print them a command: the "
                   "functions that ran the most, and the files")
    p.add_argument("--server-root", type=Path, default=ROOT,
                   help="run the server from this checkout (e.g. a git worktree of an earlier "
                   "commit, to measure a change against the code before it; default: this one)")
    p.add_argument("--keep", action="store_true",
                   help="keep the temporary directory (server logs, redis files)")
    p.add_argument("--setup-timeout", type=float, default=180.0)
    args = p.parse_args(argv)
    args.bot = args.bot or ["random", "random"]
    kts = args.game == KTS
    if args.matches is None:
        args.matches = 20 if kts else 200
    if args.rate is None:
        args.rate = 300.0 if kts else 1000.0
    if args.py_spy:
        args.py_spy_bin = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if args.perf and not shutil.which("perf"):
        p.error("--perf needs perf on the PATH (Debian's linux-perf)")
    if args.callgrind and (args.workers != 1 or not shutil.which("valgrind")):
        p.error("--callgrind takes one worker, and valgrind on the PATH")
    if args.bytecodes and (args.workers != 1 or args.callgrind):
        p.error("--bytecodes takes one worker, and not --callgrind")
    if args.matches < 1 or args.clients < 1 or args.workers < 1 or args.rate <= 0 or args.duration <= 0:
        p.error("--matches, --clients, --workers, --rate and --duration must be positive")
    if args.duration + args.warmup > 600:
        p.error("a phase is at most 600 s")

    workdir = tempfile.mkdtemp(prefix="daedalus-load-")
    redis: Redis | None = None
    results: dict[str, PhaseResult] = {}
    try:
        redis = Redis(workdir, args.appendfsync)
        print(f"machine: {os.cpu_count()} CPUs; {interpreter()}; "
              f"redis AOF {args.appendfsync}; bots {' vs '.join(args.bot)}; "
              f"server workers {args.workers}; client loop {args.client_loop}; updates {args.updates}"
              + ("" if args.server_root == ROOT else f"; server from {args.server_root}"))
        if kts:
            print(f"game {KTS}: {args.matches} concurrent 13-seat matches "
                  f"({args.matches * KTS_SEATS} connections), variants alternating, "
                  "each replaced by a new one when it ends")
        for mode in ("closed", "open"):
            if args.only in (None, mode):
                results[mode] = run_phase(args, mode, redis, workdir)
                report(results[mode], args)
    finally:
        if redis is not None:
            redis.stop()
        if args.keep:
            print(f"kept {workdir} (the server's and redis's files)")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    closed = results.get("closed")
    opened = results.get("open")
    cps = closed.acked / closed.window if closed else float("nan")
    lat = [x * 1000 for x in opened.latencies] if opened else []
    print(f"commands/s={cps:.0f} p50_ms={percentile(lat, 50):.1f} "
          f"p99_ms={percentile(lat, 99):.1f} rate={args.rate:g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
