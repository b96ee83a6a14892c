"""`daedalus serve` at start: the port is bound before `listening` is logged, a taken
port is one JSON error line and status 1, and a Redis that does not answer is said, with
how the server goes on."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_on_a_taken_port_is_one_json_line_and_exit_1() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "clients.cli", "serve", "--port", str(port)],
            cwd=ROOT, capture_output=True, text=True, timeout=30,
        )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr  # no `listening` before it, nothing after
    record = json.loads(lines[0])
    assert record["event"] == "bind_failed" and record["level"] == "error"
    assert str(port) in record["message"] and "--port" in record["message"]


def test_serve_says_when_redis_does_not_answer_and_how_it_retries() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "clients.cli", "serve", "--port", "0", "--redis-url",
         f"redis://127.0.0.1:{_free_port()}/0"],
        cwd=ROOT, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stderr is not None
        records = []
        for line in proc.stderr:
            records.append(json.loads(line))
            if records[-1]["event"] == "listening":
                break
        events = [r["event"] for r in records]
        assert "redis_unreachable" in events, records
        said = records[events.index("redis_unreachable")]
        assert said["level"] == "warning" and "store_unavailable" in said["message"]
        assert "10 s" in said["message"], said
        assert not records[-1]["url"].endswith(":0"), "the port actually bound is named"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError("serve did not stop on SIGINT") from None
