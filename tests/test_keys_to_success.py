"""Keys to Success / Gatekeeping: every rule sentence, the worked example, the
clarifications, the layout format, chat, the vote, the projections and their leaks."""

from __future__ import annotations

import itertools
import random
from typing import Any

import msgspec
import pytest

from clients import cli
from clients.bots import BOTS, TERMINALS, bot_factory, simulate
from domain import engine
from domain.contract import OptionsError
from domain.games import keys_to_success as kts
from domain.games.keys_to_success import (
    HAND,
    ChatSent,
    GameOver,
    PlayEnded,
    RoundResolved,
    RoundStarted,
    Submitted,
)
from domain.games.keys_to_success.layout import (
    DEFAULT_LAYOUT,
    RULINGS_LAYOUT,
    LayoutError,
    format_layout,
    layout_text,
    parse_layout,
)
from domain.rng import Rng
from projections import keys_to_success as views
from projections.common import match_view, project_events
from projections.contract import AUDITOR, SPECTATOR, Viewer
from projections.registry import hosted, rules_by_name
from tests.kts_helpers import ONE_LEVEL, TWO_LEVELS, KtsMatch, frame

# --- identity and options --------------------------------------------------------------


def test_module_identity() -> None:
    assert kts.name == "keys-to-success" and kts.rules_version == "kts-1"
    assert [v.name for v in kts.variants] == ["keys-to-success", "gatekeeping"]
    assert kts.default_variant == "keys-to-success"
    opts = kts.configure("gatekeeping", {})
    assert kts.seat_count(opts) == 13 and opts.seats == 13
    assert kts.make_setup(opts, Rng(b"x")) == {}
    assert rules_by_name()["keys-to-success"] is kts
    assert hosted("keys-to-success").views is views


def test_defaults_and_clocks() -> None:
    opts = kts.configure("keys-to-success", {})
    assert (opts.round_seconds, opts.vote_seconds, opts.clock_scale) == (120, 86_400, 1.0)
    assert opts.early_close is True
    assert (opts.chat_max_chars, opts.chat_per_round) == (500, 20)
    assert opts.layout == layout_text(DEFAULT_LAYOUT)
    assert kts.round_ms(opts) == 120_000 and kts.vote_ms(opts) == 86_400_000
    fast = kts.configure("gatekeeping", {"clock_scale": 0.001})
    assert kts.round_ms(fast) == 120 and kts.vote_ms(fast) == 86_400
    assert kts.round_ms(kts.configure("gatekeeping", {"clock_scale": 1e-9})) == 1
    schema = kts.options_schema("gatekeeping")
    assert set(schema) == set(kts.Options.__struct_fields__) - {"variant"}
    assert schema["seats"]["default"] == 13 and schema["seats"]["minimum"] == 3
    assert all("description" in entry for entry in schema.values())


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"bogus": 1}, "'bogus'"),
        ({"bogus": 1, "other": 2}, "'bogus', 'other'"),
        ({"seats": 2}, "seats"),
        ({"seats": True}, "seats"),
        ({"seats": 41}, "seats"),
        ({"round_seconds": 0}, "round_seconds"),
        ({"vote_seconds": "day"}, "vote_seconds"),
        ({"clock_scale": 0}, "clock_scale"),
        ({"clock_scale": float("nan")}, "clock_scale"),
        ({"early_close": "yes"}, "early_close"),
        ({"chat_max_chars": 0}, "chat_max_chars"),
        ({"chat_per_round": -1}, "chat_per_round"),
        ({"layout": "A:open B:wall"}, "layout line 1: gate 'B': unknown type 'wall'"),
        ({"layout": 7}, "layout"),
        ({"variant": "gatekeeping"}, "variant"),
    ],
)
def test_bad_options_name_the_option(options: dict[str, Any], named: str) -> None:
    with pytest.raises(OptionsError, match=named.replace("(", r"\(")):
        kts.configure("keys-to-success", options)


def test_unknown_variant() -> None:
    with pytest.raises(OptionsError, match="unknown variant"):
        kts.configure("labyrinth", {})


def test_options_round_trip_through_the_create_entry() -> None:
    m = KtsMatch("gatekeeping", seats=5, clock_scale=0.5, layout=TWO_LEVELS, chat_per_round=3)
    again = engine.fold(kts, m.entries)
    assert again.options == m.ms.options
    assert m.ms.options.layout == "A:open B:pass C:garnet\nD:open E:garnet"
    assert m.ms.seats == 5


# --- the layout ------------------------------------------------------------------------


def test_default_layout_is_the_rulings_layout() -> None:
    layout = parse_layout(DEFAULT_LAYOUT)
    assert layout_text(DEFAULT_LAYOUT) == layout_text(RULINGS_LAYOUT)
    names = [[g.name for g in level] for level in layout.levels]
    assert names == [
        list("ABCDEFGHIJ"), list("KLMNOPQR"), list("STUVWX"), ["Y", "Z", "&", "#"], ["=", "+", "-"],
    ]
    assert all(level[-1].kind == "garnet" for level in layout.levels)
    assert {g.name for g in layout.gates if g.kind == "pass"} == set("CGMPUZ")
    assert sum(1 for g in layout.gates if g.kind == "open") == 31 - 6 - 5


@pytest.mark.parametrize(("a", "b"), [("A", "J"), ("K", "R"), ("S", "X"), ("Y", "#"), ("=", "-")])
def test_clarification_the_ends_of_a_level_are_not_adjacent(a: str, b: str) -> None:
    layout = parse_layout(DEFAULT_LAYOUT)
    ga, gb = layout.find(a), layout.find(b)
    assert ga is not None and gb is not None
    assert not layout.adjacent(ga, gb)
    m = KtsMatch(seats=3)
    for depth in range(ga.depth):  # walk seat 0 to that level; 1 and 2 block each other
        m.round_({0: (layout.levels[depth][0].name, [1]), 1: ("B", [1]), 2: ("B", [1])})
        assert m.gs.players[0].depth == depth + 1
    out = m.submit(0, [a, b], [1])
    assert out.rejection is not None and out.rejection.code == "not_adjacent"


