"""One match of any registered game, driven in-process through the engine.

No server, no store, no clock: a `MatchDriver` creates a match (`domain.engine`),
seats players, proposes entries one by one at the log times it is given, and keeps
every entry, its outcome and the match state after it. Bots play through it seeing
only their seat's view (`projections.common.match_view`), as over a socket. The
`daedalus bots` benchmarks, the game tests' helpers and the conformance suite all
drive matches with it.

    d = MatchDriver("five-card-trick", variant="final", seed=bytes(32))
    d.join("Black"); d.join("White")
    d.propose("command", 0, {"type": "submit", "round": 1, "actions": ["score"]})
    d.advance()                              # the tick at the next deadline
    d.play_bots([bot0, bot1])                # bots to the end

`simulate` is the one-call form: a whole match between bots, as a `Simulation`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from domain import engine
from domain.engine import Entry, EntryKind, MatchState, Outcome
from projections.common import match_view
from projections.contract import Viewer
from projections.registry import Hosted, hosted

if TYPE_CHECKING:  # clients.bots re-exports this module's simulate: no import at run time
    from clients.bots.common import Bot


class _Auto:
    """The default client id: `c<index of the entry>`."""

    def __repr__(self) -> str:
        return "AUTO"


AUTO: Final = _Auto()

T0 = 1_000_000


class MatchDriver:
    """A match of `game` (a registered name, or a `Hosted` game that need not be
    registered) from its create entry on, every entry proposed through the engine.

    `entries[i]`, `outcomes[i]` and `states[i]` are the i-th entry, what it did and the
    match state after it (the create entry's outcome is empty). `ts` is the log time
    the next entry is proposed at unless one is given; `bot_gap_ms` is how far `play_bots`
    moves it for each bot command."""

    def __init__(
        self,
        game: str | Hosted,
        *,
        variant: str | None = None,
        options: Mapping[str, Any] | None = None,
        seed: bytes = bytes(32),
        ts: int = T0,
        match_id: str = "simulated",
        bot_gap_ms: int = 1,
    ) -> None:
        self.host = hosted(game) if isinstance(game, str) else game
        first = engine.create_entry(
            self.host.rules, match_id=match_id, variant=variant, options=options or {},
            seed=seed, ts=ts,
        )
        self.ms: MatchState = engine.open_match(self.host.rules, first)
        self.entries: list[Entry] = [first]
        self.outcomes: list[Outcome] = [Outcome()]
        self.states: list[MatchState] = [self.ms]
        self.ts = ts
        self.bot_gap_ms = bot_gap_ms
        # What bots did in `play_bots`: (seq, seat, command, "code: reason") per rejection,
        # (seq, seat, command, warnings) per accepted command with warnings.
        self.rejections: list[tuple[int, int, dict[str, Any], str]] = []
        self.warnings: list[tuple[int, int, dict[str, Any], tuple[str, ...]]] = []
        self.commands = 0

    # --- entries ---------------------------------------------------------------------

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
        self, name: str, seat: int | None = None, ts: int | None = None, *, cid: str | _Auto | None = AUTO
    ) -> Outcome:
        """A seat claim: `seat`, or (None) the first free one."""
        body: dict[str, Any] = {"name": name}
        if seat is not None:
            body["seat"] = seat
        if isinstance(cid, _Auto):  # (subclasses may override propose without `cid`)
            return self.propose("join", None, body, ts)
        return self.propose("join", None, body, ts, cid=cid)

    def seat_all(self, names: Sequence[str] | None = None) -> None:
        """Seat `names` (default P0, P1, ...) in the first free seats; every claim must
        be taken."""
        for name in names if names is not None else [f"P{s}" for s in range(self.seats)]:
            outcome = self.join(name)
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

    # --- views and bots --------------------------------------------------------------

    def view(self, viewer: Viewer | int | None) -> dict[str, Any]:
        """What `viewer` (a Viewer, a seat, or None for a spectator) sees of the match now."""
        if not isinstance(viewer, Viewer):
            viewer = Viewer(seat=viewer)
        return match_view(self.host.views, self.ms, viewer)

    def play_bots(self, bots: Sequence[Bot], *, max_entries: int = 10_000) -> None:
        """Bots (one a seat, in seat order) play on from here to the end of the match.

        Each is shown its seat's view after every entry and its commands are proposed
        `bot_gap_ms` apart (a rejection ends its turn at acting); when no bot has anything
        to send, the tick at the next deadline comes. RuntimeError past `max_entries`."""
        if len(bots) != self.seats:
            raise ValueError(f"{self.ms.game} needs {self.seats} bots, got {len(bots)}")
        while not self.ms.ended:
            if len(self.entries) > max_entries:
                raise RuntimeError(f"no end after {max_entries} entries")
            acted = False
            for seat, bot in enumerate(bots):
                if self.ms.ended:
                    break
                for command in bot.act(self.view(seat)):
                    outcome = self.propose("command", seat, command, self.ts + self.bot_gap_ms)
                    self.commands += 1
                    acted = True
                    rejection = outcome.rejection
                    bot.feedback(command, rejection is None, outcome.warnings, rejection.code if rejection else None)
                    seq = self.entries[-1].seq
                    if rejection is not None:
                        self.rejections.append((seq, seat, command, f"{rejection.code}: {rejection.reason}"))
                        break
                    if outcome.warnings:
                        self.warnings.append((seq, seat, command, tuple(outcome.warnings)))
            if not acted and not self.ms.ended:
                self.advance()


@dataclass
class Simulation:
    """A bot match played in-process through the engine (no server, no clock)."""

    entries: list[Any] = field(default_factory=list)
    outcomes: list[Any] = field(default_factory=list)  # one per entry, the create's empty
    result: Any = None
    rejections: list[tuple[int, int, dict[str, Any], str]] = field(default_factory=list)
    warnings: list[tuple[int, int, dict[str, Any], tuple[str, ...]]] = field(default_factory=list)
    commands: int = 0
    states: list[Any] = field(default_factory=list)  # the match state after each entry


def simulate(
    game: str | Hosted,
    bots: Sequence[Bot],
    *,
    variant: str | None = None,
    options: Mapping[str, Any] | None = None,
    seed: bytes = b"\x00" * 32,
    max_entries: int = 10_000,
) -> Simulation:
    """Play a whole match between `bots` (one a seat) through domain.engine.propose.

    Seat i is claimed by "bot i" at the match's creation time; then `MatchDriver.play_bots`:
    commands a millisecond apart, the deadline's tick when no bot has anything to send."""
    d = MatchDriver(game, variant=variant, options=options, seed=seed, match_id="simulated")
    if len(bots) != d.seats:
        raise ValueError(f"{d.ms.game} needs {d.seats} bots, got {len(bots)}")
    for seat in range(d.seats):
        outcome = d.join(f"bot {seat}", seat, cid=f"join-{seat}")
        if outcome.rejection is not None:
            raise RuntimeError(f"seat {seat}: {outcome.rejection}")
    d.play_bots(bots, max_entries=max_entries)
    return Simulation(
        entries=d.entries, outcomes=d.outcomes, result=d.ms.result, rejections=d.rejections,
        warnings=d.warnings, commands=d.commands, states=d.states,
    )


__all__ = ["AUTO", "T0", "MatchDriver", "Simulation", "simulate"]
