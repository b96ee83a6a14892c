"""Simultaneous rounds: every seat still in play submits in secret, and the round closes
when all of them are in or its clock runs out.

The game keeps each seat's pending submission in its own state (where its `evolve` puts
it: a later submission replaces an earlier one until the round closes) and tells the
helper how to read it:

    ROUND = SimultaneousRound(
        seats=lambda s: len(s.seats),
        pending=lambda s, seat: s.seats[seat].pending,
        in_play=lambda s, seat: True,
        early_close=lambda s: s.options.early_close,
        close=_close_round,          # (state, at) -> the events that resolve the round
        evolve=evolve,
    )

Then `ROUND.accept(state, submitted_event, now)` is the rules' decision on an accepted
submission: its events (closing the round at once when the last seat in play is in and
the game closes early) and the state they fold to, which the engine takes as it is;
`ROUND.plays(state, default)` what each seat
plays when the round closes (its submission, or the default play for a seat in play
that missed it), and `ROUND.waiting_on(state)` the seats the round still waits for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from domain.contract import Accepted

S = TypeVar("S")
P = TypeVar("P")


@dataclass(frozen=True)
class SimultaneousRound(Generic[S, P]):
    seats: Callable[[S], int]
    """How many seats the state has."""
    pending: Callable[[S, int], P | None]
    """The seat's submission in the current round so far (None: nothing yet)."""
    in_play: Callable[[S, int], bool]
    """Whether the round waits on the seat (one out of the game, or with no legal
    submission this round, is not waited on and plays nothing)."""
    early_close: Callable[[S], bool]
    """Whether the round closes as soon as every seat in play is in (else only at its
    deadline, each submission replaceable until then)."""
    close: Callable[[S, int], Sequence[Any]]
    """The events that resolve the round at time `at` and say what comes next."""
    evolve: Callable[[S, Any], S]
    """The game's fold of one event."""
    all_in_by: Callable[[S], bool] | None = None
    """The game's own `all_in`, where it has a shorter one (a fixed number of seats, all
    always in play): asked instead by `accept`, once a submission. It must give the
    same answer for every state (the game's tests hold it against `all_in`)."""

    def waiting_on(self, state: S) -> tuple[int, ...]:
        """The seats in play that have not submitted yet, in seat order."""
        return tuple(
            seat
            for seat in range(self.seats(state))
            if self.in_play(state, seat) and self.pending(state, seat) is None
        )

    def all_in(self, state: S) -> bool:
        """Whether every seat in play has submitted (stops at the first that has not; a
        seat's submission is looked at before whether it is in play, the dearer question)."""
        pending, in_play = self.pending, self.in_play
        for seat in range(self.seats(state)):
            if pending(state, seat) is None and in_play(state, seat):
                return False
        return True

    def nobody_in(self, state: S) -> bool:
        """Whether no seat has submitted anything this round."""
        return all(self.pending(state, seat) is None for seat in range(self.seats(state)))

    def accept(
        self, state: S, submitted: Any, now: int, warnings: tuple[str, ...] = ()
    ) -> Accepted:
        """The decision on an accepted submission: `submitted` (the game's event that puts
        the seat's submission in its state), then the round's close if that made every
        seat in play in and the game closes early; with `warnings` for the sender and the
        state those events fold to. The submission had to be folded to know whether the
        round closes: the engine takes the state from here rather than folding it again."""
        evolve = self.evolve
        after = evolve(state, submitted)
        if not (self.early_close(after) and (self.all_in_by or self.all_in)(after)):
            return Accepted(events=(submitted,), warnings=warnings, state=after)
        closing = tuple(self.close(after, now))
        for event in closing:
            after = evolve(after, event)
        return Accepted(events=(submitted, *closing), warnings=warnings, state=after)

    def plays(self, state: S, default: Callable[[S, int], P] | None = None) -> tuple[P | None, ...]:
        """What each seat plays as the round closes: its submission; for a seat in play
        that missed the round, `default(state, seat)` (None without a default: no play);
        None for a seat not in play."""
        out: list[P | None] = []
        for seat in range(self.seats(state)):
            sub = self.pending(state, seat)
            if sub is None and default is not None and self.in_play(state, seat):
                sub = default(state, seat)
            out.append(sub)
        return tuple(out)
