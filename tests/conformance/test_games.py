"""The conformance suite over the registry: every check of tests/conformance/checks.py for
every game in `projections.registry.GAMES` and every variant of it. A game is covered
here the moment it is registered."""

from __future__ import annotations

import asyncio
import json
import random
import re
from functools import cache
from typing import Any

import pytest
from starlette.requests import Request

from domain.kit.rounds import SimultaneousRound
from server.app import list_games
from tests.conformance import checks, hosted_games

GAMES = hosted_games()
CASES = [(game, v.name) for game, h in GAMES.items() for v in h.rules.variants]
IDS = [f"{game}:{variant}" for game, variant in CASES]
SEEDS = (0, 1)
MISS = 0.08  # the chance a bot falls asleep when shown a view with a deadline
# The games whose rounds are the kit's (their submissions decided by its `accept`).
ROUND_KIT_GAMES = {g for g, h in GAMES.items() if isinstance(getattr(h.rules, "ROUND", None), SimultaneousRound)}


@cache
def bot_match(game: str, variant: str, seed: int, miss: float) -> checks.BotMatch:
    return checks.check_bots_play(GAMES[game], variant, seed, miss=miss)


def logs(game: str, variant: str) -> list[Any]:
    return [bot_match(game, variant, seed, miss).entries for seed in SEEDS for miss in (0.0, MISS)]


@pytest.mark.parametrize(("game", "variant"), CASES, ids=IDS)
def test_bots_play_to_the_end(game: str, variant: str) -> None:
    for seed in SEEDS:
        bot_match(game, variant, seed, 0.0)


@pytest.mark.parametrize(("game", "variant"), CASES, ids=IDS)
def test_bots_play_to_the_end_through_missed_deadlines(game: str, variant: str) -> None:
    for seed in SEEDS:
        bot_match(game, variant, seed, MISS)


@pytest.mark.parametrize(("game", "variant"), CASES, ids=IDS)
def test_a_log_folds_the_same_in_other_processes(game: str, variant: str) -> None:
    checks.check_fold_deterministic(GAMES[game], variant, logs(game, variant))


@pytest.mark.parametrize(("game", "variant"), CASES, ids=IDS)
def test_verify_names_the_entry_of_any_edit(game: str, variant: str) -> None:
    rng = random.Random(f"{game}:{variant}")
    for miss in (0.0, MISS):
        checks.check_tampering(GAMES[game], variant, bot_match(game, variant, SEEDS[0], miss).entries, rng)


@pytest.mark.parametrize(("game", "variant"), CASES, ids=IDS)
def test_frames_carry_the_views_and_events_the_game_gives(game: str, variant: str) -> None:
    for miss in (0.0, MISS):
        assert checks.check_json_shortcuts(GAMES[game], variant, bot_match(game, variant, SEEDS[0], miss)) > 0


def games_listing() -> dict[str, Any]:
    """GET /games, as a client reads it (the app's own handler), by game name."""
    response = asyncio.run(list_games(Request({"type": "http", "method": "GET", "path": "/games"})))
    assert response.status_code == 200, response.body
    return {g["name"]: g for g in json.loads(bytes(response.body))["games"]}


published = cache(games_listing)


def published_schema(game: str, variant: str) -> dict[str, Any]:
    found = [v for v in published()[game]["variants"] if v["name"] == variant]
    assert len(found) == 1, f"GET /games lists {game} [{variant}] {len(found)} times"
    schema: dict[str, Any] = found[0]["options"]
    return schema


@pytest.mark.parametrize(("game", "variant"), CASES, ids=IDS)
def test_the_published_options_schema_and_configure_agree(game: str, variant: str) -> None:
    checks.check_options(GAMES[game], variant, published_schema(game, variant))


def test_get_games_lists_every_registered_game_and_variant() -> None:
    assert set(GAMES) <= set(published())  # (and any toy game a server test registered)
    for game, h in GAMES.items():
        assert [v["name"] for v in published()[game]["variants"]] == [v.name for v in h.rules.variants]


@pytest.mark.parametrize("game", list(GAMES))
def test_a_rules_page_with_a_protocol_section(game: str) -> None:
    checks.check_docs(GAMES[game])


def test_the_generic_protocol_has_no_game_of_its_own() -> None:
    """Each game's protocol is on its rules page, so adding a game leaves
    docs/protocol.md alone; its links lead somewhere."""
    page = checks.ROOT / "docs" / "protocol.md"
    headings = re.findall(r"^#+ (.*)$", page.read_text(), re.M)
    for game, h in GAMES.items():
        assert not [x for x in headings if h.rules.title in x or game in x], (game, headings)
    checks.check_links(page)


@pytest.mark.parametrize(("game", "variant"), CASES, ids=IDS)
def test_bots_for_the_default_line_up(game: str, variant: str) -> None:
    checks.check_bots_exist(GAMES[game], variant)


# --- what stays sealed after the match (projections/seal.py) ---------------------------------


@pytest.mark.parametrize("game", list(GAMES))
def test_the_game_declares_what_stays_sealed_and_its_rules_page_says(game: str) -> None:
    """Every game's views declare `sealed` (not left to the default), and its rules page
    says what stays sealed after the match, or that nothing does."""
    views = GAMES[game].views
    assert hasattr(views, "sealed"), f"{game}: its views declare no `sealed` (projections/contract.py)"
    page = (checks.ROOT / "docs" / "rules" / f"{game}.md").read_text()
    assert re.search(r"\bsealed\b", page, re.I), f"docs/rules/{game}.md does not say what stays sealed"
    if views.sealed.fields:
        assert re.search(r"^## .*sealed", page, re.I | re.M), f"docs/rules/{game}.md: no section on what stays sealed"


@pytest.mark.parametrize(("game", "variant"), CASES, ids=IDS)
def test_the_public_log_verifies_and_keeps_the_audit_key(game: str, variant: str) -> None:
    """A bot match's public log: the audit key shown only by its digest, and it verifies
    (every value it withholds tried); a game that seals nothing withholds nothing."""
    from domain.canonical import canonical
    from projections import seal

    hosted = GAMES[game]
    entries = bot_match(game, variant, SEEDS[0], MISS).entries
    public = seal.public_log(hosted.rules, hosted.views, entries)
    assert entries[0].body["audit"] not in canonical(public).decode()
    checked = seal.verify_public({game: (hosted.rules, hosted.views)}, public)
    assert checked.ok, checked.failure
    if not hosted.views.sealed.fields:
        assert checked.withheld == 0


@pytest.mark.parametrize(("game", "variant"), CASES, ids=IDS)
def test_a_command_decoded_before_is_decided_as_its_body(game: str, variant: str) -> None:
    for miss in (0.0, MISS):
        assert checks.check_decoded_command_given(GAMES[game], variant, bot_match(game, variant, SEEDS[0], miss)) > 0


@pytest.mark.parametrize(("game", "variant"), CASES, ids=IDS)
def test_a_state_a_decision_carries_is_its_events_fold(game: str, variant: str) -> None:
    carried = [
        checks.check_decided_state_is_the_fold(GAMES[game], variant, bot_match(game, variant, SEEDS[0], miss))
        for miss in (0.0, MISS)
    ]
    if game in ROUND_KIT_GAMES:  # (their submissions are decided by the kit's accept)
        assert min(carried) > 0