def test_neighbours_are_adjacent_and_levels_are_not() -> None:
    layout = parse_layout(DEFAULT_LAYOUT)
    for level in layout.levels:
        for left, right in itertools.pairwise(level):
            assert layout.adjacent(left, right)
    j, k = layout.find("J"), layout.find("K")
    assert j is not None and k is not None and not layout.adjacent(j, k)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "layout: no levels"),
        ("; only a comment\n\n", "layout: no levels"),
        ("A:open B", "layout line 1: 'B' is not NAME:TYPE"),
        ("A:open\nB:door", "layout line 2: gate 'B': unknown type 'door'"),
        ("A:open\n\nB:o a:g", "layout line 3: gate 'a' appears twice (also 'A' on line 1)"),
        (" ".join(f"G{i}:o" for i in range(27)), "layout line 1: 27 gates in one level"),
        ("\n".join(f"L{i}:o" for i in range(13)), "layout line 13: more than 12 levels"),
        ("TOOLONGNAME:o", "layout line 1: 'TOOLONGNAME:o': a gate name"),
        (":open", "layout line 1: ':open': a gate name"),
    ],
)
def test_layout_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(LayoutError) as info:
        parse_layout(text)
    assert str(info.value).startswith(message), str(info.value)


def test_layout_format_comments_short_forms_and_presets() -> None:
    text = "; a tiny chamber\n  A:o  B:Pass C:purple \n\n; inner\nD:green E:G\n"
    layout = parse_layout(text)
    assert format_layout(layout) == "A:open B:pass C:garnet\nD:open E:garnet"
    assert layout.depth == 2 and layout.find("c") == layout.find("C")
    assert layout.find("Q") is None
    assert layout_text("rulings") == layout_text(RULINGS_LAYOUT)
    assert kts.configure("keys-to-success", {"layout": "default"}).layout == layout_text(DEFAULT_LAYOUT)


# --- a round ---------------------------------------------------------------------------


def test_start_everyone_outside_with_nine_cards() -> None:
    m = KtsMatch(seats=13)
    gs = m.gs
    assert gs.phase == "play" and gs.round == 1
    assert gs.deadline == m.ts + 120_000
    assert all(p.depth == 0 and p.hand == HAND for p in gs.players)
    assert HAND == (1, 1, 1, 1, 2, 2, 2, 3, 3)
    started = [e for e in m.outcomes[-1].events if isinstance(e, RoundStarted)]
    assert started == [RoundStarted(round=1, deadline=gs.deadline, depths=(0,) * 13, closed=())]


@pytest.mark.parametrize(
    ("gates", "cards", "code"),
    [
        (["K"], [1], "not_your_level"),
        (["ZZ"], [1], "unknown_gate"),
        (["A", "C"], [1], "not_adjacent"),
        (["A", "J"], [1], "not_adjacent"),
        (["A", "A"], [1], "same_gate"),
        ([], [1], "gate_count"),
        (["A", "B", "C"], [1], "gate_count"),
        (["A"], [], "no_cards_named"),
        (["A"], [4], "bad_card"),
        (["A"], [0], "bad_card"),
        (["A"], [3, 3, 3], "not_held"),
        (["A"], [1, 1, 1, 1, 1], "not_held"),
    ],
)
def test_bad_submissions_are_rejected(gates: list[str], cards: list[int], code: str) -> None:
    m = KtsMatch(seats=3)
    out = m.submit(0, gates, cards)
    assert out.rejection is not None and out.rejection.code == code, out.rejection
    assert out.events == ()


def test_stale_round_and_bad_command_shapes() -> None:
    m = KtsMatch(seats=3)
    out = m.submit(0, ["A"], [1], round=2)
    assert out.rejection is not None and out.rejection.code == "wrong_round"
    out = m.propose("command", 0, {"type": "submit", "round": 1, "gates": "A", "cards": [1]})
    assert out.rejection is not None and out.rejection.code == "bad_command"
    out = m.propose("command", 0, {"type": "dance"})
    assert out.rejection is not None and out.rejection.code == "bad_command"


def test_resubmission_replaces_and_names_any_case() -> None:
    m = KtsMatch(seats=3)
    assert m.submit(0, ["b", "a"], [3]).rejection is None
    assert m.gs.players[0].pending == kts.Pending(gates=("A", "B"), cards=(3,))
    assert m.submit(0, ["C"], [1, 2]).rejection is None
    assert m.gs.players[0].pending == kts.Pending(gates=("C",), cards=(1, 2))
    r = m.round_({1: ("D", [1]), 2: ("E", [1])})
    assert m.entered(r) == {0: "C", 1: "D", 2: "E"}
    assert m.gs.players[0].hand == (1, 1, 1, 2, 2, 3, 3)


def test_worked_example_alpha_beta_gamma_omega() -> None:
    """Doors ABCD. Alpha 3 to A and B; Beta 2 to A and B; Gamma 2 to B and C; Omega 1 to
    B and C. Alpha goes through A with the highest score; Beta and Gamma clash on B, and
    Omega goes through B; Gamma goes through C."""
    m = KtsMatch(names=("Alpha", "Beta", "Gamma", "Omega"), seats=4, layout=ONE_LEVEL)
    r = m.round_({0: ("A B", [3]), 1: ("A B", [2]), 2: ("B C", [2]), 3: ("B C", [1])})
    assert m.entered(r) == {0: "A", 1: None, 2: "C", 3: "B"}
    assert [p.hand for p in m.gs.players] == [
        (1, 1, 1, 1, 2, 2, 2, 3), (1, 1, 1, 1, 2, 2, 3, 3), (1, 1, 1, 1, 2, 2, 3, 3), (1, 1, 1, 2, 2, 2, 3, 3),
    ]


def test_a_lone_submitter_enters_and_the_highest_enters() -> None:
    m = KtsMatch(seats=4, layout="A:open B:open\nC:open")
    r = m.round_({0: ("A", [1]), 1: ("B", [1]), 2: ("B", [3]), 3: ("B", [2])})
    assert m.entered(r) == {0: "A", 1: None, 2: "B", 3: None}


@pytest.mark.parametrize(
    ("bids", "winner"),
    [
        ([3, 3, 2], 2),
        ([3, 3, 2, 2], None),
        ([3, 3, 2, 2, 1], 4),
        ([2, 2, 2], None),
        ([5, 1, 5, 1, 3], 4),
    ],
)
def test_ties_block_and_the_next_strength_is_looked_at(bids: list[int], winner: int | None) -> None:
    assert kts.winner_at(list(enumerate(bids))) == winner


def test_a_player_who_went_through_is_ignored_at_later_gates() -> None:
    m = KtsMatch(seats=4, layout="A:open B:open C:open\nD:open")
    r = m.round_({0: ("A B", [3]), 1: ("B", [1]), 2: ("C", [1]), 3: ("C", [1])})
    # Seat 0 enters A; at B its 3 is ignored, so seat 1's 1 is unique. C: a tie.
    assert m.entered(r) == {0: "A", 1: "B", 2: None, 3: None}


