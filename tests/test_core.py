"""The match core (server/core.py) on its own: no sockets, no store, no event loop.

Entries go in (proposed and appended, or read from a log), frames come out per
subscriber key; time is an argument. The toy game (tests/toygame.py) is played, with
views that show a seat's additions to that seat alone, so that viewers' streams differ.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import engine
from domain.engine import Entry, MatchState
from projections.common import match_view
from projections.contract import AUDITOR, SPECTATOR, Viewer
from projections.registry import Hosted
from server.core import (
    CHECKPOINT,
    Answer,
    Append,
    MatchCore,
    SinceOutOfRange,
    Submitted,
    Subscribed,
    sid_order,
)
from tests import toygame

T0 = 1_000_000
SEAT0, SEAT1 = Viewer(seat=0), Viewer(seat=1)


class HiddenViews(toygame.Views):
    """The toy game's views, but a seat's `added` is seen by that seat alone (and by the
    full view): the other seat's and a spectator's streams skip it."""

    @staticmethod
    def event(ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
        if isinstance(event, toygame.Added) and not viewer.full and viewer.seat != event.seat:
            return None
        return msgspec.to_builtins(event)  # type: ignore[no-any-return]


GAME = Hosted(rules=toygame, views=HiddenViews)  # type: ignore[arg-type]


def create(match_id: str = "c1", ts: int = T0, turn_ms: int = 1000) -> Entry:
    return engine.create_entry(
        toygame, match_id=match_id, variant=None, options={"turn_ms": turn_ms},
        seed=b"\x07" * 32, ts=ts,
    )


class Play:
    """A core driven as the runner drives it: propose, then `appended` (a store that
    always takes the entry), keeping the log the store would hold."""

    def __init__(self, turn_ms: int = 1000) -> None:
        first = create(turn_ms=turn_ms)
        self.core: MatchCore[str] = MatchCore(first, "1-0", game=GAME)
        self.log: list[Entry] = [first]
        self.now = T0
        self.sent: dict[str, list[bytes]] = {}

    def send(self, kind: Any, seat: int | None, body: Any, dt: int = 10) -> Submitted | None:
        self.now += dt
        decided = self.core.propose(kind=kind, seat=seat, body=body, now=self.now, cid=f"c{self.now}")
        if decided is None:
            return None
        if isinstance(decided, Answer):
            return decided.submitted
        done, folded = self.core.appended(f"{decided.entry.seq}-0", decided)
        self.log.append(decided.entry)
        for key, frame in folded.sends:
            self.sent.setdefault(key, []).append(frame)
        return done

    def seated(self) -> Play:
        self.send("join", None, {"name": "Ann"})
        self.send("join", None, {"name": "Bob"})
        assert self.core.current.started
        return self

    def add(self, seat: int, n: int = 1) -> Submitted | None:
        return self.send("command", seat, {"type": "add", "n": n})

    def tick(self) -> Submitted | None:
        due = self.core.deadline()
        assert due is not None
        return self.send("tick", None, {"deadline": due}, dt=due - self.now)


def long_play(passes: int) -> Play:
    """A started match in which `passes` turns run out (no one adds): a long log."""
    play = Play().seated()
    for _ in range(passes):
        play.tick()
    return play


def plain_fold(log: list[Entry]) -> tuple[list[MatchState], list[engine.Outcome]]:
    """The state and outcome after every entry, by engine.apply alone."""
    ms = engine.open_match(toygame, log[0])
    states, outcomes = [ms], [engine.Outcome()]
    for entry in log[1:]:
        ms, outcome = engine.apply(ms, entry)
        states.append(ms)
        outcomes.append(outcome)
    return states, outcomes


def frames(data: list[bytes] | Subscribed) -> list[dict[str, Any]]:
    if isinstance(data, Subscribed):
        data = data.frames()
    return [json.loads(f) for f in data]


# --- folding -------------------------------------------------------------------------------


def test_entries_appended_and_entries_read_fold_alike() -> None:
    play = long_play(5)
    play.add(play.core.current.game_state.turn, 2)
    reader: MatchCore[str] = MatchCore(play.log[0], "1-0", game=GAME)
    folded = reader.receive([(f"{e.seq}-0", e) for e in play.log[1:]])
    assert folded.error is None and folded.sends == [] and not folded.ended
    assert reader.current == play.core.current == engine.fold(toygame, play.log)
    assert reader.outcome == play.core.outcome
    assert reader.stream_id == f"{len(play.log)}-0"
    assert list(reader.states) == list(play.core.states)
    # the same entries as JSON, as the store hands them over, and again: skipped by seq
    again: MatchCore[str] = MatchCore(play.log[0], "1-0", game=GAME)
    raw = [(f"{e.seq}-0", msgspec.json.encode(e)) for e in play.log[1:]]
    again.receive(raw)
    assert again.receive(raw).sends == [] and again.current == reader.current


def test_an_entry_that_fails_its_check_stops_the_fold() -> None:
    play = long_play(3)
    log = list(play.log)
    log[4] = msgspec.structs.replace(log[4], ts=log[4].ts + 1)  # its digest no longer holds
    core: MatchCore[str] = MatchCore(log[0], "1-0", game=GAME)
    core.subscribe("spectator", SPECTATOR, None, {"type": "welcome"})
    folded = core.receive([(f"{e.seq}-0", e) for e in log[1:]])
    assert folded.error is not None and folded.error.seq == 5
    assert core.current.seq == 4 and core.stream_id == "4-0"
    assert [json.loads(f)["seq"] for _, f in folded.sends] == [1, 2, 3]  # the joins, a pass


def test_unseen_skips_what_is_folded_by_stream_id() -> None:
    play = Play().seated()
    core = play.core
    core.stream_id = "1700000000000-3"
    items = [("1700000000000-2", b"x"), ("1700000000000-3", b"y"), ("1700000000000-4", b"z"),
             ("1700000000001-0", b"w")]
    assert core.unseen(items) == items[2:]
    assert sid_order("12-3") == (12, 3) and sid_order("12") == (12, 0)


# --- checkpoints: a refold gives what a plain fold gives -------------------------------------


LONG = 3 * CHECKPOINT + 7


@pytest.fixture(scope="module")
def long_match() -> tuple[Play, list[MatchState], list[engine.Outcome]]:
    play = long_play(LONG)
    states, outcomes = plain_fold(play.log)
    return play, states, outcomes


def test_states_and_outcomes_refolded_from_checkpoints(
    long_match: tuple[Play, list[MatchState], list[engine.Outcome]],
) -> None:
    play, states, outcomes = long_match
    core = play.core
    assert len(core.states) == len(states) == LONG + 3
    assert sorted(core._checkpoints) == [1, 32, 64, 96]
    assert list(core.states) == states and list(core.outcomes) == outcomes
    assert core.states[-1] == states[-1] and core.states[5:9] == states[5:9]
    with pytest.raises(IndexError):
        core.states[len(states)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=LONG + 2), min_size=1, max_size=12))
def test_random_access_in_any_order_matches_a_plain_fold(
    long_match: tuple[Play, list[MatchState], list[engine.Outcome]], order: list[int]
) -> None:
    play, states, outcomes = long_match
    for i in order:  # backwards, forwards, across checkpoints: the cursor must not matter
        assert play.core.states[i] == states[i]
        assert play.core.outcomes[i] == outcomes[i]
        assert play.core.at(i + 1) == (states[i], outcomes[i])


# --- what viewers receive --------------------------------------------------------------------


def test_each_viewer_stream_is_numbered_on_its_own() -> None:
    play = Play()
    for key, viewer in (("a", SEAT0), ("a2", SEAT0), ("b", SEAT1), ("s", SPECTATOR), ("f", AUDITOR)):
        play.core.subscribe(key, viewer, None, {"type": "welcome"})
    play.seated()
    play.add(0, 2)  # seen by seat 0 and the full view only
    play.tick()  # seat 1's turn passes: seen by all
    play.add(0, 1)  # (the target is at least 5: nobody has won)
    play.add(0, 3)  # not its turn: rejected, appended, shown to nobody
    got = {key: frames(sent) for key, sent in play.sent.items()}
    for key, data in got.items():
        assert [f["seq"] for f in data] == list(range(1, len(data) + 1)), key
    kinds = {key: [[e["type"] for e in f["events"]] for f in data] for key, data in got.items()}
    assert kinds["a"] == kinds["f"] == [["seat_taken"], ["seat_taken", "match_started", "began"],
                                        ["added"], ["passed"], ["added"]]
    assert kinds["b"] == kinds["s"] == [["seat_taken"], ["seat_taken", "match_started", "began"],
                                        ["passed"]]
    assert play.sent["a2"] == play.sent["a"], "two connections of one viewer, the same frames"
    # every frame's view is the view right after its entry, its ts the entry's
    last = got["b"][-1]  # entry 5, the pass
    assert last["ts"] == play.log[4].ts
    assert last["view"] == json.loads(json.dumps(match_view(HiddenViews, play.core.states[4], SEAT1)))
    streams = play.core.streams
    assert [streams.length(v) for v in (SEAT0, SEAT1, SPECTATOR, AUDITOR)] == [5, 3, 3, 5]
    assert streams.number_of(SEAT0, 6) == 5 and streams.number_of(SEAT1, 6) is None
    assert streams.number_of(SEAT1, 5) == 3
    assert play.core.outcome.rejection is not None
    assert streams.number_of(SEAT0, 7) is None, "a rejection shows nothing"


def test_a_catch_up_sends_the_stream_after_since_with_the_view_now() -> None:
    play = Play().seated()
    play.add(0, 2)
    play.tick()
    play.add(0, 1)
    core, view_now = play.core, play.core.view(SEAT1)
    welcome = {"type": "welcome", "seat": 1}
    whole = frames(core.subscribe("b0", SEAT1, 0, welcome))
    assert whole[0] == {**welcome, "seq": 3, "view": json.loads(json.dumps(view_now))}
    assert [f["seq"] for f in whole[1:]] == [1, 2, 3]
    assert all(f["view"] == whole[0]["view"] for f in whole[1:])
    assert frames(core.subscribe("b2", SEAT1, 2, welcome))[1:] == whole[3:]
    assert frames(core.subscribe("b3", SEAT1, 3, welcome)) == whole[:1]
    assert frames(core.subscribe("bn", SEAT1, None, welcome)) == whole[:1]
    for since in (-1, 4):
        with pytest.raises(SinceOutOfRange, match="between 0 and 3"):
            core.subscribe("bad", SEAT1, since, welcome)
    assert set(core.subscribers) == {"b0", "b2", "b3", "bn"}
    # a catch-up's events are the live frames' events, numbered alike
    live = Play()
    live.core.subscribe("b", SEAT1, None, welcome)
    live.seated()
    live.add(0, 2)
    live.tick()
    live.add(0, 1)
    assert [(f["seq"], f["events"], f["ts"]) for f in frames(live.sent["b"])] == [
        (f["seq"], f["events"], f["ts"]) for f in whole[1:]
    ]
    core.unsubscribe("b0")
    play.add(1, 1)
    assert "b0" not in play.sent and set(play.sent) == {"b2", "b3", "bn"}


# --- appended, or only answered --------------------------------------------------------------


def test_what_is_appended_and_what_is_only_answered() -> None:
    play = Play()
    core = play.core
    assert core.propose(kind="tick", seat=None, body={"deadline": T0}, now=T0 + 5) is None
    early = core.propose(kind="command", seat=0, body={"type": "add", "n": 1}, now=T0 + 5)
    assert isinstance(early, Answer) and early.submitted.seq == 0
    assert early.submitted.outcome.rejection is not None
    assert early.submitted.outcome.rejection.code == "not_started"
    join = core.propose(kind="join", seat=None, body={"name": "Ann", "seat": 1}, now=T0 + 6)
    assert isinstance(join, Append) and join.seat == 1 and join.expected_head == f"1:{core.current.head}"
    core.appended("2-0", join)
    taken = core.propose(kind="join", seat=None, body={"name": "Bob", "seat": 1}, now=T0 + 7)
    assert isinstance(taken, Answer) and taken.submitted.outcome.rejection is not None
    assert taken.submitted.outcome.rejection.code == "seat_taken"
    assert core.current.seq == 2, "answered, not appended"
    play.send("join", None, {"name": "Bob"})
    assert core.propose(kind="tick", seat=None, body={"deadline": 0}, now=play.now) is None
    wrong = core.propose(kind="command", seat=1, body={"type": "add", "n": 1}, now=play.now)
    assert isinstance(wrong, Append), "a rejection in play is part of the play: appended"
    assert wrong.outcome.rejection is not None and wrong.outcome.rejection.code == "not_your_turn"
    due = core.deadline()
    assert due is not None
    tick = core.propose(kind="tick", seat=None, body={"deadline": due}, now=due)
    assert isinstance(tick, Append) and tick.entry.ts == due


def test_a_decision_folded_after_another_entry_is_refused() -> None:
    play = Play().seated()
    a = play.core.propose(kind="command", seat=0, body={"type": "add", "n": 1}, now=play.now + 1)
    b = play.core.propose(kind="command", seat=0, body={"type": "add", "n": 2}, now=play.now + 1)
    assert isinstance(a, Append) and isinstance(b, Append)
    play.core.appended("9-0", a)
    with pytest.raises(ValueError, match="decided on entry 3"):
        play.core.appended("10-0", b)


def test_a_duplicate_is_answered_with_its_recorded_outcome() -> None:
    play = Play().seated()
    first = play.add(0, 1)
    assert first is not None and not first.duplicate and first.outcome.warnings
    play.add(1, 2)
    dup = play.core.duplicate(first.seq)
    assert dup == Submitted(first.seq, first.outcome, True)
    assert play.core.duplicate(play.core.current.seq + 1) is None, "not folded here yet"


# --- a finished match -----------------------------------------------------------------------


def test_a_finished_match() -> None:
    play = Play()
    play.core.subscribe("b", SEAT1, None, {"type": "welcome"})
    play.seated()
    ends = []
    while not play.core.current.ended:
        play.now += 10
        turn = play.core.current.game_state.turn
        if turn == 0:
            decided = play.core.propose(kind="command", seat=0, body={"type": "add", "n": 3}, now=play.now)
        else:
            due = play.core.deadline()
            assert due is not None
            play.now = due
            decided = play.core.propose(kind="tick", seat=None, body={"deadline": due}, now=due)
        assert isinstance(decided, Append)
        _done, folded = play.core.appended(f"{decided.entry.seq}-0", decided)
        play.log.append(decided.entry)
        play.sent.setdefault("b", []).extend(f for _, f in folded.sends)
        ends.append(folded.ended)
    assert ends.count(True) == 1 and ends[-1], "the end is reported once, by the entry that ends it"
    core = play.core
    assert core.deadline() is None
    after = core.propose(kind="command", seat=1, body={"type": "add", "n": 1}, now=play.now + 1)
    assert isinstance(after, Answer) and after.submitted.outcome.rejection is not None
    assert after.submitted.outcome.rejection.code == "match_over"
    assert core.propose(kind="tick", seat=None, body={"deadline": 0}, now=play.now + 10**9) is None
    # once over, every viewer sees everything: seat 1 now sees seat 0's additions too
    seat1 = frames(core.subscribe("late", SEAT1, 0, {"type": "welcome"}))
    assert "target" in seat1[0]["view"]["game_state"]
    assert frames(play.sent["b"])[-1]["seq"] == seat1[0]["seq"]
    assert not core.idle
    core.unsubscribe("b")
    core.unsubscribe("late")
    assert core.idle
    # folding the whole log again reports the end once too
    reader: MatchCore[str] = MatchCore(play.log[0], "1-0", game=GAME)
    assert reader.receive([(f"{e.seq}-0", e) for e in play.log[1:]]).ended
    assert reader.current == core.current and reader.idle


# --- a store that lost entries folded here --------------------------------------------------


def items(log: list[Entry], first_sid: int = 1) -> list[tuple[str, Entry]]:
    """A log as the store hands it over: (stream id, entry), ids from `first_sid` on."""
    return [(f"{first_sid + i}-0", e) for i, e in enumerate(log)]


def watched() -> Play:
    """A started match with seat 0, seat 1 and a spectator subscribed, and some play."""
    play = Play()
    for key, viewer in (("a", SEAT0), ("b", SEAT1), ("s", SPECTATOR)):
        play.core.subscribe(key, viewer, None, {"type": "welcome"})
    play.seated()
    for seat, n in ((0, 1), (1, 2), (0, 3), (1, 1)):
        assert play.add(seat, n) is not None
    return play


def test_a_log_that_holds_everything_folded_needs_no_resync() -> None:
    play = watched()
    core = play.core
    assert core.diverges(items(play.log)) is None
    assert core.resync(items(play.log)) is None
    longer = Play().seated()  # a log that goes on beyond what is folded: no loss either
    for seat, n in ((0, 1), (1, 2), (0, 3), (1, 1), (0, 1)):
        longer.add(seat, n)
    assert longer.log[: len(play.log)] == play.log
    assert core.diverges(items(longer.log)) is None


def test_entries_read_beyond_the_last_folded_with_folded_seqs_show_the_log_behind() -> None:
    """After a loss, entries appended again get stream ids beyond the last one folded
    here but seqs folded already: the fold stops and says the log is behind."""
    play = watched()
    core = play.core
    last = core.current.seq
    again = items(play.log[last - 2 :], first_sid=100)  # seqs folded, stream ids beyond
    folded = core.receive(again)
    assert folded.behind and folded.sends == [] and folded.error is None
    assert core.current.seq == last and core.stream_id == f"{last}-0"
    # the same seqs at stream ids folded already are only skipped, as before
    assert not core.receive(items(play.log[last - 2 :], first_sid=last - 1)).behind


def test_a_log_that_lost_entries_is_folded_again_and_viewers_resynced() -> None:
    play = watched()
    core = play.core
    folded_before = core.current.seq
    before = {key: frames(sent) for key, sent in play.sent.items()}
    kept_log = play.log[:-3]  # the store lost the last three entries
    assert core.diverges(items(kept_log)) == len(kept_log) + 1
    resynced = core.resync(items(kept_log))
    assert resynced is not None
    assert [e.seq for e in resynced.lost] == list(range(len(kept_log) + 1, folded_before + 1))
    assert resynced.lost == play.log[-3:]
    assert not resynced.ended and not resynced.reopened
    # the core is now what the log folds to, its history and streams too
    assert core.current == engine.fold(toygame, kept_log)
    assert core.stream_id == f"{len(kept_log)}-0"
    assert list(core.states) == plain_fold(kept_log)[0]
    assert core.deadline() == engine.deadline(core.current)
    fresh: MatchCore[str] = MatchCore(kept_log[0], "1-0", game=GAME)
    fresh.receive(items(kept_log[1:], first_sid=2))
    sent = dict((key, json.loads(frame)) for key, frame in resynced.sends)
    assert set(sent) == {"a", "b", "s"}
    for key, viewer in (("a", SEAT0), ("b", SEAT1), ("s", SPECTATOR)):
        frame = sent[key]
        assert frame["type"] == "resync"
        assert frame["seq"] == fresh.streams.length(viewer) == core.streams.length(viewer)
        assert frame["view"] == match_view(HiddenViews, fresh.current, viewer)
        # the updates received from entries the log still holds stand
        stood = [f for f in before[key] if f["seq"] <= frame["kept"]]
        assert frame["kept"] == len(stood) and stood == before[key][: frame["kept"]]
    # each seat saw its own lost additions, withdrawn; the spectator saw none of them
    # (its stream stands) but its view changed (turn and deadline)
    assert sent["a"]["kept"] < len(before["a"]) and sent["b"]["kept"] < len(before["b"])
    assert sent["s"]["kept"] == len(before["s"]) == sent["s"]["seq"]
    assert sent["s"]["view"] != before["s"][-1]["view"]
    # play goes on from the log's head, each stream numbered on from its resync
    turn = core.current.game_state.turn
    play.log = list(kept_log)
    play.sent.clear()
    assert play.add(turn, 1) is not None
    assert play.log[-1].seq == len(kept_log) + 1
    assert core.current == engine.fold(toygame, play.log)
    after = {key: frames(f) for key, f in play.sent.items()}
    assert after[{0: "a", 1: "b"}[turn]][0]["seq"] == sent[{0: "a", 1: "b"}[turn]]["seq"] + 1
    # a catch-up after the resync is the log's stream
    whole = frames(core.subscribe("late", SEAT1, 0, {"type": "welcome"}))
    assert whole[0]["seq"] == len(whole) - 1 == core.streams.length(SEAT1)


def test_a_catch_up_is_made_as_it_is_taken_and_is_the_stream_at_the_hello() -> None:
    """A catch-up's frames are made one at a time as they are taken (server/hub.py's
    SendQueue takes them as the socket does), so a client that reads nothing holds no
    frames; taken later, between other folds and other catch-ups (which move the
    history's shared cursor), they are what the whole catch-up was at the hello."""
    play = long_play(150)  # well past several checkpoints
    core = play.core
    length = core.streams.length(SEAT1)
    view = core.view(SEAT1)
    at_hello = core.streams.backlog(SEAT1, 5, view)
    late = core.subscribe("late", SEAT1, 5, {"type": "welcome"})
    assert json.loads(late.welcome)["seq"] == length
    made = late.catch_up
    taken = [next(made) for _ in range(10)]
    for _ in range(40):  # the match goes on meanwhile
        play.tick()
    other = core.subscribe("other", SPECTATOR, 0, {"type": "welcome"})
    assert len(other.frames()) == core.streams.length(SPECTATOR) + 1
    taken += [next(made) for _ in range(50)]
    assert len(core.subscribe("events", SEAT0, 3, {"type": "welcome"}, with_view=False).frames()) > 1
    taken += list(made)
    assert taken == at_hello and len(taken) == length - 5
    # with no view (events only) and from the start: the same frames but their view
    bare = core.subscribe("bare", SEAT1, 0, {"type": "welcome"}, with_view=False)
    whole = frames(core.streams.backlog(SEAT1, 0))
    assert frames(list(bare.catch_up)) == [{k: v for k, v in f.items() if k != "view"} for f in whole]


def test_a_catch_up_under_way_when_the_log_lost_entries_goes_on_over_the_log() -> None:
    """A resync while a catch-up waits: what it had made stands, what is left comes from
    the history folded again (up to its length), and the frames the resync keeps are
    those of the stream before it; the client drops the rest when the resync frame,
    queued behind them, comes."""
    play = long_play(120)
    core = play.core
    before = frames(core.streams.backlog(SEAT1, 0, core.view(SEAT1)))
    late = core.subscribe("late", SEAT1, 0, {"type": "welcome"})
    taken = [next(late.catch_up) for _ in range(30)]
    later = core.subscribe("later", SEAT1, 0, {"type": "welcome"})
    taken_later = [next(later.catch_up) for _ in range(len(before) - 5)]  # past the loss
    kept_log = play.log[:-40]
    resynced = core.resync(items(kept_log))
    assert resynced is not None
    taken += list(late.catch_up)
    assert list(later.catch_up) == [] and frames(taken_later) == before[: len(before) - 5]
    sent = {key: json.loads(frame) for key, frame in resynced.sends}
    kept, length = sent["late"]["kept"], sent["late"]["seq"]
    assert 30 < kept <= length == core.streams.length(SEAT1) < len(before)
    got = frames(taken)
    assert [f["seq"] for f in got] == list(range(1, length + 1))
    assert [(f["events"], f["ts"]) for f in got[:kept]] == [(f["events"], f["ts"]) for f in before[:kept]]
    # a catch-up under way whose history was folded again stops making frames from the
    # history before it: every frame after the resync is the log's
    fresh = frames(core.streams.backlog(SEAT1, 0))
    assert [(f["events"], f["ts"]) for f in got[30:]] == [(f["events"], f["ts"]) for f in fresh[30:length]]


def test_a_log_that_lost_entries_and_took_others_is_folded_as_it_stands() -> None:
    """Another writer appended after the loss: the log's own entries replace the lost
    ones; a viewer whose stream and view did not change is told nothing."""
    play = watched()
    core = play.core
    other = Play()
    other.log = play.log[:-2]
    other.core = MatchCore(other.log[0], "1-0", game=GAME)
    other.core.receive(items(other.log[1:], first_sid=2))
    other.now = play.now + 5
    turn = other.core.current.game_state.turn
    other.add(turn, 2)
    assert other.log[-1] != play.log[-2]
    store_log = [*items(other.log[:-1]), (f"{len(other.log) + 50}-0", other.log[-1])]
    resynced = core.resync(store_log)
    assert resynced is not None and resynced.lost == play.log[-2:]
    assert core.current == other.core.current
    assert core.stream_id == store_log[-1][0]
    sent = {key: json.loads(frame) for key, frame in resynced.sends}
    assert sent["s"]["view"] == match_view(HiddenViews, core.current, SPECTATOR)
    # a match followed by nobody: nothing to send, the fold all the same
    quiet: MatchCore[str] = MatchCore(play.log[0], "1-0", game=GAME)
    quiet.receive(items(play.log[1:], first_sid=2))
    done = quiet.resync(store_log)
    assert done is not None and done.sends == [] and quiet.current == core.current


def test_a_viewer_the_lost_entries_showed_nothing_is_not_resynced() -> None:
    play = watched()
    core = play.core
    turn = core.current.game_state.turn
    play.add(1 - turn, 1)  # not its turn: recorded, shows nobody anything
    resynced = core.resync(items(play.log[:-1]))
    assert resynced is not None and [e.kind for e in resynced.lost] == ["command"]
    assert resynced.sends == []


def test_a_match_over_here_but_not_in_the_log_is_reopened() -> None:
    play = Play()
    play.core.subscribe("b", SEAT1, None, {"type": "welcome"})
    play.seated()
    while not play.core.current.ended:
        if play.core.current.game_state.turn == 0:
            play.add(0, 3)
        else:
            play.tick()
    resynced = play.core.resync(items(play.log[:-1]))
    assert resynced is not None and resynced.reopened and not resynced.ended
    assert not play.core.current.ended and play.core.deadline() is not None
    (key, frame), = resynced.sends
    assert key == "b" and "target" not in json.loads(frame)["view"]["game_state"]
    # and the other way: folded here, a pass lost; in the log, seat 0's last addition
    ending = play.log[-1]
    assert ending.kind == "command"
    other: MatchCore[str] = MatchCore(play.log[0], "1-0", game=GAME)
    other.receive(items(play.log[1:-1], first_sid=2))
    assert other.propose(kind="tick", seat=None, body={"deadline": 0}, now=0) is None
    due = other.deadline()
    assert due is not None
    passed = other.propose(kind="tick", seat=None, body={"deadline": due}, now=due)
    assert isinstance(passed, Append)
    other.appended(f"{len(play.log)}-0", passed)
    assert not other.current.ended
    flipped = other.resync(items(play.log))
    assert flipped is not None and flipped.ended and not flipped.reopened
    assert other.current.ended


def test_a_log_that_does_not_fold_changes_nothing() -> None:
    play = watched()
    core = play.core
    was = core.current
    bad = items(play.log[:-2])
    bad[-1] = (bad[-1][0], msgspec.structs.replace(bad[-1][1], digest="0" * 64))
    with pytest.raises(engine.IntegrityError):
        core.resync(bad)
    assert core.current == was
    with pytest.raises(ValueError, match="none of its log"):
        core.resync([])
