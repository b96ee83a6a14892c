"""`daedalus play`: one seat (or a spectator) of a match, in the terminal.

Three tasks run side by side until one ends: `receive` prints what the server sends,
`commands` reads typed lines and sends them as commands, and `reminders` says so once a
deadline is ten seconds away. The game's terminal front-end (clients.terminal) turns
views and events into text and typed lines into commands; a game without one is shown
and typed as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import json
import shlex
import sys
import threading
import time
from typing import Any

from clients.client import (
    ConnectionFailed,
    DaedalusHttp,
    HttpError,
    MatchConnection,
    write_receipts,
)
from clients.terminal import SPECTATOR_HELP, TERMINALS, Terminal, event_lines

QUIT = ("quit", "exit", "q")
SHOW = ("", "view", "status", "time")
HELP = ("help", "?")
REMIND_SECONDS = 10


def _err(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def _say(text: str) -> None:
    print(text, flush=True)


class _Stdin:
    """Lines of standard input, read in a daemon thread (so quitting never waits on it)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._loop = loop
        threading.Thread(target=self._read, daemon=True, name="stdin").start()

    def _read(self) -> None:
        for line in sys.stdin:
            self._loop.call_soon_threadsafe(self.lines.put_nowait, line)
        self._loop.call_soon_threadsafe(self.lines.put_nowait, None)


async def play(args: argparse.Namespace) -> int:
    """Join (or create) the match, then play it until it ends or the player quits."""
    if args.token is not None and args.match is None:
        _err("daedalus play: --token rejoins a seat of a match: give the match with --match ID")
        return 2
    if getattr(args, "host", False) and args.match is not None:
        _err("daedalus play: --host creates a match to watch; to watch one again: --match ID --audit KEY")
        return 2
    if getattr(args, "audit", None) is not None and args.match is None:
        _err("daedalus play: --audit watches a match: give the match with --match ID")
        return 2
    told: list[str] = []

    def unreachable(exc: Exception, pause: float) -> None:
        if not told:  # once: the retries go on quietly for up to five minutes
            told.append(str(exc))
            _err(f"daedalus play: the server at {args.server} does not answer ({exc}); "
                 "trying again for up to five minutes (Ctrl-C stops)")

    async with DaedalusHttp(args.server, on_retry=unreachable) as http:
        try:
            match_id, token, game = await _join(http, args)
        except HttpError as exc:
            _err(f"daedalus play: {exc}")
            if exc.code in ("match_started", "seat_taken") and not args.spectate:
                _err(f"to watch it instead: {_command(http.base_url, match_id=args.match, spectate=True)}")
            return 1
        except (ConnectionError, OSError) as exc:
            _err(f"daedalus play: {exc}")
            return 1
    audit = getattr(args, "audit", None) or getattr(args, "audit_key", None)
    conn = MatchConnection(args.server, match_id, token=token, since=args.since, audit=audit)
    try:
        await conn.connect()
    except ConnectionFailed as exc:
        _err(f"daedalus play: {exc}")
        return 1
    session = Session(conn, TERMINALS.get(game), match_id, token, _Stdin(asyncio.get_running_loop()))
    try:
        await session.run()
    except asyncio.CancelledError:  # Ctrl-C: after the terminal's `^C`, a line of its own
        _say("")
        raise
    finally:
        if getattr(args, "receipts", None):  # the server's receipts (docs/fairness.md)
            write_receipts(args.receipts, [*http.receipts, *conn.receipts])
        _farewell(args.server, match_id, token, conn.view, audit)
    return 0


def _command(server: str, *, match_id: str | None, token: str | None = None, spectate: bool = False) -> str:
    """The `daedalus play` command line to join `match_id` (as printed for people to run)."""
    from clients.cli import program

    words = [program(), "play", "--server", shlex.quote(server)]
    if match_id is not None:
        words += ["--match", shlex.quote(match_id)]
    if token is not None:
        words += ["--token", shlex.quote(token)]
    if spectate:
        words.append("--spectate")
    return " ".join(words)


