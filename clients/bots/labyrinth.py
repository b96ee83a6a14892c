"""Labyrinth bots. They read only their seat's view (projections/labyrinth.py): the shape
of the labyrinth, whose turn it is, each player's last move as everyone heard it, and
their own belongings and what they were told alone.

- `explorer` (`ExplorerBot`): keeps a belief over the plan and over where everyone
  stands, built from what it was told (its start cell and its type, the answers to its
  own moves, the other players' last moves and their answers), and plays with a purpose:
  explores the cells and sides it does not know, picks up a treasure and carries it to
  an exit it has found (first trying outer sides another player was heard to walk out
  by, then blowing outer walls), comes back in after a fake treasure crumbled, goes to a
  hospital when wounded or infected, orders a new cell next to a hospital after a wound,
  shoots when another player is likely on its line of fire (a treasure carrier sooner),
  never walks into a wall it knows, never stays on an encephalitis cell, and breaks off
  an action it keeps repeating from one cell. It plays by the match's options 7.3 (a
  named target, the shooting range, damp powder) and 7.4 (deep, shallow or turbulent
  rivers).
- `random`: chooses a random start cell, then a random movement a turn, sometimes with a
  shot, a grenade or a status question first.

The explorer's belief (`Knowledge`, `Belief`): what it knows of the plan (cell types;
sides: passage, wall, open exit, a wall that survived a grenade; river flows; the next
pit of a pit; treasures seen), and for each player weighted candidates for its cell. A
move's answers (read back into rules.PHRASES keys) are explained by a small model of the
rules (`outcomes`: walls, exits, rivers, pit loops): each candidate is carried to the
cells the answer allows, weighted by how likely the unknown parts of the plan are
(`PRIOR`, `P_WALL`, `P_EXIT`), and dropped when the answer rules it out. The explorer's
own candidates carry what they assumed of the plan on the way; what candidates holding
nearly all the weight assumed becomes knowledge (`SURE`), and a cell holding `CERTAIN`
of the weight is taken for its position. While unsure of its position it makes the move
whose answer tells most about it (the mutual information of answer and candidate, less
the chance of a pit or a river, which would scatter it again), else plans from its
likeliest cell. An answer no candidate explains (a wall blown by someone else, a wrong
guess) makes it forget the walls, or at worst everything, and start again from every
cell. Shots update the others' candidates too: no scream, nobody was on the line.
"""

from __future__ import annotations

import heapq
import math
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clients.bots.common import BotFactory, seat_in_play
from domain.games.labyrinth import rules
from domain.games.labyrinth.moves import MoveError, parse_command

DIRECTIONS = ("up", "right", "down", "left")
OFFSETS = {"up": (-1, 0), "right": (0, 1), "down": (1, 0), "left": (0, -1)}
OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}

Cell = tuple[int, int]
Facts = frozenset[tuple[Any, Any]]
NO_FACTS: Facts = frozenset()


def my_turn(view: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, Any]] | None:
    """(our seat, the game state, our own part of it) when the game waits for us."""
    found = seat_in_play(view)
    if found is None or found[1]["to_act"] != found[0]:
        return None
    seat, gs = found
    return seat, gs, gs["me"]


def random_start(rng: random.Random, gs: dict[str, Any], me: dict[str, Any]) -> dict[str, Any]:
    """A start cell drawn among the cells not refused to us before (6.1)."""
    refused = {tuple(c) for c in me["refused"]}
    return {"type": "start", "cell": rng.choice([c for c in gs["shape"] if tuple(c) not in refused])}


def step(cell: Cell, direction: str) -> Cell:
    dr, dc = OFFSETS[direction]
    return cell[0] + dr, cell[1] + dc


# --- the game master's words, read back -----------------------------------------------------


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", template)
    out = ""
    seen: set[str] = set()
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out += re.escape(part)
        elif part in seen:
            out += ".*?"
        else:
            seen.add(part)
            out += f"(?P<{part}>.*?)"
    return re.compile(out)


_PATTERNS = sorted(
    ((key, _pattern(text)) for key, text in rules.PHRASES.items()),
    key=lambda kp: ("{" in rules.PHRASES[kp[0]], -len(re.sub(r"\{\w+\}", "", rules.PHRASES[kp[0]]))),
)


def read_answer(text: str) -> tuple[str, dict[str, str]]:
    """The phrase key of one answer (rules.PHRASES) and its arguments as text; ("", {})
    for words that are none of them."""
    for key, pattern in _PATTERNS:
        found = pattern.fullmatch(text)
        if found is not None:
            return key, found.groupdict()
    return "", {}


_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3}


def treasures_in(things: str) -> int:
    """How many treasures 'a treasure, two bullets and a corpse' names."""
    found = re.search(r"\b(\w+) treasures?\b", things)
    if found is None:
        return 0
    word = found.group(1)
    return _NUMBERS.get(word, int(word) if word.isdigit() else 1)


WHERE_TYPE: Mapping[str, str] = {text: kind.__name__.lower() for kind, text in rules.WHERE.items()}
"""'a hospital' (as a start is announced) -> 'hospital'."""

ARRIVE: Mapping[str, str] = {
    "land": "land", "hospital": "hospital", "weaponry": "weaponry", "delta": "delta",
    "mite_woken": "encephalitis", "encephalitis": "encephalitis",
}
"""Answers of a walk onto a cell that keeps the player: the cell's type."""
MOVEMENT = frozenset({
    *ARRIVE, "pit", "river", "river_delta", "flow_river", "flow_delta", "loop", "wall",
    "wall_river", "wall_delta", "not_in_river", "not_in_pit", "out", "returned", "lost_outside",
    "by_river", "river_against",
})

# --- what is likely where nothing is known ----------------------------------------------------

