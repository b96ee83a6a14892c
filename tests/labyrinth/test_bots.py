"""The Labyrinth bots (clients/bots/labyrinth.py): seeded games between them end by the
rules, and the explorer's belief follows what it is told, from views written by hand."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clients import cli
from clients.bots import bot_factory, lineup, simulate
from clients.bots.labyrinth import (
    Belief,
    ExplorerBot,
    Knowledge,
    read_answer,
    treasures_in,
)
from domain.games.labyrinth import game, rules
from domain.games.labyrinth.moves import parse_command
from domain.games.labyrinth.rules import Event

ROOT = Path(__file__).resolve().parents[2]
RULE_ENDINGS = {game.REASONS[r] for r in ("treasure", "kill", "nstop", "skips")}


def play(players: int, seed: int, names: list[str]) -> Any:
    bots = [bot_factory("labyrinth", name)(random.Random(f"bots {seed} {s}")) for s, name in enumerate(names)]
    return simulate("labyrinth", bots, options={"players": players}, seed=seed.to_bytes(32, "big"))


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (2, 4), (3, 2), (3, 5), (5, 3)])
def test_default_line_up_games_end_by_the_rules(players: int, seed: int) -> None:
    names = lineup("labyrinth", players)
    assert names[0] == "explorer"
    sim = play(players, seed, names)
    assert sim.result is not None and sim.result.reason in RULE_ENDINGS
    assert sim.result.rounds <= 200
    explorers = {s for s, name in enumerate(names) if name == "explorer"}
    assert not [r for r in sim.rejections if r[1] in explorers]


@pytest.mark.parametrize(("players", "seed"), [(2, 7), (3, 8), (5, 9)])
def test_explorers_alone_end_by_the_rules(players: int, seed: int) -> None:
    sim = play(players, seed, ["explorer"] * players)
    assert sim.result is not None and sim.result.reason in RULE_ENDINGS
    assert sim.result.rounds <= 200
    assert not sim.rejections


def test_explorers_win_more_often_than_not() -> None:
    """Over a few seeded two-player games against the random bot, the explorer wins more
    games than the random bot does."""
    wins = {"explorer": 0, "random": 0}
    for seed in range(6):
        sim = play(2, 100 + seed, ["explorer", "random"])
        if sim.result.winner is not None:
            wins[["explorer", "random"][sim.result.winner]] += 1
    assert wins["explorer"] > wins["random"]


# --- the words, read back ----------------------------------------------------------------------


@pytest.mark.parametrize("event", [
    Event("land", 0), Event("river", 0), Event("river_delta", 0), Event("pit", 0),
    Event("wall", 0), Event("wall_river", 0), Event("out", 0), Event("returned", 0),
    Event("weaponry", 0, {"bullets": 3, "grenades": 2}), Event("mite_woken", 0),
    Event("found", 0, {"things": {"treasure": 2, "bullet": 1}}), Event("scream", 0),
    Event("shot", 0, {"direction": "up", "bullets": 2, "ground": 0}), Event("crumbled", 0),
    Event("flow_delta", 0), Event("loop", 0), Event("not_in_pit", 0),
])
def test_an_answer_is_read_back_as_its_phrase(event: Event) -> None:
    key, _ = read_answer(rules.say(event))
    assert key == event.key


def test_treasures_are_counted_in_what_was_found() -> None:
    assert treasures_in("a treasure, two bullets and a corpse") == 1
    assert treasures_in("two treasures and a landmine") == 2
    assert treasures_in("three bullets") == 0


# --- the belief, from views written by hand ------------------------------------------------------

SHAPE = [[r, c] for r in range(1, 5) for c in range(1, 5)]


def view(*, round_: int, moves: int, last: dict[str, Any] | None = None, told: list[dict[str, Any]] | None = None,
         others: list[dict[str, Any]] | None = None, options: dict[str, Any] | None = None,
         **me: Any) -> dict[str, Any]:
    """Seat 0's view of a four-by-four match with one other player, its turn."""
    mine = {"seat": 0, "bullets": 3, "grenades": 3, "carries": "landmine", "wounded": False, "infected": False,
            "heal_left": None, "immune": False, "alive": True, "lost": False, "outside": False,
            "may_order": False, "orders": 1, "extra_orders": 0, "asks": 0, "asked": [], "refused": [],
            "chosen": None,
            "told": told if told is not None else [{"key": "start_cell", "seat": 0, "args": {"cell": "2,2"}}]}
    mine.update(me)
    players = [{"seat": 0, "standing": "playing", "started_on": "land", "moves": moves, "last_move": last}]
    players += others or [{"seat": 1, "standing": "playing", "started_on": "land", "moves": 0, "last_move": None}]
    gs = {"phase": "play", "round": round_, "order": [0, 1], "to_act": 0, "shape": SHAPE, "rows": 4,
          "columns": 4, "players": players, "me": mine}
    return {"you": 0, "started": True, "ended": False, "options": options or {}, "game_state": gs}


