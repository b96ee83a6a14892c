"""The machine-readable protocol: `GET /schema`, the frames the server really sends, and
the examples of docs/protocol.md and of each rules page's `## Protocol` section.

The schema is msgspec's, generated from server/messages.py; it is checked with
`jsonschema` (an independent implementation of JSON Schema), so the examples are held to
the published schema itself, not only to the Structs it came from. Every frame the server
sends is decoded into its Struct (which refuses unknown fields) and encoded again to the
same bytes: no field missing, added or out of order.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import msgspec
import pytest
import websockets

from server.config import Settings
from server.main import EmbeddedServer
from server.messages import (
    CLIENT_MESSAGES,
    SERVER_MESSAGES,
    encode,
    protocol_schema,
    server_decoder,
)
from tests import toygame
from tests.conformance import hosted_games
from tests.wsutil import new_match

toygame.install()

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
GOLDEN = Path(__file__).parent / "golden"
TAGS = {cls.__struct_config__.tag for cls in (*CLIENT_MESSAGES, *SERVER_MESSAGES)}


def hosted_schema() -> dict[str, Any]:
    return protocol_schema({name: h.rules.command_type for name, h in hosted_games().items()})


def validator(schema: dict[str, Any], ref: str | None = None) -> jsonschema.Draft202012Validator:
    """A validator of the whole schema, or of its component `ref` ("#/$defs/...")."""
    jsonschema.Draft202012Validator.check_schema(schema)
    if ref is not None:
        schema = {**schema, "anyOf": [{"$ref": ref}]}
    return jsonschema.Draft202012Validator(schema)


# --- the schema ---------------------------------------------------------------------------


def test_the_schema_covers_every_message_both_ways_and_each_games_commands() -> None:
    schema = hosted_schema()
    defs = schema["$defs"]
    client = {a["$ref"] for a in defs["ClientMessage"]["anyOf"]}
    server = {a["$ref"] for a in defs["ServerMessage"]["anyOf"]}
    assert client == {f"#/$defs/{c.__name__}" for c in CLIENT_MESSAGES}
    assert server == {f"#/$defs/{c.__name__}" for c in SERVER_MESSAGES}
    for cls in (*CLIENT_MESSAGES, *SERVER_MESSAGES):
        assert defs[cls.__name__]["additionalProperties"] is False, cls
    assert {k for k in defs if k.startswith("commands.")} == {
        f"commands.{g}" for g in hosted_games()
    }
    check = validator(schema)
    assert check.is_valid({"type": "ping"})
    assert not check.is_valid({"type": "ping", "x": 1}), "unknown fields are refused"
    assert not check.is_valid({"type": "hello"}), "a hello names its match"
    assert check.is_valid({"type": "hello", "match": "m", "token": None, "since": "now"})
    move = validator(schema, "#/$defs/commands.memory-maze")
    assert move.is_valid({"type": "move", "moves": "UU", "turn": 3})
    assert not move.is_valid({"type": "move", "turn": 3}), "moves are required"


async def test_get_schema_serves_the_schema_of_the_structs() -> None:
    async with EmbeddedServer() as srv, httpx.AsyncClient(base_url=srv.url) as http:
        r = await http.get("/schema")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    from projections.registry import GAMES

    served = protocol_schema({n: h.rules.command_type for n, h in GAMES.items()})
    assert r.json() == json.loads(json.dumps(served))
    jsonschema.Draft202012Validator.check_schema(r.json())


# --- the docs' examples ---------------------------------------------------------------------


def json_values(text: str) -> list[Any]:
    """The JSON values of a ```json block: one document, or several one after another
    (one per line, or spread over lines)."""
    decoder = json.JSONDecoder()
    values, at = [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return values
        value, at = decoder.raw_decode(text, at)
        values.append(value)


def json_blocks(markdown: str) -> list[tuple[str, Any]]:
    """(the heading a block is under, a value) for every value of every ```json block."""
    found: list[tuple[str, Any]] = []
    heading = ""
    lines = iter(markdown.splitlines())
    for line in lines:
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.strip() == "```json":
            block = []
            for inner in lines:
                if inner.strip() == "```":
                    break
                block.append(inner)
            found += [(heading, v) for v in json_values("\n".join(block))]
    return found


def protocol_section(markdown: str) -> str:
    """A rules page's `## Protocol` section (to the next level-2 heading)."""
    match = re.search(r"^## Protocol\n(.*?)(?=^## |\Z)", markdown, re.M | re.S)
    assert match, "the page has a ## Protocol section"
    return match.group(1)


