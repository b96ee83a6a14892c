"""The Labyrinth game master: the rule book's examples and a scenario for each rule."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from domain.contract import OptionsError
from domain.games.labyrinth.moves import Command, Shoot, parse_command
from domain.games.labyrinth.plan import Cell, Plan
from domain.games.labyrinth.plan_text import parse_plan
from domain.games.labyrinth.rules import (
    GAME_OPTIONS,
    OPTIONS,
    CorpseItem,
    Event,
    MineItem,
    Pile,
    RuleError,
    State,
    TreasureItem,
    ask_cell,
    choose_start,
    configure,
    events_for,
    miss_move,
    order_cell,
    pairs,
    play,
    say,
    start_game,
    take_break,
    vote_break,
)
from domain.rng import Rng

# --- helpers ---------------------------------------------------------------------------------


def plan(text: str) -> Plan:
    return parse_plan(text)


def game(board: Plan, cells: Sequence[Cell], **options: Any) -> State:
    """A match whose turn order is the seats' order, each seat starting on its cell."""
    state, _ = start_game(board, len(cells), configure(options), Rng(b"test", "order"))
    state = msgspec.structs.replace(state, order=tuple(range(len(cells))))
    for seat, cell in enumerate(cells):
        state, _ = choose_start(state, seat, cell)
    assert state.phase == "play", "a start choice was rejected"
    return state


def changed(state: State, seat: int, **changes: Any) -> State:
    players = tuple(msgspec.structs.replace(p, **changes) if p.seat == seat else p for p in state.players)
    return msgspec.structs.replace(state, players=players)


def lying(state: State, cell: Cell, **pile: Any) -> State:
    return msgspec.structs.replace(state, piles=pairs({**dict(state.piles), cell: Pile(**pile)}))


def turn_of(state: State, seat: int) -> State:
    return msgspec.structs.replace(state, turn=state.order.index(seat))


def move(state: State, seat: int, text: str) -> tuple[State, list[str]]:
    """Seat plays `text` on its turn; returns the state and what everyone was told of the move."""
    state = turn_of(state, seat)
    state, events = play(state, seat, parse_command(text))
    return state, [say(e) for e in events_for(events, None) if e.key not in ("turn", "quiet")]


def told(events: Sequence[Event], seat: int | None) -> list[str]:
    return [say(e) for e in events_for(events, seat)]


# --- plans -----------------------------------------------------------------------------------

SECTION_A = plan("""
grid:
      1   2   3   4
    +   +###+###+###+
  1 # .   .   a1  . #
    +###+---+   +###+
  2 # D   .   .   . #
    +   +   +   +###+
  3 # ^   H   .   a2#
    +---+   +   +   +
  4 # .   .   .   W #
    +###+###+   +###+

treasure 2,2 true
""")
"""The game example's labyrinth: player 1 starts at 3,3, player 2 at 4,1 below a wall and
a river flowing up into the delta at 2,1; a hospital at 3,2 below the treasure at 2,2."""

RANGE = plan("""
grid:
      1   2   3   4   5   6
    +###+###+###+###+###+###+
  1 # .   .   . | .   H   . #
    +###+###+   +###+###+###+
  2 # .   .   .   W   .   .
    +###+###+###+###+###+###+
""")
"""Two rows for shooting: a wall between 1,3 and 1,4, a hospital at 1,5, a weaponry at
2,4, an open exit right of 2,6."""

WATER = plan("""
grid:
      1   2   3   4   5
    +###+###+###+###+###+
  1 # >   >   >   D   . #
    +###+   +   +   +   +
  2 # b1  .   .   . | b2#
    +###+   +###+   +   +
  3 # .   .   E   b3  H #
    +###+###+###+###+###+
""")
"""A river from 1,1 flowing right through 1,2 and 1,3 into the delta at 1,4 (1,1 is its
source); a loop b1 2,1 -> b2 2,5 -> b3 3,4 -> b1; an encephalitis cell at 3,3; a wall
between 2,4 and 2,5."""

EXITS = plan("""
grid:
      1   2   3
    +###+###+###+
  1   .   .   . |
    +###+###+###+
  2 # .   W   H #
    +###+###+###+
""")
"""An open exit left of 1,1 and a closed one right of 1,3."""


# --- the rule book's examples ------------------------------------------------------------------


def test_the_game_example_of_section_a() -> None:
    state = game(SECTION_A, [(3, 3), (4, 1)], landmines=False)
    assert state.players[0].cell == (3, 3)

    state, said = move(state, 0, "Go up")
    assert said == ["Player 1: go up", "Walked onto land"]

    state, said = move(state, 1, "Blow the up wall, then go up.")
    assert said == ["Player 2: blow the up wall, go up", "blow the up wall - two grenades left",
                    "Walked into a river, carried by the flow to a delta"]
    assert state.players[1].cell == (2, 1)

    state, events = play(turn_of(state, 0), 0, parse_command("Shoot to the left, then go up."))
    said = told(events, None)
    assert said[1:4] == ["shoot left - two bullets left, none on the ground", "A scream is heard!",
                         "Walked into a pit"]
    assert state.players[0].cell == (3, 4)  # pit a1, then a2
    # the turn passes to the wounded player 2, who is told in public
    assert "Player 2 is wounded and can ask for a new cell" in said
    assert state.players[1].wounded and state.players[1].bullets == 0

    # "How many bullets and grenades do I have?" The example's answer, two bullets and three
    # grenades, is player 1's (it shot once); player 2 threw a grenade and was then
    # wounded, dropping its bullets (5.5).
    _, events = play(state, 0, parse_command("status"))
    assert told(events, None) == ["Player 1: Two bullets, three grenades, healthy"]
    _, events = play(state, 1, parse_command("status"))
    assert told(events, None) == ["Player 2: No bullets, two grenades, wounded"]

    state, events = order_cell(state, 1, (4, 2))
    assert told(events, None) == ["Player 2 ordered a new cell"]
    assert told(events, 1) == ["Player 2 ordered a new cell", "You continue from 4,2"]
    state, said = move(state, 1, "Go up.")
    assert said == ["Player 2: go up", "Walked into a hospital", "was healed"]
    assert not state.players[1].wounded

    state, said = move(state, 0, "Go right.")
    assert said == ["Player 1: go right", "Cannot move - hit a wall"]

    state, said = move(state, 1, "Go up, then blow the up wall.")
    assert said == ["Player 2: go up, blow the up wall", "Walked onto land", "found a treasure",
                    "blow the up wall - one grenade left"]
    assert state.players[1].carries == TreasureItem(0)
    assert state.plan.wall_between((1, 2), (2, 2)) is None

    state, said = move(state, 0, "Blow the right wall, then go right.")
    assert said == ["Player 1: blow the right wall, go right", "blow the right wall - two grenades left",
                    "Cannot move - hit a wall"]
    assert state.players[0].cell == (3, 4)


SIX_FIVE = plan("""
grid:
      1   2   3
    +###+###+###+
  1 # .   b1  b2#
    +###+###+###+
  2 # .   .   W #
    +###+###+###+
""")