def test_clarification_two_gates_same_strength_one_discard() -> None:
    """One axe to gates = and + gives strength 2 at both gates and discards one axe."""
    m = KtsMatch("gatekeeping", seats=4, layout="=:open +:open -:garnet\nX:open")
    r = m.round_({0: ("= +", [2]), 1: ("=", [3]), 2: ("+", [1]), 3: ("-", [1])})
    assert m.entered(r) == {0: "+", 1: "=", 2: None, 3: "-"}
    assert m.gs.players[0].hand == (1, 1, 1, 1, 2, 2, 3, 3)  # one axe gone
    play = next(p for p in r.plays if p.seat == 0)
    assert play.gates == ("=", "+") and kts.strength(play.cards) == 2


def test_clarification_any_number_of_cards_sum_and_are_discarded_without_entry() -> None:
    m = KtsMatch(seats=3, layout="A:open B:open\nC:open")
    r = m.round_({0: ("A", [1, 1, 2, 3]), 1: ("A", [3, 3, 1]), 2: ("A", [2, 2, 3])})
    assert m.entered(r) == {0: None, 1: None, 2: None}  # 7, 7, 7: all blocked
    assert m.gs.players[0].hand == (1, 1, 2, 2, 3)
    assert m.gs.players[1].hand == (1, 1, 1, 2, 2, 2)
    assert m.gs.players[2].hand == (1, 1, 1, 1, 2, 3)


# --- gate types ------------------------------------------------------------------------

TYPES = "A:open B:pass C:garnet\nD:open\nE:open"


def test_open_gate_highest_wins_then_stays_open() -> None:
    m = KtsMatch(seats=4, layout=TYPES)
    r = m.round_({0: ("A", [2]), 1: ("A", [1]), 2: ("B", [1]), 3: ("C", [1])})
    assert m.entered(r)[0] == "A" and m.entered(r)[1] is None
    r2 = m.round_({0: ("D", [1]), 1: ("A", [1])})
    assert m.entered(r2)[1] == "A"


def test_pass_gate_closes_for_good() -> None:
    m = KtsMatch(seats=4, layout=TYPES)
    m.round_({0: ("B", [1]), 1: ("A", [1]), 2: ("A", [1]), 3: ("A", [2])})
    assert m.gs.players[0].passes == 1 and m.gs.players[0].depth == 1
    assert [p.depth for p in m.gs.players] == [1, 0, 0, 1]
    for round_ in (2, 3):
        assert m.gs.round == round_
        out = m.submit(1, ["B"], [1])
        assert out.rejection is not None and out.rejection.code == "gate_closed"
        assert "sealed for good" in out.rejection.reason and "this round" not in out.rejection.reason
        gates = {g["name"]: g for g in views.view(m.ms, Viewer(seat=1))["level"]["gates"]}
        assert gates["B"]["status"] == "sealed" and gates["B"]["reopens"] is None
        m.round_({1: ("A", [1]), 2: ("A", [1])})  # 0 and 3 miss: a tie at D
    assert m.gs.is_closed(m.gs.layout.gates[1], 99)


def test_garnet_gate_closes_for_the_next_round_and_reopens() -> None:
    m = KtsMatch(seats=4, layout=TYPES)
    m.round_({0: ("C", [1]), 1: ("A", [1]), 2: ("A", [1]), 3: ("A", [1])})
    assert m.gs.players[0].garnets == 1 and m.gs.round == 2
    out = m.submit(1, ["B", "C"], [1])
    assert out.rejection is not None and out.rejection.code == "gate_closed"
    assert out.rejection.reason == "door C is closed this round"
    gates = {g["name"]: g for g in views.view(m.ms, Viewer(seat=1))["level"]["gates"]}
    assert gates["C"]["status"] == "closed" and gates["C"]["reopens"] == 3
    assert gates["A"]["status"] == "open" and gates["B"]["status"] == "open"
    m.round_({0: ("D", [1]), 1: ("A", [1]), 2: ("A", [1]), 3: ("A", [1])})
    assert m.gs.round == 3 and not m.gs.is_closed(m.gs.layout.gates[2])
    r = m.round_({1: ("C", [1]), 2: ("A", [1]), 3: ("A", [1])})
    assert m.entered(r)[1] == "C" and m.gs.players[1].garnets == 1


def test_missed_deadline_plays_the_lowest_card_at_the_rightmost_gate() -> None:
    m = KtsMatch(seats=3, layout=TYPES)
    assert m.submit(0, ["A"], [3]).rejection is None
    assert m.submit(1, ["A"], [2]).rejection is None
    out = m.tick()
    r = next(e for e in out.events if isinstance(e, RoundResolved))
    auto = next(p for p in r.plays if p.seat == 2)
    assert auto == kts.Play(seat=2, depth=0, gates=("C",), cards=(1,), auto=True, entered="C")
    assert m.gs.players[2].garnets == 1 and m.gs.players[2].hand == HAND[1:]


def test_missed_deadline_when_the_rightmost_gate_is_closed_uses_the_rightmost_open_one() -> None:
    m = KtsMatch(seats=3, layout=TYPES)
    m.round_({0: ("C", [1]), 1: ("A", [1]), 2: ("A", [1])})  # C closed in round 2
    m.submit(0, ["D"], [1])
    out = m.tick()
    r = next(e for e in out.events if isinstance(e, RoundResolved))
    plays = {p.seat: p for p in r.plays}
    assert plays[1].gates == ("B",) and plays[1].auto and plays[2].gates == ("B",)
    assert plays[1].entered is None and plays[2].entered is None  # 1 against 1: blocked


def test_no_open_gate_the_card_is_still_used() -> None:
    m = KtsMatch(seats=3, layout="A:pass\nB:open")
    r = m.round_({0: ("A", [1]), 1: ("A", [2]), 2: ("A", [3])})
    assert m.entered(r) == {0: None, 1: None, 2: "A"}
    out = m.submit(0, ["A"], [1])
    assert out.rejection is not None and out.rejection.code == "no_open_gate"
    assert not m.gs.awaited(0) and not m.gs.awaited(1) and m.gs.awaited(2)
    out = m.submit(2, ["B"], [1])  # the only awaited player: the round closes at once
    r2 = next(e for e in out.events if isinstance(e, RoundResolved))
    assert {p.seat: (p.gates, p.cards, p.auto) for p in r2.plays} == {
        0: ((), (1,), True), 1: ((), (1,), True), 2: (("B",), (1,), False),
    }


