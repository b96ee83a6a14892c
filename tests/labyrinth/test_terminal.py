"""Labyrinth in the terminal (clients/terminal/labyrinth.py): typed lines as commands, and
views and events as a person reads them."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from clients.bots import play_bot
from clients.client import DaedalusHttp, MatchConnection
from clients.driver import MatchDriver
from clients.terminal import TERMINALS
from clients.terminal.labyrinth import TERMINAL, Terminal, belongings, parse_cell
from domain.games.labyrinth import rules
from projections.common import project_events
from projections.contract import Viewer
from server.main import EmbeddedServer
from tests.test_play_e2e import LABYRINTH_PLAN, terminals

EXAMPLE = (Path(__file__).parents[2] / "domain/games/labyrinth/plans/example.txt").read_text()


@pytest.fixture(autouse=True)
def fresh_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal of its own for each test: a terminal keeps notes by match, and the tests'
    matches share their id and commitment."""
    monkeypatch.setattr(sys.modules[__name__], "TERMINAL", Terminal())


def match(**options: Any) -> MatchDriver:
    d = MatchDriver("labyrinth", options={"players": 2, "plan": EXAMPLE, **options}, seed=bytes(32))
    d.seat_all(["ann", "bob"])
    assert d.ms.game_state.core.order == (0, 1)
    return d


def typed(d: MatchDriver, seat: int, line: str) -> list[list[str]]:
    """`line` typed by `seat`, parsed by the terminal and proposed; each seat's lines of it."""
    command = TERMINAL.parse(line, d.view(seat))
    outcome = d.propose("command", seat, command)
    assert outcome.rejection is None, outcome.rejection
    return [TERMINAL.render_events(d.view(s), project_events(d.host.views, d.ms, outcome, Viewer(seat=s)))
            for s in range(d.seats)]


def started() -> MatchDriver:
    d = match()
    typed(d, 0, "start 2,5")
    typed(d, 1, "start 5 2")
    return d


def refused(line: str, view: dict[str, Any]) -> str:
    with pytest.raises(ValueError) as caught:
        TERMINAL.parse(line, view)
    return str(caught.value)


def test_the_terminal_is_found_for_the_game() -> None:
    assert isinstance(TERMINALS["labyrinth"], Terminal)


def test_typed_lines_become_commands() -> None:
    d = match()
    view = d.view(0)
    assert TERMINAL.parse("start 3,4", view) == {"type": "start", "cell": [3, 4]}
    assert TERMINAL.parse("start (3, 4)", view) == {"type": "start", "cell": [3, 4]}
    d = started()
    view = d.view(0)
    assert TERMINAL.parse("go left, shoot up", view) == {"type": "move", "move": "go left, shoot up"}
    assert TERMINAL.parse("  Go by the flow  ", view) == {"type": "move", "move": "Go by the flow"}
    assert TERMINAL.parse("skip", view) == {"type": "move", "move": "skip"}
    assert TERMINAL.parse("recall 2", view) == {"type": "move", "move": "recall 2"}
    assert TERMINAL.parse("status?", view) == {"type": "move", "move": "status?"}
    assert TERMINAL.parse("ask status", view) == {"type": "move", "move": "status"}
    assert TERMINAL.parse("order 3,4", view) == {"type": "order", "cell": [3, 4]}
    assert TERMINAL.parse("order none", view) == {"type": "order", "cell": None}
    assert TERMINAL.parse("ask 1,2", view) == {"type": "ask", "cell": [1, 2]}
    assert TERMINAL.parse("break", view) == {"type": "break"}
    assert TERMINAL.parse("vote yes", view) == {"type": "vote", "yes": True}
    assert TERMINAL.parse("vote NO", view) == {"type": "vote", "yes": False}
    assert TERMINAL.parse('{"go": "right", "after": [{"type": "shoot", "direction": "up"}]}', view) == {
        "type": "move", "move": {"go": "right", "after": [{"type": "shoot", "direction": "up"}]}}