def test_the_conditional_move_of_6_5() -> None:
    """ "Go right; if I find a treasure, shoot up; and if I find a bullet, shoot right;
    finally, if I fall into a pit, leave one grenade there." The answer: fell into a pit,
    found a treasure, two bullets and a corpse; a shot, three bullets left and one on the
    ground; a shot, still three; no grenade to leave. (The answer names the first shot
    "right", the move "up": the move is what is done.)"""
    state = game(SIX_FIVE, [(1, 1), (2, 1), (2, 2)], landmines=False)
    state = changed(state, 2, alive=False, death_told=True)
    state = changed(state, 0, grenades=0)
    state = lying(state, (1, 3), bullets=2, treasures=(), corpses=(2,))
    state = msgspec.structs.replace(state, truth=(False,))
    state = lying(state, (1, 3), bullets=2, treasures=(0,), corpses=(2,))
    state, said = move(state, 0, "Go right; if I find a treasure, shoot up; and if I find a bullet, "
                                 "shoot right; finally, if I fall into a pit, leave one grenade there.")
    assert said == [
        "Player 1: go right; if I find a treasure, shoot up; if I find a bullet, shoot right; "
        "if I fall into a pit, leave a grenade",
        "Walked into a pit", "found a treasure, two bullets and a corpse",
        "shoot up - three bullets left, one on the ground", "No scream is heard",
        "shoot right - three bullets left, none on the ground", "No scream is heard",
        "leave a grenade - no luck, you have none",
    ]
    assert state.players[0].carries == TreasureItem(0)
    assert state.pile((1, 3)) == Pile(corpses=(2,))


# --- the start (6.1, 6.2, 7.6) -------------------------------------------------------------------


def test_the_turn_order_is_drawn_from_the_seed() -> None:
    orders = set()
    for seed in range(30):
        state, events = start_game(SECTION_A, 4, configure({}), Rng(bytes([seed]), "order"))
        again, _ = start_game(SECTION_A, 4, configure({}), Rng(bytes([seed]), "order"))
        assert state.order == again.order
        assert sorted(state.order) == [0, 1, 2, 3]
        assert events[-1] == Event("choose_start", state.order[0])
        orders.add(state.order)
    assert len(orders) > 10


def test_start_choices_are_secret_and_rejected_without_a_reason() -> None:
    state, _ = start_game(SECTION_A, 3, configure({}), Rng(b"x", "order"))
    state = msgspec.structs.replace(state, order=(0, 1, 2))
    with pytest.raises(RuleError, match="player 1 chooses now"):
        choose_start(state, 1, (1, 1))
    with pytest.raises(RuleError, match="not a cell"):
        choose_start(state, 0, (9, 9))
    state, events = choose_start(state, 0, (1, 2))
    assert told(events, None) == ["Player 1 has chosen a start cell", "Player 2, choose your start cell"]
    assert told(events, 0)[1] == "You start at 1,2"
    state, _ = choose_start(state, 1, (3, 1))  # a river cell
    state, events = choose_start(state, 2, (1, 2))  # player 1's cell
    assert state.phase == "start"
    assert told(events, 1)[-2:] == ["Your choice is invalid: choose another cell", "Player 2, choose your start cell"]
    assert "Your choice is invalid: choose another cell" in told(events, 2)
    assert not any("invalid" in line for line in told(events, None))
    assert not any("invalid" in line for line in told(events, 0))
    with pytest.raises(RuleError, match="chosen before"):
        choose_start(state, 1, (3, 1))
    state, _ = choose_start(state, 1, (4, 1))
    state, events = choose_start(state, 2, (4, 4))
    assert state.phase == "play"
    assert [p.cell for p in state.players] == [(1, 2), (4, 1), (4, 4)]
    assert told(events, None)[-4:] == ["Player 1 starts on land", "Player 2 starts on land",
                                       "Player 3 starts on a weaponry", "Player 1's turn"]


def test_start_rules_are_match_options() -> None:
    state = game(SECTION_A, [(3, 1), (3, 1)], river_starts=True, shared_starts=True)
    assert [p.cell for p in state.players] == [(3, 1), (3, 1)]


def test_everyone_starts_on_the_plans_cell_without_ammunition_under_7_6() -> None:
    common = msgspec.structs.replace(SECTION_A, start=(3, 3))
    state, events = start_game(common, 3, configure({"common_start": True}), Rng(b"s", "order"))
    assert state.phase == "play"
    assert all(p.cell == (3, 3) and p.bullets == 0 and p.grenades == 0 for p in state.players)
    assert told(events, None)[-1] == f"Player {state.order[0] + 1}'s turn"
    with pytest.raises(RuleError, match="start cell"):
        start_game(SECTION_A, 3, configure({"common_start": True}), Rng(b"s", "order"))


def test_options_have_the_texts_defaults_and_are_checked() -> None:
    options = configure({})
    assert (options.heal_moves, options.nstop, options.landmines, options.skips) == (10, None, True, True)
    assert (options.blow_report, options.mine_reorder, options.reorders) == ("grenades", True, None)
    assert "blow_report" in OPTIONS.schema("labyrinth")
    with pytest.raises(OptionsError, match="blow_report"):
        configure({"blow_report": "loud"})
    with pytest.raises(OptionsError, match="shooting_range"):
        configure({"shooting_range": 0})


# --- movement --------------------------------------------------------------------------------


def test_a_wall_is_a_wall_whatever_its_kind() -> None:
    state = game(RANGE, [(1, 3), (1, 1)])
    state, said = move(state, 0, "go right")  # a destructible wall
    assert said[1:] == ["Cannot move - hit a wall"]
    state, said = move(state, 1, "go up")  # the outer wall
    assert said[1:] == ["Cannot move - hit a wall"]
    state, said = move(state, 1, "go down")  # an indestructible inner wall
    assert said[1:] == ["Cannot move - hit a wall"]
    assert [p.cell for p in state.players] == [(1, 3), (1, 1)]


def test_a_river_carries_one_cell_and_upstream_leaves_you_in_place() -> None:
    state = game(WATER, [(2, 2), (2, 4)])
    state, said = move(state, 0, "go up")  # into 1,2, carried to 1,3
    assert said[1:] == ["Walked into a river, carried by the flow"]
    assert state.players[0].cell == (1, 3)
    state, said = move(state, 0, "go left")  # upstream: into 1,2, carried back to 1,3
    assert said[1:] == ["Walked into a river, carried by the flow"]
    assert state.players[0].cell == (1, 3)
    state, said = move(state, 0, "go up")  # a wall hit in a river: carried on
    assert said[1:] == ["Cannot move in that direction - hit a wall; carried by the flow to a delta"]
    assert state.players[0].cell == (1, 4)
    state, said = move(state, 0, "go by the flow")  # not in a river
    assert said[1:] == ["Cannot move by the flow - not in a river"]
    state, said = move(state, 0, "go left")  # from the delta upstream: carried back
    assert said[1:] == ["Walked into a river, carried by the flow to a delta"]
    assert state.players[0].cell == (1, 4)
    state, said = move(state, 1, "go up")  # a delta entered from land
    assert said[1:] == ["Walked into a delta"]
    state = changed(state, 1, cell=(2, 2))
    state, _ = move(state, 1, "go up")
    state, said = move(state, 1, "go by the flow")
    assert said[1:] == ["Walked by the flow into a delta"]


