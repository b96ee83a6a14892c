"""Keys to Success / Gatekeeping for clients: commands and bots.

Everything here works from the `view` a seat receives: its own cards, its level's
members and gates, its level's chat and past results (see projections/keys_to_success.py).

Bots (13 seats or any other count):
- `RandomBot`: a random open gate (or two adjacent ones) and one to three random cards
  from its hand; it chats now and then and votes for a random loser.
- `HeuristicBot`: spends cards sensibly. Cards are rounds: a player needs one entry per
  level and uses at least one card a round, so it keeps a card for every level still
  ahead and spends the rest only when its level is crowded. It bids one card most of the
  time, chooses the card's value by how crowded its level is (players per open gate,
  and what its level-mates spent last round), mixes its bids so identical bots do not
  block each other, always fights at two adjacent gates when it can (the same cards count
  at both), and leans towards Pass gates while three Pass gates are still possible and
  towards Garnet gates otherwise. Alone in its level it walks through with its lowest
  card. It votes for the loser with the most garnets.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from itertools import combinations, pairwise
from typing import Any

from clients.bots.common import BotFactory, seat_in_play

CARD_VALUES = (1, 2, 3)
KIND_ORDER = {"pass": 0, "garnet": 1, "open": 2}  # which gates the first in turn take


def submit(round_: int, gates: Sequence[str], cards: Sequence[int]) -> dict[str, Any]:
    return {"type": "submit", "round": round_, "gates": list(gates), "cards": list(cards)}


def chat(text: str) -> dict[str, Any]:
    return {"type": "chat", "text": text}


def vote(candidate: int) -> dict[str, Any]:
    return {"type": "vote", "candidate": candidate}


def open_gates(gs: dict[str, Any]) -> list[dict[str, Any]]:
    level = gs.get("level") or {}
    return [g for g in level.get("gates", []) if g["status"] == "open"]


def gate_choices(gs: dict[str, Any]) -> list[tuple[str, ...]]:
    """Every single open gate and every pair of adjacent open gates of the seat's level."""
    level = gs.get("level") or {}
    gates = level.get("gates", [])
    singles: list[tuple[str, ...]] = [(g["name"],) for g in gates if g["status"] == "open"]
    pairs: list[tuple[str, ...]] = [
        (a["name"], b["name"])
        for a, b in pairwise(gates)
        if a["status"] == "open" and b["status"] == "open"
    ]
    return singles + pairs


def card_sets(hand: Sequence[int], max_cards: int = 3) -> list[tuple[int, ...]]:
    """The distinct non-empty multisets of at most `max_cards` cards from the hand."""
    out: set[tuple[int, ...]] = set()
    for n in range(1, min(max_cards, len(hand)) + 1):
        out.update(tuple(sorted(c)) for c in combinations(hand, n))
    return sorted(out, key=lambda c: (len(c), sum(c), c))


class _Bot:
    """What both bots share: when to act, and acting once a round / once a vote."""

    chat_rate = 0.0

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.sent_round: int | None = None
        self.voted = False
        self.chatted_round: int | None = None

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        seated = seat_in_play(view)
        if seated is None:
            return []
        me, gs = seated
        mine = gs.get("me") or {}
        if gs["phase"] == "vote":
            results = gs.get("results") or {}
            if me in results.get("winners", ()) and mine.get("vote") is None and not self.voted:
                losers = list(results.get("losers", ()))
                if losers:
                    self.voted = True
                    return [vote(self.choose_candidate(gs, losers))]
            return []
        if gs["phase"] != "play":
            return []
        out: list[dict[str, Any]] = []
        round_ = gs["round"]
        if (
            self.chat_rate
            and self.chatted_round != round_
            and mine.get("chats_left", 0) > 0
            and len((gs.get("level") or {}).get("members", ())) > 1
        ):
            self.chatted_round = round_
            if self.rng.random() < self.chat_rate:
                out.append(chat(self.message(gs)))
        if mine.get("can_submit") and not mine.get("submitted") and self.sent_round != round_:
            self.sent_round = round_
            gates, cards = self.choose(gs)
            out.append(submit(round_, gates, cards))
        return out

    def feedback(
        self, command: dict[str, Any], accepted: bool, warnings: Sequence[str], code: str | None
    ) -> None:
        if accepted:
            return
        if command.get("type") == "submit" and command.get("round") == self.sent_round:
            self.sent_round = None  # try again on the next view
        elif command.get("type") == "vote":
            self.voted = False

    def message(self, gs: dict[str, Any]) -> str:
        return "hello"

    def choose(self, gs: dict[str, Any]) -> tuple[tuple[str, ...], tuple[int, ...]]:
        raise NotImplementedError

    def choose_candidate(self, gs: dict[str, Any], losers: list[int]) -> int:
        return self.rng.choice(losers)


class RandomBot(_Bot):
    """A random open gate or adjacent pair, one to three random cards."""

    chat_rate = 0.3

    def message(self, gs: dict[str, Any]) -> str:
        gates = [g["name"] for g in open_gates(gs)]
        if not gates:  # nothing to go for (the escaped Room has no gates)
            return self.rng.choice(["good luck", "well played, all"])
        pick = self.rng.choice(gates)
        return self.rng.choice(
            [f"I'm going for {pick}.", "Anyone want to split the gates?", f"Stay off {pick}, please.", "good luck"]
        )

    def choose(self, gs: dict[str, Any]) -> tuple[tuple[str, ...], tuple[int, ...]]:
        hand = list(gs["me"]["hand"])
        gates = self.rng.choice(gate_choices(gs))
        n = self.rng.choice([1, 1, 1, 2, 2, 3])
        cards = tuple(sorted(self.rng.sample(hand, min(n, len(hand)))))
        return gates, cards