PRIOR: Mapping[str, float] = {
    "land": 0.42, "hospital": 0.08, "weaponry": 0.08, "pit": 0.1, "river": 0.2, "delta": 0.08,
    "encephalitis": 0.04,
}
"""The share of each type among the cells of a generated plan (docs/rules/labyrinth.md)."""
P_WALL = 0.25
"""The chance an unknown side between two cells is a wall."""
P_EXIT = 0.2
"""The chance an unknown outer side is an open exit."""
P_EXIT_RIVER = 0.02
"""The same on a river cell (generated plans put no exit there; section 8 none on a source)."""
SURE = 0.99
"""The share of the weight of its candidates at which what they assumed becomes knowledge."""
PARTICLES = 64
"""The most candidates a belief keeps (the heaviest)."""
CERTAIN = 0.95
"""The weight of a candidate cell at which the explorer takes it for its position."""
RECENT = 12
LOOPING = 3
"""An action taken LOOPING times from the same cell among the last RECENT moves is not
taken again: the explorer does something else (pits and rivers can make a cycle of moves
that teaches it nothing)."""
CARRIER = 1.6
"""How much more hitting a player who may carry a treasure is worth."""
RUMOUR = 4.0
"""How many moves a treasure carrier would go out of its way to try an outer side another
player was heard to walk out by (times the chance it was that side)."""


class Knowledge:
    """What the explorer knows of the plan. Sides: 'open' (a passage), 'wall', 'solid' (a
    wall that survived a grenade), 'exit' (an open exit)."""

    def __init__(self, shape: Iterable[Sequence[int]]) -> None:
        self.cells: frozenset[Cell] = frozenset((int(c[0]), int(c[1])) for c in shape)
        self.types: dict[Cell, str] = {}
        self.sides: dict[tuple[Cell, str], str] = {}
        self.flows: dict[Cell, Cell] = {}
        self.pits: dict[Cell, Cell] = {}
        self.treasures: dict[Cell, int] = {}
        self.rivers = "deep"
        """The match's option `rivers` (7.4): deep, shallow or turbulent."""

    def learn(self, facts: Iterable[tuple[Any, Any]]) -> None:
        for (kind, *where), value in facts:
            if kind == "t":
                self.types[where[0]] = value
            elif kind == "s":
                self.set_side(where[0], where[1], value)
            elif kind == "f":
                self.flows[where[0]] = value
            elif kind == "p":
                self.pits[where[0]] = value

    def set_side(self, cell: Cell, direction: str, value: str) -> None:
        self.sides[(cell, direction)] = value
        other = step(cell, direction)
        if other in self.cells:
            self.sides[(other, OPPOSITE[direction])] = value

    def copy_with(self, facts: Iterable[tuple[Any, Any]]) -> Knowledge:
        """This knowledge and `facts` on top."""
        other = Knowledge(())
        other.cells = self.cells
        other.types, other.sides = dict(self.types), dict(self.sides)
        other.flows, other.pits, other.treasures = dict(self.flows), dict(self.pits), dict(self.treasures)
        other.rivers = self.rivers
        other.learn(facts)
        return other

    def forget_walls(self) -> None:
        """Walls may have been blown since they were seen."""
        self.sides = {k: v for k, v in self.sides.items() if v not in ("wall", "solid")}


class _View:
    """Knowledge with one candidate's assumptions on top."""

    def __init__(self, know: Knowledge, facts: Facts, track: bool = True, immune: bool = False) -> None:
        self.know = know
        self.facts = dict(facts)
        self.track = track
        self.immune = immune
        """An immune player hears "Walked onto land" on an encephalitis cell (4.7)."""

    def get(self, key: tuple[Any, ...]) -> Any:
        kind = key[0]
        known: Any = None
        if kind == "t":
            known = self.know.types.get(key[1])
        elif kind == "s":
            known = self.know.sides.get((key[1], key[2]))
        elif kind == "f":
            known = self.know.flows.get(key[1])
        elif kind == "p":
            known = self.know.pits.get(key[1])
        return known if known is not None else self.facts.get(key)

    def type_p(self, cell: Cell, kind: str) -> float:
        if cell not in self.know.cells:
            return 0.0
        known = self.get(("t", cell))
        if known is not None:
            return 1.0 if known == kind else 0.0
        return PRIOR[kind]

    def side_p(self, cell: Cell, direction: str, what: str) -> float:
        """The chance the side is `what`: 'open', 'wall' or 'exit'."""
        inner = step(cell, direction) in self.know.cells
        known = self.get(("s", cell, direction))
        if known is not None:
            known = "wall" if known == "solid" else known
            return 1.0 if known == what else 0.0
        if inner:
            return {"open": 1 - P_WALL, "wall": P_WALL}.get(what, 0.0)
        exit_ = P_EXIT_RIVER if self.get(("t", cell)) == "river" else P_EXIT
        return {"exit": exit_, "wall": 1 - exit_}.get(what, 0.0)

    def with_(self, *pairs: tuple[tuple[Any, ...], Any]) -> Facts:
        """The candidate's assumptions with `pairs` added (none kept when not tracking)."""
        if not self.track:
            return NO_FACTS
        out = dict(self.facts)
        for key, value in pairs:
            if self.get(key) is None:
                out[key] = value
                if key[0] == "s":
                    other = step(key[1], key[2])
                    if other in self.know.cells:
                        out[("s", other, OPPOSITE[key[2]])] = value
        return frozenset(out.items())


Outcome = tuple[Cell, float, Facts]