# --- moving, escaping, running out ------------------------------------------------------


def test_entering_moves_inwards_until_escaped() -> None:
    m = KtsMatch("gatekeeping", seats=3, layout=TWO_LEVELS)
    m.round_({0: ("A", [1]), 1: ("B", [1]), 2: ("B", [1])})
    assert [p.depth for p in m.gs.players] == [1, 0, 0]
    view = views.view(m.ms, Viewer(seat=0))
    assert view["me"]["place"] == "Level 1" and view["level"]["members"] == [0]
    assert views.view(m.ms, Viewer(seat=1))["me"]["place"] == "Level 2"
    m.round_({0: ("D", [1]), 1: ("A", [1]), 2: ("B", [3])})
    assert m.gs.players[0].depth == 2 and m.gs.players[0].escaped == 2
    assert views.view(m.ms, Viewer(seat=0))["me"]["place"] == "Level 0"
    out = m.submit(0, ["D"], [1])
    assert out.rejection is not None and out.rejection.code == "escaped"


def test_keys_to_success_numbers_rooms_up_to_the_escape() -> None:
    m = KtsMatch(seats=3)
    view = views.view(m.ms, Viewer(seat=0))
    assert view["me"]["place"] == "Room 1" and view["layout"][-1]["place"] == "Room 5"
    assert view["terms"]["gate"] == "door" and view["terms"]["card_names"]["3"] == "key-card 3"
    g = KtsMatch("gatekeeping", seats=3)
    gview = views.view(g.ms, Viewer(seat=0))
    assert gview["me"]["place"] == "Level 5" and gview["layout"][-1]["place"] == "Level 1"
    assert gview["terms"]["card_names"] == {"1": "dagger", "2": "axe", "3": "broadsword"}
    assert kts.TERMS["gatekeeping"].place(5, 5) == "Level 0"
    assert kts.TERMS["keys-to-success"].place(5, 5) == "Room 6"


def test_out_of_cards_cannot_submit_and_is_not_awaited() -> None:
    m = KtsMatch(seats=4, layout=TWO_LEVELS)
    m.round_({0: ("A", list(HAND)), 1: ("A", list(HAND)), 2: ("B", [1]), 3: ("C", [1])})
    assert m.gs.players[0].hand == () and m.gs.players[0].depth == 0
    out = m.submit(0, ["A"], [1])
    assert out.rejection is not None and out.rejection.code == "no_cards"
    assert not m.gs.awaited(0) and not m.gs.awaited(1)
    m.submit(2, ["D"], [1])
    out = m.submit(3, ["E"], [1])  # the last awaited submission closes the round
    r = next(e for e in out.events if isinstance(e, RoundResolved))
    assert {p.seat: p.cards for p in r.plays if p.seat in (0, 1)} == {0: (), 1: ()}


def test_early_close_off_waits_for_the_deadline() -> None:
    m = KtsMatch(seats=3, layout=TWO_LEVELS, early_close=False)
    for seat in range(3):
        out = m.submit(seat, ["A"], [seat + 1])
        assert out.rejection is None and not any(isinstance(e, RoundResolved) for e in out.events)
    out = m.tick()
    assert any(isinstance(e, RoundResolved) for e in out.events) and m.gs.round == 2


def test_a_round_waits_for_every_awaited_player() -> None:
    m = KtsMatch(seats=3, layout=TWO_LEVELS)
    m.submit(0, ["A"], [1])
    m.submit(1, ["B"], [1])
    assert m.gs.round == 1 and m.gs.players[2].pending is None
    deadline = m.gs.deadline
    assert deadline is not None
    out = m.propose("tick", None, {"deadline": deadline}, ts=deadline - 1)
    assert out.events == ()
    assert m.tick().events and m.gs.round == 2


# --- the end, winners, losers ----------------------------------------------------------


def test_play_ends_when_all_but_one_escaped() -> None:
    m = KtsMatch(names=("Alpha", "Beta", "Gamma", "Omega"), seats=4, layout=ONE_LEVEL)
    out = m.submit(0, ["A", "B"], [3])
    m.submit(1, ["A", "B"], [2])
    m.submit(2, ["B", "C"], [2])
    out = m.submit(3, ["B", "C"], [1])
    assert [type(e) for e in out.events][:4] == [Submitted, RoundResolved, PlayEnded, GameOver]
    ended = next(e for e in out.events if isinstance(e, PlayEnded))
    assert ended.reason == "escaped" and ended.winners == (0, 2, 3) and ended.losers == (1,)
    assert ended.vote_deadline is None
    assert m.ms.ended and m.ms.result is not None
    assert m.ms.result.winner == 0 and m.ms.result.rounds == 1
    over = m.gs.finished
    assert over is not None and over.ec == 1 and over.ec_by == "only_loser"


def test_play_ends_when_nobody_inside_holds_a_card() -> None:
    m = KtsMatch(seats=4, layout=TWO_LEVELS)
    m.round_({0: ("A", [1]), 1: ("B", list(HAND)), 2: ("B", list(HAND)), 3: ("C", list(HAND))})
    # seat 0 in level 1 with 8 cards; seat 3 entered C (garnet) with none left; 1, 2 out.
    assert m.gs.phase == "play"
    r = m.round_({0: ("D", list(HAND[1:]))})
    assert m.entered(r)[0] == "D" and m.gs.phase == "vote"
    ended = m.gs.ended
    assert ended is not None and ended.reason == "no_cards" and ended.garnets == (0, 0, 0, 1)
    assert ended.winners == (0,) and ended.losers == (1, 2, 3)
    m.vote(0, 3)  # the sole winner's choice
    assert m.gs.finished is not None and m.gs.finished.ec == 3 and m.ms.ended


def test_every_match_ends_within_nine_rounds() -> None:
    for seed in range(3):
        bots = [bot_factory("keys-to-success", "random")(random.Random(f"{seed}:{s}")) for s in range(13)]
        sim = simulate("keys-to-success", bots, seed=bytes([seed]) * 32)
        assert sim.result is not None and sim.result.rounds <= 9


