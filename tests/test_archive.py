"""Archival (server/archive.py): a finished match moves to a verified file and out of
Redis, and is served and replayed from there as before; nothing unfinished, and nothing
whose archive is not verified, is removed."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from clients import cli
from clients.client import read_log_file
from clients.replay import verify_entries
from server import archive
from server.archive import ArchiveDir, archive_matches, parse_age
from server.config import Settings
from server.main import EmbeddedServer
from server.store import EventStore, cids_key, head_key, log_key, tokens_key
from tests import toygame
from tests.conftest import _free_port, wait_for_port
from tests.wsutil import Raw, new_match

toygame.install()


def keys_of(match: str) -> list[str]:
    return [log_key(match), head_key(match), cids_key(match), tokens_key(match)]


async def play_to_the_end(srv: EmbeddedServer) -> str:
    match, tokens = await new_match(srv.url, "toy", {"turn_ms": 60_000})
    players = [await Raw.open(srv.ws_url) for _ in tokens]
    for raw, token in zip(players, tokens, strict=True):
        assert (await raw.hello(match, token))["type"] == "welcome"
    n = 0
    while True:
        answer = await players[n % 2].command(f"c{n}", {"type": "add", "n": 3})
        assert answer["type"] == "ack", answer
        n += 1
        async with httpx.AsyncClient(base_url=srv.url) as http:
            if (await http.get(f"/matches/{match}")).json()["ended"]:
                break
    for raw in players:
        await raw.close()
    return match


async def get_log(srv: EmbeddedServer, match: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=srv.url) as http:
        return await http.get(f"/matches/{match}/log")


def later() -> int:
    """A `now` past every entry written so far (archive anything finished)."""
    return time.time_ns() // 1_000_000 + 1000


async def test_an_archived_match_replays_and_verifies_and_its_keys_are_gone(
    store: EventStore, tmp_path: Path
) -> None:
    folder = tmp_path / "archive"
    async with EmbeddedServer(Settings(archive=str(folder)), store=store) as srv:
        finished = await play_to_the_end(srv)
        unfinished, _ = await new_match(srv.url, "toy", {"turn_ms": 60_000}, names=("Ann",))
        served = await get_log(srv, finished)
        assert served.status_code == 200

        # Too recent: nothing happens.
        report = await archive_matches(store, ArchiveDir(folder), older_than_s=3600)
        assert report.archived == [] and finished in report.recent
        # A dry run says what it would do and does nothing.
        report = await archive_matches(store, ArchiveDir(folder), older_than_s=0, now_ms=later(), dry_run=True)
        assert report.archived == [finished]
        assert not folder.exists() and await store.reads.exists(*keys_of(finished)) == 4

        report = await archive_matches(store, ArchiveDir(folder), older_than_s=0, now_ms=later())
        assert report.archived == [finished] and report.failed == []
        assert report.unfinished == [unfinished]
        assert await store.reads.exists(*keys_of(finished)) == 0
        assert await store.reads.exists(log_key(unfinished), head_key(unfinished)) == 2

        # The file is the log as stored, and verifies as replay --verify verifies it.
        entries = read_log_file(folder / f"{finished}.jsonl")
        assert verify_entries(entries).ok and len(entries) >= 5

        # The server serves it as before; replay fetches and verifies it.
        again = await get_log(srv, finished)
        assert again.status_code == 200 and again.content == served.content
        code = await asyncio.to_thread(cli.main, ["replay", finished, "--server", srv.url, "--verify"])
        assert code == 0
        code = await asyncio.to_thread(cli.main, ["replay", str(folder / f"{finished}.jsonl"), "--verify"])
        assert code == 0
        # The unfinished match is still played from Redis.
        async with httpx.AsyncClient(base_url=srv.url) as http:
            assert (await http.get(f"/matches/{unfinished}")).status_code == 200

    # Another server, that knows nothing of the match, serves it from the archive too;
    # one without the archive does not.
    async with EmbeddedServer(Settings(archive=str(folder)), store=store) as srv:
        assert (await get_log(srv, finished)).content == served.content
    async with EmbeddedServer(Settings(archive=None), store=store) as srv:
        assert (await get_log(srv, finished)).status_code == 404


async def test_nothing_is_removed_before_its_archive_is_verified(
    store: EventStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "archive"
    async with EmbeddedServer(Settings(archive=str(folder)), store=store) as srv:
        finished = await play_to_the_end(srv)
        unfinished, _ = await new_match(srv.url, "toy", names=("Ann", "Bob"))  # started
        served = await get_log(srv, finished)

    def cannot_write(self: ArchiveDir, match_id: str, data: bytes) -> Path:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(ArchiveDir, "write", cannot_write)
        report = await archive_matches(store, ArchiveDir(folder), older_than_s=0, now_ms=later())
    assert report.archived == [] and [m for m, _ in report.failed] == [finished]
    assert "could not be written" in report.failed[0][1]
    assert await store.reads.exists(*keys_of(finished)) == 4

    real_write = ArchiveDir.write

    def writes_wrong(self: ArchiveDir, match_id: str, data: bytes) -> Path:
        return real_write(self, match_id, data.replace(b'"seq":2', b'"seq":3', 1))

    with monkeypatch.context() as patch:
        patch.setattr(ArchiveDir, "write", writes_wrong)
        report = await archive_matches(store, ArchiveDir(folder), older_than_s=0, now_ms=later())
    assert report.archived == [] and [m for m, _ in report.failed] == [finished]
    assert "not what was written" in report.failed[0][1]
    assert await store.reads.exists(*keys_of(finished)) == 4

    # A log that does not verify in Redis is not archived either.
    def fails(entries: list[Any]) -> Any:
        class Failed:
            ok = False
            failure = "entry 3: digest mismatch"
        return Failed()

    with monkeypatch.context() as patch:
        patch.setattr("clients.replay.verify_entries", fails)
        report = await archive_matches(store, ArchiveDir(folder), older_than_s=0, now_ms=later())
    assert report.archived == [] and report.failed == [(finished, "does not verify: entry 3: digest mismatch")]
    assert await store.reads.exists(*keys_of(finished)) == 4

    # A file of that name holding another log is never overwritten.
    (folder / f"{finished}.jsonl").parent.mkdir(parents=True, exist_ok=True)
    (folder / f"{finished}.jsonl").write_bytes(b"another log\n")
    report = await archive_matches(store, ArchiveDir(folder), older_than_s=0, now_ms=later())
    assert report.archived == [] and "holds another log" in report.failed[0][1]
    assert (folder / f"{finished}.jsonl").read_bytes() == b"another log\n"
    assert await store.reads.exists(*keys_of(finished)) == 4
    (folder / f"{finished}.jsonl").unlink()

    # Unfinished (started, not over): never archived however old.
    report = await archive_matches(store, ArchiveDir(folder), older_than_s=0, now_ms=later() + 10**9)
    assert report.archived == [finished] and report.unfinished == [unfinished]
    assert await store.reads.exists(*keys_of(unfinished)) >= 3
    async with EmbeddedServer(Settings(archive=str(folder)), store=store) as srv:
        assert (await get_log(srv, finished)).content == served.content


def test_ages() -> None:
    assert parse_age("7d") == 7 * 86400
    assert parse_age("12h") == 12 * 3600 and parse_age("30m") == 1800 and parse_age("90") == 90
    assert parse_age("1.5w") == 1.5 * 7 * 86400
    for bad in ("", "7 days", "-1d", "d"):
        with pytest.raises(ValueError):
            parse_age(bad)


def test_the_command_refuses_what_it_cannot_do(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["archive", "--older-than", "7x", "--to", "/tmp/x", "--redis-url", "redis://h"]) == 2
    assert "not an age" in capsys.readouterr().err
    assert cli.main(["archive", "--older-than", "7d", "--to", "s3://", "--redis-url", "redis://h"]) == 2
    assert "is not s3://BUCKET/PREFIX" in capsys.readouterr().err
    assert archive.ArchiveDir("/tmp").read("../etc/passwd") is None


# --- an S3-compatible bucket -----------------------------------------------------------------


@pytest.fixture(scope="module")
def s3_server() -> Iterator[str]:
    """moto's S3 server on a loopback port (one for the module), boto3 pointed at it, a
    bucket `archive`."""
    pytest.importorskip("boto3")
    program = shutil.which("moto_server", path=os.path.dirname(sys.executable))
    if program is None:
        pytest.skip("no moto_server (pip install 'moto[server]')")
    port = _free_port()
    proc = subprocess.Popen(
        [program, "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        assert wait_for_port(port), "moto_server did not start"
        endpoint = f"http://127.0.0.1:{port}"
        with pytest.MonkeyPatch.context() as env:
            for name, value in {
                "AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "test",
                "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1",
            }.items():
                env.setenv(name, value)
            import boto3

            boto3.client("s3").create_bucket(Bucket="archive")
            archive.open_archive.cache_clear()
            yield endpoint
    finally:
        archive.open_archive.cache_clear()
        proc.terminate()
        proc.wait(10)


async def test_an_archive_in_a_bucket_is_served_the_same(store: EventStore, s3_server: str) -> None:
    import boto3

    location = "s3://archive/daedalus/matches"
    async with EmbeddedServer(Settings(archive=location), store=store) as srv:
        finished = await play_to_the_end(srv)
        served = await get_log(srv, finished)
        report = await archive_matches(
            store, archive.open_archive(location), older_than_s=0, now_ms=later()
        )
        assert report.archived == [finished] and report.failed == []
        assert await store.reads.exists(*keys_of(finished)) == 0
        body = boto3.client("s3").get_object(Bucket="archive", Key=f"daedalus/matches/{finished}.jsonl")
        assert verify_entries(archive.decode(body["Body"].read())).ok
        again = await get_log(srv, finished)
        assert again.status_code == 200 and again.content == served.content
        code = await asyncio.to_thread(cli.main, ["replay", finished, "--server", srv.url, "--verify"])
        assert code == 0
        async with httpx.AsyncClient(base_url=srv.url) as http:
            assert (await http.get("/matches/zzzzzzzzzzzz/log")).status_code == 404


async def test_a_bucket_that_refuses_the_write_keeps_the_match_in_redis(
    store: EventStore, s3_server: str
) -> None:
    async with EmbeddedServer(Settings(), store=store) as srv:
        finished = await play_to_the_end(srv)
    report = await archive_matches(
        store, archive.open_archive("s3://no-such-bucket/x"), older_than_s=0, now_ms=later()
    )
    assert report.archived == [] and [m for m, _ in report.failed] == [finished]
    assert "could not be written" in report.failed[0][1]
    assert await store.reads.exists(*keys_of(finished)) == 4
