"""The match engine: folds a match's log, entry by entry, into its state.

A match log is a list of entries. The first (`create`) records the game, variant,
options, rules version, the secret seed and setup, and the commitment published to the
players. Every later entry is a seat claim (`join`), a player's command (`command`), or a
deadline tick appended by a server when a deadline passed (`tick`).

Before an entry is decided, time advances to the entry's timestamp: every deadline of the
game that falls at or before it expires first, in order. So a tick is only a nudge: a
stale or duplicate tick finds nothing due and produces nothing, and a command that
arrives after a deadline meets the state that deadline left.

The log version (`log_version` in the create entry; absent in the first version, 1)
decides how the match's random draws are made:
- version 1: the setup is drawn from the server's seed when the match is created, and
  the game's draws during play come from that seed;
- version 2: each seat claim may carry the player's own entropy, and every draw (the
  setup, unless the host gave it, and any draw during play) comes from a key derived from
  the server's seed and every seat's entropy (`draw_key`), so a seeded setup is drawn when
  the last seat is taken. The commitment published at creation binds the seed (and a given
  setup) before any entropy exists (docs/fairness.md);
- version 3: as version 2, and the match has an audit key (recorded in its create entry,
  given to whoever created the match, never published): every command body and every
  outcome enter the digests through salted commitments derived from it, so what the
  rules keep secret for good can be withheld from the published log while the chain
  still verifies (domain/seal.py, projections/seal.py);
- version 4: as version 3, with each commitment's salt derived by one SHA-256 of the
  entry's key rather than an HMAC, and only the fields of a command the game may keep
  secret (its `sealable_fields`) committed one by one (domain/seal.py): cheaper to seal
  and to fold.
A log is folded and verified under the version it records, so old logs replay as they did.

Each entry carries two digests:
- `out`: SHA-256 of the outcome the entry produced (events, rejection, warnings);
- `digest`: SHA-256 of the previous entry's digest and this entry's fields (with `out`).
So an edit anywhere breaks the chain at that entry, and `verify` names it and its round.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping
from functools import lru_cache
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

import msgspec

from domain import seal as sealing
from domain.canonical import canonical, canonical_encoder, sha256_hex, to_builtins
from domain.contract import Accepted, Game, OptionsError, Rejection, Result
from domain.rng import Rng

GENESIS_HEAD = "0" * 64
COMMITMENT_PREFIX = b"daedalus-commitment-v1\n"
DRAW_KEY_PREFIX = b"daedalus-draw-key-v2\n"
# The log version new matches are created under (see the module docstring).
LOG_VERSION = 4
LOG_VERSIONS = (1, 2, 3, 4)
# A player's entropy: any printable text of 1 to MAX_ENTROPY characters (the client
# library sends 64 random hex digits).
MAX_ENTROPY = 128
# What the game's state is built on before a version-2 match has drawn its setup (every
# seat not yet taken): a fixed, public key, so nothing in that state depends on the seed.
STAND_IN_KEY = hashlib.sha256(b"daedalus-stand-in-v2").digest()
MAX_EXPIRIES_PER_ENTRY = 100_000

EntryKind = Literal["create", "join", "command", "tick"]


# --- engine events ---------------------------------------------------------------------


class SeatTaken(msgspec.Struct, frozen=True, tag="seat_taken"):
    seat: int
    name: str


class MatchStarted(msgspec.Struct, frozen=True, tag="match_started"):
    at: int


class MatchEnded(msgspec.Struct, frozen=True, tag="match_ended"):
    result: Result


class Revealed(msgspec.Struct, frozen=True, tag="revealed"):
    """The secret seed and setup, published when the match ends."""

    seed: str
    setup: Any
    commitment: str


ENGINE_EVENTS = (SeatTaken, MatchStarted, MatchEnded, Revealed)


# --- log entries -----------------------------------------------------------------------


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """One log entry, as stored in the match's Redis stream and in exported logs."""

    seq: int
    ts: int
    kind: EntryKind
    seat: int | None = None
    cid: str | None = None
    body: Any = None
    out: str
    digest: str


