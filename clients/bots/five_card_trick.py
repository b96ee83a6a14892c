"""Five-Card Trick for clients: reading the view, bots, and the terminal front-end.

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
    states: tuple[fct.SeatState, fct.SeatState]
    end_round: int
    max_rounds: int
    last_round: dict[str, Any] | None

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
            states=(seat_state(seats[0]), seat_state(seats[1])),
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
    return [c for c in card_sets(variant, size) if not disregarded(state, variant, c, items)]


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
        state = s.states[s.me]
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


# --- the terminal front-end ------------------------------------------------------------


HELP = """\
commands (round is filled in for you):
  score grow              submit two actions (names may be shortened: sc gr cl st bl)
  claim block:steal       play Block, naming the action it blocks
  score claim +overload   final: use an item in the submission (+overload, +limit_reset)
  claim claim             final: play a card twice
  none                    submit no action
  item claim_priority     final: take the pot with Claim Priority after a tied Claim
  view | (empty line)     show the match again, with the time left
  history                 every event so far
  help | quit"""


class Terminal:
    help = HELP

    @staticmethod
    def _names(view: dict[str, Any]) -> dict[str, str]:
        gs = view.get("game_state") or {}
        terms = gs.get("terms") or {}
        names: dict[str, str] = terms.get("actions") or {a: a.title() for a in ACTIONS}
        return names

    @staticmethod
    def _chips(view: dict[str, Any], n: int) -> str:
        terms = (view.get("game_state") or {}).get("terms") or {}
        word = terms.get("chip", "chip") if n == 1 else terms.get("chip_plural", "chips")
        return f"{n} {word}"

    def parse(self, line: str, view: dict[str, Any] | None) -> dict[str, Any]:
        if view is None or not view.get("started"):
            raise ValueError("the match has not started yet (it starts when every seat is taken)")
        if view.get("ended"):
            raise ValueError("the match is over")
        gs = view["game_state"]
        round_ = gs["round"]
        names = self._names(view)
        words = line.replace(",", " ").split()
        if words and words[0].lower() == "submit":
            words = words[1:]
        if words and words[0].lower() in ("item", "use"):
            if len(words) != 2:
                raise ValueError("usage: item claim_priority")
            item = fct.parse_item(words[1])
            if item is None:
                raise ValueError(f"{words[1]!r} is not an item ({', '.join(fct.ITEMS)})")
            return use_item(round_, item)
        if [w.lower() for w in words] in (["none"], ["pass"], ["-"]):
            return submit(round_, [])
        actions: list[str] = []
        items: list[str] = []
        block: str | None = None
        for word in words:
            if word.startswith("+"):
                item = fct.parse_item(word[1:])
                if item is None:
                    raise ValueError(f"{word[1:]!r} is not an item ({', '.join(fct.ITEMS)})")
                items.append(item)
                continue
            head, sep, target = word.partition(":")
            if not sep:
                head, sep, target = word.partition("=")
            action = self._action(head, names)
            if sep:
                if action != "block":
                    raise ValueError(f"only Block names a target ({word!r})")
                block = self._action(target, names)
            actions.append(action)
        if not actions and not items:
            raise ValueError("type actions, e.g. `score grow` (or `help`)")
        if "block" in actions and block is None:
            raise ValueError(
                f"name what {names['block']} blocks, e.g. `{names['block'].lower()}:{names['claim'].lower()}`"
            )
        return submit(round_, actions, block, items)

    @staticmethod
    def _action(word: str, names: dict[str, str]) -> str:
        key = word.strip().lower()
        if not key:
            raise ValueError("an empty action name")
        spellings = {a: {a, names.get(a, a).lower()} for a in ACTIONS}
        exact = [a for a, spelled in spellings.items() if key in spelled]
        if exact:
            return exact[0]
        found = [a for a, spelled in spellings.items() if any(s.startswith(key) for s in spelled)]
        if len(found) == 1:
            return found[0]
        shown = ", ".join(names.get(a, a) for a in ACTIONS)
        if found:
            raise ValueError(f"{word!r} could be {', '.join(names[a] for a in found)}")
        raise ValueError(f"{word!r} is not an action ({shown})")

    def render(self, view: dict[str, Any], seconds_left: float | None) -> str:
        gs = view.get("game_state") or {}
        names = self._names(view)
        terms = gs.get("terms") or {}
        light_plural = terms.get("light_plural", "lights")
        pot_word = terms.get("pot", "pot")
        you = view.get("you")
        lines: list[str] = []
        head = f"== Five-Card Trick ({view.get('variant')}) · match {view.get('match')}"
        if not view.get("started"):
            free = [s["seat"] for s in view.get("seats", []) if s.get("name") is None]
            lines.append(f"{head} · waiting for seat(s) {', '.join(map(str, free))} to be taken")
            return "\n".join(lines)
        round_line = f"{head} · round {gs.get('round')} of {gs.get('end_round')}"
        if gs.get("end_round") != gs.get("rounds"):
            round_line += f" (extended; at most {gs.get('max_rounds')})"
        round_line += f" · {pot_word} {gs.get('pot')}"
        if seconds_left is not None and not view.get("ended"):
            round_line += f" · {seconds_left:.0f} s left"
        lines.append(round_line)
        for seat in gs.get("seats", []):
            s = seat["seat"]
            tag = "you " if s == you else "    "
            name = seat.get("name") or f"seat {s}"
            dmo = " (DMO)" if seat.get("dmo") else ""
            lit = " ".join(names[a] if a in seat["lights"] else "·" for a in ACTIONS)
            text = f"  {tag}{name}{dmo}: {self._chips(view, seat['chips'])} | {light_plural}: {lit}"
            hist = seat.get("history") or {}
            previous = [
                "+".join(names[a] for a in h) or "-" for h in (hist.get("r-2"), hist.get("r-1")) if h is not None
            ]
            if previous:
                text += f" | played: {' / '.join(previous)}"
            if seat.get("blocked"):
                text += f" | blocked now: {', '.join(names[a] for a in seat['blocked'])}"
            if seat.get("items") or seat.get("used_items"):
                held = ", ".join(terms.get("items", {}).get(i, i) for i in seat.get("items", []))
                text += f" | items: {held or 'none left'}"
            if not view.get("ended"):
                text += " | submitted" if seat.get("submitted") else " | thinking"
            lines.append(text)
        last = gs.get("last_round")
        if last is not None:
            lines.append(f"  last round ({last['round']}):")
            lines.extend("    " + line for line in self._resolved_lines(view, last))
        if you is not None and not view.get("ended"):
            mine = gs["seats"][you]
            pending = mine.get("pending")
            if pending is not None:
                text = "+".join(names[a] for a in pending["actions"]) or "no action"
                if pending.get("block"):
                    text += f" ({names['block']} {names[pending['block']]})"
                if pending.get("items"):
                    text += " using " + ", ".join(pending["items"])
                lines.append(f"  your submission: {text}")
                for warning in pending.get("warnings", []):
                    lines.append(f"    warning: {warning}")
            banned = self._restrictions(view, mine)
            if banned:
                lines.append(f"  not allowed for you now: {banned}")
            if mine.get("claim_priority_available"):
                lines.append("  you may use Claim Priority now: `item claim_priority`")
        result = view.get("result")
        if view.get("ended") and result is not None:
            winner = result.get("winner")
            seats = view.get("seats", [])
            who = "a draw" if winner is None else f"{seats[winner].get('name')} (seat {winner}) wins"
            lines.append(f"  MATCH OVER: {who} — {result.get('reason')}; scores {list(result.get('scores') or ())}")
        return "\n".join(lines)

    def _restrictions(self, view: dict[str, Any], seat: dict[str, Any]) -> str:
        gs = view["game_state"]
        names = self._names(view)
        state = seat_state(seat)
        variant = gs["variant"]
        out = []
        for action in ACTIONS:
            gone = dict(disregarded(state, variant, (action,)))
            if action in gone:
                out.append(f"{names[action]} ({fct.reason_text(gone[action], fct.TERMS[variant])})")
        singles = {a for a in ACTIONS if disregarded(state, variant, (a,))}
        for pair in combinations(ACTIONS, 2):
            if set(pair) & singles:
                continue
            if disregarded(state, variant, pair):
                out.append(f"{names[pair[0]]}+{names[pair[1]]} together (same pair as last round)")
        return "; ".join(out)

    def _resolved_lines(self, view: dict[str, Any], event: dict[str, Any]) -> list[str]:
        names = self._names(view)
        seat_names = {s["seat"]: s.get("name") or f"seat {s['seat']}" for s in view.get("seats", [])}
        lines = []
        for seat in event["seats"]:
            who = seat_names.get(seat["seat"], f"seat {seat['seat']}")
            if not seat["submitted"]:
                played = "missed the round"
            elif not seat["plays"]:
                played = "played nothing"
            else:
                parts = []
                for p in seat["plays"]:
                    text = names[p["action"]] + (f" x{p['copies']}" if p["copies"] > 1 else "")
                    if p["action"] == "block" and seat.get("block"):
                        text += f"({names[seat['block']]})"
                    status = p["status"] if p["status"] in ("resolved", "blocked") else (
                        f"{p['status']}: {p.get('reason_text') or p.get('reason')}"
                    )
                    parts.append(f"{text} [{status}]")
                played = ", ".join(parts)
            if seat.get("items"):
                played += " using " + ", ".join(seat["items"])
            gains = f" +{seat['gained']}" if seat["gained"] else ""
            bonus = " (all lights bonus)" if seat.get("bonus") else ""
            lines.append(f"{who}: {played} → {self._chips(view, seat['chips'])}{gains}{bonus}")
        pot = f"pot {event['pot_before']}"
        if event.get("grown"):
            pot += f" +{event['grown']}"
        if event.get("taken_by") is not None:
            pot += f", taken by {seat_names.get(event['taken_by'])}; now {event['pot_after']}"
        else:
            pot += f" → {event['pot_after']}"
        lines.append(pot)
        return lines

    def awaiting(self, view: dict[str, Any]) -> str | None:
        seats = (view.get("game_state") or {}).get("seats") or []
        you = view.get("you")
        if not view.get("started") or view.get("ended") or you is None or you >= len(seats):
            return None
        return None if seats[you].get("submitted") else "you have not submitted"

    def recall(self, view: dict[str, Any]) -> list[str] | None:
        return None  # nothing shown is ever taken back

    def render_events(self, view: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
        seat_names = {s["seat"]: s.get("name") or f"seat {s['seat']}" for s in view.get("seats", [])}
        lines: list[str] = []
        for e in events:
            kind = e.get("type")
            if kind == "round_started":
                lines.append(f"round {e['round']} begins")
            elif kind == "submitted":
                who = "you" if e["seat"] == view.get("you") else seat_names.get(e["seat"])
                lines.append(f"{who} submitted for round {e['round']}")
            elif kind == "round_resolved":
                lines.append(f"round {e['round']} results:")
                lines.extend("  " + line for line in self._resolved_lines(view, e))
            elif kind == "round_replayed":
                lines.append(f"both missed round {e['round']}: it is played again")
            elif kind == "priority_claimed":
                lines.append(
                    f"{seat_names.get(e['seat'])} uses Claim Priority and takes {e['took']} "
                    f"(now {e['chips']}); the round's clock restarts"
                )
            elif kind == "extended":
                lines.append(f"tied after round {e['after_round']}: extended to round {e['until']}")
            elif kind == "game_over":
                lines.append(
                    f"game over after {e['rounds']} rounds: {seat_names.get(e['winner'])} wins "
                    f"({e['reason']}); chips {e['chips']}"
                )
            else:
                lines.append(str(e))
        return lines


TERMINAL = Terminal()
