"""The `daedalus` command: serve, play, bots, replay.

    daedalus serve [--host H] [--port P] [--redis-url URL] [--allow-origin O ...] [--workers N]
    daedalus play --server URL [--game G] [--variant V] [--match ID] [--seat N] [--name NAME] [--spectate]
    daedalus bots GAME [--variant V] [--matches N] [--players N] [--server URL] [--clock-scale F]
                       [--bot A] [--bot B] [--concurrency C] [--seed S]
    daedalus replay (MATCH_ID | LOG_FILE) [--server URL] [--verify] [--round N] [--as SEAT|spectator]
                    [--picture ascii|svg [--upto SEQ] [--out FILE]]
    daedalus archive --older-than AGE [--to DIR|s3://BUCKET/PREFIX] [--redis-url URL] [--dry-run]
    daedalus plan show FILE [--svg OUT.svg] [--json OUT.json]   (Labyrinth plans: clients/plan_cli.py)
    daedalus plan check FILE [--players N] [--option KEY=VALUE ...] [--json]
    daedalus plan generate [--seed S] [--size WxH] [--players N] [--option KEY=VALUE ...] [--out FILE] [--svg OUT.svg]

Extras: `play --option KEY=VALUE` (match options when creating) and `--token T` (come
back to a seat); `bots --option KEY=VALUE`, `--timeout S` (per match) and `--verify`
(fetch and verify every finished log); `replay --round N` prints one round (a disputed
one), `--as SEAT` (or `--as spectator`) what that viewer was shown, update by update, as
its terminal showed it. The wire protocol is docs/protocol.md.

GAME (and `play --game`) is a hosted game's name, or a variant name that only one hosted
game has, which then selects that game and variant: `daedalus bots gatekeeping` is
`daedalus bots keys-to-success --variant gatekeeping`.

The arguments, `serve` and `bots` are here; the terminal of `play` is clients/play.py and
the printer of `replay` clients/replay.py.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import secrets
import shlex
import shutil
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from clients.client import (
    DEFAULT_SERVER,
    DaedalusHttp,
    HttpError,
    MatchConnection,
    read_log_file,
)
from clients.replay import print_replay, print_unsealed, print_verify, verify_log

DEFAULT_GAME = "five-card-trick"
MATCH_ID = re.compile(r"[A-Za-z0-9_-]+")
"""What may be a match id (server/ids.py makes them of letters and digits); anything
else `replay` reads as a file name."""


# --- arguments -------------------------------------------------------------------------


def _option(text: str) -> tuple[str, Any]:
    """KEY=VALUE: VALUE as JSON if it reads as JSON, else as text; KEY=@FILE: the text of
    FILE (a host's own maze or plan)."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    if raw.startswith("@"):
        try:
            with open(raw[1:], encoding="utf-8") as file:
                return key, file.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise argparse.ArgumentTypeError(f"option {key}: cannot read {raw[1:]!r}: {exc}") from None
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    return key, value


def version() -> str:
    """The installed package's version (the source tree's when it is not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("daedalus")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The arguments. Every flag says what it does and its default."""
    parser = argparse.ArgumentParser(
        prog="daedalus", description="Daedalus: a game server for hidden-information games."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the game server")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default: %(default)s)")
    serve.add_argument(
        "--redis-url", default=None, help="Redis to keep match logs in (default: $REDIS_URL, "
        "else an in-process store that ends with the process)"
    )
    serve.add_argument(
        "--allow-origin", action="append", default=[], metavar="ORIGIN", dest="allow_origin",
        help="a browser origin allowed to open a websocket (repeatable; '*' for any; default: "
        "$DAEDALUS_ALLOWED_ORIGINS, else localhost pages and non-browser clients)",
    )
    serve.add_argument(
        "--workers", type=int, default=1, metavar="N",
        help="server processes sharing the port, each serving any match; a connection that "
        "names its match (/ws?match=ID) is served by that match's worker, and worker K's "
        "metrics are at /metrics?worker=K (N > 1 needs a real Redis; a worker that dies "
        "stops the server with status 1, none is restarted; default: %(default)s)",
    )

    from projections.registry import GAMES

    games = f"{', '.join(GAMES)}, or a variant only one game has"
    play = sub.add_parser("play", help="play (or watch) a match in the terminal")
    play.add_argument("--server", default=DEFAULT_SERVER, help="server URL (default: %(default)s)")
    play.add_argument(
        "--game", default=DEFAULT_GAME,
        help=f"the game of a match to create ({games}; default: %(default)s)",
    )
    play.add_argument(
        "--variant", default=None, help="the variant of a match to create (default: the game's default)"
    )
    play.add_argument(
        "--option", action="append", default=[], type=_option, metavar="KEY=VALUE",
        help="a match option when creating a match (repeatable), e.g. clock_scale=0.5, or "
        "plan=@FILE for the text of a file (default: none, the variant's defaults)",
    )
    play.add_argument("--match", default=None, help="join this match (default: create one)")
    play.add_argument("--seat", type=int, default=None, help="the seat to claim (default: the first free one)")
    play.add_argument("--name", default=None, help="your name (default: your login name)")
    play.add_argument(
        "--token", default=None,
        help="rejoin the seat this token holds, in the match given by --match (default: claim a new seat)",
    )
    play.add_argument(
        "--spectate", action="store_true", help="watch without a seat (default: take a seat)"
    )
    play.add_argument(
        "--host", action="store_true",
        help="create the match and watch it as its host, with the full view and no seat: for a "
        "match on a plan or maze you supply with --option (default: create it and take a seat)",
    )
    play.add_argument(
        "--audit", default=None, metavar="KEY",
        help="watch the match given by --match with the full view, by its audit key (the host "
        "of a plan or maze it supplied, during the match; anyone with the key, after it; "
        "default: none)",
    )
    play.add_argument("--since", type=int, default=0, help=argparse.SUPPRESS)
    play.add_argument(
        "--receipts", default=None, metavar="FILE",
        help="append the server's signed receipts of the match to FILE, for `replay --verify "
        "--receipts` (default: keep none)",
    )

    bots = sub.add_parser("bots", help="play complete matches between bots")
    bots.add_argument("game", metavar="GAME", help=f"the game ({games})")
    bots.add_argument("--variant", default=None, help="the variant (default: the game's default)")
    bots.add_argument("--matches", type=int, default=1, help="how many matches (default: %(default)s)")
    bots.add_argument(
        "--players", type=int, default=None, metavar="N",
        help="the match option players, for a game that has it (default: the variant's)",
    )
    bots.add_argument(
        "--server", default=None, help="server URL (default: start an embedded server in-process)"
    )
    bots.add_argument(
        "--clock-scale", type=float, default=None, dest="clock_scale",
        help="the clock_scale option: every time limit times this (default: the variant's, 1)",
    )
    bots.add_argument(
        "--option", action="append", default=[], type=_option, metavar="KEY=VALUE",
        help="another match option (repeatable; default: none, the variant's defaults)",
    )
    bots.add_argument(
        "--bot", action="append", default=[], metavar="BOT",
        help="the bot in the next seat (repeat per seat, cycled over the seats; default: the "
        "game's line-up, e.g. heuristic random)",
    )
    bots.add_argument(
        "--concurrency", type=int, default=4, help="matches played at once (default: %(default)s)"
    )
    bots.add_argument("--seed", default=None, help="seed of the bots' randomness (default: a random one, printed)")
    bots.add_argument(
        "--timeout", type=float, default=600.0, help="seconds a match may take (default: %(default)s)"
    )
    bots.add_argument(
        "--verify", action="store_true",
        help="also fetch each finished log and verify it (default: do not)",
    )
    bots.add_argument(
        "--receipts", default=None, metavar="FILE",
        help="append the receipts the server signed for the bots' seats to FILE, for `replay "
        "--verify --receipts` (default: keep none)",
    )

    replay = sub.add_parser("replay", help="print (and verify) a finished match's log")
    replay.add_argument(
        "source", metavar="MATCH_ID|LOG_FILE",
        help="a match id (its log is fetched from --server) or a log file (GET /matches/ID/log)",
    )
    replay.add_argument(
        "--server", default=DEFAULT_SERVER, help="server to fetch a match id's log from (default: %(default)s)"
    )
    replay.add_argument(
        "--verify", action="store_true",
        help="recompute every round and check the digests and the commitment (default: only print)",
    )
    replay.add_argument(
        "--round", type=int, default=None, dest="round_no", metavar="N",
        help="print only round N (everything is still folded, and verified with --verify; "
        "default: every round)",
    )
    replay.add_argument(
        "--unseal", default=None, metavar="AUDIT_KEY",
        help="the match's audit key (POST /matches gave it): the log in clear, sealed values "
        "included; with --verify also check that every seal of the public log opens to them "
        "(default: none, the public log as anyone sees it)",
    )
    replay.add_argument(
        "--receipts", default=None, metavar="FILE",
        help="with --verify (implied), also hold the log against the receipts in FILE (`play` "
        "or `bots --receipts` wrote them): name any entry rewritten after one was given "
        "(default: no receipts)",
    )
    replay.add_argument(
        "--as", default=None, dest="viewer", metavar="SEAT|spectator", type=_viewer_arg,
        help="print what this viewer was shown (its updates, numbered as it got them; "
        "default: the whole log)",
    )
    replay.add_argument(
        "--picture", default=None, choices=("ascii", "svg"),
        help="instead of the moves, draw the match up to --upto as an auditor sees it (Labyrinth: "
        "the plan with every player's path; default: no picture)",
    )
    replay.add_argument(
        "--upto", type=int, default=None, metavar="SEQ",
        help="with --picture: up to entry SEQ (the #SEQ the replay prints; default: the whole log)",
    )
    replay.add_argument(
        "--out", default=None, metavar="FILE",
        help="with --picture: write the picture to FILE (default: print it)",
    )
    archive = sub.add_parser(
        "archive", help="move finished matches out of Redis into verified log files",
        description="Write every finished match whose last entry is older than AGE to "
        "DIR/<match id>.jsonl (the log as stored, verified as replay --verify verifies it, "
        "written and read back), then remove its keys from Redis. A match not over, or "
        "whose log or file does not verify, stays in Redis. A server with DAEDALUS_ARCHIVE=DIR "
        "serves the archived logs at GET /matches/ID/log as before.",
    )
    archive.add_argument(
        "--older-than", required=True, metavar="AGE",
        help="archive matches finished longer ago than AGE: a number and s, m, h, d or w "
        "(7d, 12h; required, no default)",
    )
    archive.add_argument(
        "--to", default=None, metavar="DIR",
        help="the archive: a directory, or s3://BUCKET/PREFIX (boto3's credentials and "
        "AWS_ENDPOINT_URL; pip install 'daedalus[s3]') (default: DAEDALUS_ARCHIVE)",
    )
    archive.add_argument(
        "--redis-url", default=None, help="Redis to archive from (default: REDIS_URL; "
        "DAEDALUS_REDIS_CLUSTER=1 for a cluster)",
    )
    archive.add_argument(
        "--dry-run", action="store_true",
        help="only say which matches would be archived: write and remove nothing (default: off)",
    )
    from clients.plan_cli import add_plan_parser

    add_plan_parser(sub)
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
    from clients.plan_cli import cmd_plan

    handler = {
        "serve": cmd_serve, "play": cmd_play, "bots": cmd_bots, "replay": cmd_replay,
        "archive": cmd_archive, "plan": cmd_plan,
    }
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


def program() -> str:
    """The start of a command line that runs this `daedalus` again, for the commands the
    CLI prints (for the other player, to rejoin, to replay): `daedalus` when the one on
    PATH is this one, else the path this one was started by (`.venv/bin/daedalus` as an
    absolute path), or `python -m clients.cli` when it was started as a module."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    if not argv0 or argv0 == "-c" or argv0.endswith(".py"):
        return f"{shlex.quote(sys.executable)} -m clients.cli"
    started = Path(argv0).resolve()
    on_path = shutil.which("daedalus")
    if on_path is not None and Path(on_path).resolve() == started:
        return "daedalus"
    return shlex.quote(str(started))


# --- serve -----------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace) -> int:
    from server import main as server_main

    redis_url = args.redis_url or os.environ.get("REDIS_URL") or None
    code = server_main.serve(
        host=args.host,
        port=args.port,
        redis_url=redis_url,
        allowed_origins=list(args.allow_origin) or None,
        workers=args.workers,
    )
    return code if isinstance(code, int) else 0


# --- play ------------------------------------------------------------------------------


def cmd_play(args: argparse.Namespace) -> int:
    from clients.play import play

    return asyncio.run(play(args))


# --- bots ------------------------------------------------------------------------------


def resolve_game(game: str, variant: str | None) -> tuple[str, str | None]:
    """(game, variant) for a GAME argument: a hosted game's name, or else the name of a
    variant that exactly one hosted game has (`daedalus bots gatekeeping` is the game
    keys-to-success, variant gatekeeping). A different --variant keeps GAME as given."""
    from projections.registry import resolve_game as resolve

    return resolve(game, variant)  # the server reads `POST /matches` the same way


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
    if args.players is not None:
        from projections.registry import hosted

        rules = hosted(args.game).rules
        schema = rules.options_schema(args.variant or rules.default_variant)
        if "players" not in schema:
            hint = " (its number of seats is option 'seats': --option seats=N)" if "seats" in schema else ""
            _err(f"daedalus bots: --players: {args.game} has no option 'players'{hint}")
            return 2
        args.option.append(("players", args.players))
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
        if args.receipts:
            from clients.client import write_receipts

            created = [r for r in http.receipts if r.get("match") == match_id]
            write_receipts(args.receipts, created + [r for c in conns for r in c.receipts])
    result: dict[str, Any] = views[0]["result"]
    if args.verify:
        ok, failure = verify_log(await http.log(match_id))
        if not ok:
            raise RuntimeError(f"the log does not verify: {failure}")
    return result


# --- replay ----------------------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    source: str = args.source
    path = Path(source)
    try:
        if path.is_file():
            entries = read_log_file(source)
        elif path.exists():
            _err(f"daedalus replay: {source} is not a file")
            return 1
        elif not MATCH_ID.fullmatch(source):
            _err(f"daedalus replay: no such file: {source} (and not a match id: those are letters and digits)")
            return 1
        else:
            entries = asyncio.run(_fetch_log(args.server, source, args.unseal))
        published = None
        if args.unseal is not None and not path.is_file():
            published = asyncio.run(_fetch_log(args.server, source))
    except (HttpError, OSError, ValueError) as exc:
        _err(f"daedalus replay: cannot load {source}: {exc}")
        return 1
    from clients.replay import print_receipts, read_receipts

    receipts = None
    if args.receipts is not None:
        args.verify = True
        try:
            receipts = read_receipts(args.receipts)
        except (OSError, ValueError) as exc:
            _err(f"daedalus replay: cannot load {args.receipts}: {exc}")
            return 1
    if args.picture is None and (args.upto is not None or args.out is not None):
        _err("daedalus replay: --upto and --out go with --picture ascii|svg")
        return 2
    if args.picture is not None and (args.round_no is not None or args.viewer is not None):
        _err("daedalus replay: --picture draws up to an entry (--upto SEQ); --round and --as print the moves")
        return 2
    if args.picture is not None:
        from clients.replay import print_picture

        folded = print_picture(entries, args.picture, upto=args.upto, out_file=args.out)
    else:
        folded = print_replay(entries, round_no=args.round_no, viewer=args.viewer, say_failure=not args.verify)
    if not args.verify:
        return 0 if folded else 1
    verified = print_verify(entries)
    if receipts is not None:
        verified = print_receipts(entries, receipts) and verified
    if args.unseal is not None:
        verified = print_unsealed(entries, args.unseal, published) and verified
    return 0 if verified else 1


async def _fetch_log(server: str, match_id: str, audit_key: str | None = None) -> list[Any]:
    async with DaedalusHttp(server) as http:
        return await http.log(match_id, audit_key)


# --- archive ---------------------------------------------------------------------------


def cmd_archive(args: argparse.Namespace) -> int:
    from server.archive import open_archive, parse_age

    try:
        older_than = parse_age(args.older_than)
    except ValueError as exc:
        _err(f"daedalus archive: --older-than: {exc}")
        return 2
    to = args.to or os.environ.get("DAEDALUS_ARCHIVE", "").strip()
    if not to:
        _err("daedalus archive: say where to archive to: --to DIR (or DAEDALUS_ARCHIVE)")
        return 2
    try:
        where = open_archive(to)
    except ValueError as exc:
        _err(f"daedalus archive: --to {to}: {exc}")
        return 2
    redis_url = args.redis_url or os.environ.get("REDIS_URL", "").strip()
    if not redis_url:
        _err("daedalus archive: say which Redis: --redis-url URL (or REDIS_URL)")
        return 2
    return asyncio.run(_archive(redis_url, where, older_than, args.dry_run))


async def _archive(redis_url: str, to: Any, older_than: float, dry_run: bool) -> int:
    from server.archive import archive_matches
    from server.config import Settings
    from server.store import UNAVAILABLE, EventStore

    settings = Settings(redis_url=redis_url)
    store = EventStore.from_url(redis_url, timeout=settings.redis_timeout, cluster=settings.redis_cluster)
    try:
        report = await archive_matches(
            store, to, older_than_s=older_than, dry_run=dry_run, say=lambda line: print(line, flush=True)
        )
    except UNAVAILABLE as exc:
        _err(f"daedalus archive: Redis at {redis_url} did not answer: {exc!r}")
        return 1
    finally:
        await store.close()
    done = "would be archived" if dry_run else "archived"
    print(
        f"{len(report.archived)} {done}; left in Redis: {len(report.recent)} with an entry "
        f"newer than {args_age(older_than)}, {len(report.unfinished)} not over, "
        f"{len(report.failed)} on an error (said above)"
    )
    return 1 if report.failed else 0


def args_age(seconds: float) -> str:
    return f"{seconds:g} s" if seconds < 3600 else f"{seconds / 3600:g} h"


if __name__ == "__main__":
    main()