class Outcome(msgspec.Struct, frozen=True):
    """What one entry did: its events (expiries first), or a rejection, and warnings."""

    events: tuple[Any, ...] = ()
    rejection: Rejection | None = None
    warnings: tuple[str, ...] = ()


class IntegrityError(Exception):
    """A log that does not fold: the message names the entry and round."""

    def __init__(self, seq: int, round: int | None, message: str) -> None:
        where = f"entry {seq}" + (f" (round {round})" if round is not None else "")
        super().__init__(f"{where}: {message}")
        self.seq = seq
        self.round = round
        self.detail = message


class MatchState(msgspec.Struct, frozen=True, kw_only=True):
    """The folded state of a whole match: engine bookkeeping around the game's state."""

    rules: Any  # the Game module (never encoded)
    match_id: str
    game: str
    variant: str
    options: Any
    rules_version: str
    commitment: str
    seed: str
    setup: Any
    created: int
    names: tuple[str | None, ...]
    started: bool = False
    ended: bool = False
    result: Result | None = None
    game_state: Any = None
    seq: int = 0
    head: str = GENESIS_HEAD
    last_ts: int = 0
    log_version: int = 1
    # Version 2: each seat's entropy as recorded by its claim (None: none given, or the
    # seat is free); and whether the setup was given at creation (a host's) rather than
    # drawn when the last seat is taken (`setup` is None until then).
    entropy: tuple[str | None, ...] = ()
    setup_given: bool = False
    # Version 3: the match's audit key (domain/seal.py): every command body and outcome
    # enters the digests through salted commitments derived from it. None: an older log,
    # or a log whose audit key is withheld (the public log of a finished match).
    audit_key: bytes | None = None

    @property
    def seats(self) -> int:
        return len(self.names)


# --- digests ---------------------------------------------------------------------------


def commitment_of(seed_hex: str, setup: Any) -> str:
    """The commitment published at creation: SHA-256 over the seed and the setup (log
    version 2: the setup given at creation, or None when it is drawn once every seat is
    taken; the create entry records which version, and its digest covers that)."""
    return sha256_hex(COMMITMENT_PREFIX, canonical({"seed": seed_hex, "setup": setup}))


def draw_key(seed_hex: str, entropy: Iterable[str | None]) -> bytes:
    """The key every draw of a version-2 match comes from: HMAC-SHA256 keyed by the
    server's seed over every seat's entropy in seat order (null where a seat gave none)."""
    message = DRAW_KEY_PREFIX + canonical(list(entropy))
    return hmac.digest(bytes.fromhex(seed_hex), message, "sha256")


def outcome_digest(outcome: Outcome) -> str:
    return sha256_hex(canonical(outcome))


_encode = canonical_encoder.encode  # (a sealed command's cid, out and seat: see entry_digest)
_SEALED_COMMAND = b'{"body":{"%b":"%%b"},"cid":%%b,"kind":"command","out":%%b,"seat":%%b,"seq":%%d,"ts":%%d}' % (
    sealing.SEALED.encode()
)
"""The canonical JSON of a sealed command entry's fields (`entry_digest`), to be filled."""


def entry_digest(
    prev: str, entry: Entry, audit_key: bytes | None = None,
    entry_key: sealing.Sealer | None = None,
    log_version: int = LOG_VERSION,
    sealable: frozenset[str] = frozenset(),
) -> str:
    """The chained digest: SHA-256 of `prev` and the canonical JSON of the entry's fields
    but `digest`. Version 3 or 4 (`audit_key` given; `log_version` says which): a
    command's body enters it by the commitments to its values (version 4: to the game's
    `sealable` fields), and a create entry's audit key by its digest (see
    domain/seal.py). `entry_key`: the entry's key ready for its salts (`sealing.entry_sealer`)
    when the caller has it already."""
    body = entry.body
    if type(body) is not dict:
        # A body read from a log (JSON) is an object of builtins already, which the
        # canonical encoder encodes as it would to_builtins' copy of it (its keys sorted
        # either way): only another value is converted (the copy cost 0.7 us an entry).
        body = to_builtins(body)
    kind = entry.kind
    if kind == "command":
        if audit_key is not None:
            # The fields' canonical JSON written out (their keys in order; the sealed
            # body's commitment, hex digits, as it is; seq and ts, ints, in decimal as
            # the encoder writes them; the rest encoded as canonical() encodes them): a
            # dict of the fields and its keys sorted by the encoder cost 0.2 us more.
            sealer = entry_key or _entry_sealer(audit_key, entry.seq, log_version, sealable)
            data = _SEALED_COMMAND % (
                sealer.body_commitment(body).encode(), _encode(entry.cid), _encode(entry.out),
                _encode(entry.seat), entry.seq, entry.ts,
            )
            return hashlib.sha256(prev.encode() + data).hexdigest()  # (sha256_hex's, a call fewer)
    elif kind == "create":
        body = sealing.create_form(body)
    fields = {
        "body": body, "cid": entry.cid, "kind": kind, "out": entry.out,
        "seat": entry.seat, "seq": entry.seq, "ts": entry.ts,
    }  # what to_builtins(entry) gives, without `digest`
    return sha256_hex(prev.encode(), canonical(fields))