def rules_pages() -> list[Path]:
    """The rules pages of the hosted games (a game not hosted yet has no protocol)."""
    pages = sorted((DOCS / "rules").glob("*.md"))
    assert {p.stem for p in pages} >= set(hosted_games()), "every hosted game has a page"
    return [p for p in pages if p.stem in hosted_games()]


def test_every_example_frame_of_docs_protocol_md_validates() -> None:
    schema = hosted_schema()
    check = validator(schema)
    view = validator(schema, "#/$defs/View")
    shown: set[str] = set()
    for heading, value in json_blocks((DOCS / "protocol.md").read_text()):
        if isinstance(value, dict) and value.get("type") in TAGS and heading != "Engine events":
            errors = [e.message for e in check.iter_errors(value)]
            assert not errors, f"protocol.md ({heading}): {value}: {errors}"
            shown.add(value["type"])
        elif heading == "The view":
            errors = [e.message for e in view.iter_errors(value)]
            assert not errors, f"protocol.md (The view): {errors}"
    assert shown == TAGS, f"messages without an example: {sorted(TAGS - shown)}"


def test_every_command_in_the_rules_pages_validates() -> None:
    schema = hosted_schema()
    check = validator(schema)
    for page in rules_pages():
        game = page.stem
        commands = validator(schema, f"#/$defs/commands.{game}")
        found = 0
        for heading, value in json_blocks(protocol_section(page.read_text())):
            if heading != "Commands":
                continue
            found += 1
            errors = [e.message for e in commands.iter_errors(value)]
            assert not errors, f"{page.name}: {value}: {errors}"
            frame = {"type": "command", "id": "c1", "command": value}
            assert check.is_valid(frame)
            msgspec.convert(value, hosted_games()[game].rules.command_type)
        assert found, f"{page.name} shows its commands"


# Events, views: their shape checked against what the server really sent in the golden
# playthroughs (the schema holds them as objects, a game's own).


def kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def fits(doc: Any, real: Any) -> bool:
    """Whether a documented value has the shape of a real one: the same kinds, objects
    with the same keys, every documented element of an array shaped as an element of the
    real one."""
    if kind(doc) != kind(real):
        return False
    if isinstance(doc, dict):
        return doc.keys() == real.keys() and all(fits(doc[k], real[k]) for k in doc)
    if isinstance(doc, list):
        return all(any(fits(d, r) for r in real) for d in doc)
    return True


def golden_frames() -> list[tuple[str, bytes]]:
    """(file name, frame) for every update frame of every golden playthrough."""
    frames = []
    for path in sorted(GOLDEN.glob("*.json")):
        doc = json.loads(path.read_text())
        for entry in doc["entries"]:
            for viewer in doc["viewers"]:
                frame = entry.get(viewer)
                if frame is not None:
                    frames.append((path.name, json.dumps(frame, separators=(",", ":")).encode()))
    return frames