def test_a_line_that_is_not_a_move_is_shown_with_a_caret_at_its_column() -> None:
    view = started().view(1)
    message = refused("go left go right", view)
    head, text, caret = message.splitlines()
    assert head == "not a move (help lists them):"
    assert text == "  go left go right"
    assert caret == "          ^ column 9: a move has exactly one movement; this is a second one"
    assert caret.index("^") - 2 == len("go left ")  # under the 9th column of the text
    message = refused("go sideways", view)
    assert message.splitlines()[2].startswith("     ^ column 4: expected where to go")
    assert "not a move: $.go" in refused('{"go": "sideways"}', view)


def test_other_bad_lines_say_what_is_wanted() -> None:
    d = match()
    assert refused("start 9,9", d.view(0)) == (
        "9,9 is not a cell of the labyrinth (your map shows its 5 rows and 6 columns)")
    assert refused("start 1,6", d.view(0)).startswith("1,6 is not a cell")  # the corner left out
    assert refused("start here", d.view(0)) == "'here' is not a cell: write ROW,COLUMN, e.g. 3,4"
    assert refused("go left", d.view(0)).startswith("the players are choosing their start cells")
    d = started()
    assert refused("start 3,3", d.view(0)) == "the start cells are chosen already"
    assert refused("vote maybe", d.view(0)) == "vote yes or vote no (on a break, section 9)"
    assert refused("break now", d.view(0)).startswith("a break is just `break`")
    assert refused("me", d.view(0)).startswith("press Enter")
    waiting = MatchDriver("labyrinth", options={"players": 2, "plan": EXAMPLE}, seed=bytes(32))
    assert refused("go left", waiting.view(None)).startswith("the match has not started yet")


def test_parse_cell() -> None:
    assert parse_cell("3,4") == (3, 4)
    assert parse_cell(" 3 , 4 ") == (3, 4)
    assert parse_cell("(10,2)") == (10, 2)
    with pytest.raises(ValueError):
        parse_cell("3")


def test_events_mark_what_was_said_to_the_viewer_alone_and_indent_answers() -> None:
    d = match()
    ann, bob = typed(d, 0, "start 2,5")
    assert ann == ["Player 1 has chosen a start cell", "You start at 2,5  (to you alone)",
                   "Player 2, choose your start cell"]
    assert bob == ["Player 1 has chosen a start cell", "Player 2, choose your start cell  <- you: start ROW,COLUMN"]
    typed(d, 1, "start 5,2")
    ann, bob = typed(d, 0, "go left, shoot up")
    assert ann == ["Player 1: go left, shoot up",
                   "    Walked into a river, carried by the flow to a delta",
                   "    shoot up - two bullets left, none on the ground",
                   "    No scream is heard",
                   "Player 2's turn"]
    assert bob[-1] == "Player 2's turn  <- your move"
    ann, bob = typed(d, 1, "go right, don't tell the result")
    assert ann[:2] == ["Player 2: go right; don't tell the result", "    go right; don't tell the result - done."]
    assert ann[:-1] == bob[:-1]  # the dark move's result is told to nobody, the mover included
    assert (ann[-1], bob[-1]) == ("Player 1's turn  <- your move", "Player 1's turn")


