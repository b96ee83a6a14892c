"""What each viewer may see of a Five-Card Trick.

Hidden until the round resolves: a player's submission (its actions, Block target and
items). The opponent and spectators learn only that a seat has submitted. After the
round, everything is public except the target of a Block that did not resolve (canceled,
blocked or disregarded): only its owner, and full viewers, see what it named.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import combinations_with_replacement
from typing import Any

import msgspec

from domain.engine import MatchState, Outcome
from domain.games import five_card_trick as fct
from domain.games.five_card_trick import (
    ACTIONS,
    ITEM_TITLES,
    SUBMISSION_ITEMS,
    TERMS,
    Extended,
    GameOver,
    Play,
    PriorityClaimed,
    RoundReplayed,
    RoundResolved,
    RoundStarted,
    SeatOutcome,
    SeatState,
    State,
    Submission,
    Submitted,
    Terms,
)
from domain.rng import Rng
from projections.common import json_template, who
from projections.contract import Logged, Rehearsal, Twins, Viewer, Withheld


def _sees_hidden(viewer: Viewer, seat: int) -> bool:
    return viewer.full or viewer.seat == seat


# A variant's card names and reason texts, as Terms.of and fct.reason_text give them,
# looked up rather than derived again for every play and light of every view
# (reason_text builds its table of nine texts at each call).
_NAMES: Mapping[str, Mapping[str, str]] = {
    variant: {a: terms.of(a) for a in ACTIONS} for variant, terms in TERMS.items()
}


@functools.lru_cache(maxsize=256)
def _reason_text(reason: str, variant: str) -> str:
    return fct.reason_text(reason, TERMS[variant])


def _terms_view(terms: Terms) -> dict[str, Any]:
    return {
        "actions": {a: terms.of(a) for a in ACTIONS},
        "action": terms.action,
        "action_plural": terms.action_plural,
        "chip": terms.chip,
        "chip_plural": terms.chip_plural,
        "light": terms.light,
        "light_plural": terms.light_plural,
        "pot": terms.pot,
        "items": dict(ITEM_TITLES),
    }


# A seat's part of a view and a resolved round as Structs rather than dicts: built by one
# call with their fields in order and encoded without a key looked up (a seat's part, 1.9
# us as a dict built and encoded; 0.9 as a Struct). The view's JSON is their encoding;
# `view` and `event` give their dicts (`_as_dict`).


class _Disregarded(msgspec.Struct):
    action: str
    reason: str
    reason_text: str


class _SubmissionPart(msgspec.Struct):
    """A submission as its owner sees it before the round resolves."""

    actions: tuple[str, ...]
    block: str | None
    items: tuple[str, ...]
    disregarded: list[_Disregarded]
    warnings: tuple[str, ...]


class _History(msgspec.Struct):
    """A seat's effective cards of its last two rounds (None: no such round yet)."""

    r2: tuple[str, ...] | None = msgspec.field(name="r-2")
    r1: tuple[str, ...] | None = msgspec.field(name="r-1")


class _SeatPart(msgspec.Struct):
    """Seat `seat` of a view (`_seat_part`)."""

    seat: int
    name: str | None
    dmo: bool
    chips: int
    lights: tuple[str, ...]
    lights_shown: tuple[str, ...]
    blocked: tuple[str, ...]
    history: _History
    limit_reset_last: bool
    submitted: bool
    pending: _SubmissionPart | None
    items: tuple[str, ...]
    used_items: tuple[str, ...]
    claim_priority_available: bool


def _submission_view(seat: SeatState, sub: Submission, variant: str) -> _SubmissionPart:
    return _SubmissionPart(
        sub.actions,
        sub.block,
        sub.items,
        [
            _Disregarded(action, reason, _reason_text(reason, variant))
            for action, reason in fct.disregards(seat, sub, variant)
        ],
        tuple(fct.warnings_for(seat, sub, variant)),
    )


def _block_shown(out: SeatOutcome, seat: int, viewer: Viewer) -> str | None:
    if out.block is None:
        return None
    if _sees_hidden(viewer, seat):
        return out.block
    return out.block if _block_resolved_in(out) else None


def _blocks_shown(event: RoundResolved, viewer: Viewer) -> tuple[str | None, ...]:
    """The Block target of each seat of a resolved round, as `viewer` may see it."""
    return tuple([_block_shown(out, s, viewer) for s, out in enumerate(event.seats)])


