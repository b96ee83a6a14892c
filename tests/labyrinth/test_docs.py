"""docs/rules/labyrinth.md as the hosted game is: its option tables are the schema GET /games
publishes, its refusals are the server's words, and its protocol examples are what the
projection sends in a scripted match on the page's example plan."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from domain.contract import OptionsError
from domain.driver import MatchDriver
from domain.games.labyrinth import game as lab
from domain.games.labyrinth.moves import parse_any
from domain.games.labyrinth.validate import PLAN_OPTIONS
from projections import labyrinth as views
from projections.contract import Viewer

ROOT = Path(__file__).parents[2]
PAGE = ROOT / "docs" / "rules" / "labyrinth.md"
EXAMPLE = (ROOT / "domain" / "games" / "labyrinth" / "plans" / "example.txt").read_text()
MATCH_OPTIONS = ("players", "rows", "columns", "plan", "clock_scale")
"""The match's own options (the rest are the plan's limits and the game's options)."""


def page() -> str:
    return PAGE.read_text()


def option_row(name: str, schema: dict[str, Any]) -> str:
    """An option's row as the page gives it: name, default, meaning, all from the schema."""
    return f"| `{name}` | {json.dumps(schema['default'])} | {schema['description']} |"


def table(names: list[str]) -> str:
    schema = lab.options_schema("labyrinth")
    return "\n".join(["| option | default | meaning |", "|---|---|---|",
                      *(option_row(n, schema[n]) for n in names)])


def test_every_option_of_the_schema_is_in_the_pages_tables_as_the_schema_gives_it() -> None:
    schema = lab.options_schema("labyrinth")
    plan_limits = [o.name for o in PLAN_OPTIONS]
    game = [n for n in schema if n not in MATCH_OPTIONS and n not in plan_limits]
    text = page()
    section = text.split("## The game master", 1)[1]
    # the match's own and the game's: each a table of the page, in the schema's order
    assert table(list(MATCH_OPTIONS)) + "\n" in section
    assert table(game) + "\n" in section
    # the plan's limits, in the table of the plans part
    assert table(plan_limits) + "\n" in text
    # and no option in these tables that the schema does not have, each option once
    named = [name for block in re.findall(r"^\| option \| default \| meaning \|\n((?:\|.*\n)+)", text, re.M)
             for name in re.findall(r"^\| `(\w+)` \| ", block, re.M)]
    assert sorted(named) == sorted(schema)


def test_the_page_states_the_number_of_players() -> None:
    schema = lab.options_schema("labyrinth")["players"]
    assert (schema["minimum"], schema["maximum"]) == (2, 5)
    assert "2 to 5 players" in page()


BROKEN = [
    ({"plan": EXAMPLE.replace("treasure 2,3 true", "treasure 5,6 true")}, "8.3"),
    ({"plan": EXAMPLE, "max_pits": 1}, "7.1"),
    ({"plan": EXAMPLE.replace("  1 # .   >", "  1 # X   >")}, "format"),
    ({"players": 2, "handicaps": [{"player": 3, "cells": 2}]}, "handicaps"),
]


@pytest.mark.parametrize(("options", "what"), BROKEN)
def test_the_refusals_the_page_quotes_are_the_servers(options: dict[str, Any], what: str) -> None:
    with pytest.raises(OptionsError) as caught:
        lab.configure("labyrinth", options)
    assert f'"message": {json.dumps(str(caught.value))}' in page(), what


# --- the protocol section -----------------------------------------------------------------------


def protocol() -> str:
    found = re.search(r"^## Protocol\n(.*?)(?=^## |\Z)", page(), re.M | re.S)
    assert found is not None
    return found.group(1)


def blocks(heading: str) -> list[Any]:
    """The JSON values of the ```json blocks under a `### heading` of the protocol section."""
    part = protocol().split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0]
    values = []
    for block in re.findall(r"^```json\n(.*?)^```$", part, re.M | re.S):
        decoder, at, text = json.JSONDecoder(), 0, block.strip()
        while at < len(text):
            value, at = decoder.raw_decode(text, at)
            values.append(value)
            while at < len(text) and text[at].isspace():
                at += 1
    return values


T = 1_732_233_600_000


def scripted() -> tuple[MatchDriver, dict[str, Any]]:
    """The page's example match: two players on the example plan, the starts, then player 1
    walks left onto the fake treasure in a dark move."""
    d = MatchDriver(lab, options={"players": 2, "plan": EXAMPLE}, ts=T)
    d.seat_all(["Ann", "Bob"])
    assert d.ms.game_state.core.order == (0, 1)
    d.propose("command", 0, {"type": "start", "cell": [3, 2]}, T + 4_000)
    d.propose("command", 1, {"type": "start", "cell": [5, 2]}, T + 9_000)
    out = d.propose("command", 0, {"type": "move", "move": "go left, don't tell the result"}, T + 15_000)
    assert out.rejection is None
    event = out.events[0]
    shown = {
        "mine": views.event(d.ms, event, Viewer(0)),
        "theirs": views.event(d.ms, event, Viewer(1)),
        "game_state": views.view(d.ms, Viewer(0)),
    }
    return d, shown


def test_the_game_events_are_what_each_player_is_sent() -> None:
    _, shown = scripted()
    assert blocks("Game events") == [shown["mine"], shown["theirs"]]


def test_the_game_state_is_a_players_view() -> None:
    _, shown = scripted()
    assert blocks("`game_state`") == [shown["game_state"]]


def test_every_command_of_the_page_is_one_the_game_reads() -> None:
    commands = blocks("Commands")
    assert {c["type"] for c in commands} == {"move", "start", "order", "ask", "break", "vote"}
    moves = [c["move"] for c in commands if c["type"] == "move"]
    assert any(isinstance(m, str) for m in moves) and any(isinstance(m, dict) for m in moves)
    for command in commands:
        msgspec.convert(command, lab.Command)
    texts = [m for m in moves if isinstance(m, str)]
    structured = [m for m in moves if isinstance(m, dict)]
    assert [parse_any(m) for m in texts[:len(structured)]] == [parse_any(m) for m in structured]


def test_the_page_leaves_room_for_the_bots_and_the_terminal() -> None:
    text = page()
    assert "### How bot games end" in text
    assert "### The terminal, the replay and the browser board" in text
