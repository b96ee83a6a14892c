"""The server's signing key and the receipts it signs (docs/fairness.md).

A receipt is the server's signed word that a match's log, up to an entry, is what it
is: the match id, the entry's number (`seq`), its chained digest (every entry up to it is
bound by it, see domain/engine.py) and the commitment published at the match's creation.
The server signs one when a match is created (entry 1), when a round ends and when the
match ends, and gives them to the players. A log shown later that differs from what a
receipt covers is caught by `daedalus replay LOG --verify --receipts FILE`
(clients/replay.py: `check_receipts`), which names the first entry that differs.

The key is Ed25519 (the `cryptography` package), kept in a file (the `key_file`
setting): PKCS#8 PEM, created on the first start when absent, readable by its owner only
(0600). Ed25519 signatures are deterministic, so every process of a deployment that
shares the key file signs a checkpoint with the same bytes.

What is signed: `RECEIPT_PREFIX` followed by the canonical JSON (sorted keys, no spaces)
of the receipt's fields `commitment`, `digest`, `match`, `round` (the round that ended;
null for "created"), `seq` and `what` ("created", "round" or "ended"). `signature` is
the 64-byte signature in hex, `public_key` the raw 32-byte public key in hex (compare it
with `GET /key`), `key` its name (the first 16 hex digits of its SHA-256).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from domain.canonical import canonical

RECEIPT_PREFIX = b"daedalus-receipt-v1\n"
SIGNED_FIELDS = ("commitment", "digest", "match", "round", "seq", "what")


def key_id(public: bytes) -> str:
    """A short name of a raw public key: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(public).hexdigest()[:16]


def signed_bytes(receipt: dict[str, Any]) -> bytes:
    """What a receipt's signature is over (see the module docstring); KeyError if a
    field is missing."""
    return RECEIPT_PREFIX + canonical({k: receipt[k] for k in SIGNED_FIELDS})


@dataclass(frozen=True)
class ServerKey:
    """The server's Ed25519 key pair."""

    private: Ed25519PrivateKey

    @cached_property
    def public_raw(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @cached_property
    def id(self) -> str:
        return key_id(self.public_raw)

    def public_document(self) -> dict[str, str]:
        """What `GET /key` serves."""
        return {"algorithm": "ed25519", "public_key": self.public_raw.hex(), "key": self.id}

    def receipt(
        self,
        *,
        match: str,
        seq: int,
        digest: str,
        commitment: str,
        what: str,
        round: int | None = None,
    ) -> dict[str, Any]:
        """A signed receipt (the frame's fields but its `type`)."""
        body: dict[str, Any] = {
            "match": match, "seq": seq, "digest": digest, "commitment": commitment,
            "what": what, "round": round,
        }
        signature = self.private.sign(signed_bytes(body))
        return {
            **body, "key": self.id, "public_key": self.public_raw.hex(), "signature": signature.hex()
        }


def generate() -> ServerKey:
    return ServerKey(Ed25519PrivateKey.generate())


def load_or_create(path: str | Path) -> ServerKey:
    """The key in the file `path`; a new one written there (0600, its directory made if
    need be) when there is none. ValueError if the file holds no Ed25519 private key.

    A new key is written to a temporary file and linked into place, so several processes
    starting at once end up with the one key, and none reads a half-written file."""
    path = Path(path).expanduser()
    if not path.exists():
        key = generate()
        pem = key.private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.new")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(pem)
            os.link(temporary, path)  # fails if another process linked its key first
        except FileExistsError:
            pass
        else:
            return key
        finally:
            temporary.unlink(missing_ok=True)
    data = path.read_bytes()
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: not a PEM private key without a password: {exc}") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise ValueError(f"{path}: not an Ed25519 private key")
    return ServerKey(private)


def verify_receipt(receipt: dict[str, Any], public_key: bytes | None = None) -> bool:
    """Whether `receipt`'s signature is good, by `public_key` (raw; None: the key the
    receipt names in `public_key`, which the caller compares with the server's)."""
    try:
        if public_key is None:
            public_key = bytes.fromhex(str(receipt["public_key"]))
        signature = bytes.fromhex(str(receipt["signature"]))
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, signed_bytes(receipt))
    except (InvalidSignature, ValueError, KeyError, TypeError):
        return False
    return True
