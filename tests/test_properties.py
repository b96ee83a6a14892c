"""Property tests of Five-Card Trick matches played with commands drawn by hypothesis.

1. Replay determinism: folding a log again (engine.apply / engine.fold, also after the
   entries went through JSON as the store keeps them) gives the same canonical bytes of
   the game state and of every Outcome, and engine.verify passes; nothing depends on
   Python's hash seed (a subprocess under other PYTHONHASHSEEDs gives the same digests).
2. No projection leaks hidden state: matches that differ only in one player's hidden
   choices (its submissions of a round: actions, Block target, items, resubmissions) give
   the other player and a spectator byte-identical update frames up to the entry that
   resolves the round; a Block target that did not resolve never reaches them before
   the match ends.
3. The whole-match view: once a match has ended every viewer sees what the full viewer
   sees (but for `you`), in its view and in every frame of a catch-up.

Frames are the server's own (tests/playthrough.py: the viewer streams of a
server.core.MatchCore, server/streams.py). The whole file takes well under a minute;
DAEDALUS_PROPERTY_SCALE=20 runs twenty times the examples.
"""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, Phase, assume, event, given, settings
from hypothesis import strategies as st

from clients.bots import simulate
from clients.bots.five_card_trick import RandomBot, Situation
from clients.bots.five_card_trick import submit as submit_body
from domain import engine
from domain.canonical import canonical
from domain.engine import Entry, MatchState, Outcome
from domain.games import five_card_trick as fct
from domain.games.five_card_trick import RoundResolved
from projections import five_card_trick as views
from projections.common import match_view
from projections.contract import AUDITOR, SPECTATOR, Viewer
from projections.registry import rules_by_name
from tests.playthrough import PLAYTHROUGHS, VIEWERS, Script, bot, golden_document, received

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = tuple(v.name for v in fct.variants)


def examples(n: int) -> settings:
    """Hypothesis settings for `n` examples (DAEDALUS_PROPERTY_SCALE=k: k times more)."""
    return settings(
        max_examples=n * int(os.environ.get("DAEDALUS_PROPERTY_SCALE", "1")),
        deadline=None,
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )

# --- commands drawn by hypothesis ------------------------------------------------------

ACTION_WORDS = (*fct.ACTIONS, "Raise", "SCORE", " Claim ", "dance")
ITEM_WORDS = (*fct.ITEMS, "Limit Reset", "sword")
JUNK_BODIES: tuple[Any, ...] = (
    None,
    "score",
    [],
    {"type": "submit"},
    {"type": "submit", "round": "one", "actions": ["score"]},
    {"type": "submit", "round": 1, "actions": "score"},
    {"type": "use_item"},
    {"type": "resign"},
)


@dataclass(frozen=True)
class Op:
    """One entry to propose. `when`: ("dt", ms after the previous entry's time, which
    may be negative: a clock behind) or ("past", ms after the current deadline)."""

    kind: str  # submit | use | bot | repeat | tick | join | junk
    seat: int | None = None
    when: tuple[str, int] = ("dt", 500)
    round: int = 0  # added to the round in play when the command is made
    actions: tuple[str, ...] = ()
    block: str | None = None
    items: tuple[str, ...] = ()
    seed: int = 0
    body: Any = None


@st.composite
def _when(draw: st.DrawFn) -> tuple[str, int]:
    if draw(st.integers(0, 5)) == 5:
        return ("past", draw(st.integers(0, 1_500)))
    return ("dt", draw(st.integers(-300, 1_500)))


