"""A match's commands decided on one another while their appends are in flight.

The runner holds a match's lock while a command is decided and its append begun, not
through the append (server/hub.py MatchRunner.submit): the next command is decided on
the first (MatchCore.begin, the core's `tip`) and its append goes right behind it, so
the two seats of a round reach the store in one batch. What must hold whatever happens
to those appends: entries are folded in the order they were decided, each once; one
decided on an append that failed is decided again; the state folded is always the
store's log folded; and nothing is answered that the log does not hold.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redis.exceptions import ConnectionError as RedisConnectionError

from domain.engine import Entry
from server.config import Settings
from server.core import Answer, Append, MatchCore, Submitted
from server.hub import Hub, MatchRunner, token_digest
from server.storage import MemoryStore, Store
from server.store import EventStore
from tests import toygame
from tests.test_core import GAME, SEAT0, SEAT1, Play, plain_fold

toygame.install()


def add(core: MatchCore[str], seat: int, now: int, n: int = 1) -> Append:
    decided = core.propose(kind="command", seat=seat, body={"type": "add", "n": n}, now=now, cid=f"c{now}")
    assert isinstance(decided, Append)
    return decided


def turn(core: MatchCore[str]) -> int:
    return int(core.tip.game_state.turn)


# --- the core ------------------------------------------------------------------------------


def test_entries_begun_are_decided_on_one_another_and_fold_as_one_at_a_time() -> None:
    """Two commands decided back to back, the second on the first begun, give the
    entries, answers and frames of the same two decided one after the other's fold."""
    one_by_one, pipelined = Play().seated(), Play().seated()
    for play in (one_by_one, pipelined):
        play.core.subscribe("a", SEAT0, None, {"type": "welcome"})
        play.core.subscribe("b", SEAT1, None, {"type": "welcome"})
    now = one_by_one.now + 10
    answers = []
    for seat, dt in ((0, 0), (1, 5)):
        decided = add(one_by_one.core, seat, now + dt)
        answers.append(one_by_one.core.appended(f"{decided.entry.seq}-0", decided))
    core = pipelined.core
    first = add(core, 0, now)
    core.begin(first)
    assert core.tip is first.state and core.next_begun is first
    second = add(core, 1, now + 5)
    assert second.expected_head == f"{first.entry.seq}:{first.entry.digest}"
    assert second.outcome.rejection is None, "decided on the first: seat 1's turn"
    core.begin(second)
    landed = [core.appended(f"{d.entry.seq}-0", d) for d in (first, second)]
    assert [done for done, _ in landed] == [done for done, _ in answers]
    assert [folded.sends for _, folded in landed] == [folded.sends for _, folded in answers]
    assert core.current == one_by_one.core.current and core.next_begun is None and core.tip is core.current


def test_an_entry_is_folded_only_after_those_begun_before_it() -> None:
    play = Play().seated()
    core, now = play.core, play.now + 10
    first = add(core, 0, now)
    core.begin(first)
    second = add(core, 1, now + 1)
    core.begin(second)
    with pytest.raises(ValueError, match="before the entries begun before it"):
        core.appended("9-0", second)
    stale = add(core, 0, now + 2)  # decided on the tip, then the tip moves under it
    core.drop(second)
    third = add(core, 1, now + 3)
    core.begin(third)
    with pytest.raises(ValueError, match="not decided on the tip"):
        core.begin(stale)


def test_dropping_an_entry_drops_the_ones_decided_on_it() -> None:
    core = Play().seated().core
    folded = core.current
    begun = []
    for i in range(3):
        decided = add(core, turn(core), 3_000_000 + i)
        core.begin(decided)
        begun.append(decided)
    core.drop(begun[1])
    assert core.next_begun is begun[0] and core.tip is begun[0].state
    core.drop(begun[2])  # (dropped already: nothing changes)
    assert core.tip is begun[0].state
    core.drop(begun[0])
    assert core.next_begun is None and core.tip is folded is core.current


def test_an_entry_begun_here_read_from_the_store_first_is_folded_as_its_own() -> None:
    """The follower may read an entry of this process before its append's reply: folded
    from there, it is no longer pending, its append's answer is `landed`, and the one
    begun after it is still decided on it."""
    play = Play().seated()
    core = play.core
    first = add(core, 0, 4_000_000)
    core.begin(first)
    second = add(core, 1, 4_000_001)
    core.begin(second)
    assert core.landed(first) is None, "not folded yet"
    folded = core.receive([(f"{first.entry.seq}-0", first.raw)])
    assert folded.error is None and core.current.seq == first.entry.seq
    assert core.next_begun is second and core.tip is second.state
    assert core.landed(first) == Submitted(first.entry.seq, first.outcome, False, first.entry.digest)
    done, _ = core.appended(f"{second.entry.seq}-0", second)
    assert done.seq == second.entry.seq and core.current == second.state