def out_digest(
    outcome: Outcome, seq: int, audit_key: bytes | None = None,
    entry_key: sealing.Sealer | None = None,
    log_version: int = LOG_VERSION,
) -> str:
    """An entry's `out`: the outcome's digest, or (version 3 or 4) the commitment to it."""
    if audit_key is None:
        return outcome_digest(outcome)
    return (entry_key or _entry_sealer(audit_key, seq, log_version)).out_commitment(outcome)


_entry_sealer = sealing.entry_sealer


def seal(
    prev: str,
    *,
    seq: int,
    ts: int,
    kind: EntryKind,
    seat: int | None,
    cid: str | None,
    body: Any,
    outcome: Outcome,
    audit_key: bytes | None = None,
    log_version: int = LOG_VERSION,
    sealable: frozenset[str] = frozenset(),
) -> Entry:
    """An entry with its digests, after `prev`; `audit_key`, `log_version` and the game's
    `sealable` fields: the match's (version 3 or 4: its values sealed, domain/seal.py)."""
    # Version 3 or 4: the entry's key, ready for the salts of its body and its outcome
    # (made once for both digests).
    ekey = None if kind == "create" or audit_key is None else _entry_sealer(audit_key, seq, log_version, sealable)
    out = outcome_digest(outcome) if ekey is None else ekey.out_commitment(outcome)
    unsealed = Entry(seq=seq, ts=ts, kind=kind, seat=seat, cid=cid, body=body, out=out, digest="")
    return msgspec.structs.replace(unsealed, digest=entry_digest(prev, unsealed, audit_key, ekey))


# --- creating a match ------------------------------------------------------------------


def create_entry(
    rules: Game,
    *,
    match_id: str,
    variant: str | None,
    options: Mapping[str, Any],
    seed: bytes,
    ts: int,
    log_version: int | None = None,
    audit_key: bytes | None = None,
) -> Entry:
    """The first entry of a new match, under `log_version` (see the module docstring).
    Versions 3 and 4 need `audit_key` (32 secret random bytes, domain/seal.py); by
    default a match is of LOG_VERSION if an audit key is given, else of version 2. Raises
    OptionsError for bad variant or options."""
    if log_version is None:
        log_version = LOG_VERSION if audit_key is not None else 2
    variant = variant or rules.default_variant
    if variant not in {v.name for v in rules.variants}:
        known = ", ".join(v.name for v in rules.variants)
        raise OptionsError(f"unknown variant {variant!r} of {rules.name} (known: {known})")
    if log_version not in LOG_VERSIONS:
        raise ValueError(f"no log version {log_version}")
    opts = rules.configure(variant, options)
    if log_version >= 3 and (audit_key is None or len(audit_key) != 32):
        raise ValueError(f"a version-{log_version} match needs an audit key of 32 bytes")
    if log_version >= 2:
        entry = _create_v2(rules, match_id, variant, opts, seed, ts)
        if log_version >= 3:
            assert audit_key is not None
            body = {**entry.body, "log_version": log_version, "audit": audit_key.hex()}
            entry = seal(
                GENESIS_HEAD, seq=1, ts=ts, kind="create", seat=None, cid="create", body=body,
                outcome=Outcome(),
            )
        return entry
    setup = rules.make_setup(opts, Rng(seed, "setup"))
    # A game may take secret options (say, a host's own board): make_setup moved them into
    # the committed setup, and `public_options` leaves them out of what is recorded as the
    # match's options, which everyone is shown.
    opts = rules.public_options(opts)
    seed_hex = seed.hex()
    body = {
        "match": match_id,
        "game": rules.name,
        "variant": variant,
        "options": to_builtins(opts),
        "rules_version": rules.rules_version,
        "seed": seed_hex,
        "setup": setup,
        "commitment": commitment_of(seed_hex, setup),
    }
    return seal(
        GENESIS_HEAD, seq=1, ts=ts, kind="create", seat=None, cid="create", body=body,
        outcome=Outcome(),
    )


