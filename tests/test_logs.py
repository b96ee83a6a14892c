"""server/logs.py: JSON lines on stderr, whole even when several processes share it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Two processes (as `daedalus serve --workers 2` forks them) logging at once into one
# stderr, unbuffered as deploy/Dockerfile runs the server (PYTHONUNBUFFERED=1).
SCRIPT = textwrap.dedent("""
    import os
    from server import logs

    logs.configure("info")
    log = logs.get("daedalus.test")
    child = os.fork()
    for i in range(3000):
        log.info("line", worker=int(child == 0), i=i, pad="x" * 200)
    if child:
        os.waitpid(child, 0)
    else:
        os._exit(0)
""")


def test_lines_of_two_processes_never_run_together(tmp_path: Path) -> None:
    out = tmp_path / "stderr.log"
    with out.open("w") as f:
        subprocess.run(
            [sys.executable, "-c", SCRIPT], cwd=ROOT, stderr=f, check=True, timeout=120,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)},
        )
    lines = out.read_text().splitlines()
    parsed = [json.loads(line) for line in lines]  # each line one whole JSON object
    assert len(parsed) == 6000
    assert sorted((x["worker"], x["i"]) for x in parsed) == [(w, i) for w in (0, 1) for i in range(3000)]


def test_debugging_says_whether_debug_lines_are_written() -> None:
    """Connection._command asks before building its per-command debug line."""
    from server import logs

    try:
        logs.configure("debug")
        assert logs.debugging()
        logs.configure("info")
        assert not logs.debugging()
        logs.configure("warning")
        assert not logs.debugging()
    finally:
        logs.configure("info")