def test_pits_send_you_on_and_you_find_what_lies_in_the_arrival_pit_only() -> None:
    state = game(WATER, [(3, 2), (2, 3)], landmines=False)
    state = lying(state, (2, 1), bullets=1)
    state = lying(state, (2, 5), grenades=2)
    state = changed(state, 0, grenades=1)
    state = changed(state, 0, cell=(2, 2))
    state, said = move(state, 0, "go left")  # into b1, arriving at b2
    assert said[1:] == ["Walked into a pit", "found two grenades"]
    assert state.players[0].cell == (2, 5)
    assert state.players[0].grenades == 3
    assert state.pile((2, 1)) == Pile(bullets=1)
    state, said = move(state, 0, "go left")  # a wall: a pit does not send you on
    assert said[1:] == ["Cannot move - hit a wall"]
    assert state.players[0].cell == (2, 5)
    state, said = move(state, 0, "go by the loop")
    assert said[1:] == ["Walked by the loop into the next pit"]
    assert state.players[0].cell == (3, 4)
    state, said = move(state, 0, "go by the loop, if I fall into a pit, shoot up")
    assert state.players[0].cell == (2, 1)
    assert "found a bullet" in said and "shoot up - three bullets left, none on the ground" in said
    state, said = move(state, 1, "go by the loop")
    assert said[1:] == ["Cannot move by the loop - not in a pit"]


def test_hospitals_heal_and_weaponries_refill() -> None:
    state = game(RANGE, [(1, 4), (2, 3)])
    state = changed(state, 0, wounded=True, bullets=0, grenades=1)
    state = changed(state, 1, bullets=1, grenades=0)
    state, said = move(state, 0, "go right")
    assert said[1:] == ["Walked into a hospital", "was healed"]
    assert not state.players[0].wounded
    state, said = move(state, 1, "go right")
    assert said[1:] == ["Walked into a weaponry, you have 3 bullets and 3 grenades"]


# --- treasures and leaving ----------------------------------------------------------------------


def test_several_treasures_are_named_lowest_to_topmost_and_the_old_one_is_kept() -> None:
    state = game(RANGE, [(1, 1), (2, 6)], landmines=False)
    state = msgspec.structs.replace(state, truth=(False, False, True))
    state = changed(state, 0, carries=TreasureItem(0))
    state = lying(state, (1, 2), treasures=(1, 2))
    state, said = move(state, 0, "go right")
    assert said[1:] == ["Walked onto land", "found two treasures"]
    assert state.players[0].carries == TreasureItem(0)  # the old one is kept
    state, said = move(state, 0, "go down, take the lowest treasure")  # a wall: it stays
    assert state.players[0].carries == TreasureItem(1)
    assert state.pile((1, 2)).treasures == (2, 0)  # the one put down is now the topmost
    assert "took the lowest treasure" in said
    state = changed(state, 0, cell=(1, 1))
    state, said = move(state, 0, "go right, take the new treasure")
    assert state.players[0].carries == TreasureItem(0)
    assert state.pile((1, 2)).treasures == (2, 1)
    state, said = move(state, 0, "go up, take the 5th lowest treasure")
    assert said[-1] == "take the fifth lowest treasure - there is no such treasure here"


def test_a_new_treasure_is_picked_up_in_exchange_for_a_landmine() -> None:
    state = game(RANGE, [(1, 1), (2, 6)])
    assert state.players[0].carries == MineItem()
    state = lying(state, (1, 2), treasures=(0,))
    state = msgspec.structs.replace(state, truth=(True,))
    state, _ = move(state, 0, "go right")
    assert state.players[0].carries == TreasureItem(0)
    assert state.pile((1, 2)) == Pile(landmines=1)


def test_walking_out_with_the_true_treasure_wins() -> None:
    state = game(EXITS, [(1, 1), (2, 1)])
    state = msgspec.structs.replace(state, truth=(True,))
    state = changed(state, 0, carries=TreasureItem(0))
    state, said = move(state, 0, "go left")
    assert said[1:] == ["Walked out of the labyrinth", "Walked out with the true treasure: player 1 wins!"]
    assert state.outcome is not None and state.outcome.winner == 0 and state.phase == "over"
    with pytest.raises(RuleError, match="over"):
        play(state, 1, parse_command("go up"))


def test_a_fake_treasure_crumbles_outside_and_you_must_come_back() -> None:
    state = game(EXITS, [(1, 1), (2, 1)])
    state = msgspec.structs.replace(state, truth=(False,))
    state = changed(state, 0, carries=TreasureItem(0))
    state, said = move(state, 0, "go left")
    assert said[1:] == ["Walked out of the labyrinth",
                        "The treasure crumbled to ashes; return to the labyrinth with the next move"]
    assert state.players[0].carries is None and state.changed
    back, said = move(state, 0, "go right")
    assert said[1:] == ["Returned into the labyrinth", "Walked onto land"]
    assert back.players[0].cell == (1, 1) and back.players[0].outside is None
    lost, said = move(state, 0, "go up")
    assert said[1:] == ["Failed to return to the labyrinth: player 1 has lost",
                        "Player 2 is the last one alive and wins"]
    assert not lost.players[0].in_play
    assert lost.outcome is not None and lost.outcome.winner == 1 and lost.outcome.reason == "kill"


def test_throwing_the_true_treasure_out_is_a_draw() -> None:
    state = game(EXITS, [(1, 1), (2, 1)])
    state = msgspec.structs.replace(state, truth=(True,))
    state = changed(state, 0, carries=TreasureItem(0))
    state, said = move(state, 0, "go right, throw the treasure left")
    # 1,2 -> the treasure lands on 1,1; no draw
    assert state.outcome is None and state.pile((1, 1)).treasures == (0,)
    state = changed(state, 0, carries=TreasureItem(0), cell=(1, 1))
    state = msgspec.structs.replace(state, piles={})
    state, said = move(state, 0, "go down, throw the treasure left")
    assert said[-2:] == ["throw the treasure left - out of the labyrinth",
                         "The true treasure is lost: the game is a draw"]
    assert state.outcome is not None and state.outcome.winner is None


