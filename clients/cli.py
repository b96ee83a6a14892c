"""The `daedalus` command: serve, play, bots, replay.

    daedalus serve [--host H] [--port P] [--redis-url URL] [--allow-origin O ...]
    daedalus play --server URL [--game G] [--variant V] [--match ID] [--seat N] [--name NAME] [--spectate]
    daedalus bots GAME [--variant V] [--matches N] [--server URL] [--clock-scale F]
                       [--bot A] [--bot B] [--concurrency C] [--seed S]
    daedalus replay (MATCH_ID | LOG_FILE) [--server URL] [--verify] [--round N] [--as SEAT|spectator]

Extras: `play --option KEY=VALUE` (match options when creating) and `--token T` (come
back to a seat); `bots --option KEY=VALUE`, `--timeout S` (per match) and `--verify`
(fetch and verify every finished log); `replay --round N` prints one round (a disputed
one), `--as SEAT` (or `--as spectator`) what that viewer was shown, update by update, as
its terminal showed it. The wire protocol is docs/protocol.md.

GAME (and `play --game`) is a hosted game's name, or a variant name that only one hosted
game has, which then selects that game and variant: `daedalus bots gatekeeping` is
`daedalus bots keys-to-success --variant gatekeeping`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import json
import os
import random
import secrets
import sys
import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from clients.client import (
    DEFAULT_SERVER,
    ConnectionFailed,
    DaedalusHttp,
    HttpError,
    MatchConnection,
    read_log_file,
)

DEFAULT_GAME = "five-card-trick"


# --- arguments -------------------------------------------------------------------------


def _option(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    return key, value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="daedalus", description="Daedalus: a game server for hidden-information games."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the game server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--redis-url", default=None, help="Redis to keep match logs in (default: $REDIS_URL, "
        "else an in-process store)"
    )
    serve.add_argument(
        "--allow-origin", action="append", default=[], metavar="ORIGIN", dest="allow_origin",
        help="a browser origin allowed to open a websocket (repeatable; '*' for any)",
    )

    play = sub.add_parser("play", help="play (or watch) a match in the terminal")
    play.add_argument("--server", default=DEFAULT_SERVER, help=f"server URL (default {DEFAULT_SERVER})")
    play.add_argument("--game", default=DEFAULT_GAME)
    play.add_argument("--variant", default=None)
    play.add_argument(
        "--option", action="append", default=[], type=_option, metavar="KEY=VALUE",
        help="a match option when creating a match (repeatable), e.g. clock_scale=0.5",
    )
    play.add_argument("--match", default=None, help="join this match (default: create one)")
    play.add_argument("--seat", type=int, default=None, help="the seat to claim (default: first free)")
    play.add_argument("--name", default=None, help="your name (default: your login name)")
    play.add_argument("--token", default=None, help="rejoin a seat you hold with its token")
    play.add_argument("--spectate", action="store_true", help="watch without a seat")
    play.add_argument("--since", type=int, default=0, help=argparse.SUPPRESS)

    bots = sub.add_parser("bots", help="play complete matches between bots")
    bots.add_argument("game", metavar="GAME")
    bots.add_argument("--variant", default=None)
    bots.add_argument("--matches", type=int, default=1)
    bots.add_argument(
        "--server", default=None, help="server URL (default: start an embedded server in-process)"
    )
    bots.add_argument("--clock-scale", type=float, default=None, dest="clock_scale")
    bots.add_argument(
        "--option", action="append", default=[], type=_option, metavar="KEY=VALUE",
        help="another match option (repeatable)",
    )
    bots.add_argument(
        "--bot", action="append", default=[], metavar="BOT",
        help="the bot in the next seat (repeat per seat, cycled over the seats; default: the "
        "game's line-up, e.g. heuristic random)",
    )
    bots.add_argument("--concurrency", type=int, default=4)
    bots.add_argument("--seed", default=None, help="seed of the bots' randomness")
    bots.add_argument("--timeout", type=float, default=600.0, help="seconds a match may take")
    bots.add_argument(
        "--verify", action="store_true", help="also fetch each finished log and verify it"
    )

    replay = sub.add_parser("replay", help="print (and verify) a finished match's log")
    replay.add_argument("source", metavar="MATCH_ID|LOG_FILE")
    replay.add_argument("--server", default=DEFAULT_SERVER)
    replay.add_argument("--verify", action="store_true")
    replay.add_argument(
        "--round", type=int, default=None, dest="round_no", metavar="N",
        help="print only round N (everything is still folded, and verified with --verify)",
    )
    replay.add_argument(
        "--as", default=None, dest="viewer", metavar="SEAT|spectator", type=_viewer_arg,
        help="print what this viewer was shown (its updates, numbered as it got them)",
    )
    return parser


def _viewer_arg(text: str) -> Any:
    """`--as`: a seat number or 'spectator', as a projections Viewer."""
    from projections.contract import SPECTATOR, Viewer

    if text.strip().lower() == "spectator":
        return SPECTATOR
    try:
        seat = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("a seat number or 'spectator'") from None
    if seat < 0:
        raise argparse.ArgumentTypeError("a seat number is 0 or more")
    return Viewer(seat=seat)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = {"serve": cmd_serve, "play": cmd_play, "bots": cmd_bots, "replay": cmd_replay}
    try:
        code = handler[args.command](args)
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:  # e.g. `daedalus replay ID | head`
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 1
    if argv is None:
        sys.exit(code)
    return code


def _err(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


# --- serve -----------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace) -> int:
    from server import main as server_main

    redis_url = args.redis_url or os.environ.get("REDIS_URL") or None
    server_main.serve(
        host=args.host,
        port=args.port,
        redis_url=redis_url,
        allowed_origins=list(args.allow_origin) or None,
    )
    return 0


# --- play ------------------------------------------------------------------------------


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


def cmd_play(args: argparse.Namespace) -> int:
    return asyncio.run(_play(args))


async def _play(args: argparse.Namespace) -> int:
    from clients.terminal import TERMINALS

    async with DaedalusHttp(args.server) as http:
        try:
            match_id, token, game = await _join(http, args)
        except (HttpError, ConnectionError, OSError) as exc:
            _err(f"daedalus play: {exc}")
            return 1
    terminal = TERMINALS.get(game)
    conn = MatchConnection(args.server, match_id, token=token, since=args.since)
    try:
        await conn.connect()
    except ConnectionFailed as exc:
        _err(f"daedalus play: {exc}")
        return 1
    stdin = _Stdin(asyncio.get_running_loop())
    skew = 0  # server ms minus local ms, from the latest update
    history: list[str] = []

    def seconds_left() -> float | None:
        view = conn.view
        if not view or view.get("deadline") is None:
            return None
        deadline = float(view["deadline"])
        return max(0.0, (deadline - (time.time() * 1000 + skew)) / 1000)

    def show() -> None:
        view = conn.view
        if view is None:
            print("(no view yet)")
        elif terminal is not None:
            print(terminal.render(view, seconds_left()))
        else:
            print(json.dumps(view, indent=2, sort_keys=True))
        sys.stdout.flush()

    async def send(command: dict[str, Any]) -> None:
        try:
            result = await conn.send_command(command)
        except (ConnectionError, TimeoutError) as exc:
            print(f"! not sent: {exc}", flush=True)
            return
        if result.accepted:
            note = " (again)" if result.duplicate else ""
            print(f"ok{note}", flush=True)
            for warning in result.warnings:
                print(f"  warning: {warning}", flush=True)
        else:
            print(f"! rejected ({result.code}): {result.reason}", flush=True)

    async def receive() -> None:
        nonlocal skew
        async for message in conn:
            kind = message.get("type")
            if kind == "welcome":
                seat = message.get("seat")
                who = f"the player in seat {seat}" if seat is not None else "a spectator"
                print(f"connected to match {match_id} as {who}", flush=True)
                if message.get("seq") == conn.hello_since:  # no catch-up follows: show it now
                    show()
            elif kind == "update":
                live = message["seq"] > (conn.welcome or {}).get("seq", 0)  # not catch-up
                if live:
                    skew = int(message.get("ts", 0)) - int(time.time() * 1000)
                view = message["view"]
                lines = _event_lines(terminal, view, message.get("events", []))
                history.extend(lines)
                if live:
                    for line in lines:
                        print(f"* {line}")
                if conn.backlog() == 0 or view.get("ended"):
                    show()
                if view.get("ended"):
                    return
            elif kind == "error":
                print(f"! error {message.get('code')}: {message.get('message')}", flush=True)
        print(f"connection ended: {conn.close_reason}", flush=True)

    async def commands() -> None:
        pending: set[asyncio.Task[None]] = set()
        if terminal is not None and token is not None:
            print(terminal.help, flush=True)
        while True:
            line = await stdin.lines.get()
            if line is None:
                return
            text = line.strip()
            if text in ("quit", "exit", "q"):
                return
            if text in ("", "view", "status", "time"):
                show()
                continue
            if text in ("help", "?"):
                print(terminal.help if terminal is not None else "type a command as JSON", flush=True)
                continue
            if text == "history":
                recalled = terminal.recall(conn.view) if terminal is not None and conn.view else None
                print("\n".join(history if recalled is None else recalled) or "(nothing yet)", flush=True)
                continue
            if token is None:
                print("spectators cannot send commands (help, view, history, quit)", flush=True)
                continue
            try:
                if terminal is not None:
                    command = terminal.parse(text, conn.view)
                else:
                    command = json.loads(text)
            except ValueError as exc:
                print(f"? {exc}", flush=True)
                continue
            task = asyncio.create_task(send(command))
            pending.add(task)
            task.add_done_callback(pending.discard)

    async def reminders() -> None:
        """Say so once when a deadline is 10 seconds away."""
        warned: set[int] = set()
        while True:
            await asyncio.sleep(0.5)
            left = seconds_left()
            view = conn.view
            if left is None or view is None or left > 10 or view["deadline"] in warned:
                continue
            warned.add(view["deadline"])
            waiting = terminal.awaiting(view) if token is not None and terminal is not None else None
            print(f"({left:.0f} s left{f', and {waiting}' if waiting else ''})", flush=True)

    tasks = [
        asyncio.create_task(receive()),
        asyncio.create_task(commands()),
        asyncio.create_task(reminders()),
    ]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await conn.close()
    view = conn.view
    if view is not None and view.get("ended"):
        print("match over.", flush=True)
    return 0


def _event_lines(terminal: Any, view: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
    """An update's events as lines: the engine's here, the game's by its terminal."""
    lines: list[str] = []
    for event in events:
        if event.get("type") in ENGINE_EVENT_TYPES:
            lines.append(_engine_line(event))
        elif terminal is not None:
            lines.extend(terminal.render_events(view, [event]))
        else:
            lines.append(json.dumps(event, sort_keys=True))
    return lines


