"""The conformance checks catch a game broken on purpose (tests/conformance/broken.py):
a nondeterministic fold, options outside the schema, a leak, a missing rules page. The
same checks pass on the sound toy game these are derived from, so each failure is the
breakage's doing."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from projections.registry import GAMES, Hosted
from tests.conformance import checks, test_games
from tests.conformance.broken import (
    BROKEN_EVENT_JSON,
    BROKEN_FOLD,
    BROKEN_LEAK,
    BROKEN_NARROWER,
    BROKEN_STATE,
    BROKEN_UNNAMED,
    BROKEN_VIEW_JSON,
    BROKEN_WIDER,
    FOLDED_STATE,
    TOY,
    toy_bots,
)
from tests.conformance.leaks import check_no_leak

VARIANT = "plain"
# Two hash seeds under which the labels of NondeterministicFold come out in different
# orders (checked below), so that the failure does not depend on this process's seed.
HASH_SEEDS = ("1", "2")


def logs_of(hosted: Hosted) -> list[Any]:
    return [
        checks.check_bots_play(hosted, VARIANT, 0, bots=toy_bots).entries,
        checks.check_bots_play(hosted, VARIANT, 1, miss=0.3, bots=toy_bots).entries,
    ]


def test_the_sound_toy_passes_every_check() -> None:
    logs = logs_of(TOY)
    checks.check_fold_deterministic(TOY, VARIANT, logs, hash_seeds=HASH_SEEDS)
    for log in logs:
        checks.check_tampering(TOY, VARIANT, log, random.Random(0))
    checks.check_options(TOY, VARIANT)
    for seed in range(3):
        check_no_leak(TOY, VARIANT, seed)


def test_a_nondeterministic_fold_is_caught() -> None:
    logs = logs_of(BROKEN_FOLD)  # in one process, it plays and verifies
    elsewhere = checks.fold_elsewhere(BROKEN_FOLD, logs[:1], HASH_SEEDS)
    assert elsewhere[0][0]["state"] != elsewhere[1][0]["state"], "the hash seeds do not show the breakage"
    with pytest.raises(AssertionError, match=r"^toy-race \[plain\]: log 0: the final state differs in a process with PYTHONHASHSEED=") as caught:
        checks.check_fold_deterministic(BROKEN_FOLD, VARIANT, logs, hash_seeds=HASH_SEEDS)
    assert "not deterministic" in str(caught.value)


@pytest.mark.parametrize(
    ("hosted", "found"),
    [
        (BROKEN_NARROWER, r"options inside the schema \(drawn inside the schema\) are refused: \{'turn_ms': \d+\}"),
        (BROKEN_WIDER, r"option 'turn_ms' above the maximum \(60001\) is outside the schema, yet configure accepts it"),
        (BROKEN_UNNAMED, r"option 'turn_ms' a value of type number \(0.5\) is refused without naming it"),
    ],
    ids=["validation-narrower", "validation-wider", "unnamed-option"],
)
def test_options_outside_the_schema_are_caught(hosted: Hosted, found: str) -> None:
    with pytest.raises(AssertionError, match=r"^toy-race \[plain\]: " + found):
        checks.check_options(hosted, VARIANT)


def test_a_registered_game_is_checked_on_the_schema_get_games_publishes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(GAMES, "toy-race", BROKEN_WIDER)
    monkeypatch.setattr(test_games, "published", test_games.games_listing)
    schema = test_games.published_schema("toy-race", VARIANT)
    assert schema == BROKEN_WIDER.rules.options_schema(VARIANT)
    with pytest.raises(AssertionError, match="outside the schema, yet configure accepts it"):
        checks.check_options(GAMES["toy-race"], VARIANT, schema)


def test_a_leak_is_caught() -> None:
    with pytest.raises(AssertionError, match=r"^toy-race plain: seat 1 can tell the twin worlds apart"):
        check_no_leak(BROKEN_LEAK, VARIANT, 0)


def test_json_shortcuts_that_disagree_with_the_views_are_caught() -> None:
    assert checks.check_json_shortcuts(TOY, VARIANT, checks.check_bots_play(TOY, VARIANT, 0, bots=toy_bots)) > 0
    stale = checks.check_bots_play(BROKEN_VIEW_JSON, VARIANT, 0, bots=toy_bots)
    with pytest.raises(AssertionError, match=r"^toy-race \[plain\]: entry \d+: seat \d: the view as sent is not"):
        checks.check_json_shortcuts(BROKEN_VIEW_JSON, VARIANT, stale)
    short = checks.check_bots_play(BROKEN_EVENT_JSON, VARIANT, 0, bots=toy_bots)
    with pytest.raises(AssertionError, match=r"^toy-race \[plain\]: entry \d+: seat \d: the events as sent"):
        checks.check_json_shortcuts(BROKEN_EVENT_JSON, VARIANT, short)


def test_a_decision_whose_state_is_not_its_events_fold_is_caught() -> None:
    assert checks.check_decided_state_is_the_fold(TOY, VARIANT, checks.check_bots_play(TOY, VARIANT, 0, bots=toy_bots)) == 0
    sound = checks.check_bots_play(FOLDED_STATE, VARIANT, 1, miss=0.3, bots=toy_bots)
    assert checks.check_decided_state_is_the_fold(FOLDED_STATE, VARIANT, sound) > 0
    # (its matches never end: the sound one's commands, decided by its rules)
    with pytest.raises(AssertionError, match=r"^toy-race \[plain\]: entry \d+: the state its decision carried is not"):
        checks.check_decided_state_is_the_fold(BROKEN_STATE, VARIANT, sound)


def test_bots_that_miss_deadlines_do_miss_them() -> None:
    m = checks.check_bots_play(TOY, VARIANT, 2, miss=0.3, bots=toy_bots)
    assert m.missed_deadlines() >= 1, m.naps
    with pytest.raises(AssertionError, match="no seat slept through a deadline"):
        checks.check_bots_play(TOY, VARIANT, 2, miss=1e-9, bots=toy_bots)


def test_a_missing_rules_page_or_protocol_section_is_caught(tmp_path: Path) -> None:
    page = tmp_path / "docs" / "rules" / "toy-race.md"
    with pytest.raises(AssertionError, match=r"^toy-race: no rules page docs/rules/toy-race\.md"):
        checks.check_docs(TOY, tmp_path)
    page.parent.mkdir(parents=True)
    rules = "# Toy race\n\nOne variant, `plain`. See [the protocol](../protocol.md#games).\n"
    page.write_text(rules)
    with pytest.raises(AssertionError, match=r"^toy-race: docs/rules/toy-race\.md has no '## Protocol' section"):
        checks.check_docs(TOY, tmp_path)
    page.write_text(rules + "\n## Protocol\n\nNothing yet.\n")
    with pytest.raises(AssertionError, match="shows no 'add' command"):
        checks.check_docs(TOY, tmp_path)
    page.write_text(rules + '\n## Protocol\n\n```json\n{"type": "add", "n": 2}\n```\n')
    with pytest.raises(AssertionError, match=r"the link \.\./protocol\.md#games leads to no file"):
        checks.check_docs(TOY, tmp_path)
    (tmp_path / "docs" / "protocol.md").write_text("# Protocol\n\n## WebSocket\n")
    with pytest.raises(AssertionError, match=r"the link \.\./protocol\.md#games leads to no heading"):
        checks.check_docs(TOY, tmp_path)
    (tmp_path / "docs" / "protocol.md").write_text("# Protocol\n\n## Games\n")
    checks.check_docs(TOY, tmp_path)
