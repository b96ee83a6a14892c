"""Salted commitments: how a log of version 3 keeps a value secret for good yet verifiable.

A match of log version 3 has an audit key: 32 random bytes made when the match is
created, recorded in its create entry, handed to whoever created it, and never published.
Every value the rules might keep secret after the match enters the log's digests only
through a salted commitment:

    salt(seq, path)   = HMAC-SHA256(entry key of seq, path)
    entry key of seq  = HMAC-SHA256(audit key, "daedalus-entry-v1\\n" || seq)
    commit(salt, v)   = SHA-256("daedalus-seal-v1\\n" || salt || canonical JSON of v)

The paths of an entry are `body` for a command's whole body, `body/<field>` for each
top-level field of a body that is an object, and `out` for the entry's outcome. An
entry's `out` digest is commit(salt(seq, "out"), outcome), and its chained digest covers
its command body as {"sealed": commit(salt(seq, "body"), inner)}, where `inner` is the
body with each field's value as {"sealed": commit(salt(seq, "body/<field>"), value)} (a
body that is not an object is its own inner form). So a whole body can be withheld (its
outer commitment stands in for it, its fields' names included), or some of its fields.
The create entry's digest covers the audit key as {"sealed": SHA-256("daedalus-audit-v1\\n"
|| key)}.

So a value can be shown (with its salt: anyone recomputes the commitment, and the chain
holds) or withheld (its commitment stands in its place: the chain still holds, and the
value cannot be guessed from it, the salt being unknown). Publishing an entry's key opens
every value of that entry at once. The audit key derives every salt, so its holder can
check every commitment of a log whose values it is given. See docs/fairness.md.
"""

from __future__ import annotations

import hmac
from typing import Any

import msgspec

from domain.canonical import canonical, sha256_hex

AUDIT_PREFIX = b"daedalus-audit-v1\n"
ENTRY_PREFIX = b"daedalus-entry-v1\n"
SEAL_PREFIX = b"daedalus-seal-v1\n"
SEALED = "sealed"
"""The key of a withheld value's stand-in: {"sealed": <commitment>}."""
OUT = "out"
BODY = "body"


def field_path(name: str) -> str:
    return f"{BODY}/{name}"


def audit_digest(key: bytes) -> str:
    """What the log shows of the audit key: its SHA-256 (the key is 32 random bytes)."""
    return sha256_hex(AUDIT_PREFIX, key)


def entry_key(key: bytes, seq: int) -> bytes:
    """The key that opens every value of entry `seq`."""
    return hmac.digest(key, ENTRY_PREFIX + str(seq).encode(), "sha256")


def salt(ekey: bytes, path: str) -> bytes:
    """The salt of the value at `path` of the entry whose key is `ekey`."""
    return hmac.digest(ekey, path.encode(), "sha256")


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


def inner_form(ekey: bytes, body: Any) -> Any:
    """A command body with every top-level field's value by its commitment (a body that
    is not an object: itself)."""
    if isinstance(body, dict):
        return {k: stand_in(commit(salt(ekey, f"{BODY}/{k}"), v)) for k, v in body.items()}
    return body


def body_form(ekey: bytes, body: Any) -> Any:
    """A command body as the chained digest covers it: the commitment to its inner form."""
    return stand_in(commit(salt(ekey, BODY), inner_form(ekey, body)))


def out_commitment(ekey: bytes, outcome: Any) -> str:
    """An entry's `out` digest: the commitment to its outcome."""
    return commit(salt(ekey, OUT), outcome)


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
    "audit_digest",
    "audit_key_of",
    "body_form",
    "commit",
    "create_form",
    "entry_key",
    "inner_form",
    "is_stand_in",
    "out_commitment",
    "salt",
    "stand_in",
]