def _carried(v: _View, river: Cell, dest: str, lik: float, extra: Sequence[Any]) -> list[Outcome]:
    """Where the flow of the river cell `river` takes a player: its next cell, of type
    `dest` ('river' or 'delta')."""
    if v.know.rivers == "turbulent" and dest == "delta":  # carried all the way down (7.4)
        deltas = [(m, v.type_p(m, "delta")) for m in sorted(v.know.cells) if m != river]
        deltas = [(m, p) for m, p in deltas if p]
        total = sum(p for _, p in deltas)
        return [(m, lik * p / total, v.with_(*extra, (("t", m), "delta"))) for m, p in deltas]
    known = v.get(("f", river))
    if known is not None:
        p = v.type_p(known, dest)
        return [(known, lik * p, v.with_(*extra, (("t", known), dest)))] if p else []
    out: list[Outcome] = []
    candidates = []
    for d in DIRECTIONS:
        m = step(river, d)
        if m not in v.know.cells or v.side_p(river, d, "open") == 0 or v.get(("f", m)) == river:
            continue
        p = v.type_p(m, dest)
        if p:
            candidates.append((d, m, p))
    for d, m, p in candidates:
        out.append((m, lik * p / len(candidates),
                    v.with_(*extra, (("t", m), dest), (("f", river), m), (("s", river, d), "open"))))
    return out


def _pit_next(v: _View, pit: Cell, lik: float, extra: Sequence[Any]) -> list[Outcome]:
    known = v.get(("p", pit))
    if known is not None:
        return [(known, lik, v.with_(*extra))]
    candidates = [(m, v.type_p(m, "pit")) for m in sorted(v.know.cells) if m != pit]
    candidates = [(m, p) for m, p in candidates if p]
    total = sum(p for _, p in candidates)
    return [(m, lik * p / total, v.with_(*extra, (("t", m), "pit"), (("p", pit), m))) for m, p in candidates]


def _enter(v: _View, cell: Cell, key: str, lik: float, extra: Sequence[Any]) -> list[Outcome]:
    """Walking into `cell` (the side passed) with answer `key`."""
    if key == "land" and v.immune:
        p = v.type_p(cell, "land") + v.type_p(cell, "encephalitis")
        return [(cell, lik * p, v.with_(*extra))] if p else []
    if key in ARRIVE:
        kind = ARRIVE[key]
        p = v.type_p(cell, kind)
        return [(cell, lik * p, v.with_(*extra, (("t", cell), kind)))] if p else []
    if key == "pit":
        p = v.type_p(cell, "pit")
        return _pit_next(v, cell, lik * p, (*extra, (("t", cell), "pit"))) if p else []
    if key in ("river", "river_delta"):
        p = v.type_p(cell, "river")
        if not p:
            return []
        return _carried(v, cell, "river" if key == "river" else "delta", lik * p,
                        (*extra, (("t", cell), "river")))
    return []


def outcomes(know: Knowledge, cell: Cell, facts: Facts, go: str, keys: Sequence[str],
             track: bool = True, immune: bool = False) -> list[Outcome]:
    """The cells a player on `cell` may end on after moving `go` and hearing the movement
    answers `keys`, each with its likelihood and (when `track`) the candidate's
    assumptions; `immune`: the player is immune to encephalitis."""
    v = _View(know, facts, track, immune)
    key = keys[0] if keys else ""
    if key == "returned":  # back in through the exit it left by: entering its cell
        return _enter(v, cell, keys[1], 1.0, ()) if len(keys) > 1 else [(cell, 1.0, facts)]
    if go == "flow":
        if key == "not_in_river":
            p = 1 - v.type_p(cell, "river")
            return [(cell, p, facts)] if p else []
        if key in ("flow_river", "flow_delta"):
            p = v.type_p(cell, "river")
            dest = "river" if key == "flow_river" else "delta"
            return _carried(v, cell, dest, p, ((("t", cell), "river"),)) if p else []
        return []
    if go == "loop":
        if key == "not_in_pit":
            p = 1 - v.type_p(cell, "pit")
            return [(cell, p, facts)] if p else []
        if key == "loop":
            p = v.type_p(cell, "pit")
            return _pit_next(v, cell, p, ((("t", cell), "pit"),)) if p else []
        return []
    if go not in OFFSETS:
        return []
    wall = (("s", cell, go), "wall")
    if key == "wall":
        p = v.side_p(cell, go, "wall")
        if know.rivers != "shallow":  # a deep river carries a player who hit a wall
            p *= 1 - v.type_p(cell, "river")
        return [(cell, p, v.with_(wall))] if p else []
    if key == "river_against":  # out of a delta against a river flowing in (7.4)
        p = v.type_p(cell, "delta")
        return [(cell, p, facts)] if p else []
    if key in ("wall_river", "wall_delta"):
        p = v.side_p(cell, go, "wall") * v.type_p(cell, "river")
        dest = "river" if key == "wall_river" else "delta"
        return _carried(v, cell, dest, p, (wall, (("t", cell), "river"))) if p else []
    if key == "out":
        p = v.side_p(cell, go, "exit")
        return [(cell, p, v.with_((("s", cell, go), "exit")))] if p else []
    target = step(cell, go)
    if target not in know.cells:
        return []
    p = v.side_p(cell, go, "open")
    if not p:
        return []
    if key == "by_river":  # on foot along a shallow river (7.4)
        p *= (v.type_p(cell, "river") + v.type_p(cell, "delta")) * v.type_p(target, "river")
        return [(target, p, v.with_((("s", cell, go), "open"), (("t", target), "river")))] if p else []
    return _enter(v, target, key, p, ((("s", cell, go), "open"),))


Particle = tuple[Cell, float, Facts]


