"""How Labyrinth bot games end: N seeded games in-process (no server) for each number of
players, and the figures.

    .venv/bin/python bench/labyrinth_endings.py [--games N] [--players 2,3,4,5] [--bot B ...]

Game i for P players is played through clients.driver.simulate between the default
line-up (clients/bots/labyrinth.py LINEUP cycled over the seats; `--bot` names another,
repeated per seat and cycled) with the match option `players` P and everything else the
game's defaults (a 5x5 plan drawn from the seed, Nstop the number of cells); the match
seed is SHA-256 of "labyrinth endings P i" and seat s's bot draws from
random.Random("labyrinth endings P i s"), so every figure is reproducible.

For each P it prints how the games ended (the true treasure carried out, the kill win,
the Nstop draw, every player skipping, and any other draw: the true treasure lost, nobody
left alive, a survivor out of time), as counts and shares; the median and the longest
game in rounds and in moves (every player's moves, skips and missed moves counted); the
wins of each bot; and the processor time the games took. The last lines are the same as
a Markdown table.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from clients.bots import bot_factory, cycled, lineup, simulate
from domain.games.labyrinth import game

ENDINGS = ("treasure", "kill", "nstop", "skips", "other")
NAMES = {"treasure": "treasure", "kill": "kill", "nstop": "Nstop draw", "skips": "skip draw",
         "other": "other draws"}
REASON_KEYS = {text: key for key, text in game.REASONS.items()}


def play(players: int, index: int, names: list[str]) -> tuple[str, int, int, str | None]:
    """(ending, rounds, moves, the winner's bot name or None) of game `index`."""
    tag = f"labyrinth endings {players} {index}"
    bots = [bot_factory("labyrinth", name)(random.Random(f"{tag} {seat}")) for seat, name in enumerate(names)]
    sim = simulate("labyrinth", bots, options={"players": players}, seed=hashlib.sha256(tag.encode()).digest())
    result = sim.result
    if result is None:
        raise RuntimeError(f"{tag}: the game did not end")
    key = REASON_KEYS[result.reason]
    moves = sum(sim.states[-1].game_state.moves)
    winner = None if result.winner is None else names[result.winner]
    return (key if key in ENDINGS else "other"), result.rounds, moves, winner


def share(n: int, total: int) -> str:
    return f"{n} ({100 * n / total:.0f}%)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200, help="games for each number of players (default: 200)")
    parser.add_argument("--players", default="2,3,4,5", help="numbers of players (default: 2,3,4,5)")
    parser.add_argument("--bot", action="append", default=[], help="the bot in the next seat (default: the line-up)")
    args = parser.parse_args()
    rows = []
    for players in (int(p) for p in args.players.split(",")):
        names = cycled(args.bot, players) if args.bot else lineup("labyrinth", players)
        endings: Counter[str] = Counter()
        wins: Counter[str] = Counter()
        rounds, moves = [], []
        cpu = time.process_time()
        for index in range(args.games):
            ending, r, m, winner = play(players, index, names)
            endings[ending] += 1
            rounds.append(r)
            moves.append(m)
            if winner is not None:
                wins[winner] += 1
        cpu = time.process_time() - cpu
        n = args.games
        print(f"{players} players ({' '.join(names)}), {n} games: "
              + ", ".join(f"{NAMES[e]} {share(endings[e], n)}" for e in ENDINGS))
        print(f"  rounds median {statistics.median(rounds):g}, max {max(rounds)}; "
              f"moves median {statistics.median(moves):g}, max {max(moves)}; "
              f"wins {', '.join(f'{k} {v}' for k, v in sorted(wins.items())) or 'none'}; "
              f"cpu {cpu:.1f} s ({1000 * cpu / n:.0f} ms a game)", flush=True)
        rows.append((players, n, endings, rounds, moves, wins, cpu))
    print()
    print("| players | games | " + " | ".join(NAMES[e] for e in ENDINGS)
          + " | rounds (median / max) | moves (median / max) | wins | cpu s (ms a game) |")
    print("|---" * (len(ENDINGS) + 6) + "|")
    for players, n, endings, rounds, moves, wins, cpu in rows:
        print(f"| {players} | {n} | " + " | ".join(share(endings[e], n) for e in ENDINGS)
              + f" | {statistics.median(rounds):g} / {max(rounds)} | {statistics.median(moves):g} / {max(moves)}"
              + f" | {', '.join(f'{k} {v}' for k, v in sorted(wins.items())) or 'none'}"
              + f" | {cpu:.1f} ({1000 * cpu / n:.0f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
