"""Five-Card Trick for clients: reading the view, commands, and bots.

Everything here works from the `view` a seat receives (all of a Five-Card Trick is
public but the current round's submissions). Which submissions would be disregarded is
asked of the rules module itself (`disregards`, on a SeatState rebuilt from the public
seat view), so a bot never sends a card the server would ignore.

Bots:
- `RandomBot`: a uniformly random submission among those where nothing is disregarded
  (and, in `final`, items now and then).
- `HeuristicBot`: models the opponent from what it has played (and from what would pay
  it best against us), scores every legal submission of ours by its expected chip margin
  (Score, the pot with Grow/Claim/Steal, collisions, Blocks, lights toward the bonus,
  Claim Priority), and picks among the best with a little randomness so it cannot be
  read. In `final` it spends Overload and Limit Reset when they buy a clear edge (or
  before the match ends) and takes the pot with Claim Priority.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import combinations, combinations_with_replacement
from typing import Any

from clients.bots.common import BotFactory, seat_in_play
from domain.games import five_card_trick as fct

ACTIONS: tuple[str, ...] = fct.ACTIONS
Cards = tuple[str, ...]


def order(actions: Sequence[str]) -> Cards:
    return tuple(sorted(actions, key=ACTIONS.index))


# --- reading the view ------------------------------------------------------------------


def seat_state(seat: dict[str, Any]) -> fct.SeatState:
    """The rules' SeatState of a seat, rebuilt from its public seat view."""
    history = tuple(
        tuple(cards) for cards in (seat["history"]["r-2"], seat["history"]["r-1"]) if cards is not None
    )
    return fct.SeatState(
        chips=seat["chips"],
        lights=tuple(seat["lights"]),
        history=history,
        reset_last=bool(seat["limit_reset_last"]),
        blocked=tuple(seat["blocked"]),
        items=tuple(seat["items"]),
        used=tuple(seat["used_items"]),
    )


@dataclass(frozen=True)
class Situation:
    """What a seat needs to decide a round, from its view."""

    variant: str
    round: int
    me: int
    pot: int
    seats: list[dict[str, Any]]
    end_round: int
    max_rounds: int
    last_round: dict[str, Any] | None

    # The seats' SeatStates are rebuilt when first asked for: the random bot reads only
    # its own (a bench's bot clients decide thousands of rounds a second).
    @cached_property
    def states(self) -> tuple[fct.SeatState, fct.SeatState]:
        return (seat_state(self.seats[0]), seat_state(self.seats[1]))

    @cached_property
    def my_state(self) -> fct.SeatState:
        return seat_state(self.mine)

    @property
    def opp(self) -> int:
        return 1 - self.me

    @property
    def mine(self) -> dict[str, Any]:
        return self.seats[self.me]

    @property
    def rounds_left(self) -> int:
        return self.end_round - self.round

    @classmethod
    def of(cls, view: dict[str, Any]) -> Situation | None:
        """None when there is nothing for this seat to decide (not seated, not in play)."""
        seated = seat_in_play(view)
        if seated is None:
            return None
        me, gs = seated
        if gs.get("over") is not None or not gs.get("round"):
            return None
        seats = gs["seats"]
        return cls(
            variant=gs["variant"],
            round=gs["round"],
            me=me,
            pot=gs["pot"],
            seats=seats,
            end_round=gs["end_round"],
            max_rounds=gs["max_rounds"],
            last_round=gs.get("last_round"),
        )


def disregarded(
    state: fct.SeatState, variant: str, actions: Sequence[str], items: Sequence[str] = ()
) -> tuple[tuple[str, str], ...]:
    """What of this submission the rules would disregard (a Block is given a target)."""
    sub = fct.Submission(
        actions=order(actions),
        block="score" if "block" in actions else None,
        items=tuple(i for i in fct.ITEMS if i in items),
    )
    return fct.disregards(state, sub, variant)


def card_sets(variant: str, size: int) -> list[Cards]:
    """Every set of `size` cards a submission may hold in this variant."""
    if variant == "final":
        return [c for c in combinations_with_replacement(ACTIONS, size) if len(set(c)) > 1 or size < 3]
    return list(combinations(ACTIONS, size))


def legal_sets(
    state: fct.SeatState, variant: str, size: int = 2, items: Sequence[str] = ()
) -> list[Cards]:
    """The card sets of `size` none of whose cards would be disregarded."""
    # What the rules read of the seat to disregard a card (fct.disregards): its last two
    # rounds' cards, the one before last only without a Limit Reset last round. The sets
    # are kept by it (a bot asks every round, and a bench's bots thousands of times a
    # second: a fifth of a bench client's time before); tests/test_clients.py holds them
    # against those worked out afresh.
    history = state.history
    last = history[-1] if history else ()
    before = history[-2] if len(history) >= 2 and not state.reset_last else None
    return list(_legal_sets(last, before, variant, size, tuple(items)))