async def _join(http: DaedalusHttp, args: argparse.Namespace) -> tuple[str, str | None, str]:
    """Create or find the match and take a seat: (match id, token or None, game)."""
    server = http.base_url
    if args.match is None:
        created = await http.create_match(*resolve_game(args.game, args.variant), dict(args.option))
        match_id, game = created["match"], created["game"]
        print(f"created match {match_id} ({game}, {created.get('variant')})")
        print(f"commitment {created.get('commitment')}")
        print(f"the other player joins with: daedalus play --server {server} --match {match_id}")
        print(f"spectators watch with:        daedalus play --server {server} --match {match_id} --spectate")
    else:
        match_id = args.match
        status = await http.status(match_id)
        game = status["game"]
    if args.spectate:
        return match_id, None, game
    if args.token is not None:
        return match_id, args.token, game
    name = args.name or _login_name()
    claimed = await http.claim_seat(match_id, name, args.seat)
    print(f"you are {name} in seat {claimed['seat']}")
    print(f"to rejoin later: daedalus play --server {server} --match {match_id} --token {claimed['token']}")
    sys.stdout.flush()
    return match_id, str(claimed["token"]), game


def _login_name() -> str:
    with contextlib.suppress(Exception):
        return getpass.getuser()[:40] or "player"
    return "player"


