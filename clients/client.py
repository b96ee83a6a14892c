"""An asyncio client for a Daedalus server: HTTP for matches and seats, a WebSocket per match.

    async with DaedalusHttp("http://127.0.0.1:8000") as http:
        match = await http.create_match("five-card-trick", "dm12", {"clock_scale": 0.01})
        seat = await http.claim_seat(match["match"], "Alice")
    async with MatchConnection(url, match["match"], token=seat["token"]) as conn:
        async for message in conn:          # welcome, update, ack, rejected, error, pong
            ...
        result = await conn.send_command({"type": "submit", ...})

A `MatchConnection` keeps the seq of the last update it saw and the latest view. When the
socket drops (the server closes a slow reader with 4008, restarts, the network goes away,
...) it reconnects by itself with `since=<last seq>` and sends again every command still
waiting for its answer, under the same id, so nothing is lost and nothing is applied
twice. `drop()` cuts the socket on purpose, to exercise exactly that.

Trying again follows a `Backoff`: capped exponential backoff with full jitter, for as long
as its `give_up_after` (by default 5 minutes; None: for ever). It paces reconnecting, a
command the server answered `busy` or `store_unavailable`, and the HTTP requests that are
safe to send again: `create_match` (under an idempotency key of the client's, so a
creation whose answer was lost is not made twice) and `claim_seat` (under a token of the
client's), which are sent again after a connection error or a 5xx answer.

A `resync` frame (the server's store lost entries it had acknowledged, and the stream
restarts from the log) sets the seq and the view to the frame's; so does a resume refused
with `bad_since` (the stream became shorter than the seq this client had seen while it
was away), after which it says hello again from the stream as it now is. `resyncs`
counts both.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import random
import secrets
import string
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from domain.engine import Entry

DEFAULT_SERVER = "http://127.0.0.1:8000"

# Close codes after which the connection resumes by itself. 4008: the server dropped a
# slow reader. 1006 (or no close frame at all): the connection was lost.
RESUMABLE_CLOSE_CODES = frozenset({1001, 1006, 1011, 1012, 1013, 1014, 4008})


def endpoints(server: str) -> tuple[str, str]:
    """The HTTP base URL and the WebSocket URL of a server.

    `server` may be given as http(s)://host:port, ws(s)://host:port[/ws] or host:port."""
    if "://" not in server:
        server = "http://" + server
    parts = urlsplit(server)
    scheme = parts.scheme.lower()
    if scheme in ("ws", "wss"):
        http_scheme = "https" if scheme == "wss" else "http"
    elif scheme in ("http", "https"):
        http_scheme = scheme
    else:
        raise ValueError(f"not a server address: {server!r}")
    path = parts.path.rstrip("/")
    if path.endswith("/ws"):
        path = path[: -len("/ws")]
    base = urlunsplit((http_scheme, parts.netloc, path, "", ""))
    ws_scheme = "wss" if http_scheme == "https" else "ws"
    ws = urlunsplit((ws_scheme, parts.netloc, path + "/ws", "", ""))
    return base, ws


def decode_log(data: bytes | str) -> list[Entry]:
    """Log entries from NDJSON (one Entry JSON object per line; the entries of a public
    log that withholds sealed values keep how they open: projections/seal.py)."""
    from projections.seal import decode_public

    if isinstance(data, str):
        data = data.encode()
    return decode_public([line for line in data.splitlines() if line.strip()])


def read_log_file(path: str | Path) -> list[Entry]:
    return decode_log(Path(path).read_bytes())


# --- HTTP ------------------------------------------------------------------------------


