"""Keys to Success / Gatekeeping: a limited-communication Main Match for 13 players.

Everyone starts in the outermost level with the same nine cards {1,1,1,1,2,2,2,3,3}.
Each round every player fights at one gate of its level, or at two adjacent ones with
the same cards (strength = the sum, the cards discarded once). Gates resolve left to
right: the unique highest strength enters (ties block, the next strength is looked at),
and a player who entered is ignored at later gates. Entering a gate moves a player one
level inwards; through the innermost level it has escaped. Open gates take one player a
round, Pass gates close for good once entered, Garnet gates earn a garnet and close for
the next round. Play ends when all but one have escaped or nobody left inside holds a
card. The first to escape (and anyone who went through three Pass gates and escaped)
win; those who did not escape lose (if everyone escaped: the last to escape). With
several losers the winners vote the Elimination Candidate within a time window.

Players only see their own level: who is in it, its gates, its chat channel and, after
a round, who entered which of its gates and how many cards each member used. See
docs/rules/keys-to-success.md for the rules as implemented and every ruling.

Variants (themes): `keys-to-success` (Rooms 1 to 6, doors, key-cards) and
`gatekeeping` (Levels 5 to 0, gates, weapons). The rules code is shared.

The module object itself is the Game (domain.contract.Game). Everything here is pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from domain.contract import Accepted, Decision, OptionsError, Rejection, Result, VariantInfo
from domain.games.keys_to_success.layout import (
    DEFAULT_LAYOUT,
    PRESETS,
    Gate,
    Layout,
    LayoutError,
    layout_text,
    parse_layout,
)
from domain.kit.clocks import clock_ms
from domain.kit.options import Boolean, ClockScale, Custom, Integer, OptionTable
from domain.kit.rounds import SimultaneousRound
from domain.kit.seats import update_at
from domain.kit.setup import all_public, always_seeded
from domain.rng import Rng

# --- identity --------------------------------------------------------------------------

name: str = "keys-to-success"
title: str = "Keys to Success / Gatekeeping"
rules_version: str = "kts-1"

variants: Sequence[VariantInfo] = (
    VariantInfo(
        "keys-to-success",
        "Keys to Success",
        "13 players escape from Room 1 to Room 6 through doors that take one player a round, "
        "spending key-cards {1,1,1,1,2,2,2,3,3}; players only talk to and learn about their "
        "own room.",
    ),
    VariantInfo(
        "gatekeeping",
        "Gatekeeping (Main Match 1)",
        "The same game as Minos's test chamber: fight from Level 5 to Level 0 through gates "
        "with daggers, axes and broadswords; players only talk to and learn about their own "
        "level.",
    ),
)
default_variant: str = "keys-to-success"
VARIANT_NAMES = tuple(v.name for v in variants)

HAND: tuple[int, ...] = (1, 1, 1, 1, 2, 2, 2, 3, 3)
CARD_VALUES: tuple[int, ...] = (1, 2, 3)
MAX_SEATS = 40


class Terms(msgspec.Struct, frozen=True):
    """The words a theme shows its players."""

    level: str
    level_plural: str
    gate: str
    gate_plural: str
    card: str
    card_plural: str
    card_names: tuple[str, str, str]  # values 1, 2, 3
    strength: str
    kinds: tuple[str, str, str]  # open, pass, garnet as shown
    numbering: str  # "down": Level N .. Level 0 (escaped); "up": Room 1 .. Room N+1

    def place(self, depth: int, levels: int) -> str:
        """The name of the level at `depth` (0: outermost; `levels`: escaped)."""
        number = levels - depth if self.numbering == "down" else depth + 1
        return f"{self.level} {number}"

    def card_name(self, value: int) -> str:
        return self.card_names[value - 1] if value in CARD_VALUES else str(value)

    def kind(self, kind: str) -> str:
        return self.kinds[("open", "pass", "garnet").index(kind)]


TERMS: Mapping[str, Terms] = {
    "keys-to-success": Terms(
        level="Room", level_plural="Rooms", gate="door", gate_plural="doors",
        card="key-card", card_plural="key-cards",
        card_names=("key-card 1", "key-card 2", "key-card 3"),
        strength="score",
        kinds=("Open (green)", "Pass (orange)", "Garnet (purple)"),
        numbering="up",
    ),
    "gatekeeping": Terms(
        level="Level", level_plural="Levels", gate="gate", gate_plural="gates",
        card="weapon", card_plural="weapons",
        card_names=("dagger", "axe", "broadsword"),
        strength="fighting strength",
        kinds=("Open (green)", "Pass (orange)", "Garnet (purple)"),
        numbering="down",
    ),
}


# --- options ---------------------------------------------------------------------------


class Options(msgspec.Struct, frozen=True, kw_only=True):
    variant: str = default_variant
    seats: int = 13
    round_seconds: int = 120
    vote_seconds: int = 86_400
    clock_scale: float = 1.0
    early_close: bool = True
    chat_max_chars: int = 500
    chat_per_round: int = 20
    layout: str = ""  # canonical layout text (configure fills in the default)


def _layout(value: Any, variant: str) -> str:
    """The `layout` option: a preset name or a layout text, as canonical layout text."""
    try:
        return layout_text(value)
    except LayoutError as exc:
        raise OptionsError(str(exc)) from exc


OPTIONS: OptionTable[Options] = OptionTable(
    Options,
    VARIANT_NAMES,
    [
        Integer(
            "seats", 13, 3, MAX_SEATS,
            "number of players (3 or more); play ends when all but one have escaped",
        ),
        Integer(
            "round_seconds", 120, 1, 7 * 86_400,
            "seconds to submit in a round; a player who misses plays its lowest card at the "
            "rightmost open gate of its level",
        ),
        Integer(
            "vote_seconds", 86_400, 1, 30 * 86_400,
            "the winners' window to vote the Elimination Candidate (the text's 24 h)",
        ),
        ClockScale(),
        Boolean(
            "early_close", True,
            "resolve a round as soon as every player who can submit has submitted (false: "
            "only at the deadline, which hides even that everyone is in)",
        ),
        Integer("chat_max_chars", 500, 1, 4000, "the longest chat message, in characters"),
        Integer(
            "chat_per_round", 20, 0, 1000,
            "chat messages each player may send a round (and during the vote)",
        ),
        Custom(
            "layout", layout_text(DEFAULT_LAYOUT),
            "the levels and gates: a layout text (docs/rules/keys-to-success.md) or a preset "
            "name (" + ", ".join(PRESETS) + ")",
            type="string", parse=_layout, schema={"examples": list(PRESETS)},
        ),
    ],
)


def options_schema(variant: str) -> dict[str, Any]:
    """The options a client may set for `variant`: type, bounds, default and description."""
    return OPTIONS.schema(variant)


def configure(variant: str, options: Mapping[str, Any]) -> Options:
    """Validated options for `variant`; OptionsError names the offending option."""
    return OPTIONS.configure(variant, options)


def _scaled(seconds: int, options: Options) -> int:
    return clock_ms(seconds, options.clock_scale)


def round_ms(options: Options) -> int:
    """A round's clock in milliseconds (at least 1)."""
    return _scaled(options.round_seconds, options)