@lru_cache(maxsize=4096)
def _legal_sets(
    last: tuple[str, ...], before: tuple[str, ...] | None, variant: str, size: int,
    items: tuple[str, ...],
) -> tuple[Cards, ...]:
    state = fct.SeatState(history=(last,) if before is None else (before, last))
    return tuple(c for c in card_sets(variant, size) if not disregarded(state, variant, c, items))


def submit(
    round_: int, actions: Sequence[str], block: str | None = None, items: Sequence[str] = ()
) -> dict[str, Any]:
    return {
        "type": "submit",
        "round": round_,
        "actions": list(actions),
        "block": block,
        "items": list(items),
    }


def use_item(round_: int, item: str) -> dict[str, Any]:
    return {"type": "use_item", "item": item, "round": round_}


# --- bots ------------------------------------------------------------------------------


class _Bot:
    """What both bots share: when to act, and not acting twice in a round."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.sent_round: int | None = None
        self.priority_tried: set[int] = set()

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        s = Situation.of(view)
        if s is None:
            return []
        self.observe(s)
        if (
            s.mine.get("claim_priority_available")
            and s.round not in self.priority_tried
            and self.wants_priority(s)
        ):
            self.priority_tried.add(s.round)
            return [use_item(s.round, "claim_priority")]
        if s.mine["submitted"] or self.sent_round == s.round:
            return []
        self.sent_round = s.round
        return [self.choose(s)]

    def feedback(
        self, command: dict[str, Any], accepted: bool, warnings: Sequence[str], code: str | None
    ) -> None:
        if not accepted and command.get("type") == "submit" and command.get("round") == self.sent_round:
            self.sent_round = None  # try again on the next view

    def observe(self, s: Situation) -> None:
        pass

    def wants_priority(self, s: Situation) -> bool:
        return True

    def choose(self, s: Situation) -> dict[str, Any]:
        raise NotImplementedError


class RandomBot(_Bot):
    """A uniformly random submission of two cards, none of them disregarded.

    In `final` it plays Overload (three cards) or Limit Reset now and then, and uses
    Claim Priority half the times it may."""

    def wants_priority(self, s: Situation) -> bool:
        return self.rng.random() < 0.5

    def choose(self, s: Situation) -> dict[str, Any]:
        state = s.my_state
        items: list[str] = []
        if s.variant == "final":
            for item in ("overload", "limit_reset"):
                if item in state.items and self.rng.random() < 0.15:
                    items.append(item)
        size = 3 if "overload" in items else 2
        options = legal_sets(state, s.variant, size, items)
        while not options and size > 0:  # never happens with five cards, but be safe
            size -= 1
            items = [i for i in items if i != "overload"]
            options = legal_sets(state, s.variant, size, items)
        cards = self.rng.choice(options) if options else ()
        block = self.rng.choice(ACTIONS) if "block" in cards else None
        return submit(s.round, cards, block, items)


# The value of lights on toward the five-light bonus, per light.
LIGHT_VALUE = 0.15
# What a Block that stands is worth, before its target's own weight.
BLOCK_VALUE = 0.2
# What spending an item costs early on (it is worth nothing once the match is ending).
ITEM_COST = 0.9


@dataclass(frozen=True)
class Round:
    """The public facts of a round that the value of a pair of submissions depends on."""

    variant: str
    pot: int
    blocked: tuple[tuple[str, ...], tuple[str, ...]]  # per side: 0 = the deciding seat
    lights: tuple[frozenset[str], frozenset[str]]
    priority: tuple[bool, bool]  # holds an unused Claim Priority


def margin(r: Round, mine: Cards, theirs: Cards) -> tuple[float, set[str]]:
    """Side 0's expected chip margin over side 1 when they play these cards; side 0's
    standing cards."""
    cards = (mine, theirs)
    live: tuple[set[str], set[str]] = (set(), set())
    for side in (0, 1):
        for action in set(cards[side]):
            if action in r.blocked[side]:
                continue
            if cards[side].count(action) > cards[1 - side].count(action):
                live[side].add(action)
    gain = [0.0, 0.0]
    pot = r.pot + sum(1 for side in (0, 1) if "grow" in live[side])
    for side in (0, 1):
        other = 1 - side
        if "score" in live[side]:
            gain[side] += 1
        if "claim" in live[side] and "steal" not in live[other]:
            gain[side] += pot
        if "steal" in live[side] and "claim" in live[other]:
            gain[side] += pot
        if "block" in live[side]:
            gain[side] += BLOCK_VALUE
        lit = r.lights[side] | set(cards[side])
        if len(lit) == len(ACTIONS):
            gain[side] += 1 - LIGHT_VALUE * len(r.lights[side])
        else:
            gain[side] += LIGHT_VALUE * (len(lit) - len(r.lights[side]))
        if (
            r.variant == "final"
            and r.priority[side]
            and cards[side].count("claim") > 0
            and cards[side].count("claim") == cards[other].count("claim")
            and "steal" not in live[other]
        ):
            gain[side] += pot  # Claim Priority takes it next
    return gain[0] - gain[1], live[0]


def softmax_pick(rng: random.Random, options: Sequence[Any], scores: Sequence[float], temperature: float) -> Any:
    top = max(scores)
    weights = [math.exp((x - top) / temperature) for x in scores]
    return rng.choices(list(options), weights=weights, k=1)[0]


def softmax(scores: Sequence[float], temperature: float) -> list[float]:
    top = max(scores)
    weights = [math.exp((x - top) / temperature) for x in scores]
    total = sum(weights)
    return [w / total for w in weights]


class HeuristicBot(_Bot):
    """Expected-margin play against a model of the opponent (see the module docstring)."""

    TEMPERATURE = 0.12  # how far from the best submission it strays to stay unreadable

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.seen: set[int] = set()
        self.played: tuple[Counter[str], Counter[str]] = (Counter(), Counter())  # by seat
        self.rounds_seen = 0

    def observe(self, s: Situation) -> None:
        last = s.last_round
        if last is None or last["round"] in self.seen:
            return
        self.seen.add(last["round"])
        self.rounds_seen += 1
        for seat in last["seats"]:
            for action in seat["effective"]:
                self.played[seat["seat"]][action] += 1

    def wants_priority(self, s: Situation) -> bool:
        return s.pot >= 2 or s.rounds_left <= 2

    # -- the opponent model --

    def _frequency(self, seat: int) -> dict[str, float]:
        counts = self.played[seat]
        total = sum(counts.values())
        return {a: (counts[a] + 1) / (total + len(ACTIONS)) for a in ACTIONS}

    def _options(self, s: Situation, seat: int) -> list[Cards]:
        return legal_sets(s.states[seat], s.variant, 2) or [()]

    def _round(self, s: Situation, seat: int) -> Round:
        other = 1 - seat
        states = s.states
        return Round(
            variant=s.variant,
            pot=s.pot,
            blocked=(states[seat].blocked, states[other].blocked),
            lights=(frozenset(states[seat].lights), frozenset(states[other].lights)),
            priority=(
                "claim_priority" in states[seat].items,
                "claim_priority" in states[other].items,
            ),
        )

    def _model(self, s: Situation) -> tuple[list[Cards], list[float]]:
        """The opponent's likely submissions and their probabilities."""
        theirs = self._options(s, s.opp)
        n = len(theirs)
        uniform = [1 / n] * n
        freq = self._frequency(s.opp)
        raw = [math.prod(freq[a] for a in cards) for cards in theirs]
        total = sum(raw)
        frequency = [w / total for w in raw]
        # What would pay the opponent best against our own habits (one level of thought).
        mine = self._options(s, s.me)
        my_freq = self._frequency(s.me)
        my_raw = [math.prod(my_freq[a] for a in cards) for cards in mine]
        my_total = sum(my_raw)
        their_round = self._round(s, s.opp)
        payoffs = [
            sum(w / my_total * margin(their_round, cards, m)[0] for m, w in zip(mine, my_raw, strict=True))
            for cards in theirs
        ]
        clever = softmax(payoffs, 0.5)
        trust = self.rounds_seen / (self.rounds_seen + 6)
        probs = [
            (1 - trust) * 0.6 * u + trust * 0.6 * f + 0.4 * c
            for u, f, c in zip(uniform, frequency, clever, strict=True)
        ]
        return theirs, probs

    # -- choosing --

    def choose(self, s: Situation) -> dict[str, Any]:
        state = s.states[s.me]
        theirs, probs = self._model(s)
        rnd = self._round(s, s.me)
        late = max(0.0, min(1.0, (s.rounds_left - 1) / 10))
        item_cost = ITEM_COST * late
        candidates: list[tuple[Cards, tuple[str, ...]]] = [(c, ()) for c in legal_sets(state, s.variant, 2)]
        if s.variant == "final":
            if "overload" in state.items:
                candidates += [(c, ("overload",)) for c in legal_sets(state, s.variant, 3, ("overload",))]
            if "limit_reset" in state.items:
                candidates += [(c, ("limit_reset",)) for c in legal_sets(state, s.variant, 2, ("limit_reset",))]
        if not candidates:
            candidates = [((), ())]
        scores = []
        for cards, items in candidates:
            value = sum(p * margin(rnd, cards, t)[0] for t, p in zip(theirs, probs, strict=True))
            scores.append(value - item_cost * len(items))
        cards, items = softmax_pick(self.rng, candidates, scores, self.TEMPERATURE)
        block = self._block_target(s) if "block" in cards else None
        return submit(s.round, cards, block, items)

    def _block_target(self, s: Situation) -> str:
        """The action whose loss would hurt the opponent most next round."""
        freq = self._frequency(s.opp)
        pot = s.pot + 0.5
        worth = {"score": 1.0, "grow": 0.35, "claim": pot, "steal": 0.5 * pot, "block": 0.3}
        scores = [freq[a] * worth[a] for a in ACTIONS]
        target: str = softmax_pick(self.rng, ACTIONS, scores, 0.05)
        return target


BOTS: Mapping[str, BotFactory] = {"random": RandomBot, "heuristic": HeuristicBot}
LINEUP: tuple[str, ...] = ("heuristic", "random")
