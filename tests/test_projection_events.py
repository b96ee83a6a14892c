"""projections.common.ViewEncoder.events is the JSON of project_events, byte for byte, for every
viewer of every entry (Five-Card Trick's kept JSON of a resolved round among them)."""

from __future__ import annotations

import random

import msgspec
import pytest

from clients.bots import BOTS
from clients.driver import simulate
from domain import engine
from projections.common import ViewEncoder, project_events
from projections.contract import Viewer
from projections.registry import hosted

VIEWERS = [Viewer(seat=0), Viewer(seat=1), Viewer(seat=None), Viewer(seat=None, full=True)]


def _check(game: str, seats: int, variant: str | None, seed: int, options: dict[str, int]) -> int:
    bots = [BOTS[game]["random"](random.Random(f"events:{seed}:{i}")) for i in range(seats)]
    sim = simulate(game, bots, variant=variant, options=options, seed=bytes([seed]) * 32)
    host = hosted(game)
    ms = engine.open_match(host.rules, sim.entries[0])
    encoder = ViewEncoder(host.views)
    checked = 0
    for entry in sim.entries[1:]:
        ms, outcome = engine.apply(ms, entry)
        for viewer in VIEWERS:
            events = project_events(host.views, ms, outcome, viewer)
            expected = msgspec.json.encode(events) if events else None
            assert encoder.events(ms, outcome, viewer) == expected, (entry.seq, viewer)
            # A live frame's events and view pieces, asked for in one call: the same.
            shown = encoder.update(ms, outcome, viewer, True)
            if expected is None:
                assert shown is None, (entry.seq, viewer)
            else:
                assert shown == (expected, encoder.parts(ms, viewer)), (entry.seq, viewer)
                assert encoder.update(ms, outcome, viewer, False) == (expected, None)
            checked += 1
    return checked


@pytest.mark.parametrize("variant", ["dm12", "gauntlet", "final", "setnas-curse"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_five_card_trick_events_are_the_events_encoded(variant: str, seed: int) -> None:
    assert _check("five-card-trick", 2, variant, seed, {"rounds": 12, "max_rounds": 14}) > 50


def test_events_of_a_game_without_event_json_is_the_events_encoded() -> None:
    assert _check("keys-to-success", 13, None, 7, {}) > 50