def go_of(commands: list[dict[str, Any]]) -> str:
    moves = [c for c in commands if c["type"] == "move"]
    assert len(moves) == 1
    command = parse_command(moves[0]["move"])
    assert command.go is not None
    return command.go


def test_the_start_cell_and_its_type_are_known() -> None:
    bot = ExplorerBot(random.Random(1))
    commands = bot.act(view(round_=1, moves=0))
    assert go_of(commands) in ("up", "right", "down", "left")
    assert bot.know is not None and bot.me is not None
    assert bot.me.weights == {(2, 2): 1.0}
    assert bot.know.types[(2, 2)] == "land"
    assert bot.act(view(round_=1, moves=0)) == []  # the same turn: nothing more


def test_under_a_common_start_everyone_is_where_the_explorer_is() -> None:
    """Option 7.6: no start cell chosen, only its type told; every player stands there."""
    bot = ExplorerBot(random.Random(2))
    others = [{"seat": 1, "standing": "playing", "started_on": "a hospital", "moves": 0, "last_move": None}]
    bot.act(view(round_=1, moves=0, told=[], others=others, options={"common_start": True}))
    assert bot.know is not None and bot.me is not None
    assert len(bot.me.weights) == 16  # nothing known yet: any cell may be a hospital
    assert bot.others[1].weights == bot.me.weights


def test_a_wall_hit_is_remembered_and_not_hit_again() -> None:
    for seed in range(8):
        bot = ExplorerBot(random.Random(seed))
        first = go_of(bot.act(view(round_=1, moves=0)))
        text = f"go {first}"
        second = go_of(bot.act(view(round_=2, moves=1, last={"move": text, "answers": ["Cannot move - hit a wall"]})))
        assert bot.know is not None
        assert bot.know.sides[((2, 2), first)] == "wall"
        assert second != first
        assert bot.me is not None and bot.me.weights == {(2, 2): 1.0}


def test_walking_onto_a_cell_learns_the_passage_and_the_type() -> None:
    bot = ExplorerBot(random.Random(3))
    first = go_of(bot.act(view(round_=1, moves=0)))
    bot.act(view(round_=2, moves=1, last={"move": f"go {first}", "answers": ["Walked into a hospital"]}))
    target = {"up": (1, 2), "right": (2, 3), "down": (3, 2), "left": (2, 1)}[first]
    assert bot.know is not None and bot.me is not None
    assert bot.me.weights == {target: 1.0}
    assert bot.know.types[target] == "hospital"
    assert bot.know.sides[((2, 2), first)] == "open"


def test_a_pit_leaves_the_explorer_unsure_among_the_cells_that_may_be_pits() -> None:
    bot = ExplorerBot(random.Random(4))
    first = go_of(bot.act(view(round_=1, moves=0)))
    pit = {"up": (1, 2), "right": (2, 3), "down": (3, 2), "left": (2, 1)}[first]
    bot.act(view(round_=2, moves=1, last={"move": f"go {first}", "answers": ["Walked into a pit"]}))
    assert bot.know is not None and bot.me is not None
    assert bot.know.types[pit] == "pit"
    assert pit not in bot.me.weights and (2, 2) not in bot.me.weights  # the start is land
    assert len(bot.me.weights) == 14
    assert abs(sum(bot.me.weights.values()) - 1) < 1e-9


def test_a_river_carries_the_explorer_next_to_the_river_cell() -> None:
    know = Knowledge(SHAPE)
    know.types[(2, 2)] = "land"
    belief = Belief.at((2, 2))
    assert belief.update(know, "right", ["river"], keep_facts=True)
    # carried from 2,3 into one of its neighbours (2,2 is land, so not back upstream)
    assert set(belief.weights) == {(1, 3), (3, 3), (2, 4)}
    for cell, _, facts in belief.particles:
        assert (("f", (2, 3)), cell) in facts and (("t", cell), "river") in facts
    assert (("t", (2, 3)), "river") in belief.common()