def test_an_entry_of_another_process_leaves_the_ones_begun_here_behind() -> None:
    play = Play().seated()
    core = play.core
    other: MatchCore[str] = MatchCore(play.log[0], "1-0", game=GAME)
    other.receive([(f"{e.seq}-0", e) for e in play.log[1:]])
    theirs = add(other, 0, 5_000_000, n=2)
    mine = add(core, 0, 5_000_000, n=1)
    core.begin(mine)
    core.begin(add(core, 1, 5_000_001))
    core.receive([(f"{theirs.entry.seq}-0", theirs.raw)])
    assert core.next_begun is None and core.tip is core.current
    assert core.current.head == theirs.entry.digest
    assert core.landed(mine) is None, "the log holds theirs at that seq"


def test_the_end_read_from_the_store_is_said_by_the_process_that_began_it() -> None:
    """The process whose entry ended the match says so (logs it, counts it), also when
    its follower read the entry before its append's reply; a process folding another's
    end does not."""
    for begun_here in (True, False):
        play = Play().seated()
        core = play.core
        while True:
            decided = add(core, turn(core), play.now + 1, n=3)
            play.now += 1
            if decided.state.ended:
                break
            core.appended(f"{decided.entry.seq}-0", decided)
        if begun_here:
            core.begin(decided)
        folded = core.receive([(f"{decided.entry.seq}-0", decided.raw)])
        assert folded.ended and folded.ended_own is begun_here


# A store's log and two cores folding it, one of which (`mine`) pipelines its appends:
# every interleaving of deciding, the store taking or refusing appends in the order
# they were begun, their replies, another process's appends and the follower's reads.

