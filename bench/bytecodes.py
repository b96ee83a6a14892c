"""The server's Python by bytecodes: what each function runs, counted between two signals.

`bench/load.py --bytecodes PREFIX` runs the server through this file:

    python bench/bytecodes.py OUT.json -- python -m clients.cli serve ...

It runs `daedalus serve` in this process as `python -m clients.cli` would, counting
nothing until SIGUSR1; from then until SIGUSR2 it counts every bytecode each Python
function runs (`sys.settrace` with opcode events), each call of a Python function (a
coroutine resumed counts as one) and each call of a C function (`sys.setprofile`), and
at SIGUSR2 writes them to OUT.json. The server runs some twenty times slower meanwhile;
what it runs a command does not depend on the machine's speed, so a change of a few
bytecodes in one function shows at once where `--callgrind`'s instructions, which follow
how many commands a turn of the loop gathers, move more than that (docs/performance.md,
"An eighteenth sitting"). It counts bytecodes, not their cost: a call of a C function
is one bytecode whatever it does.

`report(path, commands)` gives the lines bench/load.py prints: the counts a command, the
functions that ran the most bytecodes, and the files.
"""

from __future__ import annotations

import collections
import json
import os
import runpy
import signal
import sys
from types import FrameType
from typing import Any

Key = tuple[str, int, str]  # a function: its file, its first line, its name


class Counter:
    """Bytecodes and calls by function while on (`start` .. `stop`)."""

    def __init__(self) -> None:
        self.bytecodes: collections.Counter[Key] = collections.Counter()
        self.calls: collections.Counter[Key] = collections.Counter()
        self.c_calls: collections.Counter[str] = collections.Counter()
        self._before: tuple[Any, Any] = (None, None)

    def _opcodes(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            code = frame.f_code
            self.bytecodes[(code.co_filename, code.co_firstlineno, code.co_name)] += 1
        return self._opcodes

    def _trace(self, frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        code = frame.f_code
        self.calls[(code.co_filename, code.co_firstlineno, code.co_name)] += 1
        return self._opcodes

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "c_call":
            self.c_calls[str(getattr(arg, "__qualname__", None) or getattr(arg, "__name__", "?"))] += 1

    def start(self, frame: FrameType | None = None) -> None:
        """Count from now on (`frame`: the one running now, and those it was called from,
        counted too from where they are)."""
        self.bytecodes.clear()
        self.calls.clear()
        self.c_calls.clear()
        self._before = (sys.gettrace(), sys.getprofile())
        sys.settrace(self._trace)
        sys.setprofile(self._profile)
        while frame is not None:
            frame.f_trace = self._opcodes
            frame.f_trace_opcodes = True
            frame.f_trace_lines = False
            frame = frame.f_back

    def stop(self) -> dict[str, Any]:
        """Stop counting (the tracer and profiler before `start` back); what was counted,
        as JSON-ready lists."""
        trace, profile = self._before
        sys.settrace(trace)
        sys.setprofile(profile)
        return {
            "bytecodes": [[*key, n] for key, n in self.bytecodes.items()],
            "calls": [[*key, n] for key, n in self.calls.items()],
            "c_calls": [[name, n] for name, n in self.c_calls.items()],
        }


def _short(path: str, root: str) -> str:
    if "site-packages/" in path:
        return path.rsplit("site-packages/", 1)[1]
    return os.path.relpath(path, root) if path.startswith(root) else path


def report(path: str, commands: int, root: str | None = None, top: int = 15) -> list[str]:
    """What `path` (OUT.json) counted, a command (`commands`: acked over the window)."""
    with open(path) as f:
        counted = json.load(f)
    root = root or os.getcwd()
    per = 1 / max(1, commands)
    bytecodes = {(f, line, name): n for f, line, name, n in counted["bytecodes"]}
    calls = {(f, line, name): n for f, line, name, n in counted["calls"]}
    total = sum(bytecodes.values())
    lines = [
        f"{total * per:,.0f} bytecodes a command, {sum(calls.values()) * per:,.0f} calls of Python "
        f"functions (resumed coroutines included), {sum(n for _, n in counted['c_calls']) * per:,.0f} "
        "of C functions",
        "  the functions that ran the most (bytecodes a command, calls a command):",
    ]
    for key, n in sorted(bytecodes.items(), key=lambda kv: -kv[1])[:top]:
        f, line, name = key
        lines.append(f"    {n * per:7.1f} {calls.get(key, 0) * per:6.2f}  {_short(f, root)}:{line} {name}")
    by_file: collections.Counter[str] = collections.Counter()
    for (f, _, _), n in bytecodes.items():
        by_file[_short(f, root)] += n
    lines.append("  by file: " + ", ".join(f"{name} {n * per:,.0f}" for name, n in by_file.most_common(top)))
    return lines


def main(argv: list[str]) -> None:
    """`OUT.json -- python -m MODULE ARGS...`: run MODULE as __main__, counting between
    SIGUSR1 and SIGUSR2."""
    out, rest = argv[0], argv[1:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    at = rest.index("-m")  # (the interpreter before it: this one)
    module, args = rest[at + 1], rest[at + 2:]
    counter = Counter()

    def start(signum: int, frame: FrameType | None) -> None:
        counter.start(frame)

    def stop(signum: int, frame: FrameType | None) -> None:
        counted = counter.stop()
        with open(out + ".part", "w") as f:
            json.dump(counted, f)
        os.replace(out + ".part", out)  # (whole, or not there)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    sys.argv = [module, *args]
    sys.path[0] = os.getcwd()  # (as `python -m` has it: the modules of the checkout it runs in)
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
