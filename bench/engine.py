"""How fast the pure reducer folds long match logs: commands folded per second.

    .venv/bin/python bench/engine.py [--repeat N] [--matches M] [--rounds R] [--seed S]

Logs are generated in-process by bots playing through `domain.engine.propose`
(`clients.bots.simulate`). Five-Card Trick: one *long* match per variant (the scheduled
end pushed to R rounds, so one log holds about 2*R commands) and *many* ordinary matches
of the default variant (M logs folded one after another, each from its create entry).
Memory Maze: per edition M/4 ordinary matches (explorer against random) one after another,
and for black-garnet and minos one long match of two random bots (a few thousand moves).
Keys to Success: per variant M/2 whole 13-seat matches (heuristic and random bots in
alternate seats) one after another; a match is at most nine rounds, so none is long.
Generation is not timed. Then every set of logs is folded with `engine.fold` (open the
create entry, then `engine.apply` per entry: chain digest, outcome digest, the rules)
N times; the median time gives the figures. For comparison the same logs are also
stepped without the digest checks (`engine.step` alone), which is the game's own share.

commands/s counts `command` entries (the players' commands) folded per second; entries/s
counts every entry (joins and ticks too).

Every game prints its rate over all its logs (`<game>: N commands/s ...`); the last line
is `commands/s=<median>` for Five-Card Trick (all its logs together), printed last
whatever the games' order (with `--game` and no Five-Card Trick: the first game's).
Adding a game is adding an entry to GENERATORS: a function returning named sets of logs.

Instructions rather than seconds (repeatable on a loaded machine): `--save FILE` writes
the first game's logs (msgspec JSON) and exits; `--fold-once FILE` folds them once, the
fold alone inside `functools.reduce`, so that callgrind counts only it:

    .venv/bin/python bench/engine.py --game five-card-trick --matches 10 --rounds 40 --save /tmp/fct.json
    valgrind --tool=callgrind --toggle-collect=functools_reduce \
        .venv/bin/python bench/engine.py --game five-card-trick --fold-once /tmp/fct.json

("Collected" is the fold's instructions; divide by the commands it prints.)
"""

from __future__ import annotations

import argparse
import functools
import gc
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.machine import interpreter
from clients.bots import BOTS, simulate
from domain import engine
from domain.engine import Entry
from projections.registry import hosted

Logs = list[list[Entry]]
Generator = Callable[[argparse.Namespace], dict[str, Logs]]


# --- log generators, one per game -------------------------------------------------------


def _seed(args: argparse.Namespace, *parts: object) -> bytes:
    import hashlib

    return hashlib.sha256(":".join(map(str, (args.seed, *parts))).encode()).digest()


def five_card_trick_logs(args: argparse.Namespace) -> dict[str, Logs]:
    game = "five-card-trick"
    rules = hosted(game).rules
    sets: dict[str, Logs] = {}
    # One long match per variant: heuristic against random, the end pushed to R rounds.
    for v in rules.variants:
        options = {"rounds": args.rounds, "max_rounds": args.rounds}
        bots = [
            BOTS[game]["heuristic"](random.Random(f"{args.seed}:{v.name}:0")),
            BOTS[game]["random"](random.Random(f"{args.seed}:{v.name}:1")),
        ]
        sim = simulate(game, bots, variant=v.name, options=options,
                       seed=_seed(args, v.name), max_entries=20 * args.rounds + 100)
        sets[f"long {v.name} ({args.rounds} rounds)"] = [sim.entries]
    # Many ordinary matches (default variant and options), folded one after another.
    many: Logs = []
    for i in range(args.matches):
        bots = [
            BOTS[game]["heuristic"](random.Random(f"{args.seed}:m{i}:0")),
            BOTS[game]["random"](random.Random(f"{args.seed}:m{i}:1")),
        ]
        many.append(simulate(game, bots, seed=_seed(args, "m", i)).entries)
    sets[f"{args.matches} ordinary {rules.default_variant} matches"] = many
    return sets


def _long_match(
    game: str, lineup: Sequence[str], variant: str, args: argparse.Namespace, max_entries: int, tries: int = 4
) -> list[Entry] | None:
    """One match between `lineup` that ends within `max_entries` entries (None: none did)."""
    for t in range(tries):
        bots = [BOTS[game][n](random.Random(f"{args.seed}:{variant}:long{t}:{i}")) for i, n in enumerate(lineup)]
        try:
            return simulate(game, bots, variant=variant, seed=_seed(args, variant, "long", t),
                            max_entries=max_entries).entries
        except RuntimeError:
            continue
    return None