def test_first_to_escape_are_everyone_escaping_in_the_earliest_round() -> None:
    m = KtsMatch(seats=5, layout="A:open B:open C:open\nD:open E:open")
    m.round_({0: ("A", [1]), 1: ("B", [1]), 2: ("C", [1]), 3: ("A", [1, 1]), 4: ("B", [3])})
    # 3 enters A with 2 (0 blocked); 4 enters B with 3; 2 enters C.
    assert [p.depth for p in m.gs.players] == [0, 0, 1, 1, 1]
    m.round_({0: ("A", [1]), 1: ("B", [1]), 2: ("D", [1]), 3: ("E", [1]), 4: ("D E", [1])})
    # 0 and 1 are alone at A and B; 2 and 4 tie at D (1 each), 4 ties with 3 at E.
    assert [p.depth for p in m.gs.players] == [1, 1, 1, 1, 1]
    m.round_({0: ("D", [1]), 1: ("E", [1]), 2: ("D", [2]), 3: ("E", [2]), 4: ("D", [3])})
    winners, losers = kts.standings(m.gs)
    assert [p.escaped for p in m.gs.players] == [None, None, None, 3, 3]
    assert winners == (3, 4) and losers == (0, 1, 2)


THREE_PASS = "A:pass B:open C:open\nD:pass E:open F:open\nG:pass H:open I:open"


def test_three_pass_players_who_escape_win_too() -> None:
    m = KtsMatch(seats=4, layout=THREE_PASS)
    m.round_({0: ("A", [1]), 1: ("B", [1]), 2: ("C", [1]), 3: ("B", [1])})  # 1, 3 tie at B
    m.round_({0: ("D", [1]), 1: ("B", [1]), 2: ("E", [1]), 3: ("C", [1])})
    m.round_({0: ("G", [1]), 1: ("E", [1]), 2: ("H", [1]), 3: ("F", [1])})
    # seat 2 escaped in round 3 (H), seat 0 through three Pass gates in round 3 as well.
    m.round_({1: ("H", [1]), 3: ("I", [1])})
    assert [p.escaped for p in m.gs.players] == [3, 4, 3, 4]
    assert m.gs.players[0].passes == 3
    winners, losers = kts.standings(m.gs)
    assert winners == (0, 2) and losers == (1, 3)


def test_a_late_three_pass_player_wins_and_is_no_loser() -> None:
    m = KtsMatch(seats=4, layout=THREE_PASS)
    m.round_({0: ("A", [1]), 1: ("B", [1]), 2: ("C", [1]), 3: ("B", [1])})
    m.round_({0: ("D", [1]), 1: ("B", [1]), 2: ("E", [1]), 3: ("C", [1])})
    m.round_({0: ("H", [1]), 1: ("E", [1]), 2: ("H I", [1]), 3: ("F", [1])})  # 2 escapes first
    m.round_({0: ("G", [1]), 1: ("H", [1]), 3: ("I", [1])})
    assert [p.escaped for p in m.gs.players] == [4, 4, 3, 4]
    assert m.gs.players[0].passes == 3
    winners, losers = kts.standings(m.gs)
    # Everyone escaped: the last to escape lose, but not seat 0 (three Pass gates).
    assert winners == (0, 2) and losers == (1, 3)
    assert m.gs.phase == "vote"


def test_everyone_escaped_the_last_are_looked_for_without_the_three_pass_players() -> None:
    """"If nobody failed to escape, the losers will be those who were last to escape (This
    excludes players who entered at least 3 Pass gates)": the three-Pass players are left
    out first, then the latest round is looked for among the rest. Here the last round's
    escapers (2 and 3) are both three-Pass winners, so seat 1, the last of the others, loses.
    """
    late = "A:pass B:pass C:open D:open\nE:pass F:pass G:open H:open\nI:pass J:pass K:open L:open"
    m = KtsMatch(seats=4, layout=late)
    m.round_({0: ("C", [1]), 1: ("D", [1]), 2: ("A", [1]), 3: ("B", [1])})
    m.round_({0: ("G", [2]), 1: ("G", [1]), 2: ("E", [1]), 3: ("F", [1])})
    m.round_({0: ("K", [1]), 1: ("G", [1]), 2: ("L", [1]), 3: ("L", [1])})  # 0 escapes first
    m.round_({1: ("K", [1]), 2: ("L", [1]), 3: ("L", [1])})  # 1 escapes; 2 and 3 tie at L
    m.round_({2: ("I", [2]), 3: ("J", [2])})  # both through their third Pass gate
    over = m.gs.finished
    assert over is not None and over.escaped == (3, 4, 5, 5) and over.passes == (0, 0, 3, 3)
    assert over.winners == (0, 2, 3) and over.losers == (1,)
    assert over.ec == 1 and over.ec_by == "only_loser"


def test_nobody_failed_and_everyone_escaped_together_means_no_loser() -> None:
    m = KtsMatch(seats=3, layout="A:open B:open C:open")
    m.round_({0: ("A", [1]), 1: ("B", [1]), 2: ("C", [1])})
    over = m.gs.finished
    assert over is not None and over.winners == (0, 1, 2) and over.losers == ()
    assert over.ec is None and over.ec_by == "none"
    assert m.ms.result is not None and m.ms.result.winner == 0


def test_nobody_escaped_has_no_winner_and_the_tie_breaks_decide_at_once() -> None:
    m = KtsMatch(seats=3, layout="A:open")
    m.round_({0: ("A", list(HAND)), 1: ("A", list(HAND)), 2: ("A", [1, 1, 1, 1, 2, 2, 3, 3])})
    # 17, 17, 15: seat 2 enters with the highest unique strength
    assert m.gs.players[2].escaped == 1 and m.gs.phase == "vote"
    n = KtsMatch(seats=3, layout="A:open")
    n.round_({0: ("A", list(HAND)), 1: ("A", list(HAND)), 2: ("A", list(HAND))})
    over = n.gs.finished
    assert over is not None and over.winners == () and over.losers == (0, 1, 2)
    assert over.ec_by == "draw" and over.ec == Rng(n.gs.seed, "ec-draw").choice([0, 1, 2])
    assert n.ms.result is not None and n.ms.result.winner is None
    assert "winners: nobody" in n.ms.result.reason


# --- the vote --------------------------------------------------------------------------

VOTE_LAYOUT = "A:open B:open C:garnet D:open\nE:open F:open G:open"


def vote_match(**options: Any) -> KtsMatch:
    """Two winners (0, 1), four losers (2..5); seat 2 holds a garnet."""
    m = KtsMatch(seats=6, layout=VOTE_LAYOUT, **options)
    m.round_({0: ("A", [1]), 1: ("B", [1]), 2: ("C", [1]), 3: ("D", [1]), 4: ("A", list(HAND)), 5: ("A", list(HAND))})
    m.round_({0: ("E", [1]), 1: ("F", [1]), 2: ("G", list(HAND[1:])), 3: ("G", list(HAND[1:]))})
    assert m.gs.phase == "vote"
    ended = m.gs.ended
    assert ended is not None and ended.winners == (0, 1) and ended.losers == (2, 3, 4, 5)
    assert ended.garnets == (0, 0, 1, 0, 0, 0)
    return m


