"""A match of any game driven through the engine, every entry and outcome kept."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from domain.contract import Game
from domain.engine import Entry, MatchState, Outcome, create_entry, open_match, propose


class MatchDriver:
    """Creates a match of `rules`, seats `names`, then proposes entries one by one."""

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
        first = create_entry(rules, match_id=match_id, variant=variant, options=options, seed=seed, ts=ts)
        self.entries: list[Entry] = [first]
        self.outcomes: list[Outcome] = [Outcome()]
        self.ms: MatchState = open_match(rules, first)
        self.states: list[MatchState] = [self.ms]
        self.ts = ts
        for name in names if names is not None else [f"P{s}" for s in range(self.ms.seats)]:
            out = self.propose("join", None, {"name": name})
            assert out.rejection is None, out.rejection

    def propose(self, kind: Any, seat: int | None, body: Any, ts: int | None = None) -> Outcome:
        if ts is not None:
            self.ts = ts
        entry, self.ms, out = propose(
            self.ms, kind=kind, seat=seat, cid=f"c{len(self.entries)}", body=body, ts=self.ts
        )
        self.entries.append(entry)
        self.outcomes.append(out)
        self.states.append(self.ms)
        return out
