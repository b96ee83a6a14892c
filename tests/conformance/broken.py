"""Games broken on purpose, to show that the conformance checks catch each breakage.

`Toy` is the toy race of tests/toygame.py made whole: an options schema with every
bound its validation enforces, projections with twin worlds for the leak property, and
a bot. It passes every check. Each other class here differs from it in one way:

- `NondeterministicFold`: the state holds a tuple made by iterating a set of strings,
  so its order (and the state's bytes) depends on the process's PYTHONHASHSEED;
- `ValidationNarrower`: the schema allows a `turn_ms` the validation refuses;
- `ValidationWider`: the validation accepts a `turn_ms` the schema excludes;
- `UnnamedOption`: a refused option's message does not name it;
- `LeakyViews`: seat 1's view shows the secret target.

Rules and views are classes (not modules) so that another process can import them by
name (tests/conformance/fold_worker.py); none of these games is registered.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import msgspec

from domain.contract import Accepted, Decision, OptionsError
from domain.engine import MatchState, draw_key
from domain.kit.setup import all_public, always_seeded
from domain.rng import Rng
from projections.contract import NOTHING_SEALED, Twins, TwinStep, TwinWorld, Viewer
from projections.registry import Hosted
from tests import toygame

OPTIONS = toygame.Options()
LABELS = ("ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen", "ibis", "jay", "kiwi", "lynx")


class Toy:
    """The toy race, whole and sound."""

    name = "toy-race"
    title = "Toy race"
    rules_version = "toy-race-1"
    variants = toygame.variants
    default_variant = toygame.default_variant
    command_type = toygame.Add

    SCHEMA_MAX = 60_000  # the most `turn_ms` the schema allows
    VALID_MAX = 60_000  # the most `turn_ms` configure accepts

    @classmethod
    def options_schema(cls, variant: str) -> dict[str, Any]:
        return {
            "turn_ms": {
                "type": "integer", "minimum": 1, "maximum": cls.SCHEMA_MAX, "default": 1000,
                "description": "milliseconds a seat has for its turn",
            }
        }

    @classmethod
    def configure(cls, variant: str, options: Mapping[str, Any]) -> toygame.Options:
        if variant not in {v.name for v in cls.variants}:
            raise OptionsError(f"unknown variant {variant!r}")
        if not isinstance(options, Mapping):
            raise OptionsError("options must be an object")
        unknown = sorted(str(k) for k in options if k != "turn_ms")
        if unknown:
            raise OptionsError(f"unknown option {', '.join(map(repr, unknown))}")
        value = options.get("turn_ms", 1000)
        if not isinstance(value, int) or isinstance(value, bool):
            raise OptionsError(cls.message("turn_ms", "must be an integer"))
        if not 1 <= value <= cls.VALID_MAX:
            raise OptionsError(cls.message("turn_ms", f"must be between 1 and {cls.VALID_MAX}"))
        return toygame.Options(turn_ms=value)

    @staticmethod
    def message(option: str, what: str) -> str:
        return f"option {option!r} {what}"

    seat_count = staticmethod(toygame.seat_count)
    make_setup = staticmethod(toygame.make_setup)
    public_options = staticmethod(all_public)
    seeded_setup = staticmethod(always_seeded)
    initial_state = staticmethod(toygame.initial_state)
    start = staticmethod(toygame.start)
    evolve = staticmethod(toygame.evolve)
    deadline = staticmethod(toygame.deadline)
    expire = staticmethod(toygame.expire)
    result = staticmethod(toygame.result)
    round_of = staticmethod(toygame.round_of)

    @staticmethod
    def decide(state: toygame.State, seat: int, command: toygame.Add, now: int) -> Decision:
        return toygame.decide(state, seat, command, now)


class ToyViews:
    """The toy race as each viewer sees it: the target only once the match is over."""

    sealed = NOTHING_SEALED

    @staticmethod
    def event(ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
        return toygame.Views.event(ms, event, viewer)

    @staticmethod
    def view(ms: MatchState, viewer: Viewer) -> dict[str, Any]:
        return toygame.Views.view(ms, viewer)

    @staticmethod
    def describe(ms: MatchState, event: Any) -> list[str]:
        return toygame.Views.describe(ms, event)

    @staticmethod
    def twins(variant: str, rng: Rng) -> Twins:
        """Two matches whose secret targets differ, with the same few additions: no
        total reaches 5, the least target, so neither ends and nobody may tell them apart."""
        def target(seed: bytes) -> Any:  # as drawn once both seats are taken (no entropy)
            return Toy.make_setup(OPTIONS, Rng(draw_key(seed.hex(), [None, None]), "setup"))

        seeds = [bytes(rng.below(256) for _ in range(32)) for _ in range(2)]
        while target(seeds[1]) == target(seeds[0]):
            seeds[1] = bytes(rng.below(256) for _ in range(32))
        script = tuple(
            TwinStep(ts=2_000 + 10 * i, kind="command", seat=i % 2, body={"type": "add", "n": 1 + rng.below(2)})
            for i in range(4)
        )
        worlds = tuple(TwinWorld(options={}, seed=s, created=1_000, script=script) for s in seeds)
        return Twins(variant=variant, worlds=(worlds[0], worlds[1]), tells=())


class ToyBot:
    """Adds 1 to 3 on its turn, once a turn."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.played: int | None = None

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        gs = view["game_state"]
        if not view["started"] or view["ended"] or gs["turn"] != view["you"] or self.played == gs["round"]:
            return []
        self.played = gs["round"]
        return [{"type": "add", "n": self.rng.randint(1, 3)}]

    def feedback(self, command: dict[str, Any], accepted: bool, warnings: Sequence[str], code: str | None) -> None:
        if not accepted:
            self.played = None