def test_a_true_treasure_thrown_onto_a_river_source_is_a_draw() -> None:
    state = game(WATER, [(2, 2), (2, 4)], landmines=False)
    state = msgspec.structs.replace(state, truth=(False, True), piles={})
    # a fake one thrown onto the source 1,1 from the river cell 1,2 is only lost
    state = changed(state, 0, carries=TreasureItem(0), cell=(1, 2))
    state, said = move(state, 0, "throw the treasure left, go by the flow")
    assert said[1] == "throw the treasure left - done"
    assert state.outcome is None and state.pile((1, 1)).treasures == (0,)
    # the true one thrown into 1,3 (a river cell a player can stand on) is not lost
    state = changed(state, 0, carries=TreasureItem(1), cell=(1, 2))
    state, said = move(state, 0, "throw the treasure right, go by the flow")
    assert state.outcome is None
    state = changed(state, 0, carries=TreasureItem(1), cell=(1, 2))
    state = msgspec.structs.replace(state, piles={})
    state, said = move(state, 0, "throw the treasure left, go by the flow")
    assert said[1:] == ["throw the treasure left - done", "The true treasure is lost: the game is a draw"]
    assert state.outcome is not None and state.outcome.reason == "treasure_lost"


def test_thrown_items_hit_a_wall_and_fall_at_your_feet() -> None:
    state = game(RANGE, [(1, 3), (2, 6)], landmines=False)
    state, said = move(state, 0, "go up, throw 2 bullets right")
    assert said[-1] == "throw 2 bullets right - you have found two bullets at your feet"
    assert state.pile((1, 3)) == Pile(bullets=2)
    state, said = move(state, 0, "go left, throw a bullet right")
    assert state.pile((1, 3)) == Pile(bullets=3)


# --- bullets --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("shooter", "target", "hit"), [
    ((1, 1), (1, 3), True),   # two cells of land
    ((1, 1), (1, 4), False),  # a wall between
    ((1, 4), (1, 6), False),  # a hospital between
    ((2, 1), (2, 6), False),  # a weaponry between
])
def test_a_bullet_flies_until_a_wall_hospital_weaponry_or_player(shooter: Cell, target: Cell, hit: bool) -> None:
    state = game(RANGE, [shooter, target], landmines=False)
    state, said = move(state, 0, "shoot right, go left")
    assert ("A scream is heard!" in said) is hit
    assert state.players[1].wounded is hit


def test_shooting_through_weaponries_and_hospitals_under_7_3() -> None:
    state = game(RANGE, [(1, 4), (1, 6)], shoot_through=True)
    state, said = move(state, 0, "shoot right, go left")
    assert "A scream is heard!" in said


def test_the_shooting_range_of_7_3() -> None:
    state = game(RANGE, [(1, 1), (1, 3), (1, 2)], shooting_range=1, shared_starts=True)
    state = changed(state, 2, cell=(2, 1))
    state, said = move(state, 0, "shoot right, go down")
    assert "No scream is heard" in said
    state = changed(state, 0, cell=(1, 2))
    state, said = move(state, 0, "shoot right, go down")
    assert "A scream is heard!" in said


def test_no_shooting_out_of_a_hospital_or_weaponry_or_while_wounded() -> None:
    state = game(RANGE, [(1, 5), (2, 4), (1, 1)])
    _, said = move(state, 0, "shoot left, go left")
    assert said[1] == "shoot left - not allowed: no shooting out of a hospital"
    _, said = move(state, 1, "shoot left, go left")
    assert said[1] == "shoot left - not allowed: no shooting out of a weaponry"
    wounded = changed(state, 2, wounded=True)
    _, said = move(wounded, 2, "shoot right, go right")
    assert said[1] == "shoot right - not allowed: you are wounded"
    empty = changed(state, 2, bullets=0)
    _, said = move(empty, 2, "shoot right, go right")
    assert said[1] == "shoot right - no luck, you have no bullets"


def test_damp_powder_under_7_3() -> None:
    state = game(WATER, [(1, 2), (2, 2)], river_starts=True, damp_powder=True)
    _, said = move(state, 0, "shoot down, go by the flow")
    assert said[1] == "shoot down - not allowed: the powder is damp"


def test_a_shot_wounds_everyone_else_on_the_shooters_cell_and_they_drop_what_they_carry() -> None:
    state = game(RANGE, [(1, 1), (1, 1), (1, 1), (1, 3)], shared_starts=True, landmines=False)
    state = msgspec.structs.replace(state, truth=(True,))
    state = changed(state, 1, carries=TreasureItem(0))
    state, said = move(state, 0, "shoot left, go down")
    assert "A scream is heard!" in said
    assert [p.wounded for p in state.players] == [False, True, True, False]
    # caught on the fly: the shooter had one bullet left after the shot and catches three,
    # and the treasure
    assert state.players[0].bullets == 3
    assert state.players[0].carries == TreasureItem(0)
    assert state.players[1].grenades == 3 and state.players[1].bullets == 0
    assert state.pile((1, 1)).bullets == 5  # six dropped, one caught
    assert state.players[1].carries is None


def test_a_fallen_player_is_not_hit_twice_in_a_row() -> None:
    state = game(RANGE, [(1, 1), (1, 2), (1, 3)], landmines=False)
    state, said = move(state, 0, "shoot right, shoot right, go down")
    assert said.count("A scream is heard!") == 2
    assert state.players[1].wounded and state.players[1].alive
    assert state.players[2].wounded  # the second bullet passed over the fallen player 2


def test_a_second_hit_kills_and_leaves_a_corpse() -> None:
    state = game(RANGE, [(1, 1), (1, 2), (2, 6)], landmines=False)
    state, _ = move(state, 0, "shoot right, go down")
    state, events = play(turn_of(state, 1), 1, parse_command("go left"))  # its turn: it stands up
    assert "Player 2 is wounded and can ask for a new cell" not in told(events, None)
    state = changed(state, 1, cell=(1, 2))
    state, said = move(state, 0, "go up, shoot right")
    assert "A scream is heard!" in said
    dead = state.players[1]
    assert not dead.alive
    assert state.pile((1, 2)) == Pile(bullets=3, grenades=3, corpses=(1,))


def test_cell_orders_come_only_on_the_turn_after_the_wound_and_number_players_less_one() -> None:
    state = game(RANGE, [(1, 1), (1, 2), (2, 6)], landmines=False)
    assert state.players[1].orders == 2
    state, events = play(state, 0, parse_command("shoot right, go down"))
    state, events = play(state, 1, parse_command("go left"))  # declines by moving
    assert state.players[1].cell == (1, 1) and not state.players[1].may_order
    with pytest.raises(RuleError, match="only on the turn after a wound"):
        order_cell(turn_of(state, 1), 1, (2, 2))
    one = game(RANGE, [(1, 1), (1, 2)], landmines=False, reorders=0)
    one, events = play(one, 0, parse_command("shoot right, go down"))
    assert "Player 2 is wounded" in told(events, None)
    with pytest.raises(RuleError):
        order_cell(one, 1, (2, 2))


def test_a_river_cell_order_is_rejected_without_a_reason() -> None:
    state = game(WATER, [(2, 2), (2, 3)], landmines=False)
    state, _ = play(state, 0, parse_command("shoot right, go down"))
    same, events = order_cell(state, 1, (1, 3))
    assert same == state
    assert told(events, 1) == ["That cell is invalid: choose another"] and told(events, 0) == []


