"""The logic of one match, apart from its input and output (sans-I/O).

A `MatchCore` folds a match's log entries, keeps its history, numbers each viewer's
stream (server/streams.py) and decides what a proposed entry is: appended, only
answered, or dropped. It takes entries and the time, and returns the frames to send and
to whom (per subscriber key, an object of the caller's: the runner's subscribers). No
asyncio, socket, store or clock is inside: server/hub.py's MatchRunner is the shell that
holds the lock, the store, the timer and the connections, and delivers what the core
returns, the way the `websockets` library keeps its protocol apart from its asyncio
shell.

The history is kept small for the garbage collector: every entry as its JSON bytes, the
state after every CHECKPOINT-th entry, and the latest state and outcome. A past entry's
state and outcome are folded again from the checkpoint before it (`_history`): only a
catch-up needs them. (Keeping every state kept about a dozen tracked objects per entry
alive, and the cycle collector's pauses grew with them.)
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Iterable, Iterator, KeysView, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

import msgspec

from domain import engine
from domain.engine import Entry, EntryKind, IntegrityError, MatchState, Outcome
from projections.common import match_view, project_events
from projections.contract import Viewer
from projections.registry import Hosted, hosted
from server.keys import Batch, ServerKey, Ticket
from server.streams import Streams

# The state after every CHECKPOINT-th entry is kept (see MatchCore._history).
CHECKPOINT = 32

_encode = msgspec.json.Encoder().encode
_entry_decoder = msgspec.json.Decoder(Entry)

K = TypeVar("K", bound=Hashable)


def sid_order(sid: str) -> tuple[int, int]:
    """A stream id ("<ms>-<n>") as a sortable pair."""
    ms, _, n = sid.partition("-")
    return int(ms), int(n or 0)


# Submitted and Append, made for every command, write their fields into the instance's
# dict themselves: a frozen dataclass's own __init__ sets each one through
# object.__setattr__, a call per field, and took twice as long (the two: some 8,000
# instructions a command less, 0.7% of bench/core.py). They stay frozen dataclasses in
# every other way (tests/test_core_shortcuts.py).


@dataclass(frozen=True, init=False)
class Submitted:
    """The answer to a proposed entry: its log position (0: not appended), its outcome,
    whether it was appended before (the same command key), and its chained digest ("":
    not appended)."""

    seq: int
    outcome: Outcome
    duplicate: bool
    digest: str = field(default="", compare=False)  # (the seq decides it)

    def __init__(self, seq: int, outcome: Outcome, duplicate: bool, digest: str = "") -> None:
        fields = self.__dict__
        fields["seq"] = seq
        fields["outcome"] = outcome
        fields["duplicate"] = duplicate
        fields["digest"] = digest


@dataclass(frozen=True, init=False)
class Append:
    """A proposed entry to append, decided on the head `expected_head`
    ("<seq>:<digest>" of the last entry folded)."""

    entry: Entry
    state: MatchState  # the state after it
    outcome: Outcome
    expected_head: str
    seat: int | None  # the seat a join takes
    # The entry's JSON: what the store appends and the core keeps (encoded once).
    raw: bytes = field(init=False, repr=False, compare=False)

    def __init__(
        self, entry: Entry, state: MatchState, outcome: Outcome, expected_head: str, seat: int | None
    ) -> None:
        fields = self.__dict__
        fields["entry"] = entry
        fields["raw"] = _encode(entry)
        fields["state"] = state
        fields["outcome"] = outcome
        fields["expected_head"] = expected_head
        fields["seat"] = seat


@dataclass(frozen=True)
class Answer:
    """A proposed entry answered without being appended (the log of a match stays its
    play): a join the rules reject, or a command rejected before the start or after the
    end."""

    submitted: Submitted


Decision = Append | Answer | None
"""What `MatchCore.propose` decides; None: a tick that finds nothing due (dropped)."""


def with_receipt(update: bytes | None, receipt: bytes) -> bytes:
    """An update frame carrying the `receipt` frame (encoded) as its last field,
    `receipt`; with no update (None), the receipt frame alone."""
    if update is None:
        return receipt
    # (one copy of the update: its bytes but the closing brace read through a view)
    return b"".join((memoryview(update)[:-1], b',"receipt":', receipt, b"}"))


class Awaiting:
    """A frame that carries a receipt not signed yet (a core given a `Batch` that signs
    later): `frame()` gives its bytes, signing the receipt's batch if it is still waiting.
    `update`: the update it completes (`with_receipt`), or None for a `receipt` frame."""

    __slots__ = ("_frame", "ticket", "update")

    def __init__(self, update: bytes | None, ticket: Ticket) -> None:
        self.update = update
        self.ticket = ticket
        self._frame: bytes | None = None

    def frame(self) -> bytes:
        if self._frame is None:
            self._frame = with_receipt(self.update, self.ticket.frame())
        return self._frame


Frame = bytes | Awaiting
"""A frame to send: its bytes, or one waiting for its receipt's signature."""