def test_an_immune_player_hears_land_on_an_encephalitis_cell() -> None:
    know = Knowledge(SHAPE)
    know.types[(2, 3)] = "encephalitis"
    know.set_side((2, 2), "right", "open")
    belief = Belief.at((2, 2))
    assert not belief.update(know, "right", ["land"], keep_facts=True)
    assert belief.update(know, "right", ["land"], keep_facts=True, immune=True)
    assert belief.weights == {(2, 3): 1.0}


def test_answers_that_fit_no_candidate_are_refused() -> None:
    know = Knowledge(SHAPE)
    know.types[(2, 3)] = "land"
    know.set_side((2, 2), "right", "open")
    belief = Belief.at((2, 2))
    assert not belief.update(know, "right", ["wall"], keep_facts=True)
    assert not belief.update(know, "right", ["hospital"], keep_facts=True)
    assert belief.weights == {(2, 2): 1.0}
    assert belief.update(know, "right", ["land"], keep_facts=True)
    assert belief.weights == {(2, 3): 1.0}


def test_another_players_moves_narrow_where_it_may_be() -> None:
    bot = ExplorerBot(random.Random(5))
    bot.act(view(round_=1, moves=0))
    assert bot.know is not None
    # everything known: a corridor of land along row 1, walls everywhere else
    for r, c in bot.know.cells:
        bot.know.types[(r, c)] = "land"
        for d, (dr, dc) in (("up", (-1, 0)), ("right", (0, 1)), ("down", (1, 0)), ("left", (0, -1))):
            inside = (r + dr, c + dc) in bot.know.cells
            bot.know.sides[((r, c), d)] = "open" if inside and r == 1 and dr == 0 else "wall"
    bot.know.sides[((1, 4), "right")] = "exit"
    bot.others[1] = Belief.anywhere(bot.know, "land")
    other = {"seat": 1, "standing": "playing", "started_on": "land", "moves": 1,
             "last_move": {"move": "go right", "answers": ["Walked onto land"]}}
    bot.act(view(round_=2, moves=0, others=[other]))
    assert set(bot.others[1].weights) == {(1, 2), (1, 3), (1, 4)}
    other = {**other, "moves": 2, "last_move": {"move": "go right", "answers": ["Walked out of the labyrinth",
                                                                               "Return to the labyrinth with the next move"]}}
    bot.act(view(round_=3, moves=0, others=[other]))
    assert bot.others[1].weights == {(1, 4): 1.0}
    assert bot.rumours[((1, 4), "right")] == 1.0  # an exit a treasure carrier will try


def test_a_scream_makes_the_others_suspected_of_a_new_cell() -> None:
    """A scream in another player's answers: every third player may have been wounded and
    order a new cell, so its next move is read from anywhere as well as from where it was."""
    bot = ExplorerBot(random.Random(9))
    quiet = {"seat": 2, "standing": "playing", "started_on": "land", "moves": 0, "last_move": None}
    shooter = {"seat": 1, "standing": "playing", "started_on": "land", "moves": 0, "last_move": None}
    bot.act(view(round_=1, moves=0, others=[shooter, quiet]))
    bot.others[2] = Belief.at((4, 4))
    shooter = {**shooter, "moves": 1, "last_move": {"move": "shoot up, go left", "answers": [
        "shoot up - two bullets left, none on the ground", "A scream is heard!", "Walked onto land"]}}
    bot.act(view(round_=2, moves=0, others=[shooter, quiet]))
    assert bot.suspects == {2}
    quiet = {**quiet, "moves": 1, "last_move": {"move": "go up", "answers": ["Walked into a hospital"]}}
    bot.act(view(round_=3, moves=0, others=[shooter, quiet]))
    assert bot.suspects == set()
    assert (3, 4) in bot.others[2].weights and len(bot.others[2].weights) > 1


def test_it_shoots_along_a_line_where_another_player_likely_stands() -> None:
    bot = ExplorerBot(random.Random(6))
    bot.act(view(round_=1, moves=0))
    assert bot.know is not None
    bot.know.set_side((2, 2), "right", "open")
    bot.know.types[(2, 3)] = "land"
    bot.others[1] = Belief({(2, 3): 0.9, (4, 4): 0.1})
    commands = bot.act(view(round_=2, moves=0))
    move = next(c["move"] for c in commands if c["type"] == "move")
    assert move.startswith("shoot right, ")
    # no scream: the other player was not there after all
    bot.act(view(round_=3, moves=1, last={"move": move, "answers": [
        "shoot right - two bullets left, none on the ground", "No scream is heard", "Walked onto land"]}))
    assert bot.others[1].weights.get((2, 3), 0.0) < 0.5


