"""Five-Card Trick: a two-player Death Match of simultaneous action cards.

Each round both players secretly choose up to two of five actions (Score, Grow, Claim,
Steal, Block); the choices are revealed together and resolved. The player with more chips
after 25 rounds wins; ties extend the match five rounds at a time. See
docs/rules/five-card-trick.md for the rules as implemented, variant by variant.

Variants: `dm12` (default), `gauntlet` (both players missing a round replays it),
`setnas-curse` (dm12 under other names) and `final` (doubled cards and items).

The module object itself is the Game (domain.contract.Game). Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import combinations
from typing import Any, NamedTuple

import msgspec

from domain.contract import (
    Accepted,
    Decision,
    OptionsError,
    Rejection,
    Result,
    VariantInfo,
)
from domain.kit.clocks import clock_ms
from domain.kit.options import Boolean, ClockScale, Custom, Integer, OptionTable
from domain.kit.rounds import SimultaneousRound
from domain.kit.seats import replace_at
from domain.kit.setup import all_public, always_seeded
from domain.rng import Rng

# --- identity --------------------------------------------------------------------------

name: str = "five-card-trick"
title: str = "Five-Card Trick"
# fct-2: Claim Priority takes only the pot the Claims tied for (with both seats holding
# the item, the second may no longer use it on the refilled pot).
rules_version: str = "fct-2"

variants: Sequence[VariantInfo] = (
    VariantInfo(
        "dm12",
        "Death Match 12",
        "Two of five actions a round for 25 rounds; a tie extends by 5 rounds up to 40, "
        "then the DMO wins. 60 s a round; a miss is no action.",
    ),
    VariantInfo(
        "gauntlet",
        "Zero's Gauntlet, Death Match 2",
        "As dm12 with 90 s a round; when both players miss a round it is replayed.",
    ),
    VariantInfo(
        "setnas-curse",
        "Setna's Curse",
        "The dm12 rules as abilities: Score, Raise, Claim, Steal, Block; Gems and torches.",
    ),
    VariantInfo(
        "final",
        "Final Match 1",
        "A card may be played twice (majority resolves); items Overload, Claim Priority and "
        "Limit Reset; extensions up to 50 rounds, then more unused items wins.",
    ),
)
default_variant: str = "dm12"
VARIANT_NAMES = tuple(v.name for v in variants)

SEATS = 2

ACTIONS: tuple[str, ...] = ("score", "grow", "claim", "steal", "block")
ITEMS: tuple[str, ...] = ("overload", "claim_priority", "limit_reset")
SUBMISSION_ITEMS: tuple[str, ...] = ("overload", "limit_reset")


class Terms(msgspec.Struct, frozen=True):
    """The words a variant shows its players."""

    actions: tuple[str, ...]  # display names in ACTIONS order
    action: str
    action_plural: str
    chip: str
    chip_plural: str
    light: str
    light_plural: str
    pot: str = "pot"

    def of(self, action: str) -> str:
        return self.actions[ACTIONS.index(action)]

    def chips(self, n: int) -> str:
        return f"{n} {self.chip if n == 1 else self.chip_plural}"


_CARD_TERMS = Terms(
    actions=("Score", "Grow", "Claim", "Steal", "Block"),
    action="action", action_plural="actions",
    chip="chip", chip_plural="chips",
    light="light", light_plural="lights",
)
TERMS: Mapping[str, Terms] = {
    "dm12": _CARD_TERMS,
    "gauntlet": _CARD_TERMS,
    "final": _CARD_TERMS,
    "setnas-curse": Terms(
        actions=("Score", "Raise", "Claim", "Steal", "Block"),
        action="ability", action_plural="abilities",
        chip="Gem", chip_plural="Gems",
        light="torch", light_plural="torches",
    ),
}
ITEM_TITLES: Mapping[str, str] = {
    "overload": "Overload",
    "claim_priority": "Claim Priority",
    "limit_reset": "Limit Reset",
}

# Why an action was disregarded (as if not played). Checked in this order; the first
# that applies is the one reported.
NO_BLOCK_TARGET = "no_block_target"
DOUBLED_LAST_ROUND = "doubled_last_round"
THIRD_IN_A_ROW = "third_in_a_row"
SAME_PAIR = "same_pair"


def reason_text(reason: str, terms: Terms) -> str:
    """A disregard / cancel / failure reason code in words."""
    texts = {
        NO_BLOCK_TARGET: f"no {terms.of('block')} target named",
        DOUBLED_LAST_ROUND: "played twice last round",
        THIRD_IN_A_ROW: "third round in a row",
        SAME_PAIR: f"same two {terms.action_plural} as last round",
        "collision": f"the opponent played the same {terms.action}",
        "outnumbered": "the opponent played more copies",
        "blocked": f"blocked by the opponent's {terms.of('block')}",
        "stolen": f"the opponent's {terms.of('steal')} took the {terms.pot}",
        "no_claim": f"no {terms.of('claim')} to steal from",
    }
    return texts.get(reason, reason)


# --- options ---------------------------------------------------------------------------


class Options(msgspec.Struct, frozen=True, kw_only=True, cache_hash=True):
    variant: str = "dm12"
    round_seconds: int = 60
    clock_scale: float = 1.0
    dmo: int = 1
    rounds: int = 25
    extension: int = 5
    max_rounds: int = 40
    items: tuple[tuple[str, ...], ...] = ((), ())
    max_replays: int = 10
    early_close: bool = True


_DEFAULT_ITEMS: tuple[tuple[str, ...], ...] = (("overload",), ("claim_priority", "limit_reset"))


def _items(value: Any, variant: str) -> tuple[tuple[str, ...], ...]:
    """The `items` option: a list of two lists of item names, in canonical order."""
    if not isinstance(value, list | tuple) or len(value) != SEATS:
        raise OptionsError("must be a list of two lists of item names")
    items: list[tuple[str, ...]] = []
    for seat, held in enumerate(value):
        if not isinstance(held, list | tuple) or not all(isinstance(i, str) for i in held):
            raise OptionsError(f"seat {seat} needs a list of item names")
        for item in held:
            if item not in ITEMS:
                raise OptionsError(f"unknown item {item!r} (known: {', '.join(ITEMS)})")
        if len(set(held)) != len(held):
            raise OptionsError(f"seat {seat} holds an item twice")
        items.append(tuple(i for i in ITEMS if i in held))
    return tuple(items)


def _rounds_fit(variant: str, values: Mapping[str, Any]) -> None:
    if values["max_rounds"] < values["rounds"]:
        raise OptionsError(
            f"option 'max_rounds' ({values['max_rounds']}) is below 'rounds' ({values['rounds']})"
        )


OPTIONS: OptionTable[Options] = OptionTable(
    Options,
    VARIANT_NAMES,
    [
        Integer(
            "round_seconds", 60, 1, 86_400, "seconds each player has to submit in a round",
            defaults={"gauntlet": 90, "final": 90},
        ),
        ClockScale(),
        Integer(
            "dmo", 1, 0, SEATS - 1,
            "the seat of the Death Match Opponent, who wins a tie after the last round",
        ),
        Integer("rounds", 25, 1, 1000, "rounds before the first possible extension"),
        Integer(
            "extension", 5, 1, 1000,
            "rounds added each time the match is tied at its scheduled end",
        ),
        Integer(
            "max_rounds", 40, 1, 1000, "no extension goes past this round", defaults={"final": 50}
        ),
        Custom(
            "items", ((), ()), "final only: the item names each seat holds, seat 0 first",
            type="array", parse=_items, variants=("final",), defaults={"final": _DEFAULT_ITEMS},
            schema={
                "items": {"type": "array", "items": {"enum": list(ITEMS)}, "uniqueItems": True},
                "minItems": SEATS,
                "maxItems": SEATS,
            },
        ),
        Integer(
            "max_replays", 10, 0, 1000,
            "gauntlet only: consecutive replays (both players missed) before the match is "
            "abandoned and scored as at its end",
            variants=("gauntlet",),
        ),
        Boolean(
            "early_close", True,
            "resolve a round as soon as both players have submitted; false: only at its "
            "deadline, each submission replaceable until then (dm12: 'You may change your "
            "submission up to the deadline')",
        ),
    ],
    checks=[_rounds_fit],
)


def options_schema(variant: str) -> dict[str, Any]:
    """The options a client may set for `variant`: type, bounds, default and description."""
    return OPTIONS.schema(variant)


def configure(variant: str, options: Mapping[str, Any]) -> Options:
    """Validated options for `variant`; OptionsError names the offending option."""
    return OPTIONS.configure(variant, options)


def round_ms(options: Options) -> int:
    """A round's clock in milliseconds (at least 1)."""
    return clock_ms(options.round_seconds, options.clock_scale)


