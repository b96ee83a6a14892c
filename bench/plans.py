"""What the Labyrinth plan generator draws: the features of N seeded plans, and the time.

    .venv/bin/python bench/plans.py [--count N] [--sizes WxH,...] [--players P,...]

Plan i (0 <= i < N) is `generate(options, Rng(i as 8 bytes, "plan"))` with the default
options except its size, `sizes[i % len(sizes)]`, and its players,
`players[(i // len(sizes)) % len(players)]` (default: the sizes section 7 names as usual,
4x4, 6x3, 5x4, 6x4, 5x5, and 6x6 and 8x8; 2 to 5 players). Every plan is validated; a
plan with an error or an unexpected warning is counted and reported (there should be
none), and so is a GenerationError.

For each size, and for all plans together, it prints the distribution (mean, min, median,
max) of: the cells of each type; pit loops and the pits in a loop; river systems, their
branches (sources) and length (cells from a source to the delta, both counted); exits
and how many start closed; inner walls (and their share of the borders between cells);
fake treasures; moves: the mean and the longest of the fewest moves between two cells
(without grenades, moving as validate.py says: rivers carry, pits send on), the fewest
moves from the true treasure out through an open exit; and the time to draw a plan in
milliseconds (time.perf_counter around `generate`, validation not included), and the
processor time this process spent on it (time.process_time: on a loaded machine the
fairer figure). The last lines are a Markdown table of the means per size, and of the
median times.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from domain.games.labyrinth.generate import (
    GenerateOptions,
    GenerationError,
    expected_warnings,
    generate,
)
from domain.games.labyrinth.plan import (
    Cell,
    Delta,
    Encephalitis,
    Hospital,
    Land,
    Pit,
    Plan,
    River,
    Weaponry,
    step,
)
from domain.games.labyrinth.validate import (
    Moves,
    river_length,
    river_sources,
    river_systems,
    validate,
)
from domain.rng import Rng

SIZES = "4x4,6x3,5x4,6x4,5x5,6x6,8x8"
TYPES = (("land", Land), ("hospital", Hospital), ("weaponry", Weaponry),
         ("encephalitis", Encephalitis), ("pit", Pit), ("river", River), ("delta", Delta))


def distances(moves: Moves, start: Cell, nodes: set[Cell]) -> dict[Cell, int]:
    """The fewest moves from `start` to each cell it reaches (breadth first)."""
    seen = {start: 0}
    frontier = [start]
    while frontier:
        after: list[Cell] = []
        for cell in frontier:
            for nxt in moves.ends(cell):
                if nxt not in seen and nxt in nodes:
                    seen[nxt] = seen[cell] + 1
                    after.append(nxt)
        frontier = after
    return seen


def features(plan: Plan) -> dict[str, float]:
    found: dict[str, float] = {}
    for name, kind in TYPES:
        found[f"cells: {name}"] = len(plan.cells_of(kind))
    loops = plan.pit_loops()
    found["pit loops"] = len(loops)
    systems = river_systems(plan)
    found["river systems"] = len(systems)
    found["exits"] = len(plan.exits)
    found["exits closed at the start"] = sum(1 for e in plan.exits if not e.open)
    borders = sum(1 for c in plan.cells for d in ("right", "down") if step(c, d) in plan.cells)
    found["inner walls"] = len(plan.walls)
    found["inner walls, % of borders"] = 100 * len(plan.walls) / borders
    found["fake treasures"] = sum(1 for t in plan.treasures if not t.is_true)
    nodes = set(plan.cells) - set(river_sources(plan))
    moves = Moves(plan)
    table = {c: distances(moves, c, nodes) for c in nodes}
    pairs = [d for c, row in table.items() for o, d in row.items() if o != c]
    found["moves between two cells: mean"] = statistics.fmean(pairs)
    found["moves between two cells: longest"] = max(pairs)
    true = plan.true_treasures()[0]
    out = [table[true][e.cell] + 1 for e in plan.exits if e.open and e.cell in table[true]]
    found["moves from the true treasure out"] = min(out)
    return found


def per_item(plan: Plan) -> dict[str, list[float]]:
    """Features counted per loop or river system (several a plan)."""
    found: dict[str, list[float]] = defaultdict(list)
    for loop in plan.pit_loops().values():
        found["pits in a loop"].append(len(loop))
    for delta, cells in river_systems(plan).items():
        found["river branches (sources)"].append(sum(1 for c in cells if not plan.upstream(c)))
        found["river length (cells, source to delta)"].append(river_length(plan, cells, delta)[0])
    return found


def summary(name: str, values: Sequence[float]) -> str:
    if not values:
        return f"  {name:42} (none)"
    mean = statistics.fmean(values)
    return (f"  {name:42} mean {mean:6.2f}  min {min(values):6.2f}  median "
            f"{statistics.median(values):6.2f}  max {max(values):6.2f}")


def report(title: str, rows: Iterable[dict[str, list[float]]]) -> None:
    merged: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        for key, values in row.items():
            merged[key].extend(values)
    print(title)
    for key, values in merged.items():
        print(summary(key, values))


COLUMNS = (
    ("land", "cells: land"), ("H", "cells: hospital"), ("W", "cells: weaponry"),
    ("E", "cells: encephalitis"), ("pits", "cells: pit"), ("river", "cells: river"),
    ("systems", "river systems"), ("exits", "exits"), ("closed", "exits closed at the start"),
    ("walls %", "inner walls, % of borders"), ("fakes", "fake treasures"),
    ("moves", "moves between two cells: mean"), ("longest", "moves between two cells: longest"),
    ("out", "moves from the true treasure out"),
)


def table(by_size: dict[str, list[dict[str, list[float]]]]) -> None:
    """The means per size as a Markdown table, and the median times to draw."""
    heads = ["size", "plans", *(h for h, _ in COLUMNS), "ms", "cpu ms"]
    print("| " + " | ".join(heads) + " |")
    print("|" + "---|" * len(heads))
    for size, rows in by_size.items():
        cells = [size, str(len(rows))]
        for _, key in COLUMNS:
            cells.append(f"{statistics.fmean(v for r in rows for v in r[key]):.1f}")
        for key in ("time to draw (ms)", "processor time to draw (ms)"):
            cells.append(f"{statistics.median(v for r in rows for v in r[key]):.1f}")
        print("| " + " | ".join(cells) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="plans to draw (default: 1000)")
    parser.add_argument("--sizes", default=SIZES, help=f"WxH,... (columns x rows; default: {SIZES})")
    parser.add_argument("--players", default="2,3,4,5", help="P,... (default: 2,3,4,5)")
    args = parser.parse_args(argv)
    sizes = [tuple(int(x) for x in s.lower().split("x")) for s in args.sizes.split(",")]
    players = [int(p) for p in args.players.split(",")]
    by_size: dict[str, list[dict[str, list[float]]]] = defaultdict(list)
    bad = failed = 0
    for i in range(args.count):
        columns, rows = sizes[i % len(sizes)]
        count = players[(i // len(sizes)) % len(players)]
        options = GenerateOptions(rows=rows, columns=columns, players=count)
        started, cpu = time.perf_counter(), time.process_time()
        try:
            plan = generate(options, Rng(i.to_bytes(8, "big"), "plan"))
        except GenerationError as exc:
            failed += 1
            print(f"seed {i} ({columns}x{rows}, {count} players): {exc}")
            continue
        took = 1000 * (time.perf_counter() - started)
        took_cpu = 1000 * (time.process_time() - cpu)
        checked = validate(plan, options.limits, count)
        if checked.errors or checked.names() - expected_warnings(options):
            bad += 1
            print(f"seed {i}: {[p.text for p in checked.problems]}")
        row = {k: [v] for k, v in features(plan).items()}
        row.update(per_item(plan))
        row["time to draw (ms)"] = [took]
        row["processor time to draw (ms)"] = [took_cpu]
        by_size[f"{columns}x{rows}"].append(row)
    for size, rows_ in by_size.items():
        report(f"{size}: {len(rows_)} plans", rows_)
    report(f"all sizes: {sum(len(r) for r in by_size.values())} plans",
           [r for rows_ in by_size.values() for r in rows_])
    table(by_size)
    print(f"plans with an error or an unexpected warning: {bad}; draws that failed: {failed}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
