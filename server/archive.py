"""Archival: finished matches out of Redis into files, and read back from there.

`daedalus archive --older-than 7d --to DIR` (clients/cli.py) calls `archive_matches`: for
every match in the store whose log ends with the match over, and whose last entry is
older than the age given, it

1. reads the log's entries exactly as stored (field `e` of each stream entry: the Entry
   as JSON, sealed values in clear for a match that seals);
2. folds them to see the match is over, and verifies them as `daedalus replay --verify`
   does (clients.replay.verify_entries: the chain of digests, every outcome, the
   commitment and the setup drawn again);
3. writes them to DIR/<match id>.jsonl, one entry a line (a temporary file, flushed to
   disk, then renamed: a file of that name is whole; never over a file holding another
   log), reads the file back, and checks it holds those very bytes and verifies again;
4. and only then removes the match's keys (log, head, command ids, seat tokens), in one
   step that removes nothing if anything was appended since step 1 (the head moved).

A match not over, one whose log does not verify, and one whose file cannot be written or
read back the same are left in Redis, and said. Nothing is removed in a `dry_run`.

The server reads archived matches from the directory of `Settings.archive`
(DAEDALUS_ARCHIVE): `GET /matches/{id}/log` serves an archived log as it served it from
Redis (for a match that seals, the public form unless the audit key is given), so
`daedalus replay ID --server URL` replays it as before. The file itself is a log
`daedalus replay FILE --verify` reads (the whole log, sealed values included: an
archive is the operator's, to be kept as the Redis data was).

The destination is a directory (`ArchiveDir`) or an S3-compatible bucket, given as
`s3://BUCKET/PREFIX` (`ArchiveS3`, through boto3: the optional dependency
`daedalus[s3]`; credentials, region and `AWS_ENDPOINT_URL` for a store other than AWS
as boto3 reads them). An S3 PUT stores an object whole or not at all, as the rename
does for a file. `open_archive` picks one from the location.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from domain import engine
from domain.engine import Entry, IntegrityError
from projections.registry import GAMES
from server.store import ACTIVE, EventStore, append_keys, log_key

_entry_decoder = msgspec.json.Decoder(Entry)
_MATCH_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_HEAD_KEY = re.compile(r"^dd:\{([A-Za-z0-9_-]{1,64})\}:head$")

# Remove an archived match's keys if its head is still the one archived. KEYS: log, head,
# command ids, seat tokens. ARGV: the head archived.
REMOVE_SCRIPT = """
local head = redis.call('GET', KEYS[2])
if not head then
  return 'gone'
end
if head ~= ARGV[1] then
  return 'conflict'
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return 'removed'
"""

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> float:
    """Seconds in an age such as `7d`, `12h`, `30m`, `90s` or `90` (seconds)."""
    found = _AGE.match(text)
    if found is None:
        raise ValueError(f"{text!r} is not an age: a number and s, m, h, d or w (7d, 12h)")
    return float(found.group(1)) * _UNIT_S[found.group(2)]


class ArchiveDir:
    """A directory of archived logs, DIR/<match id>.jsonl."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def path(self, match_id: str) -> Path:
        if not _MATCH_ID.match(match_id):
            raise ValueError(f"not a match id: {match_id!r}")
        return self.directory / f"{match_id}.jsonl"

    def write(self, match_id: str, data: bytes) -> Path:
        """Write `data` as the match's archive, whole or not at all."""
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self.path(match_id)
        partial = final.with_name(f".{final.name}.partial")
        with open(partial, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, final)
        fd = os.open(self.directory, os.O_RDONLY)  # the rename itself on disk
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return final

    def read_bytes(self, match_id: str) -> bytes | None:
        """The archived log's bytes, or None if the match is not archived here."""
        try:
            return self.path(match_id).read_bytes()
        except (FileNotFoundError, ValueError):
            return None

    def read(self, match_id: str) -> list[Entry] | None:
        """The archived log's entries, or None if the match is not archived here."""
        data = self.read_bytes(match_id)
        return None if data is None else decode(data)