class Folded(msgspec.Struct, Generic[K]):
    """What folding entries gave: the frames to send (subscriber key, frame), in order;
    whether the match ended with them; and the integrity error that stopped the fold,
    if one did (the entries before it are folded and their frames are in `sends`).
    (A Struct, made in C: one a command; a dataclass's __init__ took 260 ns, this 110.)"""

    sends: list[tuple[K, Frame]] = msgspec.field(default_factory=list)
    ended: bool = False
    error: IntegrityError | None = None
    # The store handed over an entry after the last one folded (by stream id) whose seq
    # is folded already: its log no longer holds what was folded here (see
    # MatchCore.resync). The fold stopped there.
    behind: bool = False
    # A round (or the match) ended with these entries: the log time in ms from the round's
    # first command to the entry that ended it (server/metrics.py, round latency).
    round_ms: int | None = None
    # The entry that ended the match was one this core proposed (see MatchCore.begin),
    # folded as it was read from the store: its process is the one that says the end.
    ended_own: bool = False


@dataclass
class Resynced(Generic[K]):
    """What refolding from a store's log that lost entries folded here gave (see
    MatchCore.resync): the entries lost, in order; a `resync` frame for each subscriber
    whose stream or view changed; whether the match is over in the log and was not
    before (`ended`), or was over here and is not in the log (`reopened`)."""

    lost: list[Entry]
    sends: list[tuple[K, bytes]] = field(default_factory=list)
    ended: bool = False
    reopened: bool = False


class SinceOutOfRange(ValueError):
    """A subscriber asked for updates after a number beyond its stream."""


@dataclass(frozen=True)
class Subscribed:
    """What a new subscriber is sent first: its welcome, then its catch-up, the updates
    it asked for, made one at a time as they are taken (see MatchCore.catch_up)."""

    welcome: bytes
    catch_up: Iterator[bytes]

    def frames(self) -> list[bytes]:
        """The welcome and the whole catch-up, made now."""
        return [self.welcome, *self.catch_up]


