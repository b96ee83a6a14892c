"""The in-process benches run, briefly (their figures are bench/'s business, not a test's):
bench/core.py in both forms of update, and bench/engine.py over small logs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> str:
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("updates", ["view", "events"])
def test_the_match_core_bench_runs(updates: str) -> None:
    out = _run("bench/core.py", "--rounds", "20", "--passes", "1", "--updates", updates)
    last = out.strip().splitlines()[-1]
    assert f"(updates: {updates})" in last and "us per command" in last
    assert float(last.rsplit("median ", 1)[1]) > 0


def test_the_reducer_bench_runs() -> None:
    out = _run("bench/engine.py", "--game", "five-card-trick", "--matches", "2", "--rounds", "20",
               "--repeat", "1")
    lines = out.strip().splitlines()
    assert int(lines[-1].removeprefix("commands/s=")) > 0
    # Its first line names the interpreter the figures are of (its executable, and how it
    # holds libpython: docs/performance.md, "A twelfth sitting").
    assert os.path.realpath(sys.executable) in lines[0] and "libpython" in lines[0]