def test_the_vote_window_is_the_option_and_result_waits_for_the_ec() -> None:
    m = vote_match()
    ended = m.gs.ended
    assert ended is not None and ended.vote_deadline == ended.at + 86_400_000
    assert m.ms.result is None and not m.ms.ended
    assert engine.deadline(m.ms) == ended.vote_deadline
    fast = vote_match(clock_scale=0.01)
    assert fast.gs.ended is not None and fast.gs.ended.vote_deadline == fast.gs.ended.at + 864_000


def test_only_winners_vote_and_only_for_losers() -> None:
    m = vote_match()
    assert m.vote(2, 3).rejection.code == "not_a_winner"  # type: ignore[union-attr]
    assert m.vote(0, 1).rejection.code == "not_a_loser"  # type: ignore[union-attr]
    assert m.vote(0, 9).rejection.code == "not_a_loser"  # type: ignore[union-attr]
    early = KtsMatch(seats=3)
    assert early.vote(0, 1).rejection.code == "not_voting"  # type: ignore[union-attr]


def test_a_majority_decides_once_every_winner_voted() -> None:
    m = vote_match()
    assert m.vote(0, 3).rejection is None
    assert m.vote(0, 5).rejection is None  # changed its mind
    assert m.ms.result is None
    out = m.vote(1, 5)
    assert any(isinstance(e, GameOver) for e in out.events)
    over = m.gs.finished
    assert over is not None and over.ec == 5 and over.ec_by == "vote" and over.votes == (5, 5, None, None, None, None)
    assert m.ms.ended and m.ms.result is not None and m.ms.result.scores == (0, 0, 1, 0, 0, 0)


def test_a_tied_vote_goes_to_the_fewest_garnets() -> None:
    m = vote_match()
    m.vote(0, 2)
    m.vote(1, 4)
    over = m.gs.finished
    assert over is not None and over.ec == 4 and over.ec_by == "garnets"


def test_a_tie_on_garnets_too_is_drawn_from_the_seed() -> None:
    m = vote_match()
    m.vote(0, 3)
    m.vote(1, 4)
    over = m.gs.finished
    assert over is not None and over.ec_by == "draw"
    assert over.ec == Rng(m.gs.seed, "ec-draw").choice([3, 4])


def test_no_votes_by_the_end_of_the_window_the_tie_breaks_decide() -> None:
    m = vote_match(vote_seconds=60)
    out = m.tick()
    over = next(e for e in out.events if isinstance(e, GameOver))
    # All four losers tie at no votes; fewest garnets: 3, 4, 5; then the draw.
    assert over.ec_by == "draw" and over.ec == Rng(m.gs.seed, "ec-draw").choice([3, 4, 5])
    assert m.ms.ended


def test_one_vote_in_the_window_is_a_majority() -> None:
    m = vote_match()
    m.vote(1, 2)
    m.tick()
    over = m.gs.finished
    assert over is not None and over.ec == 2 and over.ec_by == "vote"


def test_elimination_candidate_unit() -> None:
    m = vote_match()
    gs = m.gs
    assert kts.elimination_candidate(gs, (), ()) == (None, "none")
    assert kts.elimination_candidate(gs, (4,), ()) == (4, "only_loser")
    assert kts.elimination_candidate(gs, (2, 3), (2, 3, None, None, None, None)) == (3, "garnets")


# --- chat ------------------------------------------------------------------------------


def split_match() -> KtsMatch:
    """Round 2 of a default-layout match: seats 0, 1 in the second level, 2, 3 outside."""
    m = KtsMatch(seats=4)
    m.round_({0: ("A", [1]), 1: ("B", [1]), 2: ("C", [1]), 3: ("C", [1])})
    assert [p.depth for p in m.gs.players] == [1, 1, 0, 0]
    return m


def test_chat_reaches_only_the_senders_level() -> None:
    m = split_match()
    out = m.chat(0, "meet me at K")
    sent = out.events[0]
    assert isinstance(sent, ChatSent) and sent.to == (0, 1) and sent.depth == 1 and sent.round == 2
    for viewer, sees in [
        (Viewer(seat=0), True), (Viewer(seat=1), True), (Viewer(seat=2), False), (Viewer(seat=3), False),
        (SPECTATOR, False), (AUDITOR, True),
    ]:
        events = project_events(views, m.ms, out, viewer)
        assert bool(events) == sees, viewer
        chat = match_view(views, m.ms, viewer)["game_state"]["chat"]
        assert [c["text"] for c in chat] == (["meet me at K"] if sees else [])
    assert frame(m.ms, out, Viewer(seat=2)) is None  # no update at all
    assert frame(m.ms, out, Viewer(seat=1)) is not None


def test_chat_goes_to_the_level_at_that_moment_and_resets_each_round() -> None:
    m = KtsMatch(seats=4)
    out = m.chat(2, "everyone is here")
    assert out.events[0].to == (0, 1, 2, 3)  # type: ignore[attr-defined]
    m.round_({0: ("A", [1]), 1: ("B", [1]), 2: ("C", [1]), 3: ("C", [1])})
    assert m.gs.chat == ()
    assert views.view(m.ms, Viewer(seat=0))["chat"] == []
    out = m.chat(2, "now only us")
    assert out.events[0].to == (2, 3)  # type: ignore[attr-defined]
    assert views.view(m.ms, Viewer(seat=3))["chat"][0]["text"] == "now only us"


@pytest.mark.parametrize(
    ("text", "code"),
    [("", "chat_empty"), ("   ", "chat_empty"), ("x" * 51, "chat_too_long"), ("bell\x07", "chat_bad_text")],
)
def test_chat_size_and_content_limits(text: str, code: str) -> None:
    m = KtsMatch(seats=3, chat_max_chars=50)
    out = m.chat(0, text)
    assert out.rejection is not None and out.rejection.code == code and out.events == ()


