"""Labyrinth hosted (domain/games/labyrinth/game.py and projections/labyrinth.py) through the
engine, as domain.driver.MatchDriver drives a match: the options a match is created with,
the clocks of section 9, the commands as text and as JSON, what each viewer is shown, and
the log's replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from domain import engine
from domain.contract import OptionsError
from domain.driver import T0, MatchDriver
from domain.games.labyrinth import game as lab
from domain.games.labyrinth import rules
from domain.games.labyrinth.plan import River
from domain.games.labyrinth.plan_text import parse_plan
from projections import labyrinth as views
from projections.common import effective
from projections.contract import Viewer
from projections.registry import rules_by_name

EXAMPLE = (Path(__file__).parents[2] / "domain" / "games" / "labyrinth" / "plans" / "example.txt").read_text()
"""The rules page's example plan: a delta at 3,4, rivers at 1,2 1,3 1,4 2,4 4,4 4,5 4,6, the
pits a1 2,2, a2 3,6, a3 5,1, a fake treasure at 3,1, the true one at 2,3."""

SCALE = 0.001  # 60 s a move is 60 ms, a break of 300 s 300 ms
MOVE_MS = 60
BREAK_MS = 300


def match(players: int = 2, seed: bytes = bytes(32), **options: Any) -> MatchDriver:
    """A match on the example plan with every seat taken (order: the seat numbers for the
    default seed with two players)."""
    d = MatchDriver(lab, options={"players": players, "plan": EXAMPLE, "clock_scale": SCALE, **options},
                    seed=seed)
    d.seat_all()
    return d


def state(d: MatchDriver) -> lab.State:
    gs: lab.State = d.ms.game_state
    return gs


def to_act(d: MatchDriver) -> int:
    seat = rules.to_act(state(d).core)
    assert seat is not None
    return seat


def send(d: MatchDriver, command: dict[str, Any], seat: int | None = None, at: int | None = None) -> engine.Outcome:
    return d.propose("command", to_act(d) if seat is None else seat, command, at)


def started(d: MatchDriver, *cells: tuple[int, int]) -> MatchDriver:
    """Each player in turn order chooses the next of `cells`; the game begins."""
    for cell in cells:
        outcome = send(d, {"type": "start", "cell": list(cell)})
        assert outcome.rejection is None, outcome.rejection
    assert state(d).core.phase == "play"
    return d


def resolved(outcome: engine.Outcome) -> lab.Resolved:
    assert outcome.rejection is None, outcome.rejection
    found = [e for e in outcome.events if isinstance(e, lab.Resolved)]
    assert len(found) == 1
    return found[0]


def keys(event: lab.Resolved) -> list[str]:
    return [e.key for e in event.said]


# --- options -----------------------------------------------------------------------------------


def test_a_broken_host_plan_is_refused_naming_the_rule_and_the_cell() -> None:
    on_weaponry = EXAMPLE.replace("treasure 2,3 true", "treasure 5,6 true")
    with pytest.raises(OptionsError) as caught:
        match(plan=on_weaponry)
    assert str(caught.value) == ("option 'plan' breaks rule 8.3 at cell 5,6: the true treasure lies on "
                                 "weaponry; it must lie on land")
    walled = EXAMPLE.replace("  1 # .   >   >   v", "  1 # .   > | >   v")  # across the flow
    with pytest.raises(OptionsError, match=r"^option 'plan' breaks rule 4\.5 at cell 1,2: "):
        match(plan=walled)


def test_a_plan_text_that_is_not_a_plan_is_refused_with_its_line_and_column() -> None:
    with pytest.raises(OptionsError, match=r"^option 'plan' cannot be read: line 11, column 7: cell 1,1: "
                                           r"expected a cell code"):
        match(plan=EXAMPLE.replace("  1 # .   >", "  1 # X   >"))
    with pytest.raises(OptionsError, match="option 'plan': a plan in the text format"):
        match(plan="   ")


def test_a_plan_outside_the_matchs_limits_names_the_option() -> None:
    with pytest.raises(OptionsError) as caught:
        match(max_pits=1)
    assert str(caught.value) == ("option 'plan' breaks rule 7.1 at cell 2,2: the plan has 3 pits; the "
                                 "match allows at most 1 (the match's limits: option 'max_pits')")
    with pytest.raises(OptionsError, match=r"^option 'plan' breaks rule 7\.1: the plan has 2 weaponries; the "
                                           r"match allows exactly 3 \(the match's limits: option 'weaponries'\)$"):
        match(hospitals=2, weaponries=3)
    with pytest.raises(OptionsError, match="option 'common_start' needs a start cell"):
        match(plan=EXAMPLE.replace("start 3,5\n", ""), common_start=True)


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_two_to_five_players(players: int) -> None:
    d = match(players)
    assert d.seats == players
    assert sorted(state(d).core.order) == list(range(players))


@pytest.mark.parametrize("players", [1, 6, 0])
def test_other_numbers_of_players_are_refused(players: int) -> None:
    with pytest.raises(OptionsError, match=r"^option 'players' must be between 2 and 5"):
        match(players)


def test_a_handicap_for_a_player_not_in_the_match_is_refused() -> None:
    with pytest.raises(OptionsError) as caught:
        match(2, handicaps=[{"player": 3, "cells": 2}])
    assert str(caught.value) == "option 'handicaps' names player 3, and option 'players' is 2"
    assert state(match(3, handicaps=[{"player": 3, "cells": 2}])).core.players[2].asks == 2


def test_a_host_plan_is_secret_until_the_end_and_a_drawn_one_is_from_the_seed() -> None:
    d = match()
    assert d.ms.options.plan is None  # the recorded options leave it out
    assert d.ms.setup_given and d.ms.setup["source"] == "host"
    assert not lab.seeded_setup(d.ms.setup)
    assert parse_plan(d.ms.setup["plan"]) == parse_plan(EXAMPLE)
    drawn = MatchDriver(lab, options={"players": 2, "rows": 4, "columns": 6})
    drawn.seat_all()
    assert lab.seeded_setup(drawn.ms.setup) and not drawn.ms.setup_given
    again = MatchDriver(lab, options={"players": 2, "rows": 4, "columns": 6})
    again.seat_all()
    assert again.ms.setup == drawn.ms.setup
    assert max(r for r, _ in parse_plan(drawn.ms.setup["plan"]).cells) == 4


# --- the clocks -----------------------------------------------------------------------------------


def test_the_first_to_choose_has_move_seconds_from_the_start() -> None:
    d = match()
    assert d.deadline() == T0 + MOVE_MS
    assert views.view(d.ms, Viewer(0))["move_ms"] == MOVE_MS


def test_a_missed_start_choice_is_drawn_from_the_seed_among_accepted_cells_and_said() -> None:
    drawn = set()
    for n in range(6):
        d = match(seed=bytes([n]) * 32)
        first, second = state(d).core.order
        send(d, {"type": "start", "cell": [3, 2]}, first, T0 + 10)
        before = state(d).core
        accepted = rules.start_candidates(before, second)
        assert d.deadline() == T0 + 10 + MOVE_MS
        event = resolved(d.advance())
        assert (event.seat, event.act) == (second, "drawn")
        cell = (event.body[0], event.body[1])
        assert cell in accepted and cell != (3, 2)
        assert not isinstance(before.plan.type_at(cell), River)
        assert event.said[0] == rules.Event("start_drawn", second)  # said to everyone
        assert rules.say(event.said[0]) == f"Player {second + 1} did not choose in time: the game master draws its start cell"
        assert state(d).core.phase == "play"
        assert state(d).core.players[second].cell == cell
        # the cell drawn is told to its player alone
        mine = views.event(d.ms, event, Viewer(second))
        theirs = views.event(d.ms, event, Viewer(first))
        assert mine is not None and theirs is not None
        assert mine["cell"] == list(cell) and "cell" not in theirs
        assert {"key": "start_drawn", "seat": second, "args": {}, "text": rules.say(event.said[0])} in theirs["said"]
        # the same seed draws the same cell
        again = match(seed=bytes([n]) * 32)
        send(again, {"type": "start", "cell": [3, 2]}, first, T0 + 10)
        assert resolved(again.advance()).body == event.body
        drawn.add(cell)
    assert len(drawn) > 1  # the seed decides


def test_a_missed_move_loses_the_game() -> None:
    d = started(match(3), (3, 2), (5, 2), (1, 5))
    late = to_act(d)
    at = d.deadline()
    assert at is not None
    event = resolved(d.advance())
    assert (event.seat, event.act, event.at) == (late, "missed", at)
    assert keys(event)[0] == "timed_out"
    gs = state(d)
    assert gs.standings[late] == "dead" and not gs.core.players[late].alive
    assert gs.moves[late] == 1
    # its corpse lies where it stood, with its items; the clock restarts for the next one
    cell = gs.core.players[late].cell
    assert cell is not None and late in gs.core.pile(cell).corpses
    assert d.deadline() == at + MOVE_MS and to_act(d) != late
    assert views.view(d.ms, Viewer(None))["players"][late]["standing"] == "dead"


def test_a_player_outside_who_misses_its_move_stands_as_lost_not_dead() -> None:
    d = match(3)
    for cell in ((3, 3), (1, 1), (5, 2)):  # the order is 2, 0, 1: seat 0 starts at 1,1
        send(d, {"type": "start", "cell": list(cell)})
    assert state(d).core.players[0].cell == (1, 1)
    while to_act(d) != 0:
        send(d, {"type": "move", "move": "skip"})
    assert keys(resolved(send(d, {"type": "move", "move": "go up"}, 0)))[1:3] == ["out", "must_return"]
    while to_act(d) != 0:
        send(d, {"type": "move", "move": "skip"})
    assert keys(resolved(d.advance()))[0] == "timed_out"
    player = state(d).core.players[0]
    assert player.alive and player.lost  # out of the game, no corpse: lost (3.4, section 9)
    assert state(d).standings[0] == "lost"


def test_a_missed_move_of_the_last_but_one_ends_the_game() -> None:
    d = started(match(2), (3, 2), (5, 2))
    late = to_act(d)
    d.advance()
    assert d.ms.ended
    assert d.ms.result is not None and d.ms.result.winner == 1 - late
    assert d.ms.result.reason == "the last one alive (3.5)"
    assert d.deadline() is None


def test_a_missed_move_is_a_skip_under_the_option() -> None:
    d = started(match(2, missed_move="skip"), (3, 2), (5, 2))
    late = to_act(d)
    at = d.deadline()
    assert at is not None
    event = resolved(d.advance())
    assert event.act == "missed" and keys(event)[0] == "skip"
    assert state(d).standings == ("playing", "playing")
    assert state(d).moves[late] == 1
    assert d.deadline() == at + MOVE_MS and to_act(d) == 1 - late
    # everyone skipping in a row is a draw (6.6)
    d.advance()
    assert d.ms.ended and d.ms.result is not None and d.ms.result.winner is None


def test_a_break_adds_break_seconds_before_the_move() -> None:
    d = started(match(2), (3, 2), (5, 2))
    seat = to_act(d)
    event = resolved(send(d, {"type": "break"}, seat, T0 + 20))
    assert keys(event) == ["break"]
    assert d.deadline() == T0 + 20 + BREAK_MS + MOVE_MS
    assert event.said[0].args["seconds"] == BREAK_MS / 1000  # said on the match's clock
    assert views.view(d.ms, Viewer(None))["breaks"] == [seat]
    refused = send(d, {"type": "break"}, seat, T0 + 30)
    assert refused.rejection is not None and refused.rejection.code == "no_break"
    assert d.deadline() == T0 + 20 + BREAK_MS + MOVE_MS


def test_a_break_agreed_by_vote_gives_the_player_to_move_break_seconds_more() -> None:
    d = started(match(3), (3, 2), (5, 2), (1, 5))
    deadline = d.deadline()
    assert deadline is not None
    first, second, third = state(d).core.order
    assert keys(resolved(send(d, {"type": "vote", "yes": True}, second, T0 + 5))) == ["break_proposed"]
    assert d.deadline() == deadline
    assert views.view(d.ms, Viewer(None))["votes"] == {str(second): True}
    event = resolved(send(d, {"type": "vote", "yes": True}, third, T0 + 6))
    assert keys(event) == ["break_vote", "break_agreed"]
    assert d.deadline() == deadline + BREAK_MS
    assert to_act(d) == first


def test_status_and_recall_do_not_restart_the_clock() -> None:
    d = started(match(2), (3, 2), (5, 2))
    deadline = d.deadline()
    mover, other = state(d).core.order
    for seat, text in ((mover, "status"), (other, "status"), (other, "recall 1"), (mover, "recall 2")):
        event = resolved(send(d, {"type": "move", "move": text}, seat, T0 + 40))
        assert event.act == "move"
        assert d.deadline() == deadline
    assert state(d).moves == (0, 0)
    status = resolved(send(d, {"type": "move", "move": "status"}, other, T0 + 41)).said[0]
    assert status.key == "status" and status.to is None  # told to everyone (6.4)
    assert status.args["status"] == "Three bullets, three grenades, a landmine, healthy"


# --- commands --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "structured"), [
    ("go left, shoot up", {"go": "left", "after": [{"type": "shoot", "direction": "up"}]}),
    ("blow the up wall, then go up", {"before": [{"type": "blow", "direction": "up"}], "go": "up"}),
    ("go left; if I find a treasure, shoot right",
     {"go": "left", "when": [{"if": "treasure", "then": [{"type": "shoot", "direction": "right"}]}]}),
    ("go left, don't tell the result", {"go": "left", "dark": True}),
    ("skip", {"kind": "skip"}),
    ("recall 2", {"kind": "recall", "player": 2}),
])
def test_a_move_as_text_and_as_json_gives_the_same_event(text: str, structured: dict[str, Any]) -> None:
    as_text = started(match(2), (3, 2), (5, 2))
    as_json = started(match(2), (3, 2), (5, 2))
    seat = to_act(as_text)
    one = resolved(send(as_text, {"type": "move", "move": text}, seat, T0 + 7))
    other = resolved(send(as_json, {"type": "move", "move": structured}, seat, T0 + 7))
    assert one == other
    assert as_text.ms.game_state == as_json.ms.game_state
    assert views.event(as_text.ms, one, Viewer(1 - seat)) == views.event(as_json.ms, other, Viewer(1 - seat))


def test_a_refused_command_changes_nothing() -> None:
    d = started(match(2), (3, 2), (5, 2))
    mover, other = state(d).core.order
    before, deadline, seq = d.ms.game_state, d.deadline(), d.ms.seq
    cases = [
        (other, {"type": "move", "move": "go left"}, "not_your_turn"),
        (mover, {"type": "move", "move": "go sideways"}, "bad_move"),
        (mover, {"type": "move", "move": "go left, go right"}, "bad_move"),
        (mover, {"type": "move", "move": {"go": "north"}}, "bad_move"),
        (mover, {"type": "start", "cell": [1, 1]}, "not_choosing"),
        (mover, {"type": "order", "cell": [1, 1]}, "no_order"),
        (mover, {"type": "ask", "cell": [1, 1]}, "not_choosing"),
        (mover, {"type": "vote", "yes": False}, "no_vote"),
        (other, {"type": "break"}, "not_your_turn"),
    ]
    for seat, command, code in cases:
        outcome = send(d, command, seat, T0 + 9)
        assert outcome.rejection is not None and outcome.rejection.code == code, (command, outcome)
        assert outcome.events == ()
        assert d.ms.game_state == before and d.deadline() == deadline
    assert d.ms.seq == seq + len(cases)  # recorded for the audit, and nothing else
    reason = send(d, {"type": "move", "move": "go sideways"}, mover).rejection
    assert reason is not None and "column 4: expected where to go" in reason.reason


def test_a_rejected_start_gives_no_reason_and_the_player_chooses_again() -> None:
    d = match(2)
    first, second = state(d).core.order
    send(d, {"type": "start", "cell": [3, 2]}, first, T0 + 1)
    event = resolved(send(d, {"type": "start", "cell": [3, 2]}, second, T0 + 2))
    assert keys(event)[-2:] == ["start_rejected", "choose_start"]
    rejected = event.said[-2]
    assert rejected.to == (second,) and rejected.args == {}
    assert d.deadline() == T0 + 2 + MOVE_MS  # the clock restarts for the new choice
    shown = views.event(d.ms, event, Viewer(first))
    assert shown is not None and all(s["key"] != "start_rejected" for s in shown["said"])
    again = send(d, {"type": "start", "cell": [3, 2]}, second, T0 + 3).rejection
    assert again is not None and again.code == "chosen_before"
    started_game = resolved(send(d, {"type": "start", "cell": [5, 2]}, second, T0 + 4))
    assert "start_on" in keys(started_game)


def test_handicap_questions_are_answered_to_the_asker_alone() -> None:
    d = match(2, handicaps=[{"player": 1, "cells": 2}])
    while to_act(d) != 0:
        send(d, {"type": "start", "cell": [5, 2]})
    event = resolved(send(d, {"type": "ask", "cell": [1, 5]}, 0, T0 + 1))
    assert keys(event) == ["asked_cell", "cell_type"]
    assert rules.say(event.said[1]) == "Cell 1,5 is a hospital"
    own = views.event(d.ms, event, Viewer(0))
    other = views.event(d.ms, event, Viewer(1))
    assert own is not None and other is not None
    assert own["cell"] == [1, 5] and [s["key"] for s in own["said"]] == ["asked_cell", "cell_type"]
    assert "cell" not in other and [s["key"] for s in other["said"]] == ["asked_cell"]
    refused = send(d, {"type": "start", "cell": [3, 2]}, 0).rejection
    assert refused is not None and refused.code == "not_asked"


# --- what each viewer sees ----------------------------------------------------------------------


def test_the_views_show_standings_starts_moves_and_what_each_player_was_told() -> None:
    d = started(match(2), (3, 2), (3, 3))
    assert state(d).core.order == (0, 1)
    spectator = views.view(d.ms, Viewer(None))
    assert [p["started_on"] for p in spectator["players"]] == ["land", "an encephalitis cell"]
    assert [p["standing"] for p in spectator["players"]] == ["playing", "playing"]
    assert spectator["me"] is None and spectator["full"] is None
    dark = resolved(send(d, {"type": "move", "move": "go left, don't tell the result"}, 0, T0 + 3))
    send(d, {"type": "move", "move": "skip"}, 1, T0 + 4)
    own, other = views.view(d.ms, Viewer(0)), views.view(d.ms, Viewer(1))
    assert [p["moves"] for p in own["players"]] == [1, 1]
    last = own["players"][0]["last_move"]
    assert (last["move"], last["answers"]) == ("go left; don't tell the result",
                                               ["go left; don't tell the result - done."])
    assert [a["key"] for a in last["said"]] == ["dark_done"]
    assert own["players"] == other["players"]
    assert [t["text"] for t in own["me"]["told"]] == ["You start at 3,2", "You picked up a treasure"]
    assert [t["text"] for t in other["me"]["told"]] == ["You start at 3,3"]
    assert own["me"]["carries"] == "treasure" and other["me"]["carries"] == "landmine"
    # the dark move: done, told to nobody, but the pick-up to its player
    assert [s["key"] for s in views.event(d.ms, dark, Viewer(1))["said"]] == ["move", "dark_done", "turn"]
    assert [s["key"] for s in views.event(d.ms, dark, Viewer(0))["said"]] == ["move", "dark_done", "picked",
                                                                             "turn"]
    # nobody but a full viewer sees the plan or where anyone is
    for viewer in (Viewer(0), Viewer(1), Viewer(None)):
        shown = msgspec.json.encode(views.view(d.ms, viewer))
        assert b'"plan"' not in shown and b'"cell":[3,1]' not in shown
    full = views.view(d.ms, Viewer(None, full=True))["full"]
    assert full["players"][0]["cell"] == [3, 1] and full["players"][1]["cell"] == [3, 3]
    assert parse_plan(full["plan_text"]) == parse_plan(EXAMPLE)


def test_after_the_match_every_viewer_sees_everything() -> None:
    d = started(match(2), (3, 2), (5, 2))
    d.advance()
    assert d.ms.ended
    seen = views.view(d.ms, effective(views, d.ms, Viewer(1)))
    assert seen["full"] is not None and seen["full"]["players"][1]["cell"] == [5, 2]


# --- replay ----------------------------------------------------------------------------------------


def play_script(seed: bytes) -> MatchDriver:
    d = match(3, seed=seed)
    for cell in ((3, 2), (5, 2), (1, 5)):
        send(d, {"type": "start", "cell": list(cell)}, None, d.ts + 5)
    texts = ["go left, shoot up", "status", "go right, don't tell the result", "blow the up wall, then go up",
             "go by the flow", "skip"]
    for text in texts:
        send(d, {"type": "move", "move": text}, None, d.ts + 7)
    d.advance()
    d.advance()
    return d


def test_the_log_replays_to_the_same_match_and_verifies() -> None:
    d = play_script(bytes(range(32)))
    again = play_script(bytes(range(32)))
    assert [e.digest for e in d.entries] == [e.digest for e in again.entries]
    folded = engine.fold(lab, d.entries)
    assert folded.game_state == d.ms.game_state
    verified = engine.verify(rules_by_name(), d.entries)
    assert verified.ok, verified.failure
    assert verified.setup == "host"
    drawn = MatchDriver(lab, options={"players": 2, "clock_scale": SCALE})
    drawn.seat_all()
    while not drawn.ms.ended:
        drawn.advance()
    verified = engine.verify(rules_by_name(), drawn.entries)
    assert verified.ok and verified.setup == "seed"
