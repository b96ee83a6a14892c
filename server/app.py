"""The HTTP and websocket surface (Starlette). See docs/protocol.md for every message."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import html
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from domain import engine
from domain.canonical import to_builtins
from domain.contract import OptionsError
from domain.kit.options import match_options_schema
from projections import seal
from projections.common import seals
from projections.contract import SPECTATOR, Viewer
from projections.registry import GAMES, Hosted, UnknownGame, hosted, resolve_game
from server import keys, logs
from server.archive import open_archive
from server.coalesce import RECEIVE, SEND_TEXT
from server.config import Settings
from server.hub import (
    Busy,
    Hub,
    MatchExpired,
    MatchRunner,
    SendQueue,
    Subscriber,
    UnknownMatch,
    token_digest,
)
from server.ids import new_match_id, new_seat_token
from server.limits import CLOSE_TOO_MANY_CONNECTIONS, Lease
from server.messages import (
    PROTOCOL,
    SEAT_CLAIM_FIELDS,
    Ack,
    Command,
    Error,
    Hello,
    Ping,
    Pong,
    Rejected,
    encode,
    protocol_schema,
)
from server.messages import client_decoder as _client_decoder
from server.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from server.route import Handoff
from server.storage import Store
from server.store import UNAVAILABLE, EventStore

log = logs.get("daedalus.server")
_encode = msgspec.json.Encoder().encode
_encode_sorted = msgspec.json.Encoder(order="sorted").encode

MATCH_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# A seat token a client chose (to claim a seat safely again after a lost answer).
CLIENT_TOKEN = re.compile(r"^[A-Za-z0-9_-]{32,128}$")
# An Idempotency-Key a client sends with POST /matches (to create a match safely again
# after a lost answer).
IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9_-]{16,128}$")
CLOSE_TOO_SLOW = 4008
SENDER_SLICE = 64 * 1024
"""The bytes a connection's sender sends before it lets the loop turn (see sender)."""


# --- messages from clients ---------------------------------------------------------------


# Hello, Command and Ping, and the frames the server sends, are in server/messages.py.
PONG = encode(Pong())


class _Id(msgspec.Struct):
    id: Any = None


_id_decoder = msgspec.json.Decoder(_Id)
_any_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder()

# The deepest nesting of arrays and objects read from a client. msgspec recurses once per
# level and stops only at Python's recursion limit, which counts the frames of the caller
# too: a frame of 976 levels passed at the top of a script and failed inside the
# websocket handler with a RecursionError. No message needs more than a few levels.
MAX_DEPTH = 64
# A string (its closing quote optional: an unterminated one runs to the end, and no
# backtracking makes the scan quadratic), or a bracket.
_NESTING_TEXT = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')
_NESTING_BYTES = re.compile(rb'"(?:[^"\\]|\\.)*"?|[\[\]{}]')