def seat_count(options: Any) -> int:
    return SEATS


def make_setup(options: Any, rng: Rng) -> Any:
    """Nothing is secret at the start of a Five-Card Trick."""
    return {}


# Every option is public, and the (empty) setup is always the seed's.
public_options = all_public
seeded_setup = always_seeded


# --- commands --------------------------------------------------------------------------


class Submit(msgspec.Struct, frozen=True, tag="submit", forbid_unknown_fields=True):
    """A round's move; it replaces any earlier one of the same round."""

    round: int
    actions: tuple[str, ...]
    block: str | None = None
    items: tuple[str, ...] = ()


class UseItem(msgspec.Struct, frozen=True, tag="use_item", forbid_unknown_fields=True):
    """Use an item outside a submission (Claim Priority)."""

    item: str
    round: int


Command = Submit | UseItem
command_type: Any = Command
sealable_fields = frozenset({"block"})
"""The command field the rules may keep secret after the match: a Block's target (when
the Block did not resolve; RULINGS.md, "After a match"). In a log of version 4 it alone
of a submission's fields is committed on its own (domain/seal.py); a whole replaced
submission is withheld by its body's commitment."""


# --- events ----------------------------------------------------------------------------


class Submission(msgspec.Struct, frozen=True):
    """A normalised move: canonical action names in canonical order (copies adjacent)."""

    actions: tuple[str, ...] = ()
    block: str | None = None
    items: tuple[str, ...] = ()


