"""Salted commitments: how a log of version 3 or 4 keeps a value secret for good yet verifiable.

A match of log version 3 or 4 has an audit key: 32 random bytes made when the match is
created, recorded in its create entry, handed to whoever created it, and never published.
Every value the rules might keep secret after the match enters the log's digests only
through a salted commitment:

    entry key of seq  = HMAC-SHA256(audit key, "daedalus-entry-v1\\n" || seq)
    salt(seq, path)   = HMAC-SHA256(entry key of seq, path)                  (version 3)
                      = the first 16 bytes of SHA-256(entry key of seq || path)  (version 4)
    commit(salt, v)   = SHA-256("daedalus-seal-v1\\n" || salt || canonical JSON of v)

(`seq` in decimal, a path in UTF-8.) Version 4 derives a salt with one SHA-256 rather
than an HMAC's two, and keeps 16 bytes of it (128 bits, as unguessable as a salt need
be; a digest cut short cannot be extended to another path's salt, which a whole SHA-256
of a secret prefix could). A commitment is checked the same way in both, with the salt
it is shown with.

The paths of an entry are `body` for a command's whole body, `body/<field>` for each
top-level field of a body that is an object, and `out` for the entry's outcome. An
entry's `out` digest is commit(salt(seq, "out"), outcome), and its chained digest covers
its command body as {"sealed": commit(salt(seq, "body"), inner)}, where `inner` is the
body with a field's value as {"sealed": commit(salt(seq, "body/<field>"), value)} (a
body that is not an object is its own inner form). In version 3 every field of the body
is so; in version 4 only the fields the game declares it may keep secret
(`sealable_fields` of its rules, say Five-Card Trick's `block`), the others being in
the inner form as they are. So a whole body can be withheld (its outer commitment stands
in for it, its fields' names included), or some of its (sealable) fields.
The create entry's digest covers the audit key as {"sealed": SHA-256("daedalus-audit-v1\\n"
|| key)}.

So a value can be shown (with its salt: anyone recomputes the commitment, and the chain
holds) or withheld (its commitment stands in its place: the chain still holds, and the
value cannot be guessed from it, the salt being unknown). Publishing an entry's key opens
every value of that entry at once. The audit key derives every salt, so its holder can
check every commitment of a log whose values it is given. See docs/fairness.md.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Any

import msgspec

from domain.canonical import canonical, canonical_encoder, sha256_hex

AUDIT_PREFIX = b"daedalus-audit-v1\n"
ENTRY_PREFIX = b"daedalus-entry-v1\n"
SEAL_PREFIX = b"daedalus-seal-v1\n"
SEALED = "sealed"
"""The key of a withheld value's stand-in: {"sealed": <commitment>}."""
OUT = "out"
BODY = "body"


def field_path(name: Any) -> str:
    return f"{BODY}/{name}"


def audit_digest(key: bytes) -> str:
    """What the log shows of the audit key: its SHA-256 (the key is 32 random bytes)."""
    return sha256_hex(AUDIT_PREFIX, key)


# --- HMAC-SHA256 from a key's two hash states ---------------------------------------------
#
# HMAC(k, m) = SHA-256((k ^ opad) || SHA-256((k ^ ipad) || m)), k padded to 64 bytes: the
# SHA-256 states after the two padded keys depend on the key alone. An entry derives eight
# HMACs under two keys (its own key under the audit key; its salts under its own key), so
# each key's two states are made once and copied per message: two SHA-256 blocks a message
# instead of four, and no OpenSSL MAC context set up per call (hmac.digest each time: 1.2 us
# a message here, 0.5 us this way; callgrind: 23,600 instructions against 12,700).

_encode = canonical_encoder.encode
_BODY_PATH = BODY.encode()
_OUT_PATH = OUT.encode()
_IPAD = bytes(b ^ 0x36 for b in range(256))
_OPAD = bytes(b ^ 0x5C for b in range(256))
_SEAL = hashlib.sha256(SEAL_PREFIX)
# Every commitment starts with the prefix: the state after it copied (75 ns) rather than
# a new hash object made from the prefix joined to the rest (110 ns and a join).


class _Commits:
    """What an entry's sealer makes of its salts, whichever version derives them (Keyed,
    Prefixed): a command body's inner form and commitment, and an outcome's commitment,
    in one call each (once an entry folded or sealed)."""

    __slots__ = ()

    def inner_form(self, body: dict[Any, Any]) -> dict[Any, Any]:
        raise NotImplementedError

    def body_commitment(self, body: Any) -> str:
        """The commitment `body_form` stands in for the body with."""
        raise NotImplementedError

    def out_commitment(self, outcome: Any) -> str:
        """`out_commitment(self, outcome)`."""
        raise NotImplementedError

    def body_form(self, body: Any) -> dict[str, str]:
        """`body_form(self, body)`."""
        return {SEALED: self.body_commitment(body)}