# --- bots ------------------------------------------------------------------------------


def resolve_game(game: str, variant: str | None) -> tuple[str, str | None]:
    """(game, variant) for a GAME argument: a hosted game's name, or else the name of a
    variant that exactly one hosted game has (`daedalus bots gatekeeping` is the game
    keys-to-success, variant gatekeeping). A different --variant keeps GAME as given."""
    from projections.registry import GAMES

    if game in GAMES:
        return game, variant
    owners = [name for name, h in GAMES.items() if any(v.name == game for v in h.rules.variants)]
    if len(owners) == 1 and variant in (None, game):
        return owners[0], game
    return game, variant


def cmd_bots(args: argparse.Namespace) -> int:
    from clients.bots import BOTS, LINEUPS

    args.game, args.variant = resolve_game(args.game, args.variant)
    if args.game not in BOTS:
        _err(f"daedalus bots: no bots for {args.game!r} (games with bots: {', '.join(sorted(BOTS))})")
        return 2
    for name in args.bot:
        if name not in BOTS[args.game]:
            _err(f"daedalus bots: no bot {name!r} for {args.game} (bots: {', '.join(sorted(BOTS[args.game]))})")
            return 2
    if args.matches < 1 or args.concurrency < 1:
        _err("daedalus bots: --matches and --concurrency must be at least 1")
        return 2
    if args.seed is None:
        args.seed = str(secrets.randbelow(10**9))
        _err(f"bots: --seed {args.seed}")
    if not args.bot:
        args.bot = list(LINEUPS[args.game])
        _err(f"bots: line-up {' '.join(args.bot)} (the game's default, cycled over the seats)")
    else:
        _err(f"bots: line-up {' '.join(args.bot)} (cycled over the seats)")
    try:
        return asyncio.run(_bots(args))
    except (ConnectionError, HttpError, OSError, RuntimeError) as exc:
        _err(f"daedalus bots: {exc}")
        return 1


