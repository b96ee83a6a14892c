"""Keys to Success: nothing outside a player's level reaches it.

Two worlds are played side by side through the engine from the same seed. In both, the
players in one player P's level do exactly the same things (same submissions, same chat,
at the same log times); everyone outside P's level acts independently in each world:
other gates, other card values, missed rounds, chat or none, rejected commands. Then the
update frames P receives (built exactly as the server builds them: server/hub.py's
MatchRunner and server/streams.py, `seq` included, since each viewer's stream is numbered
on its own; see the rules page, "Known limits") must be the same bytes in both worlds,
and so must a spectator's, including which entries send a frame at all.

That holds until something P may legitimately learn differs: who is in its level, its
level's gates, how many cards its level-mates used and who went through which gate, its
own cards, or the end of play (when all restrictions lift). Those facts are computed
from the game state, independently of the projections, after every round; from the
first round where they differ the comparison stops (that round's results excluded).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.engine import Entry, MatchState, Outcome, create_entry, open_match, propose
from domain.games import keys_to_success as kts
from domain.games.keys_to_success import RoundResolved, State
from projections.contract import SPECTATOR, Viewer
from tests.playthrough import received

LAYOUTS = (
    "default",
    "A:open B:pass C:garnet\nD:open E:garnet",
    "A:o B:o C:p D:g\nE:o F:p G:g\nH:o I:g\nJ:o",
    "A:o B:g\nC:o\nD:p E:o F:g",
)
WORDS = ("left", "right", "A", "trust", "me", "garnet", "pass", "wait", "now", "go")


@dataclass
class World:
    options: dict[str, Any]
    seed: bytes
    ms: MatchState = field(init=False)
    entries: list[Entry] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    states: list[MatchState] = field(default_factory=list)
    ts: int = 10_000

    def __post_init__(self) -> None:
        first = create_entry(kts, match_id="twin", variant=None, options=self.options, seed=self.seed, ts=self.ts)
        self.ms = open_match(kts, first)
        self._log(first, Outcome())
        for seat in range(self.ms.seats):
            self.propose("join", None, {"name": f"P{seat}", "seat": seat}, self.ts)

    def _log(self, entry: Entry, outcome: Outcome) -> None:
        self.entries.append(entry)
        self.outcomes.append(outcome)
        self.states.append(self.ms)

    @property
    def gs(self) -> State:
        state: State = self.ms.game_state
        return state

    def propose(self, kind: Any, seat: int | None, body: Any, ts: int) -> Outcome:
        self.ts = max(self.ts, ts)
        entry, self.ms, out = propose(self.ms, kind=kind, seat=seat, cid=f"c{len(self.entries)}", body=body, ts=self.ts)
        self._log(entry, out)
        return out

    def frames(self, viewer: Viewer, upto: int) -> list[bytes]:
        """The update frames `viewer` receives of entries 1 .. upto-1, exactly as the
        server numbers and builds them (its own stream: `seq` included)."""
        return [f for f in received(self.entries[:upto], {"v": viewer}).live["v"] if f is not None]


def visible(gs: State, p: int) -> Any:
    """What P may know after a round, from the state (not from the projections)."""
    me = gs.players[p]
    gates = ()
    if me.depth < gs.levels:
        gates = tuple((g.name, gs.is_closed(g)) for g in gs.layout.levels[me.depth])
    last: Any = None
    if gs.history:
        plays = gs.history[-1].plays
        mine = next((x for x in plays if x.seat == p), None)
        if mine is not None:
            last = (
                mine,
                tuple((x.seat, len(x.cards), x.entered) for x in plays if x.depth == mine.depth),
            )
    return (gs.phase, gs.round, me, gs.members(me.depth), gates, last)


def random_cards(rng: random.Random, hand: Counter[int]) -> list[int]:
    cards = list(hand.elements())
    return sorted(rng.sample(cards, min(len(cards), rng.choice([1, 1, 2, 3]))))


def random_gates(rng: random.Random, gs: State, depth: int) -> list[str]:
    open_ = gs.open_gates(depth)
    pairs = [(a.name, b.name) for a, b in itertools.pairwise(open_) if b.index == a.index + 1]
    if pairs and rng.random() < 0.5:
        return list(rng.choice(pairs))
    return [rng.choice(open_).name]


def submit(round_: int, gates: list[str], cards: list[int]) -> dict[str, Any]:
    return {"type": "submit", "round": round_, "gates": gates, "cards": cards}


def chat(rng: random.Random) -> dict[str, Any]:
    return {"type": "chat", "text": " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))}


def outside_moves(rng: random.Random, w: World, seats: list[int], must_submit: bool, misser: int | None) -> list[tuple[int, Any]]:
    """What the players outside P's level do in one world: independent random choices."""
    gs = w.gs
    moves: list[tuple[int, Any]] = []
    for s in seats:
        if rng.random() < 0.3:
            moves.append((s, chat(rng)))
        if rng.random() < 0.1:
            moves.append((s, submit(gs.round + 7, ["A"], [1])))  # rejected: wrong round
        if not gs.awaited(s) or s == misser or (not must_submit and rng.random() < 0.15):
            continue
        depth = gs.players[s].depth
        for _ in range(2 if rng.random() < 0.1 else 1):  # sometimes a resubmission
            moves.append((s, submit(gs.round, random_gates(rng, gs, depth), random_cards(rng, Counter(gs.players[s].hand)))))
    rng.shuffle(moves)
    return moves