_seats = st.integers(0, 1)
_rounds = st.sampled_from((0, 0, 0, 0, 0, 0, -1, 1))
_submits = st.builds(
    Op,
    kind=st.just("submit"),
    seat=_seats,
    when=_when(),
    round=_rounds,
    actions=st.lists(st.sampled_from(ACTION_WORDS), max_size=4).map(tuple),
    block=st.none() | st.sampled_from(ACTION_WORDS),
    items=st.lists(st.sampled_from(ITEM_WORDS), max_size=2).map(tuple),
)
_bots = st.builds(Op, kind=st.just("bot"), seat=_seats, when=_when(), seed=st.integers(0, 1 << 16))
OPS = st.one_of(
    _bots,
    _bots,
    _submits,
    _submits,
    st.builds(
        Op, kind=st.just("use"), seat=_seats, when=_when(), round=_rounds,
        items=st.sampled_from(ITEM_WORDS).map(lambda i: (i,)),
    ),
    st.builds(Op, kind=st.just("repeat"), seat=_seats, when=_when()),
    st.builds(Op, kind=st.just("tick"), when=_when()),
    st.builds(
        Op, kind=st.just("join"), seat=st.sampled_from((None, 0, 1, 7)), when=_when(),
        body=st.sampled_from(("Carol", "", "x" * 41)),
    ),
    st.builds(
        Op, kind=st.just("junk"), seat=st.sampled_from((None, -1, 2, 0, 1)), when=_when(),
        body=st.sampled_from(JUNK_BODIES),
    ),
)


@st.composite
def matches(
    draw: st.DrawFn, min_rounds: int = 1, max_rounds: int = 4
) -> tuple[str, dict[str, Any]]:
    """A variant and its options (few, short rounds: 0.6 s to 4.5 s)."""
    variant = draw(st.sampled_from(VARIANTS))
    rounds = draw(st.integers(min_rounds, max_rounds))
    options: dict[str, Any] = {
        "clock_scale": draw(st.sampled_from((0.01, 0.05))),
        "rounds": rounds,
        "extension": draw(st.integers(1, 2)),
        "max_rounds": rounds + draw(st.integers(0, 3)),
        "dmo": draw(st.integers(0, 1)),
    }
    if variant == "gauntlet":
        options["max_replays"] = draw(st.integers(0, 3))
    if variant == "final":
        held = st.lists(st.sampled_from(fct.ITEMS), unique=True).map(list)
        default = [["overload"], ["claim_priority", "limit_reset"]]
        options["items"] = draw(st.just(default) | st.lists(held, min_size=2, max_size=2))
    return variant, options


class Driver(Script):
    """A match that plays `Op`s."""

    def __init__(self, variant: str, options: Mapping[str, Any]) -> None:
        super().__init__(variant, match_id="prop", step_ms=500, **options)
        self.last_body: dict[int | None, Any] = {}

    def when(self, when: tuple[str, int]) -> int:
        how, ms = when
        if how == "past":
            due = engine.deadline(self.ms)
            return (self.ts if due is None else due) + ms
        return self.ts + ms

    def run(self, op: Op) -> Outcome:
        ts = self.when(op.when)
        if op.kind == "tick":
            return self.propose("tick", None, {"deadline": engine.deadline(self.ms)}, ts)
        if op.kind == "join":
            return self.propose("join", None, {"name": op.body, "seat": op.seat}, ts)
        if op.kind == "junk":
            return self.propose("command", op.seat, op.body, ts)
        round_ = self.gs.round + op.round
        body: Any
        if op.kind == "submit":
            body = submit_body(round_, op.actions, op.block, op.items)
        elif op.kind == "use":
            body = {"type": "use_item", "item": op.items[0], "round": round_}
        elif op.kind == "repeat":
            body = self.last_body.get(op.seat, submit_body(round_, ()))
        elif op.kind == "bot":
            body = bot_command(self.ms, op.seat, op.seed)
        else:
            raise ValueError(op.kind)
        self.last_body[op.seat] = body
        return self.propose("command", op.seat, body, ts)

    def finish(self, jump: bool) -> None:
        """Time runs on with nobody playing until the match ends: one entry far in the
        future (every deadline expires in it) or a tick at every deadline."""
        if jump:
            self.tick(self.ts + 10**8)
        while not self.ms.ended:
            self.tick_at_deadline()


