"""Canonical bytes and digests.

Everything that is hashed (log entries, outcomes, commitments) is first turned into
canonical JSON: msgspec's encoder with object keys sorted, so the same value gives the
same bytes on every machine and in every process.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

canonical_encoder = msgspec.json.Encoder(order="sorted")
"""The encoder `canonical` uses (its `encode` called directly where a call counts)."""


def canonical(value: Any) -> bytes:
    """The canonical JSON bytes of a value (structs, dicts, lists, scalars)."""
    return canonical_encoder.encode(value)


def sha256_hex(*parts: bytes) -> str:
    """The SHA-256 of the parts one after the other, in hex."""
    return hashlib.sha256(b"".join(parts)).hexdigest()


def to_builtins(value: Any) -> Any:
    """Structs and tuples as plain JSON-ready values (dicts, lists, scalars)."""
    return msgspec.to_builtins(value, order="sorted")
