"""Keys to Success: nothing outside a player's level reaches it.

Two worlds are played side by side through the engine from the same seed
(projections/keys_to_success.py, `twins_with`). In both, the players in one player P's
level do exactly the same things (same submissions, same chat, at the same log times);
everyone outside P's level acts independently in each world: other gates, other card
values, missed rounds, chat or none, rejected commands. Then the update frames P
receives (built as the server builds them: server/streams.py, `seq` included, since each
viewer's stream is numbered on its own; see the rules page, "Known limits") must be the
same bytes in both worlds, and so must a spectator's, including which entries send a
frame at all (tests/conformance/leaks.py, `check_twins`).

That holds until something P may legitimately learn differs: who is in its level, its
level's gates, how many cards its level-mates used and who went through which gate, its
own cards, or the end of play (when all restrictions lift). Those facts are computed
from the game state, independently of the projections, after every round; from the
first round where they differ the comparison stops (that round's results excluded).
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.games import keys_to_success as kts
from domain.games.keys_to_success import RoundStarted
from domain.rng import Rng
from projections.contract import Twins, Viewer
from projections.keys_to_success import TWIN_LAYOUTS, twins_with
from projections.registry import GAMES
from tests.conformance.leaks import check_twins, play, streams

HOSTED = GAMES[kts.name]
VARIANTS = tuple(v.name for v in kts.variants)


def twin_run(
    seed: int, seats: int, layout: str, early_close: bool, p: int, variant: str = kts.default_variant
) -> dict[str, int]:
    """Check the twin worlds of these parameters; how many rounds were compared, in how
    many of them someone stood outside P's level, and how many frames P received."""
    twins = twins_with(
        variant, Rng(seed.to_bytes(8, "big"), "twins"), seats=seats, layout=layout,
        early_close=early_close, seat=p,
    )
    assert set(range(seats)) - set(twins.tells) == {p}
    check_twins(HOSTED, twins)
    return stats(twins, p)


def stats(twins: Twins, p: int) -> dict[str, int]:
    assert twins.until is not None
    played = play(HOSTED, twins.variant, twins.worlds[0], twins.until[0])
    out = {"rounds": 0, "split_rounds": 0}
    for outcome in played.outcomes[: played.cut]:
        for e in outcome.events:
            if isinstance(e, RoundStarted):
                out["rounds"] += 1
                out["split_rounds"] += any(d != e.depths[p] for d in e.depths)
    out["frames"] = len(streams(HOSTED, played, {"P": Viewer(seat=p)})["P"])
    return out


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    seats=st.integers(3, 9),
    layout=st.sampled_from(TWIN_LAYOUTS),
    early_close=st.booleans(),
    who=st.integers(0, 8),
    variant=st.sampled_from(VARIANTS),
)
def test_nothing_outside_a_players_level_changes_what_it_receives(
    seed: int, seats: int, layout: str, early_close: bool, who: int, variant: str
) -> None:
    twin_run(seed, seats, layout, early_close, who % seats, variant)


def test_the_twin_worlds_really_differ_outside_the_level() -> None:
    """The comparison above covers rounds with players outside P's level, in numbers."""
    totals: Counter[str] = Counter()
    for seed in range(12):
        totals.update(twin_run(seed, 7, TWIN_LAYOUTS[seed % len(TWIN_LAYOUTS)], seed % 2 == 0, seed % 7))
    assert totals["split_rounds"] >= 20, totals
    assert totals["frames"] >= 60, totals


@pytest.mark.parametrize("seed", range(4))
def test_thirteen_seats_on_the_default_layout(seed: int) -> None:
    twin_run(1000 + seed, 13, "default", True, seed)