def _create_v2(rules: Game, match_id: str, variant: str, opts: Any, seed: bytes, ts: int) -> Entry:
    """A version-2 create entry: the setup is recorded (and committed) only if the host
    gave it; a seeded one is drawn when the last seat is taken."""
    draft = rules.make_setup(opts, Rng(STAND_IN_KEY, "setup"))  # only: is it given?
    given = None if rules.seeded_setup(draft) else draft
    seed_hex = seed.hex()
    body = {
        "match": match_id,
        "game": rules.name,
        "variant": variant,
        "options": to_builtins(rules.public_options(opts)),
        "rules_version": rules.rules_version,
        "log_version": 2,
        "seed": seed_hex,
        "setup": given,
        "commitment": commitment_of(seed_hex, given),
    }
    return seal(
        GENESIS_HEAD, seq=1, ts=ts, kind="create", seat=None, cid="create", body=body,
        outcome=Outcome(),
    )


def open_match(rules: Game, entry: Entry) -> MatchState:
    """The state after the `create` entry (checked against its digests)."""
    if entry.seq != 1 or entry.kind != "create":
        raise IntegrityError(entry.seq, None, "a log must begin with its create entry")
    body = entry.body
    if not isinstance(body, dict):
        raise IntegrityError(1, None, "the create entry has no body")
    if body.get("game") != rules.name:
        raise IntegrityError(1, None, f"the log is of {body.get('game')!r}, not {rules.name!r}")
    if entry.digest != entry_digest(GENESIS_HEAD, entry) or entry.out != outcome_digest(Outcome()):
        raise IntegrityError(1, None, "the create entry's digest does not match its content")
    version = body.get("log_version", 1)
    if version not in LOG_VERSIONS or isinstance(version, bool):
        raise IntegrityError(1, None, f"unknown log version {version!r}")
    try:
        opts = rules.configure(body["variant"], body["options"])
        seed = bytes.fromhex(body["seed"])
    except (KeyError, ValueError, TypeError) as exc:
        raise IntegrityError(1, None, f"the create entry is malformed: {exc}") from exc
    if commitment_of(body["seed"], body["setup"]) != body["commitment"]:
        raise IntegrityError(1, None, "the seed and setup do not match the published commitment")
    if version >= 3:
        audit = body.get("audit")
        if sealing.audit_key_of(body) is None and not sealing.is_stand_in(audit):
            raise IntegrityError(1, None, f"a version-{version} create entry records no audit key")
        ms = _open_v2(rules, entry, opts)
        return msgspec.structs.replace(ms, log_version=version, audit_key=sealing.audit_key_of(body))
    if version >= 2:
        return _open_v2(rules, entry, opts)
    return _opened(
        rules, entry, opts, setup=body["setup"],
        game_state=rules.initial_state(opts, body["setup"], seed),
    )


def _opened(rules: Game, entry: Entry, opts: Any, **rest: Any) -> MatchState:
    """The state after the create entry `entry`: what every log version records alike,
    with `rest` (the setup, the game's state, what a version adds)."""
    body = entry.body
    return MatchState(
        rules=rules,
        match_id=body["match"],
        game=rules.name,
        variant=body["variant"],
        options=opts,
        rules_version=body["rules_version"],
        commitment=body["commitment"],
        seed=body["seed"],
        created=entry.ts,
        names=(None,) * rules.seat_count(opts),
        seq=1,
        head=entry.digest,
        last_ts=entry.ts,
        **rest,
    )


