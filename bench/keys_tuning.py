"""Tune the Keys to Success / Gatekeeping layout: thousands of seeded bot games.

    .venv/bin/python bench/keys_tuning.py [--games N] [--seats S] [--layout NAME|FILE ...]
                                          [--lineup heuristic|random|mixed ...] [--jobs J]

Every game is played in-process through the engine (`clients.bots.simulate`: pure, no
server, no clock; each bot sees only its own seat's view). Game g of a lineup uses the
match seed sha256(f"kts-tuning:{g}") and bot seeds "<lineup>:<g>:<seat>", so the numbers
are reproducible. For each layout and lineup it prints the distribution of players left
behind (who did not escape), the rounds played, how play ended, the number of winners
and how the Elimination Candidate was decided. The rules page
(docs/rules/keys-to-success.md) records the numbers of the default run:

    .venv/bin/python bench/keys_tuning.py --games 2000

A layout is a preset name (`default`, `rulings`, or one of the candidates below) or the
path of a layout file.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from clients.bots import bot_factory, simulate
from domain.games import keys_to_success as kts
from domain.games.keys_to_success.layout import DEFAULT_LAYOUT, PRESETS, layout_text

GAME = "keys-to-success"

# Candidates tried while tuning: the rulings' gate letters with other types. open-z: Z
# Open instead of Pass; open-zu: Z and U Open; open-minus: the innermost Garnet `-` Open;
# all-open: every Pass gate Open.
def retyped(changes: dict[str, str]) -> str:
    """The rulings' default layout with some gates given another type."""
    default = layout_text(DEFAULT_LAYOUT)
    return "\n".join(
        " ".join(
            f"{gate}:{changes.get(gate, kind)}"
            for gate, kind in (token.split(":", 1) for token in line.split())
        )
        for line in default.splitlines()
    )


CANDIDATES: dict[str, str] = {
    "open-z": retyped({"Z": "open"}),
    "open-zu": retyped({"Z": "open", "U": "open"}),
    "open-minus": retyped({"-": "open"}),
    "all-open": retyped({gate: "open" for gate in "CGMPUZ"}),
}


def layout_source(name: str) -> str:
    if name in PRESETS:
        return name
    if name in CANDIDATES:
        return CANDIDATES[name]
    return Path(name).read_text()


def lineup_of(kind: str, seats: int) -> list[str]:
    if kind == "mixed":
        return ["heuristic" if s % 2 == 0 else "random" for s in range(seats)]
    return [kind] * seats


def play_one(args: tuple[str, str, int, int]) -> dict[str, Any]:
    layout, kind, seats, game = args
    lineup = lineup_of(kind, seats)
    bots = [
        bot_factory(GAME, bot)(random.Random(f"{kind}:{game}:{seat}"))
        for seat, bot in enumerate(lineup)
    ]
    seed = hashlib.sha256(f"kts-tuning:{game}".encode()).digest()
    sim = simulate(
        GAME, bots, options={"seats": seats, "layout": layout_source(layout)}, seed=seed,
        max_entries=100_000,
    )
    over = None
    ended = None
    for outcome in sim.outcomes:
        for event in outcome.events:
            if isinstance(event, kts.GameOver):
                over = event
            if isinstance(event, kts.PlayEnded):
                ended = event
    assert over is not None and ended is not None, "the match did not end"
    left = sum(1 for r in over.escaped if r is None)
    heuristic_escaped = [r is not None for s, r in enumerate(over.escaped) if lineup[s] == "heuristic"]
    random_escaped = [r is not None for s, r in enumerate(over.escaped) if lineup[s] == "random"]
    return {
        "left": left,
        "rounds": over.rounds,
        "end": ended.reason,
        "winners": len(over.winners),
        "pass_winners": sum(1 for s in over.winners if over.passes[s] >= 3),
        "ec_by": over.ec_by,
        "losers": len(over.losers),
        "rejections": len(sim.rejections),
        "h_escaped": sum(heuristic_escaped),
        "h_seats": len(heuristic_escaped),
        "r_escaped": sum(random_escaped),
        "r_seats": len(random_escaped),
    }


def histogram(values: Sequence[int]) -> str:
    counts = Counter(values)
    total = len(values)
    return "  ".join(f"{k}:{100 * counts[k] / total:.1f}%" for k in sorted(counts))


def report(layout: str, kind: str, seats: int, rows: list[dict[str, Any]]) -> None:
    n = len(rows)
    left = [r["left"] for r in rows]
    in_band = sum(1 for v in left if 1 <= v <= 3)
    print(f"== layout {layout}, {seats} seats, {kind} bots, {n} games")
    print(f"  left behind: mean {statistics.mean(left):.2f}, median {statistics.median(left):g}, "
          f"1-3 in {100 * in_band / n:.1f}% of games")
    print(f"  left behind: {histogram(left)}")
    print(f"  rounds:      {histogram([r['rounds'] for r in rows])}")
    ends = Counter(r["end"] for r in rows)
    print("  play ended:  " + ", ".join(f"{k} {100 * v / n:.1f}%" for k, v in sorted(ends.items())))
    print(f"  winners:     {histogram([r['winners'] for r in rows])}; "
          f"three-Pass winners in {100 * sum(1 for r in rows if r['pass_winners']) / n:.1f}% of games")
    ec = Counter(r["ec_by"] for r in rows)
    print("  EC decided:  " + ", ".join(f"{k} {100 * v / n:.1f}%" for k, v in sorted(ec.items())))
    if kind == "mixed":
        h = sum(r["h_escaped"] for r in rows) / sum(r["h_seats"] for r in rows)
        rr = sum(r["r_escaped"] for r in rows) / sum(r["r_seats"] for r in rows)
        print(f"  escaped:     heuristic seats {100 * h:.1f}%, random seats {100 * rr:.1f}%")
    rejected = sum(r["rejections"] for r in rows)
    if rejected:
        print(f"  (bots had {rejected} commands rejected)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seats", type=int, default=13)
    parser.add_argument("--layout", action="append", default=[])
    parser.add_argument("--lineup", action="append", default=[], choices=["heuristic", "random", "mixed"])
    parser.add_argument("--jobs", type=int, default=0, help="worker processes (default: one per CPU)")
    args = parser.parse_args(argv)
    layouts = args.layout or ["default"]
    lineups = args.lineup or ["heuristic", "mixed", "random"]
    jobs = args.jobs or None
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for layout in layouts:
            for kind in lineups:
                tasks = [(layout, kind, args.seats, g) for g in range(args.games)]
                rows = list(pool.map(play_one, tasks, chunksize=25))
                report(layout, kind, args.seats, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
