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
    real = store._replies
    calls: list[int] = []

    async def lost_reply(batch: Any) -> Any:
        calls.append(1)
        await real(batch)  # it lands ...
        raise RedisTimeoutError("reply lost")  # ... but the caller never hears

    store._replies = lost_reply  # type: ignore[method-assign]
    res = await store.append("m1", e2, expected_head=head_value(first), key="k")
    # its own entry landed: this append's `ok`, not a duplicate of an earlier one
    assert res.status == "ok" and res.seq == 2 and calls == [1]
    assert await store.length("m1") == 2
    assert res.stream_id == (await store.read("m1"))[1][0]


async def test_a_lost_reply_found_by_the_next_try_is_the_appends_own(store: EventStore) -> None:
    """The reply is lost and Redis does not answer the reconciliation either: the next
    try answers `dup`, which is the first try's entry, so still this append's `ok`."""
    first, ms = fresh()
    await store.create("m1", first)
    e2, _ = join(ms, "Ann", 1100)
    real_append, real_find = store._replies, store._find
    calls: list[str] = []

    async def lost_reply(batch: Any) -> Any:
        calls.append("append")
        reply = await real_append(batch)
        if len(calls) == 1:
            raise RedisTimeoutError("reply lost")
        return reply

    async def no_answer(**kw: Any) -> Any:
        calls.append("find")
        if calls.count("find") == 1:
            raise RedisTimeoutError("no answer")
        return await real_find(**kw)

    store._replies = lost_reply  # type: ignore[method-assign]
    store._find = no_answer  # type: ignore[method-assign]
    res = await store.append("m1", e2, expected_head=head_value(first), key="k")
    assert calls == ["append", "find", "append", "find"]
    assert res.status == "ok" and res.seq == 2
    assert res.stream_id == (await store.read("m1"))[1][0]
    assert await store.length("m1") == 2


async def test_another_entry_under_the_key_stays_a_duplicate(store: EventStore) -> None:
    """An append whose request was lost finds its key taken, at its own seq, by another
    entry (the same command decided by another process, another time): `dup`."""
    first, ms = fresh()
    await store.create("m1", first)
    other, _ = join(ms, "Ann", 1100)
    mine, _ = join(ms, "Ann", 1200)  # the same join, decided later: another entry
    assert other.seq == mine.seq and other != mine
    real = store._replies
    calls: list[int] = []

    async def lost_request(batch: Any) -> Any:
        calls.append(1)
        store._replies = real  # type: ignore[method-assign]
        # meanwhile the other entry lands under the key (another process's append)
        [(status, _)] = await real([("m1", store._script_args(other, head_value(first), "k"))])
        assert status in ("ok", b"ok")
        raise RedisTimeoutError("request lost")

    store._replies = lost_request  # type: ignore[method-assign]
    res = await store.append("m1", mine, expected_head=head_value(first), key="k")
    assert res.status == "dup" and res.seq == 2 and calls == [1]
    assert [e for _, e in await store.read("m1")] == [first, other]