def vote_ms(options: Options) -> int:
    """The vote window in milliseconds (at least 1)."""
    return _scaled(options.vote_seconds, options)


def seat_count(options: Any) -> int:
    return int(options.seats)


def make_setup(options: Any, rng: Rng) -> Any:
    """Nothing is dealt at random: every hand is the same. The seed only draws a tie."""
    return {}


# Every option is public, and the (empty) setup is always the seed's.
public_options = all_public
seeded_setup = always_seeded


# --- commands --------------------------------------------------------------------------


class Submit(msgspec.Struct, frozen=True, tag="submit", forbid_unknown_fields=True):
    """This round's fight: one gate or two adjacent ones, and the cards (values) used.

    It replaces any earlier submission of the same round."""

    round: int
    gates: tuple[str, ...]
    cards: tuple[int, ...]


class Chat(msgspec.Struct, frozen=True, tag="chat", forbid_unknown_fields=True):
    """A message to the sender's level channel of the current round."""

    text: str


class Vote(msgspec.Struct, frozen=True, tag="vote", forbid_unknown_fields=True):
    """A winner's vote for the Elimination Candidate (a loser's seat)."""

    candidate: int


Command = Submit | Chat | Vote
command_type: Any = Command


# --- events ----------------------------------------------------------------------------


class RoundStarted(msgspec.Struct, frozen=True, tag="round_started"):
    round: int
    deadline: int
    depths: tuple[int, ...]  # every seat's depth this round (layout depth: escaped)
    closed: tuple[str, ...]  # gates that cannot be entered this round, layout order