def golden_events() -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(game, event type) -> every distinct event the golden playthroughs sent."""
    seen: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for path in sorted(GOLDEN.glob("*.json")):
        doc = json.loads(path.read_text())
        for entry in doc["entries"]:
            for viewer in doc["viewers"]:
                frame = entry.get(viewer)
                for event in frame["events"] if frame else ():
                    key = json.dumps(event, sort_keys=True)
                    seen.setdefault((doc["game"], event["type"]), {})[key] = event
    return {k: list(v.values()) for k, v in seen.items()}


def test_every_documented_game_event_has_the_shape_of_one_the_server_sends() -> None:
    """Each event example of a rules page (its Events section and its Protocol section's
    Game events) and each engine event of protocol.md has the keys and kinds of values of
    a real event of its type, as the golden playthroughs recorded it: no elided `"..."`,
    no value the server never sends there."""
    real = golden_events()
    checked = 0
    pages = [(p.stem, p.read_text()) for p in rules_pages()]
    pages.append(("", (DOCS / "protocol.md").read_text()))
    for game, text in pages:
        for heading, value in json_blocks(text):
            if heading not in ("Events", "Game events", "Engine events"):
                continue
            candidates = [
                e for (g, t), events in real.items() if t == value["type"] and (g == game or not game)
                for e in events
            ]
            assert candidates, f"{game or 'protocol.md'}: no {value['type']!r} event recorded"
            assert any(fits(value, e) for e in candidates), (
                f"{game or 'protocol.md'}: {value} has the shape of no {value['type']!r} event "
                f"the server sends; one of them: {candidates[0]}"
            )
            checked += 1
    assert checked >= 20


# --- the frames the server sends ------------------------------------------------------------


def same_again(frame: bytes) -> None:
    """`frame` decodes into its Struct (unknown fields refused) and encodes to itself."""
    decoded = server_decoder.decode(frame)
    assert encode(decoded) == frame, frame[:300]


def test_every_golden_update_frame_is_its_struct() -> None:
    frames = golden_frames()
    assert len(frames) > 500
    for _name, frame in frames:
        same_again(frame)


@pytest.fixture
async def srv() -> AsyncIterator[EmbeddedServer]:
    async with EmbeddedServer(Settings(rate=500, burst=500)) as s:
        yield s


class Capture:
    """A raw websocket that keeps every frame it receives, as received."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.frames: list[bytes] = []

    async def send(self, msg: Any) -> None:
        await self.ws.send(msg if isinstance(msg, str) else json.dumps(msg))

    async def until(self, pred: Any) -> dict[str, Any]:
        while True:
            raw = await self.ws.recv(decode=False)
            self.frames.append(raw)
            msg: dict[str, Any] = json.loads(raw)
            if pred(msg):
                return msg

    async def answer(self, msg: Any) -> dict[str, Any]:
        """Send `msg`; the first frame that is not an update."""
        await self.send(msg)
        return await self.until(lambda m: m["type"] != "update")


async def test_every_frame_the_server_sends_is_its_struct(srv: EmbeddedServer) -> None:
    m, (t0, t1) = await new_match(srv.url, "toy", {"turn_ms": 60000})
    conns = [Capture(await websockets.connect(srv.ws_url)) for _ in range(4)]
    a, b, spec, late = conns
    assert (await a.answer({"type": "command", "id": "x", "command": {}}))["code"] == "not_ready"
    assert (await a.answer("{nope"))["code"] == "bad_json"
    assert (await a.answer({"type": "dance"}))["code"] == "bad_message"
    assert (await a.answer("x" * (17 * 1024)))["code"] == "frame_too_large"
    assert (await a.answer({"type": "ping"}))["type"] == "pong"
    assert (await a.answer({"type": "hello", "match": "nomatch"}))["code"] == "unknown_match"
    assert (await a.answer({"type": "hello", "match": m, "token": "no"}))["code"] == "bad_token"
    assert (await a.answer({"type": "hello", "match": m, "since": 99}))["code"] == "bad_since"
    assert (await a.answer({"type": "hello", "match": m, "full": True}))["code"] == "match_not_over"
    assert (await a.answer({"type": "hello", "match": m, "token": t0}))["role"] == "player"
    assert (await a.answer({"type": "hello", "match": m}))["code"] == "already_joined"
    assert (await b.answer({"type": "hello", "match": m, "token": t1}))["seat"] == 1
    assert (await spec.answer({"type": "hello", "match": m, "since": "now"}))["role"] == "spectator"
    cmd = {"type": "command", "id": "c1", "command": {"type": "add", "n": 1}}
    assert (await spec.answer(cmd))["code"] == "not_a_player"
    assert (await a.answer({**cmd, "id": ""}))["code"] == "bad_id"
    assert (await a.answer({**cmd, "command": {"type": "fly"}}))["code"] == "bad_command"
    assert (await a.answer(cmd))["type"] == "ack"
    assert (await a.answer(cmd))["duplicate"] is True
    assert (await a.answer({**cmd, "id": "c2"}))["code"] == "not_your_turn"
    n = 2
    while True:  # to the end: the target is secret, so add 3 each turn until someone wins
        for conn in (b, a):
            n += 1
            got = await conn.answer({**cmd, "id": f"c{n}", "command": {"type": "add", "n": 3}})
            if got["type"] == "rejected":
                assert got["code"] == "match_over", got
                break
        else:
            continue
        break
    await spec.until(lambda x: x["type"] == "update" and x["view"]["ended"])
    assert (await late.answer({"type": "hello", "match": m, "full": True}))["role"] == "auditor"
    for conn in conns:
        await conn.ws.close()
    frames = [f for c in conns for f in c.frames]
    types = {json.loads(f)["type"] for f in frames}
    assert types >= {"welcome", "update", "ack", "rejected", "error", "pong"}, types
    assert any(b'"seed"' in f and f.startswith(b'{"type":"update"') for f in frames)
    for frame in frames:
        same_again(frame)