async def test_a_request_that_never_arrived_is_tried_again(store: EventStore) -> None:
    first, ms = fresh()
    await store.create("m1", first)
    e2, _ = join(ms, "Ann", 1100)
    real = store._replies
    calls: list[int] = []

    async def lost_request(batch: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RedisTimeoutError("request lost")
        return await real(batch)

    store._replies = lost_request  # type: ignore[method-assign]
    res = await store.append("m1", e2, expected_head=head_value(first), key="k")
    assert res.status == "ok" and len(calls) == 2
    assert await store.length("m1") == 2


async def test_appends_of_one_moment_are_one_batch_each_with_its_own_answer(store: EventStore) -> None:
    """Appends decided in the same turn of the loop go to Redis together; each gets its
    own answer (ok, conflict, dup) as it would alone."""
    import asyncio

    firsts = {}
    for i in range(12):
        first, ms = fresh(f"b{i}")
        await store.create(f"b{i}", first)
        firsts[f"b{i}"] = (first, join(ms, "Ann", 1100)[0])
    first0, e0 = firsts["b0"]
    assert (await store.append("b0", e0, expected_head=head_value(first0), key="j")).status == "ok"
    batches: list[int] = []
    real = store._replies

    async def counted(batch: Any) -> Any:
        batches.append(len(batch))
        return await real(batch)

    store._replies = counted  # type: ignore[method-assign]
    results = await asyncio.gather(
        store.append("b0", e0, expected_head=head_value(first0), key="j"),  # its key is taken
        store.append("b1", firsts["b1"][1], expected_head="2:nope", key="j"),  # not the head
        *(store.append(m, e, expected_head=head_value(f), key="j") for m, (f, e) in list(firsts.items())[2:]),
    )
    assert [r.status for r in results] == ["dup", "conflict"] + ["ok"] * 10
    assert results[0].seq == 2 and all(r.stream_id for r in results[2:])
    assert batches == [12], batches
    assert [await store.length(m) for m in firsts] == [2, 1] + [2] * 10


async def test_redis_that_lost_its_scripts_is_given_the_append_again(store: EventStore) -> None:
    """SCRIPT FLUSH (a restarted Redis without persistence of its scripts): every
    append of the batch answered NOSCRIPT is sent again with the script."""
    import asyncio

    entries = {}
    for i in range(3):
        first, ms = fresh(f"s{i}")
        await store.create(f"s{i}", first)
        entries[f"s{i}"] = (first, join(ms, "Ann", 1100)[0])
    await store.writes.script_flush()
    results = await asyncio.gather(
        *(store.append(m, e, expected_head=head_value(f), key="j") for m, (f, e) in entries.items())
    )
    assert [r.status for r in results] == ["ok"] * 3


async def test_an_append_connection_killed_is_opened_again(store: EventStore) -> None:
    """Redis drops the connection appends are written on (CLIENT KILL, a restart): the
    next append opens another."""
    first, ms = fresh("k")
    await store.create("k", first)
    e2, ms = join(ms, "Ann", 1100)
    assert (await store.append("k", e2, expected_head=head_value(first), key="j1")).status == "ok"
    await store.reads.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    e3, _ = join(ms, "Bob", 1200)
    res = await store.append("k", e3, expected_head=head_value(e2), key="j2")
    assert res.status == "ok" and res.seq == 3
    assert await store.length("k") == 3


async def test_an_append_batchs_replies_read_from_the_reader_stay_in_order() -> None:
    """server/store.py _read_replies, on redis-py's hiredis parser: replies as the reader
    gives them, a socket read when it holds no whole reply, an append's own error as its
    reply; a connection closed meanwhile is a ConnectionError, as read_response says."""
    import pytest
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import ResponseError

    from server import store as store_module

    waiting = store_module._NOT_ENOUGH_DATA
    assert waiting is not None  # (this redis-py: the fast path is the one taken)
    error = ResponseError("an append's own")

    class Reader:
        def __init__(self, given: list[Any]) -> None:
            self.given = given

        def gets(self, decode: bool) -> Any:
            return self.given.pop(0) if self.given else waiting

    class Parser:
        def __init__(self, before: list[Any], after: list[Any]) -> None:
            self._reader, self._stream, self.after, self.reads = Reader(before), object(), after, 0

        async def read_from_socket(self) -> bool:
            self.reads += 1
            self._reader.given += self.after
            self.after = []
            return True

    class Conn:
        def __init__(self, parser: Parser) -> None:
            self._parser = parser

    parser = Parser([[b"ok", b"1-0"], error], [[b"conflict", b""]])
    replies: list[Any] = []
    await store_module._read_replies(Conn(parser), 3, replies)
    assert replies == [[b"ok", b"1-0"], error, [b"conflict", b""]] and parser.reads == 1
    closed = Parser([], [])
    closed._stream = None
    with pytest.raises(RedisConnectionError):
        await store_module._read_replies(Conn(closed), 1, [])
