"""Labyrinth moves: the rule book's phrases, the structured form, errors, round trips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.games.labyrinth.moves import (
    CONDITIONS,
    DIRECTIONS,
    ITEMS,
    MOVEMENTS,
    ONE_OF_A_KIND,
    SKIP,
    STATUS,
    Blow,
    Command,
    Leave,
    MoveError,
    SetMine,
    Shoot,
    Take,
    Throw,
    When,
    command_from_builtins,
    command_from_json,
    command_to_builtins,
    command_to_json,
    parse_action,
    parse_any,
    parse_command,
    render_command,
)

# Every move the rule book writes out, and what it means.
BOOK = [
    # section A, the game example
    ("Go up", Command(go="up")),
    ("Blow the up wall, then go up.", Command(before=(Blow("up"),), go="up")),
    ("Shoot to the left, then go up.", Command(before=(Shoot("left"),), go="up")),
    ("Go right.", Command(go="right")),
    ("Go up, then blow the up wall.", Command(go="up", after=(Blow("up"),))),
    ("Blow the right wall, then go right.", Command(before=(Blow("right"),), go="right")),
    ("Go up, then shoot to the right and blow the up wall",
     Command(go="up", after=(Shoot("right"), Blow("up")))),
    # 6.5, the conditional move
    ("Go right; if I find a treasure, shoot up; and if I find a bullet, shoot right; finally, "
     "if I fall into a pit, leave one grenade there.",
     Command(go="right", when=(When("treasure", (Shoot("up"),)), When("bullet", (Shoot("right"),)),
                               When("pit", (Leave("grenade"),))))),
    # 6.7 and 6.8
    ("Go right, don't tell the result.", Command(go="right", dark=True)),
    ("1. Go right, don't tell where did I end up, but 2. tell me whether I hit a wall.",
     Command(go="right", dark=True, tell_wall=True)),
    # the move language's own examples
    ("go left, shoot up", Command(go="left", after=(Shoot("up"),))),
    ("blow the up wall then go up", Command(before=(Blow("up"),), go="up")),
    ("go right; if I find a treasure, shoot up; if I fall into a pit, leave a grenade",
     Command(go="right", when=(When("treasure", (Shoot("up"),)), When("pit", (Leave("grenade"),))))),
    ("go by the flow", Command(go="flow")),
    ("go by the loop", Command(go="loop")),
    ("go right, don't tell the result", Command(go="right", dark=True)),
    ("go right, don't tell where I end up but tell me if I hit a wall",
     Command(go="right", dark=True, tell_wall=True)),
    ("skip", SKIP),
    ("status", STATUS),
    ("recall 3", Command(kind="recall", player=3)),
    ("Recall the last move of player 2", Command(kind="recall", player=2)),
]

ACTIONS = [
    ("throw the corpse right", Throw("corpse", "right")),
    ("set the mine left", SetMine("left")),
    ("set the mine", SetMine(None)),
    ("set a landmine here", SetMine(None)),
    ("take the new treasure", Take("new")),
    ("keep the old treasure", Take("old")),
    ("take the lowest treasure", Take(1)),
    ("take the second lowest treasure", Take(2)),
    ("take the topmost treasure", Take("topmost")),
    ("shoot up at player 2 on 3,4", Shoot("up", 2, (3, 4))),  # 7.3's named target
    ("Blow up the wall to the right", Blow("right")),  # 5.4
    ("throw a grenade down", Blow("down")),  # 2.1: a grenade is thrown into a wall
    ("throw a corpse to the right", Throw("corpse", "right")),  # 5.2
    ("throw 2 bullets up", Throw("bullet", "up", 2)),
    ("leave the treasure", Leave("treasure")),
    ("drop the landmine", Leave("landmine")),
]


@pytest.mark.parametrize(("text", "command"), BOOK)
def test_every_phrase_of_the_rule_book_means_what_it_says(text: str, command: Command) -> None:
    assert parse_command(text) == command
    assert parse_command(render_command(command)) == command
    assert command_from_json(command_to_json(command)) == command


@pytest.mark.parametrize(("text", "action"), ACTIONS)
def test_actions(text: str, action: object) -> None:
    assert parse_action(text) == action
    move = parse_command(f"go up, {text}")
    assert move.after == (action,)


def test_actions_keep_their_order_around_the_movement() -> None:
    move = parse_command("shoot left, blow the up wall, go down, set the mine up, shoot right")
    assert move.before == (Shoot("left"), Blow("up"))
    assert move.go == "down"
    assert move.after == (SetMine("up"), Shoot("right"))


def test_the_structured_form_is_plain_json() -> None:
    move = parse_command("go right; if I find a treasure, shoot up; if I fall into a pit, leave a grenade")
    assert command_to_builtins(move) == {
        "go": "right",
        "when": [
            {"if": "treasure", "then": [{"type": "shoot", "direction": "up"}]},
            {"if": "pit", "then": [{"type": "leave", "item": "grenade", "count": 1}]},
        ],
    }
    assert parse_any(command_to_json(move)) == move
    assert parse_any(command_to_builtins(move)) == move
    assert parse_any("go right; if I find a treasure, shoot up; if I fall into a pit, leave a grenade") == move
    assert command_from_json('{"kind": "recall", "player": 2}') == Command(kind="recall", player=2)


@pytest.mark.parametrize(("text", "column", "words"), [
    ("", 1, "expected a move"),
    ("go left go right", 9, "exactly one movement; this is a second one"),
    ("shoot up", 9, "exactly one movement"),
    ("go sideways", 4, "not 'sideways'"),
    ("if I find a treasure, shoot up", 1, "after the movement"),
    ("go left, if I find a knife, shoot up", 22, "a treasure, a bullet"),
    ("go left, shoot", 15, "expected a direction"),
    ("go left, leave 4 bullets", 16, "at most 3 bullets"),
    ("go left, leave 2 treasures", 16, "at most 1 treasure"),
    ("go left; if I find a treasure", 30, "a condition needs an action"),
    ("go left; if I find a treasure, go right", 32, "this is a second one"),
    ("go left, tell me if I hit a wall", 10, "goes with 'don't tell where I end up'"),
    ("go left, dance", 10, "expected an action"),
    ("recall", 7, "the player's number"),
    ("recall 0", 8, "numbered from 1"),
    ("go up, shoot left at 2", 22, "expected 'player'"),
    ("go up, shoot left at player 2 on 3", 35, "expected ','"),
    ("skip, go left", 5, "a skip is the whole move"),
    ("go left, don't tell the result, don't tell the result", 33, "dark already"),
])
def test_a_parse_error_says_where_and_what_was_expected(text: str, column: int, words: str) -> None:
    with pytest.raises(MoveError) as caught:
        parse_command(text)
    assert caught.value.column == column
    assert words in str(caught.value)
    assert str(caught.value).startswith(f"column {column}: ")


@pytest.mark.parametrize(("data", "path"), [
    ('{"go": "north"}', "$.go"),
    ('{"go": "up", "before": [{"type": "shoot"}]}', "$.before[0]"),
    ('{"go": "up", "after": [{"type": "dance"}]}', "$.after[0].type"),
    ('{"kind": "skip", "go": "up"}', "$.go"),
    ('{"go": "up", "zzz": 1}', "$"),
    ('{"kind": "move"}', "$.go"),
    ('{"kind": "recall"}', "$.player"),
    ('{"go": "up", "tell_wall": true}', "$.tell_wall"),
    ('{"go": "up", "after": [{"type": "shoot", "direction": "up", "player": 2}]}', "$.after[0].cell"),
    ('{"go": "up", "after": [{"type": "shoot", "direction": "up", "player": 0, "cell": [1, 1]}]}',
     "$.after[0].player"),
    ('{"go": "up", "when": [{"if": "pit"}]}', "$.when[0].then"),
    ('{"go": "up", "after": [{"type": "leave", "item": "corpse", "count": 2}]}', "$.after[0].count"),
    ('{"go": "up", "after": [{"type": "throw", "item": "grenade", "direction": "up"}]}', "$.after[0].item"),
    ("[1]", "$"),
    ("{", "$"),
])
def test_a_bad_structured_move_names_the_path(data: str, path: str) -> None:
    with pytest.raises(MoveError) as caught:
        command_from_json(data)
    assert caught.value.path == path


# --- the round trip --------------------------------------------------------------------------

directions = st.sampled_from(DIRECTIONS)


@st.composite
def _leave_or_throw(draw: st.DrawFn) -> Leave | Throw:
    item = draw(st.sampled_from(ITEMS))
    count = 1 if item in ONE_OF_A_KIND else draw(st.integers(1, 3))
    if item != "grenade" and draw(st.booleans()):
        return Throw(item, draw(directions), count)
    return Leave(item, count)


actions = st.one_of(
    st.builds(Shoot, directions),
    st.builds(Shoot, directions, st.integers(1, 6), st.tuples(st.integers(1, 60), st.integers(1, 60))),
    st.builds(Blow, directions),
    _leave_or_throw(),
    st.builds(SetMine, st.none() | directions),
    st.builds(Take, st.sampled_from(["new", "topmost", "old"]) | st.integers(1, 30)),
)


@st.composite
def commands(draw: st.DrawFn) -> Command:
    kind = draw(st.sampled_from(["move", "move", "move", "skip", "status", "recall"]))
    if kind == "skip":
        return SKIP
    if kind == "status":
        return STATUS
    if kind == "recall":
        return Command(kind="recall", player=draw(st.integers(1, 6)))
    dark = draw(st.booleans())
    return Command(
        before=tuple(draw(st.lists(actions, max_size=3))),
        go=draw(st.sampled_from(MOVEMENTS)),
        after=tuple(draw(st.lists(actions, max_size=3))),
        when=tuple(draw(st.lists(
            st.builds(When, st.sampled_from(CONDITIONS), st.lists(actions, min_size=1, max_size=3).map(tuple)),
            max_size=3))),
        dark=dark,
        tell_wall=dark and draw(st.booleans()),
    )


@settings(max_examples=300, deadline=None)
@given(commands())
def test_render_then_parse_gives_the_command_back(command: Command) -> None:
    assert parse_command(render_command(command)) == command
    assert command_from_json(command_to_json(command)) == command
    assert command_from_builtins(command_to_builtins(command)) == command


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_text_parses_or_says_where(text: str) -> None:
    try:
        parse_command(text)
    except MoveError as exc:
        assert exc.column is not None and 1 <= exc.column <= len(text) + 1
