"""Every websocket message, both ways, as msgspec Structs (docs/protocol.md describes them).

The server decodes client frames into `ClientMessage` and builds its own frames from the
`ServerMessage` Structs, and `GET /schema` publishes the JSON Schema msgspec derives from
these same Structs (`protocol_schema`), so the schema cannot drift from what the server
reads and writes. Every Struct refuses fields it does not declare.

A game's commands, events and `game_state` are the game's own: a `command`'s `command`,
an update's `events` and a view's `game_state` are objects here, and the schema gives
each hosted game's commands a component of their own, derived from the game's
`rules.command_type` (`$defs/commands.<game>`).
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

PROTOCOL = 2
"""The version of this protocol, given in every welcome (`protocol`) and in the index of
GET /. Version 1 (welcomes without `protocol`): every update carries the viewer's view.
Version 2: a hello may ask for its updates without the view (`"updates": "events"`), and
a viewer may ask for its view at any time (`view`, answered by a `view` frame). A later
version only adds: a client written for version N works with any server of version N or
more."""

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
REF_TEMPLATE = "#/$defs/{name}"


class _Message(msgspec.Struct, forbid_unknown_fields=True, tag_field="type"):
    """A websocket frame: a JSON object whose `type` names it."""


# --- client -> server --------------------------------------------------------------------


class Hello(_Message, tag="hello"):
    """The first frame of a connection: follow `match`, as the seat `token` holds (none:
    a spectator), from the update after `since` ("now": no catch-up); `full`: the
    auditor's view of a finished match, or, with the match's audit key (`audit`), before
    the end of a match whose setup its host gave; `updates`: what each update carries,
    its events and the whole view ("view") or its events only ("events": the view comes
    in the welcome and when asked for, with `view`)."""

    match: str
    token: str | None = None
    since: int | Literal["now"] = 0
    full: bool = False
    audit: str | None = None
    updates: Literal["view", "events"] = "view"


class Command(_Message, tag="command"):
    """A player's game command (`command`: one of the game's commands), under an id the
    client chose, unique per seat for the whole match."""

    id: str
    command: dict[str, Any]


class Ping(_Message, tag="ping"):
    """Answered by `pong`."""


class ViewRequest(_Message, tag="view"):
    """Ask for the viewer's whole view now (after the hello): answered by `view`."""


ClientMessage = Hello | Command | Ping | ViewRequest


# --- HTTP: a seat claim ------------------------------------------------------------------


class SeatClaim(msgspec.Struct, forbid_unknown_fields=True):
    """The body of `POST /matches/{id}/seats` (HTTP, not a websocket frame): the player's
    `name`; the `seat` wanted (none: the first free one); a `token` of the player's own
    (else the server makes one); and `entropy`, the player's own randomness, which the
    match's draws are made from together with the server's committed seed (any printable
    text of 1 to 128 characters; public once recorded; docs/fairness.md)."""

    name: Annotated[str, Meta(min_length=1, max_length=40)]
    seat: int | None = None
    token: Annotated[str, Meta(pattern="^[A-Za-z0-9_-]{32,128}$")] | None = None
    entropy: Annotated[str, Meta(min_length=1, max_length=128)] | None = None


SEAT_CLAIM_FIELDS: tuple[str, ...] = SeatClaim.__struct_fields__


# --- server -> client --------------------------------------------------------------------


class SeatName(msgspec.Struct, forbid_unknown_fields=True):
    seat: int
    name: str | None  # null while the seat is free


class MatchResult(msgspec.Struct, forbid_unknown_fields=True):
    """How a finished match ended; `winner` null: a draw. (Its keys are in sorted order,
    as the log's canonical JSON has them.)"""

    reason: str
    rounds: int
    scores: list[int]
    winner: int | None


class View(msgspec.Struct, forbid_unknown_fields=True):
    """A viewer's whole view of a match (`game_state`: the game's own). `seed` and
    `setup` are there once the match has ended."""

    match: str
    game: str
    variant: str
    rules_version: str
    commitment: str
    seats: list[SeatName]
    you: int | None
    started: bool
    ended: bool
    result: MatchResult | None
    deadline: int | None
    options: dict[str, Any]
    game_state: dict[str, Any]
    seed: str | UnsetType = UNSET
    setup: Any | UnsetType = UNSET


