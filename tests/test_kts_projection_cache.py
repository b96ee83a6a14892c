"""Keys to Success's `view_json` gives the bytes of encoding `view`, for every viewer of
every state of bots' matches: the parts it keeps (a state's levels, results, chat and
history, each past round as a seat sees it) are shared only by viewers who see the same
of them. The views of two matches are asked for alternately, as a server with both in
play asks (the parts kept from one state must not leak into the other's)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from domain import engine
from domain.engine import MatchState
from domain.games.keys_to_success import VARIANT_NAMES
from projections import keys_to_success as kts_views
from projections.contract import AUDITOR, SPECTATOR, Viewer
from tests.conformance import hosted_games
from tests.conformance.checks import play_match

_encode = msgspec.json.Encoder().encode
HOSTED = hosted_games()["keys-to-success"]


def states(seed: int, variant: str) -> list[MatchState]:
    entries = play_match(HOSTED, variant, seed, miss=0.2).entries
    ms = engine.open_match(HOSTED.rules, entries[0])
    out = [ms]
    for entry in entries[1:]:
        ms, _ = engine.apply(ms, entry)
        out.append(ms)
    return out


def viewers(ms: MatchState) -> list[Viewer]:
    gs: Any = ms.game_state
    seats = [Viewer(seat=s) for s in range(len(gs.players))]
    return [*seats, SPECTATOR, AUDITOR, *(Viewer(seat=s, full=True) for s in range(2))]


def check(ms: MatchState) -> None:
    for viewer in viewers(ms):
        assert kts_views.view_json(ms, viewer) == _encode(kts_views.view(ms, viewer)), viewer


@pytest.mark.parametrize("seeds", [(1, 2), (3, 4)])
def test_view_json_is_the_views_bytes(seeds: tuple[int, int]) -> None:
    names = VARIANT_NAMES
    a = states(seeds[0], names[0])
    b = states(seeds[1], names[-1])
    for i in range(max(len(a), len(b))):
        if i < len(a):
            check(a[i])
        if i < len(b):
            check(b[i])
    for ms in a:  # the same states again, their parts kept from the first pass
        check(ms)