class Belief:
    """Where a player may stand: weighted candidates, each a cell and (for the explorer's
    own seat) what it assumed of the plan on the way there. `weights` sums them by cell."""

    def __init__(self, weights: Mapping[Cell, float]) -> None:
        self.particles: list[Particle] = []
        self.weights: dict[Cell, float] = {}
        self.reset([(c, w, NO_FACTS) for c, w in weights.items()])

    def reset(self, particles: Iterable[Particle]) -> None:
        merged: dict[tuple[Cell, Facts], float] = {}
        for cell, w, facts in particles:
            if w > 0:
                merged[(cell, facts)] = merged.get((cell, facts), 0.0) + w
        kept = sorted(merged.items(), key=lambda kw: (-kw[1], kw[0][0]))[:PARTICLES]
        total = sum(w for _, w in kept)
        self.particles = [(cell, w / total, facts) for (cell, facts), w in kept]
        self.weights = {}
        for cell, w, _ in self.particles:
            self.weights[cell] = self.weights.get(cell, 0.0) + w

    def supported(self, share: float) -> Facts:
        """What candidates holding `share` of the weight or more assumed."""
        support: dict[tuple[Any, Any], float] = {}
        for _, w, facts in self.particles:
            for fact in facts:
                support[fact] = support.get(fact, 0.0) + w
        return frozenset(f for f, w in support.items() if w >= share)

    def common(self) -> Facts:
        """What every candidate assumed."""
        return self.supported(1.0 - 1e-9)

    def facts_at(self, cell: Cell) -> Facts:
        """What the heaviest candidate on `cell` assumed."""
        found = [(w, facts) for c, w, facts in self.particles if c == cell]
        return max(found, key=lambda wf: wf[0])[1] if found else NO_FACTS

    @classmethod
    def at(cls, cell: Cell) -> Belief:
        return cls({cell: 1.0})

    @classmethod
    def anywhere(cls, know: Knowledge, kind: str | None = None) -> Belief:
        v = _View(know, NO_FACTS)
        weights = {c: (v.type_p(c, kind) if kind else 1.0) for c in know.cells}
        if not any(weights.values()):
            weights = dict.fromkeys(know.cells, 1.0)
        return cls(weights)

    def top(self) -> tuple[Cell, float]:
        cell = max(self.weights, key=lambda c: (self.weights[c], c))
        return cell, self.weights[cell]

    def update(self, know: Knowledge, go: str, keys: Sequence[str], keep_facts: bool, immune: bool = False) -> bool:
        """Carries the belief through a move; False (and unchanged) if no candidate fits."""
        found = [(target, w * lik, facts)
                 for cell, w, before in self.particles
                 for target, lik, facts in outcomes(know, cell, before, go, keys, keep_facts, immune)]
        if sum(w for _, w, _ in found) <= 1e-12:
            return False
        self.reset(found)
        return True

    def diffuse(self, know: Knowledge) -> None:
        """An unknown movement: anywhere next to where it was, or where it was."""
        weights: dict[Cell, float] = {}
        for cell, w in self.weights.items():
            near = [cell] + [step(cell, d) for d in DIRECTIONS if step(cell, d) in know.cells]
            for n in near:
                weights[n] = weights.get(n, 0.0) + w / len(near)
        self.reset([(c, w, NO_FACTS) for c, w in weights.items()])

    def scale(self, factors: Mapping[Cell, float]) -> None:
        particles = [(c, w * factors.get(c, 1.0), f) for c, w, f in self.particles]
        if sum(w for _, w, _ in particles) > 1e-12:
            self.reset(particles)


# --- the explorer ----------------------------------------------------------------------------


Action = tuple[str, str]
"""('go', direction or 'flow' or 'loop') or ('blow', direction): a blow, then the go."""


def resolve(know: Knowledge, cell: Cell) -> Cell | None:
    """Where walking into `cell` ends, if that is known."""
    kind = know.types.get(cell)
    if kind is None:
        return None
    if kind == "river":
        return know.flows.get(cell)
    if kind == "pit":
        return know.pits.get(cell)
    return cell


def _entropy(probs: Iterable[float]) -> float:
    return -sum(p * math.log(p) for p in probs if p > 1e-12)


def _downstream(v: _View, river: Cell) -> tuple[float, float]:
    """The chances the flow of a river cell leads into a river cell, and into a delta."""
    target = v.get(("f", river))
    if target is not None:
        return v.type_p(target, "river"), v.type_p(target, "delta")
    return 0.6, 0.4


def answer_chances(v: _View, cell: Cell, go: str) -> dict[str, float]:
    """The chance of each movement answer (GO_KEYS) for a player on `cell` moving `go`."""
    river = v.type_p(cell, "river")
    if go in ("flow", "loop"):
        kind = "river" if go == "flow" else "pit"
        here = river if go == "flow" else v.type_p(cell, "pit")
        if go == "loop":
            return {"loop": here, "not_in_pit": 1 - here}
        to_river, to_delta = _downstream(v, cell)
        return {"flow_river": here * to_river, "flow_delta": here * to_delta, "not_in_" + kind: 1 - here}
    wall = v.side_p(cell, go, "wall")
    out = {"wall": wall * (1 - river), "out": v.side_p(cell, go, "exit")}
    if river:
        to_river, to_delta = _downstream(v, cell)
        out["wall_river"], out["wall_delta"] = wall * river * to_river, wall * river * to_delta
    target = step(cell, go)
    if target in v.know.cells:
        passage = v.side_p(cell, go, "open")
        for kind in ("land", "hospital", "weaponry", "delta", "encephalitis", "pit"):
            out[kind] = passage * v.type_p(target, kind)
        into = passage * v.type_p(target, "river")
        if into:
            to_river, to_delta = _downstream(v, target)
            out["river"], out["river_delta"] = into * to_river, into * to_delta
    return out


IDLE = frozenset({"wall", "not_in_river", "not_in_pit"})
"""Answers of a move that changed nothing (rules.IDLE): under option 7.7 it is not made again."""
SCATTERING = frozenset({"pit", "loop", "river", "river_delta", "flow_river", "flow_delta",
                        "wall_river", "wall_delta"})
SCATTER = 1.0
"""How much a move's chance of a scattering answer (SCATTERING) counts against what it
would tell."""


