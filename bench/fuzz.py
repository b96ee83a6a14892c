"""Fuzz a real server over websockets with mutated frames; count what went unanswered.

    .venv/bin/python bench/fuzz.py [--frames 100000] [--seed 1]

A server (uvicorn on a loopback port, in this process, its store in memory) hosts a
match of every game, with every seat taken. Valid frames of every message type (hello,
command, ping) and every game's commands (taken from the golden playthroughs in
tests/golden) are mutated: fields dropped, added, retyped, nested deep; bytes cut,
flipped, made invalid UTF-8; sent as text or as binary frames. Each frame must be
answered (error, ack, rejected, welcome or pong) on its connection; the server's log
must hold no traceback and no error, and the server must keep serving.

The last line is `frames=N answered=N unanswered=N tracebacks=N crashes=N`.
tests/test_fuzz.py runs a few thousand frames of the same fuzz.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import random
import sys
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import structlog
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from server.config import Settings  # noqa: E402
from server.main import EmbeddedServer  # noqa: E402
from server.storage import MemoryStore  # noqa: E402

ANSWERS = frozenset({"error", "ack", "rejected", "welcome", "pong"})
GOLDEN = ROOT / "tests" / "golden"


# --- what is sent -------------------------------------------------------------------------


def golden_commands() -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """game -> (a variant, the command bodies of its golden playthroughs)."""
    found: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    for path in sorted(GOLDEN.glob("*.json")):
        doc = json.loads(path.read_text())
        bodies = [e["entry"]["body"] for e in doc["entries"] if e["entry"]["kind"] == "command"]
        variant, known = found.get(doc["game"], (doc["variant"], []))
        found[doc["game"]] = (variant, known + bodies)
    return found


def _junk(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.randrange(14 if depth < 3 else 11)
    if pick == 11:
        return [_junk(rng, depth + 1) for _ in range(rng.randrange(3))]
    if pick == 12:
        return {rng.choice(("type", "id", "n", "round", "a")): _junk(rng, depth + 1)}
    if pick == 13:
        return "\u202e\u0000\ud7ff\U0001f600"
    if pick == 10:
        return "x" * rng.choice((1, 65, 200, 5000))
    return (None, True, False, 0, -1, 2**31, 10**30, 1e300, -0.5, "")[pick]


DEEP = "\u0001deep\u0001"  # stands for a deeply nested value, written out by `wire`


def _deep(rng: random.Random) -> str:
    """A value nested 10 to 3000 levels deep, as JSON text."""
    depth = rng.choice((10, 63, 64, 65, 100, 976, 3000))
    if rng.random() < 0.5:
        return "[" * depth + "0" + "]" * depth
    return '{"a":' * depth + '"x"' + "}" * depth


def mutate_value(rng: random.Random, msg: Any) -> Any:
    """A structural mutation of a JSON value (a copy)."""
    msg = json.loads(json.dumps(msg))
    targets: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k in list(node):
                targets.append((node, k))
                walk(node[k])
        elif isinstance(node, list):
            for i in range(len(node)):
                targets.append((node, i))
                walk(node[i])

    walk(msg)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        op = rng.randrange(7)
        if op == 0 or not targets:
            if isinstance(msg, dict):
                msg[rng.choice(("x", "type", "id", "since", "full", "token", "command", "\u00e9"))] = _junk(rng)
        elif op == 1:
            node, key = rng.choice(targets)
            with contextlib.suppress(KeyError, IndexError):
                del node[key]
            targets = []
            walk(msg)
        elif op in (2, 3):
            node, key = rng.choice(targets)
            with contextlib.suppress(IndexError):
                node[key] = _junk(rng)
        elif op == 4:
            node, key = rng.choice(targets)
            with contextlib.suppress(IndexError):
                node[key] = DEEP
        elif op == 5:
            return rng.choice(([msg], "just a string", 42, None, [], {}))
        else:
            node, key = rng.choice(targets)
            try:
                value = node[key]
                if isinstance(value, int) and not isinstance(value, bool):
                    node[key] = rng.choice((value + 1, -value, value * 10**12, str(value), float(value)))
                elif isinstance(value, str):
                    node[key] = rng.choice((value + "x", value.upper(), value[::-1], "", value * 50))
            except IndexError:
                pass
    return msg


def mutate_bytes(rng: random.Random, raw: bytes) -> bytes:
    """A byte-level mutation: cut, flipped, inserted, invalid UTF-8."""
    data = bytearray(raw)
    op = rng.randrange(6)
    if op == 0 and data:
        del data[rng.randrange(len(data)):]
    elif op == 1 and data:
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif op == 2:
        at = rng.randrange(len(data) + 1)
        data[at:at] = rng.choice((b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\x00", b"{", b"]", b'"', b"\\u12"))
    elif op == 3:
        data = bytearray(rng.randbytes(rng.randrange(1, 64)))
    elif op == 4:
        data = data * rng.choice((2, 20))
    else:
        data = bytearray(b" \t\n" + data + b"\r\n ")
    return bytes(data)


@dataclass
class Target:
    """A match of one game on the server, and a seat's token in it."""

    game: str
    variant: str
    commands: list[dict[str, Any]]
    match: str = ""
    tokens: list[str] = field(default_factory=list)