def _open_v2(rules: Game, entry: Entry, opts: Any) -> MatchState:
    """The state after a version-2 create entry. Until every seat is taken the game's
    state is built on a stand-in (the given setup, or one drawn from STAND_IN_KEY, and
    that key): nothing in it depends on the seed, and no game event happens before the
    start, when it is built again on the real draw."""
    body = entry.body
    given = body["setup"]
    if given is not None and rules.seeded_setup(given):
        raise IntegrityError(
            1, None, "the create entry records a setup the game says is drawn: a drawn "
            "setup is drawn when the last seat is taken, not chosen at creation",
        )
    stand_in = given if given is not None else rules.make_setup(opts, Rng(STAND_IN_KEY, "setup"))
    seats = rules.seat_count(opts)
    return _opened(
        rules, entry, opts, setup=given,
        game_state=rules.initial_state(opts, stand_in, STAND_IN_KEY),
        log_version=2,
        entropy=(None,) * seats,
        setup_given=given is not None,
    )


def _draw(ms: MatchState) -> MatchState:
    """Version 2, every seat taken: the key from the seed and every seat's entropy, the
    setup drawn from it (unless given), and the game's state built on both."""
    key = draw_key(ms.seed, ms.entropy)
    setup = ms.setup if ms.setup_given else ms.rules.make_setup(ms.options, Rng(key, "setup"))
    return msgspec.structs.replace(
        ms, setup=setup, game_state=ms.rules.initial_state(ms.options, setup, key)
    )


def entropy_problem(entropy: Any) -> str | None:
    """Why a seat claim's `entropy` is refused (None: it is fine, or absent)."""
    if entropy is None:
        return None
    if not isinstance(entropy, str) or not 1 <= len(entropy) <= MAX_ENTROPY or not entropy.isprintable():
        return f"entropy is 1 to {MAX_ENTROPY} printable characters"
    return None


# --- folding ---------------------------------------------------------------------------


def _fold_game(ms: MatchState, events: Iterable[Any]) -> MatchState:
    return msgspec.structs.replace(ms, game_state=_evolved(ms.rules, ms.game_state, events))


def _evolved(rules: Game, gs: Any, events: Iterable[Any]) -> Any:
    """The game's state `gs` with `events` folded in."""
    for event in events:
        gs = rules.evolve(gs, event)
    return gs


def _finish_if_over(ms: MatchState, events: list[Any], gs: Any) -> MatchState:
    """`ms` ended if the game's state `gs` is over (then with `gs` as its game state:
    the caller's may not be in `ms` yet, see _decide)."""
    if ms.ended:
        return ms
    result = ms.rules.result(gs)
    if result is None:
        return ms
    events.append(MatchEnded(result))
    events.append(Revealed(seed=ms.seed, setup=ms.setup, commitment=ms.commitment))
    return msgspec.structs.replace(ms, game_state=gs, ended=True, result=result)


def _advance(ms: MatchState, now: int, events: list[Any]) -> MatchState:
    """Expire every deadline due at or before `now`."""
    for _ in range(MAX_EXPIRIES_PER_ENTRY):
        if not ms.started or ms.ended:
            return ms
        due = ms.rules.deadline(ms.game_state)
        if due is None or due > now:
            return ms
        produced = ms.rules.expire(ms.game_state, due)
        if not produced:
            raise RuntimeError(f"{ms.game}: expire() at {due} produced nothing")
        ms = _fold_game(ms, produced)
        events.extend(produced)
        ms = _finish_if_over(ms, events, ms.game_state)
    raise RuntimeError(f"{ms.game}: deadlines do not move on")