class ArchiveS3:
    """Archived logs in an S3-compatible bucket: s3://BUCKET/PREFIX/<match id>.jsonl."""

    def __init__(self, location: str) -> None:
        found = re.fullmatch(r"s3://([^/]+)/?(.*)", location)
        if found is None:
            raise ValueError(f"{location!r} is not s3://BUCKET/PREFIX")
        self.bucket = found.group(1)
        self.prefix = found.group(2).strip("/")
        try:
            import boto3
        except ImportError:
            raise ValueError(
                "an s3:// archive needs boto3: pip install 'daedalus[s3]'"
            ) from None
        self._s3: Any = boto3.client("s3")

    def key(self, match_id: str) -> str:
        if not _MATCH_ID.match(match_id):
            raise ValueError(f"not a match id: {match_id!r}")
        return f"{self.prefix}/{match_id}.jsonl" if self.prefix else f"{match_id}.jsonl"

    def path(self, match_id: str) -> str:
        return f"s3://{self.bucket}/{self.key(match_id)}"

    def write(self, match_id: str, data: bytes) -> str:
        """Store `data` as the match's archive (a PUT: whole or not at all)."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self._s3.put_object(
                Bucket=self.bucket, Key=self.key(match_id), Body=data,
                ContentType="application/x-ndjson",
            )
        except (BotoCoreError, ClientError) as exc:
            raise OSError(f"{self.path(match_id)}: {exc}") from exc
        return self.path(match_id)

    def read_bytes(self, match_id: str) -> bytes | None:
        """The archived log's bytes, or None if the match is not archived here."""
        from botocore.exceptions import ClientError

        try:
            found = self._s3.get_object(Bucket=self.bucket, Key=self.key(match_id))
        except ValueError:
            return None
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise OSError(f"{self.path(match_id)}: {exc}") from exc
        return bytes(found["Body"].read())

    def read(self, match_id: str) -> list[Entry] | None:
        data = self.read_bytes(match_id)
        return None if data is None else decode(data)


Archive = ArchiveDir | ArchiveS3


@functools.lru_cache(maxsize=8)
def open_archive(location: str) -> Archive:
    """The archive at `location`: s3://BUCKET/PREFIX, else a directory (kept: a server
    reads its archive at every request for an archived log)."""
    return ArchiveS3(location) if location.startswith("s3://") else ArchiveDir(location)


def encode(raw_entries: list[bytes]) -> bytes:
    return b"".join(raw + b"\n" for raw in raw_entries)


def decode(data: bytes) -> list[Entry]:
    return [_entry_decoder.decode(line) for line in data.splitlines() if line.strip()]


def check(entries: list[Entry]) -> str | None:
    """Why a log may not be archived (None: it may): not over, or it does not verify as
    `daedalus replay --verify` verifies it."""
    from clients.replay import verify_entries

    if not entries:
        return "the log is empty"
    host = GAMES.get(str(entries[0].body.get("game")))
    if host is None:
        return f"unknown game {entries[0].body.get('game')!r}"
    try:
        ms = engine.open_match(host.rules, entries[0])
        for entry in entries[1:]:
            ms, _ = engine.apply(ms, entry)
    except IntegrityError as exc:
        return f"does not verify: {exc}"
    if not ms.ended:
        return "not over"
    checked = verify_entries(entries)
    if not checked.ok:
        return f"does not verify: {checked.failure}"
    return None


@dataclass
class Report:
    """What `archive_matches` did: matches archived (and removed unless a dry run), left
    alone (too recent, or not over), and failed (with why: nothing of them removed)."""

    archived: list[str] = field(default_factory=list)
    recent: list[str] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