def frame(rng: random.Random, target: Target, cid: Callable[[], str]) -> tuple[str, dict[str, Any]]:
    """A valid frame of a random type: ("hello" | "command" | "ping", the message)."""
    kind = rng.choice(("hello", "command", "command", "ping"))
    if kind == "hello":
        msg: dict[str, Any] = {"type": "hello", "match": target.match}
        if rng.random() < 0.6:
            msg["token"] = rng.choice(target.tokens)
        if rng.random() < 0.3:
            msg["since"] = rng.choice((0, 1, 5, "now"))
        if rng.random() < 0.1:
            msg["full"] = True
        return kind, msg
    if kind == "command":
        return kind, {"type": "command", "id": cid(), "command": rng.choice(target.commands)}
    return kind, {"type": "ping"}


def wire(rng: random.Random, msg: dict[str, Any]) -> str | bytes:
    """The frame as sent: mutated (mostly), as text or binary."""
    r = rng.random()
    if r < 0.1:
        text = json.dumps(msg)
    elif r < 0.75:
        text = json.dumps(mutate_value(rng, msg))
        while json.dumps(DEEP) in text:
            text = text.replace(json.dumps(DEEP), _deep(rng), 1)
    else:
        raw = mutate_bytes(rng, json.dumps(msg).encode())
        return raw  # a binary frame (text frames must be UTF-8: the websocket closes 1007)
    if len(text) > 200_000:
        text = text[:200_000]
    return text.encode() if rng.random() < 0.15 else text


# --- what is watched -----------------------------------------------------------------------


@dataclass
class Stats:
    frames: int = 0
    answered: int = 0
    unanswered: int = 0
    tracebacks: int = 0
    crashes: int = 0
    codes: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"frames={self.frames} answered={self.answered} unanswered={self.unanswered} "
            f"tracebacks={self.tracebacks} crashes={self.crashes}"
        )


class Watch(logging.Handler):
    """Every stdlib log record with a traceback or at error level (uvicorn's included)."""

    def __init__(self, stats: Stats) -> None:
        super().__init__(logging.DEBUG)
        self.stats = stats

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or record.levelno >= logging.ERROR:
            self.stats.tracebacks += 1
            self.stats.problems.append(f"log {record.name}: {record.getMessage()[:300]}")