class HttpError(Exception):
    """A 4xx/5xx answer: the server's error code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


RETRY_CODES = frozenset({"busy", "store_unavailable"})
"""Errors that say: the same command, same id, may be sent again later."""

_jitter = random.Random()


@dataclass(frozen=True)
class Backoff:
    """How a client tries again: capped exponential backoff with full jitter.

    The pause after the n-th failed try (n = 1, 2, ...) is drawn uniformly between 0 and
    min(`cap`, `first` * 2**(n-1)) seconds, so many clients cut off at once do not come
    back at once. No try starts later than `give_up_after` seconds after the first
    failure (None: never give up); then the last failure is the answer."""

    first: float = 0.1
    cap: float = 5.0
    give_up_after: float | None = 300.0

    def tries(self) -> Tries:
        return Tries(self)


DEFAULT_BACKOFF = Backoff()
"""0.1 s doubling up to 5 s, for at most 5 minutes."""


class Tries:
    """One run of a Backoff: started at the first failure."""

    def __init__(self, backoff: Backoff) -> None:
        self.backoff = backoff
        self.started = time.monotonic()
        self.failures = 0

    def pause(self) -> float | None:
        """The pause before the next try; None: give up (it would start too late)."""
        b = self.backoff
        ceiling = min(b.cap, b.first * 2.0 ** min(self.failures, 60))
        self.failures += 1
        pause = _jitter.uniform(0.0, ceiling)
        if b.give_up_after is not None and time.monotonic() - self.started + pause > b.give_up_after:
            return None
        return pause


def new_token() -> str:
    """A seat token (or idempotency key) of this client's own: 32 random letters and
    digits (190 bits)."""
    return "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(32))


def _retryable(exc: Exception) -> bool:
    """Whether a request that failed so may be sent again as it was (when it is safe to
    send twice): no answer, or the server's own failure (5xx)."""
    return isinstance(exc, ConnectionError) or (isinstance(exc, HttpError) and exc.status >= 500)


def new_entropy() -> str:
    """A player's own entropy for a seat claim: 32 random bytes as hex."""
    return secrets.token_hex(32)


def write_receipts(path: str | Path, receipts: list[dict[str, Any]]) -> None:
    """Append receipts (and acknowledged digests) to a file, one JSON object a line: what
    `daedalus replay LOG --verify --receipts FILE` reads."""
    with Path(path).open("a", encoding="utf-8") as out:
        for receipt in receipts:
            out.write(json.dumps(receipt, sort_keys=True) + "\n")


