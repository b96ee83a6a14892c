"""Running the server: `serve` for the command line, `EmbeddedServer` inside a program."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import socket
import threading
from collections.abc import Iterator
from types import FrameType, TracebackType

import uvicorn

from server import logs
from server.app import create_app
from server.config import Settings
from server.storage import Store


def _uvicorn_config(app: object, host: str, port: int, settings: Settings) -> uvicorn.Config:
    return uvicorn.Config(
        app,  # type: ignore[arg-type]
        host=host,
        port=port,
        lifespan="on",
        ws_max_size=settings.hard_frame_limit,
        # No permessage-deflate: compressing every update frame (a few KiB of JSON) was
        # the largest single CPU cost of serving a command; frames stay small anyway.
        ws_per_message_deflate=False,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=max(1, round(settings.shutdown_grace)),
    )


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    redis_url: str | None = None,
    allowed_origins: list[str] | None = None,
) -> int:
    """Serve until interrupted; the exit status. With no Redis URL (argument or
    REDIS_URL), an in-process fakeredis holds the matches: fine for trying things, gone
    when the process ends.

    The port is bound first: one it cannot have is one error line (`bind_failed`) and
    status 1. `listening` is logged once the server serves on it. A Redis that does not answer
    at start is said (`redis_unreachable`, and how the server goes on); the server serves
    anyway."""
    logs.configure(os.environ.get("DAEDALUS_LOG_LEVEL", "info"))
    log = logs.get("daedalus.server")
    redis_url = redis_url or os.environ.get("REDIS_URL") or None
    settings = Settings(redis_url=redis_url)
    if allowed_origins:
        settings = Settings(redis_url=redis_url, allowed_origins=tuple(allowed_origins))
    try:
        sock = _bind(host, port)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        log.error(
            "bind_failed", host=host, port=port, error=reason,
            message=f"cannot listen on {host}:{port}: {reason}; is another server running "
            "there? Stop it, or choose another port with --port",
        )
        return 1
    port = sock.getsockname()[1]
    if redis_url:
        log.info("store", kind="redis-cluster" if settings.redis_cluster else "redis", url=_redact(redis_url))
        problem = asyncio.run(_redis_problem(redis_url, cluster=settings.redis_cluster))
        if problem is not None:
            log.warning(
                "redis_unreachable", url=_redact(redis_url), error=problem,
                message="Redis does not answer: serving anyway. Until it does, requests that "
                "need it answer 503 store_unavailable (clients may retry), and the unfinished "
                "matches are looked up again after 0.5 s, then less and less often (at most "
                "every 10 s; each try logs resume_waiting)",
            )
    else:
        log.info(
            "store", kind="fakeredis",
            message="no REDIS_URL given: using an in-process fakeredis; matches end with this process",
        )
    config = _uvicorn_config(create_app(settings), host, port, settings)
    _tune_gc()
    server = _Server(config, stuck_after=3 * settings.shutdown_grace + 5)
    server.listening = {"url": f"http://{host}:{port}", "websocket": f"ws://{host}:{port}/ws"}
    server.run(sockets=[sock])
    return 0


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (as uvicorn would bind it); OSError if it cannot be had."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


async def _redis_problem(url: str, timeout: float = 2.0, cluster: bool = False) -> str | None:
    """Why the Redis at `url` (a node of a cluster: the cluster) does not answer a PING
    (None if it does)."""
    from redis.asyncio import Redis, RedisCluster

    client: Redis | RedisCluster
    if cluster:
        client = RedisCluster.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    else:
        client = Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        await client.ping()
    except Exception as exc:  # any failure is the answer: the server goes on without it
        return f"{type(exc).__name__}: {exc}"
    finally:
        with contextlib.suppress(Exception):
            await client.aclose()
    return None


class _Server(uvicorn.Server):
    """uvicorn's server, with a last resort: a process asked to stop (SIGTERM, Ctrl-C)
    that has not exited `stuck_after` seconds later (by default three shutdown graces,
    for connections, runners and store, and a margin) exits anyway, with status 70.
    Every acknowledged command is in Redis already."""

    def __init__(self, config: uvicorn.Config, stuck_after: float) -> None:
        super().__init__(config)
        self._deadline: threading.Timer | None = None
        self._limit = stuck_after
        self.listening: dict[str, str] = {}  # logged as `listening` once serving

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's start-up; then `listening`: the port is bound, the app started, and
        a signal from now on stops the server gracefully."""
        await super().startup(sockets=sockets)
        if self.started:
            logs.get("daedalus.server").info("listening", **self.listening)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn's signal handling, but a SIGTERM is not raised again once the server
        has stopped: a server asked to stop by SIGTERM (a process manager) that shut down
        cleanly exits with status 0, not killed by the signal. Ctrl-C (SIGINT) still
        ends in KeyboardInterrupt (status 130), as an interrupted command does."""
        with super().capture_signals():
            try:
                yield
            finally:
                kept = [sig for sig in self._captured_signals if sig != signal.SIGTERM]
                self._captured_signals[:] = kept

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        if self._deadline is None:
            self._deadline = threading.Timer(self._limit, self._give_up)
            self._deadline.daemon = True
            self._deadline.start()

    def _give_up(self) -> None:
        logs.get("daedalus.server").error("shutdown_stuck", seconds=self._limit)
        os._exit(70)


def _tune_gc() -> None:
    """Garbage collection for a server process (not for EmbeddedServer: its host owns it).

    What the imports built lives as long as the process: `gc.freeze()` takes it out of
    every later collection. The young generation is collected every 20,000 allocations
    rather than every 700, so the objects of commands in flight are not traversed again
    and again. (Match state is freed by reference counting, not by the cycle collector.)"""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 10)


def _redact(url: str) -> str:
    if "@" in url:
        scheme, rest = url.split("://", 1) if "://" in url else ("", url)
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url


class EmbeddedServer:
    """A server on a free loopback port in the running event loop.

        async with EmbeddedServer() as srv:
            print(srv.url)  # http://127.0.0.1:PORT
    """

    def __init__(
        self,
        settings: Settings | None = None,
        store: Store | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.settings = settings or Settings()
        self.app = create_app(self.settings, store=store)
        self._server = uvicorn.Server(_uvicorn_config(self.app, host, port, self.settings))
        # The host program owns the signals (Ctrl-C), not this embedded server.
        self._server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
        self._task: asyncio.Task[None] | None = None
        self.host = host
        self.port = port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}/ws"

    async def __aenter__(self) -> EmbeddedServer:
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise RuntimeError("the embedded server stopped while starting")
            await asyncio.sleep(0.01)
        sockets = self._server.servers[0].sockets
        self.port = sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.should_exit = True
        if self._task is not None:
            await self._task
