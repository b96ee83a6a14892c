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

Receipts signed together (`ServerKey.receipts`: the checkpoints of many matches reached
in one turn of a busy server's event loop, `Batch`) share one signature over the root
of a Merkle tree of theirs, and each carries its way to that root as `batch`:

    leaf      = SHA-256(0x00 || what a lone receipt's signature is over, above)
    node      = SHA-256(0x01 || left || right)
    batch     = [[side, sibling], ...]: from the leaf up, each sibling's side ("left" or
                "right") and its 32 bytes in hex (a node without a sibling at a level
                goes up as it is, and adds nothing)
    signature = Ed25519 over BATCH_PREFIX || root (its 32 bytes)

A receipt without `batch` is a lone one, signed as above. One signature is a twentieth
of a millisecond of the server's time; a busy server ends thousands of rounds a second.
"""

from __future__ import annotations

import hashlib
import os
from binascii import hexlify
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from domain.canonical import canonical, canonical_encoder
from server import logs

log = logs.get("daedalus.keys")

RECEIPT_PREFIX = b"daedalus-receipt-v1\n"
BATCH_PREFIX = b"daedalus-receipt-batch-v1\n"
SIGNED_FIELDS = ("commitment", "digest", "match", "round", "seq", "what")
LEFT, RIGHT = "left", "right"


def key_id(public: bytes) -> str:
    """A short name of a raw public key: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(public).hexdigest()[:16]


def signed_bytes(receipt: dict[str, Any]) -> bytes:
    """What a receipt's signature is over (see the module docstring); KeyError if a
    field is missing."""
    return RECEIPT_PREFIX + canonical({k: receipt[k] for k in SIGNED_FIELDS})


def receipt_leaf(receipt: dict[str, Any]) -> bytes:
    """A receipt's leaf in a batch's Merkle tree (KeyError if a field is missing)."""
    return _leaf(signed_bytes(receipt))


def _leaf(signed: bytes) -> bytes:
    """The leaf of a receipt whose signature would be over `signed`."""
    return hashlib.sha256(b"\x00" + signed).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def merkle(leaves: list[bytes]) -> tuple[bytes, list[bytes]]:
    """The root of `leaves` (at least one) and each leaf's way up to it, as the JSON of
    its `batch` (see the module). Made from the root down: the way from a node is its
    sibling's piece, then the way from its parent, each made once a node rather than
    once a leaf that goes by it."""
    levels = [leaves]
    while len(levels[-1]) > 1:
        below = levels[-1]
        up = [_node(below[i], below[i + 1]) for i in range(0, len(below) - 1, 2)]
        if len(below) % 2:
            up.append(below[-1])  # no sibling: goes up as it is
        levels.append(up)
    ways = [b""]  # (from the root: none)
    for level in reversed(levels[:-1]):
        hexes = [hexlify(node) for node in level]
        last = len(level) - 1
        below_ways: list[bytes] = []
        for j in range(len(level)):
            rest = ways[j >> 1]
            if j == last and j % 2 == 0:  # no sibling: its parent's way
                below_ways.append(rest)
                continue
            # (its sibling is on the left if it is the second of its pair)
            piece = (_LEFT_PIECE if j % 2 else _RIGHT_PIECE) % hexes[j ^ 1]
            below_ways.append(piece + b"," + rest if rest else piece)
        ways = below_ways
    return levels[-1][0], [b"[" + way + b"]" for way in ways]


_LEFT_PIECE = b'["left","%b"]'
_RIGHT_PIECE = b'["right","%b"]'


def batch_root(receipt: dict[str, Any]) -> bytes:
    """The root a batched receipt's way leads to (ValueError, KeyError or TypeError for a
    malformed one)."""
    node = receipt_leaf(receipt)
    for side, sibling in receipt["batch"]:
        other = bytes.fromhex(sibling)
        if len(other) != 32:
            raise ValueError("a sibling is 32 bytes")
        if side == LEFT:
            node = _node(other, node)
        elif side == RIGHT:
            node = _node(node, other)
        else:
            raise ValueError(f"no side {side!r}")
    return node


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
        return self.receipts([body])[0]

    def receipts(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The receipts of `bodies` (each the fields `receipt` takes, as a dict), signed
        with one signature: one alone as `receipt` signs it, several over their Merkle
        root, each with its `batch` (see the module). (`receipt_frames`' frames, read.)"""
        return [_receipt_of(frame) for frame in self.receipt_frames(bodies)]

    @cached_property
    def _public_json(self) -> bytes:
        return b'"key":"%b","public_key":"%b"' % (self.id.encode(), hexlify(self.public_raw))

    def receipt_frames(self, bodies: list[dict[str, Any]]) -> list[bytes]:
        """The receipts of `bodies` as `receipts` gives them, each as the JSON of its
        `receipt` frame ({"type": "receipt", then the receipt's fields in that order}).

        Written out rather than built as dicts and encoded: each field of a body encoded
        once for both the bytes it signs (`signed_bytes`, by `_SIGNED`) and its frame, the
        ways to the root made a node at a time (`merkle`). What a receipt signs is checked
        by `verify_receipt`, from `signed_bytes` (tests/test_receipt_batches.py holds
        every receipt made here against it, whatever text its fields hold). A receipt
        in a batch of 64 (bench/load.py at K=200): its dicts and their encoding were
        about a third of its instructions (docs/performance.md, item 53)."""
        encode = canonical_encoder.encode
        heads, signed = [], []
        for body in bodies:
            match, seq, digest, commitment, what, round_ = (
                encode(body["match"]), encode(body["seq"]), encode(body["digest"]),
                encode(body["commitment"]), encode(body["what"]), encode(body["round"]),
            )
            heads.append(_FRAME_HEAD % (match, seq, digest, commitment, what, round_))
            signed.append(_SIGNED % (commitment, digest, match, round_, seq, what))
        public = self._public_json
        if len(bodies) == 1:
            signature = hexlify(self.private.sign(signed[0]))
            return [_FRAME_TAIL % (heads[0], public, signature)]
        root, ways = merkle([_leaf(data) for data in signed])
        signature = hexlify(self.private.sign(BATCH_PREFIX + root))
        return [
            _BATCHED_TAIL % (head, public, signature, way) for head, way in zip(heads, ways, strict=True)
        ]


# A receipt frame's JSON (`receipt_frames`): its body's fields, each given as its JSON...
_FRAME_HEAD = b'{"type":"receipt","match":%b,"seq":%b,"digest":%b,"commitment":%b,"what":%b,"round":%b'
# ...then the key's, the signature (hex) and the way to the batch's root (its JSON).
_FRAME_TAIL = b'%b,%b,"signature":"%b"}'
_BATCHED_TAIL = b'%b,%b,"signature":"%b","batch":%b}'
# What a receipt's signature (or its leaf) is over: `signed_bytes`, its fields' JSON in
# the canonical order (sorted keys).
_SIGNED = RECEIPT_PREFIX + b'{"commitment":%b,"digest":%b,"match":%b,"round":%b,"seq":%b,"what":%b}'

_decode = msgspec.json.Decoder().decode


def _receipt_of(frame: bytes) -> dict[str, Any]:
    """A receipt frame's fields but its `type`: the receipt."""
    receipt: dict[str, Any] = _decode(frame)
    del receipt["type"]
    return receipt


class Ticket:
    """A receipt asked of a `Batch`: signed when it was asked, or with the rest of its
    batch (at the latest when it is first needed)."""

    __slots__ = ("_batch", "_frame", "_receipt", "_then", "body", "signed")

    def __init__(self, batch: Batch, body: dict[str, Any]) -> None:
        self._batch = batch
        self.body = body
        self.signed = False  # (read for every frame of a checkpoint: a plain attribute)
        self._receipt: dict[str, Any] | None = None  # (read from the frame when first asked for)
        self._frame = b""
        self._then: list[Callable[[], None]] | None = None

    def then(self, callback: Callable[[], None]) -> None:
        """Call `callback` once this receipt is signed (now, if it is)."""
        if self.signed:
            callback()
        elif self._then is None:
            self._then = [callback]
        else:
            self._then.append(callback)

    def receipt(self) -> dict[str, Any]:
        """The signed receipt (its batch signed now if it is not yet)."""
        if self._receipt is None:
            self._receipt = _receipt_of(self.frame())
        return self._receipt

    def frame(self) -> bytes:
        """The receipt as a `receipt` frame's JSON (its batch signed now if it is not yet)."""
        if not self.signed:
            self._batch.sign()
        return self._frame


class Batch:
    """The receipts asked for in a moment, signed together (`ServerKey.receipt_frames`).

    With `schedule` (the event loop's `call_soon`), the first receipt asked for after a
    signing has the batch signed by the next turn of the loop, and every receipt asked
    for until then joins it: the checkpoints a busy server reaches in one turn (every
    match whose append came back in it) cost one signature. A ticket needed sooner has
    its batch signed then; a batch of `most` is signed at once. Without `schedule`,
    each receipt is signed when it is asked for."""

    def __init__(
        self,
        key: ServerKey,
        schedule: Callable[[Callable[[], None]], object] | None = None,
        most: int = 64,
    ) -> None:
        self.key = key
        self._schedule = schedule
        self.most = most
        self._pending: list[Ticket] = []
        self.signatures = 0  # made so far, and the receipts they signed (GET /metrics)
        self.receipts = 0

    def ask(self, body: dict[str, Any]) -> Ticket:
        """A ticket for the receipt of `body` (the fields `ServerKey.receipt` takes)."""
        ticket = Ticket(self, body)
        pending = self._pending
        pending.append(ticket)
        if self._schedule is None or len(pending) >= self.most:
            self.sign()
        elif len(pending) == 1:
            self._schedule(self.sign)
        return ticket

    def sign(self) -> None:
        """Sign what waits, with one signature."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        self.signatures += 1
        self.receipts += len(pending)
        for ticket, frame in zip(pending, self.key.receipt_frames([t.body for t in pending]), strict=True):
            ticket._frame = frame
            ticket.signed = True
        for ticket in pending:
            then, ticket._then = ticket._then, None
            for callback in then or ():
                try:  # (one waiter's failure is not the others')
                    callback()
                except Exception:
                    log.exception("receipt_waiter_failed")


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
        signed = BATCH_PREFIX + batch_root(receipt) if "batch" in receipt else signed_bytes(receipt)
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, signed)
    except (InvalidSignature, ValueError, KeyError, TypeError):
        return False
    return True