def bot_command(ms: MatchState, seat: int | None, seed: int) -> dict[str, Any]:
    """A plausible command: what a random bot sends from the seat's view."""
    view = match_view(views, ms, Viewer(seat=seat))
    player = RandomBot(random.Random(seed))
    sent = player.act(view)
    if sent:
        return sent[0]
    situation = Situation.of(view)
    if situation is None:
        return submit_body(ms.game_state.round, ())
    return player.choose(situation)  # a resubmission


def fresh_round(m: Driver) -> None:
    """Let the round in play close at its deadline if anyone has submitted in it."""
    while not m.ms.ended and any(s.pending is not None for s in m.gs.seats):
        m.run(Op("tick", when=("past", 0)))


def played(variant: str, options: Mapping[str, Any], ops: Sequence[Op], jump: bool) -> Driver:
    m = Driver(variant, options)
    for op in ops:
        m.run(op)
    m.finish(jump)
    return m


# --- 1. replay determinism -------------------------------------------------------------


def state_bytes(ms: MatchState) -> bytes:
    """The canonical bytes of a whole match state (all but the rules module)."""
    fields = msgspec.structs.asdict(ms)
    del fields["rules"]
    return canonical(fields)


def check_replay(entries: Sequence[Entry], outcomes: Sequence[Outcome], final: MatchState) -> None:
    stored = [msgspec.json.decode(msgspec.json.encode(e), type=Entry) for e in entries]
    for log in (entries, stored):
        ms = engine.open_match(fct, log[0])
        again = [Outcome()]
        for entry in log[1:]:
            ms, outcome = engine.apply(ms, entry)
            again.append(outcome)
        assert canonical(ms.game_state) == canonical(final.game_state)
        assert state_bytes(ms) == state_bytes(final)
        assert [canonical(o) for o in again] == [canonical(o) for o in outcomes]
        assert state_bytes(engine.fold(fct, log)) == state_bytes(final)
        verified = engine.verify(rules_by_name(), list(log))
        assert verified.ok, verified.failure
        assert verified.entries == len(log) and verified.commitment == final.commitment


@examples(300)
@given(match=matches(), ops=st.lists(OPS, min_size=5, max_size=60), jump=st.booleans())
def test_replay_gives_the_same_bytes(
    match: tuple[str, dict[str, Any]], ops: list[Op], jump: bool
) -> None:
    m = played(*match, ops, jump)
    event(f"{len(m.entries) // 10 * 10}+ entries")
    event(f"{sum(1 for o in m.outcomes if o.rejection) // 5 * 5}+ rejected")
    check_replay(m.entries, m.outcomes, m.ms)
    again = played(*match, ops, jump)  # deciding the same commands again: the same log
    assert [canonical(e) for e in again.entries] == [canonical(e) for e in m.entries]


def fingerprint() -> str:
    """A digest of everything the tests here and the golden files produce in one process:
    the golden playthroughs (logs and every viewer's frames), and one bot match per
    variant (log and frames). Compared across PYTHONHASHSEEDs."""
    h = hashlib.sha256()
    for name in PLAYTHROUGHS:
        h.update(golden_document(name))
    for i, variant in enumerate(VARIANTS):
        sim = simulate(
            "five-card-trick", [bot("heuristic", i), bot("random", 100 + i)], variant=variant,
            options={"rounds": 8, "max_rounds": 12}, seed=bytes([i]) * 32,
        )
        h.update(sim.entries[-1].digest.encode())
        got = received(sim.entries)
        for label in VIEWERS:
            for frame in (*got.live[label], *got.after[label]):
                h.update(frame or b"-")
    return h.hexdigest()


def test_nothing_depends_on_the_hash_seed() -> None:
    here = fingerprint()
    code = "from tests.test_properties import fingerprint; print('FINGERPRINT', fingerprint())"
    for seed in ("0", "2718281"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
            timeout=120, check=False,
        )
        assert done.returncode == 0, done.stderr
        printed = [line for line in done.stdout.splitlines() if line.startswith("FINGERPRINT ")]
        assert printed == [f"FINGERPRINT {here}"], (seed, done.stdout[-2000:])


