"""What a game's projection module provides, and who is looking.

A viewer is a seat (a player), a spectator (seat None), or anyone with the full view
(`full=True`: the after-the-match view and an auditor's). Once a match has ended every
viewer gets the full view.

Projections return JSON-ready builtins (dicts, lists, scalars). Two viewers who may know
the same things must get the same values, and a value may depend only on what the viewer
may know: the property tests compare encoded bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

import msgspec

from domain.contract import Game
from domain.driver import MatchDriver
from domain.engine import Entry, MatchState, Outcome
from domain.rng import Rng


class Viewer(msgspec.Struct, frozen=True):
    seat: int | None = None
    full: bool = False


SPECTATOR = Viewer()
AUDITOR = Viewer(full=True)


class GameViews(Protocol):
    """A game's projection module (projections/<game>.py)."""

    def event(self, ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
        """One of the game's events as `viewer` sees it (None: not at all).

        `ms` is the match state right after the entry that produced the event."""
        ...

    def view(self, ms: MatchState, viewer: Viewer) -> dict[str, Any]:
        """The game's state as `viewer` sees it."""
        ...

    def describe(self, ms: MatchState, event: Any) -> list[str]:
        """Lines for a human reading the whole match (replay, audits): full view."""
        ...

    def twins(self, variant: str, rng: Rng) -> Twins:
        """Two matches of `variant` only some viewers may tell apart, drawn from `rng`
        (deterministically): see `Twins`."""
        ...

    @property
    def sealed(self) -> Seals:
        """What the rules keep secret for good, after the match too (`NOTHING_SEALED`: the
        match reveals everything when it ends). See `Seals`."""
        ...


# --- what stays secret after the match ----------------------------------------------------
#
# Once a match ends every viewer gets the full view and its log is published, except what
# a rule text says an opponent never learns. A game that keeps such secrets declares them
# in its projection module as `sealed` (a `Seals`); the others declare `NOTHING_SEALED`.
# In a match that seals (log version 3 or 4, domain/seal.py), its projection keeps showing
# those values to their owner alone after the match, and the published log shows them
# only as salted commitments (projections/seal.py, docs/fairness.md).


class Withheld(msgspec.Struct, frozen=True, kw_only=True):
    """What of one log entry stays sealed: its command's whole body (`body`), or some of
    the body's top-level `fields`; and whether its outcome (`out`). A withheld value
    enters the public log only as its commitment."""

    body: bool = False
    fields: tuple[str, ...] = ()
    out: bool = False


class Logged(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of a folded log: the entry, the match state before and after it, and
    what it did."""

    entry: Entry
    before: MatchState
    after: MatchState
    outcome: Outcome


class Seals(Protocol):
    """A game's declaration of what stays sealed after the match.

    The verifier of a public log (projections/seal.py) folds it without the withheld
    values: at an entry whose body withholds fields it tries every value `alternatives`
    gives, and it checks that every public outcome comes out the same whatever they were.
    So `alternatives` must give every value the withheld fields could have had (the
    tests check the declaration against the rules)."""

    @property
    def fields(self) -> tuple[str, ...]:
        """What stays sealed, in words (the rules page lists the same); () for nothing."""
        ...

    def withheld(self, log: Sequence[Logged]) -> dict[int, Withheld]:
        """The entries (by seq) of a whole folded log that withhold something, and what.
        It may look only at what the public log shows (the values it withholds aside)."""
        ...

    def alternatives(
        self, before: MatchState, seat: int | None, body: Mapping[str, Any] | None,
        fields: tuple[str, ...],
    ) -> Iterable[Any]:
        """Every command body the entry could have held, from the state `before` it: with
        `body` None (the whole body withheld) every body `seat` could have sent; else
        `body` with the withheld `fields` set to each value they could have had (`body`'s
        values of those fields are not to be read). Each value once."""
        ...

    def forget(self, game_state: Any) -> Any:
        """The game's state without the copies it keeps of withheld values only as a
        record (shown to their owner) and that the rules never read again; two states the
        same after `forget` go on the same. The identity if there are none."""
        ...


class _NothingSealed:
    """The declaration of a game that reveals everything when the match ends."""

    fields: tuple[str, ...] = ()

    def withheld(self, log: Sequence[Logged]) -> dict[int, Withheld]:
        return {}

    def alternatives(
        self, before: MatchState, seat: int | None, body: Mapping[str, Any] | None,
        fields: tuple[str, ...],
    ) -> Iterable[Any]:
        return []

    def forget(self, game_state: Any) -> Any:
        return game_state


NOTHING_SEALED: Seals = _NothingSealed()


# --- twin worlds: the leak property's input -----------------------------------------------
#
# Each game's projection module supplies `twins(variant, rng) -> Twins`: two matches with
# the same public play and a different hidden input (a replaced submission, a wall nobody
# touches, another level's chat). Every viewer but the seats in `tells` (and full viewers)
# must receive byte-identical streams of the two (tests/conformance/leaks.py checks it).

TWIN_MATCH_ID = "twins"
"""The match id of both twin worlds."""


class TwinStep(msgspec.Struct, frozen=True, kw_only=True):
    """One log entry of a twin world after its seats are taken."""

    ts: int
    kind: Literal["command", "tick"]
    seat: int | None = None
    body: Any = None


class TwinWorld(msgspec.Struct, frozen=True, kw_only=True):
    """One of two twin matches: created (match id TWIN_MATCH_ID) with `options` (the host's,
    secret ones included) and `seed` at log time `created`; every seat is then taken in
    seat order at that same time by a player named P<seat> (a join naming no seat); then
    `script`, entry by entry."""

    options: dict[str, Any]
    seed: bytes
    created: int
    script: tuple[TwinStep, ...]


class Twins(msgspec.Struct, frozen=True, kw_only=True):
    """Two matches of `variant` that only the seats in `tells` (and full viewers) may
    tell apart: their public options are the same, and every other seat and a spectator
    must receive the same stream of update frames of both, up to the reveal (the end of
    the match) or, when `until` is given, up to the first `until[w]` script steps of
    world w, after which the rules let those viewers learn something that differs.
    The worlds really differ: the full view (and, if `tells` is not empty, the stream of
    one of those seats) is not the same in both."""

    variant: str
    worlds: tuple[TwinWorld, TwinWorld]
    tells: tuple[int, ...]
    until: tuple[int, int] | None = None


class Rehearsal:
    """A twin world played through the engine (domain.driver.MatchDriver) while its script
    is written, so that a strategy can choose each step from the state reached. `mark`
    and `rewind` undo steps (the state is immutable, so a mark is the state and the
    script's length)."""

    def __init__(
        self, rules: Game, variant: str, options: Mapping[str, Any], seed: bytes, created: int
    ) -> None:
        self.options = dict(options)
        self.seed = seed
        self.created = created
        self._driver = MatchDriver(
            rules, variant=variant, options=options, seed=seed, ts=created, match_id=TWIN_MATCH_ID
        )
        self._driver.seat_all(cid=None)
        self._seated = len(self._driver.entries)
        self.steps: list[TwinStep] = []
        self.outcomes: list[Outcome] = []

    @property
    def ms(self) -> MatchState:
        """The match state now."""
        return self._driver.ms

    @property
    def gs(self) -> Any:
        """The game's state now."""
        return self.ms.game_state

    @property
    def ts(self) -> int:
        """The log time of the last entry."""
        return self.ms.last_ts

    def step(
        self, kind: Literal["command", "tick"], seat: int | None, body: Any, ts: int
    ) -> Outcome:
        """Propose one entry at `ts` and write it into the script; its outcome."""
        outcome = self._driver.propose(kind, seat, body, ts, cid=None)
        self.steps.append(TwinStep(ts=ts, kind=kind, seat=seat, body=body))
        self.outcomes.append(outcome)
        return outcome

    def tick(self, late_ms: int = 0) -> Outcome:
        """The tick at the next deadline, `late_ms` after it (never before the last entry)."""
        due = self._driver.deadline()
        if due is None:
            raise RuntimeError("nothing waits on time")
        return self.step("tick", None, {"deadline": due}, max(self.ts, due + late_ms))

    def mark(self) -> tuple[MatchState, int]:
        return self.ms, len(self.steps)

    def rewind(self, mark: tuple[MatchState, int]) -> None:
        _, n = mark
        self._driver.rewind(self._seated + n)
        del self.steps[n:]
        del self.outcomes[n:]

    def world(self) -> TwinWorld:
        return TwinWorld(
            options=self.options, seed=self.seed, created=self.created, script=tuple(self.steps)
        )
