"""What each viewer sees of a hosted Labyrinth match (projections/labyrinth.py), on the
rule book's terms: answers to everyone but the start choices, re-orders and what a dark
move withholds; nobody sees the plan or a position until the match is over."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from domain.driver import MatchDriver
from domain.games.labyrinth import game as lab
from domain.games.labyrinth import rules
from projections import labyrinth as views
from projections.common import match_view, project_events
from projections.contract import SPECTATOR, Viewer

PLAN = (Path(lab.__file__).parent / "plans" / "example.txt").read_text()


def driver(**options: Any) -> MatchDriver:
    d = MatchDriver(lab, variant="labyrinth", seed=bytes(32),
                    options={"players": 2, "plan": PLAN, "clock_scale": 0.001, **options})
    d.seat_all(["Ann", "Bob"])
    return d


def act(d: MatchDriver, seat: int, body: dict[str, Any]) -> Any:
    outcome = d.propose("command", seat, body)
    assert outcome.rejection is None, outcome.rejection
    return outcome


def started(d: MatchDriver, cells: dict[int, list[int]]) -> None:
    while d.ms.game_state.core.phase == "start":
        seat = rules.to_act(d.ms.game_state.core)
        assert seat is not None
        act(d, seat, {"type": "start", "cell": cells[seat]})


def seen(d: MatchDriver, viewer: Viewer) -> list[dict[str, Any]]:
    """The events of the last entry as `viewer` sees them."""
    return project_events(views, d.ms, d.outcomes[-1], viewer)


def texts(events: list[dict[str, Any]]) -> list[str]:
    return [s["text"] for e in events if e.get("type") == "resolved" for s in e["said"]]


def test_a_start_choice_is_its_players_alone() -> None:
    d = driver()
    first = rules.to_act(d.ms.game_state.core)
    assert first is not None
    other = 1 - first
    act(d, first, {"type": "start", "cell": [4, 1]})
    mine, theirs, spectator = seen(d, Viewer(seat=first)), seen(d, Viewer(seat=other)), seen(d, SPECTATOR)
    assert mine[0]["cell"] == [4, 1] and "You start at 4,1" in texts(mine)
    assert "cell" not in theirs[0] and not any("4,1" in t for t in texts(theirs))
    assert theirs == spectator
    assert f"Player {first + 1} has chosen a start cell" in texts(theirs)
    assert match_view(views, d.ms, Viewer(seat=first))["game_state"]["me"]["chosen"] == [4, 1]
    assert match_view(views, d.ms, Viewer(seat=other))["game_state"]["me"]["chosen"] is None


def test_the_view_shows_the_shape_and_turns_never_the_plan_or_positions() -> None:
    d = driver()
    started(d, {0: [4, 1], 1: [1, 1]})
    for viewer in (Viewer(seat=0), Viewer(seat=1), SPECTATOR):
        gs = match_view(views, d.ms, viewer)["game_state"]
        assert gs["full"] is None
        assert len(gs["shape"]) == 29 and [1, 6] not in gs["shape"]  # five rows of six, a corner out
        assert gs["to_act"] == d.ms.game_state.core.order[0] and gs["phase"] == "play"
        assert [p["started_on"] for p in gs["players"]] == ["land", "land"]
        assert all(set(p) == {"seat", "standing", "started_on", "moves", "last_move"} for p in gs["players"])
        assert gs["me"] is None or not {"cell", "start", "position"} & set(gs["me"])
    assert match_view(views, d.ms, SPECTATOR)["game_state"]["me"] is None
    me = match_view(views, d.ms, Viewer(seat=0))["game_state"]["me"]
    assert (me["bullets"], me["grenades"], me["carries"]) == (3, 3, "landmine")
    assert [t["text"] for t in me["told"]] == ["You start at 4,1"]


def test_a_dark_move_tells_its_player_what_it_picked_up_and_the_others_only_that_it_was_done() -> None:
    d = driver()
    started(d, {0: [4, 1], 1: [1, 1]})
    if rules.to_act(d.ms.game_state.core) != 0:
        act(d, 1, {"type": "move", "move": "skip"})
    act(d, 0, {"type": "move", "move": "go up, don't tell the result"})
    mine, theirs = texts(seen(d, Viewer(seat=0))), texts(seen(d, Viewer(seat=1)))
    assert "Player 1: go up; don't tell the result" in theirs
    assert "go up; don't tell the result - done." in theirs
    assert "You picked up a treasure" in mine and not any("treasure" in t for t in theirs)
    assert not any("land" in t.lower() for t in theirs)
    assert theirs == texts(seen(d, SPECTATOR))
    me = match_view(views, d.ms, Viewer(seat=0))["game_state"]["me"]
    assert me["carries"] == "treasure"
    last = match_view(views, d.ms, Viewer(seat=1))["game_state"]["players"][0]["last_move"]
    assert last["move"] == "go up; don't tell the result"
    assert last["answers"] == ["go up; don't tell the result - done."]
    assert [(a["key"], a["seat"]) for a in last["said"]] == [("dark_done", 0)]


def test_after_the_match_everyone_sees_the_plan_and_where_everyone_stood() -> None:
    d = driver()
    started(d, {0: [4, 1], 1: [1, 1]})
    while not d.ms.ended:
        seat = rules.to_act(d.ms.game_state.core)
        assert seat is not None
        act(d, seat, {"type": "move", "move": "skip"})
    assert d.ms.game_state.core.outcome == rules.Outcome(None, "skips")
    for viewer in (Viewer(seat=0), SPECTATOR):
        full = match_view(views, d.ms, viewer)["game_state"]["full"]
        assert full["plan"]["name"] == "Two rivers and a loop"
        assert [p["cell"] for p in full["players"]] == [[4, 1], [1, 1]]
        assert full["truth"] == [True, False, False]


def test_describe_marks_what_was_said_to_some_players_only() -> None:
    d = driver()
    started(d, {0: [4, 1], 1: [1, 1]})
    lines = [line for o in d.outcomes for e in o.events for line in views.describe(d.ms, e)]
    assert "Player 1 chooses a start cell (4,1)" in lines
    assert "  You start at 4,1  [to player 1]" in lines
