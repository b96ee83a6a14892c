"""Server settings, from arguments and the environment."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field


def _origins_from_env() -> tuple[str, ...]:
    raw = os.environ.get("DAEDALUS_ALLOWED_ORIGINS", "")
    return tuple(o.strip() for o in raw.split(",") if o.strip())


def _api_keys_from_env() -> tuple[str, ...]:
    raw = os.environ.get("DAEDALUS_API_KEYS", "")
    return tuple(k.strip() for k in raw.split(",") if k.strip())


def _seconds_from_env(name: str, default: float) -> float:
    return _positive_from_env(name, default, " seconds")


def _number_from_env(name: str, default: float) -> float:
    """A positive finite number from the environment variable `name`."""
    return _positive_from_env(name, default, "", finite=True)


def _positive_from_env(name: str, default: float, unit: str, finite: bool = False) -> float:
    """A number above 0 (`unit`: its unit in messages) from the environment variable
    `name`; unset or empty: `default`."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number{' of' + unit if unit else ''}, not {raw!r}") from None
    if not value > 0 or (finite and value == float("inf")):
        raise ValueError(f"{name} must be {'a finite number ' if finite else ''}more than 0{unit}, not {raw!r}")
    return value


def _frame_burst_from_env() -> int:
    burst = _number_from_env("DAEDALUS_FRAME_BURST", 40)
    if burst < 1 or burst != int(burst):
        raise ValueError(f"DAEDALUS_FRAME_BURST must be a whole number of frames, at least 1, not {burst!r}")
    return int(burst)


def _key_file_from_env() -> str:
    default = os.path.join(
        os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state"),
        "daedalus", "server-key.pem",
    )
    return os.environ.get("DAEDALUS_KEY_FILE", "").strip() or default


def _unfilled_ttl_from_env() -> float:
    return _seconds_from_env("DAEDALUS_UNFILLED_TTL", 3600.0)


def _redis_max_connections_from_env() -> int:
    raw = os.environ.get("DAEDALUS_REDIS_MAX_CONNECTIONS", "").strip()
    if not raw:
        return 32
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"DAEDALUS_REDIS_MAX_CONNECTIONS must be a whole number, not {raw!r}") from None
    if value < 1:
        raise ValueError(f"DAEDALUS_REDIS_MAX_CONNECTIONS must be at least 1, not {raw!r}")
    return value


def _flag_from_env(name: str) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw in ("", "0", "no", "false", "off"):
        return False
    if raw in ("1", "yes", "true", "on"):
        return True
    raise ValueError(f"{name} must be 1 or 0, not {raw!r}")


def _wait_replicas_from_env() -> int:
    raw = os.environ.get("DAEDALUS_REDIS_WAIT_REPLICAS", "").strip()
    if not raw:
        return 0
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"DAEDALUS_REDIS_WAIT_REPLICAS must be a whole number, not {raw!r}") from None
    if value < 0:
        raise ValueError(f"DAEDALUS_REDIS_WAIT_REPLICAS must be 0 or more, not {raw!r}")
    return value


WS_PROTOCOLS = ("auto", "websockets-sansio", "websockets", "wsproto")