def test_the_view_shows_the_turn_the_clock_the_players_and_belongings() -> None:
    d = started()
    typed(d, 0, "go left, shoot up")
    text = TERMINAL.render(d.view(1), 41.6)
    lines = text.splitlines()
    assert lines[0] == "== labyrinth · match simulated · round 1 · YOUR TURN: move · 42 s left"
    assert lines[1] == "you are player 2 (bob); the order of play: 1, 2"
    assert lines[2] == ("  player 1 (ann): playing · started on land · one move · last: go left, shoot up -> "
                        "Walked into a river, carried by the flow to a delta; shoot up - two bullets left, "
                        "none on the ground; No scream is heard")
    assert lines[3] == "  player 2 (bob, you): playing · started on land · no moves"
    assert lines[4] == "you: three bullets, three grenades, a landmine; healthy"
    head = "your map, from what the game master told you (you are at 5,2, @):"
    grid = lines[lines.index(head) + 1:]
    assert grid[:3] == ["     1   2   3   4   5   6",
                        "   +   +   +   +   +   +",  # 1,6 is not a cell
                        " 1   ·   ·   ·   ·   ·"]
    assert grid[10] == " 5   ·   .@  ·   ·   ·   ·"  # bob's start, on land
    assert grid[12].startswith("  · not known yet  . land")
    other = TERMINAL.render(d.view(0), None)
    assert other.splitlines()[0] == "== labyrinth · match simulated · round 1 · player 2 (bob) to move"
    assert "you: two bullets, three grenades, a landmine; healthy" in other
    assert "your map" not in other  # on one's own turn only
    spectator = TERMINAL.render(d.view(None), None)
    assert "the labyrinth's cells:" in spectator and "@" not in spectator and "." not in spectator.split("cells:")[1]


def test_awaiting_says_what_the_clock_waits_for() -> None:
    d = match()
    assert TERMINAL.awaiting(d.view(0)) == (
        "you have not chosen your start cell (start ROW,COLUMN; else the game master draws it)")
    assert TERMINAL.awaiting(d.view(1)) is None
    typed(d, 0, "start 2,5")
    typed(d, 1, "start 5,2")
    assert TERMINAL.awaiting(d.view(0)) == "you have not moved (a missed move loses the game)"
    skipping = match(missed_move="skip")
    typed(skipping, 0, "start 2,5")
    typed(skipping, 1, "start 5,2")
    assert TERMINAL.awaiting(skipping.view(0)) == "you have not moved (a missed move is a skip)"


def test_belongings_in_words() -> None:
    me = {"bullets": 0, "grenades": 1, "carries": "treasure", "wounded": True, "infected": True,
          "heal_left": 4, "immune": False, "alive": True, "lost": False, "outside": False}
    assert belongings(me) == ("no bullets, one grenade, a treasure; wounded, infected "
                              "(4 successful moves left to reach a hospital)")
    assert belongings({**me, "alive": False}) == "no bullets, one grenade, a treasure; dead"


def test_after_the_match_the_plan_shows_where_everyone_ended() -> None:
    d = started()
    typed(d, 0, "go left")  # carried into the delta 3,4
    while not d.ms.ended:
        seat = rules.to_act(d.ms.game_state.core)
        assert seat is not None
        typed(d, seat, "skip")
    text = TERMINAL.render(d.view(1), None)
    assert "MATCH OVER: a draw (every player skipped: a draw (6.6))" in text
    assert "  player 1 (ann): 3,4 · two bullets" not in text  # it shot no bullet
    assert "  player 1 (ann): 3,4 · three bullets, three grenades, a landmine; healthy" in text
    assert "  player 2 (bob): 5,2 · three bullets, three grenades, a landmine; healthy" in text
    assert "  lying at 2,3: a true treasure" in text
    row3 = next(line for line in text.splitlines() if line.startswith("  3 #"))
    assert "D 1" in row3
    row5 = next(line for line in text.splitlines() if line.startswith("  5 #"))
    assert ". 2" in row5
    assert "exits: 1,1 up (open), 2,6 right (closed), 5,3 down (closed)" in text


def test_a_kill_as_the_view_shows_it_during_and_after_the_match() -> None:
    d = match()
    typed(d, 0, "start 3,4")  # the delta
    typed(d, 1, "start 3,5")
    typed(d, 0, "break")
    ann, _ = typed(d, 0, "shoot right, go up")  # up the river: ann stays in the delta
    assert ann[1:3] == ["    shoot right - two bullets left, none on the ground", "    A scream is heard!"]
    assert "breaks taken by player 1" in TERMINAL.render(d.view(1), None)
    assert TERMINAL.render(d.view(1), None).splitlines()[4:6] == [
        "you: no bullets, three grenades; wounded",
        "  you may order a new cell before your move: order ROW,COLUMN (one order left), or order none"]
    typed(d, 1, "go left")  # into the delta, where ann stands
    typed(d, 0, "shoot down, go up")  # bob on ann's cell is hit again
    assert d.ms.ended
    text = TERMINAL.render(d.view(1), None)
    assert "MATCH OVER: player 1 (ann) wins (the last one alive (3.5))" in text
    assert "  player 1 (ann): WON · started on a delta" in text
    assert "  player 2 (bob, you): dead · started on land" in text
    assert "  player 2 (bob): 3,4 · no bullets, no grenades; dead" in text
    assert "breaks taken" not in text and "rounds with no changes" not in text