def watch_structlog(stats: Stats) -> None:
    """structlog (the server's own log): errors and tracebacks are counted, the rest dropped."""

    def check(_logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        if method in ("error", "critical", "exception") or "exc_info" in event or "exception" in event:
            stats.tracebacks += 1
            stats.problems.append(f"structlog {method}: {str(event)[:300]}")
        raise structlog.DropEvent

    structlog.configure(processors=[check], cache_logger_on_first_use=False)


class Conn:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    async def answer(self, timeout: float) -> dict[str, Any] | None:
        """The next answer frame (updates and other pushed frames skipped); None: none came."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            left = end - loop.time()
            if left <= 0:
                return None
            try:
                raw = await asyncio.wait_for(self.ws.recv(), left)
            except TimeoutError:
                return None
            msg = json.loads(raw)
            if isinstance(msg, dict) and msg.get("type") in ANSWERS:
                return msg


async def _open(url: str) -> Conn:
    return Conn(await connect(url, max_size=None, close_timeout=0.5))


async def _new_match(http: httpx.AsyncClient, t: Target) -> None:
    r = await http.post("/matches", json={"game": t.game, "variant": t.variant})
    r.raise_for_status()
    t.match = r.json()["match"]
    t.tokens = []
    for i in range(r.json()["seats"]):
        s = await http.post(f"/matches/{t.match}/seats", json={"name": f"P{i}"})
        s.raise_for_status()
        t.tokens.append(s.json()["token"])


async def run(frames: int, seed: int, progress: Callable[[Stats], None] | None = None,
              answer_timeout: float = 5.0) -> Stats:
    """Send `frames` fuzzed frames to a fresh server; the counts."""
    stats = Stats()
    rng = random.Random(seed)
    watch = Watch(stats)
    saved = structlog.get_config()
    watch_structlog(stats)
    loggers = [logging.getLogger(), logging.getLogger("uvicorn"), logging.getLogger("uvicorn.error")]
    targets = [Target(game, variant, cmds) for game, (variant, cmds) in sorted(golden_commands().items())]
    serial = iter(range(10**12))
    settings = Settings(rate=1e9, burst=10**9)
    async with EmbeddedServer(settings, store=MemoryStore()) as srv:
        for lg in loggers:
            lg.addHandler(watch)
        try:
            async with httpx.AsyncClient(base_url=srv.url, timeout=30) as http:
                for t in targets:
                    await _new_match(http, t)
                players: dict[str, Conn] = {}

                async def player(t: Target) -> Conn:
                    if t.game not in players:
                        c = await _open(srv.ws_url)
                        await c.ws.send(json.dumps({"type": "hello", "match": t.match, "token": t.tokens[0]}))
                        await c.answer(answer_timeout)
                        players[t.game] = c
                    return players[t.game]

                fresh = await _open(srv.ws_url)
                for n in range(frames):
                    t = rng.choice(targets)
                    kind, msg = frame(rng, t, lambda: f"f{next(serial)}")
                    data = wire(rng, msg)
                    conn = await player(t) if kind == "command" and rng.random() < 0.9 else fresh
                    stats.frames += 1
                    try:
                        await conn.ws.send(data)
                        got = await conn.answer(answer_timeout)
                    except ConnectionClosed as exc:
                        got = None
                        stats.problems.append(f"frame {n} closed the connection: {exc}")
                    if got is None:
                        stats.unanswered += 1
                        if len(stats.problems) < 50:
                            stats.problems.append(f"frame {n} unanswered: {data[:200]!r}")
                    else:
                        stats.answered += 1
                        code = got.get("code") or got["type"]
                        stats.codes[code] = stats.codes.get(code, 0) + 1
                    if got is None or (conn is fresh and got["type"] == "welcome"):
                        with contextlib.suppress(ConnectionClosed, OSError):
                            await conn.ws.close()
                        if conn is fresh:
                            fresh = await _open(srv.ws_url)
                        else:
                            players.pop(t.game)
                    if got is not None and got.get("code") == "match_over" and conn is not fresh:
                        await players.pop(t.game).ws.close()
                        await _new_match(http, t)
                    if progress is not None and (n + 1) % 5000 == 0:
                        progress(stats)
                if (await http.get("/health")).status_code != 200:
                    stats.crashes += 1
                    stats.problems.append("the server stopped answering /health")
                for c in [fresh, *players.values()]:
                    await c.ws.close()
        except (httpx.HTTPError, OSError) as exc:
            stats.crashes += 1
            stats.problems.append(f"the server went away: {exc!r}")
        finally:
            for lg in loggers:
                lg.removeHandler(watch)
            structlog.configure(**saved)
    return stats


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--frames", type=int, default=100_000, help="how many frames to send (default 100000)")
    p.add_argument("--seed", type=int, default=1, help="the fuzz's random seed (default 1)")
    args = p.parse_args(argv)
    start = time.monotonic()

    def progress(s: Stats) -> None:
        print(f"{time.monotonic() - start:7.1f}s {s.line()}", flush=True)

    stats = asyncio.run(run(args.frames, args.seed, progress))
    for problem in stats.problems[:50]:
        print("problem:", problem)
    print("answers:", " ".join(f"{k}={v}" for k, v in sorted(stats.codes.items())))
    print(f"seconds={time.monotonic() - start:.1f}")
    print(stats.line())
    bad = stats.unanswered or stats.tracebacks or stats.crashes
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
