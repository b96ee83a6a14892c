"""What the server needs of an event store, and a store kept in memory.

`Store` is the interface the hub and the app use. Two backends implement it:
`server.store.EventStore` (Redis: a stream per match, appended by a Lua script; on a
real redis-server or the in-process fakeredis) and `MemoryStore` here (a process's own
dicts: for tests and trying things, never shared between processes, gone with the
process). tests/test_store_contract.py runs one suite over every backend.

A match's log is a sequence of entries, each at a stream id ("<a>-<b>", two integers,
increasing along the log: see server.core.sid_order). An append is conditional: it lands
only if its command key is new and the log's head is the one the caller folded, so two
writers can never fork a log; a command key lands at most once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import msgspec

from domain.engine import Entry

# At most this many entries of one match per `follow` (as Redis's XREAD COUNT).
FOLLOW_COUNT = 1000

_entry_decoder = msgspec.json.Decoder(Entry)
_encode = msgspec.json.Encoder().encode
_encode_sorted = msgspec.json.Encoder(order="sorted").encode


def head_value(entry: Entry) -> str:
    """The head of a log whose last entry is `entry`: an append's condition."""
    return f"{entry.seq}:{entry.digest}"


class Appended(msgspec.Struct, frozen=True):
    """What an append did (a Struct: made for every append, in C; a frozen dataclass's
    __init__ sets each field through object.__setattr__, 0.9 us against 0.1)."""

    status: Literal["ok", "dup", "conflict"]
    seq: int | None = None  # for dup: the seq the key was appended at
    stream_id: str | None = None  # for ok


class AppendUnknown(Exception):
    """The store could not be reached to learn whether an append happened."""


# What `Store.expire` did: expired the match, found no log, or found a newer head.
Expired = Literal["expired", "gone", "conflict"]


class Store(Protocol):
    """A store of match logs (see the module docstring)."""

    description: str  # for the log: what and where the store is

    async def close(self) -> None: ...

    async def ping(self) -> bool: ...

    async def create(self, match_id: str, entry: Entry) -> bool:
        """Start a match log with its create entry; False if the id is taken. The match
        is active (see `active`) until `mark_over`."""
        ...

    async def append(
        self,
        match_id: str,
        entry: Entry,
        *,
        expected_head: str,
        key: str,
        token_hash: str | None = None,
        seat: int | None = None,
        encoded: bytes | None = None,
    ) -> Appended:
        """Append `entry` if `key` is new (else `dup`, with the seq it landed at) and the
        head is `expected_head` (else `conflict`; "" is the head of no log). With
        `token_hash`, the seat token's hash is recorded for `seat` in the same step.
        `encoded`: the entry's JSON (msgspec's encoding of it), when the caller has it."""
        ...

    def begin_append(
        self,
        match_id: str,
        entry: Entry,
        *,
        expected_head: str,
        key: str,
        token_hash: str | None = None,
        seat: int | None = None,
        encoded: bytes | None = None,
    ) -> Coroutine[Any, Any, Appended]:
        """`append`, begun now: what it returns is awaited for the outcome. If the store
        is `ordered`, appends begun one after another are tried in that order, so an
        entry decided on one whose append is in flight (its `expected_head` that one's)
        can be begun at once, and lands right after it (or not at all: a conflict)."""
        ...

    @property
    def ordered(self) -> bool:
        """Whether appends are tried in the order they are begun (see `begin_append`)."""
        ...

    async def mark_over(self, match_id: str) -> None: ...

    async def active(self) -> list[str]:
        """The matches created and not marked over, sorted."""
        ...

    async def read(self, match_id: str, after: str = "0-0") -> list[tuple[str, Entry]]:
        """Every entry after stream id `after`, in order, with its stream id."""
        ...

    async def follow(
        self, after: Mapping[str, str], block_ms: int | None
    ) -> dict[str, list[tuple[str, bytes]]]:
        """For many matches at once: the entries after each one's stream id (at most
        FOLLOW_COUNT a match), as JSON, by match, matches with none left out; waiting up
        to `block_ms` for the first (0: without end; None: not at all) unless `unblock`
        ends the wait."""
        ...

    async def follows_id(self) -> int:
        """An id for `unblock` of the wait in `follow`; it answers only if the store does."""
        ...

    async def unblock(self, client_id: int) -> bool:
        """End a `follow` waiting now (it returns nothing); False if none was waiting."""
        ...

    async def seat_for_token(self, match_id: str, token_hash: str) -> int | None: ...

    async def length(self, match_id: str) -> int:
        """How many entries the match's log has."""
        ...

    def forget(self, match_id: str) -> None:
        """Drop whatever is kept in this process to read the match (not its log)."""
        ...

    async def expire(
        self, match_id: str, *, expected_head: str, record: Mapping[str, Any], keep_s: float
    ) -> Expired:
        """Remove the match's log and keys if its head is `expected_head` (else
        `conflict`: something was appended since), keeping `record` (why) for `keep_s`
        seconds instead, and take it out of `active`; `gone` if there was no log (another
        process expired it first, or there never was one). One step: an append and an
        expiry never both land, and of two processes expiring at once one does."""
        ...

    async def expired(self, match_id: str) -> dict[str, Any] | None:
        """The record of an expired match while it is kept, else None."""
        ...

    async def claim_creation_key(
        self, key: str, record: Mapping[str, Any], keep_s: float
    ) -> dict[str, Any] | None:
        """Keep `record` under the match-creation key `key` for `keep_s` seconds, unless
        the key holds a record already: None if this call stored `record`, else the
        record held (the first request's). One step: of two calls at once one stores."""
        ...

    async def release_creation_key(self, key: str, record: Mapping[str, Any]) -> None:
        """Remove the creation key `key` if it holds `record` (a creation refused, so
        the key may serve another request); else leave it."""
        ...