# --- grenades ---------------------------------------------------------------------------------------


def test_a_grenade_blows_a_destructible_wall_and_nothing_else() -> None:
    state = game(RANGE, [(1, 3), (2, 6)])
    state, said = move(state, 0, "blow the right wall, go right")
    assert said[1:] == ["blow the right wall - two grenades left", "Walked onto land"]
    assert state.changed
    state = changed(state, 0, cell=(1, 1))
    same = state.plan
    state, said = move(state, 0, "blow the up wall, go down")
    assert state.plan == same


@pytest.mark.parametrize(("report", "lines"), [
    ("grenades", [[], []]),
    ("missing", [["there was no wall"], []]),
    ("all", [["there was no wall"], ["the wall stayed"]]),
])
def test_what_a_grenade_thrower_is_told_under_7_8(report: str, lines: list[list[str]]) -> None:
    state = game(RANGE, [(1, 1), (2, 6)], blow_report=report)
    _, said = move(state, 0, "blow the right wall, go down")
    assert said[2:-1] == lines[0]
    _, said = move(state, 0, "blow the up wall, go down")
    assert said[2:-1] == lines[1]
    if report == "all":
        _, said = move(changed(state, 0, cell=(1, 3)), 0, "blow the right wall, go down")
        assert said[2] == "the wall was blown up"


def test_a_closed_exit_is_blown_open() -> None:
    state = game(EXITS, [(1, 3), (2, 1)])
    state, said = move(state, 0, "go right")
    assert said[1:] == ["Cannot move - hit a wall"]
    state, said = move(state, 0, "blow the right wall, go right")
    assert said[-2:] == ["Walked out of the labyrinth", "Return to the labyrinth with the next move"]


# --- landmines ---------------------------------------------------------------------------------------


def test_a_landmine_blasts_on_arrival_destroying_bullets_and_landmines() -> None:
    state = game(RANGE, [(1, 1), (1, 3), (2, 6)])
    state, said = move(state, 0, "go right, set the mine")
    assert said[-1] == "set the mine - done"
    assert state.pile((1, 2)).armed == 1 and state.players[0].carries is None
    state = changed(state, 0, cell=(2, 1))
    state = lying(state, (1, 2), armed=1, bullets=2, grenades=1, treasures=())
    state, said = move(state, 1, "go left")
    assert said[1:] == ["A landmine blew up!", "Walked onto land", "found a grenade"]
    victim = state.players[1]
    assert victim.wounded and victim.bullets == 0 and victim.carries is None and victim.grenades == 3
    assert state.pile((1, 2)) == Pile(grenades=1)  # the mine it carried is destroyed too


def test_a_mine_set_across_a_wall_lands_at_your_feet_unsaid() -> None:
    state = game(RANGE, [(1, 3), (2, 6)])
    state, said = move(state, 0, "set the mine right, go up")
    assert said[1] == "set the mine - done"
    assert state.pile((1, 3)).armed == 1 and (1, 4) not in dict(state.piles)


def test_mines_are_defused_in_hospitals_and_outside() -> None:
    state = game(RANGE, [(1, 4), (2, 6)])
    state, said = move(state, 0, "set the mine right, go up")
    assert said[1] == "set the mine - done" and (1, 5) not in dict(state.piles)
    state = changed(state, 1, carries=MineItem())
    state, said = move(state, 1, "set the mine right, go up")
    assert said[1] == "set the mine - defused" and not state.piles


def test_a_thrown_corpse_sets_a_mine_off_and_a_mine_thrown_is_not_active() -> None:
    state = game(RANGE, [(1, 1), (1, 2), (2, 6)], landmines=False)
    state = changed(state, 0, carries=CorpseItem(2))
    state = changed(state, 2, alive=False, death_told=True)
    state = lying(state, (1, 2), armed=1)
    state, said = move(state, 0, "throw the corpse right, go down")
    assert said[1:3] == ["throw the corpse right - done", "A landmine blew up!"]
    assert state.players[1].wounded
    assert state.pile((1, 2)) == Pile(corpses=(2,))
    state = changed(state, 0, carries=MineItem(), cell=(1, 1))
    state, _ = move(state, 0, "throw the mine right, go up")
    assert state.pile((1, 2)) == Pile(landmines=1, corpses=(2,))


def test_no_cell_order_after_a_landmine_under_7_5() -> None:
    for allowed in (True, False):
        state = game(RANGE, [(1, 1), (2, 6)], mine_reorder=allowed)
        state = lying(state, (1, 2), armed=1)
        state, _ = play(state, 0, parse_command("go right"))
        assert state.players[0].wounded and state.players[0].may_order is allowed


# --- encephalitis --------------------------------------------------------------------------------------


def test_the_mite_wakes_and_the_cell_is_contagious_from_the_wakers_next_turn() -> None:
    state = game(WATER, [(3, 2), (2, 3)])
    state, said = move(state, 0, "go right")
    assert said[1:] == ["Arrived at the encephalitis cell, woke up the mite"]
    # the waker leaves on its next turn: no infection
    left, said = move(state, 0, "go left")
    assert not left.players[0].infected
    # the waker stays (hits a wall): infected, its items left there
    stay = msgspec.structs.replace(state, round=state.round + 1)
    stay, said = move(stay, 0, "go down")
    assert said[1:] == ["Cannot move - hit a wall", "You have been infected and have 10 moves to heal"]
    assert stay.players[0].infected and stay.players[0].carries is None
    assert stay.pile((3, 3)) == Pile(bullets=3, landmines=1)


def test_an_infected_player_dies_after_its_moves_or_heals_and_becomes_immune() -> None:
    state = game(WATER, [(3, 2), (2, 3)], heal_moves=2)
    state = changed(state, 0, infected=True, heal_left=2, bullets=0, carries=None)
    dying, said = move(state, 0, "go up")
    assert dying.players[0].heal_left == 1
    dying, said = move(dying, 0, "go down")
    assert "Player 1 died of encephalitis" in said and not dying.players[0].alive
    assert dying.outcome is not None and dying.outcome.winner == 1
    hospital = changed(state, 0, cell=(3, 4))
    hospital, said = move(hospital, 0, "go right")
    assert said[1:] == ["Walked into a hospital", "was healed", "is immune to encephalitis from now on"]
    assert hospital.players[0].immune and hospital.changed
    hospital = msgspec.structs.replace(hospital, mites={(3, 3): (1, 0)})
    hospital = changed(hospital, 0, cell=(3, 2))
    hospital, said = move(hospital, 0, "go right")
    assert said[1:] == ["Walked onto land"] and not hospital.players[0].infected


