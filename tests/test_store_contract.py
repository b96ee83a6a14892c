"""The event store's contract (server/storage.py: Store), one suite over every backend:
in memory, fakeredis and a real redis-server (the `any_store` fixture, tests/conftest.py).

What only the Redis backend has (its keys, its reconciliation of a lost reply) is tested
in tests/test_store.py.
"""

from __future__ import annotations

import asyncio

import msgspec

from domain import engine
from server.core import sid_order
from server.storage import Store, head_value
from tests import toygame


def fresh(match_id: str = "m1") -> tuple[engine.Entry, engine.MatchState]:
    first = engine.create_entry(
        toygame, match_id=match_id, variant=None, options={}, seed=b"s" * 32, ts=1000
    )
    return first, engine.open_match(toygame, first)


def join(ms: engine.MatchState, name: str, ts: int) -> tuple[engine.Entry, engine.MatchState]:
    entry, ms, _ = engine.propose(ms, kind="join", seat=None, cid=None, body={"name": name}, ts=ts)
    return entry, ms


async def test_create_append_read(any_store: Store) -> None:
    store = any_store
    first, ms = fresh()
    assert await store.create("m1", first)
    assert not await store.create("m1", first), "a match id is created once"
    assert await store.active() == ["m1"]
    e2, _ms2 = join(ms, "Ann", 1100)
    res = await store.append("m1", e2, expected_head=head_value(first), key="j1", token_hash="h", seat=0)
    assert res.status == "ok" and res.seq == 2 and res.stream_id is not None
    entries = await store.read("m1")
    assert [e for _, e in entries] == [first, e2]
    assert entries[1][0] == res.stream_id
    assert sid_order(entries[0][0]) < sid_order(entries[1][0])
    assert await store.seat_for_token("m1", "h") == 0
    assert await store.seat_for_token("m1", "other") is None
    assert [e for _, e in await store.read("m1", after=entries[0][0])] == [e2]
    assert await store.read("m1", after=entries[1][0]) == []
    assert await store.length("m1") == 2


async def test_a_match_not_there(any_store: Store) -> None:
    assert await any_store.read("nope") == []
    assert await any_store.length("nope") == 0
    assert await any_store.seat_for_token("nope", "h") is None
    assert await any_store.active() == []


async def test_a_key_is_appended_once(any_store: Store) -> None:
    store = any_store
    first, ms = fresh()
    await store.create("m1", first)
    e2, ms2 = join(ms, "Ann", 1100)
    assert (await store.append("m1", e2, expected_head=head_value(first), key="k")).status == "ok"
    again = await store.append("m1", e2, expected_head=head_value(e2), key="k")
    assert again.status == "dup" and again.seq == 2
    # a key seen answers dup whatever the head, and records no token
    e3, _ = join(ms2, "Bob", 1200)
    stale = await store.append("m1", e3, expected_head="0:x", key="k", token_hash="t", seat=1)
    assert stale.status == "dup" and stale.seq == 2
    assert await store.seat_for_token("m1", "t") is None
    assert await store.length("m1") == 2


async def test_a_stale_head_conflicts(any_store: Store) -> None:
    store = any_store
    first, ms = fresh()
    await store.create("m1", first)
    a, _ = join(ms, "Ann", 1100)
    b, _ = join(ms, "Bob", 1100)  # decided on the same head as `a`
    assert (await store.append("m1", a, expected_head=head_value(first), key="a")).status == "ok"
    res = await store.append("m1", b, expected_head=head_value(first), key="b", token_hash="t", seat=1)
    assert res.status == "conflict"
    assert await store.seat_for_token("m1", "t") is None, "nothing of a conflict is recorded"
    assert await store.length("m1") == 2
    # the key of a conflict was not recorded: decided again on the new head, it lands
    b2, _ = join(engine.fold(toygame, [first, a]), "Bob", 1200)
    assert (await store.append("m1", b2, expected_head=head_value(a), key="b")).status == "ok"