def _join(ms: MatchState, body: Any, now: int, events: list[Any]) -> tuple[MatchState, Rejection | None]:
    if ms.started:
        return ms, Rejection("match_started", "every seat is taken; the match has started")
    if not isinstance(body, dict):
        return ms, Rejection("bad_command", "a join needs a body")
    name = body.get("name")
    seat = body.get("seat")
    if not isinstance(name, str) or not 1 <= len(name) <= 40 or not name.isprintable():
        return ms, Rejection("bad_name", "a name is 1 to 40 printable characters")
    free = [i for i, n in enumerate(ms.names) if n is None]
    if seat is None:
        seat = free[0]
    elif not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < ms.seats:
        return ms, Rejection("no_such_seat", f"seats are 0 to {ms.seats - 1}")
    elif seat not in free:
        return ms, Rejection("seat_taken", f"seat {seat} is taken")
    if ms.log_version >= 2:
        problem = entropy_problem(body.get("entropy"))
        if problem is not None:
            return ms, Rejection("bad_entropy", problem)
        entropy = list(ms.entropy)
        entropy[seat] = body.get("entropy")
        ms = msgspec.structs.replace(ms, entropy=tuple(entropy))
    names = list(ms.names)
    names[seat] = name
    events.append(SeatTaken(seat=seat, name=name))
    ms = msgspec.structs.replace(ms, names=tuple(names))
    if all(n is not None for n in names):
        if ms.log_version >= 2:
            ms = _draw(ms)
        events.append(MatchStarted(at=now))
        ms = msgspec.structs.replace(ms, started=True)
        started = ms.rules.start(ms.game_state, now)
        ms = _fold_game(ms, started)
        events.extend(started)
        ms = _finish_if_over(ms, events, ms.game_state)
    return ms, None


def decode_command(rules: Game, body: Any) -> Any:
    """The game's typed command from JSON-ready builtins; msgspec.ValidationError if not.

    A command type that is a union of tagged Structs is converted to the Struct its tag
    names directly when the body names one: msgspec keeps what it learnt of a Struct type
    on the class, but of a union on no object, and reads a union's members again at every
    conversion (ten times the cost of the conversion). The Struct checks the tag as the
    union does, and its errors are the union's; any other body goes to the union."""
    kind = rules.command_type
    known = _members_by_rules.get(id(rules))
    if known is None or known[0] is not kind:
        known = (kind, _tagged_members(kind))
        if len(_members_by_rules) < 64:
            _members_by_rules[id(rules)] = known
    by_tag = known[1]
    if by_tag and type(body) is dict:
        field, members = by_tag
        tag = body.get(field)
        if type(tag) is str and tag in members:
            return msgspec.convert(body, members[tag])
    return msgspec.convert(body, kind)


_members_by_rules: dict[int, tuple[Any, tuple[str, dict[str, type]] | None]] = {}
"""Each game's command type and `_tagged_members` of it, by its rules' identity (a union's
hash is its members' again at every call: 140 of a submission's 640 ns of decoding). Kept
with the type they were found for, and used only for that type: rules given another since
(or other rules that got the same id) are looked up anew. At most 64 kept."""


@lru_cache(maxsize=64)
def _tagged_members(kind: Any) -> tuple[str, dict[str, type]] | None:
    """For a union of Structs all tagged by the same field with string tags: that field
    and each tag's Struct (None for any other type)."""
    members = get_args(kind) if get_origin(kind) in (Union, UnionType) else ()
    if not members or not all(isinstance(m, type) and issubclass(m, msgspec.Struct) for m in members):
        return None
    configs = [m.__struct_config__ for m in members]
    fields = {c.tag_field for c in configs}
    if len(fields) != 1 or None in fields or not all(isinstance(c.tag, str) for c in configs):
        return None
    return str(fields.pop()), {str(c.tag): m for c, m in zip(configs, members, strict=True)}


def step(
    ms: MatchState,
    *,
    kind: EntryKind,
    seat: int | None,
    body: Any,
    ts: int,
) -> tuple[MatchState, Outcome]:
    """Decide one (non-create) entry against the state: the new state and the outcome.

    Bookkeeping (seq, head) is left to `propose`/`apply`."""
    ms, gs, now, outcome = _decide(ms, kind, seat, body, ts)
    return msgspec.structs.replace(ms, game_state=gs, last_ts=now), outcome