def _resolved_view(event: RoundResolved, variant: str, viewer: Viewer) -> dict[str, Any]:
    return _as_dict(_resolved_part(event, variant, _blocks_shown(event, viewer)))


def _as_dict(part: msgspec.Struct) -> dict[str, Any]:
    """A part of a view or an event as the dicts and lists of its JSON, the caller's own
    (made afresh, not from the JSON kept for frames: the tests hold one against the
    other)."""
    value: dict[str, Any] = _decode(_encode(part))
    return value


def _play_view(p: Play, variant: str) -> dict[str, Any]:
    """One play of a resolved round."""
    return {
        "action": p.action,
        "name": _NAMES[variant][p.action],
        "copies": p.copies,
        "status": p.status,
        "reason": p.reason,
        "reason_text": _reason_text(p.reason, variant) if p.reason else None,
    }


# The same few plays again and again (five actions, one or two copies, a few statuses and
# reasons, a few variants): each encoded once, kept by value (its dict built and encoded
# for every play of every round was about two fifths of a resolved round's JSON).
@functools.lru_cache(maxsize=1024)
def _play_json(p: Play, variant: str) -> msgspec.Raw:
    return msgspec.Raw(_encode(_play_view(p, variant)))


class _ResolvedSeat(msgspec.Struct):
    """A seat's part of a resolved round (`_resolved_part`)."""

    seat: int
    submitted: bool
    plays: list[Any]
    block: str | None
    items: tuple[str, ...]
    effective: tuple[str, ...]
    scored: int
    took: int
    bonus: int
    gained: int
    lights: tuple[str, ...]
    chips: int
    blocked_next: tuple[str, ...]
    claim_priority: bool


class _ResolvedPart(msgspec.Struct):
    """A resolved round as an event, and as a view's last round (`_resolved_part`)."""

    type: str
    round: int
    at: int
    pot_before: int
    grown: int
    pot_after: int
    taken_by: int | None
    seats: list[_ResolvedSeat]


def _resolved_part(
    event: RoundResolved, variant: str, blocks: tuple[str | None, ...],
    play: Callable[[Play, str], Any] = _play_view,
) -> _ResolvedPart:
    """A resolved round, with each seat's Block target as shown (`blocks`) and each play
    as `play` gives it (a dict; `_play_json`: its kept JSON)."""
    return _ResolvedPart(
        "round_resolved",
        event.round,
        event.at,
        event.pot_before,
        event.grown,
        event.pot_after,
        event.taken_by,
        [
            _ResolvedSeat(
                s,
                out.submitted,
                [play(p, variant) for p in out.plays],
                blocks[s],
                out.items,
                out.effective,
                out.scored,
                out.took,
                out.bonus,
                out.gained,
                out.lights,
                out.chips,
                out.blocked_next,
                out.priority,
            )
            for s, out in enumerate(event.seats)
        ],
    )


def _game_over_view(event: GameOver) -> dict[str, Any]:
    return {
        "type": "game_over",
        "winner": event.winner,
        "reason": event.reason,
        "rounds": event.rounds,
        "chips": list(event.chips),
        "items_left": list(event.items_left),
    }