def test_under_option_named_target_a_shot_names_the_player_and_its_cell() -> None:
    bot = ExplorerBot(random.Random(6))
    bot.act(view(round_=1, moves=0, options={"named_target": True}))
    assert bot.know is not None
    bot.know.set_side((2, 2), "right", "open")
    bot.know.types[(2, 3)] = "land"
    bot.others[1] = Belief({(2, 3): 0.9, (4, 4): 0.1})
    commands = bot.act(view(round_=2, moves=0, options={"named_target": True}))
    move = next(c["move"] for c in commands if c["type"] == "move")
    assert move.startswith("shoot right at player 2 on 2,3, ")
    parse_command(move)


def test_shallow_rivers_are_walked_on_foot() -> None:
    know = Knowledge(SHAPE)
    know.rivers = "shallow"
    know.types[(2, 2)] = "river"
    belief = Belief.at((2, 2))
    assert belief.update(know, "up", ["wall"], keep_facts=True)  # not carried (7.4)
    assert belief.weights == {(2, 2): 1.0}
    assert belief.update(know, "right", ["by_river"], keep_facts=True)
    assert belief.weights == {(2, 3): 1.0}
    assert (("t", (2, 3)), "river") in belief.common()


def test_a_refused_move_is_not_sent_again() -> None:
    """A move the rules refuse (a repeat option 7.7 forbids) is replaced by another."""
    for seed in range(6):
        bot = ExplorerBot(random.Random(seed))
        [command] = bot.act(view(round_=1, moves=0))
        bot.feedback(command, False, (), "repeat")
        [again] = bot.act(view(round_=1, moves=0))
        assert go_of([again]) != go_of([command])


def test_a_wounded_explorer_orders_a_cell_next_to_a_hospital() -> None:
    bot = ExplorerBot(random.Random(7))
    bot.act(view(round_=1, moves=0))
    assert bot.know is not None
    bot.know.types[(4, 4)] = "hospital"
    bot.know.types[(4, 3)] = "land"
    bot.know.set_side((4, 3), "right", "open")
    commands = bot.act(view(round_=2, moves=0, wounded=True, may_order=True, carries=None, bullets=0))
    assert commands[0] == {"type": "order", "cell": [4, 3]}
    assert go_of(commands) == "right"  # into the hospital


def test_out_with_a_fake_treasure_it_comes_back_the_way_it_left() -> None:
    bot = ExplorerBot(random.Random(8))
    bot.act(view(round_=1, moves=0))
    assert bot.know is not None
    bot.know.set_side((2, 2), "left", "open")
    bot.know.types[(2, 1)] = "land"
    bot.know.set_side((2, 1), "left", "exit")
    commands = bot.act(view(round_=2, moves=0, carries="treasure"))
    assert go_of(commands) == "left"
    commands = bot.act(view(round_=3, moves=1, carries="treasure", last={"move": "go left", "answers": ["Walked onto land"]}))
    assert go_of(commands) == "left"
    commands = bot.act(view(round_=4, moves=2, carries=None, outside=True, last={"move": "go left", "answers": [
        "Walked out of the labyrinth", "The treasure crumbled to ashes; return to the labyrinth with the next move"]}))
    assert go_of(commands) == "right"


def test_bots_command_plays_five_players_through_the_embedded_server(tmp_path: Path) -> None:
    """`daedalus bots labyrinth --players 5` over websockets: the match has five seats (the
    receipts the server signed name them), it ends, and its log verifies."""
    receipts = tmp_path / "receipts.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "clients.cli", "bots", "labyrinth", "--players", "5", "--matches", "1",
         "--clock-scale", "0.01", "--verify", "--seed", "3", "--receipts", str(receipts)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"match \w+ winner=([0-4]|draw) rounds=\d+\n", done.stdout), done.stdout
    seats = {json.loads(line).get("seat") for line in receipts.read_text().splitlines()}
    assert seats - {None} == {0, 1, 2, 3, 4}


def test_bots_players_flag_needs_a_game_with_that_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["bots", "escalator", "--players", "3"]) == 2
    assert "escalator has no option 'players'" in capsys.readouterr().err