@dataclass
class _Log:
    entries: list[bytes] = field(default_factory=list)  # each Entry as JSON
    head: str = ""
    keys: dict[str, int] = field(default_factory=dict)  # command key -> seq
    tokens: dict[str, int] = field(default_factory=dict)  # token hash -> seat


class MemoryStore:
    """A Store in this process's memory. Stream ids are "<position>-0"."""

    def __init__(self) -> None:
        self.description = "in-memory (in-process, not persistent)"
        self._logs: dict[str, _Log] = {}
        self._active: set[str] = set()
        self._waiting: set[asyncio.Future[str]] = set()  # follows waiting for an append
        self._expired: dict[str, tuple[float, bytes]] = {}  # match -> (kept until, record)
        self._creation_keys: dict[str, tuple[float, bytes]] = {}  # key -> (kept until, record)

    async def close(self) -> None:
        return None

    async def ping(self) -> bool:
        return True

    async def create(self, match_id: str, entry: Entry) -> bool:
        result = await self.append(match_id, entry, expected_head="", key="create")
        if result.status != "ok":
            return False
        self._active.add(match_id)
        return True

    # Each append is made when it is begun: they are in order.
    ordered = True

    async def append(
        self,
        match_id: str,
        entry: Entry,
        *,
        expected_head: str,
        key: str,
        token_hash: str | None = None,
        seat: int | None = None,
        encoded: bytes | None = None,
    ) -> Appended:
        return self._append(match_id, entry, expected_head, key, token_hash, seat, encoded)

    def begin_append(
        self,
        match_id: str,
        entry: Entry,
        *,
        expected_head: str,
        key: str,
        token_hash: str | None = None,
        seat: int | None = None,
        encoded: bytes | None = None,
    ) -> Coroutine[Any, Any, Appended]:
        return _given(self._append(match_id, entry, expected_head, key, token_hash, seat, encoded))

    def _append(
        self,
        match_id: str,
        entry: Entry,
        expected_head: str,
        key: str,
        token_hash: str | None,
        seat: int | None,
        encoded: bytes | None,
    ) -> Appended:
        log = self._logs.get(match_id)
        if log is None:
            log = _Log()
        if key in log.keys:
            return Appended("dup", seq=log.keys[key])
        if log.head != expected_head:
            return Appended("conflict")
        self._logs[match_id] = log
        log.entries.append(_encode(entry) if encoded is None else encoded)
        log.head = head_value(entry)
        log.keys[key] = entry.seq
        if token_hash:
            assert seat is not None
            log.tokens[token_hash] = seat
        self._wake("appended")
        return Appended("ok", seq=entry.seq, stream_id=f"{len(log.entries)}-0")

    async def mark_over(self, match_id: str) -> None:
        self._active.discard(match_id)

    async def active(self) -> list[str]:
        return sorted(self._active)

    def _items(self, match_id: str, after: str, count: int | None) -> list[tuple[int, bytes]]:
        log = self._logs.get(match_id)
        if log is None:
            return []
        start = int(after.partition("-")[0]) + 1  # entries 1 .. <position> are read
        stop = len(log.entries) if count is None else min(len(log.entries), start - 1 + count)
        return [(i, log.entries[i - 1]) for i in range(start, stop + 1)]

    async def read(self, match_id: str, after: str = "0-0") -> list[tuple[str, Entry]]:
        return [(f"{i}-0", _entry_decoder.decode(raw)) for i, raw in self._items(match_id, after, None)]

    def _found(self, after: Mapping[str, str]) -> dict[str, list[tuple[str, bytes]]]:
        out = {}
        for match_id, sid in after.items():
            items = self._items(match_id, sid, FOLLOW_COUNT)
            if items:
                out[match_id] = [(f"{i}-0", raw) for i, raw in items]
        return out

    async def follow(
        self, after: Mapping[str, str], block_ms: int | None
    ) -> dict[str, list[tuple[str, bytes]]]:
        loop = asyncio.get_running_loop()
        end = None if block_ms == 0 else loop.time() + (block_ms or 0) / 1000
        while True:
            found = self._found(after)
            if found or block_ms is None:
                return found
            left = None if end is None else end - loop.time()
            if left is not None and left <= 0:
                return {}
            wake: asyncio.Future[str] = loop.create_future()
            self._waiting.add(wake)
            try:
                # Not wait_for: on Python 3.11 it swallows a cancellation that comes as
                # the future is woken, and a follower cancelled then never stopped.
                await asyncio.wait({wake}, timeout=left)
            finally:
                self._waiting.discard(wake)
            if wake.done() and wake.result() == "unblocked":
                return {}

    def _wake(self, why: str) -> bool:
        woken = False
        for wake in self._waiting:
            if not wake.done():
                wake.set_result(why)
                woken = True
        return woken

    async def follows_id(self) -> int:
        return 1

    async def unblock(self, client_id: int) -> bool:
        return self._wake("unblocked")

    async def seat_for_token(self, match_id: str, token_hash: str) -> int | None:
        log = self._logs.get(match_id)
        return None if log is None else log.tokens.get(token_hash)

    async def length(self, match_id: str) -> int:
        log = self._logs.get(match_id)
        return 0 if log is None else len(log.entries)

    def forget(self, match_id: str) -> None:
        return None

    async def expire(
        self, match_id: str, *, expected_head: str, record: Mapping[str, Any], keep_s: float
    ) -> Expired:
        log = self._logs.get(match_id)
        if log is None:
            self._active.discard(match_id)
            return "gone"
        if log.head != expected_head:
            return "conflict"
        del self._logs[match_id]
        self._active.discard(match_id)
        self._expired[match_id] = (time.monotonic() + keep_s, _encode(dict(record)))
        return "expired"

    async def expired(self, match_id: str) -> dict[str, Any] | None:
        now = time.monotonic()
        for m, (until, _) in list(self._expired.items()):
            if until <= now:
                del self._expired[m]
        found = self._expired.get(match_id)
        if found is None:
            return None
        record: dict[str, Any] = msgspec.json.decode(found[1])
        return record

    async def claim_creation_key(
        self, key: str, record: Mapping[str, Any], keep_s: float
    ) -> dict[str, Any] | None:
        now = time.monotonic()
        for k, (until, _) in list(self._creation_keys.items()):
            if until <= now:
                del self._creation_keys[k]
        held = self._creation_keys.get(key)
        if held is not None:
            found: dict[str, Any] = msgspec.json.decode(held[1])
            return found
        self._creation_keys[key] = (now + keep_s, _encode_sorted(dict(record)))
        return None

    async def release_creation_key(self, key: str, record: Mapping[str, Any]) -> None:
        held = self._creation_keys.get(key)
        if held is not None and held[1] == _encode_sorted(dict(record)):
            del self._creation_keys[key]


async def _given(result: Appended) -> Appended:
    """An outcome known already, to be awaited."""
    return result