OPS = st.lists(
    st.sampled_from(["propose", "propose", "execute", "execute", "reply", "reply", "theirs", "follow"]),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(ops=OPS, seats=st.lists(st.integers(0, 1), min_size=60, max_size=60))
def test_whatever_becomes_of_the_appends_the_fold_is_the_logs(ops: list[str], seats: list[int]) -> None:
    play = Play().seated()
    log: list[Entry] = list(play.log)  # the store's
    mine, theirs = play.core, MatchCore[str](play.log[0], "1-0", game=GAME)
    theirs.receive([(f"{e.seq}-0", e) for e in log[1:]])
    keys: set[str] = set()
    in_flight: deque[tuple[Append, str]] = deque()  # begun, not tried by the store yet
    replies: deque[tuple[Append, str | None]] = deque()  # tried: the stream id if taken
    answered: dict[str, Submitted] = {}
    now = play.now
    n = 0

    def head() -> str:
        return f"{log[-1].seq}:{log[-1].digest}"

    def try_append(decided: Append, key: str) -> str | None:
        if key in keys or decided.expected_head != head():
            return None
        keys.add(key)
        log.append(decided.entry)
        return f"{len(log)}-0"

    def follow(core: MatchCore[str]) -> None:
        folded = core.receive([(f"{i + 1}-0", e) for i, e in enumerate(log) if i + 1 > core.current.seq])
        assert folded.error is None and not folded.behind

    def reply(pick: int) -> None:  # (the runner's _land; a reply may come before an earlier one's)
        decided, sid = replies[pick % len(replies)]
        del replies[pick % len(replies)]
        key = f"k{decided.entry.ts}"
        if sid is None:
            mine.drop(decided)
            return
        if mine.next_begun is decided:
            done, _ = mine.appended(sid, decided)
        else:
            landed = mine.landed(decided)
            if landed is None:  # landed behind one given up on: caught up, then answered
                follow(mine)
                landed = mine.landed(decided)
            assert landed is not None
            done = landed
        answered[key] = done

    for op in ops:
        now += 1
        if op == "propose":
            n += 1
            decided = mine.propose(kind="command", seat=seats[n % 60], body={"type": "add", "n": 1}, now=now, cid=f"c{now}")
            assert not isinstance(decided, Answer) and decided is not None
            mine.begin(decided)
            in_flight.append((decided, f"k{now}"))
        elif op == "execute" and in_flight:
            decided, key = in_flight.popleft()
            replies.append((decided, try_append(decided, key)))
        elif op == "reply" and replies:
            reply(seats[n % 60] * n)
        elif op == "theirs":
            follow(theirs)
            if theirs.current.ended:
                continue
            decided = add(theirs, int(theirs.current.game_state.turn), now)
            assert try_append(decided, f"t{now}") is not None
            theirs.appended(f"{len(log)}-0", decided)
        elif op == "follow":
            follow(mine)
        # what is folded is the log's prefix, and what is begun goes on from it
        assert [e.digest for e in log[: mine.current.seq]] == [mine.entry(s).digest for s in range(1, mine.current.seq + 1)]
        begun = mine.next_begun
        assert begun is None or begun.entry.seq == mine.current.seq + 1
    while in_flight:
        decided, key = in_flight.popleft()
        replies.append((decided, try_append(decided, key)))
    while replies:
        reply(0)
    follow(mine)
    assert mine.next_begun is None
    states, _ = plain_fold(log)
    assert mine.current == states[-1]
    for key, done in answered.items():
        assert log[done.seq - 1].ts == int(key[1:]) and not done.duplicate, "answered what the log holds"


# --- the runner, on a store --------------------------------------------------------------


@pytest.fixture
async def hubs(any_store: Store) -> AsyncIterator[tuple[Hub, Hub]]:
    """Two processes on one store (each backend: tests/conftest.py any_store)."""
    store = any_store
    made = (Hub(store, Settings(tail_block_ms=100)), Hub(store, Settings(tail_block_ms=100)))
    yield made
    for hub in made:
        await hub.close()


async def seated(hub: Hub) -> MatchRunner:
    ms = await hub.create_match("toy", None, {"turn_ms": 60_000})
    runner = await hub.runner(ms.match_id)
    for name in ("Ann", "Bob"):
        digest = token_digest(f"token-{name}-{ms.match_id}")
        await runner.submit(kind="join", seat=None, key=f"join:{digest}", body={"name": name}, token_hash=digest)
    return runner


def batches(store: Store) -> list[int]:
    """The sizes of the store's append batches from now on (an EventStore's)."""
    sizes: list[int] = []
    if isinstance(store, EventStore):
        send = store._send

        async def counted(batch: list[Any]) -> None:
            sizes.append(len(batch))
            await send(batch)

        store._send = counted  # type: ignore[method-assign]
    return sizes


def add_command(runner: MatchRunner, seat: int, key: str) -> Any:
    return runner.submit(kind="command", seat=seat, key=key, cid=key, body={"type": "add", "n": 1})


async def log_of(store: Store, match_id: str) -> list[Entry]:
    return [entry for _, entry in await store.read(match_id)]


async def test_both_seats_commands_go_to_the_store_together(hubs: tuple[Hub, Hub]) -> None:
    hub = hubs[0]
    runner = await seated(hub)
    sizes = batches(hub.store)
    before = runner.current.seq
    a, b = await asyncio.gather(add_command(runner, 0, "a"), add_command(runner, 1, "b"))
    assert (a.seq, b.seq) == (before + 1, before + 2)
    assert a.outcome.rejection is None and b.outcome.rejection is None, "b decided on a"
    if isinstance(hub.store, EventStore):
        assert sizes == [2], "one batch"
    log = await log_of(hub.store, runner.match_id)
    assert [e.cid for e in log[before:]] == ["a", "b"]
    assert runner.current == plain_fold(log)[0][-1]


async def test_an_append_that_conflicts_takes_the_one_decided_on_it_and_both_are_decided_again(
    hubs: tuple[Hub, Hub],
) -> None:
    """Another process appended first: this process's two commands, the second decided
    on the first, both conflict (one conflict of the store's own counted); each is
    decided again on the log as it is, and answered once."""
    mine, other = hubs
    runner = await seated(mine)
    mine.follower.pause(runner, 60.0)  # (it would fold the other's entry before we decide)
    theirs = await other.runner(runner.match_id)
    x = await add_command(theirs, 0, "x")
    assert x.seq == runner.current.seq + 1 and x.outcome.rejection is None
    conflicts, retries = (mine.metrics.append_conflicts._value.get(), mine.metrics.append_retries._value.get())
    a, b = await asyncio.gather(add_command(runner, 0, "a"), add_command(runner, 1, "b"))
    log = await log_of(mine.store, runner.match_id)
    assert [e.cid for e in log[x.seq - 1 :]] in (["x", "a", "b"], ["x", "b", "a"])
    for done, cid in ((a, "a"), (b, "b")):
        assert log[done.seq - 1].cid == cid and not done.duplicate
    assert runner.current == plain_fold(log)[0][-1]
    assert mine.metrics.append_conflicts._value.get() - conflicts == 1
    # (a MemoryStore makes an append when it is begun: the first is refused and decided
    # again before the second is decided, on the log as it is)
    assert mine.metrics.append_retries._value.get() - retries == (1 if isinstance(mine.store, MemoryStore) else 2)


async def test_a_command_given_up_on_in_flight_leaves_the_next_one_answered(hubs: tuple[Hub, Hub]) -> None:
    """The first command's task is cancelled (its connection went) while its append is
    in flight: the entry lands all the same and is folded from the store; the second,
    decided on it, is answered with the seq the log gives it."""
    hub = hubs[0]
    runner = await seated(hub)
    if not isinstance(hub.store, EventStore):
        return  # (a MemoryStore's append is made when begun: nothing is in flight)
    first = asyncio.ensure_future(add_command(runner, 0, "a"))
    second = asyncio.ensure_future(add_command(runner, 1, "b"))
    await asyncio.sleep(0)  # both decided, both begun
    assert len(runner._flights) == 2
    first.cancel()
    done = await second
    log = await log_of(hub.store, runner.match_id)
    assert log[done.seq - 1].cid == "b" and log[done.seq - 2].cid == "a"
    assert runner.current == plain_fold(log)[0][-1] and not runner._flights
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_an_unordered_store_gets_one_append_of_a_match_at_a_time(
    hubs: tuple[Hub, Hub], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where batches go concurrently (a Cluster, or waiting for replicas), the second
    command waits for the first's append to settle before it is decided."""
    hub = hubs[0]
    if not isinstance(hub.store, EventStore):
        return
    runner = await seated(hub)
    monkeypatch.setattr(EventStore, "ordered", property(lambda self: False))
    sizes = batches(hub.store)
    a, b = await asyncio.gather(add_command(runner, 0, "a"), add_command(runner, 1, "b"))
    assert sizes == [1, 1] and b.seq == a.seq + 1 and b.outcome.rejection is None
    log = await log_of(hub.store, runner.match_id)
    assert [e.cid for e in log[-2:]] == ["a", "b"]


async def test_a_command_given_up_on_before_its_append_landed_takes_nothing_with_it(
    hubs: tuple[Hub, Hub],
) -> None:
    """The batch of two commands is lost before Redis ran it; the first command's task is
    given up on while it looks into what became of its append (so it never lands): the
    second, decided on it, is decided again on the log as it is, not on the first."""
    hub = hubs[0]
    if not isinstance(hub.store, EventStore):
        return
    store = hub.store
    runner = await seated(hub)
    real_replies, real_reconcile = store._replies, store._reconcile
    lost = [True]
    stuck = asyncio.Event()

    async def lost_request(batch: Any) -> Any:
        if lost.pop() if lost else False:
            raise RedisConnectionError("the batch never left")
        return await real_replies(batch)

    async def reconcile(match_id: str, key: str, *args: Any) -> Any:
        if key == "a":
            stuck.set()
            await asyncio.Event().wait()  # (until given up on)
        return await real_reconcile(match_id, key, *args)

    store._replies = lost_request  # type: ignore[method-assign]
    store._reconcile = reconcile  # type: ignore[method-assign]
    first = asyncio.ensure_future(add_command(runner, 0, "a"))
    second = asyncio.ensure_future(add_command(runner, 1, "b"))
    await asyncio.wait_for(stuck.wait(), 5)
    first.cancel()
    done = await asyncio.wait_for(second, 5)
    log = await log_of(store, runner.match_id)
    assert "a" not in [e.cid for e in log] and log[done.seq - 1].cid == "b"
    assert done.outcome.rejection is not None, "decided again without a: not seat 1's turn"
    assert runner.current == plain_fold(log)[0][-1]
    assert not runner._flights and runner.core.next_begun is None


async def test_an_answer_is_decided_on_the_log_not_on_appends_in_flight(hubs: tuple[Hub, Hub]) -> None:
    """A join the rules refuse on the tip (the last seat taken by a join in flight) is
    decided again once that append is settled: it failed, so the seat is free."""
    hub = hubs[0]
    store = hub.store
    ms = await hub.create_match("toy", None, {"turn_ms": 60_000})
    runner = await hub.runner(ms.match_id)
    await runner.submit(kind="join", seat=None, key="join:ann", body={"name": "Ann"}, token_hash="ann")
    real = store.begin_append

    def begin_append(match_id: str, entry: Entry, **kwargs: Any) -> Any:
        if entry.body.get("name") != "Bob":
            return real(match_id, entry, **kwargs)

        async def away() -> Any:
            await asyncio.sleep(0.05)
            raise RedisConnectionError("the store is away")

        return away()

    store.begin_append = begin_append  # type: ignore[method-assign]
    bob, cid = await asyncio.gather(
        runner.submit(kind="join", seat=None, key="join:bob", body={"name": "Bob"}, token_hash="bob"),
        runner.submit(kind="join", seat=None, key="join:cid", body={"name": "Cid"}, token_hash="cid"),
        return_exceptions=True,
    )
    assert isinstance(bob, RedisConnectionError)
    assert isinstance(cid, Submitted) and cid.outcome.rejection is None and cid.seq == 3
    assert [e.body.get("name") for e in (await log_of(store, runner.match_id))[1:]] == ["Ann", "Cid"]
    assert runner.current.started and not runner._flights