def notes_after(d: MatchDriver, moves: list[str]) -> Any:
    """Player 1 (ann) makes `moves`, player 2 skipping in between; ann's notes then."""
    for move in moves:
        typed(d, 0, move)
        if not d.ms.ended:
            typed(d, 1, "skip")
    return TERMINAL.notes(d.view(0))


def test_the_map_keeps_what_the_answers_tell() -> None:
    d = started()  # ann on 2,5, bob on 5,2, both on land
    notes = TERMINAL.notes(d.view(0))
    assert (notes.here, notes.types) == ((2, 5), {(2, 5): "."})
    notes = notes_after(d, ["go right", "go down", "go left", "go left", "go up"])
    assert notes.walls == {((2, 5), "right")}  # a wall hit: ann stays
    assert notes.types == {(2, 5): ".", (3, 5): ".", (3, 4): "D", (3, 3): "E", (2, 3): "."}
    assert notes.here == (2, 3)
    notes = notes_after(d, ["go right"])  # into the river 2,4, carried down into the delta 3,4
    assert notes.types[(2, 4)] == "~"
    assert notes.here is None
    assert notes.where() == "where you are is not known since a river carried you"
    bob = TERMINAL.notes(d.view(1))
    assert bob.types == {(5, 2): "."} and bob.here == (5, 2) and bob.walls == set()  # bob only skipped
    text = "\n".join(TERMINAL.grid(d.view(0), d.view(0)["game_state"]))
    assert " 2   ·   ·   .   ~   . | ·" in text
    assert " 3   ·   ·   E   D   .   ·" in text


def test_the_map_loses_the_player_in_a_pit_or_a_dark_move_and_finds_it_back_in() -> None:
    d = match()
    typed(d, 0, "start 2,3")
    typed(d, 1, "start 5,2")
    notes = notes_after(d, ["go left"])  # into the pit a1 at 2,2, on to a2
    assert (notes.types[(2, 2)], notes.here) == ("p", None)
    assert notes.where() == "where you are is not known since you fell through a pit"
    d = match()
    typed(d, 0, "start 1,1")
    typed(d, 1, "start 5,2")
    notes = notes_after(d, ["go up"])  # out through the open exit of 1,1
    assert (notes.outside, notes.here) == (((1, 1), "up"), None)
    assert notes.where() == "you are outside: you left by the up side of 1,1"
    notes = notes_after(d, ["go down"])  # back in
    assert (notes.outside, notes.here, notes.types[(1, 1)]) == (None, (1, 1), ".")
    notes = notes_after(d, ["go down, don't tell the result"])
    assert notes.here is None and notes.where() == "where you are is not known since your dark move"


def test_the_map_has_the_cells_a_handicap_asked() -> None:
    d = match(handicaps=[{"player": 1, "cells": 2}])
    typed(d, 0, "ask 4,2")
    typed(d, 0, "ask 5,5")
    assert TERMINAL.notes(d.view(0)).types == {(4, 2): "H", (5, 5): "."}
    assert TERMINAL.notes(d.view(1)).types == {}


def test_words_for_another_player_say_whom_they_are_for() -> None:
    d = match()
    typed(d, 0, "start 3,4")
    typed(d, 1, "start 5,2")
    typed(d, 0, "go left")  # wakes the mite at 3,3
    typed(d, 1, "skip")
    ann, bob = typed(d, 0, "go by the flow")  # not in a river: ann stays, and is infected
    assert "    You have been infected and have 10 moves to heal" in ann
    assert "    (to player 1) You have been infected and have 10 moves to heal" in bob