async def test_appends_begun_one_after_another_land_in_that_order(any_store: Store) -> None:
    """An ordered store tries appends in the order they are begun: an entry decided on
    one whose append is still in flight lands right after it; one decided on an append
    that fails fails too (its head never was), and a later one begun on the real head
    lands."""
    store = any_store
    if not store.ordered:
        return
    first, ms = fresh()
    assert await store.create("m1", first)
    e2, ms2 = join(ms, "Ann", 1100)
    e3, ms3 = join(ms2, "Bob", 1200)
    second = store.begin_append("m1", e2, expected_head=head_value(first), key="j1")
    await asyncio.sleep(0)  # (its batch on its way: the next one is begun behind it)
    third = store.begin_append("m1", e3, expected_head=head_value(e2), key="j2")
    done = await asyncio.gather(third, second)  # (awaited in any order: begun in order)
    assert [r.status for r in done] == ["ok", "ok"] and [r.seq for r in done] == [3, 2]
    assert [e for _, e in await store.read("m1")] == [first, e2, e3]

    e4, ms4 = join(ms, "Cid", 1300)  # decided on a head that is no longer the store's
    e5, _ = join(ms4, "Dan", 1400)
    stale = store.begin_append("m1", e4, expected_head=head_value(first), key="j3")
    on_stale = store.begin_append("m1", e5, expected_head=head_value(e4), key="j4")
    e6, _ = join(ms3, "Eve", 1500)
    fine = store.begin_append("m1", e6, expected_head=head_value(e3), key="j5")
    assert [r.status for r in await asyncio.gather(stale, on_stale, fine)] == ["conflict", "conflict", "ok"]
    assert [e for _, e in await store.read("m1")] == [first, e2, e3, e6]


async def test_matches_are_active_until_marked_over(any_store: Store) -> None:
    store = any_store
    for m in ("m2", "m1", "m3"):
        assert await store.create(m, fresh(m)[0])
    assert await store.active() == ["m1", "m2", "m3"]
    await store.mark_over("m2")
    await store.mark_over("m2")
    assert await store.active() == ["m1", "m3"]
    assert await store.length("m2") == 1, "a match over keeps its log"


async def test_follow_returns_what_is_new_in_every_match(any_store: Store) -> None:
    store = any_store
    (a1, ams), (b1, _) = fresh("a"), fresh("b")
    await store.create("a", a1)
    await store.create("b", b1)
    sa, sb = (await store.read("a"))[0][0], (await store.read("b"))[0][0]
    assert await store.follow({"a": sa, "b": sb}, 50) == {}
    a2, _ = join(ams, "Ann", 1100)
    await store.append("a", a2, expected_head=head_value(a1), key="k")
    found = await store.follow({"a": sa, "b": sb}, 50)
    assert list(found) == ["a"]
    ((sid, raw),) = found["a"]
    assert msgspec.json.decode(raw, type=engine.Entry) == a2
    assert sid == (await store.read("a"))[1][0]
    both = await store.follow({"a": "0-0", "b": "0-0"}, 50)
    assert {m: len(items) for m, items in both.items()} == {"a": 2, "b": 1}


async def test_follow_waits_for_an_append(any_store: Store) -> None:
    store = any_store
    first, ms = fresh()
    await store.create("m1", first)
    ((sid, _),) = await store.read("m1")
    waiter = asyncio.create_task(store.follow({"m1": sid}, 3000))
    await asyncio.sleep(0.05)
    assert not waiter.done()
    e2, _ = join(ms, "Ann", 1100)
    await store.append("m1", e2, expected_head=head_value(first), key="k")
    got = await asyncio.wait_for(waiter, 3)
    assert [msgspec.json.decode(raw, type=engine.Entry) for _, raw in got["m1"]] == [e2]
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await store.follow({"m1": got["m1"][-1][0]}, 100) == {}
    assert loop.time() - started >= 0.09, "nothing new: it waits out its time"


async def test_unblock_ends_a_follow_that_waits(any_store: Store) -> None:
    store = any_store
    first, _ = fresh()
    await store.create("m1", first)
    ((sid, _),) = await store.read("m1")
    client = await store.follows_id()
    assert not await store.unblock(client), "nothing waits"
    loop = asyncio.get_running_loop()
    started = loop.time()
    waiter = asyncio.create_task(store.follow({"m1": sid}, 5000))
    for _ in range(100):  # until the read has reached the store
        await asyncio.sleep(0.01)
        if await store.unblock(client):
            break
    assert await asyncio.wait_for(waiter, 3) == {}
    assert loop.time() - started < 2


async def test_forget_keeps_the_log(any_store: Store) -> None:
    store = any_store
    first, _ = fresh()
    await store.create("m1", first)
    assert await store.follow({"m1": "0-0"}, 10)
    any_store.forget("m1")
    any_store.forget("never-seen")
    assert [e for _, e in await store.read("m1")] == [first]
    assert list(await store.follow({"m1": "0-0"}, 10)) == ["m1"]


