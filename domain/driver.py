"""One match driven in-process through the engine: no server, no store, no clock.

A `MatchDriver` creates a match (`domain.engine.create_entry`), seats players, proposes
entries one by one at the log times it is given, and keeps every entry, its outcome and
the match state after it. It is pure, like the engine: the game tests' helpers, the
twin worlds of the leak property (projections.contract.Rehearsal), and, with views and
bots added, the client side's driver (clients/driver.py: `daedalus bots`' simulation,
the conformance suite, the benchmarks) all build on it.

    d = MatchDriver(rules, variant="final", seed=bytes(32))
    d.seat_all(["Black", "White"])
    d.propose("command", 0, {"type": "submit", "round": 1, "actions": ["score"]})
    d.advance()                              # the tick at the next deadline
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

from domain import engine
from domain.contract import Game
from domain.engine import Entry, EntryKind, MatchState, Outcome


def driven_audit_key(seed: bytes) -> bytes:
    """The audit key of a driven match unless one is given (log versions 3 and 4): derived
    from its seed, so a driven match stays a function of its seed. Not for a real match,
    whose seed is revealed at its end: a server draws its audit keys at random."""
    return hashlib.sha256(b"daedalus-driven-audit-key\n" + seed).digest()


class _Auto:
    """The default client id: `c<index of the entry>`."""

    def __repr__(self) -> str:
        return "AUTO"


AUTO: Final = _Auto()

T0 = 1_000_000


class MatchDriver:
    """A match of `rules` from its create entry on, every entry proposed through the engine.

    `entries[i]`, `outcomes[i]` and `states[i]` are the i-th entry, what it did and the
    match state after it (the create entry's outcome is empty). `ts` is the log time the
    next entry is proposed at unless one is given. The match is created under the log
    version `log_version` (a subclass may set another, say 1 to write logs as the first
    version did)."""

    log_version: int = engine.LOG_VERSION

    def __init__(
        self,
        rules: Game,
        *,
        variant: str | None = None,
        options: Mapping[str, Any] | None = None,
        seed: bytes = bytes(32),
        ts: int = T0,
        match_id: str = "simulated",
        audit_key: bytes | None = None,
    ) -> None:
        self.rules = rules
        first = engine.create_entry(
            rules, match_id=match_id, variant=variant, options=options or {}, seed=seed, ts=ts,
            log_version=self.log_version, audit_key=audit_key or driven_audit_key(seed),
        )
        self.ms: MatchState = engine.open_match(rules, first)
        self.entries: list[Entry] = [first]
        self.outcomes: list[Outcome] = [Outcome()]
        self.states: list[MatchState] = [self.ms]
        self.ts = ts

    @property
    def seats(self) -> int:
        return self.ms.seats

    def propose(
        self,
        kind: EntryKind,
        seat: int | None,
        body: Any,
        ts: int | None = None,
        *,
        cid: str | _Auto | None = AUTO,
    ) -> Outcome:
        """Propose one entry at `ts` (None: at `self.ts`, which `ts` otherwise becomes)
        and keep it; its outcome. The engine records no time earlier than the last."""
        if ts is not None:
            self.ts = ts
        entry, self.ms, outcome = engine.propose(
            self.ms, kind=kind, seat=seat,
            cid=f"c{len(self.entries)}" if isinstance(cid, _Auto) else cid,
            body=body, ts=self.ts,
        )
        self.entries.append(entry)
        self.outcomes.append(outcome)
        self.states.append(self.ms)
        return outcome

    def join(
        self,
        name: str,
        seat: int | None = None,
        ts: int | None = None,
        *,
        cid: str | _Auto | None = AUTO,
        entropy: str | None = None,
    ) -> Outcome:
        """A seat claim: `seat`, or (None) the first free one; `entropy`: the player's own
        (none by default, so a driven match stays a function of its seed)."""
        body: dict[str, Any] = {"name": name}
        if seat is not None:
            body["seat"] = seat
        if entropy is not None:
            body["entropy"] = entropy
        if isinstance(cid, _Auto):  # (subclasses may override propose without `cid`)
            return self.propose("join", None, body, ts)
        return self.propose("join", None, body, ts, cid=cid)

    def seat_all(self, names: Sequence[str] | None = None, *, cid: str | _Auto | None = AUTO) -> None:
        """Seat `names` (default P0, P1, ...) in the first free seats; every claim must
        be taken."""
        for name in names if names is not None else [f"P{s}" for s in range(self.seats)]:
            outcome = self.join(name, cid=cid)
            if outcome.rejection is not None:
                raise RuntimeError(f"{name!r} could not take a seat: {outcome.rejection}")

    def deadline(self) -> int | None:
        """When the next tick is due (None: nothing waits on time)."""
        return engine.deadline(self.ms)

    def advance(self, late_ms: int = 0, *, cid: str | _Auto | None = None) -> Outcome:
        """The server's tick for the next deadline, `late_ms` after it (and never before
        a millisecond after the last entry). RuntimeError if nothing waits on time."""
        due = self.deadline()
        if due is None:
            raise RuntimeError(f"{self.ms.game}: nothing waits on time, yet the match has not ended")
        return self.propose("tick", None, {"deadline": due}, max(self.ts + 1, due + late_ms), cid=cid)

    def rewind(self, entries: int) -> None:
        """Forget every entry after the first `entries`: the match as it was then (states
        are immutable, so nothing else needs undoing)."""
        if not 1 <= entries <= len(self.entries):
            raise ValueError(f"no such point: {entries} of {len(self.entries)} entries")
        del self.entries[entries:], self.outcomes[entries:], self.states[entries:]
        self.ms = self.states[-1]
        self.ts = self.ms.last_ts


__all__ = ["AUTO", "T0", "MatchDriver"]