def information(know: Knowledge, belief: Belief, go: str) -> float:
    """What the answer to `go` would tell of where the player is among the candidates of
    `belief`: the mutual information between the answer and the candidate."""
    total: dict[str, float] = {}
    within = 0.0
    for cell, w, facts in belief.particles:
        probs = answer_chances(_View(know, facts, False), cell, go)
        z = sum(probs.values())
        if z <= 0:
            continue
        for k, p in probs.items():
            total[k] = total.get(k, 0.0) + w * p / z
        within += w * _entropy(p / z for p in probs.values())
    return _entropy(total.values()) - within


class ExplorerBot:
    """See the module's docstring."""

    threshold = 0.4
    """The chance of hitting one player (a treasure carrier's counted CARRIER times) worth
    a bullet."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.sent: tuple[Any, ...] | None = None
        self.know: Knowledge | None = None
        self.me: Belief | None = None
        self.others: dict[int, Belief] = {}
        self.seen: dict[int, int] = {}
        self.told = 0
        self.last: dict[str, Any] | None = None  # what our last move was: go, shot, blow, cell
        self.outside: str | None = None  # the direction we walked out by
        self.carried = False
        self.carriers: set[int] = set()
        self.immune: set[int] = set()  # the other players heard to be immune
        self.rumours: dict[tuple[Cell, str], float] = {}  # outer sides others walked out by
        self.suspects: set[int] = set()  # the others who may have been wounded since they moved
        self.recent: list[tuple[Cell, Action]] = []  # (where it thought it was, what it did)
        self.rejected = 0
        self.banned: str | None = None  # a move just refused
        self.named = False  # option 7.3: shots name their target,
        self.range: int | None = None  # bullets fly so far,
        self.damp = False  # no shooting from a river
        self.repeats = True  # option 7.7: a move that changed nothing may be made again
        self.common = False  # option 7.6: everyone starts on one cell

    # --- the protocol

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        found = my_turn(view)
        if found is None:
            return []
        seat, gs, me = found
        mark = (gs["round"], gs["players"][seat]["moves"], gs["phase"], len(me["refused"]), self.rejected)
        if mark == self.sent:
            return []
        self.sent = mark
        if gs["phase"] == "start":
            return [random_start(self.rng, gs, me)]
        if gs["phase"] != "play" or not me["alive"] or me["lost"]:
            return []
        if self.rejected >= 2:  # something the bot does not understand: a plain step
            return [{"type": "move", "move": f"go {self.rng.choice(DIRECTIONS)}"}]
        self.observe(seat, gs, view)
        out: list[dict[str, Any]] = []
        order = self.choose_order(me)
        if order is not None:
            out.append({"type": "order", "cell": list(order)})
            self.me = Belief.at(order)
        out.append({"type": "move", "move": self.choose_move(seat, gs)})
        return out

    def feedback(self, command: dict[str, Any], accepted: bool, warnings: Sequence[str], code: str | None) -> None:
        if not accepted:
            self.sent = None
            self.rejected += 1
            if command.get("type") == "move":
                self.banned = str(command.get("move"))  # e.g. a repeat option 7.7 forbids
        elif command.get("type") == "move":
            self.rejected = 0
            self.banned = None

    # --- what the bot was told

    def observe(self, seat: int, gs: dict[str, Any], view: dict[str, Any]) -> None:
        me = gs["me"]
        if self.know is None:
            options = view.get("options") or {}
            self.know = Knowledge(gs["shape"])
            self.know.rivers = str(options.get("rivers", "deep"))  # 7.4
            self.named = bool(options.get("named_target", False))
            self.range = options.get("shooting_range")
            self.damp = bool(options.get("damp_powder", False))
            self.repeats = bool(options.get("repeats", True))
            self.common = bool(options.get("common_start", False))
        know = self.know
        for event in me["told"][self.told:]:
            if event["key"] in ("start_cell", "new_cell"):
                row, column = (int(x) for x in event["args"]["cell"].split(","))
                self.me = Belief.at((row, column))
        self.told = len(me["told"])
        if self.me is None:
            self.me = Belief.anywhere(know)
        for p in sorted(gs["players"], key=lambda p: p["seat"] != seat):  # its own first
            s = p["seat"]
            if s not in self.seen:  # the start: each player's cell type was said (6.2)
                self.seen[s] = 0
                kind = WHERE_TYPE.get(p["started_on"] or "")
                if s == seat:
                    if kind is not None and len(self.me.weights) == 1:
                        know.types[self.me.top()[0]] = kind
                    elif kind is not None:  # a start it did not choose (7.6): a cell of that type
                        self.me = Belief.anywhere(know, kind)
                elif self.common:  # everyone on one cell (7.6): where it is
                    self.others[s] = Belief(self.me.weights)
                else:
                    self.others[s] = Belief.anywhere(know, kind)
        players = gs["players"]
        mine = players[seat]
        if mine["moves"] != self.seen[seat]:
            self.seen[seat] = mine["moves"]
            if self.last is not None and mine["last_move"] is not None:
                self.own_answers(mine["last_move"], me)
        for p in players:
            s = p["seat"]
            if s == seat or p["moves"] == self.seen[s]:
                continue
            jumped = p["moves"] - self.seen[s] != 1
            self.seen[s] = p["moves"]
            if p["standing"] != "playing":
                continue
            self.their_answers(s, p["last_move"], jumped)
        self.carried = me["carries"] == "treasure"

    def own_answers(self, last_move: dict[str, Any], me: dict[str, Any]) -> None:
        assert self.know is not None and self.me is not None and self.last is not None
        know = self.know
        sent = self.last
        self.last = None
        read = [read_answer(a) for a in last_move["answers"]]
        keys = [k for k, _ in read]
        moved = [k for k in keys if k in MOVEMENT]
        if "won_treasure" in keys or "lost_outside" in keys or not moved:
            return
        if not self.repeats and set(keys) <= IDLE:  # 7.7: not the same again
            self.banned = last_move["move"]
        before, _ = self.me.top()
        certain_before = len(self.me.weights) == 1
        if sent.get("shot") and certain_before:
            self.heard_shot(before, sent["shot"], "scream" in keys[: keys.index(moved[0])])
        if "scream" in keys or "mine_blast" in keys:
            self.suspects |= set(self.others)
        if sent.get("blow") and certain_before and moved[0] == "wall":
            know.set_side(before, sent["blow"], "solid")
        if moved[0] == "out":
            self.outside = sent["go"]
        elif moved[0] == "returned":
            self.outside = None
        immune = bool(me["immune"])
        if not self.me.update(know, sent["go"], moved, keep_facts=True, immune=immune):
            # the plan is not what the bot thought: a wall blown since, or something it
            # took for certain was not; it starts again from every cell
            know.forget_walls()
            self.me = Belief.anywhere(know)
            if not self.me.update(know, sent["go"], moved, keep_facts=True, immune=immune):
                rivers = know.rivers
                self.know = know = Knowledge(know.cells)
                know.rivers = rivers
                self.me = Belief.anywhere(know)
        know.learn(self.me.supported(SURE))
        cell, weight = self.me.top()
        if weight >= CERTAIN:
            know.learn(self.me.supported(CERTAIN))
            self.me = Belief.at(cell)
            for key, args in read:
                if key == "found":
                    know.treasures[cell] = treasures_in(args.get("things", ""))
            if "found" not in keys and moved[0] != "out":
                know.treasures.pop(cell, None)
            if me["carries"] == "treasure" and not self.carried and know.treasures.get(cell):
                know.treasures[cell] -= 1
            if self.carried and me["carries"] != "treasure" and "crumbled" not in keys:
                know.treasures[cell] = know.treasures.get(cell, 0) + 1  # dropped here
        know.treasures = {c: n for c, n in know.treasures.items() if n > 0}

    def heard_shot(self, cell: Cell, direction: str, scream: bool) -> None:
        """What a shot's answer says of where the others are."""
        line = dict(self.line(cell, direction))
        line[cell] = 1.0
        if not scream:
            for belief in self.others.values():
                belief.scale({c: 1 - r for c, r in line.items()})
            return
        chances = {s: sum(b.weights.get(c, 0.0) * r for c, r in line.items()) for s, b in self.others.items()}
        if chances:
            hit = max(chances, key=lambda s: chances[s])
            self.others[hit].scale({c: line.get(c, 0.0) for c in self.others[hit].weights})
            self.carriers.discard(hit)

    def their_answers(self, seat: int, last_move: dict[str, Any] | None, jumped: bool) -> None:
        assert self.know is not None
        belief = self.others[seat]
        if last_move is None:
            return
        try:
            command = parse_command(last_move["move"])
        except MoveError:
            command = None
        keys = [read_answer(a)[0] for a in last_move["answers"]]
        if "scream" in keys or "mine_blast" in keys:  # someone else was wounded
            self.suspects |= set(self.others) - {seat}
        if "found" in keys and "treasure" in " ".join(last_move["answers"]):
            self.carriers.add(seat)
        if "crumbled" in keys or "mine_blast" in keys:
            self.carriers.discard(seat)
        if command is None or command.kind != "move" or command.go is None:
            return
        moved = [k for k in keys if k in MOVEMENT]
        immune = seat in self.immune
        if "immune" in keys:
            self.immune.add(seat)
        suspect = seat in self.suspects
        self.suspects.discard(seat)
        if jumped or command.dark or not moved:
            belief.diffuse(self.know)
            return
        if suspect:  # it may have ordered a new cell before this move (5.5)
            anywhere = Belief.anywhere(self.know)
            belief.reset([*((c, w / 2, NO_FACTS) for c, w, _ in belief.particles),
                          *((c, w / 2, NO_FACTS) for c, w, _ in anywhere.particles)])
        if not belief.update(self.know, command.go, moved, keep_facts=False, immune=immune):
            belief = self.others[seat] = Belief.anywhere(self.know)
            belief.update(self.know, command.go, moved, keep_facts=False, immune=immune)
        if moved[0] == "out":  # an open exit where it stood
            for cell, w in belief.weights.items():
                side = (cell, command.go)
                self.rumours[side] = max(self.rumours.get(side, 0.0), w)

    # --- decisions

    def choose_order(self, me: dict[str, Any]) -> Cell | None:
        """A new cell after a wound: next to a hospital known, else far from here."""
        if not me["may_order"] or me["outside"] or self.know is None or self.me is None:
            return None
        know = self.know
        here, _ = self.me.top()
        hospitals = [c for c, t in know.types.items() if t == "hospital"]
        near = []
        for h in hospitals:
            for d in DIRECTIONS:
                n = step(h, d)
                if know.sides.get((h, d)) == "open" and know.types.get(n) in ("land", "weaponry", "delta"):
                    near.append(n)
        if near:
            return self.rng.choice(sorted(near))
        if hospitals:
            return self.rng.choice(sorted(hospitals))
        safe = [c for c, t in know.types.items() if t in ("land", "weaponry", "delta")]
        if not safe:
            return None
        return max(sorted(safe), key=lambda c: abs(c[0] - here[0]) + abs(c[1] - here[1]))

    def choose_move(self, seat: int, gs: dict[str, Any]) -> str:
        assert self.know is not None and self.me is not None
        me = gs["me"]
        if me["outside"]:
            back = OPPOSITE[self.outside] if self.outside else self.rng.choice(DIRECTIONS)
            self.last = {"go": back}
            return f"go {back}"
        here, weight = self.me.top()
        know = self.know
        action: Action | None = None
        if weight < CERTAIN:
            know = know.copy_with(self.me.facts_at(here))
            action = self.localize()
        if action is None:
            action = self.plan(know, here, me)
        refused = self.banned is not None and self.banned.endswith(self.words(action))
        if self.recent.count((here, action)) >= LOOPING or refused:
            # going round in circles, or refused: something else
            kind = know.types.get(here)
            goes = [*DIRECTIONS, *(["flow"] if kind in ("river", None) else []),
                    *(["loop"] if kind in ("pit", None) else [])]
            others = [("go", d) for d in goes
                      if ("go", d) != action and know.sides.get((here, d)) not in ("wall", "solid")
                      and not (self.banned is not None and self.banned.endswith(self.words(("go", d))))]
            action = self.rng.choice(others or [("go", d) for d in DIRECTIONS])
        self.recent = [*self.recent[-(RECENT - 1):], (here, action)]
        kind, where = action
        shot = self.choose_shot(seat, here, gs) if weight >= CERTAIN else None
        self.last = {"go": where, "shot": shot[0] if shot else None, "blow": where if kind == "blow" else None}
        return (f"{shot[1]}, " if shot else "") + self.words(action)

    @staticmethod
    def words(action: Action) -> str:
        """The move of an action, without a shot."""
        kind, where = action
        go = f"go by the {where}" if where in ("flow", "loop") else f"go {where}"
        return f"blow the {where} wall, {go}" if kind == "blow" else go

    def localize(self) -> Action | None:
        """When unsure where it is: the movement whose answer tells most about it, if any
        tells enough."""
        assert self.know is not None and self.me is not None
        goes = list(DIRECTIONS)
        v = _View(self.know, NO_FACTS)
        cells = list(self.me.weights)
        if any(v.type_p(c, "river") for c in cells):
            goes.append("flow")
        if any(v.type_p(c, "pit") for c in cells):
            goes.append("loop")
        scored = [(information(self.know, self.me, go) - SCATTER * self.scattering(go)
                   + self.rng.random() * 0.01, go) for go in goes]
        value, go = max(scored)
        return ("go", go) if value > 0.15 else None

    def scattering(self, go: str) -> float:
        """The chance that `go` ends in a pit or a river, whose answers leave the explorer
        unsure again."""
        assert self.know is not None and self.me is not None
        found = 0.0
        for cell, w, facts in self.me.particles:
            probs = answer_chances(_View(self.know, facts, False), cell, go)
            z = sum(probs.values())
            if z > 0:
                found += w * sum(p for k, p in probs.items() if k in SCATTERING) / z
        return found

    def choose_shot(self, seat: int, here: Cell, gs: dict[str, Any]) -> tuple[str, str] | None:
        """A shot worth a bullet: (its direction, its words), or None."""
        me = gs["me"]
        assert self.know is not None
        if me["bullets"] == 0 or me["wounded"] or me["infected"]:
            return None
        if self.know.types.get(here) in ("hospital", "weaponry", None):
            return None
        if self.damp and self.know.types.get(here) == "river":
            return None
        playing = {p["seat"] for p in gs["players"] if p["standing"] == "playing"}
        best: tuple[str, str] | None = None
        best_value = self.threshold
        for d in DIRECTIONS:
            line = dict(self.line(here, d))
            line[here] = 1.0
            for s, belief in self.others.items():
                if s not in playing:
                    continue
                worth = CARRIER if s in self.carriers else 1.0
                if self.named:  # one player on one cell (7.3)
                    for c, r in line.items():
                        value = belief.weights.get(c, 0.0) * r * worth
                        if value > best_value:
                            best, best_value = (d, f"shoot {d} at player {s + 1} on {c[0]},{c[1]}"), value
                    continue
                value = sum(belief.weights.get(c, 0.0) * r for c, r in line.items()) * worth
                if value > best_value:
                    best, best_value = (d, f"shoot {d}"), value
        return best

    def line(self, cell: Cell, direction: str) -> list[tuple[Cell, float]]:
        """The cells a bullet from `cell` may reach, with the chance it gets there."""
        assert self.know is not None
        know = self.know
        v = _View(know, NO_FACTS)
        out: list[tuple[Cell, float]] = []
        reach = 1.0
        at = cell
        while reach > 0.05 and (self.range is None or len(out) < self.range):
            nxt = step(at, direction)
            if nxt not in know.cells:
                break
            reach *= v.side_p(at, direction, "open")
            if reach <= 0:
                break
            kind = know.types.get(nxt)
            if kind in ("hospital", "weaponry"):
                break
            if kind is None:
                reach *= 1 - PRIOR["hospital"] - PRIOR["weaponry"]
            out.append((nxt, reach))
            at = nxt
        return out

    # --- the route

    def plan(self, know: Knowledge, here: Cell, me: dict[str, Any]) -> Action:
        """The next action towards the most useful goal, from `here` on what is known."""
        carrying = me["carries"] == "treasure"
        unwell = me["wounded"] or me["infected"]
        grenades = me["grenades"]
        dist, first, frontier, exits, walls = self.search(know, here, me)
        noise = {c: self.rng.random() * 0.3 for c in dist}

        def best(options: list[tuple[float, Action]]) -> Action | None:
            return min(options)[1] if options else None

        if carrying:
            chosen = best([(cost, act) for cost, act in exits])
            if chosen is not None:
                return chosen
        goals: list[Cell] = []
        if unwell:
            goals = [c for c, t in know.types.items() if t == "hospital"]
        elif not carrying:
            goals = [c for c, n in know.treasures.items() if n > 0 and c != here]
            if me["bullets"] == 0 and grenades == 0:
                goals += [c for c, t in know.types.items() if t == "weaponry"]
        reachable = [(dist[g] + noise[g], g) for g in goals if g in dist and g != here]
        if reachable:
            _, goal = min(reachable)
            return first[goal]
        options = []
        for cost, act, into_unknown, outer in frontier:
            penalty = 0.0 if into_unknown else 1.5
            if outer and carrying:  # an exit another player was heard to walk out by
                penalty -= RUMOUR * self.rumours.get(outer, 0.0)
            if outer:
                penalty += -2.0 if carrying else 2.0
            options.append((cost + penalty + self.rng.random() * 0.5, act))
        chosen = best(options)
        if chosen is not None:
            return chosen
        if carrying and grenades:
            chosen = best([(cost + self.rng.random(), act) for cost, act in walls])
            if chosen is not None:
                return chosen
        free = [d for d in DIRECTIONS if know.sides.get((here, d)) not in ("wall", "solid")]
        return ("go", self.rng.choice(free or list(DIRECTIONS)))

    def search(self, know: Knowledge, here: Cell, me: dict[str, Any]) -> tuple[
            dict[Cell, float], dict[Cell, Action], list[tuple[float, Action, bool, tuple[Cell, str] | None]],
            list[tuple[float, Action]], list[tuple[float, Action]]]:
        """Cheapest routes from `here` over what is known: the distance to each cell and the
        first action towards it; the frontier (a side or a cell whose outcome is unknown:
        cost, first action, whether it leads to an unknown cell, the side when it is an
        outer side); the known open exits and the outer walls that may be closed exits (cost,
        first action)."""
        immune = me["immune"]
        grenades = me["grenades"]
        dist: dict[Cell, float] = {here: 0.0}
        first: dict[Cell, Action] = {}
        frontier: list[tuple[float, Action, bool, tuple[Cell, str] | None]] = []
        exits: list[tuple[float, Action]] = []
        walls: list[tuple[float, Action]] = []
        queue: list[tuple[float, Cell]] = [(0.0, here)]
        done: set[Cell] = set()
        on_mite = know.types.get(here) == "encephalitis" and not immune

        def begin(cell: Cell, act: Action) -> Action:
            return act if cell == here else first[cell]

        while queue:
            cost, cell = heapq.heappop(queue)
            if cell in done:
                continue
            done.add(cell)
            kind = know.types.get(cell)
            moves: list[tuple[str, str]] = [("go", d) for d in DIRECTIONS]
            if kind == "river":
                moves.append(("go", "flow"))
            if kind == "pit":
                moves.append(("go", "loop"))
            for act, d in moves:
                target: Cell | None = None
                extra = 1.0
                if d == "flow":
                    target = know.flows.get(cell)
                    if target is None:
                        frontier.append((cost + 3, begin(cell, ("go", d)), True, None))
                        continue
                elif d == "loop":
                    target = know.pits.get(cell)
                    if target is None:
                        frontier.append((cost + 3, begin(cell, ("go", d)), True, None))
                        continue
                else:
                    side = know.sides.get((cell, d))
                    nxt = step(cell, d)
                    inner = nxt in know.cells
                    if not inner:
                        if side == "exit":
                            exits.append((cost + 1, begin(cell, ("go", d))))
                        elif side is None and not (on_mite and cell == here):
                            if know.types.get(cell) == "river":  # seldom an exit, and the flow carries
                                frontier.append((cost + 4, begin(cell, ("go", d)), False, None))
                            else:
                                frontier.append((cost + 1, begin(cell, ("go", d)), False, (cell, d)))
                        elif side == "wall" and grenades:
                            walls.append((cost + 1, begin(cell, ("blow", d))))
                        continue
                    if side == "solid":
                        continue
                    if side is None:
                        if not (on_mite and cell == here):
                            frontier.append((cost + 1, begin(cell, ("go", d)), nxt not in know.types, None))
                        continue
                    if side == "wall":
                        if not grenades or me["infected"]:
                            continue
                        act, extra = "blow", 5.0
                    target = resolve(know, nxt)
                    if target is None:
                        if not (on_mite and cell == here):
                            frontier.append((cost + extra + 2, begin(cell, (act, d)), True, None))
                        continue
                if know.types.get(target) == "encephalitis" and not immune:
                    extra += 25.0
                new = cost + extra
                if target not in dist or new < dist[target]:
                    dist[target] = new
                    first[target] = begin(cell, (act, d))
                    heapq.heappush(queue, (new, target))
        return dist, first, frontier, exits, walls


