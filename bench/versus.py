"""Daedalus and the boardgame.io anchor under one load shape, alternately, in one run.

    .venv/bin/python bench/versus.py [-k 200] [--runs 2] [--warmup 5] [--duration 20]
                                     [--anchor ../shared/anchors/bgio] [--cache DIR]

The anchor (`shared/anchors/bgio`: a boardgame.io server hosting a two-player
simultaneous secret-choice game shaped like Five-Card Trick, and its load generator) and
`bench/load.py -k K --only closed` run one after the other, `--runs` times each,
alternating (anchor, Daedalus, anchor, Daedalus, ...), so both sides see the same machine
over the same minutes. Both are closed loops over K two-player matches: every client
submits as soon as its view shows a round it has not submitted for.

The anchor's folder is copied into `--cache` (default `.bench-cache/bgio` under the
project, not tracked) and its packages installed there with `npm ci` from its lock file,
once; a changed lock file installs again.

Per run it prints commands/s and the server's CPU per command (from /proc over the
measured window: the anchor's `cpu during run` over its moves; load.py's `server CPU per
acked command`) and what else the machine ran meanwhile (the anchor: the whole machine's
busy CPU over the run, from /proc/stat, and its server's and load generator's shares over
the moves; Daedalus: load.py's shares of the server, redis and bot clients over the window
and of the other processes), then the medians of each side. The ratios are of the medians:
`ratio_commands` is Daedalus's commands/s over the anchor's, `ratio_cpu` is the anchor's
CPU per command over Daedalus's (above 1: Daedalus spends less CPU on a command).

Daedalus's side (load.py, its server and its bot clients) runs on the Python that runs
this, named with its median: a venv on another interpreter measures the server on it
(docs/performance.md, "A tenth sitting": this machine's two differ by 8% in instructions
a command).

Last line:
`ratio_commands=<daedalus/bgio> ratio_cpu=<bgio us per command / daedalus us> daedalus=<commands/s> bgio=<commands/s>`
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Run:
    side: str
    commands_per_s: float
    cpu_us: float
    p99_ms: float
    seconds: float
    noise: str = ""  # what else the machine ran meanwhile (see machine_ticks)
    python: str = ""  # Daedalus's: the interpreter load.py named


def machine_ticks() -> tuple[int, int]:
    """(busy, all) CPU ticks of the whole machine since boot, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_cores(t0: tuple[int, int], t1: tuple[int, int]) -> float:
    """How many of the machine's cores were busy on average between two machine_ticks."""
    return (t1[0] - t0[0]) / max(1, t1[1] - t0[1]) * (os.cpu_count() or 1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def prepare_anchor(anchor: Path, cache: Path) -> Path:
    """The anchor copied into the cache with its packages installed (once per lock file)."""
    lock = (anchor / "package-lock.json").read_bytes()
    stamp = hashlib.sha256(lock).hexdigest()
    marker = cache / ".installed"
    if marker.exists() and marker.read_text() == stamp:
        for f in anchor.iterdir():  # the scripts may have changed without the lock file
            if f.is_file():
                shutil.copy2(f, cache / f.name)
        return cache
    if cache.exists():
        shutil.rmtree(cache)
    shutil.copytree(anchor, cache, ignore=shutil.ignore_patterns("node_modules", "logs"))
    print(f"installing the anchor's packages in {cache} (npm ci)", flush=True)
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=cache, check=True,
                   stdout=subprocess.DEVNULL)
    marker.write_text(stamp)
    return cache


def run_anchor(anchor: Path, k: int) -> Run:
    env = dict(os.environ, PORT=str(free_port()))
    t0, m0 = time.monotonic(), machine_ticks()
    proc = subprocess.run(["bash", "run.sh", str(k)], cwd=anchor, env=env,
                          capture_output=True, text=True)
    busy = busy_cores(m0, machine_ticks())
    out = proc.stdout + proc.stderr
    last = re.search(r"commands/s=([\d.]+) p50_ms=([\d.]+) p99_ms=([\d.]+)", out)
    moves = re.search(r"run: (\d+) moves .*? in ([\d.]+)s", out)
    cpu = re.search(r"cpu during run=([\d.]+)s", out)
    if proc.returncode != 0 or not (last and moves and cpu):
        raise SystemExit(f"the anchor's run failed (rc={proc.returncode}):\n{out[-3000:]}")
    seconds = time.monotonic() - t0
    server = re.search(r"cpu during run=[\d.]+s \((\d+)% of one core", out)
    loader = re.search(r"load-process cpu .*?\((\d+)% of one core\)", out)
    noise = f"machine busy {busy:.0%} of one core over the whole run"
    if server and loader:
        # Over its moves only: set-up and start-up are not in these, so what the machine
        # ran besides is at most the difference.
        noise += f"; server {server.group(1)}%, load generator {loader.group(1)}% over the moves"
    return Run("bgio", float(last.group(1)), float(cpu.group(1)) / int(moves.group(1)) * 1e6,
               float(last.group(3)), seconds, noise)