def memory_maze_logs(args: argparse.Namespace) -> dict[str, Logs]:
    """Per edition: M/4 ordinary matches (explorer against random) folded one after another;
    for black-garnet and minos also one long match of two random bots (about 10,000 moves:
    they wander until one stumbles on the goal). Crazy has no long match: two random bots
    there rarely finish and generating their views grows with the history."""
    game = "memory-maze"
    rules = hosted(game).rules
    sets: dict[str, Logs] = {}
    n = max(1, args.matches // 4)
    for v in rules.variants:
        if v.name != "crazy":
            entries = _long_match(game, ("random", "random"), v.name, args, max_entries=60_000)
            if entries is not None:
                sets[f"long {v.name} (random vs random)"] = [entries]
        many: Logs = []
        for i in range(n):
            bots = [
                BOTS[game]["explorer"](random.Random(f"{args.seed}:{v.name}:m{i}:0")),
                BOTS[game]["random"](random.Random(f"{args.seed}:{v.name}:m{i}:1")),
            ]
            many.append(simulate(game, bots, variant=v.name, seed=_seed(args, v.name, "m", i)).entries)
        sets[f"{n} ordinary {v.name} matches (explorer vs random)"] = many
    return sets


def keys_to_success_logs(args: argparse.Namespace) -> dict[str, Logs]:
    """Per variant (theme): M/2 whole 13-seat matches folded one after another, heuristic
    bots in the even seats and random ones in the odd (chat, votes and all). A match is
    at most nine rounds (nine cards), so there is no long match to make."""
    game = "keys-to-success"
    rules = hosted(game).rules
    sets: dict[str, Logs] = {}
    n = max(1, args.matches // 2)
    for v in rules.variants:
        many: Logs = []
        for i in range(n):
            bots = [
                BOTS[game]["heuristic" if seat % 2 == 0 else "random"](
                    random.Random(f"{args.seed}:{v.name}:m{i}:{seat}"))
                for seat in range(13)
            ]
            many.append(simulate(game, bots, variant=v.name, seed=_seed(args, v.name, "m", i)).entries)
        sets[f"{n} {v.name} matches (13 seats)"] = many
    return sets


# Five-Card Trick last: the final `commands/s=` line is its figure whatever the order.
GENERATORS: dict[str, Generator] = {
    "memory-maze": memory_maze_logs,
    "keys-to-success": keys_to_success_logs,
    "five-card-trick": five_card_trick_logs,
}


# --- timing --------------------------------------------------------------------------------


def fold_all(rules: Any, logs: Logs) -> None:
    for entries in logs:
        engine.fold(rules, entries)


def step_all(rules: Any, logs: Logs) -> None:
    """The same work without digests: the rules alone (open_match still checks entry 1)."""
    for entries in logs:
        ms = engine.open_match(rules, entries[0])
        for e in entries[1:]:
            ms, _ = engine.step(ms, kind=e.kind, seat=e.seat, body=e.body, ts=e.ts)


def median_seconds(fn: Callable[[], None], repeat: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def count(logs: Logs, kind: str | None = None) -> int:
    return sum(1 for entries in logs for e in entries if kind is None or e.kind == kind)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=7, help="timed folds of each set (median)")
    p.add_argument("--matches", type=int, default=200, help="ordinary matches per game")
    p.add_argument("--rounds", type=int, default=1000, help="rounds of each long match")
    p.add_argument("--seed", default="bench")
    p.add_argument("--game", action="append", default=[], help="only these games")
    p.add_argument("--save", metavar="FILE", help="write the first game's logs to FILE and stop")
    p.add_argument("--fold-once", metavar="FILE",
                   help="fold the logs of FILE once, inside functools.reduce (for callgrind)")
    args = p.parse_args(argv)
    games = args.game or list(GENERATORS)
    if args.save or args.fold_once:
        return _instructions(args, games[0])
    print(f"{interpreter()}; {args.repeat} repetitions, medians")
    last: dict[str, float] = {}
    for game in games:
        rules = hosted(game).rules
        t0 = time.perf_counter()
        sets = GENERATORS[game](args)
        print(f"\n== {game} (logs generated in {time.perf_counter() - t0:.1f} s)")
        total_cmds = total_fold = 0.0
        for name, logs in sets.items():
            fold_all(rules, logs)  # warm up
            cmds, entries = count(logs, "command"), count(logs)
            t_fold, runs = median_seconds(lambda: fold_all(rules, logs), args.repeat)  # noqa: B023
            t_step, _ = median_seconds(lambda: step_all(rules, logs), args.repeat)  # noqa: B023
            total_cmds += cmds
            total_fold += t_fold
            print(
                f"{name}: {len(logs)} log(s), {entries} entries, {cmds} commands; "
                f"fold {t_fold * 1000:.1f} ms (min {min(runs) * 1000:.1f}, max {max(runs) * 1000:.1f}) "
                f"= {cmds / t_fold:,.0f} commands/s, {entries / t_fold:,.0f} entries/s, "
                f"{t_fold / entries * 1e6:.1f} us/entry; "
                f"rules alone (no digests) {entries / t_step:,.0f} entries/s "
                f"(digests {max(0.0, 1 - t_step / t_fold):.0%} of the fold)"
            )
        last[game] = total_cmds / total_fold
        print(f"{game}: {last[game]:,.0f} commands/s over all its logs (sum of medians)")
    figure = last.get("five-card-trick", next(iter(last.values())))
    print(f"commands/s={figure:.0f}")
    return 0


def _instructions(args: argparse.Namespace, game: str) -> int:
    """--save and --fold-once (see the module's docstring)."""
    import msgspec

    rules = hosted(game).rules
    if args.save:
        logs = [entries for logs in GENERATORS[game](args).values() for entries in logs]
        Path(args.save).write_bytes(msgspec.json.encode(logs))
    else:
        logs = msgspec.json.decode(Path(args.fold_once).read_bytes(), type=list[list[Entry]])
        engine.fold(rules, logs[0])  # the first calls (caches, lazy imports) outside the count
        functools.reduce(lambda _, entries: engine.fold(rules, entries), logs, None)
    print(f"{game}: {len(logs)} logs, {count(logs)} entries, {count(logs, 'command')} commands")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
