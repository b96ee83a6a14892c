"""Command editions: the shipped one, the loader's refusals, and the `edition` option."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from domain.contract import OptionsError
from domain.games import escalator as esc
from domain.games.escalator.edition import (
    PRESET_TEXTS,
    PRESETS,
    EditionError,
    effect_words,
    parse_edition,
)

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = PRESET_TEXTS["daedalus"]


def test_the_shipped_edition_has_36_commands_12_of_each_of_3_colours() -> None:
    ed = PRESETS["daedalus"]
    assert len(ed.commands) == 36
    assert len(ed.colours) == 3
    for colour in ed.colours:
        assert sum(1 for c in ed.commands if c.colour == colour) == 12
    assert len({c.name.casefold() for c in ed.commands}) == 36


def test_every_command_has_a_target_and_a_user_program() -> None:
    for c in PRESETS["daedalus"].commands:
        assert c.target or c.user, c.name


def test_the_rules_page_shows_every_command_as_the_edition_has_it() -> None:
    page = (ROOT / "docs" / "rules" / "escalator.md").read_text()
    rows = re.findall(r"^\| (\w+) \| (red|blue|green) \| ([^|]+) \| ([^|]+) \|", page, re.M)
    shown = {name: (colour, target.strip(), user.strip()) for name, colour, target, user in rows}
    for c in PRESETS["daedalus"].commands:
        assert shown.get(c.name) == (c.colour, effect_words(c.target), effect_words(c.user)), c.name
    assert len(shown) == 36


def _broken(old: str, new: str) -> str:
    assert old in SHIPPED, old
    return SHIPPED.replace(old, new, 1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_broken('target = ["down 2"]\nuser = []', 'target = ["dwn 2"]\nuser = []'),
         "command 'Shove' field 'target': unknown effect 'dwn 2'"),
        (_broken('colour = "red"\ntarget = ["down 2"]\nuser = []', 'colour = "pink"\ntarget = ["down 2"]\nuser = []'),
         "command 'Shove' field 'colour': 'pink'"),
        (_broken('target = ["down 3"]\nuser = ["down 1"]', 'target = ["down 3"]'),
         "command 'Kick' field 'user' is missing"),
        (_broken('user = ["down 1"]', 'user = ["down 0"]'), "command 'Kick' field 'user': down takes 1 to 9"),
        (_broken('user = ["points -1"]', 'user = ["points 0"]'), "command 'Trip' field 'user': points take"),
        (_broken('user = ["points -1"]', 'user = ["unmask"]'),
         "command 'Trip' field 'user': 'unmask' belongs in a target program"),
        (_broken('name = "Kick"', 'name = "Shove"'), "command 'Shove' field 'name': the name is used twice"),
        (_broken('target = ["swap"]\nuser = []', 'target = ["swap"]\nuser = ["swap"]'),
         "command 'Switch' field 'user': one swap per command"),
        (_broken('target = ["down 2"]\nuser = []', 'target = []\nuser = []'),
         "command 'Shove' field 'target': a command needs at least one effect"),
        (_broken('name = "Shove"', 'name = "Shove"\nrange = 3'), "command 'Shove' field 'range': unknown field"),
        (_broken('colour = "blue"\ntarget = ["up 1"]\nuser = ["up 2"]', 'colour = "red"\ntarget = ["up 1"]\nuser = ["up 2"]'),
         "13 red commands"),
        ("edition = 1", "edition field 'edition'"),
        ("[[command", "not valid TOML"),
    ],
)
def test_a_broken_edition_is_refused_naming_the_command_and_the_field(text: str, message: str) -> None:
    with pytest.raises(EditionError) as caught:
        parse_edition(text)
    assert message in str(caught.value)


def test_an_edition_may_be_json_of_the_same_shape() -> None:
    import tomllib

    raw = tomllib.loads(SHIPPED)
    assert parse_edition(json.dumps(raw)) == PRESETS["daedalus"]


def test_the_edition_option_takes_a_name_or_a_text_and_refuses_a_broken_one() -> None:
    assert esc.configure("escalator", {}).edition == "daedalus"
    custom = SHIPPED.replace('name = "Shove"', 'name = "Nudge"')
    opts = esc.configure("escalator", {"edition": custom})
    state = esc.initial_state(opts, {}, bytes(32))
    assert state.edition.find("Nudge") is not None and state.edition.find("Shove") is None
    with pytest.raises(OptionsError, match="option 'edition': command 'Shove' field 'target'"):
        esc.configure("escalator", {"edition": _broken('target = ["down 2"]\nuser = []', 'target = ["dwn 2"]\nuser = []')})
    with pytest.raises(OptionsError, match="option 'edition'"):
        esc.configure("escalator", {"edition": 7})