# --- 2. no projection leaks ------------------------------------------------------------


@dataclass(frozen=True)
class Hidden:
    """A submission drawn for the hidden seat, made legal against its state when sent."""

    actions: tuple[str, ...]
    block: str | None
    items: tuple[str, ...]


_hidden = st.builds(
    Hidden,
    actions=st.lists(st.sampled_from(fct.ACTIONS), max_size=3).map(tuple),
    block=st.none() | st.sampled_from(fct.ACTIONS),
    items=st.lists(st.sampled_from(fct.SUBMISSION_ITEMS), unique=True).map(tuple),
)


def legal(m: Script, seat: int, hidden: Hidden) -> dict[str, Any]:
    """The drawn submission cut down to one the rules accept from `seat` now (its
    restrictions may still disregard some of it)."""
    gs = m.gs
    held = gs.seats[seat].items
    items = [i for i in hidden.items if i in held and gs.variant == "final"]
    actions: list[str] = []
    for action in hidden.actions:
        copies = actions.count(action)
        if copies == 0 or (gs.variant == "final" and copies == 1):
            actions.append(action)
    actions = actions[: 3 if "overload" in items else 2]
    block = hidden.block if "block" in actions else None
    return submit_body(gs.round, actions, block, items)


def in_time(m: Script, dt: int) -> int:
    """`dt` after the last entry, but before the round's deadline."""
    due = engine.deadline(m.ms)
    return m.ts + dt if due is None else min(m.ts + dt, due - 1)


def send(m: Script, seat: int, hidden: Hidden, dt: int = 100) -> Outcome:
    """A legal submission from `seat`, in time for the round in play."""
    return m.propose("command", seat, legal(m, seat, hidden), in_time(m, dt))


# Who must not learn a seat's hidden choices: its opponent and a spectator.
OTHERS_OF = {
    0: {"seat 1": Viewer(seat=1), "spectator": SPECTATOR},
    1: {"seat 0": Viewer(seat=0), "spectator": SPECTATOR},
}


def first_seq(m: Script, after: int, what: type) -> int | None:
    """The seq of the first entry after `after` with an event of type `what`."""
    for entry, outcome in zip(m.entries, m.outcomes, strict=True):
        if entry.seq > after and any(isinstance(e, what) for e in outcome.events):
            return entry.seq
    return None


def ended_at(m: Script) -> int | None:
    return first_seq(m, 0, engine.MatchEnded)


def assert_same_frames(a: Script, b: Script, seat: int, upto: int) -> None:
    """The opponent of `seat` and a spectator get the same bytes of entries 1..upto-1."""
    viewers = OTHERS_OF[seat]
    seen_a, seen_b = received(a.entries, viewers), received(b.entries, viewers)
    for seq in range(1, upto):
        for label in viewers:
            fa, fb = seen_a.live_at(label, seq), seen_b.live_at(label, seq)
            assert fa == fb, f"entry {seq}: {label} can tell the matches apart:\n{fa!r}\n{fb!r}"