# --- a person at `daedalus play`, end to end ---------------------------------------------------


WAIT = 30.0
"""Seconds the end-to-end test waits for a line: a loaded machine starts a process slowly."""


class Skipper:
    """Player 2 for the end-to-end test: starts on 5,2, then skips every move."""

    def __init__(self) -> None:
        self.acted: tuple[Any, ...] | None = None

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        gs = view.get("game_state") or {}
        if not view.get("started") or view.get("ended") or gs.get("to_act") != view.get("you"):
            return []
        mark = (gs["round"], gs["phase"], gs["players"][view["you"]]["moves"])
        if mark == self.acted:
            return []
        self.acted = mark
        if gs["phase"] == "start":
            return [{"type": "start", "cell": [5, 2]}]
        return [{"type": "move", "move": "skip"}]

    def feedback(self, command: dict[str, Any], accepted: bool, warnings: Sequence[str], code: str | None) -> None:
        if not accepted:
            self.acted = None


async def test_a_person_plays_in_the_terminal_against_a_bot() -> None:
    """`daedalus play` as a real process against an embedded server, typed into as a person
    types, the other seat a bot over a real websocket."""

    async with EmbeddedServer() as srv, terminals(srv.url) as launch:
        ann = await launch("ann", "--game", "labyrinth", "--option", f"plan=@{LABYRINTH_PLAN}",
                           "--option", "players=2", "--name", "ann")
        match_id = (await ann.expect(r"^created match (\S+) \(labyrinth", WAIT)).group(1)
        await ann.expect(r"^you are ann in seat 0", WAIT)
        # Connected before the match starts, so that what the game master says as it starts
        # comes live (a terminal that connects later shows the board, not past events).
        await ann.expect(r"^connected to match ", WAIT)
        async with DaedalusHttp(srv.url) as http:
            token = (await http.claim_seat(match_id, "bot", 1))["token"]
        conn = MatchConnection(srv.url, match_id, token=token)
        await conn.connect()
        bot = asyncio.create_task(play_bot(conn, Skipper()))
        try:
            await ann.expect(r"^\* Player 1, choose your start cell  <- you: start ROW,COLUMN$", WAIT)
            await ann.type("start 2,5")
            await ann.expect(r"^\* You start at 2,5  \(to you alone\)$", WAIT)
            await ann.expect(r"^\* Player 1's turn  <- your move$", WAIT)
            await ann.type("go sideways")
            await ann.expect(r"^\? not a move \(help lists them\):$", WAIT)
            await ann.expect(r"^  go sideways$", WAIT)
            await ann.expect(r"^     \^ column 4: expected where to go", WAIT)
            await ann.type("go down")
            await ann.expect(r"^\*     Walked onto land$", WAIT)
            await ann.expect(r"^\* Player 1's turn  <- your move$", WAIT)
            await ann.expect(r"^your map, from what the game master told you \(you are at 3,5, @\):$", WAIT)
            await ann.expect(r"^ 3   ·   ·   ·   ·   \.@  ·$", WAIT)
            await ann.type("go right")
            await ann.expect(r"^\*     Cannot move - hit a wall$", WAIT)
            await ann.expect(r"^ 3   ·   ·   ·   ·   \.@\| ·$", WAIT)
            await ann.type("quit")
            assert await ann.finish(WAIT) == 0
        finally:
            bot.cancel()
            await conn.close()


def test_the_full_view_during_the_match() -> None:
    d = started()
    typed(d, 0, "go down")
    text = TERMINAL.render(d.view(Viewer(full=True)), 50)
    assert "MATCH OVER" not in text and "your map" not in text
    assert "the full view (the host of the plan, or an auditor): where everyone is and what lies where" in text
    assert "  player 1 (ann): 3,5 · three bullets, three grenades, a landmine; healthy" in text
    assert ".@ 1" in next(line for line in text.splitlines() if line.startswith("  3 #"))