class DaedalusHttp:
    """The server's HTTP endpoints. Use as an async context manager (or call aclose()).

    `timeout`: seconds a request waits for its answer. `backoff`: how `create_match` and
    `claim_seat` are sent again after a connection error or a 5xx answer."""

    def __init__(
        self,
        base_url: str = DEFAULT_SERVER,
        *,
        timeout: float = 10.0,
        backoff: Backoff = DEFAULT_BACKOFF,
        on_retry: Callable[[Exception, float], None] | None = None,
    ) -> None:
        self.base_url = endpoints(base_url)[0]
        self.backoff = backoff
        self.on_retry = on_retry
        """Called with the failure and the pause before each retry (say, to tell a person
        the server cannot be reached yet)."""
        self._client = httpx.AsyncClient(base_url=self.base_url, timeout=timeout)
        # The server's signed receipts of the creations this client saw (create_match,
        # claim_seat): keep them with the connections' (docs/fairness.md).
        self.receipts: list[dict[str, Any]] = []

    async def __aenter__(self) -> DaedalusHttp:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        try:
            response = await self._client.request(method, path, json=body, headers=headers)
        except httpx.TransportError as exc:
            raise ConnectionError(f"{self.base_url}{path}: {exc!r}") from exc
        if response.status_code >= 400:
            code, message = f"http_{response.status_code}", response.text
            with contextlib.suppress(ValueError, AttributeError, TypeError):
                error = response.json()["error"]
                code, message = str(error.get("code", code)), str(error.get("message", ""))
            raise HttpError(response.status_code, code, message)
        return response

    async def _again(
        self, method: str, path: str, body: Any, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        """A request safe to send twice, sent again (after `backoff`) while it fails with
        no answer or a 5xx."""
        tries: Tries | None = None
        while True:
            try:
                return await self._request(method, path, body, headers)
            except (ConnectionError, HttpError) as exc:
                if not _retryable(exc):
                    raise
                tries = tries or self.backoff.tries()
                pause = tries.pause()
                if pause is None:
                    raise
                if self.on_retry is not None:
                    self.on_retry(exc, pause)
                await asyncio.sleep(pause)

    async def health(self) -> bool:
        response = await self._request("GET", "/health")
        return bool(response.json().get("ok"))

    async def games(self) -> list[dict[str, Any]]:
        response = await self._request("GET", "/games")
        games: list[dict[str, Any]] = response.json()["games"]
        return games

    async def create_match(
        self,
        game: str,
        variant: str | None = None,
        options: dict[str, Any] | None = None,
        *,
        key: str | None = None,
    ) -> dict[str, Any]:
        """Create a match: {"match", "game", "variant", "options", ...}. It is sent with
        an `Idempotency-Key` (`key`, 16 to 128 letters, digits, '-' or '_'; by default a
        random one of this call's own), so a request whose answer is lost (no
        connection, a timeout, a 5xx) is sent again as it was, per `backoff`, and the
        server answers with the match the first one created, never a second match."""
        body: dict[str, Any] = {"game": game, "options": options or {}}
        if variant is not None:
            body["variant"] = variant
        headers = {"Idempotency-Key": key if key is not None else new_token()}
        response = await self._again("POST", "/matches", body, headers)
        created: dict[str, Any] = response.json()
        self._keep_receipt(created)
        return created

    def _keep_receipt(self, answer: dict[str, Any]) -> None:
        receipt = answer.get("receipt")
        if isinstance(receipt, dict):
            receipt = {"type": "receipt", **receipt}
            if receipt not in self.receipts:
                self.receipts.append(receipt)

    async def claim_seat(
        self, match: str, name: str, seat: int | None = None, *, entropy: str | None = None
    ) -> dict[str, Any]:
        """Take a seat: {"match", "seat", "token", ...}. The token is chosen here, so a
        claim whose answer is lost (no connection, a timeout, a 5xx) is sent again with
        the same one, per `backoff`, and the server answers with the same seat. The claim
        carries the player's `entropy` (by default 64 random hex digits made here), which
        the match's draws are made from with the server's seed (docs/fairness.md)."""
        body: dict[str, Any] = {"name": name, "token": new_token()}
        if seat is not None:
            body["seat"] = seat
        body["entropy"] = entropy if entropy is not None else new_entropy()
        response = await self._again("POST", f"/matches/{match}/seats", body)
        claimed: dict[str, Any] = response.json()
        self._keep_receipt(claimed)
        return claimed

    async def status(self, match: str) -> dict[str, Any]:
        """The public (spectator) view of the match, with its "seq"."""
        response = await self._request("GET", f"/matches/{match}")
        view: dict[str, Any] = response.json()
        return view

    async def log(self, match: str, audit_key: str | None = None) -> list[Entry]:
        """The whole log of a finished match (HttpError 409 match_not_over before); with
        the match's audit key, in clear (docs/fairness.md)."""
        path = f"/matches/{match}/log" + (f"?audit={audit_key}" if audit_key else "")
        response = await self._request("GET", path)
        return decode_log(response.content)


# --- WebSocket -------------------------------------------------------------------------


class ConnectionFailed(Exception):
    """The server refused the hello (unknown_match, bad_token, ...) or could not be reached."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message




@dataclass(frozen=True)
class CommandResult:
    """The server's answer to one command: an ack, a rejection, or an error naming its id."""

    id: str
    accepted: bool
    seq: int | None = None
    warnings: tuple[str, ...] = ()
    duplicate: bool = False
    code: str | None = None
    reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    digest: str | None = None  # an ack's: the chained digest of the command's log entry

    @classmethod
    def from_message(cls, message: dict[str, Any]) -> CommandResult:
        kind = message.get("type")
        if kind == "ack":
            return cls(
                id=str(message["id"]),
                accepted=True,
                seq=message.get("seq"),
                warnings=tuple(message.get("warnings") or ()),
                duplicate=bool(message.get("duplicate", False)),
                raw=message,
                digest=message.get("digest"),
            )
        return cls(
            id=str(message.get("id")),
            accepted=False,
            seq=message.get("seq"),
            duplicate=bool(message.get("duplicate", False)),
            code=message.get("code"),
            reason=message.get("reason") if kind == "rejected" else message.get("message"),
            raw=message,
        )


_END: dict[str, Any] = {"type": "__end__"}


# Commands a connection sends at most, per second and in a burst: below the server's limit
# (about 20 frames a second, bursts of 40, beyond which it drops frames without an answer),
# leaving room for the hello, pings and commands sent again after a resume.
COMMAND_RATE = 16.0
COMMAND_BURST = 30.0


# Errors of a hello after which reconnecting cannot help.
REFUSED_CODES = frozenset({"unknown_match", "bad_token", "bad_message", "bad_since", "match_expired"})


class MatchConnection:
    """One viewer's WebSocket to one match: a player (with its seat token) or a spectator.

    `resume`: reconnect by itself when the connection is lost, trying again per `backoff`
    (by default for up to 5 minutes; `Backoff(give_up_after=None)`: for ever) unless the
    server refuses the hello for good (an unknown match, a bad token, a match that
    expired). The same `backoff` paces sending a command again after `busy` or
    `store_unavailable`.

    Commands are paced to COMMAND_RATE a second (after a burst of COMMAND_BURST), so a
    fast bot in a game of quick turns never runs into the server's rate limit.

    `route`: name the match in the websocket's URL (`/ws?match=<id>`), so that a server of
    several workers serves the connection from the worker that owns the match.

    `updates="events"`: the server's updates carry their events only, not the view
    (docs/protocol.md); `view` is then the welcome's until `request_view` asks for it."""

    def __init__(
        self,
        url: str,
        match: str,
        token: str | None = None,
        since: int = 0,
        *,
        resume: bool = True,
        backoff: Backoff = DEFAULT_BACKOFF,
        open_timeout: float = 10.0,
        ping_interval: float | None = 20.0,
        audit: str | None = None,
        route: bool = True,
        updates: str = "view",
    ) -> None:
        self.url = endpoints(url)[1]
        self.match = match
        self._route = route
        if updates not in ("view", "events"):
            raise ValueError(f'updates is "view" or "events", not {updates!r}')
        self.updates = updates
        self.token = token
        self.audit = audit
        """The match's audit key: the hello asks for the full view (the host of a board it
        supplied, during the match; anyone with the key, after it)."""
        self.last_seq = since
        self.view: dict[str, Any] | None = None
        self.welcome: dict[str, Any] | None = None
        self.hello_since = since  # the `since` of the latest hello
        self.resumes = 0
        self.resyncs = 0  # the times the stream restarted from the server's log
        # The server's signed receipts (`receipt` frames) and the digests its acks gave
        # ({"type": "ack", "match", "seat", "id", "digest"}), in order: write_receipts
        # saves them for `daedalus replay --verify --receipts` (docs/fairness.md).
        self.receipts: list[dict[str, Any]] = []
        self.closed = False
        self.close_reason: str | None = None
        self._resume = resume
        self.backoff = backoff
        self._reconnecting = False
        self._stopping = asyncio.Event()  # close() was called: stop waiting to reconnect
        self._open_timeout = open_timeout
        self._ping_interval = ping_interval
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._pending: dict[str, asyncio.Future[CommandResult]] = {}
        self._pending_frames: dict[str, str] = {}
        self._sent_again: set[str] = set()  # pending commands a resume sent again
        self._prefix = secrets.token_hex(4)
        self._ids = itertools.count(1)
        self._changed = asyncio.Condition()
        self._closing = False
        self._tokens = COMMAND_BURST
        self._stamp = float("-inf")
        self._views_received = 0  # `view` frames, the answers to request_view

    # -- lifecycle --

    async def __aenter__(self) -> MatchConnection:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def connect(self) -> dict[str, Any]:
        """Open the socket, say hello and wait for the welcome (ConnectionFailed if refused)."""
        welcome = await self._open()
        self._reader = asyncio.create_task(self._read_forever(), name=f"daedalus-{self.match}")
        return welcome

    async def close(self) -> None:
        self._closing = True
        self._stopping.set()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None and self._reader is not asyncio.current_task():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        await self._finish("closed by the client")

    async def drop(self) -> None:
        """Cut the socket without a close handshake, as a network failure would.

        The connection then resumes by itself (with since=<last seq seen>); this waits until
        it has (or has given up)."""
        ws = self._ws
        if ws is None:
            return
        resumes = self.resumes
        ws.transport.abort()
        async with self._changed:
            await self._changed.wait_for(lambda: self.resumes > resumes or self.closed)

    @property
    def role(self) -> str | None:
        return self.welcome.get("role") if self.welcome else None

    @property
    def seat(self) -> int | None:
        return self.welcome.get("seat") if self.welcome else None

    def backlog(self) -> int:
        """How many received messages are waiting to be read from the iterator."""
        return max(0, self._inbox.qsize() - (1 if self.closed else 0))  # not the end marker

    # -- receiving --

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[dict[str, Any]]:
        while True:
            message = await self.recv()
            if message is None:
                return
            yield message

    async def recv(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next server message, in order (None once the connection has ended)."""
        if self.closed and self._inbox.empty():
            return None
        message = await asyncio.wait_for(self._inbox.get(), timeout)
        if message is _END:
            self._inbox.put_nowait(_END)  # every later recv() ends too
            return None
        return message

    async def wait_view(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float | None = None
    ) -> dict[str, Any]:
        """The latest view once predicate(view) holds (whether or not the inbox is read)."""

        def ready() -> bool:
            return self.closed or (self.view is not None and predicate(self.view))

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(ready), timeout)
        if self.view is None or not predicate(self.view):
            raise ConnectionError(f"connection ended: {self.close_reason}")
        return self.view

    # -- sending --

    def next_id(self) -> str:
        return f"{self._prefix}-{next(self._ids)}"

    async def send_command(
        self, command: dict[str, Any], id: str | None = None, timeout: float | None = 30.0
    ) -> CommandResult:
        """Send a game command and wait for its ack, rejection or error.

        `timeout`: seconds to wait for the answer while connected (TimeoutError after);
        time spent reconnecting does not count, as the command is sent again on the
        resume. While the server answers `busy` or `store_unavailable` (its Redis is away
        for a moment) the command is sent again with the same id, which the server
        applies once, per `backoff`; once that gives up, the error is the result.

        The result's `duplicate` says the command was applied before this call: the
        server's answer to a command this call sent again by itself (after a resume or
        `store_unavailable`), whose first sending had landed, is no duplicate here."""
        if self.closed or self._ws is None:
            raise ConnectionError(f"connection ended: {self.close_reason}")
        cid = id if id is not None else self.next_id()
        frame = json.dumps({"type": "command", "id": cid, "command": command})
        self._pending_frames[cid] = frame
        tries: Tries | None = None
        try:
            while True:
                future: asyncio.Future[CommandResult] = asyncio.get_running_loop().create_future()
                self._pending[cid] = future
                await self._pace()
                ws = self._ws
                if ws is not None:  # if the socket is down, the resume sends it again
                    with contextlib.suppress(ConnectionClosed):
                        await ws.send(frame)
                result = await self._answer(future, timeout)
                if result.code not in RETRY_CODES:
                    if result.duplicate and (tries is not None or cid in self._sent_again):
                        return dataclasses.replace(result, duplicate=False)
                    return result
                tries = tries or self.backoff.tries()
                pause = tries.pause()
                if pause is None:
                    return result
                await asyncio.sleep(pause)
        finally:
            self._pending.pop(cid, None)
            self._pending_frames.pop(cid, None)
            self._sent_again.discard(cid)

    async def _answer(
        self, future: asyncio.Future[CommandResult], timeout: float | None
    ) -> CommandResult:
        """The answer to a command sent, waiting up to `timeout` seconds while connected:
        the wait starts again after a reconnection (which sent the command again), and
        goes on while reconnecting."""
        while True:
            resumes = self.resumes
            done, _ = await asyncio.wait({future}, timeout=timeout)
            if done:
                return future.result()
            if self.resumes == resumes and not self._reconnecting:
                raise TimeoutError(f"no answer to the command within {timeout:g} s")

    async def _pace(self) -> None:
        """Wait, if need be, to stay within COMMAND_RATE (a token bucket run into debt)."""
        now = asyncio.get_running_loop().time()
        self._tokens = min(COMMAND_BURST, self._tokens + (now - self._stamp) * COMMAND_RATE) - 1
        self._stamp = now
        if self._tokens < 0:
            await asyncio.sleep(-self._tokens / COMMAND_RATE)

    async def ping(self) -> None:
        if self._ws is not None:
            with contextlib.suppress(ConnectionClosed):
                await self._ws.send(json.dumps({"type": "ping"}))

    async def request_view(self, timeout: float | None = 30.0) -> dict[str, Any]:
        """Ask the server for this viewer's view now and wait for it (`view` is set to
        it, as an update's view would be; with `updates="events"` the way to a fresh one).
        TimeoutError if none comes within `timeout` seconds (the request is paced with the
        commands, so the server's frame limit does not drop it)."""
        if self.closed or self._ws is None:
            raise ConnectionError(f"connection ended: {self.close_reason}")
        asked = self._views_received
        await self._pace()
        with contextlib.suppress(ConnectionClosed):
            await self._ws.send(json.dumps({"type": "view"}))
        async with self._changed:
            await asyncio.wait_for(
                self._changed.wait_for(lambda: self.closed or self._views_received > asked), timeout
            )
        if self._views_received == asked or self.view is None:
            raise ConnectionError(f"connection ended: {self.close_reason}")
        return self.view

    # -- internals --

    async def _open(self, since: int | str | None = None) -> dict[str, Any]:
        try:
            ws = await connect(
                f"{self.url}?match={quote(self.match, safe='')}" if self._route else self.url,
                open_timeout=self._open_timeout,
                ping_interval=self._ping_interval,
                max_size=None,
            )
        except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
            raise ConnectionFailed("unreachable", f"{self.url}: {exc}") from exc
        hello: dict[str, Any] = {
            "type": "hello", "match": self.match, "since": self.last_seq if since is None else since
        }
        self.hello_since = self.last_seq
        if self.token is not None:
            hello["token"] = self.token
        if self.audit is not None:
            hello["full"] = True
            hello["audit"] = self.audit
        if self.updates != "view":
            hello["updates"] = self.updates
        try:
            await ws.send(json.dumps(hello))
            while True:
                raw = await asyncio.wait_for(ws.recv(), self._open_timeout)
                message: dict[str, Any] = json.loads(raw)
                if message.get("type") == "welcome":
                    break
                if message.get("type") == "error":
                    await ws.close()
                    raise ConnectionFailed(
                        str(message.get("code")), str(message.get("message", ""))
                    )
        except ConnectionClosed as exc:
            raise ConnectionFailed("closed", f"the server closed the connection: {exc}") from exc
        except TimeoutError as exc:
            await ws.close()
            raise ConnectionFailed("timeout", "no welcome from the server") from exc
        self._ws = ws
        if since == "now":  # the stream from now on: the welcome's seq is the last seen
            self.last_seq = self.hello_since = int(message.get("seq", 0))
        self._welcomed(message)
        await self._inbox.put(message)
        return message

    def _welcomed(self, message: dict[str, Any]) -> None:
        self.welcome = message
        receipt = message.get("receipt")  # the latest checkpoint's (docs/fairness.md)
        if isinstance(receipt, dict) and receipt not in self.receipts:
            self.receipts.append(receipt)
        if isinstance(message.get("view"), dict):  # the view now, before any catch-up
            self.view = message["view"]

    async def _read_forever(self) -> None:
        try:
            while True:
                ws = self._ws
                assert ws is not None
                try:
                    async for raw in ws:
                        try:
                            message = json.loads(raw)
                        except ValueError:
                            continue  # not JSON: nothing a client can do with it
                        if isinstance(message, dict):
                            await self._dispatch(message)
                    code = ws.close_code
                except ConnectionClosed as exc:
                    code = exc.rcvd.code if exc.rcvd is not None else 1006
                if self._closing or not self._resume:
                    await self._finish("closed")
                    return
                if code is None:
                    code = 1006
                if code not in RESUMABLE_CLOSE_CODES:
                    reason = ws.close_reason or ""
                    await self._finish(f"closed by the server ({code} {reason})".strip())
                    return
                self._reconnecting = True
                try:
                    if not await self._reopen():
                        return
                finally:
                    self._reconnecting = False
        finally:
            await self._finish("the reader stopped")

    async def _reopen(self) -> bool:
        """Reconnect and say hello from the last update seen, trying again per `backoff`;
        False once given up (or refused for good, or closed)."""
        tries: Tries | None = None
        while True:
            if self._closing:
                await self._finish("closed")
                return False
            try:
                try:
                    await self._open()
                except ConnectionFailed as exc:
                    if exc.code != "bad_since":
                        raise
                    # The stream is shorter than what this client saw: the server's log
                    # lost entries while it was away. Go on from the stream as it is.
                    await self._open(since="now")
                    self.resyncs += 1
            except ConnectionFailed as exc:
                if exc.code in REFUSED_CODES:
                    await self._finish(f"resume refused: {exc}")
                    return False
                tries = tries or self.backoff.tries()
                pause = tries.pause()
                if pause is None:
                    await self._finish(f"could not resume: {exc}")
                    return False
                with contextlib.suppress(TimeoutError):  # close() ends the pause
                    await asyncio.wait_for(self._stopping.wait(), pause)
                continue
            self.resumes += 1
            assert self._ws is not None
            for cid, frame in list(self._pending_frames.items()):
                self._sent_again.add(cid)
                with contextlib.suppress(ConnectionClosed):
                    await self._ws.send(frame)
            async with self._changed:
                self._changed.notify_all()
            return True

    async def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "update":
            seq = int(message.get("seq", 0))
            if seq <= self.last_seq:
                return  # already seen (a resume never repeats one, but be safe)
            self.last_seq = seq
            if isinstance(message.get("receipt"), dict):  # docs/fairness.md
                self.receipts.append(message["receipt"])
            if isinstance(message.get("view"), dict):
                self.view = message["view"]
            async with self._changed:
                self._changed.notify_all()
        elif kind in ("ack", "rejected") or (kind == "error" and message.get("id") is not None):
            if kind == "ack" and isinstance(message.get("digest"), str):
                self.receipts.append({
                    "type": "ack", "match": self.match, "seat": self.seat,
                    "id": message.get("id"), "digest": message["digest"],
                })
            future = self._pending.get(str(message.get("id")))
            if future is not None and not future.done():
                future.set_result(CommandResult.from_message(message))
        elif kind == "welcome":
            self._welcomed(message)
        elif kind == "receipt":
            self.receipts.append(message)
        elif kind == "view":  # an answer to request_view: the view after update `seq`
            if isinstance(message.get("view"), dict):
                self.view = message["view"]
            self._views_received += 1
            async with self._changed:
                self._changed.notify_all()
        elif kind == "resync":
            # The stream restarts from the server's log: its length and the view now. The
            # welcome is the stream's start from here on (later updates are live).
            self.last_seq = int(message.get("seq", 0))
            self.resyncs += 1
            if isinstance(message.get("view"), dict):
                self.view = message["view"]
                if self.welcome is not None:
                    self.welcome = {**self.welcome, "seq": self.last_seq, "view": self.view}
            async with self._changed:
                self._changed.notify_all()
        await self._inbox.put(message)

    async def _finish(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.close_reason = reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError(f"connection ended: {reason}"))
        self._inbox.put_nowait(_END)
        async with self._changed:
            self._changed.notify_all()