@examples(250)
@given(
    match=matches(min_rounds=3, max_rounds=6),
    prefix=st.lists(OPS, max_size=14),
    seat=_seats,
    choices=st.lists(st.tuples(_hidden, _hidden, st.integers(1, 400)), min_size=1, max_size=3),
    steady=st.booleans(),
    between=st.lists(OPS, max_size=4),
    close=st.sampled_from(("opponent", "deadline", "more")),
    seed=st.integers(0, 1 << 16),
)
def test_a_hidden_choice_is_hidden_until_the_round_resolves(
    match: tuple[str, dict[str, Any]],
    prefix: list[Op],
    seat: int,
    choices: list[tuple[Hidden, Hidden, int]],
    steady: bool,
    between: list[Op],
    close: str,
    seed: int,
) -> None:
    a, b = Driver(*match), Driver(*match)
    for op in prefix:
        a.run(op)
        b.run(op)
    assume(not a.ms.ended)
    assert a.entries == b.entries
    start = a.ms.seq
    # The hidden seat sends one or more submissions (a resubmission replaces the one
    # before), different in the two matches; the same other entries come in between.
    # `steady`: in match a it sends the same move every time, in b it changes its mind.
    # (Once the round has resolved the matches may part ways: the comparison ends there.)
    for i, (in_a, in_b, dt) in enumerate(choices):
        if first_seq(a, start, RoundResolved) is not None:
            break
        if steady:
            in_a = choices[0][0]
        sent_a = a.propose("command", seat, legal(a, seat, in_a), in_time(a, dt))
        sent_b = b.propose("command", seat, legal(b, seat, in_b), in_time(b, dt))
        assert sent_a.rejection is None and sent_b.rejection is None
        if i < len(between):
            a.run(between[i])
            b.run(between[i])
    if close == "opponent":
        op = Op("bot", seat=1 - seat, seed=seed)
    elif close == "deadline":
        op = Op("tick", when=("past", 0))
    else:
        op = Op("bot", seat=seat, seed=seed)  # one more (legal) resubmission
    if first_seq(a, start, RoundResolved) is None:
        a.run(op)
        b.run(op)
    reveal = first_seq(a, start, RoundResolved)
    assert reveal == first_seq(b, start, RoundResolved)
    event("revealed" if reveal is not None else "not yet revealed")
    assert len(a.entries) == len(b.entries)
    assert_same_frames(a, b, seat, reveal if reveal is not None else len(a.entries) + 1)


@examples(250)
@given(
    match=matches(min_rounds=4, max_rounds=8),
    prefix=st.lists(OPS, max_size=10),
    seat=_seats,
    mode=st.sampled_from(("collide", "blocked", "same_pair", "free")),
    other=st.sampled_from(fct.ACTIONS),
    targets=st.lists(st.sampled_from(fct.ACTIONS), min_size=2, max_size=2, unique=True),
    opponent=_hidden,
    opponent_first=st.booleans(),
    items=st.lists(st.sampled_from(fct.SUBMISSION_ITEMS), unique=True).map(tuple),
    suffix=st.lists(OPS, max_size=12),
    jump=st.booleans(),
)
def test_a_block_target_that_did_not_resolve_stays_hidden(
    match: tuple[str, dict[str, Any]],
    prefix: list[Op],
    seat: int,
    mode: str,
    other: str,
    targets: list[str],
    opponent: Hidden,
    opponent_first: bool,
    items: tuple[str, ...],
    suffix: list[Op],
    jump: bool,
) -> None:
    opp = 1 - seat
    a, b = Driver(*match), Driver(*match)
    for m in (a, b):
        for op in prefix:
            m.run(op)
        fresh_round(m)
    assume(not a.ms.ended)
    pair = Hidden(("block", other), targets[0], ())
    for m in (a, b):
        if mode == "blocked":  # the opponent's Block on Block, before
            send(m, opp, Hidden(("block", "score"), "block", ()))
            send(m, seat, Hidden((other if other != "block" else "grow",), None, ()))
        elif mode == "same_pair":  # the same two cards, before
            send(m, seat, pair)
            send(m, opp, opponent)
    assume(not a.ms.ended)
    start = a.ms.seq
    theirs = opponent
    if mode == "collide":
        theirs = Hidden(("block", *opponent.actions), opponent.block or "score", opponent.items)
    for m, target in ((a, targets[0]), (b, targets[1])):
        if opponent_first:
            send(m, opp, theirs)
        mine = send(m, seat, Hidden(("block", other), target, items))
        assert mine.rejection is None
        if not opponent_first:
            send(m, opp, theirs)
    reveal = first_seq(a, start, RoundResolved)
    assert reveal is not None and reveal == first_seq(b, start, RoundResolved)
    resolved = [
        next(e for e in m.outcomes[reveal - 1].events if isinstance(e, RoundResolved))
        for m in (a, b)
    ]
    blanked = [
        msgspec.structs.replace(
            r, seats=tuple(msgspec.structs.replace(s, block=None) for s in r.seats)
        )
        for r in resolved
    ]
    status = next(p for p in resolved[0].seats[seat].plays if p.action == "block").status
    if status != "resolved":
        assert canonical(blanked[0]) == canonical(blanked[1])  # the target changed nothing else
    event(f"{mode}: Block {status}")
    for m in (a, b):
        for op in suffix:
            m.run(op)
        m.finish(jump)
    if status == "resolved":  # its target is public: the matches part ways here
        assert_same_frames(a, b, seat, reveal)
        return
    assert len(a.entries) == len(b.entries)
    end = ended_at(a)
    assert end is not None and end == ended_at(b)
    assert_same_frames(a, b, seat, end)
    if reveal == end:
        return  # the round that ended the match: everyone sees everything
    # ...and the frames do say that the Block was played and what became of it.
    frame = received(a.entries, OTHERS_OF[seat]).live_at("spectator", reveal)
    assert frame is not None
    shown = next(e for e in msgspec.json.decode(frame)["events"] if e["type"] == "round_resolved")
    play = next(p for p in shown["seats"][seat]["plays"] if p["action"] == "block")
    assert play["status"] == status and shown["seats"][seat]["block"] is None


