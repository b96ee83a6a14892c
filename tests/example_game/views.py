"""Odd or Even, as each viewer sees it (docs/adding-a-game.md, section 2): a choice is
its chooser's until the round resolves; then both are shown."""

from __future__ import annotations

from typing import Any

from domain.engine import MatchState
from domain.rng import Rng
from projections.common import who
from projections.contract import NOTHING_SEALED, Rehearsal, Twins, Viewer
from tests.example_game import odd_or_even as rules


def _sees(viewer: Viewer, seat: int) -> bool:
    return viewer.full or viewer.seat == seat


def event(ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
    if isinstance(event, rules.RoundStarted):
        return {"type": "round_started", "round": event.round, "deadline": event.deadline}
    if isinstance(event, rules.Chosen):
        shown = {"type": "chosen", "seat": event.seat, "round": event.round}
        if _sees(viewer, event.seat):
            shown["fingers"] = event.fingers
        return shown
    if isinstance(event, rules.RoundResolved):
        return {
            "type": "round_resolved", "round": event.round, "fingers": list(event.fingers),
            "missed": list(event.missed), "scores": list(event.scores),
        }
    if isinstance(event, rules.GameOver):
        return {"type": "game_over", "winner": event.winner, "scores": list(event.scores)}
    return None


def view(ms: MatchState, viewer: Viewer) -> dict[str, Any]:
    gs: rules.State = ms.game_state
    return {
        "round": gs.round,
        "scores": [s.score for s in gs.seats],
        "chosen": [s.pending is not None for s in gs.seats],
        "mine": gs.seats[viewer.seat].pending if viewer.seat is not None else None,
        "all": [s.pending for s in gs.seats] if viewer.full else None,
    }


def describe(ms: MatchState, event: Any) -> list[str]:
    if isinstance(event, rules.Chosen):
        return [f"Round {event.round}: {who(ms, event.seat)} shows {event.fingers}"]
    if isinstance(event, rules.RoundResolved):
        return [f"Round {event.round}: {event.fingers[0]} and {event.fingers[1]}; "
                f"scores {event.scores[0]}-{event.scores[1]}"]
    return []


# Nothing stays secret once the match is over: both guesses are revealed.
sealed = NOTHING_SEALED


def twins(variant: str, rng: Rng) -> Twins:
    """Seat 0 shows one number, then replaces it with the same final choice in both
    worlds, before a deadline that closes the round: only seat 0 knows what it first
    showed."""
    options = {"early_close": False, "rounds": 3}
    seed = bytes(rng.below(256) for _ in range(32))
    a = Rehearsal(rules, variant, options, seed, 1_000)
    b = Rehearsal(rules, variant, options, seed, 1_000)
    for _ in range(3):
        round_, first = a.gs.round, 1 + rng.below(2)
        final, other = 1 + rng.below(2), 1 + rng.below(2)
        for world, shown in ((a, first), (b, 3 - first)):
            at = world.ts
            world.step("command", 0, {"type": "choose", "round": round_, "fingers": shown}, at + 10)
            world.step("command", 1, {"type": "choose", "round": round_, "fingers": other}, at + 20)
            world.step("command", 0, {"type": "choose", "round": round_, "fingers": final}, at + 30)
            world.tick()
    return Twins(variant=variant, worlds=(a.world(), b.world()), tells=(0,))
