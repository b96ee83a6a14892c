"""What each viewer sees of Escalator: the Decode information's public and private parts,
hidden targets and points, the names rule, what commands teach, and the reveal at the end."""

from __future__ import annotations

import json
from typing import Any

from clients.driver import MatchDriver
from clients.terminal.escalator import TERMINAL
from projections.common import project_events
from projections.contract import SPECTATOR, Viewer
from projections.registry import hosted

HOST = hosted("escalator")


def match(**options: Any) -> MatchDriver:
    d = MatchDriver("escalator", options={"clock_scale": 0.01, **options}, seed=bytes(32))
    d.seat_all()
    return d


def fetch(d: MatchDriver, seat: int, name: str, target: int) -> None:
    gs = d.ms.game_state
    out = d.propose("command", seat, {"type": "fetch", "round": gs.fetch_round, "command": name, "target": target})
    assert out.rejection is None, out.rejection


def close(d: MatchDriver) -> None:
    if d.ms.game_state.phase == "play":
        d.advance()


def last_resolved(d: MatchDriver, viewer: Viewer) -> dict[str, Any]:
    for outcome in reversed(d.outcomes):
        for event in project_events(HOST.views, d.ms, outcome, viewer):
            if event["type"] == "step_resolved":
                return event
    raise AssertionError("no step_resolved")


def test_decode_information_public_and_private() -> None:
    d = match()
    fetch(d, 0, "Shove", 3)
    fetch(d, 1, "Lift", 3)
    fetch(d, 2, "Bribe", 4)
    close(d)
    public = last_resolved(d, SPECTATOR)
    assert public["given"][3] == {"seat": 3, "count": 2, "colours": ["red", "blue"]}
    assert public["given"][4] == {"seat": 4, "count": 1, "colours": ["green"]}
    assert public["used"] == ["Bribe", "Lift", "Shove"]
    text = json.dumps(public)
    assert '"user"' not in text and '"target"' not in text and "you" not in public
    # seat 3 is told its own commands by name, not who gave them
    mine = last_resolved(d, Viewer(seat=3))["you"]
    assert [g["command"] for g in mine["given"]] == ["Lift", "Shove"]
    assert all(g["named_users"] is None for g in mine["given"])
    # seat 4 sees the public part and its own, never seat 3's list
    other = last_resolved(d, Viewer(seat=4))
    assert [g["command"] for g in other["you"]["given"]] == ["Bribe"]
    view = d.view(4)["game_state"]
    assert view["me"]["given"] == [{"command": "Bribe", "colour": "green", "named_users": None}]
    assert view["full"] is None


def test_a_players_own_fetch_reaches_only_that_player() -> None:
    d = match()
    before = len(d.outcomes)
    fetch(d, 0, "Shove", 3)
    outcome = d.outcomes[before]
    assert project_events(HOST.views, d.ms, outcome, Viewer(seat=0))[0]["command"] == "Shove"
    for viewer in (Viewer(seat=3), Viewer(seat=1), SPECTATOR):
        assert project_events(HOST.views, d.ms, outcome, viewer) == []
    assert d.view(3)["game_state"]["me"]["fetch"] is None
    assert d.view(0)["game_state"]["me"]["fetch"] == {"command": "Shove", "target": 3}


def test_names_are_revealed_when_two_players_pick_the_same_command() -> None:
    d = match()
    fetch(d, 0, "Shove", 1)
    fetch(d, 3, "Shove", 2)
    close(d)
    assert last_resolved(d, SPECTATOR)["named"] == [{"command": "Shove", "users": [0, 3]}]
    mine = last_resolved(d, Viewer(seat=1))["you"]["given"]
    assert mine == [{"command": "Shove", "colour": "red", "named_users": [0, 3]}]


def test_points_are_private_and_what_a_command_teaches_goes_to_its_learner() -> None:
    d = match()
    fetch(d, 0, "Drag", 3)  # target: down 3, unmask
    fetch(d, 1, "Spy", 2)  # user: learn_points
    fetch(d, 2, "Bribe", 1)
    close(d)
    close(d)  # round 1 executes
    spectator = last_resolved(d, SPECTATOR)
    assert "points" not in json.dumps(spectator) and "learned" not in json.dumps(spectator)
    three = last_resolved(d, Viewer(seat=3))["you"]
    assert {"seat": 3, "kind": "user", "about": 0, "value": 0, "command": "Drag"} in three["learned"]
    one = last_resolved(d, Viewer(seat=1))["you"]
    assert [x["kind"] for x in one["learned"]] == ["points"] and one["learned"][0]["about"] == 2
    assert one["points"] == d.ms.game_state.players[1].points
    assert last_resolved(d, Viewer(seat=4))["you"]["learned"] == []
    players = d.view(4)["game_state"]["players"]
    assert all("points" not in p for p in players)


def test_the_end_reveals_everything() -> None:
    d = match(seats=3)
    while not d.ms.ended:
        close(d)
    view = d.view(1)["game_state"]
    assert view["full"] is not None and len(view["full"]["points"]) == 3
    assert view["results"]["garnets"] and view["last_step"]["full"]["picks"]


def test_the_terminal_reads_commands_and_shows_the_pipeline() -> None:
    d = match()
    view = d.view(0)
    assert TERMINAL.parse("shove 3", view) == {"type": "fetch", "round": 1, "command": "Shove", "target": 3}
    assert TERMINAL.parse("fetch Lift @2", view)["command"] == "Lift"
    text = TERMINAL.render(view, 10.0)
    assert "Fetch round 1 | Decode - | Execute -" in text
    assert "Shove" in TERMINAL.help(view)
    for bad in ("shove", "nonesuch 3", "shove x"):
        try:
            TERMINAL.parse(bad, view)
        except ValueError:
            continue
        raise AssertionError(bad)
    assert TERMINAL.awaiting(view) is not None
