"""What a bench's figures were measured on, for the line each bench starts with."""

from __future__ import annotations

import os
import sys


def interpreter() -> str:
    """The Python a bench runs on (and so the server bench/load.py starts): its version,
    its executable, and whether the interpreter runs from a shared libpython. The same
    code counted 8% fewer instructions a command on one machine's Debian python3.11
    (libpython linked in, built with profile-guided optimisation) than on a pyenv build
    that loads libpython3.11.so, and folded logs an eighth faster on another
    (docs/performance.md, "A tenth sitting" and "A twelfth sitting")."""
    try:
        with open("/proc/self/maps") as f:
            shared: bool | None = "libpython" in f.read()
    except OSError:
        shared = None
    how = "" if shared is None else ", libpython shared" if shared else ", libpython linked in"
    return f"python {sys.version.split()[0]} ({os.path.realpath(sys.executable)}{how})"
