"""The public log of a finished match that keeps secrets, and its verification.

A match of log version 3 or 4 (domain/seal.py) commits to every command body and outcome with
salts only its audit key derives. When it ends, its log is published as `public_log`
makes it: every entry as stored, except that what the game declares sealed
(`GameViews.sealed`) is replaced by its commitment, and each entry says how to open the
rest (`open`: the entry's key, which opens all of it, or the salts of what is shown). The
audit key itself is shown only by its digest.

`verify_public` checks such a log without the audit key: the chain, the commitment and
setup, and every outcome recomputed. Where an entry withholds values of its command, it
tries every value the game says they could have had, and each of the possible matches
must show the public the same: the same events to a spectator after the match, and where
the outcome is shown, the same outcome, which must be the one recorded. So no withheld
value changed anything anyone may see. It also checks that the log withholds what the
game's declaration says, neither more nor less.

With the audit key and the log in clear, `check_unsealed` verifies the clear log as the
engine does and rebuilds the public log from it: a published copy must be the same, byte
for byte, so every commitment in it opens to the clear value. See docs/fairness.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from domain import engine
from domain import seal as sealing
from domain.canonical import canonical, sha256_hex, to_builtins
from domain.contract import Game
from domain.engine import Entry, IntegrityError, MatchState, Outcome
from projections.common import project_events, sealed_of
from projections.contract import SPECTATOR, GameViews, Logged, Withheld

JOINT_LIMIT = 5_000
"""The most possible matches the verifier steps through one entry while it tries the
withheld values in every combination; beyond, it tries each withheld value alone."""
MAX_WORLDS = 50_000
"""The most possible matches it follows at once when it tries each value alone; beyond,
it gives up and says so."""


class _TooMany(Exception):
    """Every combination of the withheld values is too many to try."""


class PublicEntry(Entry, frozen=True, kw_only=True):
    """One entry of a public log: the entry as stored, with withheld values replaced by
    {"sealed": commitment}, and `open`: {"key": hex} (the entry's key: everything in it
    is shown) or {"salts": {path: hex}} (the salts of the values shown; a path without
    one is withheld), or None (the create entry)."""

    open: Any = None

    def entry(self) -> Entry:
        return Entry(
            seq=self.seq, ts=self.ts, kind=self.kind, seat=self.seat, cid=self.cid,
            body=self.body, out=self.out, digest=self.digest,
        )


def decode_public(lines: Sequence[bytes]) -> list[Entry]:
    """Log entries from NDJSON lines: plain entries, or those of a public log (ValueError
    naming the line of one that is neither)."""
    decoded: list[PublicEntry] = []
    for number, line in enumerate(lines, 1):
        try:
            decoded.append(msgspec.json.decode(line, type=PublicEntry))
        except msgspec.DecodeError as exc:
            raise ValueError(f"line {number}: not a log entry: {exc}") from exc
    if is_public_log(decoded):
        return list(decoded)
    return [e.entry() for e in decoded]


def is_public_log(entries: Sequence[Any]) -> bool:
    """Whether a log (its create entry first) is a public log whose audit key is withheld."""
    if not entries:
        return False
    body = entries[0].body
    return isinstance(body, dict) and sealing.is_stand_in(body.get("audit"))


def fold_clear(rules: Game, entries: Sequence[Entry]) -> list[Logged]:
    """A whole clear log folded by the engine (IntegrityError if it does not fold)."""
    ms = engine.open_match(rules, entries[0])
    logged: list[Logged] = []
    for entry in entries[1:]:
        after, outcome = engine.apply(ms, entry)
        logged.append(Logged(entry=entry, before=ms, after=after, outcome=outcome))
        ms = after
    return logged


def public_log(rules: Game, views: GameViews, entries: Sequence[Entry]) -> list[PublicEntry]:
    """The public form of a whole clear log of version 3 or 4 (ValueError for another
    log, or one whose audit key is not in it)."""
    key = sealing.audit_key_of(entries[0].body) if entries else None
    if key is None:
        raise ValueError("not a log of version 3 or 4 with its audit key")
    logged = fold_clear(rules, entries)
    version = logged[0].before.log_version if logged else engine.LOG_VERSION
    sealable = sealing.sealable_of(rules)
    withheld = sealed_of(views).withheld(logged)
    first = entries[0]
    out = [
        PublicEntry(
            seq=first.seq, ts=first.ts, kind=first.kind, seat=first.seat, cid=first.cid,
            body=sealing.create_form(first.body), out=first.out, digest=first.digest,
        )
    ]
    for item in logged:
        e = item.entry
        ekey = sealing.sealer(sealing.entry_key(key, e.seq), version, sealable)
        held = withheld.get(e.seq)
        body: Any = e.body
        opened: dict[str, Any]
        if held is None or not (held.body or held.fields or held.out):
            opened = {"key": ekey.key.hex()}
        else:
            salts: dict[str, str] = {}
            if not held.out:
                salts[sealing.OUT] = sealing.salt(ekey, sealing.OUT).hex()
            if e.kind == "command":
                if held.body:
                    body = sealing.body_form(ekey, e.body)
                else:
                    salts[sealing.BODY] = sealing.salt(ekey, sealing.BODY).hex()
                    inner = sealing.inner_form(ekey, e.body)
                    if isinstance(e.body, dict):
                        body = {}
                        for name, value in e.body.items():
                            if name in held.fields:
                                if not sealing.committed(version, sealable, name):
                                    raise ValueError(f"the rules of {rules.name} never seal a command's {name!r}")
                                body[name] = inner[name]
                            else:
                                body[name] = value
                                if sealing.committed(version, sealable, name):  # (else as it is)
                                    path = sealing.field_path(name)
                                    salts[path] = sealing.salt(ekey, path).hex()
            opened = {"salts": salts}
        out.append(
            PublicEntry(
                seq=e.seq, ts=e.ts, kind=e.kind, seat=e.seat, cid=e.cid, body=body,
                out=e.out, digest=e.digest, open=opened,
            )
        )
    return out


# --- verifying a public log -------------------------------------------------------------


class PublicVerified(msgspec.Struct, frozen=True):
    ok: bool
    entries: int
    commitment: str | None = None
    failure: str | None = None
    failed_seq: int | None = None
    failed_round: int | None = None
    setup: str | None = None
    withheld: int = 0  # entries that withhold something
    tried: int = 0  # the most possible matches stepped through one entry
    # Whether each withheld value was tried alone (with the others as in one possible
    # match), every combination being too many to try (JOINT_LIMIT).
    alone: bool = False
    entropy_given: int = 0  # how many seats gave entropy of their own, of `seats`
    seats: int = 0


class _Opening:
    """How one public entry of a log of version `version` opens: its salts, and what it
    withholds (`sealable`: the game's, sealing.sealable_of)."""

    def __init__(self, entry: PublicEntry, version: int, sealable: frozenset[str] = frozenset()) -> None:
        self.entry = entry
        self.version, self.sealable = version, sealable
        self.key: sealing.Sealer | None = None
        self.salts: dict[str, bytes] = {}
        opened = entry.open
        if isinstance(opened, dict) and set(opened) == {"key"} and isinstance(opened["key"], str):
            self.key = sealing.sealer(bytes.fromhex(opened["key"]), version, sealable)
        elif isinstance(opened, dict) and set(opened) == {"salts"} and isinstance(opened["salts"], dict):
            self.salts = {str(p): bytes.fromhex(str(s)) for p, s in opened["salts"].items()}
        else:
            raise ValueError("its `open` is neither a key nor salts")

    def salt(self, path: str) -> bytes | None:
        if self.key is not None:
            return sealing.salt(self.key, path)
        return self.salts.get(path)

    def withheld(self) -> Withheld:
        out = self.salt(sealing.OUT) is None
        if self.entry.kind != "command":
            return Withheld(out=out)
        if self.salt(sealing.BODY) is None:
            return Withheld(body=True, out=out)
        body = self.entry.body
        fields = ()
        if isinstance(body, dict):
            fields = tuple(
                k for k in body
                if sealing.committed(self.version, self.sealable, k) and self.salt(sealing.field_path(k)) is None
            )
        return Withheld(fields=fields, out=out)

    def body_form(self) -> Any:
        """The command body as the chained digest covers it."""
        body = self.entry.body
        outer = self.salt(sealing.BODY)
        if outer is None:
            if not sealing.is_stand_in(body):
                raise ValueError("its body is withheld but not shown as a commitment")
            return body
        if isinstance(body, dict):
            inner = {}
            for name, value in body.items():
                if not sealing.committed(self.version, self.sealable, name):
                    inner[name] = value  # (version 4: a field never sealed, as it is)
                    continue
                s = self.salt(sealing.field_path(name))
                if s is None:
                    if not sealing.is_stand_in(value):
                        raise ValueError(f"its body's {name!r} is withheld but not shown as a commitment")
                    inner[name] = value
                else:
                    inner[name] = sealing.stand_in(sealing.commit(s, value))
            return sealing.stand_in(sealing.commit(outer, inner))
        return sealing.stand_in(sealing.commit(outer, body))

    def digest(self, prev: str) -> str:
        fields = to_builtins(self.entry.entry())
        del fields["digest"]
        if self.entry.kind == "command":
            fields["body"] = self.body_form()
        return sha256_hex(prev.encode(), canonical(fields))


def _world_key(sealed: Any, ms: MatchState) -> bytes:
    return canonical([to_builtins(sealed.forget(ms.game_state)), ms.ended, ms.result, ms.setup])


def verify_public(
    games: Mapping[str, tuple[Game, GameViews]], entries: Sequence[PublicEntry]
) -> PublicVerified:
    """Verify a public log (see the module); `games` maps game names to rules and views."""
    return _walk(games, entries)[0]


def public_history(
    games: Mapping[str, tuple[Game, GameViews]], entries: Sequence[PublicEntry]
) -> tuple[PublicVerified, list[Logged]]:
    """Verify a public log and fold it: (what verify_public says, and every entry folded
    as far as it verifies, each in one of its possible matches, with its outcome there).
    What the withheld values were is unknown, so only what every possible match shows
    the public (a spectator's projection) may be read from it."""
    return _walk(games, entries)


def _walk(
    games: Mapping[str, tuple[Game, GameViews]], entries: Sequence[PublicEntry]
) -> tuple[PublicVerified, list[Logged]]:
    logged: list[Logged] = []
    try:
        return _verify(games, entries, logged, alone=False), logged
    except _TooMany:
        logged.clear()
        return _verify(games, entries, logged, alone=True), logged


def _verify(
    games: Mapping[str, tuple[Game, GameViews]],
    entries: Sequence[PublicEntry],
    logged: list[Logged],
    *,
    alone: bool,
) -> PublicVerified:
    """The walk of verify_public. The possible matches (`worlds`) are the ones the
    withheld values so far give: the first is the one followed (`logged`). In every
    combination (`alone` False), an entry that withholds values of its command branches
    every possible match; each value alone (`alone` True), it branches only the first,
    and the others take the first's value there, so each withheld value is tried with
    the others as in the first possible match. Either way a possible match is dropped
    once it is the same as another (the game's `forget`)."""
    if not entries:
        return PublicVerified(False, 0, failure="the log is empty")
    first = entries[0]
    body = first.body if isinstance(first.body, dict) else {}
    game = games.get(str(body.get("game")))
    if game is None:
        return PublicVerified(False, len(entries), failure=f"unknown game {body.get('game')!r}", failed_seq=1)
    rules, views = game
    if body.get("rules_version") != rules.rules_version:
        return PublicVerified(
            False, len(entries), failed_seq=1,
            failure=f"the match was played under rules {body.get('rules_version')}; this build has {rules.rules_version}",
        )
    sealed = sealed_of(views)
    try:
        ms = engine.open_match(rules, first.entry())
    except IntegrityError as exc:
        return PublicVerified(False, len(entries), failure=str(exc), failed_seq=exc.seq)
    if ms.log_version < 3:
        return PublicVerified(False, len(entries), failed_seq=1, failure="not a public log of version 3 or 4")
    worlds: list[MatchState] = [ms]
    shown: dict[int, Withheld] = {}
    most = 1
    for public in entries[1:]:
        round_ = rules.round_of(worlds[0].game_state) if worlds[0].started else None

        def fail(message: str, seq: int = public.seq, round_: int | None = round_) -> PublicVerified:
            return PublicVerified(
                False, len(entries), commitment=ms.commitment, failure=f"entry {seq}"
                + (f" (round {round_})" if round_ is not None else "") + f": {message}",
                failed_seq=seq, failed_round=round_,
            )

        head = worlds[0]
        if public.seq != head.seq + 1:
            return fail(f"expected entry {head.seq + 1} here")
        if public.kind == "create":
            return fail("a second create entry")
        try:
            opening = _Opening(public, ms.log_version, sealing.sealable_of(rules))
            if opening.digest(head.head) != public.digest:
                return fail("the entry's digest does not match its content or the chain")
        except (ValueError, TypeError) as exc:
            return fail(f"the entry is malformed: {exc}")
        held = opening.withheld()
        if held.body or held.fields or held.out:
            shown[public.seq] = held
        out_salt = opening.salt(sealing.OUT)
        candidates: list[tuple[MatchState, MatchState, Outcome]] = []
        branching = held.body or held.fields
        first_bodies: list[Any] = []
        for n, world in enumerate(worlds):
            if branching and (n == 0 or not alone):
                bodies = list(
                    sealed.alternatives(world, public.seat, None if held.body else public.body, held.fields)
                )
                if not bodies:
                    return fail("it withholds what the game says is never withheld")
                if n == 0:
                    first_bodies = bodies
            elif branching:
                bodies = first_bodies[:1]
            else:
                bodies = [public.body]
            if not alone and len(candidates) + len(bodies) > JOINT_LIMIT:
                raise _TooMany
            for candidate in bodies:
                after, outcome = engine.step(
                    world, kind=public.kind, seat=public.seat, body=candidate, ts=public.ts
                )
                after = msgspec.structs.replace(after, seq=public.seq, head=public.digest)
                candidates.append((world, after, outcome))
        seen: bytes | None = None
        if out_salt is not None:
            matching = sum(sealing.commit(out_salt, o) == public.out for _w, _a, o in candidates)
            if matching == 0:
                return fail("the recorded outcome differs from the one recomputed")
            if matching < len(candidates):
                return fail("what it shows the public depends on what the log withholds")
        for _world, after, outcome in candidates:
            if out_salt is not None:
                continue
            public_part = canonical(
                [
                    project_events(views, after, outcome, SPECTATOR),
                    outcome.rejection.code if outcome.rejection is not None else None,
                ]
            )
            if seen is None:
                seen = public_part
            elif public_part != seen:
                return fail("what it shows the public depends on what the log withholds")
        world0, after0, outcome0 = candidates[0]
        logged.append(Logged(entry=public.entry(), before=world0, after=after0, outcome=outcome0))
        kept: dict[bytes, MatchState] = {}  # (the first stays first)
        for _world, after, _outcome in candidates:
            kept.setdefault(_world_key(sealed, after), after)
        worlds = list(kept.values())
        most = max(most, len(candidates))
        if len(worlds) > MAX_WORLDS:
            return fail(
                f"more than {MAX_WORLDS} possible matches to follow for what the log withholds; "
                "verify it with the audit key instead"
            )
    declared = {seq: w for seq, w in sealed.withheld(logged).items() if w.body or w.fields or w.out}
    for seq in sorted(set(declared) | set(shown)):
        want, got = declared.get(seq), shown.get(seq)
        if want is None or got is None or want.body != got.body or want.out != got.out or (
            not want.body and set(want.fields) != set(got.fields)
        ):
            entry = logged[seq - 2]
            round_ = rules.round_of(entry.before.game_state) if entry.before.started else None
            return PublicVerified(
                False, len(entries), commitment=ms.commitment, failed_seq=seq, failed_round=round_,
                failure=f"entry {seq}" + (f" (round {round_})" if round_ is not None else "")
                + f": it withholds {_what(got)}, where the rules keep {_what(want)} sealed",
            )
    final = worlds[0]
    setup = None
    if final.log_version >= 2:
        setup = "host" if final.setup_given else "seed" if final.started else None
    return PublicVerified(
        True, len(entries), commitment=final.commitment, setup=setup, withheld=len(shown), tried=most,
        alone=alone, entropy_given=sum(e is not None for e in final.entropy), seats=final.seats,
    )


def _what(held: Withheld | None) -> str:
    if held is None:
        return "nothing"
    parts = []
    if held.body:
        parts.append("its command")
    elif held.fields:
        parts.append("its command's " + ", ".join(held.fields))
    if held.out:
        parts.append("its outcome")
    return " and ".join(parts) or "nothing"


# --- with the audit key ---------------------------------------------------------------------


class Unsealed(msgspec.Struct, frozen=True):
    ok: bool
    failure: str | None = None


def check_unsealed(
    rules: Game, views: GameViews, clear: Sequence[Entry], key: bytes,
    published: Sequence[PublicEntry] | None = None,
) -> Unsealed:
    """With the audit key `key`: the clear log is this match's (its audit key is `key`)
    and the public log made from it is `published` (when given), entry by entry."""
    if not clear:
        return Unsealed(False, "the log is empty")
    recorded = sealing.audit_key_of(clear[0].body)
    if recorded is None:
        return Unsealed(False, "the log does not hold its audit key in clear")
    if recorded != key:
        return Unsealed(False, "the audit key is not this match's")
    try:
        rebuilt = public_log(rules, views, clear)
    except IntegrityError as exc:
        return Unsealed(False, str(exc))
    checked = verify_public({rules.name: (rules, views)}, rebuilt)
    if not checked.ok:
        return Unsealed(False, f"the public log it makes does not verify: {checked.failure}")
    if published is not None:
        for made, given in zip(rebuilt, published, strict=False):
            if canonical(made) != canonical(given):
                return Unsealed(
                    False, f"entry {given.seq}: the published log differs from the one the clear log makes "
                    "(a commitment does not open to the clear value, or a value is shown or withheld wrongly)",
                )
        if len(rebuilt) != len(published):
            return Unsealed(False, f"the published log has {len(published)} entries, the clear one {len(rebuilt)}")
    return Unsealed(True)


def audit_key_matches(entries: Sequence[Any], key: bytes) -> bool:
    """Whether `key` is the audit key a log's create entry records (in clear or by its
    digest)."""
    if not entries or not isinstance(entries[0].body, dict):
        return False
    audit = entries[0].body.get("audit")
    if isinstance(audit, str):
        return sealing.audit_key_of(entries[0].body) == key
    return isinstance(audit, dict) and sealing.is_stand_in(audit) and audit[sealing.SEALED] == sealing.audit_digest(key)


__all__ = [
    "MAX_WORLDS",
    "PublicEntry",
    "PublicVerified",
    "Unsealed",
    "audit_key_matches",
    "check_unsealed",
    "fold_clear",
    "is_public_log",
    "public_history",
    "public_log",
    "verify_public",
]