def too_deep(data: str | bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON text `data` nests arrays and objects deeper than `limit` (brackets
    inside strings do not count). Cheap for the usual frame: one with fewer opening
    brackets than `limit` is not scanned."""
    if isinstance(data, str):
        if data.count("[") + data.count("{") <= limit:
            return False
        tokens: list[str] | list[bytes] = _NESTING_TEXT.findall(data)
        opening: tuple[str, str] | tuple[bytes, bytes] = ("[", "{")
    else:
        if data.count(b"[") + data.count(b"{") <= limit:
            return False
        tokens, opening = _NESTING_BYTES.findall(data), (b"[", b"{")
    depth = 0
    for token in tokens:
        if token in opening:
            depth += 1
            if depth > limit:
                return True
        elif token in ("]", "}", b"]", b"}"):
            depth -= 1
    return False


def decode_json(decoder: msgspec.json.Decoder[Any], data: str | bytes) -> Any:
    """`decoder.decode(data)` for data a client sent: whatever cannot be read as JSON
    (nested too deep, invalid UTF-8, malformed) raises msgspec.DecodeError, a value of
    the wrong shape msgspec.ValidationError (a subclass of it)."""
    if too_deep(data):
        raise msgspec.DecodeError(f"JSON nested deeper than {MAX_DEPTH} levels")
    try:
        return decoder.decode(data)
    except RecursionError:
        raise msgspec.DecodeError("JSON nested too deep") from None
    except UnicodeDecodeError as exc:
        raise msgspec.DecodeError(f"not UTF-8: {exc.reason} at byte {exc.start}") from None


def command_id(data: str | bytes) -> str | None:
    """The `id` of a frame that may be a command, without validating the rest."""
    try:
        cid = decode_json(_id_decoder, data).id
    except msgspec.DecodeError:
        return None
    return cid if isinstance(cid, str) else None


def error_frame(code: str, message: str, cid: str | None = None) -> bytes:
    return encode(Error(code=code, message=message, id=cid))


def client_error(code: str, **context: Any) -> None:
    """Malformed input is the client's error: one info line with its code, no traceback."""
    log.info("client_error", code=code, **context)


def http_error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


# --- HTTP --------------------------------------------------------------------------------


def _hub(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


MAX_BODY = 64 * 1024


async def _read_body(request: Request) -> bytes | JSONResponse:
    """The request's body, at most MAX_BODY bytes and within the header timeout; or the
    error response, sent as soon as the body is known to be too long or late (what is
    over is not read: the connection closes after the answer)."""
    declared = request.headers.get("content-length", "")
    size = int(declared) if declared.isdigit() else 0
    parts: list[bytes] = []
    try:
        if size <= MAX_BODY:
            size = 0
            async with asyncio.timeout(_hub(request).settings.header_timeout):
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > MAX_BODY:
                        break
                    parts.append(chunk)
    except TimeoutError:
        client_error("body_timeout", path=request.url.path, size=size)
        return _closing(http_error(408, "request_timeout", "the request body did not come in time"))
    if size > MAX_BODY:
        client_error("too_large", path=request.url.path, size=size)
        return _closing(http_error(413, "too_large", "the request body is over 64 KiB"))
    return b"".join(parts)


def _closing(response: JSONResponse) -> JSONResponse:
    """`response`, after which the connection closes (the request's body is not all read)."""
    response.headers["connection"] = "close"
    return response


async def _json_body(request: Request, fields: tuple[str, ...]) -> dict[str, Any] | JSONResponse:
    """The request's JSON object, whose keys must be among `fields` (as in every message,
    an unknown field is refused, not ignored); or the error response."""
    raw = await _read_body(request)
    if isinstance(raw, JSONResponse):
        return raw
    try:
        body = decode_json(_any_decoder, raw) if raw else {}
    except msgspec.DecodeError as exc:
        client_error("bad_json", path=request.url.path, error=str(exc))
        return http_error(400, "bad_json", f"the body is not JSON: {exc}")
    if not isinstance(body, dict):
        client_error("bad_request", path=request.url.path)
        return http_error(400, "bad_request", "the body must be a JSON object")
    unknown = sorted(str(k) for k in body if k not in fields)
    if unknown:
        client_error("bad_request", path=request.url.path, unknown=unknown)
        return http_error(
            400, "bad_request",
            f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            f"(the fields: {', '.join(fields)})",
        )
    return body


STORE_UNAVAILABLE_COMMAND = (
    "the match store did not answer, so whether this command was recorded is unknown: "
    "send it again with the same id (it is applied once)"
)
STORE_UNAVAILABLE_HELLO = "the match store did not answer: say hello again in a moment"


async def store_unavailable(request: Request, exc: Exception) -> Response:
    """Any HTTP request that needed Redis while it could not be reached: 503."""
    log.warning("store_unavailable", path=request.url.path, error=repr(exc))
    _hub(request).metrics.redis_error("http")
    return http_error(
        503, "store_unavailable", "the match store did not answer: try again in a moment"
    )


# The codes of the HTTP errors Starlette raises itself (a path or method it does not serve).
HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}


async def http_exception(request: Request, exc: Exception) -> Response:
    """Every HTTP error is JSON `{"error": {"code", "message"}}`, 404 and 405 included."""
    assert isinstance(exc, HTTPException)
    code = HTTP_CODES.get(exc.status_code, "http_error")
    client_error(code, path=request.url.path, method=request.method)
    response = http_error(exc.status_code, code, f"{request.method} {request.url.path}: {exc.detail}")
    response.headers.update(exc.headers or {})
    return response


async def internal_error(request: Request, exc: Exception) -> Response:
    """A fault of the server's own (logged with its traceback by Starlette): JSON too."""
    return http_error(500, "internal_error", "the server failed on this request")


def home_body() -> str:
    """What the page at `/` says without scripts: the server, the games it hosts and where
    its protocol is described."""
    games = "".join(
        f"<li>{html.escape(h.rules.title)} (<code>{html.escape(name)}</code>): "
        + ", ".join(html.escape(v.name) for v in h.rules.variants)
        + "</li>"
        for name, h in GAMES.items()
    )
    return (
        "<p>Daedalus, a game server for hidden-information games. Players and spectators connect "
        "over a websocket at <code>/ws</code>.</p>"
        f"<h2>Games (and their variants)</h2><ul>{games}</ul>"
        "<h2>Documentation</h2><ul>"
        "<li><a href=\"/games\"><code>GET /games</code></a>: the games, their variants and options</li>"
        "<li><code>docs/protocol.md</code> in the Daedalus repository: every HTTP request and "
        "websocket message; <code>docs/rules/</code>: each game's rules</li>"
        "<li><code>daedalus play --server URL</code> plays in a terminal</li></ul>"
    )


# The browser client's files, shipped in the package (pyproject.toml's package-data).
WEB = Path(str(resources.files("clients").joinpath("web")))


def wants_json(request: Request) -> bool:
    """Whether the request's Accept header names JSON and not HTML (a program, not a
    browser)."""
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


async def home(request: Request) -> Response:
    """The browser client (clients/web/index.html, with the games listed in it for a page
    without scripts), or for a client that asks for JSON an index of the server."""
    if wants_json(request):
        return JSONResponse({
            "name": "daedalus",
            "protocol": PROTOCOL,
            "games": [
                {"name": name, "title": h.rules.title, "variants": [v.name for v in h.rules.variants]}
                for name, h in GAMES.items()
            ],
            "links": {"games": "/games", "schema": "/schema", "lobby": "/lobby",
                      "websocket": "/ws", "web": "/web/"},
        })
    page = (WEB / "index.html").read_text(encoding="utf-8")
    return HTMLResponse(page.replace("<!--SERVER-INDEX-->", home_body()))


async def health(request: Request) -> JSONResponse:
    """Whether Redis answers; `resuming`: unfinished matches this process has still to
    follow again after its start."""
    hub = _hub(request)
    wait = hub.settings.health_timeout
    try:
        ok = await asyncio.wait_for(hub.store.ping(), wait)
    except TimeoutError:
        error = f"the store did not answer a ping within {wait:g} s"
        return JSONResponse({"ok": False, "error": error}, status_code=503)
    except Exception as exc:
        return JSONResponse({"ok": False, "error": repr(exc)}, status_code=503)
    return JSONResponse({"ok": ok, "resuming": hub.to_resume})


async def metrics(request: Request) -> Response:
    """This process's metrics in Prometheus's text format (server/metrics.py).
    `?worker=<k>`: worker k's (`daedalus serve --workers N`: the request was handed to
    it, server/route.py); 404 for a worker there is not, 503 when another worker's
    request is answered here (that worker did not take it: stopped, or its queue full)."""
    hub = _hub(request)
    asked = request.query_params.get("worker")
    if asked is not None:
        index, workers = hub.metrics.worker
        if not asked.isdigit() or int(asked) >= workers:
            return http_error(404, "unknown_worker", f"this server runs workers 0 to {workers - 1}")
        if int(asked) != index:
            return http_error(503, "worker_unavailable", f"worker {asked} did not take the request; "
                              f"this is worker {index}")
    return Response(hub.metrics.text(), media_type=METRICS_CONTENT_TYPE)


async def list_games(request: Request) -> JSONResponse:
    games = []
    for name, h in GAMES.items():
        rules = h.rules
        variants = [
            {**to_builtins(v), "options": rules.options_schema(v.name)} for v in rules.variants
        ]
        default_opts = rules.configure(rules.default_variant, {})
        games.append(
            {
                "name": name,
                "title": rules.title,
                "seats": rules.seat_count(default_opts),
                "default_variant": rules.default_variant,
                "rules_version": rules.rules_version,
                "variants": variants,
            }
        )
    # The options of every match, whatever its game (a spectator delay: server/delay.py).
    return JSONResponse({"games": games, "match_options": match_options_schema()})


async def schema(request: Request) -> JSONResponse:
    """The JSON Schema of every websocket message, both ways, with each hosted game's
    commands (server/messages.py)."""
    commands = {name: h.rules.command_type for name, h in GAMES.items()}
    return JSONResponse(protocol_schema(commands))


async def create_match(request: Request) -> JSONResponse:
    refused = _hub(request).limits.may_create(
        request.client.host if request.client else None, request.headers.get("authorization")
    )
    if refused is not None:  # server/limits.py: an address's limit, or the API key
        log.info("create_refused", code=refused.code, address=request.client and request.client.host)
        response = http_error(refused.status, refused.code, refused.message)
        response.headers.update(refused.headers)
        return response
    key = request.headers.get("idempotency-key")
    if key is not None and not IDEMPOTENCY_KEY.match(key):
        client_error("bad_idempotency_key", path=request.url.path)
        return http_error(
            400, "bad_idempotency_key",
            "an Idempotency-Key is 16 to 128 letters, digits, '-' or '_' (random: a UUID will do)",
        )
    body = await _json_body(request, ("game", "variant", "options"))
    if isinstance(body, JSONResponse):
        return body
    game = body.get("game")
    variant = body.get("variant")
    options = body.get("options")
    if options is None:
        options = {}
    if not isinstance(game, str):
        return http_error(400, "bad_request", "`game` (a game name from GET /games) is required")
    if variant is not None and not isinstance(variant, str):
        return http_error(400, "bad_request", "`variant` must be a string")
    game, variant = resolve_game(game, variant)  # a variant's name stands for its game
    if not isinstance(options, dict):
        return http_error(400, "bad_request", "`options` must be an object")
    try:
        if key is None:
            ms = await _hub(request).create_match(game, variant, options)
        else:
            created = await _create_once(_hub(request), key, body, game, variant, options)
            if isinstance(created, JSONResponse):
                return created
            ms = created
    except UnknownGame as exc:
        return http_error(400, "unknown_game", str(exc.args[0]))
    except OptionsError as exc:
        return http_error(400, "bad_options", str(exc))
    return JSONResponse(
        {
            "match": ms.match_id,
            "game": ms.game,
            "variant": ms.variant,
            "options": to_builtins(ms.options),
            "rules_version": ms.rules_version,
            "log_version": ms.log_version,
            "receipt": await _creation_receipt(request, ms.match_id),
            "commitment": ms.commitment,
            "seats": ms.seats,
            "audit_key": ms.audit_key.hex() if ms.audit_key is not None else None,
        },
        status_code=201,
    )


async def _creation_receipt(request: Request, match_id: str) -> dict[str, Any] | None:
    """The server's signed receipt of a match's creation (server/keys.py)."""
    runner = await _hub(request).runner(match_id)
    return runner.core.creation_receipt()


async def public_key(request: Request) -> JSONResponse:
    """The public half of the key that signs receipts (server/keys.py)."""
    key: keys.ServerKey = request.app.state.key
    return JSONResponse(key.public_document())


async def _create_once(
    hub: Hub,
    key: str,
    body: dict[str, Any],
    game: str,
    variant: str | None,
    options: dict[str, Any],
) -> engine.MatchState | JSONResponse:
    """POST /matches under an Idempotency-Key: the first request under the key creates
    the match; the same request sent again (its answer was lost) gets that match, created
    or not yet; another request under the key is refused (409). The key is remembered
    for `idempotency_key_ttl`; a creation refused (bad options) forgets it."""
    # the body as sent, whatever the order of its keys
    request = hashlib.sha256(_encode_sorted(body)).hexdigest()
    record = {"match": new_match_id(), "request": request}
    held = await hub.store.claim_creation_key(
        token_digest(key), record, hub.settings.idempotency_key_ttl
    )
    if held is not None and held.get("request") != record["request"]:
        client_error("idempotency_key_reused")
        return http_error(
            409, "idempotency_key_reused",
            "this Idempotency-Key came with another request before: a key is for one "
            "request, sent again only as it was",
        )
    if held is not None:
        try:
            return (await hub.runner(held["match"])).current
        except MatchExpired as exc:
            return http_error(410, "match_expired", str(exc))
        except UnknownMatch:  # the first request did not get as far as creating it
            return await hub.create_match(game, variant, options, match_id=held["match"])
    try:
        return await hub.create_match(game, variant, options, match_id=record["match"])
    except (UnknownGame, OptionsError):
        await hub.store.release_creation_key(token_digest(key), record)
        raise


async def _runner_or_404(request: Request) -> MatchRunner | JSONResponse:
    match_id = request.path_params["match_id"]
    if not MATCH_ID.match(match_id):
        return http_error(404, "unknown_match", "no such match")
    try:
        return await _hub(request).runner(match_id)
    except MatchExpired as exc:
        return http_error(410, "match_expired", str(exc))
    except UnknownMatch:
        return http_error(404, "unknown_match", f"no match {match_id!r}")


async def claim_seat(request: Request) -> JSONResponse:
    runner = await _runner_or_404(request)
    if isinstance(runner, JSONResponse):
        return runner
    body = await _json_body(request, SEAT_CLAIM_FIELDS)
    if isinstance(body, JSONResponse):
        return body
    token = body.get("token")
    if token is None:
        token = new_seat_token()
    elif not isinstance(token, str) or not CLIENT_TOKEN.match(token):
        return http_error(
            400, "bad_token", "a token of your own is 32 to 128 letters, digits, '-' or '_'"
        )
    else:
        # A claim sent again with the same token (its answer was lost) gets the same
        # seat, not a second one, and not a refusal because the match is now full.
        held = await runner.seat_of(token)
        if held is not None:
            return _seated(runner, held, token, duplicate=True)
    digest = token_digest(token)
    join = {"seat": body.get("seat"), "name": body.get("name")}
    if body.get("entropy") is not None:  # the player's own entropy (docs/fairness.md)
        join["entropy"] = body["entropy"]
    try:
        done = await runner.submit(
            kind="join", seat=None, key=f"join:{digest}", body=join, token_hash=digest
        )
    except Busy as exc:
        return http_error(503, "busy", str(exc))
    except MatchExpired as exc:  # another process expired it as this claim came
        return http_error(410, "match_expired", str(exc))
    assert done is not None
    if done.outcome.rejection is not None:
        held = await runner.seat_of(token)  # the same claim, sent twice at once, landed
        if held is not None:
            return _seated(runner, held, token, duplicate=True)
        rej = done.outcome.rejection
        status = 409 if rej.code in ("seat_taken", "match_started") else 400
        return http_error(status, rej.code, rej.reason)
    seat = next(e.seat for e in done.outcome.events if isinstance(e, engine.SeatTaken))
    log.info("seat_claimed", match=runner.match_id, seat=seat)
    return _seated(runner, seat, token, duplicate=done.duplicate)


def _seated(runner: MatchRunner, seat: int, token: str, *, duplicate: bool) -> JSONResponse:
    return JSONResponse(
        {
            "match": runner.match_id, "seat": seat, "token": token, "duplicate": duplicate,
            "receipt": runner.core.creation_receipt(),
        },
        status_code=201,
    )


async def match_status(request: Request) -> JSONResponse:
    runner = await _runner_or_404(request)
    if isinstance(runner, JSONResponse):
        return runner
    view, seq = runner.spectator_view()  # as a spectator delay releases it (server/delay.py)
    status = JSONResponse({**view, "seq": seq})
    _release(request, runner)
    return status


LOBBY_STATES = ("waiting", "playing")
LOBBY_LIMIT = 100  # the most matches one page lists
LOBBY_SCAN = 200  # the most unfinished matches one page looks at


async def lobby(request: Request) -> JSONResponse:
    """`GET /lobby?state=waiting|playing&after=ID&limit=N`: unfinished matches with a seat
    free (`waiting`) or started (`playing`), in the order of their ids, a page at a time:
    `next` is the `after` of the next page (null on the last). A page looks at no more
    than LOBBY_SCAN matches, so it may hold fewer than `limit` and still have a next."""
    params = request.query_params
    unknown = sorted(k for k in params if k not in ("state", "after", "limit"))
    if unknown:
        return http_error(400, "bad_request", f"unknown parameter {unknown[0]!r} (the parameters: state, after, limit)")
    state = params.get("state", "waiting")
    if state not in LOBBY_STATES:
        return http_error(400, "bad_request", "`state` is waiting or playing")
    after = params.get("after", "")
    try:
        limit = int(params.get("limit", "20"))
    except ValueError:
        limit = 0
    if not 1 <= limit <= LOBBY_LIMIT:
        return http_error(400, "bad_request", f"`limit` is a whole number from 1 to {LOBBY_LIMIT}")
    hub = _hub(request)
    ids = [m for m in await hub.store.active() if m > after]
    found: list[dict[str, Any]] = []
    scanned = 0
    for match_id in ids:
        if len(found) == limit or scanned == LOBBY_SCAN:
            break
        scanned += 1
        try:
            runner = await hub.runner(match_id)
        except (UnknownMatch, MatchExpired):
            continue
        view = runner.view(SPECTATOR)
        _release(request, runner)
        if view["ended"] or view["started"] != (state == "playing"):
            continue
        # A delayed match's deadline as its spectators see it (a round that closed early
        # moves it): server/delay.py. Its seats and whether it started are as they are.
        delay = runner.delayed.delay.document() if runner.delayed is not None else None
        found.append({
            "match": match_id, "game": view["game"], "variant": view["variant"],
            "title": runner.hosted.rules.title, "seats": view["seats"],
            "free": [s["seat"] for s in view["seats"] if s["name"] is None],
            "started": view["started"],
            "deadline": runner.spectator_view()[0]["deadline"] if delay else view["deadline"],
            "spectator_delay": delay,
        })
    more = scanned < len(ids)
    last = ids[scanned - 1] if scanned else None
    return JSONResponse({"state": state, "matches": found, "next": last if more else None})


REPLAY_VIEWERS = "a seat's number, spectator or full"


def replay_viewer(text: str | None, seats: int) -> Viewer | None:
    """The viewer `as` names: a seat (0, 1, ...), `spectator` (the default) or `full`
    (everything, as a `full` hello)."""
    if text is None or text == "spectator":
        return SPECTATOR
    if text == "full":
        return Viewer(seat=None, full=True)
    if text.isdigit() and int(text) < seats:
        return Viewer(seat=int(text))
    return None


def replay_updates(runner_entries: list[Any], viewer: Viewer) -> dict[str, Any]:
    """A finished match's log as `viewer` received it, each update with the view it had
    then (not the view now, as a catch-up's), and the log checked again (domain/engine.py
    verify: chain, outcomes, commitment, setup)."""
    from projections.common import match_view, project_events
    from projections.registry import hosted, rules_by_name

    entries = list(runner_entries)
    first = entries[0]
    host = hosted(str(first.body["game"]))
    ms = engine.open_match(host.rules, first)
    updates: list[dict[str, Any]] = []
    for entry in entries[1:]:
        before = ms
        ms, outcome = engine.apply(ms, entry)
        events = project_events(host.views, ms, outcome, viewer)
        if not events:
            continue
        updates.append({
            "n": len(updates) + 1, "seq": entry.seq, "ts": entry.ts,
            "round": host.rules.round_of(before.game_state) if before.started else None,
            "events": events, "view": match_view(host.views, ms, viewer),
        })
    checked = engine.verify(rules_by_name(), entries)
    return {
        "match": ms.match_id, "game": ms.game, "variant": ms.variant,
        "as": "full" if viewer.full else "spectator" if viewer.seat is None else viewer.seat,
        "verified": {
            "ok": checked.ok, "entries": checked.entries, "commitment": checked.commitment,
            "setup": checked.setup, "failure": checked.failure,
            "failed_seq": checked.failed_seq, "failed_round": checked.failed_round,
        },
        "updates": updates,
    }


async def _sealed_replay(request: Request, runner: MatchRunner, viewer: Viewer) -> Viewer | JSONResponse:
    """The viewer a replay of a match that seals is made for (docs/fairness.md): with
    the match's audit key (`audit`), the one asked for; a seat's own view, which shows
    that seat's sealed values, also with that seat's token (`token`); without either,
    `full` is what the public sees (a spectator's view) and a seat's view is refused
    (403 bad_audit_key)."""
    key = runner.current.audit_key
    if key is None or not seals(runner.hosted.views, runner.current):
        return viewer
    given = request.query_params.get("audit")
    if given is not None:
        if not audit_key_is(given, key):
            return http_error(403, "bad_audit_key", "that is not this match's audit key")
        return viewer
    if viewer.seat is not None:
        token = request.query_params.get("token")
        if token is not None and await runner.seat_of(token) == viewer.seat:
            return viewer
        return http_error(
            403, "bad_audit_key",
            "a seat's own view of this match shows what its rules keep sealed: it needs that "
            "seat's token (token=TOKEN) or the match's audit key (audit=KEY)",
        )
    return Viewer(seat=None, full=False) if viewer.full else viewer


def _host_view_refused(runner: MatchRunner, msg: Hello, seat: int | None) -> bytes | None:
    """The error for a `full` hello before the match's end, or None: the host who gave
    the match's setup (a Labyrinth plan, a Memory Maze maze) may watch it with the full
    view, proving it with the match's audit key, which only the match's creator was given.
    Never with a seat's token (the host does not play), nor in a match whose setup was
    drawn from its seed, which nobody sees before the end."""
    ms = runner.current
    given = ms.setup is not None and not runner.hosted.rules.seeded_setup(ms.setup)
    if not given or ms.audit_key is None:
        return error_frame("match_not_over", "the full view opens when the match is over (this "
                           "match's setup was drawn from its seed: nobody sees it before)")
    if seat is not None:
        return error_frame("match_not_over", "a player sees the full view when the match is over; "
                           "the host who gave its setup watches it without a seat's token")
    if msg.audit is None:
        return error_frame("match_not_over", "the full view opens when the match is over, or before for "
                           "the host who gave its setup, with the match's audit key (`audit`)")
    if not audit_key_is(msg.audit, ms.audit_key):
        return error_frame("bad_audit_key", "that is not this match's audit key")
    return None


async def match_replay(request: Request) -> Response:
    """`GET /matches/{id}/replay?as=VIEWER`: once the match is over, every update
    VIEWER received, each with the view it had then, and whether the log verifies."""
    runner = await _runner_or_404(request)
    if isinstance(runner, JSONResponse):
        return runner
    if not runner.current.ended:
        return http_error(409, "match_not_over", "the replay opens when the match is over")
    unknown = sorted(k for k in request.query_params if k not in ("as", "audit", "token"))
    if unknown:
        return http_error(
            400, "bad_request", f"unknown parameter {unknown[0]!r} (the parameters: as, token, audit)"
        )
    viewer = replay_viewer(request.query_params.get("as"), len(runner.current.names))
    if viewer is None:
        return http_error(400, "bad_request", f"`as` is {REPLAY_VIEWERS}")
    refused = await _sealed_replay(request, runner, viewer)
    if isinstance(refused, JSONResponse):
        return refused
    viewer = refused
    _release(request, runner)
    replays = _hub(request).replays
    current = runner.current
    body = replays.get((runner.match_id, current.seq, current.head, viewer))
    if body is None:
        entries = [entry for _sid, entry in await runner.store.read(runner.match_id)]
        if not entries:  # archived since this process loaded it (as it is unloaded: 404)
            return http_error(404, "unknown_match", "no such match")
        made = await asyncio.to_thread(lambda: JSONResponse(replay_updates(entries, viewer)))
        body = bytes(made.body)
        replays.put((runner.match_id, len(entries), entries[-1].digest, viewer), body)
    return _body_response(body, "application/json")


BODY_SLICE = 64 * 1024


def _body_response(body: bytes, media_type: str) -> Response:
    """A response of `body`; a large one (a replay, a log: megabytes for a long match)
    is written a slice at a time as the client reads it. Whole, the HTTP layer copies it
    to write it at once, and what the socket does not take waits in the server's memory
    for as long as the client keeps the connection open without reading: a copy of the
    whole body for each such request."""
    if len(body) <= BODY_SLICE:
        return Response(body, media_type=media_type)
    whole = memoryview(body)

    async def slices() -> AsyncIterator[memoryview]:
        for start in range(0, len(whole), BODY_SLICE):
            yield whole[start : start + BODY_SLICE]

    return StreamingResponse(slices(), media_type=media_type, headers={"content-length": str(len(body))})


def _release(request: Request, runner: MatchRunner) -> None:
    """A finished match that nobody follows need not stay in this process's memory
    for long (Hub.linger)."""
    if runner.current.ended and not runner.subscribers:
        _hub(request).linger(runner)


async def match_log(request: Request) -> Response:
    runner = await _runner_or_404(request)
    if isinstance(runner, JSONResponse):
        if runner.status_code == 404:  # archived (server/archive.py)?
            return await _archived_log(request) or runner
        return runner
    if not runner.current.ended:
        return http_error(409, "match_not_over", "the log is published when the match is over")
    _release(request, runner)
    current = runner.current
    audited = _audited(request, current.audit_key)
    if isinstance(audited, JSONResponse):
        return audited
    # The body, once made, is kept as a replay is (server/replays.py): the public form
    # of a sealed log folds the whole log again (130 ms of the server's time a request,
    # for anyone who asked, for a 1,000-round Five-Card Trick).
    replays = _hub(request).replays
    key = ("log", runner.match_id, current.seq, current.head, audited)
    body = replays.get(key)
    if body is None:
        entries = await runner.store.read(runner.match_id)
        if not entries:  # archived since this process loaded it
            return await _archived_log(request) or http_error(404, "unknown_match", "no such match")
        logged: list[Any] = [entry for _sid, entry in entries]
        body = await _log_body(runner.hosted, logged, current.audit_key, audited)
        if len(logged) == current.seq and logged[-1].digest == current.head:
            replays.put(key, body)
    return _body_response(body, "application/x-ndjson")


async def _archived_log(request: Request) -> Response | None:
    """The log of a match archived in Settings.archive (None: it is not there), served
    as GET /matches/{id}/log served it from the store."""
    folder = _hub(request).settings.archive
    if folder is None:
        return None
    logged = await asyncio.to_thread(open_archive(folder).read, request.path_params["match_id"])
    if not logged:
        return None
    host = hosted(str(logged[0].body["game"]))
    key = engine.open_match(host.rules, logged[0]).audit_key
    audited = _audited(request, key)
    if isinstance(audited, JSONResponse):
        return audited
    body = await _log_body(host, list(logged), key, audited)
    return _body_response(body, "application/x-ndjson")


def audit_key_is(given: str, key: bytes) -> bool:
    """Whether `given` is the audit key `key` in hex (any case, surrounding spaces
    ignored), compared in constant time."""
    return hmac.compare_digest(given.strip().lower().encode(), key.hex().encode())


def _audited(request: Request, key: bytes | None) -> bool | JSONResponse:
    """Whether the request gives the match's audit key (`?audit=` or an Audit-Key
    header), which opens the whole log of a match that seals (log version 3 or 4:
    docs/fairness.md); a 403 for a key that is not the match's."""
    if key is None:
        return False
    given = request.query_params.get("audit") or request.headers.get("audit-key")
    if given is None:
        return False
    if not audit_key_is(given, key):
        return http_error(403, "bad_audit_key", "that is not this match's audit key")
    return True


async def _log_body(host: Hosted, logged: list[Any], key: bytes | None, audited: bool) -> bytes:
    """The log as NDJSON: whole with the audit key, else as the public sees it."""
    if key is not None and not audited:
        logged = await asyncio.to_thread(seal.public_log, host.rules, host.views, logged)
    return b"".join(_encode(entry) + b"\n" for entry in logged)


# --- websocket ---------------------------------------------------------------------------


def origin_allowed(origin: str | None, settings: Settings) -> bool:
    if origin is None:
        return True
    if "*" in settings.allowed_origins or origin in settings.allowed_origins:
        return True
    if settings.strict_origins:
        return False
    return re.fullmatch(r"https?://(localhost|127\.0\.0\.1|\[::1\])(:\d+)?", origin) is not None


def same_origin(origin: str | None, host: str | None) -> bool:
    """Whether a page's origin is this server's own address (the browser client it serves,
    reached by the name in the request's Host header)."""
    if origin is None or host is None:
        return False
    return re.fullmatch(r"https?://" + re.escape(host.lower()), origin.lower()) is not None


class Connection:
    def __init__(self, ws: WebSocket, hub: Hub, settings: Settings) -> None:
        self.ws = ws
        self.hub = hub
        self.settings = settings
        # Frames go straight to the socket where the server's websocket protocol offers
        # it (server/coalesce.py, SEND_TEXT), else as `websocket.send` messages.
        extensions = ws.scope.get("extensions") or {}
        self.direct: Callable[[bytes], bool] | None = extensions.get(SEND_TEXT)
        # And messages straight from it (RECEIVE), else through Starlette.
        self.receive: Callable[[], Awaitable[str | bytes | None]] = extensions.get(RECEIVE) or self._receive
        self.queue = SendQueue(settings.send_queue, self.direct)
        # Frames before the hello are charged to this connection's own bucket; after it,
        # to the bucket of its seat or address (server/limits.py), held by `lease`.
        self.bucket = hub.limits.connection_bucket()
        self.lease: Lease | None = None
        self.runner: MatchRunner | None = None
        self.sub: Subscriber | None = None
        self.seat: int | None = None

    def reply(self, frame: bytes) -> None:
        self.queue.push(frame, answer=True)

    async def sender(self) -> None:
        direct, queue = self.direct, self.queue
        unflushed = 0
        while True:
            frame = await queue.get()
            if frame is None:
                break
            if direct is None or not direct(frame):
                queue.sending = True
                try:
                    await self.ws.send_text(frame.decode())
                finally:
                    queue.sending = False
            # Neither way need wait for anything while the socket takes more: a turn of
            # the loop every SENDER_SLICE bytes lets the transport write what it holds
            # and say when its buffer is full (then the next send waits, and so does the
            # rest of a catch-up, unmade), and lets other connections be served.
            unflushed += len(frame)
            if unflushed >= SENDER_SLICE:
                unflushed = 0
                await asyncio.sleep(0)
        if self.queue.overflowed:
            self.hub.metrics.send_queue_overflows.inc()
            log.info(
                "slow_reader_closed", match=self.runner and self.runner.match_id, seat=self.seat,
                game=self.runner and self.runner.current.game,
            )
            with contextlib.suppress(Exception):
                await self.ws.close(code=CLOSE_TOO_SLOW, reason="too slow: resume from your last seq")
        elif self.queue.close_code is not None:  # refused, or the match expired
            with contextlib.suppress(Exception):
                await self.ws.close(code=self.queue.close_code, reason=self.queue.close_reason)

    async def run(self) -> None:
        sender = asyncio.create_task(self.sender())
        try:
            await self.receive_loop()
        except WebSocketDisconnect:
            pass
        finally:
            if self.runner is not None and self.sub is not None:
                self.runner.unsubscribe(self.sub)
            if self.lease is not None:
                self.lease.release()
            self.queue.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(sender, timeout=2)
            sender.cancel()

    async def _next_frame(self) -> str | bytes | None:
        """The next message's data; None when the connection is done (gone, or no hello
        within hello_timeout: answered here)."""
        if self.runner is None:
            try:
                return await asyncio.wait_for(self.receive(), timeout=self.settings.hello_timeout)
            except TimeoutError:
                self.reply(error_frame("hello_timeout", "send a hello first"))
                self.queue.close()
                return None
        return await self.receive()

    async def _receive(self) -> str | bytes | None:
        """The next message's data through Starlette (None: the client is gone)."""
        message = await self.ws.receive()
        if message["type"] == "websocket.disconnect":
            return None
        data: str | bytes | None = message.get("text")
        return data if data is not None else message.get("bytes") or b""

    async def receive_loop(self) -> None:
        # After the hello, each message is awaited here without a timeout (wait_for's own
        # cost was 1% of a command's CPU) nor an async generator between (0.4 us a message).
        receive = self.receive
        while True:
            data = await (receive() if self.runner is not None else self._next_frame())
            if data is None:
                return
            if self.queue.overflowed:
                return
            if len(data) > self.settings.frame_limit:
                client_error("frame_too_large", size=len(data))
                self.reply(error_frame(
                    "frame_too_large",
                    f"a frame is at most {self.settings.frame_limit} bytes; this one was dropped",
                ))
                continue
            if not self.bucket.take():
                self.reply(error_frame(
                    "rate_limited", "too many messages; this one was dropped", command_id(data)
                ))
                continue
            try:
                msg = decode_json(_client_decoder, data)
            except msgspec.ValidationError as exc:
                client_error("bad_message", error=str(exc))
                self.reply(error_frame("bad_message", f"not a message this server knows: {exc}"))
                continue
            except msgspec.DecodeError as exc:
                client_error("bad_json", error=str(exc))
                self.reply(error_frame("bad_json", f"the frame is not JSON: {exc}"))
                continue
            if isinstance(msg, Command):  # (the most of them: asked first)
                outcome = await self._command(msg)
                self.hub.metrics.command(self.runner.hosted.rules.name if self.runner else "", outcome)
            elif isinstance(msg, Ping):
                self.reply(PONG)
            elif isinstance(msg, Hello):
                await self.hello(msg)
            else:
                self.view()

    async def hello(self, msg: Hello) -> None:
        if self.runner is not None:
            self.reply(error_frame("already_joined", "this connection already follows a match"))
            return
        if not MATCH_ID.match(msg.match):
            self.reply(error_frame("unknown_match", f"no match {msg.match!r}"))
            return
        try:
            runner = await self.hub.runner(msg.match)
            seat = None if msg.token is None else await runner.seat_of(msg.token)
        except MatchExpired as exc:
            self.reply(error_frame("match_expired", str(exc)))
            return
        except UnknownMatch:
            self.reply(error_frame("unknown_match", f"no match {msg.match!r}"))
            return
        except UNAVAILABLE as exc:
            log.warning("store_unavailable", match=msg.match, error=repr(exc))
            self.hub.metrics.redis_error("hello")
            self.reply(error_frame("store_unavailable", STORE_UNAVAILABLE_HELLO))
            return
        if msg.token is not None and seat is None:
            self.reply(error_frame("bad_token", "that token holds no seat in this match"))
            return
        if msg.full and not runner.current.ended:
            barred = _host_view_refused(runner, msg, seat)
            if barred is not None:
                self.reply(barred)
                return
        # The full view of a match that seals is, after its end, what the public sees
        # (projections/seal.py); before, only its host has it.
        full = msg.full and not (runner.current.ended and seals(runner.hosted.views, runner.current))
        sub = Subscriber(Viewer(seat=seat, full=full), self.queue, with_view=msg.updates == "view")
        welcome = {
            "type": "welcome",
            "match": runner.match_id,
            "game": runner.current.game,
            "variant": runner.current.variant,
            "role": "auditor" if msg.full else "player" if seat is not None else "spectator",
            "seat": seat,
            "protocol": PROTOCOL,
        }
        since = None if msg.since == "now" else msg.since
        limits = self.hub.limits
        address = self.ws.client.host if self.ws.client else None
        lease = limits.join_address(address) if seat is None else limits.join_seat(runner.match_id, seat)
        if lease is None:
            n = self.settings.seat_connections
            log.info("too_many_connections", match=runner.match_id, seat=seat)
            self.reply(error_frame(
                "too_many_connections", f"seat {seat} of this match holds {n} connections "
                "already, as many as it may: close one of them first",
            ))
            self.queue.close(CLOSE_TOO_MANY_CONNECTIONS, "too many connections for this seat")
            return
        self.lease = lease  # released when the connection ends
        refused = await runner.subscribe(sub, since, welcome)
        if refused is not None:
            lease.release()
            self.lease = None
            self.reply(error_frame("bad_since", refused))
            return
        self.runner, self.seat, self.sub = runner, seat, sub
        self.bucket = lease.bucket
        if isinstance(since, int) and since > 0:
            self.hub.metrics.resumes.inc()
        log.info("viewer_joined", match=runner.match_id, seat=seat, since=msg.since)

    def view(self) -> None:
        """Answer a `view` request: the viewer's view now, after the updates sent so far
        (the folding and the pushing of an entry's updates are not parted by an await)."""
        if self.runner is None or self.sub is None:
            self.reply(error_frame("not_ready", "send a hello first"))
            return
        self.reply(self.runner.view_frame(self.sub.viewer))

    async def _command(self, msg: Command) -> str:
        """Answer a command; what became of it (server/metrics.py OUTCOMES, counted by
        receive_loop)."""
        cid = msg.id
        runner = self.runner
        if runner is None:
            self.reply(error_frame("not_ready", "send a hello first", cid))
            return "error"
        if self.seat is None:
            self.reply(error_frame("not_a_player", "spectators cannot send commands", cid))
            return "error"
        if not 1 <= len(cid) <= 64 or not cid.isprintable():
            self.reply(error_frame("bad_id", "a command id is 1 to 64 printable characters", cid))
            return "error"
        if runner.core.current.ended:
            self.reply(_rejected(cid, "match_over", "the match is over"))
            return "rejected"
        try:
            command = engine.decode_command(runner.hosted.rules, msg.command)
        except msgspec.ValidationError as exc:
            self.reply(_rejected(cid, "bad_command", str(exc)))
            return "rejected"
        body = to_builtins(command)
        try:
            done = await runner.submit(
                kind="command", seat=self.seat, key=f"c:{self.seat}:{cid}", cid=cid, body=body,
                command=command,
            )
        except Busy as exc:
            self.reply(error_frame("busy", str(exc), cid))
            return "error"
        except UNAVAILABLE as exc:
            log.warning("store_unavailable", match=runner.match_id, seat=self.seat, cid=cid, error=repr(exc))
            self.hub.metrics.redis_error("command")
            self.reply(error_frame("store_unavailable", STORE_UNAVAILABLE_COMMAND, cid))
            return "error"
        assert done is not None
        if done.duplicate and not same_body(runner.core.entry(done.seq).body, body):
            client_error("id_reused", match=runner.match_id, seat=self.seat, cid=cid)
            self.reply(error_frame(
                "id_reused",
                f"command id {cid!r} was used for a different command, whose outcome stands: "
                "give each command an id of its own",
                cid,
            ))
            return "error"
        rej = done.outcome.rejection
        if rej is not None:
            self.reply(_rejected(cid, rej.code, rej.reason, duplicate=done.duplicate))
        else:
            assert self.sub is not None
            self.reply(encode(Ack(
                id=cid, seq=runner.streams.number_of(self.sub.viewer, done.seq),
                warnings=list(done.outcome.warnings), duplicate=done.duplicate,
                digest=done.digest,
            )))
        # Debug level: a JSON log line per command cost more than a tenth of the server's
        # time per command (DAEDALUS_LOG_LEVEL=debug shows them), and the filtered call
        # itself 0.6% (docs/performance.md).
        if logs.debugging():
            log.debug(
                "command", match=runner.match_id, seat=self.seat, cid=cid, seq=done.seq,
                rejected=rej.code if rej else None, duplicate=done.duplicate,
            )
        return "duplicate" if done.duplicate else "rejected" if rej is not None else "accepted"


def same_body(a: Any, b: Any) -> bool:
    """Whether two command bodies are the same JSON (whatever the order of their keys)."""
    return bool(msgspec.json.encode(a, order="sorted") == msgspec.json.encode(b, order="sorted"))


def _rejected(cid: str, code: str, reason: str, *, duplicate: bool = False) -> bytes:
    return encode(Rejected(id=cid, code=code, reason=reason, duplicate=duplicate))


async def websocket_endpoint(ws: WebSocket) -> None:
    settings: Settings = ws.app.state.settings
    origin = ws.headers.get("origin")
    if not origin_allowed(origin, settings) and not same_origin(origin, ws.headers.get("host")):
        log.info("origin_refused", origin=origin)
        await ws.close(code=1008, reason="origin not allowed")
        return
    await ws.accept()
    conn = Connection(ws, ws.app.state.hub, settings)
    conn.hub.metrics.connections.inc()
    try:
        # A task of its own: each wake of the connection (a message, an append's reply)
        # resumes its few frames, not also the dozen of uvicorn's and Starlette's
        # middleware and routing that await the endpoint (400 ns a wake). Cancelling
        # this one (a shutdown) cancels it too.
        await asyncio.create_task(conn.run())
    finally:
        conn.hub.metrics.connections.dec()
        if ws.client_state == WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await ws.close()


# --- the application ---------------------------------------------------------------------


async def _bounded(what: str, closing: Coroutine[Any, Any, None], seconds: float) -> None:
    """Shut `what` down, but give up after `seconds`: a process asked to stop stops.
    (Whatever was cut short is in Redis or was never acknowledged.) Not wait_for: it
    would wait on for a cancelled step that does not end."""
    task = asyncio.ensure_future(closing)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if not done:
        task.cancel()
        log.error("shutdown_timeout", part=what, seconds=seconds)
    elif not task.cancelled() and task.exception() is not None:
        log.error("shutdown_error", part=what, error=repr(task.exception()))


class _ClientUtf8(logging.Filter):
    """uvicorn logs a text frame that is not UTF-8 (it closes the websocket with 1007) as
    an error with a traceback; it is the client's error: one info line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("Invalid UTF-8 sequence received from client"):
            client_error("bad_utf8", close=1007)
            return False
        return True


def _quiet_client_errors() -> None:
    uvicorn_log = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _ClientUtf8) for f in uvicorn_log.filters):
        uvicorn_log.addFilter(_ClientUtf8())


def create_app(
    settings: Settings | None = None, store: Store | None = None, handoff: Handoff | None = None,
) -> Starlette:
    """The application. `handoff`: a worker's of `daedalus serve --workers N` (its index,
    their number and the connections it hands and adopts, in its metrics)."""
    settings = settings or Settings()
    _quiet_client_errors()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        the_store: Store | None = store
        if the_store is None:
            the_store = (
                EventStore.from_url(
                    settings.redis_url, timeout=settings.redis_timeout,
                    max_connections=settings.redis_max_connections,
                    idle_timeout=settings.redis_idle_timeout, cluster=settings.redis_cluster,
                    wait_replicas=settings.redis_wait_replicas, poll_s=settings.redis_cluster_poll,
                )
                if settings.redis_url
                else EventStore.embedded()
            )
        hub = Hub(the_store, settings)
        if handoff is not None:
            hub.metrics.watch_handoff(handoff)
        hub.key = app.state.key = keys.load_or_create(settings.key_file)  # signs receipts
        log.info("receipt_key", key=hub.key.id, file=settings.key_file)
        app.state.hub = hub
        app.state.settings = settings
        hub.spawn(hub.resume_active())  # in the background: serve at once
        try:
            yield
        finally:
            await _bounded("hub", hub.close(), settings.shutdown_grace)
            if store is None:
                await _bounded("store", the_store.close(), settings.shutdown_grace)

    routes = [
        Route("/", home),
        Route("/health", health),
        Route("/metrics", metrics),
        Route("/games", list_games),
        Route("/schema", schema),
        Route("/key", public_key),
        Route("/matches", create_match, methods=["POST"]),
        Route("/matches/{match_id}", match_status),
        Route("/matches/{match_id}/seats", claim_seat, methods=["POST"]),
        Route("/matches/{match_id}/log", match_log),
        Route("/matches/{match_id}/replay", match_replay),
        Route("/lobby", lobby),
        WebSocketRoute("/ws", websocket_endpoint),
        Mount("/web", StaticFiles(directory=WEB), name="web"),
    ]
    handlers: dict[Any, Any] = {kind: store_unavailable for kind in UNAVAILABLE}
    handlers[HTTPException] = http_exception
    handlers[500] = internal_error
    return Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers)