def test_chat_rate_limit_per_round() -> None:
    m = KtsMatch(seats=3, chat_per_round=2)
    assert m.chat(0, "one").rejection is None
    assert m.chat(0, "two\nlines are fine").rejection is None
    out = m.chat(0, "three")
    assert out.rejection is not None and out.rejection.code == "chat_limit"
    assert "at most 2 messages" in out.rejection.reason
    assert views.view(m.ms, Viewer(seat=0))["me"]["chats_left"] == 0
    assert m.chat(1, "others may").rejection is None
    m.round_({0: ("A", [1]), 1: ("B", [1]), 2: ("C", [1])})
    assert m.chat(0, "a new round").rejection is None


def test_after_play_the_chat_is_one_channel_for_everyone() -> None:
    m = vote_match()
    out = m.chat(4, "please not me")
    sent = out.events[0]
    assert isinstance(sent, ChatSent) and sent.depth is None and sent.to == tuple(range(6))
    for viewer in [Viewer(seat=0), Viewer(seat=5), SPECTATOR]:
        assert project_events(views, m.ms, out, viewer)[0]["text"] == "please not me"


# --- projections -----------------------------------------------------------------------


def test_a_player_sees_its_cards_its_level_and_its_levels_results_only() -> None:
    m = split_match()
    v = views.view(m.ms, Viewer(seat=2))
    assert v["me"]["hand"] == list(HAND[1:]) and v["me"]["depth"] == 0
    assert v["level"]["members"] == [2, 3]
    assert [g["name"] for g in v["level"]["gates"]] == list("ABCDEFGHIJ")
    assert v["players"] is None and v["all_levels"] is None and v["results"] is None
    last = v["history"][-1]
    assert last["depth"] == 0 and last["round"] == 1
    assert last["results"] == [
        {"seat": 0, "cards_used": 1, "entered": "A"},
        {"seat": 1, "cards_used": 1, "entered": "B"},
        {"seat": 2, "cards_used": 1, "entered": None},
        {"seat": 3, "cards_used": 1, "entered": None},
    ]
    assert last["you"]["cards"] == [1] and last["you"]["gates"] == ["C"]
    # What seat 0 sees of the new round: its level only.
    v0 = views.view(m.ms, Viewer(seat=0))
    assert v0["level"]["members"] == [0, 1] and v0["level"]["place"] == "Room 2"
    assert [g["name"] for g in v0["level"]["gates"]] == list("KLMNOPQR")


def test_values_of_other_players_cards_are_never_shown() -> None:
    m = KtsMatch(seats=3, layout=TWO_LEVELS)
    m.round_({0: ("A", [3, 2]), 1: ("B", [1]), 2: ("A", [3])})
    for seat in range(3):
        resolved = [
            event
            for frame in m.frames(Viewer(seat=seat))
            for event in msgspec.json.decode(frame)["events"]
            if event["type"] == "round_resolved"
        ]
        assert len(resolved) == 1
        assert resolved[0]["you"]["seat"] == seat
        assert [set(r) for r in resolved[0]["results"]] == [{"seat", "cards_used", "entered"}] * 3
        assert [r["cards_used"] for r in resolved[0]["results"]] == [2, 1, 1]


def test_others_submissions_are_not_even_announced() -> None:
    m = KtsMatch(seats=3)
    out = m.submit(0, ["A"], [3])
    assert project_events(views, m.ms, out, Viewer(seat=0))[0]["cards"] == [3]
    assert project_events(views, m.ms, out, Viewer(seat=1)) == []
    assert project_events(views, m.ms, out, SPECTATOR) == []
    assert project_events(views, m.ms, out, AUDITOR)[0]["gates"] == ["A"]
    assert views.view(m.ms, Viewer(seat=0))["me"]["pending"] == {"gates": ["A"], "cards": [3], "strength": 3}


def test_spectators_see_only_what_every_player_knows() -> None:
    m = split_match()
    v = views.view(m.ms, SPECTATOR)
    assert v["me"] is None and v["level"] is None and v["players"] is None and v["chat"] == []
    assert v["history"] == [] and v["all_levels"] is None and v["results"] is None
    assert v["round"] == 2 and v["phase"] == "play" and len(v["layout"]) == 5
    round_events = project_events(views, m.ms, m.outcomes[-1], SPECTATOR)
    assert round_events == [
        {"type": "round_resolved", "round": 1, "at": m.entries[-1].ts},
        {"type": "round_started", "round": 2, "deadline": m.gs.deadline},
    ]


def test_when_play_ends_all_restrictions_lift_but_votes_stay_secret() -> None:
    m = vote_match()
    m.vote(0, 3)
    for viewer in (Viewer(seat=4), SPECTATOR):
        v = views.view(m.ms, viewer)
        assert v["open"] and v["players"] is not None and v["all_levels"] is not None
        assert [p["hand"] for p in v["players"]][4] == []
        assert len(v["history"]) == 2 and "levels" in v["history"][0]
        assert v["players"][0]["vote"] is None and v["players"][0]["voted"] is True
        assert v["results"]["winners"] == [0, 1] and v["results"]["voters"] == [0]
    assert views.view(m.ms, Viewer(seat=0))["players"][0]["vote"] == 3
    assert views.view(m.ms, AUDITOR)["players"][0]["vote"] == 3
    # The entry that ended play shows its round in full to everyone.
    last_round = next(o for o in m.outcomes if any(isinstance(e, PlayEnded) for e in o.events))
    ms_after = m.states[m.outcomes.index(last_round)]
    resolved = project_events(views, ms_after, last_round, Viewer(seat=5))[0]
    assert resolved["type"] == "round_resolved" and "levels" in resolved
    m.vote(1, 3)
    assert m.ms.ended
    assert match_view(views, m.ms, Viewer(seat=4))["game_state"]["players"][1]["vote"] == 3


def test_a_vote_event_names_its_candidate_only_to_the_voter_until_the_ec() -> None:
    m = vote_match()
    out = m.vote(0, 3)
    for viewer in (Viewer(seat=1), Viewer(seat=3), SPECTATOR):
        assert project_events(views, m.ms, out, viewer) == [{"type": "vote_cast", "seat": 0, "at": m.ts}]
    assert project_events(views, m.ms, out, Viewer(seat=0))[0]["candidate"] == 3
    assert project_events(views, m.ms, out, AUDITOR)[0]["candidate"] == 3
    out = m.vote(1, 4)  # the last vote decides the EC: now everyone sees every vote
    for viewer in (Viewer(seat=3), SPECTATOR):
        events = project_events(views, m.ms, out, viewer)
        assert events[0]["candidate"] == 4
        over = next(e for e in events if e["type"] == "game_over")
        assert over["votes"] == [3, 4, None, None, None, None]