class RoundStarted(msgspec.Struct, frozen=True, tag="round_started"):
    round: int
    deadline: int


class Submitted(msgspec.Struct, frozen=True, tag="submitted"):
    seat: int
    round: int
    actions: tuple[str, ...]
    block: str | None
    items: tuple[str, ...]


class Play(msgspec.Struct, frozen=True):
    """One action a seat submitted (all its copies) and what became of it.

    status: resolved | failed | canceled | blocked | disregarded. `reason` says why for
    every status but resolved (a reason code, see reason_text)."""

    action: str
    copies: int
    status: str
    reason: str | None = None


class SeatOutcome(msgspec.Struct, frozen=True):
    submitted: bool
    plays: tuple[Play, ...]
    block: str | None  # the Block target as submitted (projections hide it unless resolved)
    items: tuple[str, ...]  # items used in this round's submission
    effective: tuple[str, ...]  # the cards that counted (history for later restrictions)
    scored: int  # from Score
    took: int  # from the pot (Claim or Steal)
    bonus: int  # 1 if all five lights came on
    lights: tuple[str, ...]  # lit after the round (after a bonus turned them off)
    chips: int  # after the round
    blocked_next: tuple[str, ...]  # actions blocked for this seat next round
    priority: bool  # may use Claim Priority next round (final; holding it or not)

    @property
    def gained(self) -> int:
        return self.scored + self.took + self.bonus


class RoundResolved(msgspec.Struct, frozen=True, tag="round_resolved"):
    round: int
    at: int
    seats: tuple[SeatOutcome, ...]
    pot_before: int
    grown: int
    pot_after: int
    taken_by: int | None  # the seat that took the pot, if anyone did


class RoundReplayed(msgspec.Struct, frozen=True, tag="round_replayed"):
    """gauntlet: both players missed; the same round is played again."""

    round: int
    deadline: int
    replays: int  # consecutive replays so far


class PriorityClaimed(msgspec.Struct, frozen=True, tag="priority_claimed"):
    """final: Claim Priority took the pot; the round's clock restarted."""

    seat: int
    round: int
    took: int
    chips: int
    pot_after: int
    deadline: int


class Extended(msgspec.Struct, frozen=True, tag="extended"):
    """A tie at the scheduled end: play goes on to round `until`."""

    after_round: int
    until: int


class GameOver(msgspec.Struct, frozen=True, tag="game_over"):
    winner: int
    reason: str
    rounds: int
    chips: tuple[int, ...]
    items_left: tuple[int, ...]


Event = RoundStarted | Submitted | RoundResolved | RoundReplayed | PriorityClaimed | Extended | GameOver


# --- state -----------------------------------------------------------------------------


class SeatState(msgspec.Struct, frozen=True, cache_hash=True):
    chips: int = 0
    lights: tuple[str, ...] = ()  # lit actions, canonical order
    history: tuple[tuple[str, ...], ...] = ()  # effective cards of up to 2 past rounds, oldest first
    reset_last: bool = False  # used Limit Reset last round: only last round restricts
    blocked: tuple[str, ...] = ()  # actions blocked for this seat in the current round
    items: tuple[str, ...] = ()  # unused items (as of the last results)
    used: tuple[str, ...] = ()  # used items, in order of use
    pending: Submission | None = None  # this round's submission so far
    priority: bool = False  # may use Claim Priority in the current round (if held)


class State(msgspec.Struct, frozen=True):
    options: Options
    seats: tuple[SeatState, ...]
    end_round: int
    round: int = 0
    deadline: int | None = None
    pot: int = 1
    replays: int = 0
    last: RoundResolved | None = None
    finished: GameOver | None = None

    @property
    def variant(self) -> str:
        return self.options.variant


def initial_state(options: Options, setup: Any, seed: bytes) -> State:
    return State(
        options=options,
        seats=tuple(SeatState(items=options.items[s]) for s in range(SEATS)),
        end_round=options.rounds,
    )


def start(state: State, now: int) -> tuple[Event, ...]:
    return (RoundStarted(round=1, deadline=now + round_ms(state.options)),)