def test_the_leak_check_catches_a_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above fails when a projection shows a pending submission."""
    a, b = Driver("dm12", {}), Driver("dm12", {})
    a.submit(0, ["score", "grow"])
    b.submit(0, ["claim", "steal"])
    a.submit(1, ["grow"])
    b.submit(1, ["grow"])
    assert_same_frames(a, b, 0, len(a.entries))
    monkeypatch.setattr(views, "_sees_hidden", lambda viewer, seat: True)
    with pytest.raises(AssertionError, match="entry 4: seat 1 can tell the matches apart"):
        assert_same_frames(a, b, 0, len(a.entries))


# --- 3. the whole-match view -----------------------------------------------------------


def without_you(frame: bytes | None) -> bytes | None:
    """A frame as the full viewer gets it: `you` is the only part that is the viewer's."""
    if frame is None:
        return None
    decoded = msgspec.json.decode(frame)
    decoded["view"]["you"] = None
    return msgspec.json.encode(decoded)


def check_after_the_end(entries: Sequence[Entry]) -> None:
    got = received(entries)
    final = got.states[-1]
    assert final.ended
    full_view = match_view(views, final, AUDITOR)
    for label, viewer in VIEWERS.items():
        view = match_view(views, final, viewer)
        assert view["you"] == viewer.seat
        assert {**view, "you": None} == full_view, label
        assert msgspec.json.encode({**view, "you": None}) == msgspec.json.encode(full_view), label
        # a catch-up after the end: the viewer's own stream, numbered as it was live and
        # with the same events, each frame carrying the view now, which is the full view
        live = [msgspec.json.decode(f) for f in got.live[label] if f is not None]
        after = [msgspec.json.decode(f) for f in got.after[label]]
        assert [(f["seq"], f["events"]) for f in after] == [(f["seq"], f["events"]) for f in live]
        full_json = msgspec.json.decode(msgspec.json.encode(full_view))
        for frame in after:
            assert {**frame["view"], "you": None} == full_json, label
        # and the entry that ended the match was already shown to everyone in full
        assert without_you(got.live[label][-1]) == got.live["full"][-1], label


@examples(150)
@given(match=matches(), ops=st.lists(OPS, min_size=5, max_size=40), jump=st.booleans())
def test_after_the_end_every_viewer_sees_everything(
    match: tuple[str, dict[str, Any]], ops: list[Op], jump: bool
) -> None:
    check_after_the_end(played(*match, ops, jump).entries)


@pytest.mark.parametrize("name", list(PLAYTHROUGHS))
def test_after_the_end_of_a_playthrough_every_viewer_sees_everything(name: str) -> None:
    m = PLAYTHROUGHS[name]()
    check_replay(m.entries, m.outcomes, m.ms)
    check_after_the_end(m.entries)