class Keyed(_Commits):
    """HMAC-SHA256 under one key, for many messages: the same bytes as
    hmac.digest(key, message, "sha256")."""

    __slots__ = ("_inner", "_outer", "key")

    def __init__(self, key: bytes) -> None:
        self.key = key
        padded = (hashlib.sha256(key).digest() if len(key) > 64 else key).ljust(64, b"\0")
        self._inner = hashlib.sha256(padded.translate(_IPAD))
        self._outer = hashlib.sha256(padded.translate(_OPAD))

    def digest(self, message: bytes) -> bytes:
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()

    def salt(self, path: str) -> bytes:
        """The salt of the value at `path` of the entry whose key this is."""
        return self.digest(path.encode())

    def commitment(self, path: bytes, value: Any) -> str:
        """commit(salt at `path`, value), in one call (the salt's HMAC written out here
        saves five Python calls a value; `inner_form` writes it out once more)."""
        inner = self._inner.copy()
        inner.update(path)
        outer = self._outer.copy()
        outer.update(inner.digest())
        sealed = _SEAL.copy()
        sealed.update(outer.digest())
        sealed.update(_encode(value))
        return sealed.hexdigest()

    def body_commitment(self, body: Any) -> str:
        return self.commitment(_BODY_PATH, self.inner_form(body) if isinstance(body, dict) else body)

    def out_commitment(self, outcome: Any) -> str:
        return self.commitment(_OUT_PATH, outcome)

    def inner_form(self, body: dict[Any, Any]) -> dict[Any, dict[str, str]]:
        # The commitment of every field written out in one loop rather than a call of
        # `commitment` a field, and a body's names (read from JSON: strings) looked up in
        # a plain dict of their paths: 5.7 -> 4.4 us for a Five-Card Trick submission.
        ipad, opad, paths, seal_, encode = self._inner, self._outer, _FIELD_PATHS, _SEAL, _encode
        form = {}
        for name, value in body.items():
            path = paths.get(name) if type(name) is str else None
            if path is None:
                path = _field_path_bytes(name)
            inner = ipad.copy()
            inner.update(path)
            outer = opad.copy()
            outer.update(inner.digest())
            sealed = seal_.copy()
            sealed.update(outer.digest())
            sealed.update(encode(value))
            form[name] = {SEALED: sealed.hexdigest()}
        return form


SALT_V4 = 16
"""How many bytes of its SHA-256 a salt of log version 4 keeps."""


class Prefixed(_Commits):
    """The salts of one entry of log version 4: SHA-256 of the entry's key then the path,
    its first 16 bytes; `sealable`: the body's fields committed one by one (the game's
    `sealable_fields`). The same methods as Keyed (whose salts are version 3's)."""

    __slots__ = ("_state", "key", "sealable")

    def __init__(self, key: bytes, sealable: frozenset[str] = frozenset()) -> None:
        self.key = key
        self.sealable = sealable
        self._state = hashlib.sha256(key)  # copied per path (the key hashed once)

    def salt(self, path: str) -> bytes:
        """The salt of the value at `path` of the entry whose key this is."""
        h = self._state.copy()
        h.update(path.encode())
        return h.digest()[:SALT_V4]

    # Each commitment written out where it is made (the body's, its sealable fields' in
    # inner_form, the outcome's) rather than through one method of a path and a value:
    # a call fewer for each of an entry's two (with the entry digest's hash written out,
    # 3 calls and 23 bytecodes an entry fewer, 0.9% of a fold's instructions).

    def body_commitment(self, body: Any) -> str:
        """The commitment `body_form` stands in for the body with."""
        h = self._state.copy()
        h.update(_BODY_PATH)
        sealed = _SEAL.copy()
        sealed.update(h.digest()[:SALT_V4])
        sealed.update(_encode(self.inner_form(body) if isinstance(body, dict) else body))
        return sealed.hexdigest()

    def out_commitment(self, outcome: Any) -> str:
        """The commitment to an entry's outcome (its `out`)."""
        h = self._state.copy()
        h.update(_OUT_PATH)
        sealed = _SEAL.copy()
        sealed.update(h.digest()[:SALT_V4])
        sealed.update(_encode(outcome))
        return sealed.hexdigest()

    def inner_form(self, body: dict[Any, Any]) -> dict[Any, Any]:
        # As Keyed.inner_form, for the game's sealable fields only (a field it never
        # seals as it is): the body copied, its fields in their order, and each sealable
        # one it has replaced in place by its commitment, written out here. (A new dict
        # built field by field, each tested: 1.3% of a fold's instructions more.)
        form = body.copy()
        for name in self.sealable:
            if name not in form:
                continue
            h = self._state.copy()
            h.update(_FIELD_PATHS.get(name) or _field_path_bytes(name))
            sealed = _SEAL.copy()
            sealed.update(h.digest()[:SALT_V4])
            sealed.update(_encode(form[name]))
            form[name] = {SEALED: sealed.hexdigest()}
        return form


Sealer = Keyed | Prefixed
"""An entry's key ready to derive its salts, as its log's version derives them."""


_FIELD_PATHS: dict[str, bytes] = {}
"""The paths of the top-level field names seen so far (a game's commands have a few; at
most 256 are kept)."""