class SpectatorDelay(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """A match's spectator delay: `seconds` or `rounds` (server/delay.py)."""

    seconds: float | UnsetType = UNSET
    rounds: int | UnsetType = UNSET


class Welcome(_Message, tag="welcome"):
    """The answer to a hello: the version of the protocol the server speaks (`protocol`),
    who the viewer is, how many updates its stream has now (`seq`) and its view now; for a player (and, once the match is over, every viewer)
    the `receipt` of the latest checkpoint, once the match has started; for a spectator
    of a match with a spectator delay, before its end, the `delay` its stream and view
    are held back by."""

    match: str
    game: str
    variant: str
    role: Literal["player", "spectator", "auditor"]
    seat: int | None
    protocol: Annotated[int, Meta(ge=2)]
    seq: int
    view: View
    receipt: Receipt | UnsetType = UNSET
    delay: SpectatorDelay | UnsetType = UNSET


class Update(_Message, tag="update"):
    """One log entry as a viewer sees it: number `seq` of its stream, the entry's time,
    the events it shows and the viewer's whole view (none on a connection whose hello
    asked for `"updates": "events"`); and, when the entry started the match, ended a
    round or ended the match, the server's `receipt` of it (to players; to every viewer
    at the end)."""

    seq: int
    ts: int
    events: list[dict[str, Any]]
    view: View | UnsetType = UNSET
    receipt: Receipt | UnsetType = UNSET


class ViewFrame(_Message, tag="view"):
    """The answer to a `view` request: the viewer's whole view now, which is the view
    after update `seq` of its stream (every update up to `seq` was sent before it)."""

    seq: int
    view: View


class Resync(_Message, tag="resync"):
    """The viewer's stream was numbered again from the match's log (the store had lost
    entries): its first `kept` updates stand, it now has `seq`, and `view` is the view
    now; live updates go on after `seq`."""

    seq: int
    kept: int
    view: View


class Ack(_Message, tag="ack"):
    """A command taken: `seq` is the update it made in the sender's stream (null: none);
    `duplicate`: the id had been taken before, and this is its first answer again;
    `digest`: the chained digest of the command's log entry (docs/fairness.md)."""

    id: str
    seq: int | None
    warnings: list[str]
    duplicate: bool
    digest: str


class Rejected(_Message, tag="rejected"):
    """A command the rules refused; `duplicate`: the id had been refused before, and this
    is that refusal again."""

    id: str
    code: str
    reason: str
    duplicate: bool = False


class Error(_Message, tag="error"):
    """A protocol problem; `id`: the command it concerns, if any."""

    code: str
    message: str
    id: str | None = None


class Pong(_Message, tag="pong"):
    """The answer to ping."""


class Receipt(_Message, tag="receipt"):
    """The server's signed word on the match's log up to entry `seq`, whose chained
    digest is `digest`, given to the players when the last seat is taken (`what`
    "started"), when a round ends ("round", `round` the round that ended) and to every
    viewer when the match ends ("ended"): in the update of that entry, or as a frame of
    its own to a viewer the entry shows nothing.
    `signature` (Ed25519, hex) is over
    "daedalus-receipt-v1\n" and the canonical JSON of `commitment`, `digest`, `match`,
    `round`, `seq` and `what`, by the key `public_key` (hex; `GET /key` serves the
    server's), named `key`. The answers to `POST /matches` and to a seat claim carry the
    receipt of the creation ("created"). A receipt signed with others (those of the
    checkpoints a busy server reached at once) has `batch`, its way to the root of their
    Merkle tree, and `signature` is over "daedalus-receipt-batch-v1\n" and that root
    (server/keys.py; docs/protocol.md)."""

    match: str
    seq: int
    digest: str
    commitment: str
    what: Literal["created", "started", "round", "ended"]
    round: int | None
    key: str
    public_key: str
    signature: str
    batch: list[tuple[Literal["left", "right"], str]] | UnsetType = UNSET


ServerMessage = Welcome | Update | ViewFrame | Resync | Ack | Rejected | Error | Pong | Receipt

CLIENT_MESSAGES: tuple[type[_Message], ...] = (Hello, Command, Ping, ViewRequest)
SERVER_MESSAGES: tuple[type[_Message], ...] = (
    Welcome, Update, ViewFrame, Resync, Ack, Rejected, Error, Pong, Receipt
)

client_decoder = msgspec.json.Decoder(ClientMessage)
server_decoder = msgspec.json.Decoder(ServerMessage)
encode = msgspec.json.Encoder().encode


def protocol_schema(commands: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of every websocket message, generated by msgspec
    from the Structs above. `commands`: game name -> its command type (`rules.command_type`);
    each becomes `$defs/commands.<game>`, the schema of a `command`'s `command` in a match
    of that game."""
    commands = commands or {}
    names = sorted(commands)
    (client, server, _claim, *games), components = msgspec.json.schema_components(
        [ClientMessage, ServerMessage, SeatClaim, *(commands[n] for n in names)],
        ref_template=REF_TEMPLATE,
    )
    defs: dict[str, Any] = dict(components)
    defs["ClientMessage"] = {"description": "A frame a client sends.", **client}
    defs["ServerMessage"] = {"description": "A frame the server sends.", **server}
    for name, schema in zip(names, games, strict=True):
        defs[f"commands.{name}"] = {
            "description": f"What `command` holds in a `command` frame of a {name} match.",
            **schema,
        }
    for component in defs.values():
        if isinstance(component.get("description"), str):  # docstrings, unindented
            component["description"] = inspect.cleandoc(component["description"])
    return {
        "$schema": SCHEMA_DIALECT,
        "title": "Daedalus websocket messages",
        "description": (
            "Every frame of the websocket protocol (docs/protocol.md), both ways: "
            "$defs/ClientMessage, $defs/ServerMessage; and $defs/SeatClaim, the body of "
            "a seat claim (POST /matches/{id}/seats)."
        ),
        "anyOf": [{"$ref": "#/$defs/ClientMessage"}, {"$ref": "#/$defs/ServerMessage"}],
        "$defs": defs,
    }
