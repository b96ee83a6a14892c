"""The contract every game module fulfils.

A game is pure: it builds its initial state from validated options and a recorded setup,
decides a command against a state into events or a rejection, folds events into state,
and says when its next deadline falls. "Now" is always the log entry's server timestamp
in milliseconds, handed in by the engine; a game never reads a clock.

States, events, commands and options are frozen msgspec Structs. Events and commands are
tagged (`tag=` on the Struct) so they encode as JSON objects with a "type" field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import msgspec

from domain.rng import Rng


class Rejection(msgspec.Struct, frozen=True):
    """A command the rules refuse: nothing changes; the sender is told why."""

    code: str
    reason: str


class Accepted(msgspec.Struct, frozen=True):
    """A command the rules take: its events, and warnings for the sender alone.

    `state`: the game's state after the events, when the rules have folded them already
    to decide (the kit's `SimultaneousRound.accept` does): the engine takes it rather
    than folding the events again. It must be exactly what `evolve` makes of the state
    the command was decided on, event after event (the conformance suite checks it for
    every game); None: the engine folds them."""

    events: tuple[Any, ...]
    warnings: tuple[str, ...] = ()
    state: Any = None


Decision = Accepted | Rejection


class Result(msgspec.Struct, frozen=True):
    """How a finished game ended. `winner` is a seat, or None for a draw."""

    winner: int | None
    reason: str
    rounds: int
    scores: tuple[int, ...] = ()


class VariantInfo(msgspec.Struct, frozen=True):
    name: str
    title: str
    summary: str


class OptionsError(ValueError):
    """Match options that do not fit the game; the message says which and why."""


class Game(Protocol):
    """What the engine needs of a game module (see domain/games/*)."""

    name: str
    title: str
    rules_version: str
    variants: Sequence[VariantInfo]
    default_variant: str
    command_type: Any
    """A msgspec-decodable type (usually a tagged union) for the game's commands."""

    def configure(self, variant: str, options: Mapping[str, Any]) -> Any:
        """Validated options (a frozen Struct) or OptionsError naming the bad option."""
        ...

    def options_schema(self, variant: str) -> dict[str, Any]:
        """The options a client may set, with their defaults for this variant."""
        ...

    def seat_count(self, options: Any) -> int: ...

    def make_setup(self, options: Any, rng: Rng) -> Any:
        """The secret setup (JSON-ready builtins) drawn from `rng`; {} if none.

        Log version 1: drawn from the seed at creation and recorded in the log; `verify`
        draws it again to show it was not picked by hand. Version 2: drawn when the last
        seat is taken, from the key of the seed and the players' entropy (the engine
        calls it once at creation on a stand-in key only to learn, by `seeded_setup`,
        whether the host gave it); a fold draws it again (domain/engine.py)."""
        ...

    def seeded_setup(self, setup: Any) -> bool:
        """Whether `setup` was drawn from the seed (so `verify` draws it again), or given
        (a host's own maze: reported as such, not redrawn). Most games:
        `domain.kit.setup.always_seeded`."""
        ...

    def public_options(self, options: Any) -> Any:
        """The options as recorded in the log's create entry and shown to every viewer.

        A game that accepts secret options (a host-supplied board) copies them into the
        setup in make_setup (so they are committed and revealed at the end) and returns
        here the options without them; the recorded options must configure() again.
        Most games: `domain.kit.setup.all_public`."""
        ...

    def initial_state(self, options: Any, setup: Any, seed: bytes) -> Any: ...

    def start(self, state: Any, now: int) -> tuple[Any, ...]:
        """Events when every seat is taken and play begins."""
        ...

    def decide(self, state: Any, seat: int, command: Any, now: int) -> Decision: ...

    def evolve(self, state: Any, event: Any) -> Any:
        """Fold one event (produced by this game) into the state."""
        ...

    def deadline(self, state: Any) -> int | None:
        """When, in log milliseconds, the state next changes on its own (None: never)."""
        ...

    def expire(self, state: Any, at: int) -> tuple[Any, ...]:
        """Events when the deadline `at` (== deadline(state)) has passed.

        The events must move the deadline on, or end the game."""
        ...

    def result(self, state: Any) -> Result | None:
        """None while the game goes on."""
        ...

    def round_of(self, state: Any) -> int:
        """The round the state is in (for naming rounds in replays and audits)."""
        ...