class Submitted(msgspec.Struct, frozen=True, tag="submitted"):
    seat: int
    round: int
    gates: tuple[str, ...]
    cards: tuple[int, ...]


class ChatSent(msgspec.Struct, frozen=True, tag="chat"):
    seat: int
    round: int
    depth: int | None  # the sender's level; None once play has ended (one open channel)
    to: tuple[int, ...]  # every seat in the channel at that moment, the sender included
    text: str
    at: int


class Play(msgspec.Struct, frozen=True):
    """One seat's round: where it stood, what it used where, and where it went."""

    seat: int
    depth: int
    gates: tuple[str, ...]  # () for no fight (no cards left, or no gate open)
    cards: tuple[int, ...]
    auto: bool  # the missed-deadline (or no-open-gate) rule chose this
    entered: str | None


class RoundResolved(msgspec.Struct, frozen=True, tag="round_resolved"):
    round: int
    at: int
    plays: tuple[Play, ...]  # every seat that had not escaped, in seat order


class PlayEnded(msgspec.Struct, frozen=True, tag="play_ended"):
    round: int
    at: int
    reason: str  # "escaped": all but at most one escaped; "no_cards": nobody inside holds a card
    winners: tuple[int, ...]
    losers: tuple[int, ...]
    escaped: tuple[int | None, ...]  # the round each seat escaped in
    garnets: tuple[int, ...]
    passes: tuple[int, ...]
    vote_deadline: int | None  # the end of the vote window, if there is a vote


class VoteCast(msgspec.Struct, frozen=True, tag="vote_cast"):
    seat: int
    candidate: int
    at: int


class GameOver(msgspec.Struct, frozen=True, tag="game_over"):
    rounds: int
    winners: tuple[int, ...]
    losers: tuple[int, ...]
    ec: int | None  # the Elimination Candidate
    ec_by: str  # none | only_loser | vote | garnets | draw
    votes: tuple[int | None, ...]  # each seat's vote (None: no vote / not a winner)
    garnets: tuple[int, ...]
    passes: tuple[int, ...]
    escaped: tuple[int | None, ...]
    reason: str


Event = RoundStarted | Submitted | ChatSent | RoundResolved | PlayEnded | VoteCast | GameOver


# --- state -----------------------------------------------------------------------------


class Pending(msgspec.Struct, frozen=True):
    gates: tuple[str, ...]
    cards: tuple[int, ...]


class PlayerState(msgspec.Struct, frozen=True):
    depth: int = 0
    hand: tuple[int, ...] = HAND
    garnets: int = 0
    passes: int = 0
    escaped: int | None = None  # the round it escaped in
    pending: Pending | None = None
    chats: int = 0  # messages sent in the current round (or during the vote)
    vote: int | None = None


class GateState(msgspec.Struct, frozen=True):
    sealed: bool = False  # a Pass gate someone entered
    closed_in: int = 0  # the round a Garnet gate is closed in (the one after an entry)
    entries: tuple[int, ...] = ()  # seats that entered it, in order


class State(msgspec.Struct, frozen=True):
    options: Options
    layout: Layout
    seed: bytes
    players: tuple[PlayerState, ...]
    gates: tuple[GateState, ...]  # aligned with layout.gates
    phase: str = "waiting"  # waiting | play | vote | over
    round: int = 0
    deadline: int | None = None
    chat: tuple[ChatSent, ...] = ()  # the current round's messages, every channel
    history: tuple[RoundResolved, ...] = ()
    ended: PlayEnded | None = None
    finished: GameOver | None = None

    @property
    def variant(self) -> str:
        return self.options.variant

    @property
    def levels(self) -> int:
        return self.layout.depth

    def gate_state(self, gate: Gate) -> GateState:
        return self.gates[_gate_index(self.layout, gate)]

    def is_closed(self, gate: Gate, round_: int | None = None) -> bool:
        gs = self.gate_state(gate)
        r = self.round if round_ is None else round_
        return gs.sealed or gs.closed_in == r

    def members(self, depth: int) -> tuple[int, ...]:
        return tuple(s for s, p in enumerate(self.players) if p.depth == depth)

    def active(self, seat: int) -> bool:
        """Whether the seat can still fight: not escaped and holding a card."""
        p = self.players[seat]
        return p.depth < self.levels and bool(p.hand)

    def open_gates(self, depth: int) -> tuple[Gate, ...]:
        if depth >= self.levels:
            return ()
        return tuple(g for g in self.layout.levels[depth] if not self.is_closed(g))

    def awaited(self, seat: int) -> bool:
        """Whether the round waits on this seat's submission."""
        return self.active(seat) and bool(self.open_gates(self.players[seat].depth))