@contextlib.asynccontextmanager
async def _server_url(server: str | None) -> AsyncIterator[str]:
    if server is not None:
        yield server
        return
    from server import logs
    from server.main import EmbeddedServer

    # The embedded server logs to stderr, warnings only: stdout is the match lines.
    logs.configure(os.environ.get("DAEDALUS_LOG_LEVEL", "warning"))
    async with EmbeddedServer() as srv:
        yield srv.url


async def _bots(args: argparse.Namespace) -> int:
    options: dict[str, Any] = dict(args.option)
    if args.clock_scale is not None:
        options["clock_scale"] = args.clock_scale
    failures = 0
    wins: dict[str, int] = {}
    from clients.bots import cycled

    async with _server_url(args.server) as url, DaedalusHttp(url) as http:
        limit = asyncio.Semaphore(args.concurrency)

        async def one(index: int) -> None:
            nonlocal failures
            async with limit:
                match_id = "?"
                try:
                    created = await http.create_match(args.game, args.variant, options)
                    match_id = created["match"]
                    seats = int(created.get("seats", 2))
                    lineup = cycled(args.bot, seats)
                    result = await asyncio.wait_for(
                        _bot_match(http, url, args, match_id, lineup, index), args.timeout
                    )
                except Exception as exc:
                    failures += 1
                    why = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
                    _err(f"match {match_id} failed: {why}")
                    return
                winner = result.get("winner")
                label = "draw" if winner is None else lineup[winner]
                wins[label] = wins.get(label, 0) + 1
                print(
                    f"match {match_id} winner={'draw' if winner is None else winner} "
                    f"rounds={result.get('rounds')}",
                    flush=True,
                )

        await asyncio.gather(*(one(i) for i in range(args.matches)))
    summary = ", ".join(f"{k} {v}" for k, v in sorted(wins.items()))
    _err(f"bots: {args.matches - failures}/{args.matches} matches finished ({summary or 'none'})")
    if failures:
        _err(f"daedalus bots: {failures} match(es) did not finish")
        return 1
    return 0