def _decide(
    ms: MatchState, kind: EntryKind, seat: int | None, body: Any, ts: int, command: Any = None
) -> tuple[MatchState, Any, int, Outcome]:
    """`step` but for the new state's game state and `last_ts`, given apart (the game's
    state after the entry, `gs`, and the entry's time, `now`), so that the callers set
    them with their own bookkeeping in one copy of the state (a copy of it here too
    cost 0.7% of a fold's instructions). `command`: the body's typed command, when the
    caller has it (`propose`)."""
    now = max(ts, ms.last_ts)
    events: list[Any] = []
    rejection: Rejection | None = None
    warnings: tuple[str, ...] = ()
    ms = _advance(ms, now, events)
    gs = ms.game_state
    if kind == "join":
        ms, rejection = _join(ms, body, now, events)
        gs = ms.game_state
    elif kind == "command":
        if ms.ended:
            rejection = Rejection("match_over", "the match is over")
        elif not ms.started:
            rejection = Rejection("not_started", "the match starts when every seat is taken")
        elif seat is None or not 0 <= seat < len(ms.names):  # (ms.seats without its call)
            rejection = Rejection("not_a_player", "only a seated player can send commands")
        else:
            try:
                if command is None:
                    command = decode_command(ms.rules, body)
            except msgspec.ValidationError as exc:
                rejection = Rejection("bad_command", str(exc))
            else:
                decision = ms.rules.decide(gs, seat, command, now)
                # (Accepted asked for first: an isinstance() that fails against a msgspec
                # Struct asks its metaclass for __instancecheck__, 0.1 us an entry.)
                if isinstance(decision, Accepted):
                    if decision.state is None:
                        gs = _evolved(ms.rules, gs, decision.events)
                    else:  # (the rules folded them to decide: Accepted.state)
                        gs = decision.state
                    events.extend(decision.events)
                    warnings = decision.warnings
                    ms = _finish_if_over(ms, events, gs)
                else:
                    assert isinstance(decision, Rejection)
                    rejection = decision
    elif kind == "tick":
        pass
    else:
        rejection = Rejection("bad_entry", f"unknown entry kind {kind!r}")
    return ms, gs, now, Outcome(events=tuple(events), rejection=rejection, warnings=warnings)


def propose(
    ms: MatchState,
    *,
    kind: EntryKind,
    seat: int | None,
    cid: str | None,
    body: Any,
    ts: int,
    command: Any = None,
) -> tuple[Entry, MatchState, Outcome]:
    """Decide a new entry and seal it for appending after the state's head. A command
    whose caller decoded it already (`decode_command`, to check it and to give its body
    in canonical form: `to_builtins` of it) may give it as `command`, not decoded again."""
    new, gs, now, outcome = _decide(ms, kind, seat, body, ts, command)
    entry = seal(
        ms.head, seq=ms.seq + 1, ts=now, kind=kind, seat=seat, cid=cid,
        body=body, outcome=outcome, audit_key=ms.audit_key, log_version=ms.log_version,
        sealable=sealing.sealable_of(ms.rules),
    )
    new = msgspec.structs.replace(new, game_state=gs, seq=entry.seq, head=entry.digest, last_ts=now)
    return entry, new, outcome


def apply(ms: MatchState, entry: Entry) -> tuple[MatchState, Outcome]:
    """Fold an entry read from the log, checking that it is the one its digests say.
    (An IntegrityError names the round of the state before the entry.)"""
    if entry.seq != ms.seq + 1:
        raise IntegrityError(entry.seq, ms.rules.round_of(ms.game_state), f"expected entry {ms.seq + 1} here")
    audit_key = ms.audit_key
    ekey = None if audit_key is None else _entry_sealer(
        audit_key, entry.seq, ms.log_version, sealing.sealable_of(ms.rules)
    )
    if entry.digest != entry_digest(ms.head, entry, audit_key, ekey):
        raise IntegrityError(
            entry.seq, ms.rules.round_of(ms.game_state),
            "the entry's digest does not match its content or the chain",
        )
    if entry.kind == "create":
        raise IntegrityError(entry.seq, ms.rules.round_of(ms.game_state), "a second create entry")
    new, gs, now, outcome = _decide(ms, entry.kind, entry.seat, entry.body, entry.ts)
    if (outcome_digest(outcome) if ekey is None else ekey.out_commitment(outcome)) != entry.out:
        raise IntegrityError(
            entry.seq, ms.rules.round_of(ms.game_state),
            "the recorded outcome differs from the one recomputed",
        )
    return msgspec.structs.replace(new, game_state=gs, seq=entry.seq, head=entry.digest, last_ts=now), outcome