def _ws_protocol_from_env() -> str:
    raw = os.environ.get("DAEDALUS_WS_PROTOCOL", "").strip() or "auto"
    if raw not in WS_PROTOCOLS:
        raise ValueError(f"DAEDALUS_WS_PROTOCOL must be one of {', '.join(WS_PROTOCOLS)}, not {raw!r}")
    if raw == "wsproto" and importlib.util.find_spec("wsproto") is None:
        raise ValueError("DAEDALUS_WS_PROTOCOL=wsproto needs the wsproto package (pip install wsproto)")
    return raw


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
    # Websocket frames (server/limits.py): a token bucket of `rate` frames a second,
    # `burst` deep, per connection until its hello, then shared by all the connections of
    # one seat (a player) or of one address (spectators, auditors). DAEDALUS_FRAME_RATE
    # and DAEDALUS_FRAME_BURST set them (bots playing at machine speed send far more).
    rate: float = field(default_factory=lambda: _number_from_env("DAEDALUS_FRAME_RATE", 20.0))
    burst: int = field(default_factory=_frame_burst_from_env)
    # How many websockets one seat may hold at once; one more is refused with the error
    # `too_many_connections` and close code 4009. A connection cut without a close counts
    # until the keepalive notices (about 40 s).
    seat_connections: int = 8
    # `POST /matches` per client address: `create_burst` at once, then `create_rate` a
    # second. A request with a valid API key is not limited by address.
    create_rate: float = 0.5
    create_burst: int = 100
    # API keys (DAEDALUS_API_KEYS, comma-separated): when any is set, `POST /matches`
    # needs `Authorization: Bearer KEY` with one of them (several allow a rotation).
    api_keys: tuple[str, ...] = field(default_factory=_api_keys_from_env)
    # `POST /matches` with an `Idempotency-Key` header: the server remembers the key, the
    # match it created and its request for this many seconds (a request sent again
    # within that time gets the same match).
    idempotency_key_ttl: float = 86400.0
    # A match whose seats are not all taken this many seconds after its creation expires
    # (DAEDALUS_UNFILLED_TTL): its keys are removed from the store, and a record of why
    # is kept for `expired_record_ttl` seconds (GET /matches/{id} answers 410 meanwhile).
    unfilled_ttl: float = field(default_factory=_unfilled_ttl_from_env)
    expired_record_ttl: float = 7 * 86400.0
    # A viewer's send queue: past this many waiting updates, or this many waiting answers
    # to its own messages, the reader is too slow and the connection is closed with 4008
    # (it resumes from its last seq). Its catch-up after a hello, however long, waits as
    # one item, its updates made as the client reads them.
    send_queue: int = 512
    hello_timeout: float = 10.0
    # Finished matches' replays and public logs kept once made (server/replays.py): at
    # most this many bytes.
    replay_cache_bytes: int = 32 * 1024 * 1024
    # Finished matches nobody follows that a request loaded (GET /matches/{id}, its log,
    # its replay, a refused seat claim) stay loaded until the sweep lets go of them (see
    # runner_idle), this many at most, the least recently asked let go of first: loading
    # one folds its whole log again (86 ms for a 1,000-round Five-Card Trick).
    finished_kept: int = 32
    # An HTTP request's line and headers (a websocket's handshake too) arrive within this
    # many seconds of the connection, or of the request's first byte, and then its body
    # within as long again, or the connection is closed (server/header_timeout.py,
    # server/app.py's _read_body; DAEDALUS_HEADER_TIMEOUT).
    header_timeout: float = field(default_factory=lambda: _seconds_from_env("DAEDALUS_HEADER_TIMEOUT", 15.0))
    # An HTTP answer its client does not read: the connection is aborted once its writes
    # have waited this many seconds for room in a full buffer (server/header_timeout.py's
    # send_timed; DAEDALUS_SEND_TIMEOUT). A websocket's keepalive does that for it.
    send_timeout: float = field(default_factory=lambda: _seconds_from_env("DAEDALUS_SEND_TIMEOUT", 60.0))
    # `GET /health` answers within this many seconds: 503 when the store has not answered
    # its ping by then (a stalled Redis must not stall the health check).
    health_timeout: float = 1.0
    # Redis (server/store.py). `redis_timeout`: how long a command waits for Redis's answer
    # before its outcome counts as unknown (seconds; redis-py's own default). Each of the
    # store's two connection pools (reads, appends) holds at most `redis_max_connections`
    # connections (DAEDALUS_REDIS_MAX_CONNECTIONS); a request finding them all in use
    # waits up to `redis_timeout` for one, then answers store_unavailable. A connection
    # unused for `redis_idle_timeout` seconds is closed, so a burst or an outage does not
    # leave its peak of connections open.
    redis_timeout: float = 5.0
    redis_max_connections: int = field(default_factory=_redis_max_connections_from_env)
    redis_idle_timeout: float = 30.0
    # `redis_url` is a node of a Redis Cluster (DAEDALUS_REDIS_CLUSTER=1): the store finds
    # the other nodes from it, sends each match's commands to the node owning its slot,
    # and follows other processes' appends by polling every node every
    # `redis_cluster_poll` seconds while nothing is new (deploy/README.md, Redis Cluster).
    redis_cluster: bool = field(default_factory=lambda: _flag_from_env("DAEDALUS_REDIS_CLUSTER"))
    redis_cluster_poll: float = 0.025
    # An append is acknowledged only once this many replicas have it (Redis's WAIT, for up
    # to half of `redis_timeout`; DAEDALUS_REDIS_WAIT_REPLICAS; 0: not waited for). One
    # that does not reach them in time answers store_unavailable (the command is in the
    # master's log; sent again, it is found there).
    redis_wait_replicas: int = field(default_factory=_wait_replicas_from_env)
    tail_block_ms: int = 2000
    # uvicorn's websocket implementation (DAEDALUS_WS_PROTOCOL: auto, its default choice,
    # or websockets-sansio, websockets, wsproto; wsproto is not installed with Daedalus),
    # its writes of one turn of the loop sent as one (server/coalesce.py).
    # docs/performance.md compares them.
    ws_protocol: str = field(default_factory=_ws_protocol_from_env)
    # A process lets go of a match nobody views here (DAEDALUS_RUNNER_IDLE, seconds): a
    # finished one within min(runner_idle / 2, 5) seconds; an unfinished one that only
    # other processes have played since this one last used it (a request, a viewer, a
    # command), after runner_idle. A later request or viewer loads it again from the store.
    runner_idle: float = field(default_factory=lambda: _seconds_from_env("DAEDALUS_RUNNER_IDLE", 60.0))
    # On shutdown (SIGTERM, Ctrl-C): open connections are told to go (websockets get
    # close code 1012, "service restart") and get this many seconds to end before their
    # handlers are cancelled; the match runners then get as long again to stop. Nothing
    # accepted is lost either way: an acknowledged command is in Redis already.
    shutdown_grace: float = 5.0
    # The server's Ed25519 key, which signs receipts (server/keys.py): a PEM file, created
    # on the first start when absent, readable by its owner only (DAEDALUS_KEY_FILE;
    # default $XDG_STATE_HOME/daedalus/server-key.pem). Every process of a deployment
    # should share it; its public key is served at GET /key.
    key_file: str = field(default_factory=_key_file_from_env)
    # Where `daedalus archive` moves finished matches to, a directory or s3://BUCKET/PREFIX
    # (server/archive.py; DAEDALUS_ARCHIVE): GET /matches/{id}/log serves a match found
    # there and no longer in Redis as it served it from Redis. None: not served.
    archive: str | None = field(default_factory=lambda: os.environ.get("DAEDALUS_ARCHIVE", "").strip() or None)