def run_daedalus(k: int, warmup: float, duration: float, extra: list[str]) -> Run:
    cmd = [sys.executable, str(ROOT / "bench" / "load.py"), "-k", str(k), "--only", "closed",
           "--warmup", str(warmup), "--duration", str(duration), *extra]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    last = re.search(r"commands/s=([\d.]+)", out)
    cpu = re.search(r"server CPU per acked command (\d+) us", out)
    p99 = re.search(r"p99 ([\d.]+) ms", out)
    if proc.returncode != 0 or not (last and cpu):
        raise SystemExit(f"bench/load.py failed (rc={proc.returncode}):\n{out[-3000:]}")
    window = re.search(r"CPU over the window \(share of one core\): (.*?); server CPU", out)
    others = re.search(r"other processes than this bench's: (\d+%) of one core", out)
    noise = (f"over the window: {window.group(1) if window else '?'}; "
             f"other processes {others.group(1) if others else '?'} of one core")
    python = re.search(r"^machine: [^;]*; (python [^;]*);", out, re.MULTILINE)
    return Run("daedalus", float(last.group(1)), float(cpu.group(1)),
               float(p99.group(1)) if p99 else float("nan"), time.monotonic() - t0, noise,
               python.group(1) if python else "")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-k", "--matches", type=int, default=200)
    p.add_argument("--runs", type=int, default=2, help="runs of each side (at least 2)")
    p.add_argument("--warmup", type=float, default=5.0, help="load.py's warm-up seconds")
    p.add_argument("--duration", type=float, default=20.0, help="load.py's measured seconds")
    p.add_argument("--anchor", type=Path, default=ROOT.parent / "shared" / "anchors" / "bgio")
    p.add_argument("--cache", type=Path, default=ROOT / ".bench-cache" / "bgio")
    p.add_argument("--load-arg", action="append", default=[],
                   help="an extra argument for bench/load.py (repeatable), e.g. --load-arg=--clients=1")
    args = p.parse_args(argv)
    if args.runs < 2:
        p.error("--runs must be at least 2")
    if not (args.anchor / "run.sh").exists():
        p.error(f"no anchor at {args.anchor} (give --anchor)")
    if shutil.which("npm") is None or shutil.which("node") is None:
        p.error("node and npm are needed for the anchor")
    anchor = prepare_anchor(args.anchor.resolve(), args.cache.resolve())
    print(f"machine: {os.cpu_count()} CPUs; K={args.matches} closed loop; {args.runs} runs a side, alternating; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    runs: list[Run] = []
    for i in range(args.runs):
        for side in ("bgio", "daedalus"):
            r = (run_anchor(anchor, args.matches) if side == "bgio"
                 else run_daedalus(args.matches, args.warmup, args.duration, args.load_arg))
            runs.append(r)
            print(f"run {i + 1} {side:8s}: {r.commands_per_s:8,.0f} commands/s, "
                  f"server CPU {r.cpu_us:5.0f} us a command, round p99 {r.p99_ms:6.1f} ms "
                  f"({r.seconds:.0f} s; {r.noise})", flush=True)
    med = {}
    for side in ("bgio", "daedalus"):
        mine = [r for r in runs if r.side == side]
        med[side] = (statistics.median(r.commands_per_s for r in mine),
                     statistics.median(r.cpu_us for r in mine))
        spread = [r.commands_per_s for r in mine]
        on = f" (on {mine[0].python})" if mine[0].python else ""
        print(f"{side:8s} median: {med[side][0]:,.0f} commands/s (runs {min(spread):,.0f}-{max(spread):,.0f}), "
              f"{med[side][1]:.0f} us of server CPU a command{on}")
    pairs = [d.commands_per_s / b.commands_per_s
             for b, d in zip(runs[0::2], runs[1::2], strict=True)]
    print("ratio of commands/s run by run (each Daedalus run over the anchor run just before it): "
          + " ".join(f"{x:.2f}" for x in pairs))
    ratio_commands = med["daedalus"][0] / med["bgio"][0]
    ratio_cpu = med["bgio"][1] / med["daedalus"][1]
    print(f"ratio_commands={ratio_commands:.2f} ratio_cpu={ratio_cpu:.2f} "
          f"daedalus={med['daedalus'][0]:.0f} bgio={med['bgio'][0]:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