def test_a_wounded_player_dies_of_infection_and_leaves_a_contagious_corpse() -> None:
    state = game(WATER, [(3, 2), (2, 3), (2, 2)])
    state = msgspec.structs.replace(state, mites={(3, 3): (1, 0)})
    state = changed(state, 0, wounded=True, bullets=0, carries=None)
    state, said = move(state, 0, "go right")
    assert "Player 1 died of encephalitis" in said
    assert state.pile((3, 3)).corpses == (0,)
    state = msgspec.structs.replace(state, mites={})
    state = changed(state, 1, cell=(3, 2))
    state, said = move(state, 1, "go right")
    assert state.players[1].infected  # from the corpse
    immune = changed(state, 2, immune=True, cell=(3, 2))
    immune, _ = move(immune, 2, "go right")
    assert immune.players[2].carries == MineItem()  # a landmine lay there, worth more
    immune = lying(immune, (3, 3), corpses=(0,))
    immune = changed(immune, 2, carries=None, cell=(3, 2))
    immune, _ = move(immune, 2, "go right")
    assert immune.players[2].carries == CorpseItem(0)


# --- dark moves, status, recall -------------------------------------------------------------------------


def test_a_dark_move_is_done_and_told_to_nobody() -> None:
    state = game(RANGE, [(1, 1), (1, 3)], landmines=False)
    state = lying(state, (1, 2), bullets=1)
    state = changed(state, 0, bullets=2)
    state, events = play(state, 0, parse_command("go right, shoot right, don't tell the result"))
    assert told(events, None)[:2] == ["Player 1: go right, shoot right; don't tell the result",
                                      "go right, shoot right; don't tell the result - done."]
    assert not any("scream" in line for line in told(events, None))
    assert "You picked up a bullet" in told(events, 0)
    assert "You picked up a bullet" not in told(events, 1)
    assert state.players[1].wounded  # done by the rules all the same
    assert "Player 2 is wounded and can ask for a new cell" in told(events, None)


def test_a_semi_dark_move_tells_whether_a_wall_was_hit() -> None:
    state = game(RANGE, [(1, 3), (2, 6)])
    _, events = play(state, 0, parse_command("go right, don't tell where I end up but tell me if I hit a wall"))
    assert told(events, None)[1:3] == ["go right; don't tell where I end up but tell me if I hit a wall - done.",
                                       "You've hit a wall."]
    _, events = play(state, 0, parse_command("go left, don't tell where I end up but tell me if I hit a wall"))
    assert told(events, None)[2] == "No wall hit."
    assert "Walked onto land" not in told(events, 0)


def test_recall_tells_the_last_move_only_and_status_is_free() -> None:
    state = game(RANGE, [(1, 1), (2, 6)])
    _, events = play(state, 1, parse_command("recall 1"))
    assert told(events, None) == ["Player 1 has made no move yet"]
    state, _ = play(state, 0, parse_command("go right"))
    state, _ = play(state, 1, parse_command("go left"))
    state, _ = play(state, 0, parse_command("go down"))
    same, events = play(state, 0, parse_command("recall 1"))
    assert same == state
    assert told(events, None) == ["Player 1's last move: go down - Cannot move - hit a wall"]
    with pytest.raises(RuleError):
        play(state, 1, parse_command("recall 7"))
    same, events = play(state, 0, parse_command("status"))
    assert same == state and told(events, None) == ["Player 1: Three bullets, three grenades, a landmine, healthy"]


# --- turns and the end ------------------------------------------------------------------------------------


def test_only_the_player_whose_turn_it_is_moves() -> None:
    state = game(RANGE, [(1, 1), (2, 6)])
    with pytest.raises(RuleError, match="player 1's turn"):
        play(state, 1, parse_command("go left"))
    state, events = play(state, 0, parse_command("go right"))
    assert told(events, None)[-1] == "Player 2's turn"


def test_all_players_skipping_is_a_draw_and_skips_can_be_forbidden() -> None:
    state = game(RANGE, [(1, 1), (2, 6), (1, 3)])
    state, _ = play(state, 0, parse_command("skip"))
    state, _ = play(state, 1, parse_command("go left"))
    state, _ = play(state, 2, parse_command("skip"))
    state, _ = play(state, 0, parse_command("skip"))
    assert state.outcome is None
    state, events = play(state, 1, parse_command("skip"))
    assert told(events, None)[-1] == "All players skipped their moves: the game is a draw"
    assert state.outcome is not None and state.outcome.reason == "skips"
    strict = game(RANGE, [(1, 1), (2, 6)], skips=False)
    with pytest.raises(RuleError, match=r"7\.7"):
        play(strict, 0, parse_command("skip"))


def test_nstop_rounds_without_a_change_are_a_draw() -> None:
    state = game(RANGE, [(1, 1), (2, 6)], nstop=2)
    state, _ = play(state, 0, parse_command("go down"))
    state, events = play(state, 1, parse_command("go up"))
    assert "One round with no changes" in told(events, None)
    state, _ = play(state, 0, parse_command("blow the right wall, go down"))  # no wall there
    state, events = play(state, 1, parse_command("go up"))
    assert told(events, None)[-1] == "Two rounds with no changes - game ends with a draw!"
    assert state.outcome is not None and state.outcome.reason == "nstop"


def test_a_blown_wall_restarts_the_nstop_count() -> None:
    state = game(RANGE, [(1, 3), (2, 6)], nstop=2)
    state, _ = play(state, 0, parse_command("go down"))
    state, _ = play(state, 1, parse_command("go up"))
    assert state.quiet == 1
    state, _ = play(state, 0, parse_command("go up, blow the right wall"))
    state, _ = play(state, 1, parse_command("go up"))
    assert state.quiet == 0 and state.outcome is None


def test_killing_every_other_player_wins_or_under_7_9_gives_moves_to_carry_the_treasure_out() -> None:
    state = game(RANGE, [(1, 1), (1, 2)], landmines=False)
    state = changed(state, 1, wounded=True)
    state, said = move(state, 0, "shoot right, go down")
    assert said[-1] == "Player 1 is the last one alive and wins"
    assert state.outcome is not None and state.outcome.winner == 0 and state.outcome.reason == "kill"
    late = game(RANGE, [(1, 1), (1, 2)], landmines=False, survivor_moves=2)
    late = changed(late, 1, wounded=True)
    late, said = move(late, 0, "shoot right, go down")
    assert "Player 1 is the last one alive and has 2 moves to carry the true treasure out" in said
    late, _ = move(late, 0, "go down")
    assert late.outcome is None
    late, said = move(late, 0, "go down")
    assert said[-1] == "Player 1 did not carry the true treasure out in time: the game is a draw"
    assert late.outcome is not None and late.outcome.winner is None


def test_a_dead_players_turns_are_skipped_and_its_death_told() -> None:
    state = game(RANGE, [(1, 1), (1, 2), (2, 6)], landmines=False)
    state = changed(state, 1, wounded=True)
    state, events = play(state, 0, parse_command("shoot right, go down"))
    assert told(events, None)[-2:] == ["Player 2 is dead", "Player 3's turn"]
    assert state.order[state.turn] == 2