def _gate_index(layout: Layout, gate: Gate) -> int:
    return sum(len(level) for level in layout.levels[: gate.depth]) + gate.index


def initial_state(options: Options, setup: Any, seed: bytes) -> State:
    layout = parse_layout(options.layout or layout_text(DEFAULT_LAYOUT))
    return State(
        options=options,
        layout=layout,
        seed=bytes(seed),
        players=tuple(PlayerState() for _ in range(options.seats)),
        gates=tuple(GateState() for _ in layout.gates),
    )


def closed_names(state: State, round_: int) -> tuple[str, ...]:
    return tuple(
        g.name for g, gs in zip(state.layout.gates, state.gates, strict=True)
        if gs.sealed or gs.closed_in == round_
    )


def _round_started(state: State, round_: int, at: int) -> RoundStarted:
    return RoundStarted(
        round=round_,
        deadline=at + round_ms(state.options),
        depths=tuple(p.depth for p in state.players),
        closed=closed_names(state, round_),
    )


def start(state: State, now: int) -> tuple[Event, ...]:
    return (_round_started(state, 1, now),)


# --- resolution ------------------------------------------------------------------------


def strength(cards: Iterable[int]) -> int:
    return sum(cards)


def remove_cards(hand: Sequence[int], cards: Sequence[int]) -> tuple[int, ...] | None:
    """The hand after discarding `cards` (None if the hand does not hold them)."""
    left = Counter(hand)
    for c in cards:
        if left[c] <= 0:
            return None
        left[c] -= 1
    return tuple(sorted(left.elements()))


def default_play(state: State, seat: int) -> Pending:
    """What a seat that did not submit plays: its lowest card at the rightmost gate of its
    level that is open this round (no gate if none is open: the card is still used)."""
    p = state.players[seat]
    open_ = state.open_gates(p.depth)
    return Pending(gates=(open_[-1].name,) if open_ else (), cards=(min(p.hand),))


def winner_at(bids: Sequence[tuple[int, int]]) -> int | None:
    """The seat that enters a gate from its (seat, strength) bids: the highest strength
    held by exactly one seat; tied strengths block each other and the next is looked at."""
    by_strength: dict[int, list[int]] = {}
    for seat, value in bids:
        by_strength.setdefault(value, []).append(seat)
    for value in sorted(by_strength, reverse=True):
        if len(by_strength[value]) == 1:
            return by_strength[value][0]
    return None


def resolve(state: State, at: int) -> RoundResolved:
    """The round's results from the submissions (missing ones get the default play)."""
    moves: dict[int, tuple[Pending, bool]] = {}
    for seat, p in enumerate(state.players):
        if p.depth >= state.levels:
            continue
        if not p.hand:
            moves[seat] = (Pending(gates=(), cards=()), False)
        elif p.pending is not None:
            moves[seat] = (p.pending, False)
        else:
            moves[seat] = (default_play(state, seat), True)
    entered: dict[int, str] = {}
    for level in state.layout.levels:
        for gate in level:
            if state.is_closed(gate):
                continue
            bids = [
                (seat, strength(move.cards))
                for seat, (move, _) in moves.items()
                if gate.name in move.gates and seat not in entered
            ]
            winner = winner_at(bids)
            if winner is not None:
                entered[winner] = gate.name
    plays = tuple(
        Play(
            seat=seat,
            depth=state.players[seat].depth,
            gates=move.gates,
            cards=move.cards,
            auto=auto,
            entered=entered.get(seat),
        )
        for seat, (move, auto) in sorted(moves.items())
    )
    return RoundResolved(round=state.round, at=at, plays=plays)


def _play_over(state: State) -> str | None:
    """Why play is over after the last round (None: it goes on)."""
    escaped = sum(1 for p in state.players if p.depth >= state.levels)
    if escaped >= len(state.players) - 1:
        return "escaped"
    if not any(state.active(s) for s in range(len(state.players))):
        return "no_cards"
    return None