async def test_concurrent_appenders_never_fork_the_log(any_store: Store) -> None:
    """Many writers deciding on what they folded: the log stays one chain."""
    store = any_store
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

    await asyncio.gather(*(writer(f"w{i}") for i in range(50)))
    entries = [e for _, e in await store.read("m1")]
    assert len(entries) == 3
    final = engine.fold(toygame, entries)
    assert final.started


async def test_expire_removes_a_match_and_keeps_why(any_store: Store) -> None:
    """An expiry lands only on the head it was decided on, removes the log and its keys
    (the match is no longer active), and keeps the record for its time."""
    store = any_store
    first, ms = fresh()
    await store.create("m1", first)
    e2, _ = join(ms, "Ann", 1100)
    await store.append("m1", e2, expected_head=head_value(first), key="j", token_hash="h", seat=0)
    record = {"match": "m1", "reason": "unfilled", "message": "expired"}
    stale = await store.expire("m1", expected_head=head_value(first), record=record, keep_s=60)
    assert stale == "conflict", "a seat taken since the head it was decided on wins"
    assert await store.length("m1") == 2 and await store.expired("m1") is None
    assert await store.expire("m1", expected_head=head_value(e2), record=record, keep_s=60) == "expired"
    assert await store.read("m1") == [] and await store.length("m1") == 0
    assert await store.seat_for_token("m1", "h") is None
    assert await store.active() == []
    assert await store.expired("m1") == record
    assert await store.expire("m1", expected_head=head_value(e2), record=record, keep_s=60) == "gone"
    assert await store.expire("never", expected_head="", record=record, keep_s=60) == "gone"
    assert await store.expired("never") is None
    # the key of the expired match's command was removed with it: nothing answers dup
    again = await store.append("m1", e2, expected_head=head_value(first), key="j")
    assert again.status == "conflict"
    assert await store.length("m1") == 0


async def test_of_two_expiries_at_once_one_lands(any_store: Store) -> None:
    store = any_store
    first, _ = fresh()
    await store.create("m1", first)
    results = await asyncio.gather(*(
        store.expire("m1", expected_head=head_value(first), record={"n": i}, keep_s=60)
        for i in range(5)
    ))
    assert sorted(results) == ["expired"] + ["gone"] * 4
    winner = results.index("expired")
    assert await store.expired("m1") == {"n": winner}


async def test_an_expiry_record_is_kept_for_its_time(any_store: Store) -> None:
    store = any_store
    first, _ = fresh()
    await store.create("m1", first)
    assert await store.expire("m1", expected_head=head_value(first), record={"r": 1}, keep_s=0.05) == "expired"
    assert await store.expired("m1") == {"r": 1}
    await asyncio.sleep(0.15)
    assert await store.expired("m1") is None


async def test_a_creation_key_keeps_its_first_record(any_store: Store) -> None:
    store = any_store
    first, second = {"match": "m1", "request": "r1"}, {"match": "m2", "request": "r2"}
    assert await store.claim_creation_key("k", first, keep_s=60) is None
    assert await store.claim_creation_key("k", second, keep_s=60) == first
    assert await store.claim_creation_key("k", first, keep_s=60) == first
    assert await store.claim_creation_key("k2", second, keep_s=60) is None
    results = await asyncio.gather(*(
        store.claim_creation_key("c", {"match": f"m{i}", "request": "r"}, keep_s=60) for i in range(5)
    ))
    assert results.count(None) == 1, "of five claims at once, one stores its record"
    stored = {"match": f"m{results.index(None)}", "request": "r"}
    assert all(r == stored for r in results if r is not None)


async def test_a_creation_key_is_released_only_for_its_own_record(any_store: Store) -> None:
    store = any_store
    first, second = {"match": "m1", "request": "r1"}, {"match": "m2", "request": "r2"}
    assert await store.claim_creation_key("k", first, keep_s=60) is None
    await store.release_creation_key("k", second)
    assert await store.claim_creation_key("k", second, keep_s=60) == first, "not its record: kept"
    await store.release_creation_key("k", first)
    assert await store.claim_creation_key("k", second, keep_s=60) is None
    await store.release_creation_key("never", first)


async def test_a_creation_key_is_kept_for_its_time(any_store: Store) -> None:
    store = any_store
    assert await store.claim_creation_key("k", {"match": "m1"}, keep_s=0.05) is None
    assert await store.claim_creation_key("k", {"match": "m2"}, keep_s=60) == {"match": "m1"}
    await asyncio.sleep(0.15)
    assert await store.claim_creation_key("k", {"match": "m2"}, keep_s=60) is None