def twin_run(rng: random.Random, seats: int, layout: str, early_close: bool, p: int) -> dict[str, int]:
    options = {"seats": seats, "layout": layout, "early_close": early_close, "clock_scale": 0.01}
    seed = bytes(rng.randrange(256) for _ in range(32))
    worlds = (World(options, seed), World(options, seed))
    a, b = worlds
    stop = [len(a.entries), len(b.entries)]
    stats = {"rounds": 0, "split_rounds": 0}
    while a.gs.phase == "play" and b.gs.phase == "play":
        ga, gb = a.gs, b.gs
        depth = ga.players[p].depth
        level = list(ga.members(depth))
        assert level == list(gb.members(depth))
        outside = [s for s in range(seats) if s not in level]
        # The level's own moves: the same in both worlds (cards both worlds' hands hold).
        shared_submit: dict[int, Any] = {}
        for s in level:
            if not (ga.awaited(s) or gb.awaited(s)):
                continue
            both = Counter(ga.players[s].hand) & Counter(gb.players[s].hand)
            if both and ga.open_gates(depth):
                shared_submit[s] = submit(ga.round, random_gates(rng, ga, depth), random_cards(rng, both))
        awaited_both = [s for s in level if ga.awaited(s) and gb.awaited(s) and s in shared_submit]
        ready = all(s in shared_submit for s in level if ga.awaited(s) or gb.awaited(s))
        everyone = early_close and ready and bool(awaited_both) and rng.random() < 0.5
        last = rng.choice(awaited_both) if everyone else None
        misser_shared = None
        if early_close and not everyone:
            candidates = [s for s in level if ga.awaited(s) and gb.awaited(s)]
            if candidates:
                misser_shared = rng.choice(candidates)
        shared: list[tuple[int, Any]] = [(s, chat(rng)) for s in level if rng.random() < 0.3]
        for s, cmd in shared_submit.items():
            if s in (misser_shared, last) or (not everyone and rng.random() < 0.2):
                continue
            shared.append((s, cmd))
        rng.shuffle(shared)
        if last is not None:
            shared.append((last, shared_submit[last]))
        # Everyone else, world by world.
        plans = []
        for w in worlds:
            misser = None
            if early_close and not everyone and misser_shared is None:
                awaited = [s for s in outside if w.gs.awaited(s)]
                misser = rng.choice(awaited) if awaited else None
            mine = outside_moves(rng, w, outside, everyone, misser)
            plan: list[tuple[int, int, Any]] = []  # (slot, seat, command)
            for seat, cmd in mine:
                plan.append((rng.randrange(len(shared) if everyone else len(shared) + 1), seat, cmd))
            plans.append(plan)
        base = a.ts
        assert base == b.ts
        resolved = []
        for w, plan in zip(worlds, plans, strict=True):
            before = w.gs.round
            for slot in range(len(shared) + 1):
                for at, seat, cmd in plan:
                    if at == slot:
                        w.propose("command", seat, cmd, base + slot)
                if slot < len(shared):
                    seat, cmd = shared[slot]
                    w.propose("command", seat, cmd, base + slot + 1)
            if w.gs.round == before and w.gs.phase == "play":
                due = w.gs.deadline
                assert due is not None
                w.propose("tick", None, {"deadline": due}, due)
            found = [
                i for i, o in enumerate(w.outcomes)
                if any(isinstance(e, RoundResolved) and e.round == before for e in o.events)
            ]
            assert len(found) == 1
            resolved.append(found[0])
        # The round closed at the same log time in both worlds (a construction check).
        assert a.entries[resolved[0]].ts == b.entries[resolved[1]].ts
        stats["rounds"] += 1
        stats["split_rounds"] += bool(outside)
        if visible(a.gs, p) != visible(b.gs, p) or a.gs.phase != "play":
            stop = resolved
            break
        stop = [len(a.entries), len(b.entries)]
    for viewer in (Viewer(seat=p), SPECTATOR):
        fa, fb = a.frames(viewer, stop[0]), b.frames(viewer, stop[1])
        if fa != fb:
            diff = next(i for i, (x, y) in enumerate(zip(fa, fb, strict=False)) if x != y) if len(fa) == len(fb) else None
            raise AssertionError(
                f"{viewer} receives different updates (frame {diff}, {len(fa)} vs {len(fb)} frames):\n"
                + (f"{msgspec.json.decode(fa[diff])}\n{msgspec.json.decode(fb[diff])}" if diff is not None else "")
            )
    stats["frames"] = len(a.frames(Viewer(seat=p), stop[0]))
    return stats


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    seats=st.integers(3, 9),
    layout=st.sampled_from(LAYOUTS),
    early_close=st.booleans(),
    who=st.integers(0, 8),
)
def test_nothing_outside_a_players_level_changes_what_it_receives(
    seed: int, seats: int, layout: str, early_close: bool, who: int
) -> None:
    twin_run(random.Random(seed), seats, layout, early_close, who % seats)


def test_the_twin_worlds_really_differ_outside_the_level() -> None:
    """The comparison above covers rounds with players outside P's level, in numbers."""
    totals: Counter[str] = Counter()
    for seed in range(12):
        totals.update(twin_run(random.Random(seed), 7, LAYOUTS[seed % len(LAYOUTS)], seed % 2 == 0, seed % 7))
    assert totals["split_rounds"] >= 20, totals
    assert totals["frames"] >= 60, totals


def test_thirteen_seats_on_the_default_layout() -> None:
    for seed in range(4):
        twin_run(random.Random(1000 + seed), 13, "default", True, seed)