def standings(state: State) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(winners, losers) at the end of play.

    Winners: every player who escaped in the earliest round anyone escaped, and every
    player who went through at least 3 Pass gates and escaped. Losers: the players who did
    not escape; if all escaped, those who escaped last among the players who are not
    winners (three-Pass players and the first to escape are never losers)."""
    escaped = {s: p.escaped for s, p in enumerate(state.players) if p.escaped is not None}
    first = min(escaped.values()) if escaped else None
    winners = tuple(
        s for s, r in sorted(escaped.items())
        if r == first or state.players[s].passes >= 3
    )
    failed = tuple(s for s in range(len(state.players)) if s not in escaped)
    if failed:
        return winners, failed
    rest = {s: r for s, r in escaped.items() if s not in winners}
    if not rest:
        return winners, ()
    last = max(rest.values())
    return winners, tuple(s for s, r in sorted(rest.items()) if r == last)


def elimination_candidate(
    state: State, losers: Sequence[int], votes: Sequence[int | None]
) -> tuple[int | None, str]:
    """The EC and how it was decided: the loser with most votes; on a tie (no votes is a
    tie of everyone) the tied loser with fewest garnets; then a draw from the seed."""
    if not losers:
        return None, "none"
    if len(losers) == 1:
        return losers[0], "only_loser"
    tally = Counter(v for v in votes if v is not None and v in losers)
    top = max((tally[s] for s in losers), default=0)
    tied = [s for s in losers if tally[s] == top]
    if len(tied) == 1:
        return tied[0], "vote"
    fewest = min(state.players[s].garnets for s in tied)
    tied = [s for s in tied if state.players[s].garnets == fewest]
    if len(tied) == 1:
        return tied[0], "garnets"
    return Rng(state.seed, "ec-draw").choice(sorted(tied)), "draw"


def _seat_list(seats: Sequence[int]) -> str:
    if not seats:
        return "nobody"
    return ("seat " if len(seats) == 1 else "seats ") + ", ".join(map(str, seats))


def _game_over(state: State) -> GameOver:
    ended = state.ended
    assert ended is not None
    votes = tuple(p.vote for p in state.players)
    ec, how = elimination_candidate(state, ended.losers, votes)
    how_text = {
        "none": "no Elimination Candidate (no loser)",
        "only_loser": "the only loser",
        "vote": "by the winners' vote",
        "garnets": "a tie broken by fewest garnets",
        "draw": "a tie drawn at random among the fewest garnets",
    }[how]
    reason = f"winners: {_seat_list(ended.winners)}; losers: {_seat_list(ended.losers)}"
    if ec is not None:
        reason += f"; Elimination Candidate: seat {ec} ({how_text})"
    else:
        reason += f"; {how_text}"
    return GameOver(
        rounds=ended.round,
        winners=ended.winners,
        losers=ended.losers,
        ec=ec,
        ec_by=how,
        votes=votes,
        garnets=ended.garnets,
        passes=ended.passes,
        escaped=ended.escaped,
        reason=reason,
    )


def _close_round(state: State, at: int) -> list[Event]:
    resolved = resolve(state, at)
    events: list[Event] = [resolved]
    after = evolve(state, resolved)
    why = _play_over(after)
    if why is None:
        events.append(_round_started(after, after.round + 1, at))
        return events
    winners, losers = standings(after)
    vote = len(losers) > 1 and bool(winners)
    ended = PlayEnded(
        round=after.round,
        at=at,
        reason=why,
        winners=winners,
        losers=losers,
        escaped=tuple(p.escaped for p in after.players),
        garnets=tuple(p.garnets for p in after.players),
        passes=tuple(p.passes for p in after.players),
        vote_deadline=at + vote_ms(state.options) if vote else None,
    )
    events.append(ended)
    if not vote:
        events.append(_game_over(evolve(after, ended)))
    return events


# --- commands --------------------------------------------------------------------------


def _terms(state: State) -> Terms:
    return TERMS[state.variant]


def _check_submit(state: State, seat: int, cmd: Submit) -> Pending | Rejection:
    terms = _terms(state)
    if state.phase != "play":
        return Rejection("not_in_play", "no round is in play")
    if cmd.round != state.round:
        return Rejection("wrong_round", f"that was for round {cmd.round}; round {state.round} is in play")
    p = state.players[seat]
    if p.depth >= state.levels:
        return Rejection("escaped", "you have escaped: there is nothing left to fight for")
    if not p.hand:
        return Rejection("no_cards", f"you have no {terms.card_plural} left and can no longer submit")
    here = terms.place(p.depth, state.levels)
    if not state.open_gates(p.depth):
        return Rejection(
            "no_open_gate",
            f"no {terms.gate} of {here} is open this round: your lowest {terms.card} is used "
            "automatically",
        )
    if not 1 <= len(cmd.gates) <= 2:
        return Rejection("gate_count", f"name one {terms.gate} or two adjacent {terms.gate_plural}")
    gates: list[Gate] = []
    for text in cmd.gates:
        gate = state.layout.find(text) if isinstance(text, str) else None
        if gate is None:
            return Rejection("unknown_gate", f"there is no {terms.gate} {text!r}")
        if gate.depth != p.depth:
            return Rejection(
                "not_your_level",
                f"{terms.gate} {gate.name} is in {terms.place(gate.depth, state.levels)}; "
                f"you are in {here}",
            )
        if state.gate_state(gate).sealed:
            return Rejection(
                "gate_closed",
                f"{terms.gate} {gate.name} is sealed for good: a Pass {terms.gate} stays closed "
                "once someone has gone through it",
            )
        if state.is_closed(gate):
            return Rejection("gate_closed", f"{terms.gate} {gate.name} is closed this round")
        gates.append(gate)
    if len(gates) == 2:
        if gates[0].name == gates[1].name:
            return Rejection("same_gate", f"{terms.gate} {gates[0].name} is named twice")
        if not state.layout.adjacent(gates[0], gates[1]):
            return Rejection(
                "not_adjacent",
                f"{terms.gate_plural} {gates[0].name} and {gates[1].name} are not adjacent",
            )
        gates.sort(key=lambda g: g.index)
    if not cmd.cards:
        return Rejection(
            "no_cards_named",
            f"use at least one {terms.card} (a player who does not submit uses its lowest "
            f"{terms.card} at the rightmost {terms.gate})",
        )
    for value in cmd.cards:
        if isinstance(value, bool) or value not in CARD_VALUES:
            return Rejection("bad_card", f"{terms.card_plural} have values 1, 2 and 3, not {value!r}")
    if remove_cards(p.hand, cmd.cards) is None:
        held = ", ".join(map(str, p.hand))
        return Rejection(
            "not_held", f"you do not hold {', '.join(map(str, sorted(cmd.cards)))} (you hold {held})"
        )
    return Pending(gates=tuple(g.name for g in gates), cards=tuple(sorted(cmd.cards)))


def _chat(state: State, seat: int, cmd: Chat, now: int) -> Decision:
    opts = state.options
    text = cmd.text.strip()
    if not text:
        return Rejection("chat_empty", "an empty message")
    if len(text) > opts.chat_max_chars:
        return Rejection(
            "chat_too_long", f"a message is at most {opts.chat_max_chars} characters; this one has {len(text)}"
        )
    if not text.replace("\n", " ").isprintable():
        return Rejection("chat_bad_text", "a message may not hold control characters (line breaks are fine)")
    p = state.players[seat]
    if p.chats >= opts.chat_per_round:
        period = "during the vote" if state.phase == "vote" else "a round"
        return Rejection(
            "chat_limit", f"at most {opts.chat_per_round} messages {period}; wait for the next round"
        )
    if state.phase == "play":
        depth: int | None = p.depth
        to = state.members(p.depth)
    elif state.phase == "vote":
        depth, to = None, tuple(range(len(state.players)))
    else:
        return Rejection("not_in_play", "the match is not in play")
    return Accepted(events=(ChatSent(seat=seat, round=state.round, depth=depth, to=to, text=text, at=now),))


def _vote(state: State, seat: int, cmd: Vote, now: int) -> Decision:
    ended = state.ended
    if state.phase != "vote" or ended is None:
        return Rejection("not_voting", "there is no vote now (it follows the end of play when there are several losers)")
    if seat not in ended.winners:
        return Rejection("not_a_winner", "only the winners vote for the Elimination Candidate")
    if cmd.candidate not in ended.losers:
        return Rejection(
            "not_a_loser", f"seat {cmd.candidate} is not a loser (losers: {_seat_list(ended.losers)})"
        )
    cast = VoteCast(seat=seat, candidate=cmd.candidate, at=now)
    events: list[Event] = [cast]
    after = evolve(state, cast)
    if all(after.players[w].vote is not None for w in ended.winners):
        events.append(_game_over(after))
    return Accepted(events=tuple(events))


def decide(state: State, seat: int, command: Any, now: int) -> Decision:
    if isinstance(command, Submit):
        checked = _check_submit(state, seat, command)
        if isinstance(checked, Rejection):
            return checked
        submitted = Submitted(seat=seat, round=state.round, gates=checked.gates, cards=checked.cards)
        return ROUND.accept(state, submitted, now)
    if isinstance(command, Chat):
        return _chat(state, seat, command, now)
    if isinstance(command, Vote):
        return _vote(state, seat, command, now)
    return Rejection("bad_command", "unknown command")


# --- time ------------------------------------------------------------------------------


def deadline(state: State) -> int | None:
    if state.phase in ("play", "vote"):
        return state.deadline
    return None


def expire(state: State, at: int) -> tuple[Event, ...]:
    if state.phase == "vote":
        return (_game_over(state),)
    return tuple(_close_round(state, at))


# --- folding ---------------------------------------------------------------------------


def evolve(state: State, event: Any) -> State:
    rep = msgspec.structs.replace
    if isinstance(event, RoundStarted):
        return rep(
            state,
            phase="play",
            round=event.round,
            deadline=event.deadline,
            chat=(),
            players=tuple(rep(p, pending=None, chats=0) for p in state.players),
        )
    if isinstance(event, Submitted):
        return rep(
            state,
            players=update_at(state.players, event.seat, pending=Pending(event.gates, event.cards)),
        )
    if isinstance(event, ChatSent):
        p = state.players[event.seat]
        return rep(
            state,
            chat=(*state.chat, event),
            players=update_at(state.players, event.seat, chats=p.chats + 1),
        )
    if isinstance(event, RoundResolved):
        players = list(state.players)
        gates = list(state.gates)
        for play in event.plays:
            p = players[play.seat]
            hand = remove_cards(p.hand, play.cards)
            if hand is None:
                raise ValueError(f"seat {play.seat} does not hold {play.cards}")
            depth, garnets, passes, escaped = p.depth, p.garnets, p.passes, p.escaped
            if play.entered is not None:
                gate = state.layout.find(play.entered)
                assert gate is not None
                i = _gate_index(state.layout, gate)
                g = gates[i]
                if gate.kind == "pass":
                    passes += 1
                    g = rep(g, sealed=True)
                elif gate.kind == "garnet":
                    garnets += 1
                    g = rep(g, closed_in=event.round + 1)
                gates[i] = rep(g, entries=(*g.entries, play.seat))
                depth += 1
                if depth >= state.levels:
                    escaped = event.round
            players[play.seat] = rep(
                p, depth=depth, hand=hand, garnets=garnets, passes=passes, escaped=escaped, pending=None
            )
        return rep(
            state,
            players=tuple(players),
            gates=tuple(gates),
            history=(*state.history, event),
            deadline=None,
        )
    if isinstance(event, PlayEnded):
        return rep(
            state,
            phase="vote",
            ended=event,
            deadline=event.vote_deadline,
            chat=(),
            players=tuple(rep(p, pending=None, chats=0) for p in state.players),
        )
    if isinstance(event, VoteCast):
        return rep(state, players=update_at(state.players, event.seat, vote=event.candidate))
    if isinstance(event, GameOver):
        return rep(state, phase="over", finished=event, deadline=None)
    raise TypeError(f"not a {name} event: {event!r}")


# A round: every player who can still fight and has a gate open submits in secret
# (replacing until it closes); it closes when all are in (with early_close) or at its
# deadline, where `resolve` gives a player who missed it the default play.
ROUND: SimultaneousRound[State, Pending] = SimultaneousRound(
    seats=lambda state: len(state.players),
    pending=lambda state, seat: state.players[seat].pending,
    in_play=lambda state, seat: state.awaited(seat),
    early_close=lambda state: state.options.early_close,
    close=lambda state, at: _close_round(state, at),
    evolve=lambda state, event: evolve(state, event),
)


def result(state: State) -> Result | None:
    over = state.finished
    if over is None:
        return None
    return Result(
        winner=over.winners[0] if over.winners else None,
        reason=over.reason,
        rounds=over.rounds,
        scores=over.garnets,
    )


def round_of(state: State) -> int:
    return state.round

