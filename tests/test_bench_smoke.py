"""The in-process benches run, briefly (their figures are bench/'s business, not a test's):
bench/core.py in both forms of update, and bench/engine.py over small logs."""

from __future__ import annotations

import json
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


def test_load_bench_groups_perf_samples_by_native_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/load.py --perf: perf report's shares by shared object summed into
    PERF_SHARES' lines (the rest under "other"), and its top functions named."""
    from bench import load

    reports = {
        "overhead,dso": "# comment\n    70.00%  libpython3.11.so.1.0\n    10.00%  [kernel.kallsyms]\n"
                        "     5.00%  _core.cpython-311-x86_64-linux-gnu.so\n     4.00%  libc.so.6\n"
                        "     1.50%  libcrypto.so.3\n     0.50%  _hashlib.cpython-311-x86_64-linux-gnu.so\n"
                        "     0.50%  hiredis.cpython-311-x86_64-linux-gnu.so\n     8.50%  libunknown.so\n",
        "overhead,sym": "    27.91%  [.] _PyEval_EvalFrameDefault\n     2.00%  [k] _copy_from_iter\n",
    }

    def fake_run(argv: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        assert argv[:4] == ["perf", "report", "-i", "/x.data"]
        return subprocess.CompletedProcess(argv, 0, stdout=reports[argv[argv.index("-F") + 1]])

    monkeypatch.setattr(load.subprocess, "run", fake_run)
    shares, symbols = load.perf_shares("/x.data")
    by_label = {label.split(" (")[0]: round(share, 4) for label, share in shares}
    assert by_label == {
        "the Python interpreter": 0.70, "the kernel": 0.10, "msgspec": 0.05, "libc": 0.04,
        "other": 0.085, "OpenSSL's libcrypto": 0.015, "hashlib, hiredis, asyncio's C parts": 0.01,
    }
    assert shares[0][0].startswith("the Python interpreter")  # (largest first)
    assert symbols == [("_PyEval_EvalFrameDefault", 0.2791), ("(kernel) _copy_from_iter", 0.02)]


def test_load_bench_counts_a_functions_bytecodes_and_calls_between_start_and_stop(tmp_path: Path) -> None:
    """bench/bytecodes.py (bench/load.py --bytecodes): each Python function's bytecodes and
    calls, and the C functions called, counted while on and given a command."""
    from bench.bytecodes import Counter, report

    def plus_one(x: int) -> int:
        return x + 1

    plus_one(0)  # (not counted)
    counter = Counter()
    counter.start()
    for i in range(10):
        plus_one(i)
        len("a")
    counted = counter.stop()
    plus_one(1)  # (not counted)
    code = plus_one.__code__
    key = [code.co_filename, code.co_firstlineno, code.co_name]
    bytecodes = {tuple(row[:3]): row[3] for row in counted["bytecodes"]}
    calls = {tuple(row[:3]): row[3] for row in counted["calls"]}
    assert calls[tuple(key)] == 10
    per_call = bytecodes[tuple(key)] / 10
    assert per_call == int(per_call) and per_call >= 3  # the same few each call
    assert dict(counted["c_calls"])["len"] == 10
    out = tmp_path / "counted.json"
    out.write_text(json.dumps(counted))
    lines = report(str(out), commands=10, root=str(ROOT))
    assert "bytecodes a command" in lines[0] and "calls of Python functions" in lines[0]
    row = next(line for line in lines if line.endswith(f"{code.co_firstlineno} plus_one"))
    assert row.split()[:2] == [f"{per_call:.1f}", "1.00"]
    assert "tests/test_bench_smoke.py" in lines[-1]