async def _bot_match(
    http: DaedalusHttp,
    url: str,
    args: argparse.Namespace,
    match_id: str,
    lineup: list[str],
    index: int,
) -> dict[str, Any]:
    """Seat the bots (lineup[i] in seat i), play the match over websockets; the result."""
    from clients.bots import bot_factory, play_bot
    from domain.engine import verify
    from projections.registry import rules_by_name

    tokens = []
    for seat, name in enumerate(lineup):
        claimed = await http.claim_seat(match_id, f"{name} bot {seat}", seat)
        tokens.append(claimed["token"])
    conns = [MatchConnection(url, match_id, token=token) for token in tokens]
    try:
        for conn in conns:
            await conn.connect()
        bots = [
            bot_factory(args.game, name)(random.Random(f"{args.seed}:{index}:{seat}"))
            for seat, name in enumerate(lineup)
        ]
        views = await asyncio.gather(*(play_bot(c, b) for c, b in zip(conns, bots, strict=True)))
    finally:
        for conn in conns:
            await conn.close()
    result: dict[str, Any] = views[0]["result"]
    if args.verify:
        checked = verify(rules_by_name(), await http.log(match_id))
        if not checked.ok:
            raise RuntimeError(f"the log does not verify: {checked.failure}")
    return result


# --- replay ----------------------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    source: str = args.source
    try:
        if Path(source).is_file():
            entries = read_log_file(source)
        else:
            entries = asyncio.run(_fetch_log(args.server, source))
    except (HttpError, OSError, ValueError) as exc:
        _err(f"daedalus replay: cannot load {source}: {exc}")
        return 1
    folded = print_replay(entries, round_no=args.round_no, viewer=args.viewer)
    if not args.verify:
        return 0 if folded else 1
    return 0 if print_verify(entries) else 1


async def _fetch_log(server: str, match_id: str) -> list[Any]:
    async with DaedalusHttp(server) as http:
        return await http.log(match_id)


def print_replay(
    entries: Sequence[Any], out: Any = None, *, round_no: int | None = None, viewer: Any = None
) -> bool:
    """Print a log round by round; False (after printing what folded) if it does not fold.

    `round_no`: only that round's entries (all are folded). `viewer` (a projections
    Viewer): not the whole log but that viewer's updates, numbered as it received them,
    in its terminal's words."""
    from clients.terminal import TERMINALS
    from domain import engine
    from projections.common import engine_event, match_view, project_events
    from projections.registry import UnknownGame, hosted

    out = out or sys.stdout

    def say(text: str = "") -> None:
        print(text, file=out)

    if not entries:
        say("the log is empty")
        return False
    first = entries[0]
    body = first.body if isinstance(first.body, dict) else {}
    try:
        host = hosted(str(body.get("game")))
    except UnknownGame as exc:
        say(f"cannot replay: {exc}")
        return False
    say(
        f"match {body.get('match')}: {body.get('game')} / {body.get('variant')} "
        f"(rules {body.get('rules_version')})"
    )
    say(f"options {json.dumps(body.get('options'), sort_keys=True)}")
    say(f"commitment {body.get('commitment')}")
    try:
        ms = engine.open_match(host.rules, first)
    except engine.IntegrityError as exc:
        say(f"FAILED at {exc}")
        return False
    if viewer is not None and viewer.seat is not None and viewer.seat >= len(ms.names):
        say(f"no seat {viewer.seat}: this match has seats 0 to {len(ms.names) - 1}")
        return False
    if viewer is not None:
        who = "a spectator" if viewer.seat is None else f"seat {viewer.seat}"
        say(f"as {who} saw it (update numbers as {who} received them)")
    terminal = TERMINALS.get(str(body.get("game")))
    shown_round: int | None = None
    updates = 0
    seen_round = round_no is None
    for entry in entries[1:]:
        before = ms
        try:
            ms, outcome = engine.apply(ms, entry)
        except engine.IntegrityError as exc:
            say(f"FAILED at {exc}")
            return False
        round_ = host.rules.round_of(before.game_state) if before.started else None
        wanted = round_no is None or round_ == round_no
        seen_round = seen_round or wanted
        shown = None if viewer is None else project_events(host.views, ms, outcome, viewer)
        if shown is not None:
            if not shown:
                continue  # no update for this viewer
            updates += 1
        if not wanted:
            continue
        if round_ is not None and round_ != shown_round:
            say(f"--- round {round_} ---")
            shown_round = round_
        if shown is not None:
            say(f"update {updates} +{(entry.ts - before.created) / 1000:.3f}s")
            view = match_view(host.views, ms, viewer)
            for line in _event_lines(terminal, view, shown):
                say(f"    {line}")
            continue
        say(_entry_line(entry, before, show_body=outcome.rejection is not None or not outcome.events))
        for event in outcome.events:
            projected = engine_event(event)
            if projected is not None:
                say(f"    {_engine_line(projected)}")
            else:
                for line in host.views.describe(ms, event):
                    say(f"    {line}")
        if outcome.rejection is not None:
            say(f"    rejected ({outcome.rejection.code}): {outcome.rejection.reason}")
        for warning in outcome.warnings:
            say(f"    warning: {warning}")
    if not seen_round:
        say(f"no round {round_no} in this log")
    if ms.result is not None:
        r = ms.result
        winner = "draw" if r.winner is None else f"seat {r.winner} ({ms.names[r.winner]})"
        say(f"result: {winner} after {r.rounds} rounds, {r.reason}; scores {list(r.scores)}")
    else:
        say("the log ends before the match does")
    return seen_round