def _farewell(
    server: str, match_id: str, token: str | None, view: dict[str, Any] | None, audit: str | None = None
) -> None:
    """On leaving: how to come back (a seat's token), or, once the match is over, how to
    replay and verify it."""
    from clients.cli import program

    if view is not None and view.get("ended"):
        _say(f"replay and verify it: {program()} replay {match_id} --server {shlex.quote(server)} --verify")
        _say("match over.")
    elif token is not None:
        _say(f"you left the match; the seat stays yours (its clock runs on). To rejoin: {_command(server, match_id=match_id, token=token)}")
    elif audit is not None:
        _say(f"to watch again as its host: {_command(server, match_id=match_id)} --audit {audit}")
    else:
        _say(f"to watch again: {_command(server, match_id=match_id, spectate=True)}")


class Session:
    """A connected terminal: what it has printed, and the clock as the server keeps it."""

    def __init__(
        self,
        conn: MatchConnection,
        terminal: Terminal | None,
        match_id: str,
        token: str | None,
        stdin: _Stdin,
    ) -> None:
        self.conn = conn
        self.terminal = terminal
        self.match_id = match_id
        self.token = token  # None: a spectator
        self.stdin = stdin
        self.skew = 0  # server ms minus local ms, from the latest update
        self.history: list[str] = []

    async def run(self) -> None:
        """Until the match ends, the connection does, or the player quits."""
        tasks = [
            asyncio.create_task(self.receive()),
            asyncio.create_task(self.commands()),
            asyncio.create_task(self.reminders()),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await self.conn.close()

    # --- what the player sees ----------------------------------------------------------

    def seconds_left(self) -> float | None:
        view = self.conn.view
        if not view or view.get("deadline") is None:
            return None
        deadline = float(view["deadline"])
        return max(0.0, (deadline - (time.time() * 1000 + self.skew)) / 1000)

    def show(self) -> None:
        view = self.conn.view
        if view is None:
            print("(no view yet)")
        elif self.terminal is not None:
            print(self.terminal.render(view, self.seconds_left()))
        else:
            print(json.dumps(view, indent=2, sort_keys=True))
        sys.stdout.flush()

    # --- what the server sends ---------------------------------------------------------

    async def receive(self) -> None:
        async for message in self.conn:
            kind = message.get("type")
            if kind == "welcome":
                self.on_welcome(message)
            elif kind == "update":
                if self.on_update(message):
                    return
            elif kind == "resync":
                if self.on_resync(message):
                    return
            elif kind == "error":
                _say(f"! error {message.get('code')}: {message.get('message')}")
        _say(f"connection ended: {self.conn.close_reason}")

    def on_welcome(self, message: dict[str, Any]) -> None:
        seat = message.get("seat")
        who = (f"the player in seat {seat}" if seat is not None
               else "an auditor, with the full view" if message.get("role") == "auditor" else "a spectator")
        _say(f"connected to match {self.match_id} as {who}")
        if message.get("seq") == self.conn.hello_since:  # no catch-up follows: show it now
            self.show()

    def on_update(self, message: dict[str, Any]) -> bool:
        """Print an update (its events only when live, not catch-up); True once it ends the match."""
        live = message["seq"] > (self.conn.welcome or {}).get("seq", 0)
        if live:
            self.skew = int(message.get("ts", 0)) - int(time.time() * 1000)
        view = message["view"]
        lines = event_lines(self.terminal, view, message.get("events", []))
        self.history.extend(lines)
        if live:
            for line in lines:
                print(f"* {line}")
        # Drawn for the latest update received: what is still queued behind it (an ack,
        # an error) is no reason to skip it, and only a later update shows a newer board.
        if message["seq"] >= self.conn.last_seq or view.get("ended"):
            self.show()
        return bool(view.get("ended"))

    def on_resync(self, message: dict[str, Any]) -> bool:
        """The server went back to its log (its store lost moves it had confirmed): say
        so and draw the board as the log has it; True if the match is over there."""
        _say(
            "! the server lost its latest moves and went back to its log: the board is the "
            "match as it stands; send again what it does not show"
        )
        self.history.append(
            f"(the server went back to its log here: what came after update {message.get('kept')} was lost)"
        )
        view = message["view"]
        if message["seq"] >= self.conn.last_seq or view.get("ended"):
            self.show()
        return bool(view.get("ended"))

    # --- what the player types ---------------------------------------------------------

    async def commands(self) -> None:
        pending: set[asyncio.Task[None]] = set()
        if self.terminal is not None and self.token is not None:
            _say(self.terminal.help(self.conn.view))
        while True:
            line = await self.stdin.lines.get()
            if line is None:
                return
            text = line.strip()
            if text in QUIT:
                return
            if self.answer(text):
                continue
            command = self.command(text)
            if command is None:
                continue
            task = asyncio.create_task(self.send(command))
            pending.add(task)
            task.add_done_callback(pending.discard)

    def answer(self, text: str) -> bool:
        """Answer what needs no server (view, help, history; a spectator's attempt to
        play); False if `text` is meant as a command."""
        if text in SHOW:
            self.show()
        elif text in HELP:
            _say(self.help())
        elif text == "history":
            view = self.conn.view
            recalled = self.terminal.recall(view) if self.terminal is not None and view else None
            _say("\n".join(self.history if recalled is None else recalled) or "(nothing yet)")
        elif self.token is None:
            _say("spectators cannot send commands (help, view, history, quit)")
        else:
            return False
        return True

    def help(self) -> str:
        """The commands this viewer may type: a spectator's, or the variant's."""
        if self.token is None:
            return SPECTATOR_HELP
        if self.terminal is None:
            return "type a command as JSON (view, history, help, quit)"
        return self.terminal.help(self.conn.view)

    def command(self, text: str) -> dict[str, Any] | None:
        """A typed line as a command, or None (after saying why) if it is not one."""
        try:
            if self.terminal is not None:
                return self.terminal.parse(text, self.conn.view)
            command: dict[str, Any] = json.loads(text)
            return command
        except ValueError as exc:
            _say(f"? {exc}")
            return None

    async def send(self, command: dict[str, Any]) -> None:
        try:
            result = await self.conn.send_command(command)
        except (ConnectionError, TimeoutError) as exc:
            _say(f"! not sent: {exc}")
            return
        if result.accepted:
            note = " (again)" if result.duplicate else ""
            _say(f"ok{note}")
            for warning in result.warnings:
                _say(f"  warning: {warning}")
        else:
            _say(f"! rejected ({result.code}): {result.reason}")

    # --- the clock ---------------------------------------------------------------------

    async def reminders(self) -> None:
        """Say so once when a deadline is REMIND_SECONDS away."""
        warned: set[int] = set()
        while True:
            await asyncio.sleep(0.5)
            left = self.seconds_left()
            view = self.conn.view
            if left is None or view is None or left > REMIND_SECONDS or view["deadline"] in warned:
                continue
            warned.add(view["deadline"])
            waiting = self.terminal.awaiting(view) if self.token is not None and self.terminal is not None else None
            _say(f"({left:.0f} s left{f', and {waiting}' if waiting else ''})")


# --- taking a seat ---------------------------------------------------------------------


async def _join(http: DaedalusHttp, args: argparse.Namespace) -> tuple[str, str | None, str]:
    """Create or find the match and take a seat: (match id, token or None, game)."""
    from clients.cli import resolve_game

    server = http.base_url
    if args.match is None:
        created = await http.create_match(*resolve_game(args.game, args.variant), dict(args.option))
        match_id, game = created["match"], created["game"]
        print(f"created match {match_id} ({game}, {created.get('variant')})")
        print(f"commitment {created.get('commitment')}")
        print(f"the other player joins with: {_command(server, match_id=match_id)}")
        print(f"spectators watch with:        {_command(server, match_id=match_id, spectate=True)}")
        if getattr(args, "host", False):
            key = created.get("audit_key")
            print(f"the match's audit key (keep it secret): {key}")
            print(f"watch again as its host with: {_command(server, match_id=match_id)} --audit {key}")
            args.audit_key = key
            sys.stdout.flush()
            return match_id, None, game
    else:
        match_id = args.match
        status = await http.status(match_id)
        game = status["game"]
    if args.spectate or getattr(args, "audit", None) is not None:
        return match_id, None, game
    if args.token is not None:
        return match_id, args.token, game
    name = args.name or _login_name()
    claimed = await http.claim_seat(match_id, name, args.seat)
    print(f"you are {name} in seat {claimed['seat']}")
    print(f"to rejoin later: {_command(server, match_id=match_id, token=str(claimed['token']))}")
    sys.stdout.flush()
    return match_id, str(claimed["token"]), game


def _login_name() -> str:
    with contextlib.suppress(Exception):
        return getpass.getuser()[:40] or "player"
    return "player"