# --- what the docs promise ----------------------------------------------------------------


async def test_unknown_fields_are_refused_in_every_client_frame(srv: EmbeddedServer) -> None:
    m, (t0, _t1) = await new_match(srv.url, "toy", {"turn_ms": 60000})
    c = Capture(await websockets.connect(srv.ws_url))
    assert (await c.answer({"type": "ping", "x": 1}))["code"] == "bad_message"
    hello = {"type": "hello", "match": m, "token": t0, "sice": 0}
    assert (await c.answer(hello))["code"] == "bad_message"
    assert (await c.answer({**hello, "since": 0, "sice": None}))["code"] == "bad_message"
    del hello["sice"]
    assert (await c.answer(hello))["type"] == "welcome"
    cmd = {"type": "command", "id": "c1", "command": {"type": "add", "n": 1}}
    assert (await c.answer({**cmd, "extra": 1}))["code"] == "bad_message"
    await c.ws.close()


@pytest.mark.parametrize(
    "game, command",
    [
        ("five-card-trick", {"type": "submit", "round": 1, "actions": ["score"], "blok": "x"}),
        ("five-card-trick", {"type": "use_item", "item": "claim_priority", "round": 1, "x": 0}),
        ("memory-maze", {"type": "move", "moves": "U", "tunr": 1}),
        ("keys-to-success", {"type": "submit", "round": 1, "gates": ["A"], "cards": [1], "x": 1}),
        ("keys-to-success", {"type": "chat", "text": "hi", "to": [1]}),
        ("keys-to-success", {"type": "vote", "candidate": 1, "x": 1}),
    ],
)
def test_a_game_command_with_an_unknown_field_is_refused(game: str, command: dict[str, Any]) -> None:
    """A misspelt field is an error to its sender, not silently a default."""
    rules = hosted_games()[game].rules
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        msgspec.convert(command, rules.command_type)


async def test_a_replayed_rejection_says_duplicate(srv: EmbeddedServer) -> None:
    """A command id sent again is answered with its first outcome: a refusal too, with
    `duplicate: true`, as an ack is."""
    m, (t0, _t1) = await new_match(srv.url, "toy", {"turn_ms": 60000})
    c = Capture(await websockets.connect(srv.ws_url))
    await c.answer({"type": "hello", "match": m, "token": t0})
    cmd = {"type": "command", "id": "big", "command": {"type": "add", "n": 9}}
    first = await c.answer(cmd)
    assert first["type"] == "rejected" and first["duplicate"] is False, first
    again = await c.answer(cmd)
    assert again == {**first, "duplicate": True}
    await c.ws.close()


def test_the_documented_connection_cap_per_seat_is_the_servers() -> None:
    text = (DOCS / "protocol.md").read_text()
    found = re.search(r"A seat may hold at most (\d+) websockets at once", text)
    assert found, "docs/protocol.md says how many websockets a seat may hold"
    assert int(found.group(1)) == Settings().seat_connections
