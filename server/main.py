"""Running the server: `serve` for the command line, `EmbeddedServer` inside a program."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from types import FrameType, TracebackType

import uvicorn

from server import logs
from server.app import create_app
from server.coalesce import coalescing
from server.config import Settings
from server.header_timeout import header_timed, send_timed
from server.route import Adopting, Handoff, rerouting, routed
from server.storage import Store


def _ws_protocol(name: str) -> type[asyncio.Protocol]:
    """uvicorn's websocket protocol `name` (Settings.ws_protocol), its writes of one turn
    of the loop sent as one (server/coalesce.py)."""
    from uvicorn.config import WS_PROTOCOLS
    from uvicorn.importer import import_from_string

    base = import_from_string(WS_PROTOCOLS[name])
    return coalescing(base)


def _http_protocol(settings: Settings) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, whatever else is installed, with a time limit on each
    request's line and headers, and on an answer its client does not read
    (server/header_timeout.py). uvicorn's `auto` would take
    httptools where it is installed (by `uvicorn[standard]`, say), which reads a request's
    line and headers without a bound (one endless header grew a server by 200 MB in a
    test; h11 refuses an unfinished request past 16 KiB), and on which server/route.py
    cannot hand a kept-alive connection over between two requests."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return send_timed(header_timed(H11Protocol, settings.header_timeout), settings.send_timeout)


def _uvicorn_config(
    app: object, host: str, port: int, settings: Settings,
    http: type[asyncio.Protocol] | None = None,
) -> uvicorn.Config:
    return uvicorn.Config(
        app,  # type: ignore[arg-type]
        host=host,
        port=port,
        http=http or _http_protocol(settings),
        lifespan="on",
        ws=_ws_protocol(settings.ws_protocol),
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
    workers: int = 1,
) -> int:
    """Serve until interrupted; the exit status. With no Redis URL (argument or
    REDIS_URL), an in-process fakeredis holds the matches: fine for trying things, gone
    when the process ends.

    The port is bound first: one it cannot have is one error line (`bind_failed`) and
    status 1. `listening` is logged once the server serves on it. A Redis that does not answer
    at start is said (`redis_unreachable`, and how the server goes on); the server serves
    anyway.

    `workers` > 1: that many server processes on the one port (`_supervise`); each logs
    its own `listening`, and every line a worker logs carries `worker` and `pid`. It needs
    a real Redis (every process folds the same streams; a fakeredis is one process's own):
    without one, one error line (`workers_need_redis`) and status 2."""
    logs.configure(os.environ.get("DAEDALUS_LOG_LEVEL", "info"))
    log = logs.get("daedalus.server")
    redis_url = redis_url or os.environ.get("REDIS_URL") or None
    try:
        settings = Settings(redis_url=redis_url)
        if allowed_origins:
            settings = Settings(redis_url=redis_url, allowed_origins=tuple(allowed_origins))
    except ValueError as exc:  # a setting from the environment that makes no sense
        log.error("bad_setting", error=str(exc), message=f"cannot start: {exc}")
        return 2
    if workers < 1 or (workers > 1 and not redis_url):
        log.error(
            "workers_need_redis", workers=workers,
            message="--workers must be at least 1" if workers < 1 else f"--workers {workers} needs "
            "a real Redis (--redis-url or REDIS_URL): the in-process store is one process's own, "
            "so the workers would not see each other's matches",
        )
        return 2
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
    if workers > 1:
        listening = {"url": f"http://{host}:{port}", "websocket": f"ws://{host}:{port}/ws"}
        return _supervise(sock, workers, settings, host, port, listening)
    config = _uvicorn_config(create_app(settings), host, port, settings)
    _tune_gc()
    server = _Server(config, stuck_after=3 * settings.shutdown_grace + 5)
    server.listening = {"url": f"http://{host}:{port}", "websocket": f"ws://{host}:{port}/ws"}
    server.run(sockets=[sock])
    return 0


def _supervise(
    sock: socket.socket, workers: int, settings: Settings, host: str, port: int,
    listening: dict[str, str],
) -> int:
    """Serve on `sock` from `workers` child processes; the exit status.

    The socket is bound once, here, and each child is forked with it: they all accept
    from the one listening socket, and the kernel gives each new connection to whichever
    worker accepts it first (a busy worker accepts less). One shared socket rather than a
    socket per worker with SO_REUSEPORT: connections waiting in the queue are not lost
    when a worker stops or dies (SO_REUSEPORT gives each socket its own queue, and a
    closed socket's queued connections are reset), and a busy worker does not get its
    fixed share of them. Any worker serves any match: all follow the same Redis streams,
    as separate servers on one Redis do.

    Each child is in a process group of its own, so a Ctrl-C in the terminal reaches the
    parent only; SIGTERM and SIGINT received here are passed on to every child, which
    stops as a single server does (graceful shutdown, then its own deadline). The
    parent exits once all have: 0 when each stopped cleanly after SIGTERM, 130 after
    SIGINT, 1 when one did not. No worker is restarted: one that exits while not asked to
    (a crash, a kill) is logged (`worker_exited`), the others are stopped as on SIGTERM
    and the parent exits with status 1, for the process manager (systemd, Kubernetes)
    to start the whole server again."""
    log = logs.get("daedalus.server")
    _tune_gc()  # before forking: what the imports built is shared, never traversed again
    children: dict[int, int] = {}  # pid: worker index
    asked: list[int] = []  # the signals received
    parent = os.getpid()

    def forward(sig: int, frame: FrameType | None) -> None:
        if os.getpid() != parent:  # a child just forked, before it set its own handlers
            return
        asked.append(sig)
        for child in list(children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, sig)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    channels = Handoff.channels(workers)  # (server/route.py: a connection to its match's worker)
    for index in range(workers):
        pid = os.fork()
        if pid == 0:
            _worker(sock, index, settings, host, port, listening, channels)  # never returns
        with contextlib.suppress(OSError):  # (the child does it too: whichever runs first)
            os.setpgid(pid, pid)
        children[pid] = index
        if asked:  # a signal came while forking: this child has not had it
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, asked[0])
    sock.close()  # the children hold it: once they stop, the port is closed
    for inbox, outbox in channels:
        inbox.close()
        outbox.close()
    log.info("workers", count=workers, pids=sorted(children), **listening)
    failed = False
    while children:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        index = children.pop(pid, -1)
        if index < 0:
            continue
        code = os.waitstatus_to_exitcode(status)
        if not asked:
            failed = True
            log.error(
                "worker_exited", worker=index, pid=pid, status=code,
                message="a worker exited while not asked to stop: stopping the others; "
                "workers are not restarted",
            )
            forward(signal.SIGTERM, None)
        elif code != 0:
            failed = True
            log.error("worker_stopped", worker=index, pid=pid, status=code)
        else:
            log.info("worker_stopped", worker=index, pid=pid, status=code)
    if failed:
        return 1
    return 130 if asked and asked[0] == signal.SIGINT else 0


def _worker(
    sock: socket.socket, index: int, settings: Settings, host: str, port: int,
    listening: dict[str, str], channels: list[tuple[socket.socket, socket.socket]],
) -> None:
    """A forked worker: one full server on the inherited socket, then `os._exit` with 0
    when it stopped cleanly (on SIGTERM or SIGINT), 3 when it could not start, 1 on an
    error. A connection whose URL names a match another worker owns is handed to that
    worker (server/route.py, over `channels`)."""
    import structlog

    code = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        structlog.contextvars.bind_contextvars(worker=index, pid=os.getpid())
        handoff = Handoff.of_worker(index, channels)
        http = _http_protocol(settings)
        config = _uvicorn_config(
            create_app(settings, handoff=handoff), host, port, settings,
            http=routed(http, handoff, settings.header_timeout),
        )
        _tune_gc()
        server = _Server(config, stuck_after=3 * settings.shutdown_grace + 5)
        server.handoff, server.http = handoff, rerouting(http, handoff)
        server.listening = listening
        with contextlib.suppress(KeyboardInterrupt):  # SIGINT from the parent, once stopped
            server.run(sockets=[sock])
        code = 0 if server.started else 3
    except BaseException as exc:  # the parent reports the status; say why here
        logs.get("daedalus.server").error("worker_failed", error=f"{type(exc).__name__}: {exc}")
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
            sys.stdout.flush()
        os._exit(code)


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
        # A worker's: connections handed to it by the others (server/route.py), served with
        # uvicorn's HTTP protocol class `http`.
        self.handoff: Handoff | None = None
        self.http: type[asyncio.Protocol] | None = None
        self._adopting: set[asyncio.Task[None]] = set()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's start-up; then `listening`: the port is bound, the app started, and
        a signal from now on stops the server gracefully."""
        await super().startup(sockets=sockets)
        if self.started:
            if self.handoff is not None:
                self.handoff.listen(self._adopt)
            logs.get("daedalus.server").info("listening", **self.listening)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.handoff is not None:
            self.handoff.stop()  # (what waits in the inbox is dropped with it)
        await super().shutdown(sockets=sockets)

    def _adopt(self, sock: socket.socket, read: bytes) -> None:
        """Serve a connection another worker accepted and handed here."""
        http = self.http
        assert http is not None
        config, state, app_state = self.config, self.server_state, self.lifespan.state

        def made() -> asyncio.Protocol:
            return http(config=config, server_state=state, app_state=app_state)  # type: ignore[call-arg]

        async def adopt() -> None:
            try:
                await asyncio.get_running_loop().connect_accepted_socket(lambda: Adopting(made, read), sock)
            except OSError:
                sock.close()

        task = asyncio.get_running_loop().create_task(adopt())
        self._adopting.add(task)
        task.add_done_callback(self._adopting.discard)

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