async def match_ids(store: EventStore) -> list[str]:
    """Every match with a log in the store (on a cluster, on every master), sorted."""
    found: set[str] = set()
    async for key in store.reads.scan_iter(match="dd:{*}:head", count=1000):
        name = key.decode() if isinstance(key, bytes) else str(key)
        m = _HEAD_KEY.match(name)
        if m is not None:
            found.add(m.group(1))
    return sorted(found)


async def read_raw(store: EventStore, match_id: str) -> list[bytes]:
    """The match's entries exactly as stored (field `e` of each stream entry)."""
    out: list[bytes] = []
    start = "-"
    while True:
        batch: Any = await store.reads.xrange(log_key(match_id), min=start, max="+", count=1000)
        for _sid, fields in batch:
            out.append(bytes(fields[b"e"]))
        if len(batch) < 1000:
            return out
        last = batch[-1][0]
        start = f"({last.decode() if isinstance(last, bytes) else last}"


async def archive_matches(
    store: EventStore,
    to: Archive,
    *,
    older_than_s: float,
    dry_run: bool = False,
    now_ms: int | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> Report:
    """Archive every finished match whose last entry is older than `older_than_s`, then
    remove it from the store (see the module docstring). `say` gets a line per match."""
    now = now_ms if now_ms is not None else time.time_ns() // 1_000_000
    cutoff = now - older_than_s * 1000
    report = Report()
    remove = store.writes.register_script(REMOVE_SCRIPT)
    for match_id in await match_ids(store):
        raw = await read_raw(store, match_id)
        if not raw:
            continue
        try:
            entries = [_entry_decoder.decode(r) for r in raw]
        except msgspec.DecodeError as exc:
            report.failed.append((match_id, f"an entry is not JSON: {exc}"))
            say(f"{match_id}: left in Redis: an entry is not JSON: {exc}")
            continue
        last = entries[-1]
        if last.ts > cutoff:
            report.recent.append(match_id)
            continue
        why = await asyncio.to_thread(check, entries)
        if why == "not over":
            report.unfinished.append(match_id)
            continue
        if why is not None:
            report.failed.append((match_id, why))
            say(f"{match_id}: left in Redis: {why}")
            continue
        if dry_run:
            report.archived.append(match_id)
            say(f"{match_id}: would be archived to {to.path(match_id)} ({len(entries)} entries)")
            continue
        data = encode(raw)
        try:
            held = await asyncio.to_thread(to.read_bytes, match_id)
            if held is not None and held != data:  # never overwritten: see deploy/README.md
                why = f"{to.path(match_id)} holds another log of this id already"
                report.failed.append((match_id, why))
                say(f"{match_id}: left in Redis: {why}")
                continue
            path = await asyncio.to_thread(to.write, match_id, data)
            back = await asyncio.to_thread(to.read_bytes, match_id)
        except OSError as exc:
            report.failed.append((match_id, f"the archive could not be written: {exc}"))
            say(f"{match_id}: left in Redis: the archive could not be written: {exc}")
            continue
        if back != data:
            why = "the archive file read back is not what was written"
        else:
            why = await asyncio.to_thread(_check_file, back)
        if why is not None:
            report.failed.append((match_id, why))
            say(f"{match_id}: left in Redis: {why}")
            continue
        # (the keys a match's appends write: what the script deletes)
        status = await remove(keys=append_keys(match_id), args=[f"{last.seq}:{last.digest}"])
        status = status.decode() if isinstance(status, bytes) else str(status)
        if status == "conflict":
            report.failed.append((match_id, "appended to while being archived: kept in Redis"))
            say(f"{match_id}: left in Redis: appended to while being archived")
            continue
        await store.reads.srem(ACTIVE, match_id)
        report.archived.append(match_id)
        say(f"{match_id}: archived to {path} ({len(entries)} entries), removed from Redis")
    return report


def _check_file(data: bytes) -> str | None:
    try:
        entries = decode(data)
    except msgspec.DecodeError as exc:
        return f"the archive file does not read back: {exc}"
    why = check(entries)
    return None if why is None else f"the archive file {why}"