def fold(rules: Game, entries: Iterable[Entry]) -> MatchState:
    """The state at the end of a whole log."""
    it = iter(entries)
    ms = open_match(rules, next(it))
    for entry in it:
        ms, _ = apply(ms, entry)
    return ms


def deadline(ms: MatchState) -> int | None:
    """When a tick should next be appended (None: nothing is waiting on time)."""
    if not ms.started or ms.ended:
        return None
    due: int | None = ms.rules.deadline(ms.game_state)
    return due


# --- whole-log verification ------------------------------------------------------------


class Verified(msgspec.Struct, frozen=True):
    ok: bool
    entries: int
    commitment: str | None = None
    failure: str | None = None
    failed_seq: int | None = None
    failed_round: int | None = None
    # "seed": the setup is what the rules' generator draws from the revealed seed (log
    # version 2: from the seed and the seats' entropy); "host": the game says it was given
    # (a host's own maze), not drawn; None: not drawn yet (the log ends before the start).
    setup: str | None = None
    log_version: int = 1
    # Version 2: how many seats gave entropy of their own, of how many.
    entropy_given: int = 0
    seats: int = 0


def verify(rules_for: Mapping[str, Game], entries: list[Entry]) -> Verified:
    """Recompute a whole log: chain, outcomes, commitment, rules version.

    `rules_for` maps game names to rules modules (the registry)."""
    if not entries:
        return Verified(False, 0, failure="the log is empty")
    first = entries[0]
    game = first.body.get("game") if isinstance(first.body, dict) else None
    rules = rules_for.get(game) if isinstance(game, str) else None
    if rules is None:
        return Verified(False, len(entries), failure=f"unknown game {game!r}", failed_seq=1)
    recorded_version = first.body.get("rules_version")
    if recorded_version != rules.rules_version:
        return Verified(
            False, len(entries), failed_seq=1,
            failure=f"the match was played under rules {recorded_version}; this build has {rules.rules_version}",
        )
    try:
        ms = open_match(rules, first)
        setup = _setup_source(rules, ms) if ms.log_version == 1 else None
        for entry in entries[1:]:
            ms, _ = apply(ms, entry)
    except IntegrityError as exc:
        return Verified(
            False, len(entries), commitment=first.body.get("commitment"),
            failure=str(exc), failed_seq=exc.seq, failed_round=exc.round,
        )
    if ms.log_version >= 2:
        # The fold drew the setup (and the key of every later draw) from the revealed
        # seed and the entropy the seat claims recorded, as the server had to.
        setup = "host" if ms.setup_given else "seed" if ms.started else None
    return Verified(
        True, len(entries), commitment=ms.commitment, setup=setup, log_version=ms.log_version,
        entropy_given=sum(e is not None for e in ms.entropy), seats=ms.seats,
    )


def _setup_source(rules: Game, ms: MatchState) -> str:
    """Whether the recorded setup is what the rules draw from the seed ("seed"), or one
    the game says was given ("host"); IntegrityError if it claims the seed and is not.

    The commitment shows the setup did not change during the match; this shows it was
    not picked by hand either (under the recorded rules version's generator)."""
    if not rules.seeded_setup(ms.setup):
        return "host"
    drawn = rules.make_setup(ms.options, Rng(bytes.fromhex(ms.seed), "setup"))
    if canonical(drawn) != canonical(ms.setup):
        raise IntegrityError(
            1, None, f"the setup is not what the seed draws under rules {ms.rules_version}"
        )
    return "seed"


__all__ = [
    "ENGINE_EVENTS",
    "Entry",
    "IntegrityError",
    "MatchEnded",
    "MatchStarted",
    "MatchState",
    "Outcome",
    "Revealed",
    "SeatTaken",
    "Verified",
    "apply",
    "create_entry",
    "deadline",
    "draw_key",
    "entropy_problem",
    "fold",
    "open_match",
    "propose",
    "step",
    "verify",
]
