"""What the Redis event store (server/store.py) has beyond the Store contract, on fakeredis
and a real redis-server alike: its keys, and how it reconciles an append whose outcome it
did not learn. The contract every backend keeps is tests/test_store_contract.py."""

from __future__ import annotations

from typing import Any

from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store import EventStore, head_value, log_key, tokens_key
from tests.test_store_contract import fresh, join


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
