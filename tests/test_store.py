"""The event store, run against fakeredis and a real redis-server alike."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.exceptions import TimeoutError as RedisTimeoutError

from domain import engine
from server.store import EventStore, head_value, log_key, tokens_key
from tests import toygame


def fresh(match_id: str = "m1") -> tuple[engine.Entry, engine.MatchState]:
    first = engine.create_entry(
        toygame, match_id=match_id, variant=None, options={}, seed=b"s" * 32, ts=1000
    )
    return first, engine.open_match(toygame, first)


def join(ms: engine.MatchState, name: str, ts: int) -> tuple[engine.Entry, engine.MatchState]:
    entry, ms, _ = engine.propose(ms, kind="join", seat=None, cid=None, body={"name": name}, ts=ts)
    return entry, ms


async def test_create_append_read(store: EventStore) -> None:
    first, ms = fresh()
    assert await store.create("m1", first)
    assert not await store.create("m1", first), "a match id is created once"
    assert await store.active() == ["m1"]
    e2, _ms2 = join(ms, "Ann", 1100)
    res = await store.append("m1", e2, expected_head=head_value(first), key="j1", token_hash="h", seat=0)
    assert res.status == "ok" and res.seq == 2
    entries = await store.read("m1")
    assert [e for _, e in entries] == [first, e2]
    assert await store.seat_for_token("m1", "h") == 0
    assert await store.seat_for_token("m1", "other") is None
    assert [e for _, e in await store.read("m1", after=entries[0][0])] == [e2]
    assert await store.length("m1") == 2


async def test_a_key_is_appended_once(store: EventStore) -> None:
    first, ms = fresh()
    await store.create("m1", first)
    e2, _ = join(ms, "Ann", 1100)
    assert (await store.append("m1", e2, expected_head=head_value(first), key="k")).status == "ok"
    again = await store.append("m1", e2, expected_head=head_value(e2), key="k")
    assert again.status == "dup" and again.seq == 2
    assert await store.length("m1") == 2


async def test_a_stale_head_conflicts(store: EventStore) -> None:
    first, ms = fresh()
    await store.create("m1", first)
    a, _ = join(ms, "Ann", 1100)
    b, _ = join(ms, "Bob", 1100)  # decided on the same head as `a`
    assert (await store.append("m1", a, expected_head=head_value(first), key="a")).status == "ok"
    assert (await store.append("m1", b, expected_head=head_value(first), key="b")).status == "conflict"
    assert await store.length("m1") == 2


async def test_wait_returns_new_entries(store: EventStore) -> None:
    first, ms = fresh()
    await store.create("m1", first)
    (sid, _), = await store.read("m1")
    waiter = asyncio.create_task(store.wait("m1", sid, 2000))
    await asyncio.sleep(0.05)
    e2, _ = join(ms, "Ann", 1100)
    await store.append("m1", e2, expected_head=head_value(first), key="k")
    got = await asyncio.wait_for(waiter, 3)
    assert [e for _, e in got] == [e2]
    assert await store.wait("m1", got[-1][0], 50) == []


async def test_keys_share_the_match_hash_tag(store: EventStore) -> None:
    first, _ = fresh("abc")
    await store.create("abc", first)
    keys = sorted(k.decode() for k in await store.reads.keys("dd:{abc}:*"))
    assert keys == ["dd:{abc}:cids", "dd:{abc}:head", "dd:{abc}:log"]
    assert log_key("abc").startswith("dd:{abc}") and tokens_key("abc").startswith("dd:{abc}")


async def test_nothing_trims_the_stream() -> None:
    import pathlib

    src = "".join(p.read_text() for p in pathlib.Path("server").glob("*.*"))
    for word in ("MAXLEN", "XTRIM", "XDEL", "maxlen", "xtrim", "xdel"):
        assert word not in src


async def test_a_lost_reply_is_reconciled_not_resent(store: EventStore) -> None:
    first, ms = fresh()
    await store.create("m1", first)
    e2, _ = join(ms, "Ann", 1100)
    real = store._append
    calls: list[int] = []

    async def lost_reply(**kw: Any) -> Any:
        calls.append(1)
        await real(**kw)  # it lands ...
        raise RedisTimeoutError("reply lost")  # ... but the caller never hears

    store._append = lost_reply  # type: ignore[method-assign]
    res = await store.append("m1", e2, expected_head=head_value(first), key="k")
    assert res.status == "dup" and res.seq == 2 and calls == [1]
    assert await store.length("m1") == 2


async def test_a_request_that_never_arrived_is_tried_again(store: EventStore) -> None:
    first, ms = fresh()
    await store.create("m1", first)
    e2, _ = join(ms, "Ann", 1100)
    real = store._append
    calls: list[int] = []

    async def lost_request(**kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RedisTimeoutError("request lost")
        return await real(**kw)

    store._append = lost_request  # type: ignore[method-assign]
    res = await store.append("m1", e2, expected_head=head_value(first), key="k")
    assert res.status == "ok" and len(calls) == 2
    assert await store.length("m1") == 2


@pytest.mark.parametrize("n", [50])
async def test_concurrent_appenders_never_fork_the_log(store: EventStore, n: int) -> None:
    """Many writers deciding on what they folded: the log stays one chain."""
    first, _ms0 = fresh()
    await store.create("m1", first)

    async def writer(name: str) -> None:
        while True:
            entries = [e for _, e in await store.read("m1")]
            ms = engine.fold(toygame, entries)
            if ms.started:
                return
            entry, _ = join(ms, name, 1100 + len(entries))
            res = await store.append("m1", entry, expected_head=head_value(entries[-1]), key=name)
            if res.status in ("ok", "dup"):
                return

    await asyncio.gather(*(writer(f"w{i}") for i in range(n)))
    entries = [e for _, e in await store.read("m1")]
    assert len(entries) == 3
    final = engine.fold(toygame, entries)
    assert final.started