def toy_bots(seats: int) -> list[Any]:
    return [ToyBot] * seats


# --- broken on purpose ------------------------------------------------------------------


class SeenState(toygame.State, frozen=True):
    seen: tuple[str, ...] = ()


class NondeterministicFold(Toy):
    """Keeps the labels of the additions made so far in set order."""

    @staticmethod
    def initial_state(options: Any, setup: Any, seed: bytes) -> SeenState:
        plain = toygame.initial_state(options, setup, seed)
        return SeenState(**msgspec.structs.asdict(plain))

    @staticmethod
    def evolve(state: Any, event: Any) -> Any:
        state = toygame.evolve(state, event)
        if isinstance(event, toygame.Added):
            label = LABELS[state.round % len(LABELS)]
            return msgspec.structs.replace(state, seen=tuple({*state.seen, label}))
        return state


class FoldedState(Toy):
    """Decides as the toy does, each accepted command with the state its events fold to
    (Accepted.state, as the kit's rounds give it): sound."""

    @staticmethod
    def decide(state: toygame.State, seat: int, command: toygame.Add, now: int) -> Decision:
        decision = toygame.decide(state, seat, command, now)
        if isinstance(decision, Accepted):
            folded = state
            for event in decision.events:
                folded = toygame.evolve(folded, event)
            return msgspec.structs.replace(decision, state=folded)
        return decision


class StateNotItsFold(Toy):
    """Gives each accepted command the state it was decided on, not its events' fold."""

    @staticmethod
    def decide(state: toygame.State, seat: int, command: toygame.Add, now: int) -> Decision:
        decision = toygame.decide(state, seat, command, now)
        if isinstance(decision, Accepted):
            return msgspec.structs.replace(decision, state=state)
        return decision


class ValidationNarrower(Toy):
    VALID_MAX = 30_000


class ValidationWider(Toy):
    VALID_MAX = 120_000


class UnnamedOption(Toy):
    @staticmethod
    def message(option: str, what: str) -> str:
        return f"the value {what}"


class LeakyViews(ToyViews):
    @staticmethod
    def view(ms: MatchState, viewer: Viewer) -> dict[str, Any]:
        out = toygame.Views.view(ms, viewer)
        if viewer.seat == 1:
            out["target"] = ms.game_state.target
        return out


class StaleViewJson(ToyViews):
    """A `view_json` shortcut (projections.common.ViewEncoder) that falls behind `view`:
    a viewer's JSON kept from the first state it was asked for."""

    _kept: ClassVar[dict[Any, bytes]] = {}

    @staticmethod
    def view_json(ms: MatchState, viewer: Viewer) -> bytes:
        key = (ms.match_id, ms.seed, viewer)
        if key not in StaleViewJson._kept:
            StaleViewJson._kept[key] = msgspec.json.encode(ToyViews.view(ms, viewer))
        return StaleViewJson._kept[key]


class ShortEventJson(ToyViews):
    """An `event_json` shortcut that leaves out the last field `event` gives."""

    @staticmethod
    def event_json(ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
        out = ToyViews.event(ms, event, viewer)
        return None if out is None else dict(list(out.items())[:-1])


def _hosted(rules: type, views: type = ToyViews) -> Hosted:
    return Hosted(rules=rules, views=views)  # type: ignore[arg-type]


TOY = _hosted(Toy)
BROKEN_FOLD = _hosted(NondeterministicFold)
FOLDED_STATE = _hosted(FoldedState)
BROKEN_STATE = _hosted(StateNotItsFold)
BROKEN_NARROWER = _hosted(ValidationNarrower)
BROKEN_WIDER = _hosted(ValidationWider)
BROKEN_UNNAMED = _hosted(UnnamedOption)
BROKEN_LEAK = _hosted(Toy, LeakyViews)
BROKEN_VIEW_JSON = _hosted(Toy, StaleViewJson)
BROKEN_EVENT_JSON = _hosted(Toy, ShortEventJson)
