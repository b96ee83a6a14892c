"""What each viewer may see of Keys to Success / Gatekeeping.

During play a player sees, and nothing more:
- its own cards, garnets, Pass gates, depth and its own submission;
- who is in its level and the state of its level's gates (this round's);
- its level's chat channel for the round (messages sent while it was in the level);
- after each round, for the level it was in: who entered which gate and how many cards
  each member used (never their values: only its own).

Nothing about another level reaches a player, not even that something happened there:
an event of another level (a submission, a chat message) projects to None, so the entry
sends the player no update at all. (Each viewer's updates are numbered in its own stream,
server/streams.py, so no gap counts the entries it did not see: see "Known limits" in
docs/rules/keys-to-success.md.)

Spectators, during play, see only what every player knows: the layout, the round and
its clock (anyone may watch, players included, so a spectator view may hold no more than
the least-informed player's). When play ends all restrictions lift: from the `play_ended`
entry on every viewer sees everything (levels, cards, garnets, every round's plays, and
one chat channel for everyone; play's level channels are not re-sent), except the
winners' votes, which stay with each voter until the Elimination Candidate is decided.
Full viewers (auditors, and everyone once the match has ended) see everything.
"""

from __future__ import annotations

import functools
from collections import Counter
from itertools import pairwise
from typing import Any

import msgspec

from domain.engine import MatchState
from domain.games import keys_to_success as kts
from domain.games.keys_to_success import (
    TERMS,
    ChatSent,
    GameOver,
    Play,
    PlayEnded,
    PlayerState,
    RoundResolved,
    RoundStarted,
    State,
    Submitted,
    Terms,
    VoteCast,
)
from domain.games.keys_to_success.layout import Layout
from domain.rng import Rng
from projections.common import who
from projections.contract import NOTHING_SEALED, Rehearsal, Twins, Viewer


def is_open(gs: State, viewer: Viewer) -> bool:
    """Whether `viewer` sees every level: a full viewer, or anyone once play has ended."""
    return viewer.full or gs.phase in ("vote", "over")


def _terms_view(terms: Terms) -> dict[str, Any]:
    return {
        "level": terms.level,
        "level_plural": terms.level_plural,
        "gate": terms.gate,
        "gate_plural": terms.gate_plural,
        "card": terms.card,
        "card_plural": terms.card_plural,
        "card_names": {str(v): terms.card_name(v) for v in kts.CARD_VALUES},
        "strength": terms.strength,
        "kinds": {k: terms.kind(k) for k in ("open", "pass", "garnet")},
    }


def _layout_view(layout: Layout, terms: Terms) -> list[dict[str, Any]]:
    return [
        {
            "depth": depth,
            "place": terms.place(depth, layout.depth),
            "gates": [{"name": g.name, "kind": g.kind} for g in level],
        }
        for depth, level in enumerate(layout.levels)
    ]


def _gates_view(layout: Layout, depth: int, closed: tuple[str, ...], round_: int) -> list[dict[str, Any]]:
    """A level's gates as they stand in `round_` (`closed`: the gates shut that round)."""
    if depth >= layout.depth:
        return []
    out = []
    for g in layout.levels[depth]:
        if g.name not in closed:
            status, reopens = "open", None
        elif g.kind == "pass":
            status, reopens = "sealed", None
        else:
            status, reopens = "closed", round_ + 1
        out.append({"name": g.name, "kind": g.kind, "status": status, "reopens": reopens})
    return out


