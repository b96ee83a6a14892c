"""The two-worlds leak property over every registered game and variant
(tests/conformance/leaks.py), and proof that it catches a leak.

Each game's `twins` draws two matches with the same public play and a different hidden
input; every viewer that may not tell them apart must receive the same bytes of both up
to the reveal. Hypothesis draws the seeds.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.engine import MatchState
from domain.games import five_card_trick as fct
from domain.games.keys_to_success import ChatSent
from projections.contract import GameViews, Viewer
from projections.registry import GAMES, Hosted
from tests.conformance import hosted_games
from tests.conformance.leaks import check_no_leak, check_twins, play, twins_of

CASES = [
    pytest.param(game, variant.name, id=f"{game}-{variant.name}")
    for game, h in hosted_games().items()
    for variant in h.rules.variants
]


@pytest.mark.parametrize(("game", "variant"), CASES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64 - 1))
def test_no_viewer_tells_the_twin_worlds_apart(game: str, variant: str, seed: int) -> None:
    check_no_leak(GAMES[game], variant, seed)


@pytest.mark.parametrize(("game", "variant"), CASES)
def test_twins_are_a_function_of_the_seed(game: str, variant: str) -> None:
    first = twins_of(GAMES[game], variant, 7)
    assert msgspec.json.encode(first) == msgspec.json.encode(twins_of(GAMES[game], variant, 7))
    assert msgspec.json.encode(first) != msgspec.json.encode(twins_of(GAMES[game], variant, 8))


# --- the check catches a leak ----------------------------------------------------------


class Leaky:
    """A game's views, but for the methods a subclass overrides. The base's JSON
    shortcuts (`view_json`, `event_json`: the same bytes as its `view` and `event`,
    checked for every game by tests/conformance/test_games.py) are hidden, so that the
    server's frames are built from the overridden methods."""

    SHORTCUTS = ("view_json", "event_json")

    def __init__(self, base: GameViews) -> None:
        self.base = base

    def __getattr__(self, name: str) -> Any:
        if name in self.SHORTCUTS:
            raise AttributeError(name)
        return getattr(self.base, name)


def leaky(game: str, views: Leaky) -> Hosted:
    return Hosted(rules=GAMES[game].rules, views=views)  # type: ignore[arg-type]


class SubmissionsShown(Leaky):
    """Five-Card Trick, but a submission's actions reach every viewer before the round
    resolves (the other seat sees the hidden seat's replaced submissions)."""

    def event(self, ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
        if isinstance(event, fct.Submitted):
            return self.base.event(ms, event, Viewer(full=True))
        return self.base.event(ms, event, viewer)


class WallsCounted(Leaky):
    """Memory Maze, but every viewer's view says how many invisible walls the maze has."""

    def view(self, ms: MatchState, viewer: Viewer) -> dict[str, Any]:
        return {**self.base.view(ms, viewer), "walls": len(ms.game_state.maze.walls)}


class EveryChatHeard(Leaky):
    """Keys to Success, but every seat hears every level's chat."""

    def event(self, ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
        if isinstance(event, ChatSent) and viewer.seat is not None:
            return self.base.event(ms, event, Viewer(full=True))
        return self.base.event(ms, event, viewer)


@pytest.mark.parametrize("variant", ["dm12", "final"])
def test_a_submission_shown_before_the_round_resolves_is_caught(variant: str) -> None:
    hosted = leaky("five-card-trick", SubmissionsShown(GAMES["five-card-trick"].views))
    for seed in range(3):
        hidden = twins_of(hosted, variant, seed).tells[0]
        with pytest.raises(AssertionError, match=rf"five-card-trick {variant}: seat {1 - hidden} can tell"):
            check_no_leak(hosted, variant, seed)
        check_no_leak(GAMES["five-card-trick"], variant, seed)  # the real views keep it


@pytest.mark.parametrize("variant", ["black-garnet", "crazy"])
def test_a_count_of_the_walls_is_caught(variant: str) -> None:
    hosted = leaky("memory-maze", WallsCounted(GAMES["memory-maze"].views))
    for seed in range(3):
        with pytest.raises(AssertionError, match=rf"memory-maze {variant}: seat 0 can tell .*\.walls"):
            check_no_leak(hosted, variant, seed)
        check_no_leak(GAMES["memory-maze"], variant, seed)


def test_another_levels_chat_is_caught() -> None:
    game, variant = "keys-to-success", "keys-to-success"
    hosted = leaky(game, EveryChatHeard(GAMES[game].views))
    caught = 0
    for seed in range(40):
        twins = twins_of(hosted, variant, seed)
        (watched,) = set(range(twins.worlds[0].options["seats"])) - set(twins.tells)
        played = play(GAMES[game], variant, twins.worlds[0], twins.until and twins.until[0])
        heard_elsewhere = any(
            isinstance(e, ChatSent) and watched not in e.to
            for o in played.outcomes[: played.cut]
            for e in o.events
        )
        if not heard_elsewhere:
            continue
        with pytest.raises(AssertionError, match=rf"{game} {variant}: seat {watched} can tell"):
            check_twins(hosted, twins)
        check_twins(GAMES[game], twins)
        caught += 1
        if caught == 3:
            break
    assert caught == 3