def test_coming_back_in_through_an_exit_is_an_arrival() -> None:
    """A player outside who walks back in arrives from another place: a landmine there
    blows up, and an infected player's successful move counts."""
    state = game(EXITS, [(1, 2), (2, 1)])
    state = changed(state, 0, cell=(1, 1), outside=((1, 1), "left"), infected=True, heal_left=3,
                    carries=None, bullets=0)
    state = lying(state, (1, 1), armed=1)
    state, said = move(state, 0, "go right")
    assert said[1:3] == ["Returned into the labyrinth", "A landmine blew up!"]
    assert not state.players[0].alive  # an infected player hit by a landmine dies (4.7)


def test_a_command_the_rules_cannot_read_is_refused() -> None:
    state = game(EXITS, [(1, 2), (2, 1)])
    with pytest.raises(RuleError, match="exactly one movement"):
        play(state, 0, Command(before=(Shoot("up"),)))
    with pytest.raises(RuleError, match="no seat 5"):
        play(state, 5, parse_command("status"))


def test_the_rules_page_lists_every_option_of_the_game_with_its_default() -> None:
    page = (Path(__file__).parents[2] / "docs" / "rules" / "labyrinth.md").read_text()
    section = page.split("### The game's options", 1)[1]
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", section, re.MULTILINE))
    assert set(rows) == {o.name for o in GAME_OPTIONS}
    for option in GAME_OPTIONS:
        assert rows[option.name].strip() == json.dumps(option.default), option.name


def test_a_player_who_dies_on_arrival_picks_nothing_up() -> None:
    state = game(WATER, [(3, 2), (2, 3)])
    state = msgspec.structs.replace(state, mites={(3, 3): (1, 0)})
    state = changed(state, 0, wounded=True, bullets=0, carries=None, grenades=1)
    state = lying(state, (3, 3), grenades=2)
    state, said = move(state, 0, "go right")
    assert "Player 1 died of encephalitis" in said
    assert state.players[0].grenades == 0
    assert state.pile((3, 3)) == Pile(grenades=3, corpses=(0,))


# --- section 7's bans and section 9 ---------------------------------------------------------------------


@pytest.mark.parametrize(("option", "text", "code"), [
    ("conditional_moves", "go right; if I hit a wall, shoot up", "no_conditional_moves"),
    ("dark_moves", "go right, don't tell the result", "no_dark_moves"),
    ("semi_dark_moves", "go right, don't tell where I end up but tell me if I hit a wall", "no_semi_dark_moves"),
    ("throwing", "go right, throw 2 bullets left", "no_throwing"),
    ("mine_on_neighbour", "set the mine left, go right", "no_mine_on_neighbour"),
])
def test_section_7_1_bans_refuse_the_move_and_change_nothing(option: str, text: str, code: str) -> None:
    allowed = game(RANGE, [(1, 2), (2, 6)])
    play(allowed, 0, parse_command(text))
    banned = game(RANGE, [(1, 2), (2, 6)], **{option: False})
    with pytest.raises(RuleError) as caught:
        play(banned, 0, parse_command(text))
    assert caught.value.code == code and "(7.1)" in caught.value.reason


def test_a_semi_dark_move_is_allowed_when_only_dark_moves_are_banned() -> None:
    state = game(RANGE, [(1, 2), (2, 6)], dark_moves=False)
    play(state, 0, parse_command("go right, don't tell where I end up but tell me if I hit a wall"))


def test_repeating_a_move_known_to_change_nothing_under_7_7() -> None:
    state = game(RANGE, [(1, 3), (2, 6)], repeats=False)
    state, _ = play(state, 0, parse_command("go right"))  # hits the wall
    state, _ = play(state, 1, parse_command("go left"))
    with pytest.raises(RuleError) as caught:
        play(state, 0, parse_command("go right"))
    assert caught.value.code == "repeat"
    play(state, 0, parse_command("go up"))  # another move is fine
    # once the wall is gone (blown by someone), the same move changes something
    opened = msgspec.structs.replace(state, plan=state.plan.blow((1, 3), "right"))
    play(opened, 0, parse_command("go right"))
    # by default, and after a move that was heard to change something, a repeat is fine
    free = game(RANGE, [(1, 3), (2, 6)])
    free, _ = play(free, 0, parse_command("go right"))
    free, _ = play(free, 1, parse_command("go left"))
    play(free, 0, parse_command("go right"))
    walked = game(RANGE, [(1, 1), (2, 6)], repeats=False)
    walked, _ = play(walked, 0, parse_command("go right"))
    walked, _ = play(walked, 1, parse_command("go left"))
    play(walked, 0, parse_command("go right"))


def test_a_missed_move_loses_the_game_leaving_corpse_and_items() -> None:
    state = game(RANGE, [(1, 1), (2, 6), (1, 3)])
    state, events = miss_move(state, 0)
    assert told(events, None)[:2] == ["Player 1 did not move in time and has lost", "Player 2's turn"]
    assert not state.players[0].alive
    assert state.pile((1, 1)) == Pile(bullets=3, grenades=3, landmines=1, corpses=(0,))
    with pytest.raises(RuleError, match="player 2's turn"):
        miss_move(state, 0)
    state, events = miss_move(state, 1)
    assert state.outcome is not None and state.outcome.winner == 2


def test_a_missed_move_is_a_skip_under_the_option() -> None:
    state = game(RANGE, [(1, 1), (2, 6)], missed_move="skip")
    state, events = miss_move(state, 0)
    assert told(events, None)[0] == "Player 1 skips the move"
    assert state.players[0].alive and state.skips == 1


def test_breaks_one_each_until_half_the_players_have_had_one() -> None:
    state = game(RANGE, [(1, 1), (2, 6), (1, 3), (2, 1)])
    state, events = take_break(state, 0)
    assert told(events, None) == ["Player 1 takes a break of 300 seconds"]
    with pytest.raises(RuleError, match="had a break"):
        take_break(state, 0)
    with pytest.raises(RuleError, match="turn"):
        take_break(state, 1)
    state, _ = play(state, 0, parse_command("go right"))
    state, _ = take_break(state, 1)  # half of the four players have had one: all may again
    state, _ = play(state, 1, parse_command("go up"))
    state, _ = play(state, 2, parse_command("go up"))
    state, _ = play(state, 3, parse_command("go up"))
    take_break(state, 0)


def test_shallow_rivers_carry_only_whoever_steps_in_under_7_4() -> None:
    state = game(WATER, [(2, 2), (3, 1)], rivers="shallow")
    state, said = move(state, 0, "go up")  # stepping in: carried
    assert said[1:] == ["Walked into a river, carried by the flow"] and state.players[0].cell == (1, 3)
    state, said = move(state, 0, "go left")  # upstream on foot
    assert said[1:] == ["Walked by the river"] and state.players[0].cell == (1, 2)
    state, said = move(state, 0, "go right")  # downstream on foot
    assert said[1:] == ["Walked by the river"] and state.players[0].cell == (1, 3)
    state, said = move(state, 0, "go up")  # a wall: not carried
    assert said[1:] == ["Cannot move - hit a wall"] and state.players[0].cell == (1, 3)
    state, said = move(state, 0, "go right")
    assert said[1:] == ["Walked into a delta"] and state.players[0].cell == (1, 4)
    state, said = move(state, 0, "go left, don't tell where I end up but tell me if I hit a wall")
    assert "You've hit a wall." in said
    state, said = move(state, 0, "go left")
    assert said[1:] == ["Failed, a river is flowing this way"] and state.players[0].cell == (1, 4)