class HeuristicBot(_Bot):
    """Cards are rounds: keep one for every level ahead; claim a free gate in the chat."""

    def claims(self, gs: dict[str, Any]) -> set[str]:
        """Gates level-mates claimed in this round's channel ("claim X")."""
        me = gs["me"]["seat"]
        out = set()
        for message in gs.get("chat", ()):
            if message["seat"] != me and message.get("round") == gs["round"]:
                head, _, gate = message["text"].partition(" ")
                if head == "claim" and gate:
                    out.add(gate)
        return out

    def rivals(self, gs: dict[str, Any]) -> int:
        return len(self.rival_seats(gs))

    def rival_seats(self, gs: dict[str, Any]) -> list[int]:
        """Level-mates who can still fight (those seen using no card last round are out)."""
        level = gs.get("level") or {}
        me = gs["me"]["seat"]
        members = [s for s in level.get("members", ()) if s != me]
        history = gs.get("history") or []
        if history and history[-1].get("depth") == level.get("depth"):
            spent = {r["seat"]: r["cards_used"] for r in history[-1].get("results", ())}
            members = [s for s in members if spent.get(s, 1) > 0]
        return members

    def pick_cards(self, hand: list[int], target: int, max_cards: int) -> tuple[int, ...]:
        """The cheapest set reaching `target`: fewest cards, then the least strength."""
        options = card_sets(hand, max(1, max_cards))
        reaching = [c for c in options if sum(c) >= target]
        if not reaching:
            return max(options, key=lambda c: (sum(c), -len(c)))
        return min(reaching, key=lambda c: (len(c), sum(c)))

    def preference(self, gs: dict[str, Any], gate: dict[str, Any]) -> float:
        levels_left = gs["levels"] - gs["me"]["depth"]
        if gate["kind"] == "pass" and gs["me"]["passes"] + levels_left >= 3:
            return 3.0
        if gate["kind"] == "garnet":
            return 2.0
        return 1.0

    def turn_order(self, gs: dict[str, Any]) -> list[int]:
        """The level's fighters in an order every heuristic bot computes alike (it changes
        every round): the first ones take one open gate each, the rest are latecomers."""
        me = gs["me"]["seat"]
        fighters = [me, *self.rival_seats(gs)]
        return sorted(fighters, key=lambda s: hashlib.sha256(f"{gs['round']}:{s}".encode()).digest())

    def decide(self, gs: dict[str, Any]) -> tuple[tuple[str, ...], tuple[int, ...], str | None]:
        mine = gs["me"]
        hand = sorted(mine["hand"])
        spare = len(hand) - (gs["levels"] - mine["depth"])
        gates = sorted(open_gates(gs), key=lambda g: KIND_ORDER[g["kind"]])
        claimed = self.claims(gs)
        order = self.turn_order(gs)
        rank = order.index(mine["seat"])
        late = len(order) - len(gates)  # fighters without a gate of their own
        gate: dict[str, Any] | None = gates[rank] if rank < len(gates) else None
        if gate is not None and gate["name"] in claimed:
            # Someone who does not follow the order took it: another gate nobody has.
            spare_gates = [g for g in gates[len(order):] if g["name"] not in claimed]
            gate = self.rng.choice(spare_gates) if spare_gates else None
        if gate is not None:
            # Walk through the gate with the lowest card; when latecomers are about and
            # cards can be spared, sometimes more, to hold it against them.
            target = 1
            if late > 0 and spare >= 2 and self.rng.random() < 0.4:
                target = 2
            return (gate["name"],), self.pick_cards(hand, target, 1), f"claim {gate['name']}"
        # A latecomer: outbid someone at two adjacent gates, with a strength that varies
        # so that latecomers do not tie with each other.
        pairs = [c for c in gate_choices(gs) if len(c) == 2] or gate_choices(gs)
        target = self.rng.choice([2, 2, 3]) if spare >= 1 else max(hand)
        max_cards = 2 if spare >= 3 else 1
        if max_cards == 2 and self.rng.random() < 0.3:
            target += 1
        return self.rng.choice(pairs), self.pick_cards(hand, target, max_cards), None

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        gs = view.get("game_state")
        if (
            view.get("you") is None
            or not isinstance(gs, dict)
            or not view.get("started")
            or view.get("ended")
            or gs.get("phase") != "play"
        ):
            return super().act(view)
        mine = gs.get("me") or {}
        round_ = gs["round"]
        if not mine.get("can_submit") or mine.get("submitted") or self.sent_round == round_:
            return []
        self.sent_round = round_
        gates, cards, message = self.decide(gs)
        out = []
        if message is not None and mine.get("chats_left", 0) > 0 and self.rivals(gs) > 0:
            out.append(chat(message))
        out.append(submit(round_, gates, cards))
        return out

    def choose(self, gs: dict[str, Any]) -> tuple[tuple[str, ...], tuple[int, ...]]:
        gates, cards, _ = self.decide(gs)
        return gates, cards

    def choose_candidate(self, gs: dict[str, Any], losers: list[int]) -> int:
        garnets = (gs.get("results") or {}).get("garnets") or []
        return max(losers, key=lambda s: (garnets[s] if s < len(garnets) else 0, self.rng.random()))


BOTS: Mapping[str, BotFactory] = {"random": RandomBot, "heuristic": HeuristicBot}
LINEUP: tuple[str, ...] = ("heuristic", "random")