def test_after_play_the_view_holds_the_open_channel_not_the_old_level_channels() -> None:
    """Play's level channels are not re-sent when restrictions lift: each player keeps what
    it received; from `play_ended` on there is one channel for everyone."""
    m = KtsMatch(seats=6, layout=VOTE_LAYOUT)
    m.round_({0: ("A", [1]), 1: ("B", [1]), 2: ("C", [1]), 3: ("D", [1]), 4: ("A", list(HAND)), 5: ("A", list(HAND))})
    m.chat(0, "inner level only")
    m.round_({0: ("E", [1]), 1: ("F", [1]), 2: ("G", list(HAND[1:])), 3: ("G", list(HAND[1:]))})
    assert m.gs.phase == "vote"
    for viewer in (Viewer(seat=0), Viewer(seat=4), SPECTATOR, AUDITOR):
        assert views.view(m.ms, viewer)["chat"] == []
    m.chat(4, "open now")
    for viewer in (Viewer(seat=0), Viewer(seat=4), SPECTATOR):
        assert [c["text"] for c in views.view(m.ms, viewer)["chat"]] == ["open now"]


def test_projections_are_json_for_every_viewer() -> None:
    bots = [bot_factory("keys-to-success", "random")(random.Random(s)) for s in range(5)]
    sim = simulate("keys-to-success", bots, options={"seats": 5})
    ms = engine.open_match(kts, sim.entries[0])
    viewers = [Viewer(seat=s) for s in range(5)] + [SPECTATOR, AUDITOR]
    for entry in sim.entries[1:]:
        ms, outcome = engine.apply(ms, entry)
        for viewer in viewers:
            msgspec.json.encode(project_events(views, ms, outcome, viewer))
            msgspec.json.encode(match_view(views, ms, viewer))
            for event in outcome.events:
                assert isinstance(views.describe(ms, event), list)


# --- replay ----------------------------------------------------------------------------


def test_replay_prints_each_round_as_a_table_per_level(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    m = split_match()
    m.chat(2, "hello outside")
    m.round_({0: ("K L", [2]), 1: ("L", [1]), 2: ("A", [1]), 3: ("B", [1])})
    log = tmp_path / "kts.jsonl"
    log.write_bytes(b"".join(msgspec.json.encode(e) + b"\n" for e in m.entries))
    assert cli.main(["replay", str(log), "--verify"]) == 0
    out = capsys.readouterr().out
    assert "match k1: keys-to-success / keys-to-success" in out
    assert "Round 2 results:" in out
    assert "  Room 1 (doors A B C D E F G H I J):" in out and "  Room 2 (doors K L M N O P Q R):" in out
    assert "seat 0 (P0)  K+L" in out and "entered K" in out
    assert "Round 2 chat [Room 1] seat 2 (P2): hello outside" in out
    assert out.strip().splitlines()[-1].startswith("verify: ok")


def test_the_log_folds_and_verifies() -> None:
    m = vote_match()
    m.chat(3, "spare me")
    m.vote(0, 2)
    m.vote(1, 2)
    assert engine.verify(rules_by_name(), m.entries).ok
    again = engine.fold(kts, m.entries)
    assert again.result == m.ms.result and again.game_state == m.gs


# --- bots and the command line ---------------------------------------------------------


@pytest.mark.parametrize("variant", ["keys-to-success", "gatekeeping"])
@pytest.mark.parametrize("lineup", ["heuristic", "random", "mixed"])
def test_bots_play_thirteen_seats_without_rejections(variant: str, lineup: str) -> None:
    for game in range(2):
        names = ["heuristic" if (lineup == "heuristic" or (lineup == "mixed" and s % 2 == 0)) else "random" for s in range(13)]
        bots = [bot_factory("keys-to-success", n)(random.Random(f"{variant}:{game}:{s}")) for s, n in enumerate(names)]
        sim = simulate("keys-to-success", bots, variant=variant, seed=bytes([game]) * 32)
        assert sim.result is not None
        assert sim.rejections == [], sim.rejections[:3]
        over = next(e for o in sim.outcomes for e in o.events if isinstance(e, GameOver))
        assert all(over.votes[w] is not None for w in over.winners if len(over.losers) > 1)


def test_heuristic_bots_escape_more_than_random_ones() -> None:
    escaped = {"heuristic": 0, "random": 0}
    for game in range(6):
        names = ["heuristic" if s % 2 == 0 else "random" for s in range(13)]
        bots = [bot_factory("keys-to-success", n)(random.Random(f"h:{game}:{s}")) for s, n in enumerate(names)]
        sim = simulate("keys-to-success", bots, seed=bytes([game + 9]) * 32)
        over = next(e for o in sim.outcomes for e in o.events if isinstance(e, GameOver))
        for s, r in enumerate(over.escaped):
            if r is not None:
                escaped[names[s]] += 1
    assert escaped["heuristic"] > 1.5 * escaped["random"], escaped


def test_registry_finds_bots_and_terminal() -> None:
    assert set(BOTS["keys-to-success"]) >= {"random", "heuristic"}
    assert "keys-to-success" in TERMINALS


def test_cli_takes_a_variant_name_as_the_game() -> None:
    assert cli.resolve_game("gatekeeping", None) == ("keys-to-success", "gatekeeping")
    assert cli.resolve_game("gatekeeping", "gatekeeping") == ("keys-to-success", "gatekeeping")
    assert cli.resolve_game("keys-to-success", None) == ("keys-to-success", None)
    assert cli.resolve_game("gatekeeping", "keys-to-success") == ("gatekeeping", "keys-to-success")
    assert cli.resolve_game("chess", None) == ("chess", None)


def test_terminal_parses_and_renders() -> None:
    term = TERMINALS["keys-to-success"]
    m = split_match()
    view = match_view(views, m.ms, Viewer(seat=0))
    assert term.parse("k l 1 2", view) == {"type": "submit", "round": 2, "gates": ["K", "L"], "cards": [1, 2]}
    assert term.parse("M+N 3", view)["gates"] == ["M", "N"]
    assert term.parse("say hi there", view) == {"type": "chat", "text": "hi there"}
    assert term.parse("vote 3", view) == {"type": "vote", "candidate": 3}
    for bad in ("A 1", "K", "K 4", "vote x"):
        with pytest.raises(ValueError):
            term.parse(bad, view)
    text = term.render(view, 12.0)
    assert "Room 2" in text and "K[O]" in text and "M[P]" in text
    lines = term.render_events(view, project_events(views, m.ms, m.outcomes[-1], Viewer(seat=0)))
    assert any("round 1 in Room 1" in line for line in lines)