def _level_view(
    gs: State, depth: int, members: tuple[int, ...], closed: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """Level `depth` as its members see it (`closed`: the round's closed gates, when the
    caller has found them already)."""
    terms = TERMS[gs.variant]
    if closed is None:
        closed = kts.closed_names(gs, gs.round)
    return {
        "depth": depth,
        "place": terms.place(depth, gs.levels),
        "escaped": depth >= gs.levels,
        "members": list(members),
        "gates": _gates_view(gs.layout, depth, closed, gs.round),
    }


def _play_full(play: Play) -> dict[str, Any]:
    return {
        "seat": play.seat,
        "gates": list(play.gates),
        "cards": list(play.cards),
        "strength": kts.strength(play.cards),
        "cards_used": len(play.cards),
        "auto": play.auto,
        "entered": play.entered,
    }


def _resolved_full(event: RoundResolved, layout: Layout, terms: Terms) -> dict[str, Any]:
    levels = []
    for depth in range(layout.depth):
        plays = [p for p in event.plays if p.depth == depth]
        if plays:
            levels.append(
                {
                    "depth": depth,
                    "place": terms.place(depth, layout.depth),
                    "results": [_play_full(p) for p in plays],
                }
            )
    return {"type": "round_resolved", "round": event.round, "at": event.at, "levels": levels}


def _resolved_for(event: RoundResolved, seat: int, layout: Layout, terms: Terms) -> dict[str, Any] | None:
    """The round's results as a player sees them: its own level only (None: it had escaped)."""
    mine = next((p for p in event.plays if p.seat == seat), None)
    if mine is None:
        return None
    return {
        "type": "round_resolved",
        "round": event.round,
        "at": event.at,
        "depth": mine.depth,
        "place": terms.place(mine.depth, layout.depth),
        "results": [
            {"seat": p.seat, "cards_used": len(p.cards), "entered": p.entered}
            for p in event.plays
            if p.depth == mine.depth
        ],
        "you": _play_full(mine),
    }


def _play_ended_view(event: PlayEnded) -> dict[str, Any]:
    return {
        "type": "play_ended",
        "round": event.round,
        "at": event.at,
        "reason": event.reason,
        "winners": list(event.winners),
        "losers": list(event.losers),
        "escaped": list(event.escaped),
        "garnets": list(event.garnets),
        "passes": list(event.passes),
        "vote_deadline": event.vote_deadline,
    }


def _game_over_view(event: GameOver) -> dict[str, Any]:
    return {
        "type": "game_over",
        "rounds": event.rounds,
        "winners": list(event.winners),
        "losers": list(event.losers),
        "ec": event.ec,
        "ec_by": event.ec_by,
        "votes": list(event.votes),
        "garnets": list(event.garnets),
        "passes": list(event.passes),
        "escaped": list(event.escaped),
        "reason": event.reason,
    }


def _chat_view(event: ChatSent, terms: Terms, levels: int) -> dict[str, Any]:
    return {
        "type": "chat",
        "seat": event.seat,
        "round": event.round,
        "depth": event.depth,
        "place": terms.place(event.depth, levels) if event.depth is not None else None,
        "to": list(event.to),
        "text": event.text,
        "at": event.at,
    }


def event(ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
    """One game event as `viewer` may see it (None: not at all)."""
    gs: State = ms.game_state
    terms = TERMS[gs.variant]
    layout = gs.layout
    open_ = is_open(gs, viewer)
    seat = viewer.seat
    if isinstance(event, RoundStarted):
        out: dict[str, Any] = {"type": "round_started", "round": event.round, "deadline": event.deadline}
        if open_:
            out["depths"] = list(event.depths)
            out["closed"] = list(event.closed)
        elif seat is not None:
            depth = event.depths[seat]
            out["depth"] = depth
            out["place"] = terms.place(depth, layout.depth)
            out["members"] = [s for s, d in enumerate(event.depths) if d == depth]
            out["gates"] = _gates_view(layout, depth, event.closed, event.round)
        return out
    if isinstance(event, Submitted):
        if viewer.full or seat == event.seat:
            return {
                "type": "submitted",
                "seat": event.seat,
                "round": event.round,
                "gates": list(event.gates),
                "cards": list(event.cards),
            }
        return None
    if isinstance(event, ChatSent):
        if open_ or (seat is not None and seat in event.to):
            return _chat_view(event, terms, layout.depth)
        return None
    if isinstance(event, RoundResolved):
        if open_:
            return _resolved_full(event, layout, terms)
        if seat is not None:
            return _resolved_for(event, seat, layout, terms)
        return {"type": "round_resolved", "round": event.round, "at": event.at}
    if isinstance(event, PlayEnded):
        return _play_ended_view(event)
    if isinstance(event, VoteCast):
        if viewer.full or seat == event.seat:
            return {"type": "vote_cast", "seat": event.seat, "candidate": event.candidate, "at": event.at}
        return {"type": "vote_cast", "seat": event.seat, "at": event.at}
    if isinstance(event, GameOver):
        return _game_over_view(event)
    return None


# --- the view --------------------------------------------------------------------------


def _me_view(gs: State, seat: int) -> dict[str, Any]:
    can_submit = gs.phase == "play" and gs.awaited(seat)
    return _me_part(gs.players[seat], seat, gs.variant, gs.levels, can_submit, gs.options.chat_per_round)


def _me_part(
    p: PlayerState, seat: int, variant: str, levels: int, can_submit: bool, chat_per_round: int
) -> dict[str, Any]:
    """A seat's own part of its view (`can_submit`: whether the round waits on it)."""
    terms = TERMS[variant]
    pending = None
    if p.pending is not None:
        pending = {
            "gates": list(p.pending.gates),
            "cards": list(p.pending.cards),
            "strength": kts.strength(p.pending.cards),
        }
    return {
        "seat": seat,
        "depth": p.depth,
        "place": terms.place(p.depth, levels),
        "escaped": p.escaped,
        "hand": list(p.hand),
        "garnets": p.garnets,
        "passes": p.passes,
        "can_submit": can_submit,
        "submitted": pending is not None,
        "pending": pending,
        "chats_left": max(0, chat_per_round - p.chats),
        "vote": p.vote,
    }


def _player_full(gs: State, seat: int, viewer: Viewer) -> dict[str, Any]:
    view = _me_view(gs, seat)
    view["voted"] = gs.players[seat].vote is not None
    if not viewer.full and viewer.seat != seat:
        view["vote"] = None  # votes stay secret until the EC is decided
    return view


def _results_view(gs: State, viewer: Viewer) -> dict[str, Any] | None:
    if gs.finished is not None:
        return _game_over_view(gs.finished)
    if gs.ended is not None:
        out = _play_ended_view(gs.ended)
        out["voters"] = [w for w in gs.ended.winners if gs.players[w].vote is not None]
        return out
    return None


class _Plain:
    """The parts of a view as dicts and lists, built for one viewer (`view`); _Shared
    gives the same parts as kept JSON (`view_json`)."""

    def __init__(self, gs: State) -> None:
        self.gs = gs
        self.terms: Any = _terms_view(TERMS[gs.variant])
        self.layout: Any = _layout_view(gs.layout, TERMS[gs.variant])
        self.results: Any = _results_view(gs, Viewer(seat=None))

    def level(self, depth: int) -> Any:
        return _level_view(self.gs, depth, self.gs.members(depth))

    def me(self, seat: int) -> Any:
        return _me_view(self.gs, seat)

    def chat_of(self, seat: int | None) -> list[Any]:
        gs = self.gs
        terms = TERMS[gs.variant]
        return [_chat_view(c, terms, gs.levels) for c in gs.chat if seat is None or seat in c.to]

    def history_of(self, seat: int | None) -> list[Any]:
        gs = self.gs
        terms = TERMS[gs.variant]
        if seat is None:
            return [_resolved_full(r, gs.layout, terms) for r in gs.history]
        out = []
        for r in gs.history:
            mine = _resolved_for(r, seat, gs.layout, terms)
            if mine is not None:
                out.append(mine)
        return out


def _view(gs: State, viewer: Viewer, parts: _Plain | _Shared) -> dict[str, Any]:
    """The view's skeleton, its parts from `parts` (dicts, or kept JSON)."""
    opts = gs.options
    open_ = is_open(gs, viewer)
    seat = viewer.seat
    out: dict[str, Any] = {
        "variant": gs.variant,
        "terms": parts.terms,
        "phase": gs.phase,
        "round": gs.round,
        "deadline": gs.deadline if gs.phase in ("play", "vote") else None,
        "round_ms": kts.round_ms(opts),
        "vote_ms": kts.vote_ms(opts),
        "levels": gs.levels,
        "layout": parts.layout,
        "open": open_,
        "me": parts.me(seat) if seat is not None else None,
        "level": None,
        "chat": [],
        "history": [],
        "players": None,
        "all_levels": None,
        "results": parts.results,
    }
    if open_:
        out["players"] = [_player_full(gs, s, viewer) for s in range(len(gs.players))]
        out["all_levels"] = [parts.level(d) for d in range(gs.levels + 1)]
        out["chat"] = parts.chat_of(None)
        out["history"] = parts.history_of(None)
        if seat is not None:
            out["level"] = parts.level(gs.players[seat].depth)
    elif seat is not None:
        out["level"] = parts.level(gs.players[seat].depth)
        out["chat"] = parts.chat_of(seat)
        out["history"] = parts.history_of(seat)
    return out


def view(ms: MatchState, viewer: Viewer) -> dict[str, Any]:
    """The game's state as `viewer` may see it."""
    gs: State = ms.game_state
    return _view(gs, viewer, _Plain(gs))


# --- the view as JSON -------------------------------------------------------------------
#
# view_json gives the bytes of encoding `view(ms, viewer)`, for frames (ViewEncoder in
# projections.common), built from parts encoded once and spliced as msgspec.Raw: the
# view of every entry is asked for by up to 13 viewers in a row, and most of it is the
# same for many of them (terms, layout, results, each level's members and gates: for
# everyone in that level) or the same from entry to entry (each past round's results as
# a seat sees them, each chat message). A part is shared only between viewers who see
# exactly the same of it: a level's part is asked for by its members (or by viewers who
# see every level), a seat's round results are keyed by the seat.

_encode = msgspec.json.Encoder().encode


@functools.lru_cache(maxsize=64)
def _terms_json(variant: str) -> msgspec.Raw:
    return msgspec.Raw(_encode(_terms_view(TERMS[variant])))


@functools.lru_cache(maxsize=256)
def _layout_json(layout: Layout, variant: str) -> msgspec.Raw:
    return msgspec.Raw(_encode(_layout_view(layout, TERMS[variant])))


# A chat message and a past round's results, the same in every later entry's views:
# keyed by values (frozen Structs), bounded (a few thousand: the rounds and messages of a
# server's matches in play at once).
@functools.lru_cache(maxsize=4096)
def _chat_json(event: ChatSent, variant: str, levels: int) -> msgspec.Raw:
    return msgspec.Raw(_encode(_chat_view(event, TERMS[variant], levels)))


@functools.lru_cache(maxsize=8192)
def _resolved_for_json(event: RoundResolved, seat: int, layout: Layout, variant: str) -> msgspec.Raw | None:
    mine = _resolved_for(event, seat, layout, TERMS[variant])
    return msgspec.Raw(_encode(mine)) if mine is not None else None


@functools.lru_cache(maxsize=1024)
def _resolved_full_json(event: RoundResolved, layout: Layout, variant: str) -> msgspec.Raw:
    return msgspec.Raw(_encode(_resolved_full(event, layout, TERMS[variant])))


# A seat's own part, the same from entry to entry while its state is: keyed by values.
@functools.lru_cache(maxsize=4096)
def _me_json(
    p: PlayerState, seat: int, variant: str, levels: int, can_submit: bool, chat_per_round: int
) -> msgspec.Raw:
    return msgspec.Raw(_encode(_me_part(p, seat, variant, levels, can_submit, chat_per_round)))


class _Shared:
    """What the views of one state share, built when first asked for: its levels (by
    depth), its results, and each seat's chat and history (carried over from the state
    before while its round's chat, or the history, is the same tuple), with the terms'
    and layout's JSON (carried over while the variant and layout are the same)."""

    def __init__(self, gs: State, before: _Shared | None) -> None:
        self.gs = gs
        self.closed = kts.closed_names(gs, gs.round)
        results = _results_view(gs, Viewer(seat=None))
        self.results = msgspec.Raw(_encode(results)) if results is not None else None
        self.levels: dict[int, msgspec.Raw] = {}
        self.open_at: dict[int, bool] = {}
        self.chat: dict[int | None, list[msgspec.Raw]] = {}
        self.history: dict[int | None, list[msgspec.Raw]] = {}
        if before is None or before.gs.variant != gs.variant or before.gs.layout is not gs.layout:
            # Looked up once per match (a Layout, as a key, is hashed gate by gate).
            self.terms = _terms_json(gs.variant)
            self.layout = _layout_json(gs.layout, gs.variant)
        else:
            self.terms, self.layout = before.terms, before.layout
            if before.gs.chat is gs.chat:
                self.chat = before.chat
            if before.gs.history is gs.history:
                self.history = before.history

    def level(self, depth: int) -> msgspec.Raw:
        raw = self.levels.get(depth)
        if raw is None:
            gs = self.gs
            raw = msgspec.Raw(_encode(_level_view(gs, depth, gs.members(depth), self.closed)))
            self.levels[depth] = raw
        return raw

    def awaited(self, seat: int) -> bool:
        """State.awaited(seat), with whether a level has an open gate found once per level
        rather than once per seat (open_gates looks up every gate's state by index)."""
        gs = self.gs
        if not gs.active(seat):
            return False
        depth = gs.players[seat].depth
        found = self.open_at.get(depth)
        if found is None:
            found = self.open_at[depth] = bool(gs.open_gates(depth))
        return found

    def me(self, seat: int) -> msgspec.Raw:
        gs = self.gs
        can_submit = gs.phase == "play" and self.awaited(seat)
        return _me_json(
            gs.players[seat], seat, gs.variant, gs.levels, can_submit, gs.options.chat_per_round
        )

    def chat_of(self, seat: int | None) -> list[msgspec.Raw]:
        """The round's chat as `seat` sees it (None: every channel)."""
        out = self.chat.get(seat)
        if out is None:
            gs = self.gs
            out = [
                _chat_json(c, gs.variant, gs.levels) for c in gs.chat if seat is None or seat in c.to
            ]
            self.chat[seat] = out
        return out

    def history_of(self, seat: int | None) -> list[msgspec.Raw]:
        """The past rounds' results as `seat` sees them (None: in full)."""
        out = self.history.get(seat)
        if out is None:
            gs = self.gs
            if seat is None:
                out = [_resolved_full_json(r, gs.layout, gs.variant) for r in gs.history]
            else:
                out = []
                for r in gs.history:
                    mine = _resolved_for_json(r, seat, gs.layout, gs.variant)
                    if mine is not None:
                        out.append(mine)
            self.history[seat] = out
        return out


# The last state's shared parts (one: the views of an entry are asked for in a row).
_last: list[_Shared] = []


def _shared(gs: State) -> _Shared:
    before = _last[0] if _last else None
    if before is not None and before.gs is gs:
        return before
    shared = _Shared(gs, before)
    _last[:] = [shared]
    return shared


def view_json(ms: MatchState, viewer: Viewer) -> bytes:
    """The JSON of `view(ms, viewer)` (projections.common.ViewEncoder)."""
    gs: State = ms.game_state
    return _encode(_view(gs, viewer, _shared(gs)))


# --- replay text -----------------------------------------------------------------------


def _cards_text(cards: tuple[int, ...]) -> str:
    return "+".join(map(str, cards)) if cards else "-"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(len(header))]
    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def describe(ms: MatchState, event: Any) -> list[str]:
    """Lines for a human reading the whole match (everything shown)."""
    gs: State = ms.game_state
    terms = TERMS[gs.variant]
    levels = gs.levels
    if isinstance(event, RoundStarted):
        lines = [f"Round {event.round} begins; submissions close at {event.deadline} ms."]
        for depth in range(levels + 1):
            members = [s for s, d in enumerate(event.depths) if d == depth]
            if not members:
                continue
            text = f"  {terms.place(depth, levels)}: seats {', '.join(map(str, members))}"
            if depth < levels:
                shut = [g.name for g in gs.layout.levels[depth] if g.name in event.closed]
                if shut:
                    text += f" (closed: {', '.join(shut)})"
            else:
                text += " (escaped)"
            lines.append(text)
        return lines
    if isinstance(event, Submitted):
        return [
            f"Round {event.round}: {who(ms, event.seat)} submits {_cards_text(event.cards)} "
            f"({terms.strength} {kts.strength(event.cards)}) at {' and '.join(event.gates)}."
        ]
    if isinstance(event, ChatSent):
        channel = terms.place(event.depth, levels) if event.depth is not None else "everyone"
        return [f"Round {event.round} chat [{channel}] {who(ms, event.seat)}: {event.text}"]
    if isinstance(event, RoundResolved):
        lines = [f"Round {event.round} results:"]
        for depth in range(levels):
            plays = [p for p in event.plays if p.depth == depth]
            if not plays:
                continue
            gates = " ".join(g.name for g in gs.layout.levels[depth])
            lines.append(f"  {terms.place(depth, levels)} ({terms.gate_plural} {gates}):")
            rows = []
            for p in plays:
                if not p.cards:
                    fought = "(no cards left)"
                elif not p.gates:
                    fought = "(no gate open)"
                else:
                    fought = "+".join(p.gates)
                rows.append(
                    [
                        who(ms, p.seat),
                        fought + (" (auto)" if p.auto else ""),
                        _cards_text(p.cards),
                        str(kts.strength(p.cards)),
                        f"entered {p.entered}" if p.entered else "-",
                    ]
                )
            header = ["player", terms.gate_plural, terms.card_plural, terms.strength, "result"]
            lines.extend("    " + row for row in _table(header, rows))
        return lines
    if isinstance(event, PlayEnded):
        why = "all but one escaped" if event.reason == "escaped" else f"nobody inside holds a {terms.card}"
        garnets = ", ".join(f"{s}:{g}" for s, g in enumerate(event.garnets) if g)
        lines = [
            f"Play ends after round {event.round} ({why}): winners {_seat_list(event.winners)}; "
            f"losers {_seat_list(event.losers)}; garnets {garnets or 'none'}."
        ]
        if event.vote_deadline is not None:
            lines.append(f"The winners vote for the Elimination Candidate until {event.vote_deadline} ms.")
        return lines
    if isinstance(event, VoteCast):
        return [f"{who(ms, event.seat)} votes for {who(ms, event.candidate)}."]
    if isinstance(event, GameOver):
        return [f"Game over after {event.rounds} rounds: {event.reason}."]
    return []


def _seat_list(seats: tuple[int, ...]) -> str:
    return ", ".join(map(str, seats)) if seats else "none"


# --- twin worlds (the leak property) ---------------------------------------------------

_TWIN_T0 = 10_000

TWIN_LAYOUTS = (
    "default",
    "A:open B:pass C:garnet\nD:open E:garnet",
    "A:o B:o C:p D:g\nE:o F:p G:g\nH:o I:g\nJ:o",
    "A:o B:g\nC:o\nD:p E:o F:g",
)
_WORDS = ("left", "right", "A", "trust", "me", "garnet", "pass", "wait", "now", "go")

_Move = tuple[int, dict[str, Any]]
"""A command of a twin round: the seat and its body."""


def _twin_visible(gs: State, p: int) -> Any:
    """What seat `p` may know after a round, read from the state (not from the
    projections): the phase and round, itself, who is in its level and that level's
    gates, and, of the round just played, its own play and its level's results."""
    me = gs.players[p]
    gates: tuple[tuple[str, bool], ...] = ()
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


def _twin_cards(rng: Rng, hand: Counter[int]) -> list[int]:
    cards = list(hand.elements())
    return sorted(rng.shuffle(cards)[: min(len(cards), rng.choice([1, 1, 2, 3]))])


def _twin_gates(rng: Rng, gs: State, depth: int) -> list[str]:
    open_ = gs.open_gates(depth)
    pairs = [(a.name, b.name) for a, b in pairwise(open_) if b.index == a.index + 1]
    if pairs and rng.below(2) == 0:
        return list(rng.choice(pairs))
    return [rng.choice(open_).name]


def _twin_submit(round_: int, gates: list[str], cards: list[int]) -> dict[str, Any]:
    return {"type": "submit", "round": round_, "gates": gates, "cards": cards}


def _twin_chat(rng: Rng) -> dict[str, Any]:
    return {"type": "chat", "text": " ".join(rng.choice(_WORDS) for _ in range(1 + rng.below(5)))}


def _twin_outside(
    rng: Rng, gs: State, seats: list[int], must_submit: bool, misser: int | None
) -> list[_Move]:
    """What the players outside the watched level do in one world: chat, rejected
    commands, submissions and resubmissions, missed rounds, each drawn on its own."""
    moves: list[_Move] = []
    for s in seats:
        if rng.below(10) < 3:
            moves.append((s, _twin_chat(rng)))
        if rng.below(10) == 0:
            moves.append((s, _twin_submit(gs.round + 7, ["A"], [1])))  # rejected: wrong round
        if not gs.awaited(s) or s == misser or (not must_submit and rng.below(100) < 15):
            continue
        depth = gs.players[s].depth
        for _ in range(2 if rng.below(10) == 0 else 1):  # sometimes a resubmission
            cards = _twin_cards(rng, Counter(gs.players[s].hand))
            moves.append((s, _twin_submit(gs.round, _twin_gates(rng, gs, depth), cards)))
    return rng.shuffle(moves)


def _twin_run(
    variant: str, rng: Rng, seats: int, layout: str, early_close: bool, p: int
) -> tuple[Rehearsal, Rehearsal, int, int]:
    """Two worlds played side by side in which the players of seat `p`'s level do the
    same (submissions, chat, at the same log times) and everyone else acts on its own in
    each; and, for each world, how many script steps come before the round in which
    something `p` may know differs (or play ends)."""
    options = {"seats": seats, "layout": layout, "early_close": early_close, "clock_scale": 0.01}
    seed = bytes(rng.below(256) for _ in range(32))
    worlds = (
        Rehearsal(kts, variant, options, seed, _TWIN_T0),
        Rehearsal(kts, variant, options, seed, _TWIN_T0),
    )
    a, b = worlds
    stop = [len(a.steps), len(b.steps)]
    while a.gs.phase == "play" and b.gs.phase == "play":
        ga: State = a.gs
        gb: State = b.gs
        depth = ga.players[p].depth
        level = list(ga.members(depth))
        if level != list(gb.members(depth)):
            raise RuntimeError("Keys to Success twins: the watched level differs")
        outside = [s for s in range(seats) if s not in level]
        # The level's own moves: the same in both worlds (cards both worlds' hands hold).
        shared_submit: dict[int, dict[str, Any]] = {}
        for s in level:
            if not (ga.awaited(s) or gb.awaited(s)):
                continue
            both = Counter(ga.players[s].hand) & Counter(gb.players[s].hand)
            if both and ga.open_gates(depth):
                shared_submit[s] = _twin_submit(
                    ga.round, _twin_gates(rng, ga, depth), _twin_cards(rng, both)
                )
        awaited_both = [s for s in level if ga.awaited(s) and gb.awaited(s) and s in shared_submit]
        ready = all(s in shared_submit for s in level if ga.awaited(s) or gb.awaited(s))
        everyone = early_close and ready and bool(awaited_both) and rng.below(2) == 0
        last = rng.choice(awaited_both) if everyone else None
        misser_shared = None
        if early_close and not everyone:
            candidates = [s for s in level if ga.awaited(s) and gb.awaited(s)]
            if candidates:
                misser_shared = rng.choice(candidates)
        shared: list[_Move] = [(s, _twin_chat(rng)) for s in level if rng.below(10) < 3]
        for s, cmd in shared_submit.items():
            if s in (misser_shared, last) or (not everyone and rng.below(10) < 2):
                continue
            shared.append((s, cmd))
        shared = rng.shuffle(shared)
        if last is not None:
            shared.append((last, shared_submit[last]))
        # Everyone else, world by world.
        plans: list[list[tuple[int, int, dict[str, Any]]]] = []  # (slot, seat, command)
        for w in worlds:
            misser = None
            if early_close and not everyone and misser_shared is None:
                awaited = [s for s in outside if w.gs.awaited(s)]
                misser = rng.choice(awaited) if awaited else None
            mine = _twin_outside(rng, w.gs, outside, everyone, misser)
            slots = len(shared) if everyone else len(shared) + 1
            plans.append([(rng.below(slots), seat, cmd) for seat, cmd in mine])
        base = a.ts
        if base != b.ts:
            raise RuntimeError("Keys to Success twins: the worlds' clocks differ")
        resolved = []
        for w, plan in zip(worlds, plans, strict=True):
            before = w.gs.round
            mark = len(w.steps)
            for slot in range(len(shared) + 1):
                for at, seat, cmd in plan:
                    if at == slot:
                        w.step("command", seat, cmd, base + slot)
                if slot < len(shared):
                    seat, cmd = shared[slot]
                    w.step("command", seat, cmd, base + slot + 1)
            if w.gs.round == before and w.gs.phase == "play":
                w.tick()
            found = [
                mark + i
                for i, o in enumerate(w.outcomes[mark:])
                if any(isinstance(e, RoundResolved) and e.round == before for e in o.events)
            ]
            if len(found) != 1:
                raise RuntimeError("Keys to Success twins: a round did not close once")
            resolved.append(found[0])
        if a.ms.last_ts != b.ms.last_ts:
            raise RuntimeError("Keys to Success twins: a round closed at different times")
        if _twin_visible(a.gs, p) != _twin_visible(b.gs, p) or a.gs.phase != "play":
            stop = resolved
            break
        stop = [len(a.steps), len(b.steps)]
    return a, b, stop[0], stop[1]


# What stays sealed after the match: nothing. The restrictions, the gates, every room's
# chat and every vote are revealed when the match ends (RULINGS.md, "After a match").
sealed = NOTHING_SEALED


def twins_with(
    variant: str, rng: Rng, *, seats: int, layout: str, early_close: bool, seat: int
) -> Twins:
    """Two matches in which the players in `seat`'s level do exactly the same (same
    submissions, same chat, at the same log times) and everyone outside it acts on its
    own in each world: other gates, other cards, missed rounds, chat or none, rejected
    commands. Only the others may tell them apart, until something `seat` may learn
    differs (who is in its level, its level's gates, its own cards and its level's
    results) or play ends: the comparison stops before that round's results.

    Drawn again (from `rng`) while nothing outside the level differs before that point."""
    for _ in range(20):
        a, b, until_a, until_b = _twin_run(variant, rng, seats, layout, early_close, seat)
        events_a = [o.events for o in a.outcomes[:until_a] if o.events]
        events_b = [o.events for o in b.outcomes[:until_b] if o.events]
        if events_a != events_b:
            break
    return Twins(
        variant=variant,
        worlds=(a.world(), b.world()),
        tells=tuple(s for s in range(seats) if s != seat),
        until=(until_a, until_b),
    )


def twins(variant: str, rng: Rng) -> Twins:
    """Twin worlds that differ outside one seat's level (see `twins_with`): 3 to 9 seats
    on one of TWIN_LAYOUTS, rounds closing early or at the deadline."""
    seats = 3 + rng.below(7)
    return twins_with(
        variant, rng, seats=seats, layout=rng.choice(TWIN_LAYOUTS),
        early_close=rng.below(2) == 0, seat=rng.below(seats),
    )
