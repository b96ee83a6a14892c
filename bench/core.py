"""What the match core costs a command, without sockets, a store or an event loop.

    .venv/bin/python bench/core.py [--game five-card-trick] [--rounds 300] [--passes 7] [--updates view|events]

A match of random bots is played through the engine (`clients.driver.simulate`, not
timed); then its entries are proposed again one by one through a `MatchCore` (server/core.py)
created as a server creates it (log version 4, an audit key; the server's signing key, so
receipts are signed), as a server proposes and appends its own entries
(`MatchCore.propose`, then `MatchCore.appended`), with every seat subscribed: the rules
and the sealing, the fold's bookkeeping, each seat's update frame (its events and view,
encoded; `--updates events`: its events only, as a hello asking for `"updates": "events"`
gets them) and the receipts. Prints microseconds per command (the fastest and the median of
`--passes` passes, each over a match of its own; the warm-up plays yet another).

Instructions rather than seconds (repeatable on a loaded machine): `--once` makes one
pass inside `functools.reduce`, so that callgrind counts only it:

    PYTHONHASHSEED=0 valgrind --tool=callgrind --toggle-collect=functools_reduce \\
        .venv/bin/python bench/core.py --once --rounds 100

("Collected" is the pass's instructions; divide by the commands it prints.) To compare a
change with the code before it, run the same command in a git worktree of that code.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import hashlib
import os
import pstats
import random
import statistics
import sys
import time
from pathlib import Path

# The checkout this is run from (a worktree of other code, for a comparison) comes first.
sys.path.insert(0, os.getcwd())
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from clients.bots import BOTS
from clients.driver import simulate
from domain import engine
from domain.engine import Entry
from projections.contract import Viewer
from projections.registry import hosted
from server.core import Append, MatchCore
from server.keys import ServerKey

SEATS = {"five-card-trick": 2, "keys-to-success": 13}


def match_log(game: str, rounds: int, tag: str = "") -> tuple[Entry, list[Entry]]:
    """A create entry of the current log version and the entries after it, of one bots' match (`tag`:
    another match, its seed and bots' choices drawn from it)."""
    options = {"rounds": rounds, "max_rounds": rounds} if game == "five-card-trick" else {}
    seed = b"\x05" * 32 if not tag else hashlib.sha256(tag.encode()).digest()
    bots = [BOTS[game]["random"](random.Random(f"bench-core:{tag}{i}")) for i in range(SEATS[game])]
    sim = simulate(game, bots, options=options, seed=seed, max_entries=100_000)
    create = sim.entries[0]
    first = engine.create_entry(
        hosted(game).rules, match_id=create.body["match"], variant=create.body["variant"],
        options=options, seed=seed, ts=create.ts, audit_key=b"\x01" * 32,
    )
    return first, sim.entries[1:]


def one_pass(
    first: Entry, rest: list[Entry], key: ServerKey, seats: int, with_view: bool = True
) -> float:
    """Seconds spent proposing and appending `rest` (the set-up not counted)."""
    core: MatchCore[int] = MatchCore(first, "1-0", key=key)
    for s in range(seats):
        core.subscribe(s, Viewer(seat=s), None, {"type": "welcome"}, with_view)
    spent = 0.0
    for i, e in enumerate(rest, 2):
        t0 = time.perf_counter()
        decided = core.propose(kind=e.kind, seat=e.seat, body=e.body, now=e.ts, cid=e.cid)
        if not isinstance(decided, Append):
            raise RuntimeError(f"entry {e.seq} was not appended again: {decided}")
        core.appended(f"{i}-0", decided)
        spent += time.perf_counter() - t0
    return spent


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", choices=sorted(SEATS), default="five-card-trick")
    p.add_argument("--rounds", type=int, default=300, help="Five-Card Trick: the match's rounds")
    p.add_argument("--passes", type=int, default=7)
    p.add_argument("--once", action="store_true", help="one pass inside functools.reduce (callgrind)")
    p.add_argument("--profile", action="store_true", help="cProfile one pass, by own time")
    p.add_argument("--updates", choices=["view", "events"], default="view",
                   help="what each seat's updates carry: the view too (default), or the events only")
    args = p.parse_args(argv)
    with_view = args.updates == "view"
    key = ServerKey(Ed25519PrivateKey.from_private_bytes(b"\x02" * 32))
    seats = SEATS[args.game]
    # The warm-up (caches, the registry's imports) plays another match than the ones
    # measured: the projections keep parts of views by value, and a pass over the very
    # match just played would find them all kept, which no server sees.
    one_pass(*match_log(args.game, args.rounds, "warm-up"), key, seats, with_view)
    first, rest = match_log(args.game, args.rounds)
    commands = sum(1 for e in rest if e.kind == "command")
    if args.once:
        functools.reduce(lambda acc, _: one_pass(first, rest, key, seats, with_view), range(1), 0.0)
        print(f"entries={len(rest)} commands={commands}")
        return 0
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        one_pass(first, rest, key, seats, with_view)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
    per_command = []
    for i in range(args.passes):  # each pass a match of its own (see the warm-up)
        first, rest = match_log(args.game, args.rounds, f"pass {i}") if i else (first, rest)
        commands = sum(1 for e in rest if e.kind == "command")
        per_command.append(one_pass(first, rest, key, seats, with_view) / commands)
    print(f"{args.game}: {args.passes} matches of about {len(rest)} entries, {seats} seats subscribed "
          f"(updates: {args.updates}); "
          f"us per command: fastest {min(per_command) * 1e6:.1f}, "
          f"median {statistics.median(per_command) * 1e6:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