class MatchCore(Generic[K]):
    """One match's fold, history, viewer streams and subscribers (see the module).

    With a `key` (the server's, server/keys.py) it signs a receipt when the last seat is
    taken, when a round ends and when the match ends, and sends it to the players
    subscribed (every subscriber, at the end) in their update of that entry (or as a
    `receipt` frame when it shows them nothing); a player's welcome carries the latest.
    Signing happens once a round, never per command, and only when someone is there to
    receive it; the welcomes of that round carry the same receipt, not signed again (nor
    is the creation's, in the answer to each seat taken).
    (Each digest is chained, so a later receipt vouches for every entry before it: a
    player away for a round loses nothing but that round's own.)"""

    def __init__(
        self,
        first: Entry,
        stream_id: str = "0-0",
        game: Hosted | None = None,
        key: ServerKey | Batch | None = None,
    ) -> None:
        """A match from its create entry (at `stream_id` in the store). `game`: its rules
        and views (default: the registry's for the game the entry names); `key`: the
        server's signing key, each receipt signed when it is made, or a `Batch` of it
        that signs the receipts of a moment together (its updates then are `Awaiting`
        frames until it has); None: no receipts."""
        self.signer: Batch | None = Batch(key) if isinstance(key, ServerKey) else key
        # The latest checkpoint a receipt is given for: (seq, digest, what, round).
        self.checkpoint: tuple[int, str, str, int | None] | None = None
        self._round_first: int | None = None  # ts of the current round's first command
        # The creation's receipt and the last checkpoint's, once asked for: what each was
        # asked for (its fields and the key) and its ticket (see `_ticket`).
        self._kept: list[tuple[tuple[Any, ...], Ticket] | None] = [None, None]
        self.match_id: str = first.body["match"]
        self.hosted: Hosted = game if game is not None else hosted(first.body["game"])
        ms = engine.open_match(self.hosted.rules, first)
        self._entries: list[bytes] = [_encode(first)]
        self.times: list[int] = [first.ts]
        self._checkpoints: dict[int, MatchState] = {1: ms}
        self._current = ms
        self._outcome = Outcome()
        self._cursor: tuple[int, MatchState, Outcome] | None = None
        self.streams = self._new_streams()
        # The stream id of the last entry folded (its position in the store).
        self.stream_id = stream_id
        self._held: set[K] = set()  # subscribers a delay holds back (server/delay.py sends theirs)
        self._viewers: dict[K, Viewer] = {}  # subscriber key -> the viewer it follows
        # Subscribers whose updates carry no view ("updates": "events"); None: none (no
        # empty set kept in every match, bench/memory.py).
        self._bare: set[K] | None = None
        # Entries proposed and begun (`begin`), not yet folded, in log order: each was
        # decided on the one before it, the first on the last entry folded. (A tuple: a
        # few at most, and none kept in every match, bench/memory.py.)
        self._pending: tuple[Append, ...] = ()

    # -- state ---------------------------------------------------------------------------

    @property
    def current(self) -> MatchState:
        return self._current

    @property
    def outcome(self) -> Outcome:
        """The outcome of the last entry."""
        return self._outcome

    @property
    def tip(self) -> MatchState:
        """The state the next proposal is decided on: after the last entry begun and not
        folded yet (see `begin`), else after the last entry folded."""
        pending = self._pending
        return pending[-1].state if pending else self._current

    @property
    def states(self) -> Sequence[MatchState]:
        """The state after each entry (states[seq - 1]), folded again when asked for."""
        return _Folded(self, 0)

    @property
    def outcomes(self) -> Sequence[Outcome]:
        """The outcome of each entry (outcomes[seq - 1]), folded again when asked for."""
        return _Folded(self, 1)

    def _new_streams(self) -> Streams:
        """The viewers' streams over this core's history. They reach the core through a
        weak reference: a core and its streams referring to each other would be a cycle,
        freed only by the cycle collector, which a server defers (main._tune_gc)."""
        core = weakref.ref(self)

        def history(first: int) -> Iterator[tuple[int, MatchState, Outcome]]:
            held = core()
            assert held is not None, "the streams of a match core that was freed"
            return held._history(first)

        def current() -> MatchState:
            held = core()
            assert held is not None, "the streams of a match core that was freed"
            return held._current

        return Streams(self.hosted.views, history, self.times, current)

    def deadline(self) -> int | None:
        """When a tick is next due (None: nothing waits on time)."""
        return engine.deadline(self._current)

    def view(self, viewer: Viewer) -> dict[str, Any]:
        return match_view(self.hosted.views, self._current, viewer)

    def _history(self, first: int) -> Iterator[tuple[int, MatchState, Outcome]]:
        """(seq, state after it, its outcome) for every entry from `first` on (up to the
        last when asked; none after a resync replaced the history, should the caller
        pause between two)."""
        last = self._current.seq
        entries = self._entries  # (a resync puts the refolded log's in its place)
        if first > last:
            return
        if first == last:
            yield last, self._current, self._outcome
            return
        cursor = self._cursor  # where the last refold stopped: catch-ups go forward
        if cursor is not None and first - CHECKPOINT < cursor[0] <= first:
            seq, ms, outcome = cursor
            if seq == first:
                yield cursor
        elif first == 1:
            seq, ms, outcome = 1, self._checkpoints[1], Outcome()
            yield seq, ms, outcome
        else:
            seq = max(1, (first - 1) // CHECKPOINT * CHECKPOINT)
            ms, outcome = self._checkpoints[seq], Outcome()
        while seq < last and self._entries is entries:
            entry = _entry_decoder.decode(entries[seq])
            new, outcome = engine.step(ms, kind=entry.kind, seat=entry.seat, body=entry.body, ts=entry.ts)
            ms = msgspec.structs.replace(new, seq=entry.seq, head=entry.digest)  # as engine.apply
            seq += 1
            if seq >= first:
                self._cursor = (seq, ms, outcome)
                yield seq, ms, outcome

    def at(self, seq: int) -> tuple[MatchState, Outcome]:
        """The state after entry `seq` and its outcome."""
        if seq == self._current.seq:
            return self._current, self._outcome
        for _seq, ms, outcome in self._history(seq):
            return ms, outcome
        raise IndexError(seq)

    # -- folding -------------------------------------------------------------------------

    def unseen(self, items: Sequence[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
        """The items (stream id, entry as JSON) after the last entry folded, by stream id,
        without decoding them (most are entries folded already)."""
        last = sid_order(self.stream_id)
        return [(sid, raw) for sid, raw in items if sid_order(sid) > last]

    def receive(self, items: Iterable[tuple[str, Entry | bytes]]) -> Folded[K]:
        """Fold entries read from the store (stream id, the entry or its JSON), checking
        each one's digests; those folded already (by seq) are skipped. Stops at the
        first that fails its check (`Folded.error`), or at an entry after the last one
        folded, by stream id, whose seq is folded already (`Folded.behind`: the log lost
        entries folded here)."""
        out: Folded[K] = Folded()
        for sid, item in items:
            raw = item if isinstance(item, bytes) else None
            try:
                entry = _entry_decoder.decode(item) if isinstance(item, bytes) else item
                if entry.seq <= self._current.seq:
                    if sid_order(sid) > sid_order(self.stream_id):
                        out.behind = True
                        return out
                    continue
                ms, outcome = engine.apply(self._current, entry)
            except IntegrityError as exc:
                out.error = exc
                return out
            pending = self._pending
            own = False
            if pending:  # one begun here, read before its append's reply; or one that beat it
                own = pending[0].entry.digest == entry.digest  # (the digest chains every field)
                self._pending = pending[1:] if own else ()
            self._folded(sid, entry, ms, outcome, out, raw, own)
        return out

    def propose(
        self,
        *,
        kind: EntryKind,
        seat: int | None,
        body: Any,
        now: int,
        cid: str | None = None,
        command: Any = None,
    ) -> Decision:
        """Decide an entry at time `now` (ms) on the `tip`: the state folded so far, and
        the entries begun on it (`begin`) as if they were folded. (`command`: see
        engine.propose.)"""
        ms = self.tip
        entry, new, outcome = engine.propose(
            ms, kind=kind, seat=seat, cid=cid, body=body, ts=now, command=command
        )
        if kind == "tick" and not outcome.events:
            return None
        if outcome.rejection is not None and (kind == "join" or not ms.started or ms.ended):
            return Answer(Submitted(0, outcome, False))
        taken = None
        if kind == "join":
            taken = next(e.seat for e in outcome.events if isinstance(e, engine.SeatTaken))
        return Append(entry, new, outcome, f"{ms.seq}:{ms.head}", taken)

    def begin(self, decided: Append) -> None:
        """The caller has begun appending `decided` (the last proposal): the proposals
        after it are decided on it, until it is folded (`appended`, or read from the
        store) or dropped (`drop`). Appends begun one after another must reach the store
        in that order, each on the head of the one before (the store refuses the others:
        a conflict), so that two commands of a match can be in one batch."""
        tip = self.tip
        if decided.expected_head != f"{tip.seq}:{tip.head}":
            raise ValueError(f"entry {decided.entry.seq} was not decided on the tip, entry {tip.seq}")
        self._pending = (*self._pending, decided)

    def drop(self, decided: Append) -> None:
        """`decided` was not appended (or is given up on): it and the entries begun after
        it, decided on it, are no longer pending (theirs will fail, or be found in the
        store; see `landed`)."""
        for i, item in enumerate(self._pending):
            if item is decided:
                self._pending = self._pending[:i]
                return

    @property
    def next_begun(self) -> Append | None:
        """The first entry begun and not folded yet (the next `appended` folds)."""
        return self._pending[0] if self._pending else None

    def all_begun(self, items: Sequence[tuple[str, bytes]]) -> bool:
        """Whether each item (stream id, JSON) read from the store is an entry begun here
        and not folded yet: its append's reply will fold it."""
        pending = self._pending
        if not pending:
            return False
        raws = {item.raw for item in pending}
        return all(raw in raws for _sid, raw in items)

    def landed(self, decided: Append) -> Submitted | None:
        """The answer to `decided`, appended by the store and folded here as it was read
        from the store (not by `appended`); None if the entry folded at its seq is
        not it (or none is yet)."""
        seq = decided.entry.seq
        if seq > self._current.seq or self.entry(seq).digest != decided.entry.digest:
            return None
        return Submitted(seq, decided.outcome, False, decided.entry.digest)

    def appended(self, stream_id: str, decided: Append) -> tuple[Submitted, Folded[K]]:
        """The store appended `decided` at `stream_id`: fold it (its state is the one
        `propose` computed, not folded again) and answer it. If it was begun, it is the
        first entry pending."""
        pending = self._pending
        if pending and pending[0] is decided:
            self._pending = pending[1:]
        elif any(item is decided for item in pending):
            raise ValueError(f"entry {decided.entry.seq} was appended before the entries begun before it")
        if decided.entry.seq != self._current.seq + 1:
            raise ValueError(
                f"entry {decided.entry.seq} was decided on entry {decided.entry.seq - 1}, "
                f"but {self._current.seq} is folded"
            )
        out: Folded[K] = Folded()
        self._folded(stream_id, decided.entry, decided.state, decided.outcome, out, decided.raw)
        return Submitted(decided.entry.seq, decided.outcome, False, decided.entry.digest), out

    def duplicate(self, seq: int) -> Submitted | None:
        """The answer to a command key the store had appended at `seq` (None: that entry
        is not folded here yet)."""
        if seq > self._current.seq:
            return None
        return Submitted(seq, self.at(seq)[1], True, self.entry(seq).digest)

    def entry(self, seq: int) -> Entry:
        """The folded entry `seq` (a duplicate's, to compare its body with a resent one)."""
        if not 1 <= seq <= self._current.seq:
            raise IndexError(seq)
        return _entry_decoder.decode(self._entries[seq - 1])

    def _folded(
        self,
        sid: str,
        entry: Entry,
        ms: MatchState,
        outcome: Outcome,
        out: Folded[K],
        raw: bytes | None,
        own: bool = False,
    ) -> None:
        """Fold `entry` (its state `ms` and `outcome` computed); `own`: one this core
        began, read from the store (Folded.ended_own)."""
        before = self._current
        was_over = before.ended
        self._entries.append(raw if raw is not None else _encode(entry))
        self.times.append(entry.ts)
        self._current, self._outcome = ms, outcome
        if ms.seq % CHECKPOINT == 0:
            self._checkpoints[ms.seq] = ms
        self.stream_id = sid
        what = self._checkpoint(before, ms, entry) if ms.started and not was_over else None
        if entry.kind == "command" and self._round_first is None and before.started:
            self._round_first = entry.ts
        if what in ("round", "ended"):
            if self._round_first is not None:
                out.round_ms = entry.ts - self._round_first
            self._round_first = None
        if self._viewers:
            self._broadcast(entry.seq, ms, outcome, out.sends, what)
        if ms.ended and not was_over:
            out.ended = True
            out.ended_own = own

    # -- receipts --------------------------------------------------------------------------

    def _checkpoint(self, before: MatchState, ms: MatchState, entry: Entry) -> str | None:
        """If `entry` started the match (the last seat taken), ended a round or ended the
        match, it is the latest checkpoint: which of the three (None: none)."""
        rules = self.hosted.rules
        round_: int | None = rules.round_of(before.game_state) if before.started else None
        if ms.ended:
            what = "ended"
        elif not before.started:
            what = "started"
        elif rules.round_of(ms.game_state) != round_:
            what = "round"
        else:
            return None
        self.checkpoint = (entry.seq, entry.digest, what, round_)
        return what

    def receipt(self, seq: int, digest: str, what: str, round_: int | None) -> dict[str, Any] | None:
        """A receipt signed by the server's key (None without one)."""
        signed = self._signed(seq, digest, what, round_)
        return None if signed is None else dict(signed)

    def receipt_frame(self, seq: int, digest: str, what: str, round_: int | None) -> bytes | None:
        """`receipt` as a `receipt` frame, encoded (once, with the receipt it keeps)."""
        ticket = self._ticket(seq, digest, what, round_)
        return None if ticket is None else ticket.frame()

    def _signed(self, seq: int, digest: str, what: str, round_: int | None) -> dict[str, Any] | None:
        """`receipt`, not to be changed (see `_ticket`)."""
        ticket = self._ticket(seq, digest, what, round_)
        return None if ticket is None else ticket.receipt()

    def _ticket(self, seq: int, digest: str, what: str, round_: int | None) -> Ticket | None:
        """The ticket of a receipt: the creation's and the last checkpoint's are kept.
        The same receipt goes in every player's update of a checkpoint and in every
        welcome until the next one, and the creation's in the answer to every seat taken:
        signing it again (some 450,000 instructions; a Five-Card Trick command in
        bench/core.py is about 1,100,000) would give the same bytes (Ed25519 signatures
        are deterministic). A 13-seat match set up as bench/load.py sets it up (created,
        13 seats taken, 13 hellos) had 27 signatures made before its first command; 2 now."""
        signer = self.signer
        if signer is None:
            return None
        commitment = self._current.commitment
        asked = (seq, digest, what, round_, commitment, signer.key)
        slot = 0 if what == "created" else 1
        kept = self._kept[slot]
        if kept is None or kept[0] != asked:
            kept = self._kept[slot] = (asked, signer.ask({
                "match": self.match_id, "seq": seq, "digest": digest, "commitment": commitment,
                "what": what, "round": round_,
            }))
        return kept[1]

    def creation_receipt(self) -> dict[str, Any] | None:
        """The receipt of the match's creation: its first entry and its commitment."""
        return self.receipt(1, self.entry(1).digest, "created", None)

    # -- a log that lost entries ---------------------------------------------------------

    def diverges(self, items: Sequence[tuple[str, Entry]]) -> int | None:
        """The seq of the first entry folded here that the log `items` (the store's whole
        log, in order) does not hold, by digest; None if it holds every one."""
        for i, (_sid, entry) in enumerate(items[: self._current.seq]):
            if entry.seq != i + 1 or entry.digest != _entry_decoder.decode(self._entries[i]).digest:
                return i + 1
        if len(items) < self._current.seq:
            return len(items) + 1
        return None

    def resync(self, items: Sequence[tuple[str, Entry]]) -> Resynced[K] | None:
        """Fold the store's whole log `items` again from its start, in place of what was
        folded here, if it does not hold every entry folded here (None: it does, and
        nothing changed; `receive` folds what it has beyond).

        That happens when the store lost acknowledged entries (a Redis killed under
        `appendfsync everysec`, a failover to a lagging replica): the log is what the
        match is, so the state, the history and every viewer's stream are refolded from
        it. Each subscriber whose stream or view changed gets a `resync` frame: its
        stream's length (`seq`) and its view now, and how many of the updates it may
        have received stand (`kept`, the first `kept` of its stream are unchanged);
        live updates go on from `seq`. IntegrityError if the log does not fold (nothing
        changes then); ValueError if it is empty."""
        first = self.diverges(items)
        if first is None:
            return None
        if not items:
            raise ValueError(f"match {self.match_id}: the store holds none of its log")
        sid, create = items[0]
        fresh: MatchCore[K] = MatchCore(create, stream_id=sid, game=self.hosted)  # no key: no signing
        folded = fresh.receive(items[1:])
        if folded.error is not None:
            raise folded.error
        was_over = self._current.ended
        lost = [_entry_decoder.decode(raw) for raw in self._entries[first - 1 :]]
        before: dict[Viewer, tuple[int, dict[str, Any]]] = {}
        for viewer in set(self._viewers.values()):
            before[viewer] = (self.streams.length(viewer), self.streams.view(viewer))
        self._entries, self.times = fresh._entries, fresh.times
        self._checkpoints, self._cursor = fresh._checkpoints, None
        self._current, self._outcome = fresh._current, fresh._outcome
        self._pending = ()
        self.checkpoint = fresh.checkpoint
        self.stream_id = fresh.stream_id
        self.streams = self._new_streams()
        out: Resynced[K] = Resynced(lost)
        frames: dict[Viewer, bytes | None] = {}
        for key, viewer in self._viewers.items():
            if key in self._held:
                continue
            if viewer not in frames:
                length, view = self.streams.length(viewer), self.streams.view(viewer)
                kept = self.streams.count_before(viewer, first)
                old_length, old_view = before[viewer]
                changed = kept < old_length or (length, view) != (old_length, old_view)
                frames[viewer] = (
                    _encode({"type": "resync", "seq": length, "kept": kept, "view": view})
                    if changed
                    else None
                )
            frame = frames[viewer]
            if frame is not None:
                out.sends.append((key, frame))
        out.ended = self._current.ended and not was_over
        out.reopened = was_over and not self._current.ended
        return out

    # -- subscribers ---------------------------------------------------------------------

    @property
    def subscribers(self) -> KeysView[K]:
        return self._viewers.keys()

    @property
    def idle(self) -> bool:
        """Nobody follows the match and nothing more can happen to it."""
        return not self._viewers and self._current.ended

    def subscribe(
        self, key: K, viewer: Viewer, since: int | None, welcome: dict[str, Any],
        with_view: bool = True,
    ) -> Subscribed:
        """Subscribe `key` to `viewer`'s stream: the welcome (with the viewer's view now)
        and the updates of the stream after `since` (None: none), each with the view now
        (`with_view` false: without), to send first; the live ones come with each entry
        folded, each with the view after it (or none). SinceOutOfRange for a `since`
        beyond the stream."""
        length = self.streams.length(viewer)
        if since is None:
            since = length
        if not 0 <= since <= length:
            raise SinceOutOfRange(f"since must be between 0 and {length}, the updates in your stream")
        view = self.streams.view(viewer)
        welcome = {**welcome, "seq": length, "view": view}
        if viewer.seat is not None or self._current.ended:  # the latest receipt, if any
            receipt = self._signed(*self.checkpoint) if self.checkpoint is not None else None
            if receipt is not None:
                welcome["receipt"] = {"type": "receipt", **receipt}
        self._viewers[key] = viewer
        if not with_view:
            if self._bare is None:
                self._bare = set()
            self._bare.add(key)
        return Subscribed(_encode(welcome), self.catch_up(viewer, since, length, view if with_view else None))

    def catch_up(
        self, viewer: Viewer, since: int, upto: int, view: dict[str, Any] | None
    ) -> Iterator[bytes]:
        """Updates since+1 .. upto of `viewer`'s stream, each with `view` (None: without),
        made one at a time as they are asked for: a catch-up waiting for a client that
        reads slowly, or not at all, holds its place in the history, not its frames (a
        whole long match's, each with the view: megabytes a connection).

        Entries folded meanwhile do not change these updates. A resync meanwhile (the
        store lost entries) does: the rest come from the history refolded, up to its
        length; those up to the resync's `kept` are the same in both, and the client
        drops any after it when the `resync` frame, queued behind them, comes."""
        if since >= upto:  # (no generator, which would hold the core until dropped)
            return iter(())
        return self._catch_up(viewer, since, upto, None if view is None else _encode(view))

    def _catch_up(self, viewer: Viewer, since: int, upto: int, view: bytes | None) -> Iterator[bytes]:
        number = since
        while number < upto:
            streams = self.streams  # (a resync puts new ones in its place)
            index = streams.index(viewer)
            last = min(upto, len(index))
            if number >= last:
                return
            views = self.hosted.views
            for seq, ms, outcome in self._history(index[number]):  # (ends at a resync)
                if seq == index[number]:
                    number += 1
                    yield streams.frame(number, seq, _encode(project_events(views, ms, outcome, viewer)), view)
                    if number >= last:
                        return
            if self.streams is streams:
                return

    def hold(self, key: K, viewer: Viewer) -> None:
        """Subscribe `key` to `viewer` without sending it anything: a delayed spectator,
        whose updates server/delay.py sends when they are due."""
        self._viewers[key] = viewer
        self._held.add(key)

    def unsubscribe(self, key: K) -> None:
        self._viewers.pop(key, None)
        self._held.discard(key)
        if self._bare is not None:
            self._bare.discard(key)

    def _broadcast(
        self,
        seq: int,
        ms: MatchState,
        outcome: Outcome,
        sends: list[tuple[K, Frame]],
        checkpoint: str | None = None,
    ) -> None:
        """Each subscriber's update of the entry just folded. At a `checkpoint` (see
        _checkpoint) a player's update (every viewer's, at the end) carries the receipt as
        its last field, `receipt`; one who gets no update gets a `receipt` frame."""
        # Built once per viewer and form (with the view, or without: `_bare`), whatever
        # its keys.
        frames: dict[Viewer, Frame | None] = {}
        bare_frames: dict[Viewer, Frame | None] = {}
        bare = self._bare
        live = self.streams.live
        ticket: Ticket | None = None
        for key, viewer in self._viewers.items():
            if key in self._held:
                continue
            with_view = bare is None or key not in bare
            built = frames if with_view else bare_frames
            frame: Frame | None
            if viewer in built:
                frame = built[viewer]
            else:
                frame = built[viewer] = live(viewer, seq, ms, outcome, with_view)
                if checkpoint is not None and self.signer is not None and self.checkpoint and (
                    viewer.seat is not None or checkpoint == "ended"
                ):
                    if ticket is None:
                        ticket = self._ticket(*self.checkpoint)
                        assert ticket is not None
                    frame = built[viewer] = (
                        with_receipt(frame, ticket.frame()) if ticket.signed else Awaiting(frame, ticket)
                    )
            if frame is not None:
                sends.append((key, frame))


class _Folded(Sequence[Any]):
    """A core's states (pick 0) or outcomes (pick 1) by position, as a sequence.

    The latest is at hand; an earlier one is folded again from the checkpoint before
    it, and going forward from the last one asked for costs one step each."""

    def __init__(self, core: MatchCore[Any], pick: int) -> None:
        self._core = core
        self._pick = pick

    def __len__(self) -> int:
        return self._core.current.seq

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError(index)
        return self._core.at(index + 1)[self._pick]

    def __iter__(self) -> Iterator[Any]:
        for _seq, ms, outcome in self._core._history(1):
            yield (ms, outcome)[self._pick]