def _entry_line(entry: Any, before: Any, *, show_body: bool) -> str:
    at = (entry.ts - before.created) / 1000
    head = f"#{entry.seq} +{at:.3f}s {entry.kind}"
    if entry.seat is not None:
        name = before.names[entry.seat] if 0 <= entry.seat < len(before.names) else None
        head += f" seat {entry.seat}" + (f" ({name})" if name else "")
    if show_body and entry.kind == "command":
        head += f" {json.dumps(entry.body, sort_keys=True)}"
    return head


ENGINE_EVENT_TYPES = frozenset({"seat_taken", "match_started", "match_ended", "revealed"})


def _engine_line(event: dict[str, Any]) -> str:
    """An engine event (projections.common.engine_event) in words."""
    kind = event["type"]
    if kind == "seat_taken":
        return f"{event['name']} takes seat {event['seat']}"
    if kind == "match_started":
        return "the match starts"
    if kind == "match_ended":
        winner = "a draw" if event.get("winner") is None else f"seat {event['winner']} wins"
        return f"the match ends: {winner} ({event.get('reason')}), scores {list(event.get('scores') or ())}"
    if kind == "revealed":
        return f"revealed seed {event['seed']} and setup {json.dumps(event['setup'], sort_keys=True)}"
    return json.dumps(event, sort_keys=True)


def print_verify(entries: list[Any], out: Any = None) -> bool:
    from domain.engine import verify
    from projections.registry import rules_by_name

    out = out or sys.stdout
    checked = verify(rules_by_name(), entries)
    if checked.ok:
        if checked.setup == "seed":
            print("setup: drawn again from the revealed seed, and the same", file=out)
        elif checked.setup == "host":
            print("setup: given by the match's host, not drawn from the seed", file=out)
        print(f"verify: ok ({checked.entries} entries, commitment {checked.commitment})", file=out)
        return True
    where = f"entry {checked.failed_seq}"
    if checked.failed_round is not None:
        where += f" (round {checked.failed_round})"
    reason = checked.failure or "unknown failure"
    if reason.startswith(where + ": "):
        reason = reason[len(where) + 2 :]
    print(f"verify: FAILED at {where}: {reason}", file=out)
    return False


if __name__ == "__main__":
    main()
