"""A match of any game driven through the engine, every entry and outcome kept: the
game tests' helpers (fct_helpers, mm_helpers, kts_helpers) build on this form of
`clients.driver.MatchDriver`, which takes the game's rules module and seats `names`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clients import driver
from domain.contract import Game
from projections.registry import hosted


class MatchDriver(driver.MatchDriver):
    """Creates a match of `rules`, seats `names` (None: P0, P1, ...), then proposes
    entries one by one."""

    def __init__(
        self,
        rules: Game,
        *,
        variant: str | None,
        names: Sequence[str] | None,
        ts: int,
        match_id: str,
        seed: bytes,
        options: dict[str, Any],
    ) -> None:
        super().__init__(hosted(rules.name), variant=variant, options=options, seed=seed, ts=ts, match_id=match_id)
        self.seat_all(names)