def event(ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
    """One game event as `viewer` may see it."""
    # (The most frequent first: an isinstance() that fails against a msgspec Struct asks
    # its metaclass for __instancecheck__, 0.1 us.)
    if isinstance(event, Submitted):
        if viewer.full or viewer.seat == event.seat:  # (_sees_hidden, without its call)
            return {
                "type": "submitted",
                "seat": event.seat,
                "round": event.round,
                "actions": list(event.actions),
                "block": event.block,
                "items": list(event.items),
            }
        return {"type": "submitted", "seat": event.seat, "round": event.round}
    if isinstance(event, RoundStarted):
        return {"type": "round_started", "round": event.round, "deadline": event.deadline}
    if isinstance(event, RoundResolved):
        return _resolved_view(event, ms.variant, viewer)
    if isinstance(event, RoundReplayed):
        return {
            "type": "round_replayed",
            "round": event.round,
            "deadline": event.deadline,
            "replays": event.replays,
        }
    if isinstance(event, PriorityClaimed):
        return {
            "type": "priority_claimed",
            "seat": event.seat,
            "round": event.round,
            "took": event.took,
            "chips": event.chips,
            "pot_after": event.pot_after,
            "deadline": event.deadline,
        }
    if isinstance(event, Extended):
        return {"type": "extended", "after_round": event.after_round, "until": event.until}
    if isinstance(event, GameOver):
        return _game_over_view(event)
    return None


_event = event  # (event_json's parameter `event` hides the function)


def _seat_view(ms: MatchState, gs: State, s: int, viewer: Viewer) -> dict[str, Any]:
    seat = gs.seats[s]
    shows_pending = seat.pending is not None and _sees_hidden(viewer, s)
    return _as_dict(_seat_part(seat, s, ms.names[s], gs.options.dmo == s, gs.variant, shows_pending))


@functools.lru_cache(maxsize=1024)
def _lights_shown(variant: str, lights: tuple[str, ...]) -> tuple[str, ...]:
    """A seat's lights by their names in `variant` (a few tuples of five names, again and
    again: kept)."""
    names = _NAMES[variant]
    return tuple([names[a] for a in lights])


def _seat_part(
    seat: SeatState, s: int, name: str | None, dmo: bool, variant: str, shows_pending: bool
) -> _SeatPart:
    """Seat `s` of a view (`shows_pending`: with its submission so far)."""
    history = seat.history  # (up to two rounds, oldest first)
    pending = None
    if shows_pending and seat.pending is not None:
        pending = _submission_view(seat, seat.pending, variant)
    return _SeatPart(
        s,
        name,
        dmo,
        seat.chips,
        seat.lights,
        _lights_shown(variant, seat.lights),
        seat.blocked,
        _History(history[-2] if len(history) > 1 else None, history[-1] if history else None),
        seat.reset_last,
        seat.pending is not None,
        pending,
        seat.items,
        seat.used,
        seat.priority and "claim_priority" in seat.items,
    )


def _view(ms: MatchState, terms: Any, seats: list[Any], last_round: Any) -> dict[str, Any]:
    """The game's state with its terms, its seats and its last round as given (as a
    viewer sees them: their dicts, or their JSON)."""
    gs: State = ms.game_state
    return _view_of(
        gs.options, terms, gs.round, gs.deadline, gs.end_round, gs.pot, gs.replays, seats,
        last_round, _game_over_view(gs.finished) if gs.finished is not None else None,
    )


def _view_of(
    opts: fct.Options, terms: Any, round_: Any, deadline: Any, end_round: Any, pot: Any,
    replays: Any, seats: list[Any], last_round: Any, over: Any,
) -> dict[str, Any]:
    """`_view`, from the state's fields (`_before` gives some as placeholders)."""
    return {
        "variant": opts.variant,
        "terms": terms,
        "round": round_,
        "deadline": deadline,
        "round_ms": fct.round_ms(opts),
        "end_round": end_round,
        "rounds": opts.rounds,
        "extension": opts.extension,
        "max_rounds": opts.max_rounds,
        "dmo": opts.dmo,
        "pot": pot,
        "replays": replays,
        "seats": seats,
        "last_round": last_round,
        "over": over,
    }


def view(ms: MatchState, viewer: Viewer) -> dict[str, Any]:
    """The game's state as `viewer` may see it."""
    gs: State = ms.game_state
    last = _resolved_view(gs.last, gs.variant, viewer) if gs.last is not None else None
    seats = [_seat_view(ms, gs, s, viewer) for s in range(len(gs.seats))]
    return _view(ms, _terms_view(TERMS[gs.variant]), seats, last)


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


# A variant's terms, the same in every view of its matches: encoded once per variant.
@functools.lru_cache(maxsize=16)
def _terms_json(variant: str) -> msgspec.Raw:
    return msgspec.Raw(_encode(_terms_view(TERMS[variant])))


# A seat's part of a view changes when the seat's state does (its submission, the
# round's end): in the other updates of a round it is the same, and for every viewer
# who sees the same of it (its owner before it submits, the opponent and spectators
# after). Encoded once for all of these; keyed by values (frozen Structs, hashable and
# immutable): the same result, whatever match they come from.
@functools.lru_cache(maxsize=4096)
def _seat_part_json(
    seat: SeatState, s: int, name: str | None, dmo: bool, variant: str, shows_pending: bool
) -> msgspec.Raw:
    return msgspec.Raw(_encode(_seat_part(seat, s, name, dmo, variant, shows_pending)))


def _resolved_json(
    event: RoundResolved, variant: str, blocks: tuple[str | None, ...]
) -> msgspec.Raw:
    return msgspec.Raw(_encode(_resolved_part(event, variant, blocks, _play_json)))


# A resolved round's part of an update is the same for every viewer who may see the same
# Block targets (all of them, unless a Block did not resolve), in the update of the entry
# that resolved it (its events) and in every update of the next round (its views' last
# round): encoded once per round and Block targets shown, it is spliced into the frames'
# JSON as it is (its dict built and encoded again for every viewer and entry was about a
# third of a view's cost). Found by the event's identity, the same object in all these
# updates: id(event) -> [event, variant, the seats whose Block target only their owner
# and full viewers see, the Block targets every other viewer sees, the JSON it gets, and
# the JSON of each viewer who sees more (its seat, or -1: a full viewer); each made when
# first asked for]. A record holds its event, so that no other object has its id while
# it is kept; at most _KEPT (a server's matches in play at once), the oldest dropped
# first. (Kept by the event's value before, with an lru_cache: the value hashed and the
# Block targets a viewer sees worked out at every lookup, four an entry with views in
# the updates; docs/performance.md, item 41.)
_KEPT = 2048
_resolved_kept: OrderedDict[int, list[Any]] = OrderedDict()


def _resolved_for(event: RoundResolved, variant: str, viewer: Viewer) -> msgspec.Raw:
    """`_resolved_json(event, variant, _blocks_shown(event, viewer))`."""
    kept = _resolved_kept.get(id(event))  # (its record holds it: no other has its id)
    if kept is None or kept[1] != variant:
        kept = _keep_resolved(event, variant)
    hidden = kept[2]
    if hidden and (viewer.full or viewer.seat in hidden):
        # A viewer who sees a Block target the others do not: its own JSON, kept too.
        sees = -1 if viewer.full or viewer.seat is None else viewer.seat
        own: dict[int, msgspec.Raw] = kept[5]
        raw = own.get(sees)
        if raw is None:
            raw = own[sees] = _resolved_json(event, variant, _blocks_shown(event, viewer))
        return raw
    public: msgspec.Raw | None = kept[4]
    if public is None:
        public = kept[4] = _resolved_json(event, variant, kept[3])
    return public


def _keep_resolved(event: RoundResolved, variant: str) -> list[Any]:
    """A new record of `_resolved_kept` (see there)."""
    # (_blocks_shown for a spectator, and who sees more, in one loop)
    shown: list[str | None] = []
    hidden: list[int] = []
    for s, out in enumerate(event.seats):
        block = out.block
        if block is not None and not _block_resolved_in(out):
            hidden.append(s)
            block = None
        shown.append(block)
    kept = [event, variant, tuple(hidden), tuple(shown), None, {}]
    if len(_resolved_kept) >= _KEPT:
        _resolved_kept.popitem(last=False)
    _resolved_kept[id(event)] = kept
    return kept


def event_json(ms: MatchState, event: Any, viewer: Viewer) -> msgspec.Raw | dict[str, Any] | None:
    """`event(ms, event, viewer)`, or its JSON where that is kept (a resolved round: the
    same kept JSON as the next round's views' last round: projections.common.ViewEncoder.events)."""
    if type(event) is RoundResolved:  # (the exact type: see _event)
        return _resolved_for(event, ms.variant, viewer)
    return _event(ms, event, viewer)


class _Shared:
    """What every viewer's view of one game state shares: its JSON before the seats and
    after the last round (`_view`'s fields in its order: those before "seats", the seats,
    "last_round", "over"). The views of one state are asked for in a row, for all its
    viewers (projections.common.ViewEncoder): kept for the last state asked for."""

    __slots__ = ("after", "before", "state")

    def __init__(self) -> None:
        self.state: State | None = None
        self.before = self.after = b""


_shared = _Shared()

# The state's fields of a view before the seats, in `_view_of`'s order: placeholders in
# `_before`'s template, each filled by %-formatting (an int's digits, as msgspec writes it;
# the deadline, which may be null, as JSON).
_PLACES = (("round", b"%d"), ("deadline", b"%b"), ("end_round", b"%d"), ("pot", b"%d"), ("replays", b"%d"))


@functools.lru_cache(maxsize=4096)
def _before(opts: fct.Options) -> bytes:
    """A view's JSON before the seats in a match of `opts`, with the state's fields to be
    filled (`_share`): what comes from the options and the terms encoded once a match."""
    marks = [f"\x00{name}" for name, _ in _PLACES]  # (no text of the terms holds a NUL)
    round_, deadline, end_round, pot, replays = marks
    view = _view_of(opts, _terms_json(opts.variant), round_, deadline, end_round, pot, replays, [], None, None)
    del view["seats"], view["last_round"], view["over"]
    places = [(mark, code) for mark, (_, code) in zip(marks, _PLACES, strict=True)]
    return json_template(_encode(view)[:-1], places) + b',"seats":['


def _share(ms: MatchState, gs: State) -> _Shared:
    shared = _shared
    shared.before = _before(gs.options) % (
        gs.round, _encode(gs.deadline), gs.end_round, gs.pot, gs.replays
    )
    shared.after = b',"over":null}' if gs.finished is None else (
        b',"over":' + _encode(_game_over_view(gs.finished)) + b"}"
    )
    shared.state = gs
    return shared


def view_json(ms: MatchState, viewer: Viewer) -> bytes:
    """The JSON of `view(ms, viewer)` (projections.common.ViewEncoder)."""
    gs: State = ms.game_state
    shared = _shared if _shared.state is gs else _share(ms, gs)
    opts = gs.options  # (its variant read here: the state's `variant` is a call)
    variant = opts.variant
    last = b"null" if gs.last is None else _resolved_for(gs.last, variant, viewer)
    # Each seat's part, kept (_seat_part_json), the two of them asked for here rather
    # than by a function called for each (with a list of them to join): 0.8 us a view.
    first, second = gs.seats
    names, dmo = ms.names, opts.dmo
    return b"".join((
        shared.before,
        _seat_part_json(
            first, 0, names[0], dmo == 0, variant,
            first.pending is not None and _sees_hidden(viewer, 0),
        ),
        b",",
        _seat_part_json(
            second, 1, names[1], dmo == 1, variant,
            second.pending is not None and _sees_hidden(viewer, 1),
        ),
        b'],"last_round":', last, shared.after,
    ))


# --- replay text -----------------------------------------------------------------------


def _cards(terms: Terms, actions: tuple[str, ...]) -> str:
    if not actions:
        return f"no {terms.action}"
    return ", ".join(terms.of(a) for a in actions)


def _play_text(terms: Terms, action: str, copies: int, status: str, reason: str | None,
               block: str | None) -> str:
    text = terms.of(action) + (f" x{copies}" if copies > 1 else "")
    if action == "block" and block is not None:
        text += f" ({terms.of(block)})"
    if status == "resolved":
        return f"{text} [resolved]"
    if status == "blocked":
        return f"{text} [blocked]"
    return f"{text} [{status}: {fct.reason_text(reason or '', terms)}]"


def describe(ms: MatchState, event: Any) -> list[str]:
    """Lines for a human reading the match (everything shown)."""
    variant = ms.variant
    terms = TERMS[variant]
    if isinstance(event, RoundStarted):
        return [f"Round {event.round} begins; submissions close at {event.deadline} ms."]
    if isinstance(event, Submitted):
        text = f"Round {event.round}: {who(ms, event.seat)} submits {_cards(terms, event.actions)}"
        if event.block is not None:
            text += f", {terms.of('block')} target {terms.of(event.block)}"
        if event.items:
            text += ", using " + ", ".join(ITEM_TITLES[i] for i in event.items)
        return [text + "."]
    if isinstance(event, RoundResolved):
        lines = []
        for s, out in enumerate(event.seats):
            if not out.submitted:
                played = f"missed the round (no {terms.action})"
            elif not out.plays:
                played = f"no {terms.action}"
            else:
                played = ", ".join(
                    _play_text(terms, p.action, p.copies, p.status, p.reason, out.block)
                    for p in out.plays
                )
            if out.items:
                played += " using " + ", ".join(ITEM_TITLES[i] for i in out.items)
            gains = []
            if out.scored:
                gains.append(f"+{out.scored} {terms.of('score')}")
            if out.took:
                gains.append(f"+{out.took} from the {terms.pot}")
            if out.bonus:
                gains.append(f"+{out.bonus} for all five {terms.light_plural}")
            gain_text = f" ({', '.join(gains)})" if gains else ""
            lit = ", ".join(terms.of(a) for a in out.lights) or "none"
            line = (
                f"Round {event.round}: {who(ms, s)} {played}; now {terms.chips(out.chips)}"
                f"{gain_text}; {terms.light_plural} on: {lit}"
            )
            if out.blocked_next:
                line += f"; {_cards(terms, out.blocked_next)} blocked for it next round"
            if out.priority:
                line += "; may use Claim Priority next round"
            lines.append(line + ".")
        pot = f"Round {event.round}: {terms.pot} {event.pot_before}"
        if event.grown:
            pot += f" + {event.grown}"
        if event.taken_by is not None:
            pot += f", taken by {who(ms, event.taken_by)}, refilled to {event.pot_after}"
        else:
            pot += f" -> {event.pot_after}"
        lines.append(pot + ".")
        return lines
    if isinstance(event, RoundReplayed):
        return [
            f"Round {event.round}: both players missed; the round is replayed "
            f"(replay {event.replays}), closing at {event.deadline} ms."
        ]
    if isinstance(event, PriorityClaimed):
        return [
            f"Round {event.round}: {who(ms, event.seat)} uses Claim Priority and takes "
            f"{terms.chips(event.took)} from the {terms.pot} (now {terms.chips(event.chips)}); "
            f"the round's clock restarts, closing at {event.deadline} ms."
        ]
    if isinstance(event, Extended):
        return [
            f"Tied after round {event.after_round}: the match is extended to round {event.until}."
        ]
    if isinstance(event, GameOver):
        chips = " to ".join(str(c) for c in event.chips)
        return [
            f"Game over after {event.rounds} rounds: {who(ms, event.winner)} wins "
            f"({event.reason}); {terms.chip_plural} {chips}."
        ]
    return []


# --- what stays sealed after the match -------------------------------------------------


def _block_resolved_in(out: SeatOutcome) -> bool:
    return any(p.action == "block" and p.status == "resolved" for p in out.plays)


class FiveCardTrickSeals:
    """What a Five-Card Trick keeps secret for good (RULINGS.md, "After a match"): what a
    Block that did not resolve named (the dm12 "Clarification": "If your Block is
    cancelled for whatever reason, your opponent will not know what you attempted to
    Block"), and a submission replaced before the round closed (it was never played).

    In the log: a replaced submission's whole command and its outcome (the `submitted`
    event, the warnings); the `block` field of the submission that counted when its Block
    did not resolve, that submission's outcome and the outcome that resolved the round.
    The projection already shows these to their owner alone, during the match and after."""

    fields: tuple[str, ...] = (
        "the target of a Block that did not resolve (canceled, blocked or disregarded)",
        "a submission replaced before its round closed (it was never played)",
    )

    def withheld(self, log: Sequence[Logged]) -> dict[int, Withheld]:
        out: dict[int, Withheld] = {}

        def add(seq: int, *, body: bool = False, fields: tuple[str, ...] = (), outcome: bool = False) -> None:
            was = out.get(seq, Withheld())
            out[seq] = Withheld(
                body=was.body or body,
                fields=tuple(dict.fromkeys((*was.fields, *fields))),
                out=was.out or outcome,
            )

        pending: dict[int, int] = {}  # seat -> the entry of its submission that counts so far
        for item in log:
            for event in item.outcome.events:
                if isinstance(event, Submitted):
                    replaced = pending.get(event.seat)
                    if replaced is not None:
                        add(replaced, body=True, outcome=True)
                    pending[event.seat] = item.entry.seq
                elif isinstance(event, RoundResolved):
                    for seat, result in enumerate(event.seats):
                        if result.block is not None and not _block_resolved_in(result):
                            counted = pending.get(seat)  # (a Block named in a submission)
                            if counted is not None:
                                add(counted, fields=("block",), outcome=True)
                            add(item.entry.seq, outcome=True)
                    pending.clear()
                elif isinstance(event, RoundReplayed | GameOver):
                    pending.clear()
        return out

    def alternatives(
        self, before: MatchState, seat: int | None, body: Mapping[str, Any] | None,
        fields: tuple[str, ...],
    ) -> Iterable[Any]:
        if body is not None:
            return [{**body, "block": action} for action in ACTIONS] if fields == ("block",) else []
        gs: State = before.game_state
        if seat is None or not 0 <= seat < len(gs.seats):
            return []
        return _every_submission(gs, seat)

    def forget(self, game_state: Any) -> Any:
        gs: State = game_state
        if gs.last is None:
            return gs
        seats = tuple(
            out if out.block is None or _block_resolved_in(out) else msgspec.structs.replace(out, block=None)
            for out in gs.last.seats
        )
        return msgspec.structs.replace(gs, last=msgspec.structs.replace(gs.last, seats=seats))


def _every_submission(gs: State, seat: int) -> list[dict[str, Any]]:
    """Every submission `seat` could make now (as the rules normalise them: canonical
    names and order), each once."""
    holder = gs.seats[seat]
    final = gs.variant == "final"
    usable = [i for i in SUBMISSION_ITEMS if final and i in holder.items and i not in holder.used]
    bodies: list[dict[str, Any]] = []
    for chosen in range(1 << len(usable)):
        items = [i for n, i in enumerate(usable) if chosen >> n & 1]
        limit = 3 if "overload" in items else 2
        most = 2 if final else 1
        for size in range(limit + 1):
            for cards in combinations_with_replacement(ACTIONS, size):
                if any(cards.count(a) > most for a in cards):
                    continue
                for block in [None, *ACTIONS] if "block" in cards else [None]:
                    bodies.append(
                        {"type": "submit", "round": gs.round, "actions": list(cards),
                         "block": block, "items": items}
                    )
    return bodies


sealed = FiveCardTrickSeals()


# --- twin worlds (the leak property) ---------------------------------------------------

_TWIN_T0 = 1_732_233_600_000


def _twin_submission(gs: State, seat: int, rng: Rng) -> dict[str, Any]:
    """A valid submission for `seat` now: one to three actions (a repeat and items in
    `final`), a Block target when Block is played (now and then none)."""
    holder = gs.seats[seat]
    items: list[str] = []
    final = gs.variant == "final"
    if final and "overload" in holder.items and rng.below(3) == 0:
        items.append("overload")
    if final and "limit_reset" in holder.items and rng.below(4) == 0:
        items.append("limit_reset")
    count = 3 if "overload" in items else 1 + rng.below(2)
    actions: list[str] = []
    while len(actions) < count:
        action = rng.choice(ACTIONS)
        if actions.count(action) < (2 if final else 1):
            actions.append(action)
    body: dict[str, Any] = {"type": "submit", "round": gs.round, "actions": actions, "items": items}
    if "block" in actions and rng.below(8) != 0:
        body["block"] = rng.choice(ACTIONS)
    return body


def _twin_key(body: dict[str, Any]) -> tuple[Any, ...]:
    """A submission as the rules read it (order of actions and items aside)."""
    return (sorted(body["actions"]), body.get("block"), sorted(body["items"]))


def _block_resolved(outcomes: list[Outcome], seat: int) -> bool:
    """Whether `seat`'s Block resolved in a round closed by one of `outcomes`."""
    return any(
        p.action == "block" and p.status == "resolved"
        for outcome in outcomes
        for e in outcome.events
        if isinstance(e, RoundResolved)
        for p in e.seats[seat].plays
    )


def _closes(outcomes: list[Outcome]) -> bool:
    """Whether one of `outcomes` closed the round in play (or ended the game)."""
    return any(
        isinstance(e, RoundResolved | RoundReplayed | GameOver) for o in outcomes for e in o.events
    )


Planned = tuple[int, dict[str, Any], dict[str, Any]]
"""A command of a twin round: the seat, its body in the first world and in the second."""


def twins(variant: str, rng: Rng) -> Twins:
    """Two Five-Card Trick matches that differ only in what one seat (the hidden seat)
    submitted and then replaced before the deadline, and in what its Blocks that did not
    resolve (canceled, blocked or disregarded) named; everything else is the same in
    both. Only the hidden seat may tell them apart (and full viewers).

    Rounds close at their deadline (`early_close` false) or, now and then, as soon as
    both are in (the hidden seat then replaces its submission before the other submits).
    Seats miss rounds, send stale or invalid commands, use items (`final`, Claim Priority
    among them) and, in `gauntlet`, both miss a round now and then."""
    hidden = rng.below(2)
    other = 1 - hidden
    early_close = rng.below(4) == 0
    rounds = 2 + rng.below(4)
    options: dict[str, Any] = {
        "clock_scale": 0.01,
        "early_close": early_close,
        "rounds": rounds,
        "extension": 1,
        "max_rounds": rounds + rng.below(3),
        "dmo": rng.below(2),
    }
    if variant == "gauntlet":
        options["max_replays"] = 1 + rng.below(2)
    seed = bytes(rng.below(256) for _ in range(32))
    a = Rehearsal(fct, variant, options, seed, _TWIN_T0)
    b = Rehearsal(fct, variant, options, seed, _TWIN_T0)
    while not a.ms.ended:
        gs: State = a.gs
        first = gs.round == 1 and gs.replays == 0
        both_miss = variant == "gauntlet" and not first and rng.below(5) == 0
        # The hidden seat: submissions it replaces (different in the two worlds), then
        # the one that counts (a Block in it may name a different target).
        hidden_plan: list[Planned] = []
        if not both_miss and (first or rng.below(5) != 0):
            for _ in range(1 if first else rng.below(3)):
                sub_a = _twin_submission(gs, hidden, rng)
                sub_b = _twin_submission(gs, hidden, rng)
                while _twin_key(sub_b) == _twin_key(sub_a):
                    sub_b = _twin_submission(gs, hidden, rng)
                hidden_plan.append((hidden, sub_a, sub_b))
            last = _twin_submission(gs, hidden, rng)
            last_b = dict(last)
            if last.get("block") is not None and rng.below(4) != 0:  # (none named is public)
                last_b["block"] = rng.choice(ACTIONS)
            hidden_plan.append((hidden, last, last_b))
        # The other seat, the same in both worlds (often a Block too, so that the hidden
        # seat's Block collides).
        other_plan: list[Planned] = []
        if not both_miss and rng.below(5) != 0:
            for _ in range(1 + (rng.below(4) == 0)):
                body = _twin_submission(gs, other, rng)
                if any("block" in x["actions"] for _, x, _ in hidden_plan) and rng.below(2):
                    body["actions"] = ["block", *[x for x in body["actions"] if x != "block"][:1]]
                    body["block"] = rng.choice(ACTIONS)
                    body["items"] = []
                other_plan.append((other, body, body))
        plan: list[Planned] = []
        holder = gs.seats[other]
        if holder.priority and "claim_priority" in holder.items and rng.below(2) == 0:
            use = {"type": "use_item", "item": "claim_priority", "round": gs.round}
            plan.append((other, use, use))
        if early_close:
            plan += hidden_plan + other_plan
        else:  # interleaved; each seat's own submissions keep their order
            queues = {hidden: list(hidden_plan), other: list(other_plan)}
            seats = [p[0] for p in hidden_plan + other_plan]
            plan += [queues[s].pop(0) for s in rng.shuffle(seats)]
        if rng.below(6) == 0:
            junk = rng.choice(
                [
                    {"type": "submit", "round": gs.round + 100, "actions": ["score"]},
                    {"type": "submit", "round": gs.round, "actions": ["dance"]},
                    {"type": "use_item", "item": "claim_priority", "round": gs.round},
                ]
            )
            plan.insert(rng.below(len(plan) + 1), (rng.below(2), junk, junk))
        mark_a, mark_b = a.mark(), b.mark()
        # Tried as planned; then with the hidden seat's last submission the same in both
        # worlds (its Block resolved in one of them after all); then all of it the same.
        for attempt in range(3):
            if attempt:
                a.rewind(mark_a)
                b.rewind(mark_b)
                plan = [
                    (s, x, x if attempt == 2 or (hidden_plan and x is hidden_plan[-1][1]) else y)
                    for s, x, y in plan
                ]
            start = a.ts
            agree = True
            for i, (seat, body_a, body_b) in enumerate(plan):
                out_a = a.step("command", seat, body_a, start + 10 * (i + 1))
                out_b = b.step("command", seat, body_b, start + 10 * (i + 1))
                agree = agree and (out_a.rejection is None) == (out_b.rejection is None)
            if not _closes(a.outcomes[mark_a[1]:]):
                late = rng.below(3)
                a.tick(late)
                b.tick(late)
            resolved = _block_resolved(a.outcomes[mark_a[1]:], hidden) or _block_resolved(
                b.outcomes[mark_b[1]:], hidden
            )
            targets_differ = bool(hidden_plan) and any(
                x is hidden_plan[-1][1] and x.get("block") != y.get("block") for _, x, y in plan
            )
            if agree and not (resolved and targets_differ):
                break
        else:
            raise RuntimeError("Five-Card Trick twins: no round both worlds play alike")
    return Twins(variant=variant, worlds=(a.world(), b.world()), tells=(hidden,))