def test_turbulent_rivers_carry_to_the_delta_at_once_under_7_4() -> None:
    state = game(WATER, [(2, 2), (3, 1)], rivers="turbulent")
    state, said = move(state, 0, "go up")
    assert said[1:] == ["Walked into a river, carried by the flow to a delta"]
    assert state.players[0].cell == (1, 4)


def test_a_weaponry_gives_landmines_in_the_variation_of_4_3() -> None:
    for given in (False, True):
        state = game(RANGE, [(2, 3), (2, 6)], weaponry_landmines=given)
        state = changed(state, 0, carries=None)
        state, _ = move(state, 0, "go right")
        assert (state.players[0].carries == MineItem()) is given


def test_with_shallow_rivers_a_source_is_reached_on_foot_and_nothing_thrown_there_is_lost() -> None:
    state = game(WATER, [(2, 2), (3, 1)], rivers="shallow", landmines=False)
    state = msgspec.structs.replace(state, truth=(True,), piles={})
    state = changed(state, 0, cell=(1, 2), carries=TreasureItem(0))
    state, said = move(state, 0, "throw the treasure left, go left")
    assert state.outcome is None
    assert said[-2:] == ["Walked by the river", "found a treasure"] and state.players[0].cell == (1, 1)


def test_a_named_target_is_the_only_one_a_bullet_hits_under_7_3() -> None:
    state = game(RANGE, [(1, 1), (1, 2), (1, 3), (2, 6)], named_target=True, landmines=False)
    hit, said = move(state, 0, "shoot right at player 3 on 1,3, go down")
    assert "A scream is heard!" in said  # over player 2, into player 3
    assert [p.wounded for p in hit.players] == [False, False, True, False]
    missed, said = move(state, 0, "shoot right at player 3 on 1,2, go down")  # not where it is
    assert "No scream is heard" in said and not any(p.wounded for p in missed.players)
    with pytest.raises(RuleError, match="names its target"):
        play(state, 0, parse_command("shoot right, go down"))
    with pytest.raises(RuleError, match="not in the match"):
        play(state, 0, parse_command("shoot right at player 7 on 1,3, go down"))
    plain = game(RANGE, [(1, 1), (1, 2)])
    with pytest.raises(RuleError, match="name no target"):
        play(plain, 0, parse_command("shoot right at player 2 on 1,2, go down"))


def test_handicaps_of_7_2_cell_types_asked_before_the_start() -> None:
    options = configure({"handicaps": [{"player": 2, "cells": 2}]})
    state, _ = start_game(SECTION_A, 2, options, Rng(b"h", "order"))
    state = msgspec.structs.replace(state, order=(0, 1))
    with pytest.raises(RuleError, match="no cell types"):
        ask_cell(state, 0, (1, 1))
    state, events = ask_cell(state, 1, (3, 2))
    assert told(events, None) == ["Player 2 asked the type of a cell"]
    assert told(events, 1) == ["Player 2 asked the type of a cell", "Cell 3,2 is a hospital"]
    state, _ = ask_cell(state, 1, (4, 4))
    with pytest.raises(RuleError, match="no cell types"):
        ask_cell(state, 1, (1, 1))
    state, _ = choose_start(state, 0, (1, 1))
    with pytest.raises(RuleError, match="one of the cells asked"):
        choose_start(state, 1, (1, 2))
    state, _ = choose_start(state, 1, (4, 4))
    assert state.phase == "play"
    with pytest.raises(RuleError, match="before the start"):
        ask_cell(state, 1, (1, 1))


def test_handicaps_of_7_2_a_cell_order_without_a_wound_leaves_the_items_behind() -> None:
    state = game(RANGE, [(1, 1), (2, 6)], handicaps=[{"player": 1, "orders": 1}])
    state = msgspec.structs.replace(state, truth=(True,))
    state = changed(state, 0, carries=TreasureItem(0))
    with pytest.raises(RuleError, match="player 1's turn"):
        order_cell(state, 1, (2, 1))
    state, events = order_cell(state, 0, (2, 2))
    assert told(events, None) == ["Player 1 ordered a new cell"]
    assert state.players[0].cell == (2, 2) and state.players[0].carries is None
    assert state.players[0].bullets == 0 and state.players[0].grenades == 3
    assert state.pile((1, 1)) == Pile(bullets=3, treasures=(0,))
    with pytest.raises(RuleError, match="handicap"):
        order_cell(state, 0, (2, 3))  # none left


def test_handicaps_are_checked() -> None:
    with pytest.raises(OptionsError, match="handicaps"):
        configure({"handicaps": [{"player": 1, "cells": -1}]})
    with pytest.raises(OptionsError, match="handicaps"):
        configure({"handicaps": [{"player": 1}, {"player": 1}]})
    with pytest.raises(RuleError, match="not in the match"):
        start_game(SECTION_A, 2, configure({"handicaps": [{"player": 3, "cells": 1}]}), Rng(b"h", "order"))


def test_a_mite_woken_at_the_start_counts_from_its_wakers_turn() -> None:
    state, _ = start_game(WATER, 2, configure({}), Rng(b"m", "order"))
    state = msgspec.structs.replace(state, order=(0, 1))
    state, _ = choose_start(state, 0, (2, 2))
    state, events = choose_start(state, 1, (3, 3))
    assert "Arrived at the encephalitis cell, woke up the mite" in told(events, None)
    assert dict(state.mites)[(3, 3)] == (2, 1)  # the second round, at player 2's turn


def test_a_break_by_majority_vote_a_tie_granting_it() -> None:
    state = game(RANGE, [(1, 1), (2, 6), (1, 3), (2, 1)])
    with pytest.raises(RuleError, match="vote yes to propose"):
        vote_break(state, 1, False)
    state, events = vote_break(state, 1, True)
    assert told(events, None) == ["Player 2 proposes a break: vote yes or no"]
    with pytest.raises(RuleError, match="voted"):
        vote_break(state, 1, True)
    state, _ = vote_break(state, 0, False)
    state, _ = vote_break(state, 2, True)
    tie, events = vote_break(state, 3, False)
    assert told(events, None)[-1] == "The players agree: a break of 300 seconds" and tie.votes is None
    agreed, events = vote_break(state, 3, True)
    assert told(events, None)[-1] == "The players agree: a break of 300 seconds" and agreed.votes is None
    three = game(RANGE, [(1, 1), (2, 6), (1, 3)])
    three, _ = vote_break(three, 0, True)
    three, _ = vote_break(three, 1, False)
    three, events = vote_break(three, 2, False)
    assert told(events, None)[-1] == "The players do not agree: no break" and three.votes is None