def _field_path_bytes(name: Any) -> bytes:
    """The path of a body's top-level field `name`, encoded (a string name remembered)."""
    path = field_path(name).encode()
    if type(name) is str and len(_FIELD_PATHS) < 256:
        _FIELD_PATHS[name] = path
    return path


@lru_cache(maxsize=1024)
def _audit_keyed(key: bytes) -> Keyed:
    # A match's audit key keys the entry key of every entry of its log: its two states are
    # made once per match folded, and kept for as many matches as a busy server has in
    # play (under bench/load.py's 200, a cache of 64 missed on every entry: 0.7 us more
    # an entry; a thousand keys' states are well under a megabyte).
    return Keyed(key)


def sealer(ekey: bytes, version: int, sealable: frozenset[str] = frozenset()) -> Sealer:
    """An entry's key ready to derive its salts as log version `version` (3 or 4) does
    (made once per entry by whoever derives several of them); `sealable`: the fields of
    a body committed one by one in version 4 (`sealable_of` the game's rules)."""
    return Prefixed(ekey, sealable) if version >= 4 else Keyed(ekey)


_NO_FIELDS: frozenset[str] = frozenset()


def sealable_of(rules: Any) -> frozenset[str]:
    """The top-level fields of a command body a game may keep secret after the match
    (`sealable_fields` of its rules module; none if it declares none)."""
    fields: frozenset[str] = getattr(rules, "sealable_fields", _NO_FIELDS)
    return fields


def committed(version: int, sealable: frozenset[str], name: Any) -> bool:
    """Whether a body's field `name` enters the inner form by its commitment (every field
    in version 3; in version 4 one of the game's `sealable`), rather than as it is."""
    return version < 4 or name in sealable


def keyed(ekey: bytes | Sealer) -> Sealer:
    """`ekey` ready to derive salts: a Sealer as it is, a key's bytes as version 3's."""
    return ekey if isinstance(ekey, Keyed | Prefixed) else Keyed(ekey)


def entry_key(key: bytes, seq: int) -> bytes:
    """The key that opens every value of entry `seq`."""
    return _audit_keyed(key).digest(ENTRY_PREFIX + str(seq).encode())


def entry_sealer(key: bytes, seq: int, version: int, sealable: frozenset[str] = frozenset()) -> Sealer:
    """`sealer(entry_key(key, seq), version, sealable)`, in one call (once an entry
    folded or sealed; the two written out here: 0.3 us an entry, about 1% of a fold)."""
    ekey = _audit_keyed(key).digest(ENTRY_PREFIX + str(seq).encode())  # (entry_key's)
    return Prefixed(ekey, sealable) if version >= 4 else Keyed(ekey)


def salt(ekey: bytes | Sealer, path: str) -> bytes:
    """The salt of the value at `path` of the entry whose key is `ekey`."""
    return keyed(ekey).salt(path)


def commit(salt_: bytes, value: Any) -> str:
    """The salted commitment to `value` (JSON-ready builtins or Structs)."""
    return sha256_hex(SEAL_PREFIX, salt_, canonical(value))


def stand_in(commitment: str) -> dict[str, str]:
    return {SEALED: commitment}


def is_stand_in(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and set(value) == {SEALED}
        and isinstance(value[SEALED], str)
    )


def inner_form(ekey: bytes | Sealer, body: Any) -> Any:
    """A command body with its top-level fields' values by their commitments (version 4:
    the sealable ones; a body that is not an object: itself)."""
    if isinstance(body, dict):
        return keyed(ekey).inner_form(body)
    return body


def body_form(ekey: bytes | Sealer, body: Any) -> Any:
    """A command body as the chained digest covers it: the commitment to its inner form."""
    return keyed(ekey).body_form(body)


def out_commitment(ekey: bytes | Sealer, outcome: Any) -> str:
    """An entry's `out` digest: the commitment to its outcome."""
    return keyed(ekey).out_commitment(outcome)


def create_form(body: Any) -> Any:
    """A create entry's body as the chained digest covers it: the audit key by its digest
    (a body that shows only the digest already is left as it is)."""
    if not isinstance(body, dict) or not isinstance(body.get("audit"), str):
        return body
    try:
        key = bytes.fromhex(body["audit"])
    except ValueError:
        return body
    return {**body, "audit": stand_in(audit_digest(key))}


def audit_key_of(body: Any) -> bytes | None:
    """The audit key a create entry's body records in clear (None: none, or withheld)."""
    if not isinstance(body, dict) or not isinstance(body.get("audit"), str):
        return None
    try:
        key = bytes.fromhex(body["audit"])
    except ValueError:
        return None
    return key if len(key) == 32 else None


def builtins(value: Any) -> Any:
    return msgspec.to_builtins(value, order="sorted")


__all__ = [
    "SEALED",
    "Keyed",
    "Prefixed",
    "Sealer",
    "audit_digest",
    "audit_key_of",
    "body_form",
    "commit",
    "committed",
    "create_form",
    "entry_key",
    "entry_sealer",
    "inner_form",
    "is_stand_in",
    "keyed",
    "out_commitment",
    "salt",
    "sealable_of",
    "sealer",
    "stand_in",
]
