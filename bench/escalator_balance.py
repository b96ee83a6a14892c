"""Balance the Escalator command edition: thousands of seeded six-bot games.

    .venv/bin/python bench/escalator_balance.py [--games N] [--lineup random|heuristic|mixed ...]
                                                [--edition NAME|FILE] [--jobs J]

Every game is played in-process through the engine (`clients.bots.simulate`: pure, no
server, no clock; each bot sees only its own seat's view). Game g of a lineup uses the
match seed sha256(f"escalator-balance:{lineup}:{g}") and bot seeds "<lineup>:<g>:<seat>",
so the numbers are reproducible.

For each lineup it prints the game length (steps, and how often the game auto-resolved),
how many stood at the end, and, per command and per colour: how often it is picked (per
game), how often a pick is crowded out, how often it activates, and its effect on its
user's final rank: the mean position rank (1 = last standing .. 6 = first to fall; ties
share the best rank) of the users of its activations, minus the mean over every player
of those games. In the `random` lineup every pick is random, so that difference is the
command's own power; the edition counts as balanced when no command moves its users'
mean rank by more than COMMAND_LIMIT ranks and no colour by more than COLOUR_LIMIT
(the rules page, docs/rules/escalator.md, records a run and the limits).

    .venv/bin/python bench/escalator_balance.py --games 2000
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from clients.bots import bot_factory, simulate
from domain.games.escalator.edition import PRESETS, edition_of

GAME = "escalator"
SEATS = 6
COMMAND_LIMIT = 0.5
COLOUR_LIMIT = 0.25
LINEUPS = {
    "random": ("random",),
    "heuristic": ("heuristic",),
    "mixed": ("heuristic", "random"),
}


def play(args: tuple[str, int, str]) -> dict[str, Any]:
    """One game: what the balance numbers need of it."""
    lineup, g, edition = args
    names = LINEUPS[lineup]
    bots = [
        bot_factory(GAME, names[s % len(names)])(random.Random(f"{lineup}:{g}:{s}"))
        for s in range(SEATS)
    ]
    seed = hashlib.sha256(f"escalator-balance:{lineup}:{g}".encode()).digest()
    sim = simulate(GAME, bots, seed=seed, options={"clock_scale": 0.01, "edition": edition})
    gs = sim.states[-1].game_state
    over = gs.finished
    assert over is not None, "a game did not finish"
    picks: list[tuple[str, bool]] = []
    activated: list[tuple[str, int]] = []
    for r in gs.history:
        picks.extend((p.command, p.crowded) for p in r.picks if p.command is not None)
        activated.extend((a.command, a.user) for a in r.activated)
    return {
        "steps": over.steps,
        "auto": gs.auto.steps if gs.auto is not None else 0,
        "survivor": over.survivor,
        "rank": list(over.position_rank),
        "picks": picks,
        "activated": activated,
        "bots": [names[s % len(names)] for s in range(SEATS)],
    }


def report(lineup: str, games: list[dict[str, Any]], edition: str) -> list[str]:
    ed = PRESETS[edition] if edition in PRESETS else edition_of(edition)
    n = len(games)
    steps = [x["steps"] for x in games]
    lines = [f"== lineup {lineup}: {n} games"]
    lines.append(
        f"steps: mean {statistics.mean(steps):.1f}, median {statistics.median(steps)}, "
        f"min {min(steps)}, max {max(steps)}; auto-resolved {sum(1 for x in games if x['auto']) / n:.0%} "
        f"(mean {statistics.mean(x['auto'] for x in games):.1f} auto steps)"
    )
    lines.append(f"one player left standing: {sum(1 for x in games if x['survivor'] is not None) / n:.0%}")
    if len(set(LINEUPS[lineup])) > 1:
        for bot in LINEUPS[lineup]:
            seats = [(x, s) for x in games for s in range(SEATS) if x["bots"][s] == bot]
            lines.append(
                f"  {bot}: mean position rank {statistics.mean(x['rank'][s] for x, s in seats):.2f}, "
                f"last standing {sum(1 for x, s in seats if x['survivor'] == s) / n:.0%} of games"
            )
    mean_rank = statistics.mean(r for x in games for r in x["rank"])
    picked: Counter[str] = Counter()
    crowded: Counter[str] = Counter()
    ranks: dict[str, list[int]] = defaultdict(list)
    for x in games:
        for name, out in x["picks"]:
            picked[name] += 1
            crowded[name] += out
        for name, user in x["activated"]:
            ranks[name].append(x["rank"][user])
    lines.append(f"mean position rank of all players: {mean_rank:.2f} (1 best)")
    lines.append("")
    lines.append(f"{'command':<10} {'colour':<6} {'picks/game':>10} {'crowded':>8} {'activations':>11} {'rank diff':>9}")
    worst = 0.0
    for c in ed.commands:
        diff = statistics.mean(ranks[c.name]) - mean_rank if ranks[c.name] else 0.0
        if len(ranks[c.name]) >= 30:
            worst = max(worst, abs(diff))
        lines.append(
            f"{c.name:<10} {c.colour:<6} {picked[c.name] / n:>10.2f} "
            f"{crowded[c.name] / max(1, picked[c.name]):>8.0%} {len(ranks[c.name]) / n:>11.2f} {diff:>+9.2f}"
        )
    lines.append("")
    worst_colour = 0.0
    for colour in ed.colours:
        names = {c.name for c in ed.commands if c.colour == colour}
        rs = [r for name in names for r in ranks[name]]
        diff = statistics.mean(rs) - mean_rank if rs else 0.0
        worst_colour = max(worst_colour, abs(diff))
        lines.append(
            f"colour {colour:<6} picks/game {sum(picked[x] for x in names) / n:.2f}, "
            f"activations/game {len(rs) / n:.2f}, rank diff {diff:+.2f}"
        )
    verdict = "within" if worst <= COMMAND_LIMIT and worst_colour <= COLOUR_LIMIT else "OUTSIDE"
    lines.append(
        f"largest |rank diff|: command {worst:.2f} (limit {COMMAND_LIMIT}), colour "
        f"{worst_colour:.2f} (limit {COLOUR_LIMIT}): {verdict} the limits"
    )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--lineup", action="append", choices=sorted(LINEUPS))
    parser.add_argument("--edition", default="daedalus", help="a shipped edition's name or a file")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    edition = args.edition
    if edition not in PRESETS:
        edition = Path(edition).read_text(encoding="utf-8")
    for lineup in args.lineup or ["random", "heuristic", "mixed"]:
        work = [(lineup, g, edition) for g in range(args.games)]
        if args.jobs > 1:
            with ProcessPoolExecutor(args.jobs) as pool:
                games = list(pool.map(play, work, chunksize=20))
        else:
            games = [play(w) for w in work]
        print("\n".join(report(lineup, games, edition)))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
