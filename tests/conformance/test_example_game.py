"""The example game of docs/adding-a-game.md (tests/example_game/), registered the way a
new game is: one registry line for its rules and views, its bots module found by its
name, its rules page in docs/rules/. Every conformance check then passes on it with no
test code of its own, which is what the page promises."""

from __future__ import annotations

import random
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from clients.bots import lineup
from projections.registry import GAMES, Hosted
from tests.conformance import checks
from tests.conformance.leaks import check_no_leak
from tests.example_game import bots, odd_or_even, views

GAME = odd_or_even.name
VARIANT = "classic"
HERE = Path(__file__).resolve().parent.parent / "example_game"


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Hosted, Path]]:
    """Odd or Even hosted: in the registry, its bots where a game's bots are found, and a
    tree whose docs/rules/ holds its page (and the page it links to)."""
    hosted = Hosted(rules=odd_or_even, views=views)
    monkeypatch.setitem(GAMES, GAME, hosted)
    monkeypatch.setitem(sys.modules, "clients.bots.odd_or_even", bots)
    (tmp_path / "docs" / "rules").mkdir(parents=True)
    shutil.copy(HERE / "odd-or-even.md", tmp_path / "docs" / "rules" / "odd-or-even.md")
    shutil.copy(checks.ROOT / "docs" / "adding-a-game.md", tmp_path / "docs" / "adding-a-game.md")
    yield hosted, tmp_path


def test_its_bots_are_found_by_its_name(registered: tuple[Hosted, Path]) -> None:
    assert lineup(GAME, 2) == ["random", "random"]
    checks.check_bots_exist(registered[0], VARIANT)


def test_it_passes_every_conformance_check(registered: tuple[Hosted, Path]) -> None:
    hosted, root = registered
    played = [
        checks.check_bots_play(hosted, VARIANT, seed, miss=miss)
        for seed in (0, 1) for miss in (0.0, 0.3)
    ]
    logs = [m.entries for m in played]
    checks.check_fold_deterministic(hosted, VARIANT, logs)
    assert checks.check_decided_state_is_the_fold(hosted, VARIANT, played[1]) > 0
    checks.check_tampering(hosted, VARIANT, logs[0], random.Random(0))
    checks.check_options(hosted, VARIANT)
    for seed in range(5):
        check_no_leak(hosted, VARIANT, seed)
    checks.check_docs(hosted, root)


def test_its_round_is_the_kit_s_simultaneous_round(registered: tuple[Hosted, Path]) -> None:
    """The rules the page walks through: a replaced choice, the early close, a miss."""
    m = checks.play_match(registered[0], VARIANT, 0, miss=0.0).driver
    resolved = [e for out in m.outcomes for e in out.events if isinstance(e, odd_or_even.RoundResolved)]
    assert len(resolved) == 9 and m.ms.ended
    for r in resolved:
        even = sum(r.fingers) % 2 == 0
        assert r.scores[0] - (1 if even else 0) + r.scores[1] - (0 if even else 1) == r.round - 1
