"""Server settings, from arguments and the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass, field


def _origins_from_env() -> tuple[str, ...]:
    raw = os.environ.get("DAEDALUS_ALLOWED_ORIGINS", "")
    return tuple(o.strip() for o in raw.split(",") if o.strip())


@dataclass(frozen=True)
class Settings:
    redis_url: str | None = None
    # Origins a browser page may open a websocket from. A handshake without an Origin
    # header (a non-browser client) is accepted; "*" accepts every origin. Pages served
    # from localhost or 127.0.0.1 (any port) are accepted unless `strict_origins`.
    allowed_origins: tuple[str, ...] = field(default_factory=_origins_from_env)
    strict_origins: bool = False
    # The largest frame the application reads; larger ones get a `frame_too_large` error
    # and are dropped. uvicorn closes the connection (1009) above `hard_frame_limit`.
    frame_limit: int = 16 * 1024
    hard_frame_limit: int = 256 * 1024
    # Per connection: a token bucket of `rate` messages a second, `burst` deep.
    rate: float = 20.0
    burst: int = 40
    # A viewer's send queue: past this many waiting messages the reader is too slow and
    # the connection is closed with 4008 (it resumes from its last seq).
    send_queue: int = 512
    hello_timeout: float = 10.0
    tail_block_ms: int = 2000
    # On shutdown (SIGTERM, Ctrl-C): open connections are told to go (websockets get
    # close code 1012, "service restart") and get this many seconds to end before their
    # handlers are cancelled; the match runners then get as long again to stop. Nothing
    # accepted is lost either way: an acknowledged command is in Redis already.
    shutdown_grace: float = 5.0