class RandomBot:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.sent: tuple[int, int, str] | None = None  # (round, moves made, phase) acted on

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        found = my_turn(view)
        if found is None:
            return []
        seat, gs, me = found
        mark = (gs["round"], gs["players"][seat]["moves"], gs["phase"] + str(len(me["refused"])))
        if mark == self.sent:
            return []
        self.sent = mark
        if gs["phase"] == "start":
            return [random_start(self.rng, gs, me)]
        if me["may_order"] and self.rng.random() < 0.3:
            return [{"type": "order", "cell": self.rng.choice(gs["shape"])},
                    {"type": "move", "move": self._move(me)}]
        return [{"type": "move", "move": self._move(me)}]

    def _move(self, me: Mapping[str, Any]) -> str:
        r = self.rng.random()
        go = self.rng.choice(DIRECTIONS)
        if r < 0.05:
            return "skip"
        if r < 0.15 and me["bullets"]:
            return f"go {go}, shoot {self.rng.choice(DIRECTIONS)}"
        if r < 0.25 and me["grenades"]:
            return f"blow the {go} wall, go {go}"
        if r < 0.3:
            return "go by the flow"
        if r < 0.35:
            return "go by the loop"
        return f"go {go}"

    def feedback(self, command: dict[str, Any], accepted: bool, warnings: Sequence[str], code: str | None) -> None:
        if not accepted:
            self.sent = None


BOTS: Mapping[str, BotFactory] = {"explorer": ExplorerBot, "random": RandomBot}
LINEUP: tuple[str, ...] = ("explorer", "random")
