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
from typing import TYPE_CHECKING, Any

import domain.driver
from domain.driver import AUTO, T0
from projections.common import match_view
from projections.contract import Viewer
from projections.registry import Hosted, hosted

if TYPE_CHECKING:  # clients.bots re-exports this module's simulate: no import at run time
    from clients.bots.common import Bot


class MatchDriver(domain.driver.MatchDriver):
    """A match of `game` (a registered name, or a `Hosted` game that need not be
    registered) from its create entry on, every entry proposed through the engine
    (domain.driver.MatchDriver), with what bots need: each seat's view, and bots playing.

    `bot_gap_ms` is how far `play_bots` moves the log time for each bot command."""

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
        super().__init__(
            self.host.rules, variant=variant, options=options, seed=seed, ts=ts, match_id=match_id
        )
        self.bot_gap_ms = bot_gap_ms
        # What bots did in `play_bots`: (seq, seat, command, "code: reason") per rejection,
        # (seq, seat, command, warnings) per accepted command with warnings.
        self.rejections: list[tuple[int, int, dict[str, Any], str]] = []
        self.warnings: list[tuple[int, int, dict[str, Any], tuple[str, ...]]] = []
        self.commands = 0

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