# --- restrictions ----------------------------------------------------------------------


_RANK: Mapping[str, int] = {a: i for i, a in enumerate(ACTIONS)}


def _order(actions: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted(actions, key=_RANK.__getitem__))


def _distinct(actions: Sequence[str]) -> tuple[str, ...]:
    """The distinct actions among `actions`, in the order of ACTIONS."""
    return _distinct_of(actions if type(actions) is tuple else tuple(actions))


def _pairs(cards: Sequence[str]) -> frozenset[tuple[str, str]]:
    """Every selection of 2 of the cards (as ordered pairs of names)."""
    return _pairs_of(cards if type(cards) is tuple else tuple(cards))


# Pure functions of a few cards (at most three of five names), asked again and again for
# the same few tuples as a log is folded: each remembers its answers (a few hundred at most).


@lru_cache(maxsize=1024)
def _distinct_of(actions: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(a for a in ACTIONS if a in actions)


@lru_cache(maxsize=1024)
def _pairs_of(cards: tuple[str, ...]) -> frozenset[tuple[str, str]]:
    return frozenset(combinations(_order(cards), 2))


def disregards(seat: SeatState, sub: Submission, variant: str) -> tuple[tuple[str, str], ...]:
    """The submitted actions that will be disregarded, with the reason: (action, reason).

    Used both for the sender's warnings and at resolution. Restrictions look at the
    *effective* cards of past rounds (seat.history); Limit Reset lifts them for its round
    and, for the next round, cuts the history back to the Limit Reset round."""
    try:
        return _disregards_kept(
            seat.history, seat.reset_last, sub.actions, sub.block is None, sub.items, variant
        )
    except TypeError:  # (cards in lists, not made by the rules: unhashable)
        return _disregards_of(
            tuple(map(tuple, seat.history)), seat.reset_last, tuple(sub.actions),
            sub.block is None, tuple(sub.items), variant,
        )


def _disregards_of(
    history: tuple[tuple[str, ...], ...], reset_last: bool, actions: tuple[str, ...],
    no_target: bool, items: tuple[str, ...], variant: str,
) -> tuple[tuple[str, str], ...]:
    return _disregards(
        history[-1] if history else (),
        history[-2] if len(history) >= 2 and not reset_last else None,
        actions,
        no_target,
        "limit_reset" not in items,
        variant == "final",
    )


# Asked twice for every submission (its warnings, then the round's resolution) and a pure
# function of a few short tuples of five names: the answers are kept (a few thousand at
# most; 1.0 us a call before they were kept, 0.2 us by the parts worked out of the seat
# and the submission, `_disregards`), and kept again by what the seat and the submission
# hold as they are (0.1 us: the second ask, and a fold of logs seen before).
_disregards_kept = lru_cache(maxsize=4096)(_disregards_of)


@lru_cache(maxsize=4096)
def _disregards(
    last: tuple[str, ...],
    before: tuple[str, ...] | None,
    actions: tuple[str, ...],
    no_target: bool,
    restricted: bool,
    final: bool,
) -> tuple[tuple[str, str], ...]:
    reasons: dict[str, str] = {}
    for action in _distinct(actions):
        if action == "block" and no_target:
            reasons[action] = NO_BLOCK_TARGET
        elif not restricted:
            continue
        elif final and last.count(action) >= 2:
            reasons[action] = DOUBLED_LAST_ROUND
        elif before is not None and action in last and action in before:
            reasons[action] = THIRD_IN_A_ROW
    if restricted:
        repeated = _pairs(last)
        for pair in _pairs(actions) & repeated:
            for action in pair:
                reasons.setdefault(action, SAME_PAIR)
    return tuple((a, reasons[a]) for a in ACTIONS if a in reasons)


def warnings_for(seat: SeatState, sub: Submission, variant: str) -> tuple[str, ...]:
    gone = disregards(seat, sub, variant)
    if not gone and not sub.items:  # (most submissions: nothing to warn of)
        return ()
    terms = TERMS[variant]
    out = [
        f"{terms.of(action)} will be disregarded ({reason_text(reason, terms)}): "
        f"it will not count, collide or light its {terms.light}"
        for action, reason in gone
    ]
    if "overload" in sub.items and len(sub.actions) < 3:
        out.append(
            f"Overload is used up by this submission although it has only "
            f"{len(sub.actions)} {terms.action_plural}"
        )
    return tuple(out)


# --- resolution ------------------------------------------------------------------------


def _effective(sub: Submission | None, gone: Mapping[str, str]) -> tuple[str, ...]:
    if sub is None:
        return ()
    if not gone:  # (most submissions: every card counts)
        return sub.actions
    return tuple(a for a in sub.actions if a not in gone)


# What became of a card that stands or does not (Play's status and reason).
_RESOLVED: tuple[str, str | None] = ("resolved", None)
_BLOCKED: tuple[str, str | None] = ("blocked", "blocked")
_OUTNUMBERED: tuple[str, str | None] = ("canceled", "outnumbered")
_COLLISION: tuple[str, str | None] = ("canceled", "collision")


def _stands(
    sub: Submission, gone: Mapping[str, str], mine: tuple[str, ...], theirs: tuple[str, ...],
    blocked: tuple[str, ...],
) -> tuple[dict[str, tuple[str, str | None]], set[str]]:
    """A seat's cards that stand (majority of effective copies, not blocked): the status
    of each that does not, and the set of those that do ("live")."""
    status: dict[str, tuple[str, str | None]] = {}
    live: set[str] = set()
    for action in _distinct(sub.actions):
        reason = gone.get(action)
        if reason is not None:
            status[action] = ("disregarded", reason)
        elif action in blocked:
            status[action] = _BLOCKED
        else:
            n, m = mine.count(action), theirs.count(action)
            if m > n:
                status[action] = _OUTNUMBERED
            elif m == n:
                status[action] = _COLLISION
            else:
                live.add(action)
    return status, live


class _SeatCards(NamedTuple):
    """What a round's cards did for one seat (whatever the chips, lights and pot)."""

    plays: tuple[Play, ...]
    effective: tuple[str, ...]
    scored: int
    blocked_next: tuple[str, ...]
    priority: bool


class _Cards(NamedTuple):
    seats: tuple[_SeatCards, ...]
    grown: int
    taken_by: int | None


def resolve(state: State, at: int) -> RoundResolved:
    """The results of the current round from the pending submissions (missing = none)."""
    variant = state.options.variant
    seats = state.seats
    # ROUND.plays (a missed round: no play) and the rest for the two seats, always in
    # play, written out: the kit's loop, its lambdas and two generators cost some 90
    # bytecodes a round, 3% of a fold's.
    first, second = seats
    subs = (first.pending, second.pending)
    gone = (
        disregards(first, subs[0], variant) if subs[0] is not None else (),
        disregards(second, subs[1], variant) if subs[1] is not None else (),
    )
    cards = _cards(variant == "final", subs, gone, (first.blocked, second.blocked))
    pot = state.pot + cards.grown
    taken_by = cards.taken_by
    outcomes: list[SeatOutcome] = []
    for s in range(SEATS):
        seat, sub, mine = seats[s], subs[s], cards.seats[s]
        took = pot if taken_by == s else 0
        lit = set(seat.lights)
        lit.update(mine.effective)
        bonus = 1 if lit.issuperset(ACTIONS) else 0
        lights = () if bonus else _distinct_of(tuple(lit))  # (a tuple: _distinct without its call)
        outcomes.append(
            SeatOutcome(
                submitted=sub is not None,
                plays=mine.plays,
                block=sub.block if sub is not None else None,
                items=sub.items if sub is not None else (),
                effective=mine.effective,
                scored=mine.scored,
                took=took,
                bonus=bonus,
                lights=lights,
                chips=seat.chips + mine.scored + took + bonus,
                blocked_next=mine.blocked_next,
                priority=mine.priority,
            )
        )
    return RoundResolved(
        round=state.round,
        at=at,
        seats=tuple(outcomes),
        pot_before=state.pot,
        grown=cards.grown,
        pot_after=1 if taken_by is not None else pot,
        taken_by=taken_by,
    )


def _cards(
    final: bool,
    subs: tuple[Submission | None, ...],
    gone: tuple[tuple[tuple[str, str], ...], ...],
    blocked: tuple[tuple[str, ...], ...],
) -> _Cards:
    """What the round's cards did: a function of the submissions, what is disregarded of
    them and what is blocked, the same few again and again in a log (two in three rounds
    of the bench's logs), so the answers are kept (at most 2048; 7.6 us a round resolved
    before, 4.2 when kept)."""
    try:
        return _kept_cards(final, subs, gone, blocked)
    except TypeError:  # (a submission not made by the rules, with a list in it: unhashable)
        return _cards_of(final, subs, gone, blocked)


def _cards_of(
    final: bool,
    subs: tuple[Submission | None, ...],
    gones: tuple[tuple[tuple[str, str], ...], ...],
    blocked: tuple[tuple[str, ...], ...],
) -> _Cards:
    gone: list[dict[str, str]] = [dict(g) for g in gones]
    eff = [_effective(sub, g) for sub, g in zip(subs, gone, strict=True)]

    # Which cards stand (majority of copies, not blocked): "live".
    status: list[dict[str, tuple[str, str | None]]] = [{}, {}]
    live: list[set[str]] = [set(), set()]
    for s in range(SEATS):
        sub = subs[s]
        if sub is not None:
            status[s], live[s] = _stands(sub, gone[s], eff[s], eff[1 - s], blocked[s])

    grown = sum(1 for s in range(SEATS) if "grow" in live[s])
    taken_by: int | None = None
    for s in range(SEATS):
        o = 1 - s
        if "claim" in live[s]:
            if "steal" in live[o]:
                status[s]["claim"] = ("failed", "stolen")
            else:
                status[s]["claim"] = _RESOLVED
                taken_by = s
        if "steal" in live[s]:
            if "claim" in live[o]:
                status[s]["steal"] = _RESOLVED
                taken_by = s
            else:
                status[s]["steal"] = ("failed", "no_claim")
        for action in ("score", "grow", "block"):
            if action in live[s]:
                status[s][action] = _RESOLVED

    seats: list[_SeatCards] = []
    for s in range(SEATS):
        o = 1 - s
        sub, opp_sub = subs[s], subs[o]
        blocked_next: tuple[str, ...] = ()
        if opp_sub is not None and "block" in live[o] and opp_sub.block is not None:
            blocked_next = (opp_sub.block,)
        claims = eff[s].count("claim")
        priority = (
            final
            and claims > 0
            and claims == eff[o].count("claim")
            and "steal" not in live[o]
        )
        plays: tuple[Play, ...] = ()
        if sub is not None:
            played, reached = sub.actions, status[s]
            plays = tuple([Play(a, played.count(a), *reached[a]) for a in _distinct(played)])
        scored = 1 if "score" in live[s] else 0
        seats.append(_SeatCards(plays, eff[s], scored, blocked_next, priority))
    return _Cards(tuple(seats), grown, taken_by)


_kept_cards = lru_cache(maxsize=2048)(_cards_of)



def _game_over(state: State, rounds: int, how: str) -> GameOver:
    """The end of the match scored from `state` (after the last round was folded)."""
    terms = TERMS[state.options.variant]
    chips = tuple(s.chips for s in state.seats)
    left = tuple(len(s.items) for s in state.seats)
    dmo = state.options.dmo
    if chips[0] != chips[1]:
        winner = 0 if chips[0] > chips[1] else 1
        reason = f"more {terms.chip_plural} {how}"
    elif state.options.variant == "final" and left[0] != left[1]:
        winner = 0 if left[0] > left[1] else 1
        reason = f"tied {how}: more unused items"
    else:
        winner = dmo
        reason = f"tied {how}: the Death Match Opponent wins"
    return GameOver(winner=winner, reason=reason, rounds=rounds, chips=chips, items_left=left)


def _close_round(state: State, at: int) -> list[Event]:
    """Resolve the current round and say what comes next."""
    resolved = resolve(state, at)
    events: list[Event] = [resolved]
    r = state.round
    if r >= state.end_round:  # (the round's resolution leaves end_round as it is)
        chips = [s.chips for s in resolved.seats]  # each seat's chips after the round
        if chips[0] != chips[1] or r >= state.options.max_rounds:
            events.append(_game_over(evolve(state, resolved), r, f"after round {r}"))
            return events
        until = min(r + state.options.extension, state.options.max_rounds)
        events.append(Extended(after_round=r, until=until))
    events.append(RoundStarted(round=r + 1, deadline=at + round_ms(state.options)))
    return events


# --- commands --------------------------------------------------------------------------


def _action_names(variant: str) -> dict[str, str]:
    names = {a: a for a in ACTIONS}
    for action, shown in zip(ACTIONS, TERMS[variant].actions, strict=True):
        names[shown.lower()] = action
    return names


_ACTION_NAMES: Mapping[str, Mapping[str, str]] = {v: _action_names(v) for v in TERMS}


def parse_action(variant: str, text: str) -> str | None:
    """A canonical action name from a canonical or displayed name (any case)."""
    return _ACTION_NAMES[variant].get(text.strip().lower())


def parse_item(text: str) -> str | None:
    key = text.strip().lower().replace(" ", "_").replace("-", "_")
    return key if key in ITEMS else None


def _normalise(state: State, seat: int, cmd: Submit) -> Submission | Rejection:
    if not cmd.items and type(cmd.actions) is tuple:
        return _normalise_cards(state.options.variant, cmd.actions, cmd.block)
    return _normalised(state.options.variant, state.seats[seat], cmd.actions, cmd.items, cmd.block)


# A submission that names no item (every one but in `final`, and most there) is normalised
# or refused by its cards and Block target alone, the same few again and again: the
# answers are kept (at most 1024; 1.3 us a submission before, 0.2 us when kept).
@lru_cache(maxsize=1024)
def _normalise_cards(variant: str, actions: tuple[str, ...], block: str | None) -> Submission | Rejection:
    return _normalised(variant, None, actions, (), block)


def _normalised(
    variant: str, holder: SeatState | None, texts: Sequence[str], item_texts: Sequence[str],
    block_text: str | None,
) -> Submission | Rejection:
    """The submission of `texts` (actions), `item_texts` and `block_text` as the rules
    read it, or why it is refused (`holder`: the seat's state, for its items)."""
    terms = TERMS[variant]
    actions: list[str] = []
    for text in texts:
        action = parse_action(variant, text)
        if action is None:
            known = ", ".join(terms.actions)
            return Rejection("unknown_action", f"{text!r} is not an {terms.action} ({known})")
        actions.append(action)

    items: list[str] = []
    for text in item_texts:
        item = parse_item(text)
        if item is None:
            return Rejection("unknown_item", f"{text!r} is not an item ({', '.join(ITEMS)})")
        if variant != "final":
            return Rejection("no_items", f"the {variant} variant has no items")
        if item in items:
            return Rejection("duplicate_item", f"{ITEM_TITLES[item]} is named twice")
        if item not in SUBMISSION_ITEMS:
            return Rejection(
                "not_a_submission_item",
                f"{ITEM_TITLES[item]} is not played in a submission: send use_item instead",
            )
        assert holder is not None  # (given whenever items are named)
        unavailable = _unavailable(holder, item)
        if unavailable is not None:
            return unavailable
        items.append(item)

    limit = 3 if "overload" in items else 2
    if len(actions) > limit:
        extra = "" if limit == 3 or variant != "final" else " (3 with Overload)"
        return Rejection(
            "too_many_actions",
            f"at most {limit} {terms.action_plural}{extra}; {len(actions)} were submitted",
        )
    for action in ACTIONS:
        n = actions.count(action)
        if n > 1 and variant != "final":
            return Rejection(
                "duplicate_action", f"{terms.of(action)} is named twice; choose different {terms.action_plural}"
            )
        if n > 2:
            return Rejection(
                "three_identical", f"all three cards are {terms.of(action)}: at most two may be the same"
            )

    block: str | None = None
    if block_text is not None:
        block = parse_action(variant, block_text)
        if block is None:
            return Rejection(
                "unknown_block_target",
                f"the {terms.of('block')} target {block_text!r} is not an {terms.action}",
            )
        if "block" not in actions:
            return Rejection(
                "block_target_without_block",
                f"a {terms.of('block')} target was named but {terms.of('block')} is not played",
            )
    return Submission(actions=_order(actions), block=block, items=_order_items(items))


def _order_items(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(i for i in ITEMS if i in items)


def _unavailable(holder: SeatState, item: str) -> Rejection | None:
    """Why `holder` cannot use `item` now (None: it can)."""
    if item in holder.used:
        return Rejection("item_used", f"{ITEM_TITLES[item]} was already used")
    if item not in holder.items:
        return Rejection("item_not_held", f"you do not hold {ITEM_TITLES[item]}")
    return None


def _wrong_round(state: State, sent: int) -> Rejection | None:
    if state.finished is not None or state.round == 0:
        return Rejection("not_in_play", "no round is in play")
    if sent != state.round:
        return Rejection(
            "wrong_round", f"that was for round {sent}; round {state.round} is in play"
        )
    return None


def decide(state: State, seat: int, command: Any, now: int) -> Decision:
    if isinstance(command, Submit):
        stale = _wrong_round(state, command.round)
        if stale is not None:
            return stale
        sub = _normalise(state, seat, command)
        if not isinstance(sub, Submission):  # (a Rejection; asked so: see evolve)
            return sub
        submitted = Submitted(
            seat=seat, round=state.round, actions=sub.actions, block=sub.block, items=sub.items
        )
        return ROUND.accept(
            state, submitted, now, warnings_for(state.seats[seat], sub, state.options.variant)
        )
    if isinstance(command, UseItem):
        return _use_item(state, seat, command, now)
    return Rejection("bad_command", "unknown command")


def _use_item(state: State, seat: int, cmd: UseItem, now: int) -> Decision:
    item = parse_item(cmd.item)
    if item is None:
        return Rejection("unknown_item", f"{cmd.item!r} is not an item ({', '.join(ITEMS)})")
    if state.variant != "final":
        return Rejection("no_items", f"the {state.variant} variant has no items")
    stale = _wrong_round(state, cmd.round)
    if stale is not None:
        return stale
    if item != "claim_priority":
        return Rejection(
            "not_a_direct_item",
            f"{ITEM_TITLES[item]} is used in a submission (items: [{item!r}])",
        )
    holder = state.seats[seat]
    unavailable = _unavailable(holder, item)
    if unavailable is not None:
        return unavailable
    last = state.last
    if not holder.priority and last is not None and last.seats[seat].priority:
        return Rejection(
            "not_eligible",
            "the pot the Claims tied for was already taken with Claim Priority",
        )
    if not holder.priority:
        return Rejection(
            "not_eligible",
            "Claim Priority needs a round just resolved in which both players tied on "
            "Claim and the opponent's Steal did not stand",
        )
    return Accepted(
        events=(
            PriorityClaimed(
                seat=seat,
                round=state.round,
                took=state.pot,
                chips=holder.chips + state.pot,
                pot_after=1,
                deadline=now + round_ms(state.options),
            ),
        )
    )


# --- time ------------------------------------------------------------------------------


def deadline(state: State) -> int | None:
    if state.finished is not None:
        return None
    return state.deadline


def expire(state: State, at: int) -> tuple[Event, ...]:
    if state.variant == "gauntlet" and ROUND.nobody_in(state):
        if state.replays >= state.options.max_replays:
            return (
                _game_over(
                    state,
                    state.round - 1,
                    f"after {state.replays} replays of round {state.round} (abandoned)",
                ),
            )
        return (
            RoundReplayed(
                round=state.round, deadline=at + round_ms(state.options), replays=state.replays + 1
            ),
        )
    return tuple(_close_round(state, at))


# --- folding ---------------------------------------------------------------------------


def evolve(state: State, event: Any) -> State:
    rep = msgspec.structs.replace
    # The frequent three by their exact types, the most frequent first (folded twice a
    # command): an isinstance() that fails against a msgspec Struct asks its metaclass
    # for __instancecheck__, 0.1 us (the rules make these events, never a subclass).
    kind = type(event)
    if kind is Submitted:
        sub = Submission(actions=event.actions, block=event.block, items=event.items)
        before, i = state.seats, event.seat
        # (kit.seats.update_at written out: its two calls and keyword arguments cost as
        # much as the two copies; SEATS is 2: the pair made as one, not sliced and spread)
        new = rep(before[i], pending=sub)
        return rep(state, seats=(new, before[1]) if i == 0 else (before[0], new))
    if kind is RoundStarted:
        return rep(state, round=event.round, deadline=event.deadline)
    if kind is RoundResolved:
        seats = []
        for seat, out in zip(state.seats, event.seats, strict=True):
            used = out.items  # (most rounds: none)
            seats.append(
                rep(
                    seat,
                    chips=out.chips,
                    lights=out.lights,
                    history=(*seat.history, out.effective)[-2:],
                    reset_last="limit_reset" in used,
                    blocked=out.blocked_next,
                    items=tuple(i for i in seat.items if i not in used) if used else seat.items,
                    used=seat.used + used if used else seat.used,
                    pending=None,
                    priority=out.priority,
                )
            )
        return rep(
            state, seats=tuple(seats), pot=event.pot_after, replays=0, last=event, deadline=None
        )
    if isinstance(event, RoundReplayed):
        return rep(state, deadline=event.deadline, replays=event.replays)
    if isinstance(event, PriorityClaimed):
        holder = state.seats[event.seat]
        new = rep(
            holder,
            chips=event.chips,
            items=tuple(i for i in holder.items if i != "claim_priority"),
            used=(*holder.used, "claim_priority"),
        )
        # The pot both Claims tied for is gone; the refilled pot is nobody's to take by
        # priority, so the chance lapses for both seats (both may hold the item).
        lapsed = tuple(
            rep(s, priority=False) for s in replace_at(state.seats, event.seat, new)
        )
        return rep(state, seats=lapsed, pot=event.pot_after, deadline=event.deadline)
    if isinstance(event, Extended):
        return rep(state, end_round=event.until)
    if isinstance(event, GameOver):
        return rep(state, finished=event, deadline=None)
    raise TypeError(f"not a {name} event: {event!r}")


def _both_in(state: State) -> bool:
    """ROUND.all_in for two seats always in play: both have submitted (asked once a
    submission: the kit's loop over the seats and their lambdas, 0.8% of a fold)."""
    seats = state.seats
    return seats[0].pending is not None and seats[1].pending is not None


# A round: both seats submit in secret (replacing until it closes); it closes when both
# are in (with early_close) or at its deadline, a seat that missed it playing nothing.
ROUND: SimultaneousRound[State, Submission] = SimultaneousRound(
    seats=lambda state: SEATS,
    pending=lambda state, seat: state.seats[seat].pending,
    in_play=lambda state, seat: True,
    early_close=lambda state: state.options.early_close,
    close=_close_round,
    evolve=evolve,
    all_in_by=_both_in,
)


def result(state: State) -> Result | None:
    over = state.finished
    if over is None:
        return None
    return Result(winner=over.winner, reason=over.reason, rounds=over.rounds, scores=over.chips)


def round_of(state: State) -> int:
    return state.round
