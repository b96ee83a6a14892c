"""Five-Card Trick: the worked examples of the rule texts, the end, clocks, items, views."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain import engine
from domain.contract import Accepted, OptionsError, Rejection, Result
from domain.games import five_card_trick as fct
from domain.games.five_card_trick import (
    Extended,
    GameOver,
    PriorityClaimed,
    RoundReplayed,
    RoundResolved,
    RoundStarted,
    Submit,
    Submitted,
)
from projections import five_card_trick as views
from projections.common import match_view, project_events
from projections.contract import AUDITOR, SPECTATOR, Viewer
from projections.registry import rules_by_name
from tests.fct_helpers import FctMatch, encoded, statuses

# --- identity and options --------------------------------------------------------------


def test_module_identity() -> None:
    assert fct.name == "five-card-trick"
    assert fct.rules_version == "fct-2"
    assert [v.name for v in fct.variants] == ["dm12", "gauntlet", "setnas-curse", "final"]
    assert fct.default_variant == "dm12"
    assert fct.seat_count(fct.configure("dm12", {})) == 2
    assert fct.make_setup(fct.configure("dm12", {}), None) == {}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("variant", "seconds", "max_rounds"),
    [("dm12", 60, 40), ("gauntlet", 90, 40), ("setnas-curse", 60, 40), ("final", 90, 50)],
)
def test_defaults_per_variant(variant: str, seconds: int, max_rounds: int) -> None:
    opts = fct.configure(variant, {})
    assert opts.round_seconds == seconds and opts.max_rounds == max_rounds
    assert (opts.rounds, opts.extension, opts.dmo, opts.clock_scale) == (25, 5, 1, 1.0)
    schema = fct.options_schema(variant)
    assert schema["round_seconds"]["default"] == seconds
    assert schema["max_rounds"]["default"] == max_rounds
    assert ("items" in schema) == (variant == "final")
    assert ("max_replays" in schema) == (variant == "gauntlet")
    assert fct.round_ms(opts) == seconds * 1000


def test_final_default_items() -> None:
    opts = fct.configure("final", {})
    assert opts.items == (("overload",), ("claim_priority", "limit_reset"))
    assert fct.configure("dm12", {}).items == ((), ())


def test_clock_scale_scales_every_clock() -> None:
    assert fct.round_ms(fct.configure("dm12", {"clock_scale": 0.001})) == 60
    assert fct.round_ms(fct.configure("dm12", {"clock_scale": 1e-9})) == 1


def test_options_round_trip_through_the_create_entry() -> None:
    m = FctMatch("final", clock_scale=0.5, dmo=0, items=[["limit_reset"], []])
    again = engine.fold(fct, m.entries)
    assert again.options == m.ms.options
    assert m.gs.seats[0].items == ("limit_reset",) and m.gs.seats[1].items == ()


@pytest.mark.parametrize(
    ("variant", "options", "named"),
    [
        ("dm12", {"bogus": 1}, "bogus"),
        ("dm12", {"round_seconds": 0}, "round_seconds"),
        ("dm12", {"round_seconds": True}, "round_seconds"),
        ("dm12", {"clock_scale": 0}, "clock_scale"),
        ("dm12", {"clock_scale": "fast"}, "clock_scale"),
        ("dm12", {"dmo": 2}, "dmo"),
        ("dm12", {"rounds": 30, "max_rounds": 20}, "max_rounds"),
        ("dm12", {"extension": 0}, "extension"),
        ("dm12", {"items": [["overload"], []]}, "items"),
        ("dm12", {"max_replays": 3}, "max_replays"),
        ("final", {"items": [["sword"], []]}, "items"),
        ("final", {"items": [["overload", "overload"], []]}, "items"),
        ("final", {"items": [["overload"]]}, "items"),
        ("dm12", {"variant": "final"}, "variant"),
    ],
)
def test_bad_options_name_the_option(variant: str, options: dict[str, object], named: str) -> None:
    with pytest.raises(OptionsError, match=named):
        fct.configure(variant, options)


def test_unknown_variant() -> None:
    with pytest.raises(OptionsError):
        engine.create_entry(fct, match_id="x", variant="dm99", options={}, seed=b"s", ts=0)


def test_registry_hosts_the_game() -> None:
    assert rules_by_name()["five-card-trick"] is fct


# --- the worked examples ---------------------------------------------------------------


def test_three_round_example_gauntlet() -> None:
    """DeathMatch 2 (Zero's Gauntlet): EC (seat 0) against the DMO (seat 1)."""
    m = FctMatch("gauntlet", names=("EC", "DMO"))
    assert m.gs.round == 1 and m.gs.pot == 1

    # R1: both Score (cancel); EC Grows the pot to 2; DMO Blocks Block.
    r1 = m.play(["score", "grow"], ["score", "block"], block1="block")
    assert statuses(r1, 0) == {"score": "canceled:collision", "grow": "resolved"}
    assert statuses(r1, 1) == {"score": "canceled:collision", "block": "resolved"}
    assert m.chips() == (0, 0) and m.gs.pot == 2
    assert [s.blocked for s in m.gs.seats] == [("block",), ()]
    assert m.lights(0) == ("score", "grow") and m.lights(1) == ("score", "block")

    # R2: both Block (collide; EC's is blocked too); EC Claims, DMO Steals the 2 chips.
    r2 = m.play(["claim", "block"], ["steal", "block"], block0="score", block1="claim")
    assert statuses(r2, 0) == {"claim": "failed:stolen", "block": "blocked:blocked"}
    assert statuses(r2, 1) == {"steal": "resolved", "block": "canceled:collision"}
    assert r2.taken_by == 1 and r2.seats[1].took == 2
    assert m.chips() == (0, 2) and m.gs.pot == 1
    assert [s.blocked for s in m.gs.seats] == [(), ()]

    # R3: DMO Scores; both Steal (cancel); EC Claims the 1-chip pot and lights all five.
    r3 = m.play(["claim", "steal"], ["score", "steal"])
    assert statuses(r3, 0) == {"claim": "resolved", "steal": "canceled:collision"}
    assert statuses(r3, 1) == {"score": "resolved", "steal": "canceled:collision"}
    assert r3.seats[0].took == 1 and r3.seats[0].bonus == 1
    assert m.chips() == (2, 3) and m.gs.pot == 1
    assert m.lights(0) == () and m.lights(1) == ("score", "steal", "block")


def _black_white(m: FctMatch, grow: str) -> None:
    """The four-round example of the dm12 text (and the wiki and Setna's Curse editions)."""
    # R1: Black Score+Grow, White Score+Steal.
    r1 = m.play(["score", grow], ["score", "steal"])
    assert statuses(r1, 0) == {"score": "canceled:collision", "grow": "resolved"}
    assert statuses(r1, 1) == {"score": "canceled:collision", "steal": "failed:no_claim"}
    assert m.chips() == (0, 0) and m.gs.pot == 2

    # R2: Black Score+Steal, White Claim+Block(Claim).
    r2 = m.play(["score", "steal"], ["claim", "block"], block1="claim")
    assert statuses(r2, 0) == {"score": "resolved", "steal": "resolved"}
    assert statuses(r2, 1) == {"claim": "failed:stolen", "block": "resolved"}
    assert m.chips() == (3, 0) and m.gs.pot == 1
    assert m.gs.seats[0].blocked == ("claim",)

    # R3: Black Score (third in a row: disregarded) + Claim (blocked, still collides);
    # White Grow+Claim, lights all five.
    warned = m.submit(0, ["score", "claim"])
    assert warned.rejection is None
    assert len(warned.warnings) == 1 and "third round in a row" in warned.warnings[0]
    out = m.submit(1, [grow, "claim"])
    r3 = next(e for e in out.events if isinstance(e, RoundResolved))
    assert statuses(r3, 0) == {"score": "disregarded:third_in_a_row", "claim": "blocked:blocked"}
    assert statuses(r3, 1) == {"grow": "resolved", "claim": "canceled:collision"}
    assert r3.seats[0].effective == ("claim",)
    assert r3.seats[1].bonus == 1
    assert m.chips() == (3, 1) and m.gs.pot == 2
    assert m.lights(1) == ()
    assert "claim" in m.lights(0)
    assert m.gs.seats[0].history == (("score", "steal"), ("claim",))

    # R4: Black Score+Claim (the disregarded Score does not count), White Grow+Block(Score).
    warned = m.submit(0, ["score", "claim"])
    assert warned.warnings == ()
    out = m.submit(1, [grow, "block"], block="score")
    r4 = next(e for e in out.events if isinstance(e, RoundResolved))
    assert statuses(r4, 0) == {"score": "resolved", "claim": "resolved"}
    assert statuses(r4, 1) == {"grow": "resolved", "block": "resolved"}
    assert r4.seats[0].took == 3
    assert m.chips() == (7, 1) and m.gs.pot == 1
    assert m.gs.seats[0].blocked == ("score",)


def test_black_and_white_example_dm12() -> None:
    _black_white(FctMatch("dm12"), "grow")


def test_grunkle_and_shaun_example_setnas_curse_with_raise() -> None:
    m = FctMatch("setnas-curse", names=("Grunkle", "Shaun"))
    _black_white(m, "Raise")
    lines = [line for e in m.outcomes[-1].events for line in views.describe(m.ms, e)]
    text = "\n".join(lines)
    assert "Raise" in text and "Gems" in text and "Grow" not in text


def test_display_names_case_insensitive() -> None:
    m = FctMatch("setnas-curse")
    out = m.submit(0, ["RAISE", "Score"], block=None)
    assert out.rejection is None
    assert m.gs.seats[0].pending is not None
    assert m.gs.seats[0].pending.actions == ("score", "grow")
    # dm12 has no "raise"
    assert FctMatch("dm12").submit(0, ["raise"]).rejection.code == "unknown_action"  # type: ignore[union-attr]


def test_rule_change_canceled_steal_lets_the_claim_succeed() -> None:
    m = FctMatch()
    r = m.play(["claim", "steal"], ["steal", "block"], block1="grow")
    assert statuses(r, 0) == {"claim": "resolved", "steal": "canceled:collision"}
    assert statuses(r, 1) == {"steal": "canceled:collision", "block": "resolved"}
    assert r.taken_by == 0 and m.chips() == (1, 0) and m.gs.pot == 1
    assert m.gs.seats[0].blocked == ("grow",)


def test_blocked_steal_does_not_stop_a_claim() -> None:
    m = FctMatch()
    m.play(["block"], [], block0="steal")
    r = m.play(["claim"], ["steal"])
    assert statuses(r, 1) == {"steal": "blocked:blocked"}
    assert statuses(r, 0) == {"claim": "resolved"}
    assert m.chips() == (1, 0)


def test_pair_restriction_disregards_both() -> None:
    m = FctMatch()
    m.play(["score", "grow"], [])
    out = m.submit(0, ["grow", "score"])
    assert len(out.warnings) == 2
    r = m.play(["grow", "score"], ["claim"])
    assert statuses(r, 0) == {"score": "disregarded:same_pair", "grow": "disregarded:same_pair"}
    assert r.seats[0].effective == ()
    assert r.grown == 0  # no second Grow
    assert r.taken_by == 1 and r.seats[1].took == 2 and m.gs.pot == 1
    # a round with fewer than two effective actions lifts the pair rule
    r = m.play(["score", "grow"], [])
    assert statuses(r, 0) == {"score": "resolved", "grow": "resolved"}


def test_block_without_target_is_disregarded() -> None:
    m = FctMatch()
    out = m.submit(0, ["block", "score"])
    assert out.rejection is None and any("no Block target" in w for w in out.warnings)
    r = m.play(["block", "score"], ["grow"])
    assert statuses(r, 0) == {"score": "resolved", "block": "disregarded:no_block_target"}
    assert m.lights(0) == ("score",)  # a disregarded action lights nothing
    assert m.gs.seats[1].blocked == ()


def test_all_five_lights_give_a_chip() -> None:
    m = FctMatch()
    m.play(["score", "grow"], [])
    m.play(["claim", "steal"], [])
    r = m.play(["block"], ["block"], block0="score", block1="score")
    assert r.seats[0].bonus == 1 and r.seats[1].bonus == 0
    assert m.lights(0) == () and m.lights(1) == ("block",)
    # Score 1 + claim of the grown pot (2) + bonus 1
    assert m.chips() == (4, 0)


# --- submissions and rejections --------------------------------------------------------


def test_resubmission_replaces_the_previous_one() -> None:
    m = FctMatch()
    assert m.submit(0, ["score"]).rejection is None
    assert m.submit(0, ["grow", "block"], block="claim").rejection is None
    pending = m.gs.seats[0].pending
    assert pending is not None and pending.actions == ("grow", "block") and pending.block == "claim"
    r = m.play(["steal"], ["claim"])  # and again, once more, before the opponent submits
    assert statuses(r, 0) == {"steal": "resolved"}


def test_the_rounds_own_all_in_is_the_kits() -> None:
    # ROUND.all_in_by, which accept asks, says what the kit's all_in says of a round with
    # no seat in, one, the other and both (a match that does not close early keeps them).
    m = FctMatch(early_close=False)
    states = [m.gs]
    for seat, actions in ((0, ["score"]), (1, ["grow", "block"]), (0, [])):
        m.submit(seat, actions, block="claim" if "block" in actions else None)
        states.append(m.gs)
    states.append(msgspec.structs.replace(
        states[2], seats=(states[0].seats[0], states[2].seats[1])
    ))  # (the second seat in alone)
    answers = [fct.ROUND.all_in(state) for state in states]
    assert answers == [False, False, True, True, False]
    own = fct.ROUND.all_in_by
    assert own is not None and [own(state) for state in states] == answers


def test_empty_submission_is_a_submission() -> None:
    m = FctMatch("gauntlet")
    m.submit(0, [])
    out = m.submit(1, [])
    assert any(isinstance(e, RoundResolved) for e in out.events)
    assert m.gs.round == 2


def test_stale_round_is_rejected() -> None:
    m = FctMatch()
    out = m.submit(0, ["score"], round=2)
    assert out.rejection is not None and out.rejection.code == "wrong_round"
    m.play(["score"], ["grow"])
    out = m.submit(0, ["grow"], round=1)
    assert out.rejection is not None and out.rejection.code == "wrong_round"
    assert "round 2" in out.rejection.reason


def test_round_is_required() -> None:
    m = FctMatch()
    out = m.propose("command", 0, {"type": "submit", "actions": ["score"]})
    assert out.rejection is not None and out.rejection.code == "bad_command"


@pytest.mark.parametrize(
    ("variant", "body", "code"),
    [
        ("dm12", {"actions": ["dance"]}, "unknown_action"),
        ("dm12", {"actions": ["score", "grow", "claim"]}, "too_many_actions"),
        ("dm12", {"actions": ["score", "score"]}, "duplicate_action"),
        ("dm12", {"actions": ["block"], "block": "dance"}, "unknown_block_target"),
        ("dm12", {"actions": ["score"], "block": "claim"}, "block_target_without_block"),
        ("dm12", {"actions": ["score"], "items": ["overload"]}, "no_items"),
        ("dm12", {"actions": ["score"], "items": ["sword"]}, "unknown_item"),
        ("final", {"actions": ["score"], "items": ["sword"]}, "unknown_item"),
        ("final", {"actions": ["score", "grow", "claim"]}, "too_many_actions"),
        ("final", {"actions": ["score", "grow", "claim", "steal"], "items": ["overload"]},
         "too_many_actions"),
        ("final", {"actions": ["score", "score", "score"], "items": ["overload"]},
         "three_identical"),
        ("final", {"actions": ["score"], "items": ["limit_reset"]}, "item_not_held"),
        ("final", {"actions": ["score"], "items": ["overload", "overload"]}, "duplicate_item"),
        ("final", {"actions": ["score"], "items": ["claim_priority"]}, "not_a_submission_item"),
    ],
)
def test_rejections(variant: str, body: dict[str, object], code: str) -> None:
    m = FctMatch(variant)
    out = m.propose("command", 0, {"type": "submit", "round": 1, **body})
    assert out.rejection is not None and out.rejection.code == code, out.rejection
    assert out.events == () and m.gs.seats[0].pending is None


def test_item_already_used_is_rejected() -> None:
    m = FctMatch("final")
    m.play(["score", "grow", "claim"], [], items0=["overload"])
    out = m.submit(0, ["score"], items=["overload"])
    assert out.rejection is not None and out.rejection.code == "item_used"
    out = m.use_item(1, "limit_reset")
    assert out.rejection is not None and out.rejection.code == "not_a_direct_item"


def test_use_item_outside_final() -> None:
    m = FctMatch()
    out = m.use_item(0, "claim_priority")
    assert out.rejection is not None and out.rejection.code == "no_items"


def test_decide_directly() -> None:
    opts = fct.configure("dm12", {})
    state = fct.initial_state(opts, {}, b"")
    for event in fct.start(state, 0):
        state = fct.evolve(state, event)
    d = fct.decide(state, 0, Submit(round=1, actions=("Score",)), 10)
    assert isinstance(d, Accepted) and d.events == (
        Submitted(seat=0, round=1, actions=("score",), block=None, items=()),
    )
    d2 = fct.decide(state, 0, Submit(round=1, actions=("score", "nope")), 10)
    assert isinstance(d2, Rejection) and d2.code == "unknown_action"


def test_commands_decode_from_json() -> None:
    body = {"type": "submit", "round": 3, "actions": ["score", "grow"], "block": None, "items": []}
    cmd = engine.decode_command(fct, body)
    assert cmd == Submit(round=3, actions=("score", "grow"))
    use = engine.decode_command(fct, {"type": "use_item", "item": "claim_priority", "round": 2})
    assert use == fct.UseItem(item="claim_priority", round=2)


# --- the end ---------------------------------------------------------------------------


def _play_empty_rounds(m: FctMatch, n: int) -> None:
    for _ in range(n):
        m.play([], [])


def test_tie_extends_by_five_until_forty_then_dmo_wins() -> None:
    m = FctMatch()
    extensions: list[Extended] = []
    for _ in range(40):
        assert not m.ms.ended
        r0 = m.submit(0, [])
        out = m.submit(1, [])
        assert r0.rejection is None and out.rejection is None
        extensions += [e for e in out.events if isinstance(e, Extended)]
    assert [(e.after_round, e.until) for e in extensions] == [(25, 30), (30, 35), (35, 40)]
    assert m.ms.ended
    assert m.ms.result == Result(
        winner=1, reason="tied after round 40: the Death Match Opponent wins", rounds=40,
        scores=(0, 0),
    )


def test_dmo_option_picks_the_tie_winner() -> None:
    m = FctMatch(rounds=2, max_rounds=2, dmo=0)
    _play_empty_rounds(m, 2)
    assert m.ms.result is not None and m.ms.result.winner == 0


def test_more_chips_at_round_25_wins() -> None:
    m = FctMatch()
    m.play(["score"], [])
    _play_empty_rounds(m, 23)
    assert not m.ms.ended
    last = m.play([], [])
    assert m.ms.ended and m.ms.result is not None
    assert m.ms.result.winner == 0 and m.ms.result.rounds == 25 and m.ms.result.scores == (1, 0)
    assert last.round == 25
    assert "more chips after round 25" in m.ms.result.reason


def test_extension_decided_by_chips() -> None:
    m = FctMatch(rounds=3, extension=2, max_rounds=10)
    _play_empty_rounds(m, 3)
    assert m.gs.end_round == 5 and not m.ms.ended
    m.play([], ["score"])
    assert not m.ms.ended
    m.play([], [])
    assert m.ms.result is not None and m.ms.result.winner == 1 and m.ms.result.rounds == 5


def test_extension_clamped_to_max_rounds() -> None:
    m = FctMatch(rounds=3, extension=5, max_rounds=4)
    _play_empty_rounds(m, 3)
    assert m.gs.end_round == 4


def test_replay_of_a_whole_match_verifies() -> None:
    m = FctMatch(rounds=2, max_rounds=2)
    m.play(["score", "grow"], ["claim", "block"], block1="score")
    m.play(["steal"], ["claim"])
    assert m.ms.ended
    verified = engine.verify(rules_by_name(), m.entries)
    assert verified.ok, verified.failure
    again = engine.fold(fct, m.entries)
    assert again.game_state == m.gs and again.result == m.ms.result


# --- clocks ----------------------------------------------------------------------------


def test_missed_submission_is_no_action() -> None:
    m = FctMatch(clock_scale=0.001)  # 60 ms rounds
    assert m.gs.deadline == 1_060
    m.submit(0, ["score"], ts=1_010)
    out = m.tick(1_060)
    resolved = next(e for e in out.events if isinstance(e, RoundResolved))
    assert not resolved.seats[1].submitted and resolved.seats[1].plays == ()
    assert statuses(resolved, 0) == {"score": "resolved"}
    assert m.gs.round == 2 and m.gs.deadline == 1_120
    assert m.gs.seats[1].history == ((),)


def test_double_miss_resolves_in_dm12() -> None:
    m = FctMatch(clock_scale=0.001)
    out = m.tick(1_060)
    assert [type(e) for e in out.events] == [RoundResolved, RoundStarted]
    assert m.gs.round == 2


def test_command_after_the_deadline_meets_the_next_round() -> None:
    m = FctMatch(clock_scale=0.001)
    out = m.submit(0, ["score"], round=1, ts=1_070)
    assert out.rejection is not None and out.rejection.code == "wrong_round"
    assert m.gs.round == 2


def test_gauntlet_double_miss_replays_the_round() -> None:
    m = FctMatch("gauntlet", clock_scale=0.001)  # 90 ms rounds
    m.play(["score", "grow"], ["block"], block1="claim")
    start = m.gs.deadline
    assert start == 1_000 + 90  # round 2 began when round 1 resolved, at 1000
    state_before = m.gs
    out = m.tick(start)
    assert [type(e) for e in out.events] == [RoundReplayed]
    assert m.gs.round == 2 and m.gs.deadline == start + 90 and m.gs.replays == 1
    assert m.gs.seats == state_before.seats and m.gs.pot == state_before.pot
    # the Block resolved in round 1 still binds the replayed round 2
    r = m.play(["claim"], [])
    assert statuses(r, 0) == {"claim": "blocked:blocked"}
    assert m.gs.replays == 0


def test_gauntlet_single_miss_is_not_replayed() -> None:
    m = FctMatch("gauntlet", clock_scale=0.001)
    m.submit(1, ["score"])
    out = m.tick(m.gs.deadline or 0)
    assert any(isinstance(e, RoundResolved) for e in out.events)
    assert m.chips() == (0, 1)


def test_gauntlet_abandoned_after_max_replays() -> None:
    m = FctMatch("gauntlet", clock_scale=0.001, max_replays=2)
    m.play(["score"], [])
    due = m.gs.deadline
    assert due is not None
    out = m.tick(due + 10 * 90)  # one tick: every due deadline expires in order
    kinds = [type(e) for e in out.events]
    assert kinds[:3] == [RoundReplayed, RoundReplayed, GameOver]
    assert m.ms.ended and m.ms.result is not None
    assert m.ms.result.winner == 0 and m.ms.result.rounds == 1
    assert "abandoned" in m.ms.result.reason


def test_gauntlet_abandoned_tie_goes_to_the_dmo() -> None:
    m = FctMatch("gauntlet", clock_scale=0.001, max_replays=0)
    m.tick(2_000)
    assert m.ms.result is not None and m.ms.result.winner == 1 and m.ms.result.rounds == 0


# --- final: doubles and items ----------------------------------------------------------


def test_final_majority_resolves() -> None:
    m = FctMatch("final")
    r = m.play(["claim", "claim"], ["claim", "grow"])
    assert statuses(r, 0) == {"claim": "resolved"}
    assert statuses(r, 1) == {"claim": "canceled:outnumbered", "grow": "resolved"}
    assert r.seats[0].took == 2 and m.chips() == (2, 0)
    assert r.seats[0].plays[0].copies == 2


def test_final_two_against_none_resolves_once() -> None:
    m = FctMatch("final")
    r = m.play(["score", "score"], ["grow", "grow"])
    assert m.chips() == (1, 0) and m.gs.pot == 2
    assert r.seats[0].effective == ("score", "score")


def test_final_equal_copies_cancel() -> None:
    m = FctMatch("final")
    r = m.play(["score", "score"], ["score", "score"])
    assert statuses(r, 0) == {"score": "canceled:collision"}
    assert m.chips() == (0, 0) and m.lights(0) == ("score",)


def test_final_doubled_action_is_disregarded_next_round() -> None:
    m = FctMatch("final")
    m.play(["score", "score"], [])
    out = m.submit(0, ["score", "grow"])
    assert any("played twice last round" in w for w in out.warnings)
    r = m.play(["score", "grow"], [])
    assert statuses(r, 0) == {"score": "disregarded:doubled_last_round", "grow": "resolved"}
    assert m.chips() == (1, 0)
    # the round after, Score is free again (it was disregarded, so not played last round)
    r = m.play(["score", "claim"], [])
    assert statuses(r, 0)["score"] == "resolved"


def test_final_single_copy_rules_still_apply() -> None:
    m = FctMatch("final")
    m.play(["score", "grow"], [])
    m.play(["score", "claim"], [])
    r = m.play(["score", "steal"], [])
    assert statuses(r, 0)["score"] == "disregarded:third_in_a_row"


def test_final_overload_plays_three_cards() -> None:
    m = FctMatch("final")
    out = m.submit(0, ["score", "grow", "claim"], items=["overload"])
    assert out.rejection is None and out.warnings == ()
    r = m.play(["score", "grow", "claim"], ["block"], block1="score", items0=["overload"])
    assert statuses(r, 0) == {"score": "resolved", "grow": "resolved", "claim": "resolved"}
    assert r.seats[0].items == ("overload",)
    assert m.chips() == (3, 0)
    assert m.gs.seats[0].items == () and m.gs.seats[0].used == ("overload",)


def test_final_overload_two_of_three_may_match() -> None:
    m = FctMatch("final")
    r = m.play(["grow", "grow", "claim"], [], items0=["overload"])
    assert m.chips() == (2, 0)
    assert statuses(r, 0) == {"grow": "resolved", "claim": "resolved"}


def test_final_overload_pair_restriction_on_each_selection() -> None:
    m = FctMatch("final")
    m.play(["score", "grow"], [])
    out = m.submit(0, ["score", "grow", "claim"], items=["overload"])
    assert len(out.warnings) == 2
    r = m.play(["score", "grow", "claim"], [], items0=["overload"])
    assert statuses(r, 0) == {
        "score": "disregarded:same_pair",
        "grow": "disregarded:same_pair",
        "claim": "resolved",
    }
    assert r.grown == 0 and r.seats[0].took == 2 and m.chips() == (3, 0)


def test_final_overload_with_fewer_cards_warns() -> None:
    m = FctMatch("final")
    out = m.submit(0, ["score"], items=["overload"])
    assert out.rejection is None and any("Overload" in w for w in out.warnings)


def test_final_limit_reset() -> None:
    m = FctMatch("final")
    m.play([], ["score", "grow"])
    # without the item, repeating the pair is disregarded
    out = m.submit(1, ["score", "grow"])
    assert len(out.warnings) == 2
    # with Limit Reset (replacing that submission), nothing is restricted this round
    out = m.submit(1, ["score", "grow"], items=["limit_reset"])
    assert out.warnings == ()
    out = m.submit(0, ["claim"])
    r = next(e for e in out.events if isinstance(e, RoundResolved))
    assert statuses(r, 1) == {"score": "resolved", "grow": "resolved"}
    assert r.seats[1].items == ("limit_reset",)
    assert m.gs.seats[1].reset_last
    # next round only the Limit Reset round restricts: Score a third time is fine,
    # the same pair again is not
    assert len(m.submit(1, ["grow", "score"]).warnings) == 2
    assert m.submit(1, ["score", "claim"]).warnings == ()
    out = m.submit(0, [])
    r = next(e for e in out.events if isinstance(e, RoundResolved))
    assert statuses(r, 1)["score"] == "resolved"
    assert not m.gs.seats[1].reset_last
    # and then the usual window again: Score in the last two rounds
    assert any("third round" in w for w in m.submit(1, ["score"]).warnings)


def test_final_claim_priority_takes_the_pot_and_resets_the_clock() -> None:
    m = FctMatch("final", clock_scale=0.01)  # 900 ms rounds
    r = m.play(["claim", "grow"], ["claim", "score"])
    assert statuses(r, 0)["claim"] == "canceled:collision"
    assert r.seats[1].priority and m.gs.pot == 2
    view = views.view(m.ms, Viewer(seat=0))
    assert view["seats"][1]["claim_priority_available"]
    out = m.use_item(1, "claim_priority", ts=1_500)
    assert out.rejection is None
    [claimed] = out.events
    assert claimed == PriorityClaimed(
        seat=1, round=2, took=2, chips=3, pot_after=1, deadline=1_500 + 900
    )
    assert m.chips() == (0, 3) and m.gs.pot == 1 and m.gs.deadline == 2_400
    assert m.gs.seats[1].used == ("claim_priority",)
    again = m.use_item(1, "claim_priority")
    assert again.rejection is not None and again.rejection.code == "item_used"


def test_final_claim_priority_not_eligible() -> None:
    m = FctMatch("final")
    # the opponent's Steal stood: not eligible
    r = m.play(["claim", "steal"], ["claim", "grow"])
    assert not r.seats[1].priority
    out = m.use_item(1, "claim_priority")
    assert out.rejection is not None and out.rejection.code == "not_eligible"
    # claims did not tie
    m.play(["score"], ["claim"])
    assert m.use_item(1, "claim_priority").rejection.code == "not_eligible"  # type: ignore[union-attr]
    # eligible, but only during the next round
    m.play(["claim", "grow"], ["claim", "score"])
    m.play([], [])
    assert m.use_item(1, "claim_priority").rejection.code == "not_eligible"  # type: ignore[union-attr]
    # a seat without the item
    m.play(["claim"], ["claim"])
    assert m.use_item(0, "claim_priority").rejection.code == "item_not_held"  # type: ignore[union-attr]
    # the right round only
    out = m.use_item(1, "claim_priority", round=m.gs.round - 1)
    assert out.rejection is not None and out.rejection.code == "wrong_round"
    assert m.use_item(1, "claim_priority").rejection is None


def test_final_claim_priority_takes_only_the_pot_tied_for() -> None:
    """"you may use this item to take the Pot": the pot both Claims tied for. Once one
    holder has taken it, the refilled 1-chip pot is a new pot nobody tied for, so a second
    holder (possible with the `items` option) can no longer use Claim Priority."""
    m = FctMatch("final", items=[["claim_priority"], ["claim_priority"]])
    r = m.play(["claim", "grow"], ["claim"])
    assert r.seats[0].priority and r.seats[1].priority and m.gs.pot == 2
    assert m.use_item(1, "claim_priority").rejection is None
    assert m.chips() == (0, 2) and m.gs.pot == 1
    late = m.use_item(0, "claim_priority")
    assert late.rejection is not None and late.rejection.code == "not_eligible"
    assert "already taken" in late.rejection.reason
    assert m.chips() == (0, 2) and m.gs.pot == 1
    assert m.gs.seats[0].items == ("claim_priority",)  # not used up
    assert not views.view(m.ms, Viewer(seat=0))["seats"][0]["claim_priority_available"]


def test_final_blocked_steal_keeps_priority() -> None:
    m = FctMatch("final")
    m.play([], ["block"], block1="steal")
    r = m.play(["claim", "steal"], ["claim"])
    assert statuses(r, 0)["steal"] == "blocked:blocked"
    assert r.seats[1].priority


def test_final_tie_at_max_rounds_goes_to_more_unused_items() -> None:
    m = FctMatch("final", rounds=2, max_rounds=2)  # seat 1 holds two items, seat 0 one
    m.play([], [])
    m.play([], [])
    assert m.ms.result is not None and m.ms.result.winner == 1
    assert "unused items" in m.ms.result.reason

    m = FctMatch("final", rounds=2, max_rounds=2)
    m.play([], ["score"], items1=["limit_reset"])  # seat 1 uses one; seat 0 scores nothing
    m.play(["score"], [])
    over = m.gs.finished
    assert over is not None and over.items_left == (1, 1)
    assert m.ms.result is not None and m.ms.result.winner == 1  # still tied: DMO
    assert "Death Match Opponent" in m.ms.result.reason

    m = FctMatch("final", rounds=2, max_rounds=2, items=[["overload", "limit_reset"], []])
    _play_empty_rounds(m, 2)
    assert m.ms.result is not None and m.ms.result.winner == 0


def test_final_extends_to_fifty() -> None:
    m = FctMatch("final")
    _play_empty_rounds(m, 40)
    assert not m.ms.ended and m.gs.end_round == 45
    _play_empty_rounds(m, 10)
    assert m.ms.ended and m.ms.result is not None and m.ms.result.rounds == 50


# --- projections -----------------------------------------------------------------------


def _everything_seen(m: FctMatch, viewer: Viewer) -> bytes:
    views_ = [
        project_events(views, m.ms, out, viewer) for out in m.outcomes[1:]
    ]
    return encoded([views_, match_view(views, m.ms, viewer)])


@pytest.mark.parametrize(
    "hidden",
    [
        (["claim", "steal"], None, []),
        (["block"], "score", []),
        (["score", "grow", "claim"], None, ["overload"]),
        ([], None, []),
    ],
)
def test_opponent_never_sees_a_pending_submission(
    hidden: tuple[list[str], str | None, list[str]],
) -> None:
    actions, block, items = hidden
    base = FctMatch("final")
    base.play(["score"], ["grow"])
    other = FctMatch("final")
    other.play(["score"], ["grow"])
    base.submit(0, ["grow", "block"], block="claim")
    other.submit(0, actions, block=block, items=items)
    for viewer in (Viewer(seat=1), SPECTATOR):
        assert _everything_seen(base, viewer) == _everything_seen(other, viewer)
    own = match_view(views, other.ms, Viewer(seat=0))["game_state"]["seats"][0]
    assert own["submitted"] and own["pending"]["actions"] == sorted(
        actions, key=fct.ACTIONS.index
    )
    theirs = match_view(views, other.ms, Viewer(seat=1))["game_state"]["seats"][0]
    assert theirs["submitted"] and theirs["pending"] is None
    assert theirs["items"] == ["overload"]
    full = match_view(views, other.ms, AUDITOR)["game_state"]["seats"][0]
    assert full["pending"] is not None


def test_submitted_event_projection() -> None:
    m = FctMatch("final")
    out = m.submit(0, ["grow", "block"], block="claim", items=["overload"])
    [ev] = out.events
    assert views.event(m.ms, ev, Viewer(seat=1)) == {"type": "submitted", "seat": 0, "round": 1}
    assert views.event(m.ms, ev, SPECTATOR) == {"type": "submitted", "seat": 0, "round": 1}
    mine = views.event(m.ms, ev, Viewer(seat=0))
    assert mine == {
        "type": "submitted", "seat": 0, "round": 1, "actions": ["grow", "block"],
        "block": "claim", "items": ["overload"],
    }
    assert views.event(m.ms, ev, AUDITOR) == mine


def test_canceled_block_target_stays_hidden() -> None:
    m = FctMatch()
    m.submit(0, ["block", "score"], block="claim")
    out = m.submit(1, ["block"], block="steal")
    resolved = next(e for e in out.events if isinstance(e, RoundResolved))
    assert statuses(resolved, 0)["block"] == "canceled:collision"

    def seen(viewer: Viewer) -> list[object]:
        proj = views.event(m.ms, resolved, viewer)
        assert proj is not None
        return [s["block"] for s in proj["seats"]]

    assert seen(Viewer(seat=0)) == ["claim", None]
    assert seen(Viewer(seat=1)) == [None, "steal"]
    assert seen(SPECTATOR) == [None, None]
    assert seen(AUDITOR) == ["claim", "steal"]
    last = views.view(m.ms, SPECTATOR)["last_round"]
    assert [s["block"] for s in last["seats"]] == [None, None]
    # describe is the full view
    text = "\n".join(views.describe(m.ms, resolved))
    assert "Block (Claim) [canceled" in text


def test_disregarded_and_blocked_block_targets_hidden_resolved_shown() -> None:
    m = FctMatch()
    m.play(["block"], ["block", "score"], block0="grow", block1="block")
    assert m.gs.seats[1].blocked == ()  # both Blocks collided
    m.play(["score"], ["block"], block1="block")  # seat 1's Block resolves: public
    r = m.play(["block"], [], block0="claim")  # seat 0's Block is blocked
    proj = views.event(m.ms, r, Viewer(seat=1))
    assert proj is not None and proj["seats"][0]["block"] is None
    assert views.event(m.ms, r, Viewer(seat=0))["seats"][0]["block"] == "claim"  # type: ignore[index]
    m2 = FctMatch()
    r2 = m2.play(["grow"], ["block"], block1="score")
    proj2 = views.event(m2.ms, r2, Viewer(seat=0))
    assert proj2 is not None and proj2["seats"][1]["block"] == "score"
    assert proj2["seats"][0]["blocked_next"] == ["score"]


def test_items_hidden_until_results() -> None:
    m = FctMatch("final")
    m.submit(0, ["score", "grow", "claim"], items=["overload"])
    seen = views.view(m.ms, Viewer(seat=1))["seats"][0]
    assert seen["items"] == ["overload"] and seen["used_items"] == []
    out = m.submit(1, [])
    resolved = next(e for e in out.events if isinstance(e, RoundResolved))
    proj = views.event(m.ms, resolved, Viewer(seat=1))
    assert proj is not None and proj["seats"][0]["items"] == ["overload"]
    seen = views.view(m.ms, Viewer(seat=1))["seats"][0]
    assert seen["items"] == [] and seen["used_items"] == ["overload"]


def test_view_shape() -> None:
    m = FctMatch("setnas-curse", names=("Grunkle", "Shaun"))
    m.play(["score", "raise"], ["score", "steal"])
    m.play(["score", "steal"], ["claim", "block"], block1="claim")
    m.submit(0, ["score", "claim"])
    v = views.view(m.ms, Viewer(seat=0))
    assert v["round"] == 3 and v["pot"] == 1 and v["terms"]["actions"]["grow"] == "Raise"
    assert v["terms"]["chip_plural"] == "Gems" and v["terms"]["light_plural"] == "torches"
    me, them = v["seats"]
    assert me["chips"] == 3 and me["blocked"] == ["claim"]
    assert me["history"] == {"r-2": ["score", "grow"], "r-1": ["score", "steal"]}
    assert me["pending"]["disregarded"] == [
        {"action": "score", "reason": "third_in_a_row", "reason_text": "third round in a row"}
    ]
    assert them["submitted"] is False and them["pending"] is None
    assert them["lights_shown"] == ["Score", "Claim", "Steal", "Block"]
    # JSON-ready
    assert msgspec.json.decode(msgspec.json.encode(v)) == v


class _SecondVersionMatch(FctMatch):
    log_version = 2  # a log from before sealing (version 3: tests/test_sealed.py)


def test_view_after_the_end_is_full() -> None:
    m = _SecondVersionMatch(rounds=1, max_rounds=1)
    m.play(["block"], ["block"], block0="claim", block1="grow")
    assert m.ms.ended
    seen = match_view(views, m.ms, Viewer(seat=1))["game_state"]["last_round"]["seats"]
    assert [s["block"] for s in seen] == ["claim", "grow"]


def test_describe_lines_name_the_seats() -> None:
    m = FctMatch()
    m.play(["score", "grow"], ["score", "steal"])
    m.play(["score", "steal"], ["claim", "block"], block1="claim")
    m.submit(0, ["score", "claim"])
    out = m.submit(1, ["grow", "claim"])
    lines = [line for e in out.events for line in views.describe(m.ms, e)]
    assert any(
        line.startswith("Round 3: seat 0 (Black) Score [disregarded: third round in a row], "
                        "Claim [blocked]")
        for line in lines
    ), lines
    assert any("seat 1 (White)" in line and "all five lights" in line for line in lines)
    every = [
        line
        for o in m.outcomes
        for e in o.events
        if not isinstance(e, engine.ENGINE_EVENTS)
        for line in views.describe(m.ms, e)
    ]
    assert every and all(isinstance(x, str) for x in every)


def test_every_event_projects_for_every_viewer() -> None:
    m = FctMatch("final", rounds=1, max_rounds=2, clock_scale=0.01)
    m.play(["claim", "grow"], ["claim"])
    m.use_item(1, "claim_priority")
    m.tick(100_000)
    assert m.ms.ended
    for out in m.outcomes[1:]:
        for viewer in (Viewer(seat=0), Viewer(seat=1), SPECTATOR, AUDITOR):
            for ev in out.events:
                item = views.event(m.ms, ev, viewer)
                if not isinstance(ev, engine.ENGINE_EVENTS):
                    assert item is not None
                    assert msgspec.json.decode(msgspec.json.encode(item)) == item
            assert project_events(views, m.ms, out, viewer)
    kinds = {type(e).__name__ for o in m.outcomes for e in o.events}
    assert {"Extended", "PriorityClaimed", "GameOver", "RoundResolved"} <= kinds


def test_view_before_the_match_starts() -> None:
    first = engine.create_entry(fct, match_id="m", variant="final", options={}, seed=b"s", ts=5)
    ms = engine.open_match(fct, first)
    v = match_view(views, ms, SPECTATOR)["game_state"]
    assert v["round"] == 0 and v["deadline"] is None and v["last_round"] is None
    assert [s["items"] for s in v["seats"]] == [["overload"], ["claim_priority", "limit_reset"]]


def test_item_dropped_from_a_resubmission_is_not_used() -> None:
    m = FctMatch("final")
    m.submit(0, ["score", "grow", "claim"], items=["overload"])
    r = m.play(["score", "grow"], [])
    assert r.seats[0].items == () and m.gs.seats[0].items == ("overload",)


_cards = st.lists(st.sampled_from(fct.ACTIONS), max_size=2)


@st.composite
def _moves(draw: st.DrawFn) -> tuple[list[str], str | None]:
    cards = draw(_cards)
    block = draw(st.sampled_from(fct.ACTIONS)) if "block" in cards else None
    return cards, block


@settings(max_examples=60, deadline=None)
@given(
    history=st.lists(st.tuples(_moves(), _moves()), max_size=6),
    secret_a=_moves(),
    secret_b=_moves(),
    overload=st.booleans(),
)
def test_hidden_choice_gives_the_opponent_identical_bytes(
    history: list[tuple[tuple[list[str], str | None], tuple[list[str], str | None]]],
    secret_a: tuple[list[str], str | None],
    secret_b: tuple[list[str], str | None],
    overload: bool,
) -> None:
    matches = [FctMatch("final", rounds=50), FctMatch("final", rounds=50)]
    for m in matches:
        for (a0, b0), (a1, b1) in history:
            m.play(a0, a1, block0=b0, block1=b1)
    a = matches[0].submit(0, secret_a[0], block=secret_a[1])
    b = matches[1].submit(0, secret_b[0], block=secret_b[1], items=["overload"] if overload else [])
    assert a.rejection is None and b.rejection is None
    for viewer in (Viewer(seat=1), SPECTATOR):
        assert _everything_seen(matches[0], viewer) == _everything_seen(matches[1], viewer)


def test_without_early_close_a_round_waits_for_its_deadline() -> None:
    """dm12: 'You may change your submission up to the deadline.' With early_close off,
    both submissions in do not end the round; either may still be replaced, and the
    last ones count when the deadline passes."""
    m = FctMatch(early_close=False)
    deadline = m.gs.deadline
    assert deadline is not None
    assert m.submit(0, ["score", "grow"]).rejection is None
    out = m.submit(1, ["claim"])
    assert out.rejection is None
    assert not any(isinstance(e, RoundResolved) for e in out.events)
    assert m.gs.round == 1 and m.gs.seats[1].pending is not None
    assert m.submit(0, ["steal", "score"]).rejection is None  # changed its mind
    resolved = [e for e in m.tick(deadline).events if isinstance(e, RoundResolved)]
    assert len(resolved) == 1 and m.gs.round == 2
    assert statuses(resolved[0], 0) == {"score": "resolved", "steal": "resolved"}
    with pytest.raises(OptionsError, match="early_close"):
        fct.configure("dm12", {"early_close": "no"})
    assert fct.configure("final", {}).early_close is True
