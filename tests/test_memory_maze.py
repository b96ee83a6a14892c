"""Memory Maze: every testable rule sentence of the three editions, the clocks, host
mazes, the views (history deleted or kept, nothing of the walls before the end), the
replay drawing and bot matches."""

from __future__ import annotations

import io
import json
import random
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clients.bots import BOTS, TERMINALS, simulate
from clients.bots import memory_maze as mm_bots
from clients.cli import print_replay, print_verify
from domain import engine
from domain.contract import OptionsError
from domain.games import memory_maze as mm
from domain.games.memory_maze import (
    CooldownOver,
    GameOver,
    Moved,
    PeriodSpent,
    TurnStarted,
)
from domain.games.memory_maze.maze import (
    Maze,
    MazeError,
    colored_form,
    corners,
    generate,
    interior_edges,
    mirror_cell,
    mirror_edge,
    parse,
    path_edges,
    reachable,
    render,
    start_of,
    trace,
)
from domain.games.memory_maze.moves import MoveError, parse_moves
from domain.rng import Rng
from projections import memory_maze as views
from projections.common import match_view, project_events
from projections.contract import AUDITOR, SPECTATOR, Viewer
from projections.registry import hosted, rules_by_name
from tests.mm_helpers import T0, MmMatch, cell, drawing, edge, maze

VARIANTS = ("black-garnet", "minos", "crazy")
OPEN = {v: maze(v) for v in VARIANTS}  # no inner walls at all


def events_of(out: Any, kind: type) -> list[Any]:
    return [e for e in out.events if isinstance(e, kind)]


# --- identity and options --------------------------------------------------------------


def test_module_identity_and_registry() -> None:
    assert mm.name == "memory-maze" and mm.rules_version == "mm-1"
    assert [v.name for v in mm.variants] == ["black-garnet", "minos", "crazy"]
    assert mm.default_variant == "black-garnet"
    assert rules_by_name()["memory-maze"] is mm
    assert hosted("memory-maze").views is views
    assert set(BOTS["memory-maze"]) >= {"random", "explorer", "heuristic"}
    assert "memory-maze" in TERMINALS


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ("black-garnet", {"max_moves": 100, "periods": 5, "period_seconds": 60, "first_seat": 0}),
        ("minos", {"max_moves": 10, "move_seconds": 60, "reserve_seconds": 300, "first_seat": 0}),
        ("crazy", {"max_moves": 1000, "cooldown_success_seconds": 25,
                   "cooldown_bonk_seconds": 35, "colored_pairs": 3, "first_seat": None}),
    ],
)
def test_defaults_per_edition(variant: str, expected: dict[str, Any]) -> None:
    opts = mm.configure(variant, {})
    for key, value in expected.items():
        assert getattr(opts, key) == value, key
    assert opts.bottom_left_seat == 0 and opts.clock_scale == 1.0 and opts.maze is None
    schema = mm.options_schema(variant)
    for key, value in expected.items():
        if value is not None:
            assert schema[key]["default"] == value
    assert "maze" in schema and all("description" in e for e in schema.values())


def test_clock_values_in_ms_and_the_clock_scale() -> None:
    bg = mm.configure("black-garnet", {})
    assert mm.period_ms(bg) == 60_000
    minos = mm.configure("minos", {"clock_scale": 0.01})
    assert (mm.move_ms(minos), mm.reserve_ms(minos)) == (600, 3_000)
    crazy = mm.configure("crazy", {"clock_scale": 0.01})
    assert (mm.cooldown_ms(crazy, bonked=False), mm.cooldown_ms(crazy, bonked=True)) == (250, 350)
    tiny = mm.configure("black-garnet", {"clock_scale": 1e-9})
    assert mm.period_ms(tiny) == 1


@pytest.mark.parametrize(
    ("variant", "options", "named"),
    [
        ("black-garnet", {"bogus": 1}, "bogus"),
        ("black-garnet", {"clock_scale": 0}, "clock_scale"),
        ("black-garnet", {"clock_scale": "fast"}, "clock_scale"),
        ("black-garnet", {"periods": -1}, "periods"),
        ("black-garnet", {"period_seconds": 0}, "period_seconds"),
        ("black-garnet", {"max_moves": 0}, "max_moves"),
        ("black-garnet", {"first_seat": 2}, "first_seat"),
        ("black-garnet", {"bottom_left_seat": True}, "bottom_left_seat"),
        ("black-garnet", {"reserve_seconds": 10}, "reserve_seconds"),
        ("black-garnet", {"cooldown_bonk_seconds": 10}, "cooldown_bonk_seconds"),
        ("minos", {"periods": 3}, "periods"),
        ("crazy", {"first_seat": 1}, "first_seat"),
        ("crazy", {"colored_pairs": 99}, "colored_pairs"),
        ("black-garnet", {"variant": "minos"}, "variant"),
        ("black-garnet", {"maze": 7}, "maze"),
    ],
)
def test_bad_options_name_the_option(variant: str, options: dict[str, Any], named: str) -> None:
    with pytest.raises(OptionsError, match=named):
        mm.configure(variant, options)


def test_options_round_trip_through_the_create_entry() -> None:
    m = MmMatch("minos", clock_scale=0.5, first_seat=1, bottom_left_seat=1, reserve_seconds=100)
    again = engine.fold(mm, m.entries)
    assert again.options == m.ms.options
    assert m.gs.seats[1].letter == "A" and m.gs.seats[1].start == (0, 0)
    assert m.gs.seats[0].letter == "B" and m.gs.seats[0].start == (7, 7)
    assert m.gs.to_move == 1 and m.gs.seats[1].reserve == 50_000


# --- mazes from the seed ---------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("seed", [b"\0" * 32, b"\7" * 32, bytes(range(32))])
def test_generated_mazes_are_symmetric_and_fully_reachable(variant: str, seed: bytes) -> None:
    opts = mm.configure(variant, {})
    setup = mm.make_setup(opts, Rng(seed, "setup"))
    assert setup["source"] == "seed" and setup["size"] == mm.SIZE[variant]
    m = mm.maze_of(setup, variant)  # parsing re-validates symmetry and corners
    n, axis = m.size, m.axis
    assert axis == ("falling" if variant == "crazy" else "rising")
    for e in interior_edges(n):
        assert (e in m.walls) == (mirror_edge(e, n, axis) in m.walls)
    for letter in "AB":
        assert len(reachable(n, m.blocked_for(letter), start_of(letter, n))) == n * n
    if variant == "crazy":
        assert len(m.colored_a) == len(m.colored_b) == 3
        assert {mirror_edge(e, n, axis) for e in m.colored_a} == set(m.colored_b)
        assert not (m.colored_a | m.colored_b) & m.walls
    else:
        assert not m.colored_a and not m.colored_b
    assert 0 < len(m.walls) < len(interior_edges(n))
    # The same seed draws the same maze; another seed another one.
    assert mm.make_setup(opts, Rng(seed, "setup")) == setup
    assert mm.make_setup(opts, Rng(seed + b"x", "setup")) != setup


def test_the_diagonals() -> None:
    # 8x8: each start is its own mirror image, the two far corners swap.
    assert mirror_cell((0, 0), 8, "rising") == (0, 0)
    assert mirror_cell((7, 7), 8, "rising") == (7, 7)
    assert mirror_cell((0, 7), 8, "rising") == (7, 0)
    # crazy: one start onto the other.
    assert mirror_cell((0, 0), 10, "falling") == (9, 9)
    assert mirror_cell((0, 9), 10, "falling") == (0, 9)
    assert mirror_cell((9, 0), 10, "falling") == (9, 0)


def test_the_maze_is_in_the_committed_setup_and_revealed_at_the_end() -> None:
    m = MmMatch("black-garnet", maze=OPEN["black-garnet"])
    body = m.entries[0].body
    assert body["setup"]["drawing"] == render(OPEN["black-garnet"])
    assert engine.commitment_of(body["seed"], body["setup"]) == body["commitment"]
    out = m.move(0, "U" * 7 + "R" * 7 + "D" * 7 + "L" * 7)
    revealed = [e for e in out.events if isinstance(e, engine.Revealed)]
    assert revealed and revealed[0].setup == body["setup"]


# --- host mazes ------------------------------------------------------------------------


def test_a_host_maze_is_used_validated_and_kept_secret() -> None:
    walls = maze("black-garnet", [("a2", "a3"), ("c4", "d4")])
    m = MmMatch("black-garnet", maze=walls)
    assert m.gs.maze == walls
    body = m.entries[0].body
    assert body["options"]["maze"] is None  # not among the options everyone sees
    assert body["setup"]["source"] == "host" and body["setup"]["drawing"] == render(walls)
    view = match_view(views, m.ms, Viewer(seat=0))
    assert view["options"]["maze"] is None and view["game_state"]["maze"] is None
    assert "setup" not in view
    # The drawing may also come as a list of lines, with a margin and trailing blanks.
    lines = ["   " + line + "  " for line in render(walls)]
    assert mm.make_setup(mm.configure("black-garnet", {"maze": lines}), Rng(b"")) == body["setup"]


def _bad(drawing_lines: list[str], variant: str = "black-garnet") -> str:
    with pytest.raises(OptionsError) as info:
        mm.configure(variant, {"maze": "\n".join(drawing_lines)})
    return str(info.value)


def _set(lines: list[str], line: int, col: int, char: str) -> list[str]:
    out = [row.ljust(17) for row in lines]
    out[line] = out[line][:col] + char + out[line][col + 1 :]
    return out


def test_host_maze_errors_name_the_place() -> None:
    good = render(OPEN["black-garnet"])
    assert "16 lines" in _bad(good[:-1]) and "17 lines" in _bad(good[:-1])
    assert "line 3 of the drawing is 19 characters" in _bad([*good[:2], good[2] + " x", *good[3:]])
    assert "expected '+'" in _bad(_set(good, 2, 2, " "))
    assert "outer wall above c8" in _bad(_set(good, 0, 5, " "))
    assert "outer wall left of a1" in _bad(_set(good, 15, 0, " "))
    # A stray character on an inner border: named by the cells it separates.
    assert "the wall between c4 and d4" in _bad(_set(good, 9, 6, "#"))
    # A wall without its mirror image: both walls are named.
    one_sided = render(maze("black-garnet", [("c4", "d4")], mirrored=False))
    message = _bad(one_sided)
    assert "not symmetric across the bottom-left/top-right diagonal" in message
    assert "between c4 and d4" in message and "between d3 and d4" in message
    # 8x8 editions have no colored walls.
    assert "use ' ' (open) or '|'" in _bad(_set(good, 9, 6, "a"))
    # A sealed corner (walls around h1, and so around its mirror image a8).
    sealed = render(maze("black-garnet", [("g1", "h1"), ("h1", "h2")]))
    assert "corner a8 cannot be reached from a1" in _bad(sealed)


def test_host_maze_may_seal_a_region_but_not_a_corner() -> None:
    # d5 walled in on all four sides (and so its mirror image e4).
    box = [("d5", "c5"), ("d5", "e5"), ("d5", "d6"), ("d5", "d4")]
    m = maze("black-garnet", box)
    assert len(reachable(8, m.walls, (0, 0))) == 62
    match = MmMatch("black-garnet", maze=m)
    assert match.gs.maze == m


def test_crazy_host_maze_colored_walls() -> None:
    colored = maze("crazy", colored_a=[("b1", "b2")])
    assert parse(render(colored), 10, "falling", colored=True) == colored
    assert colored_form(colored) == "swap"
    lines = render(colored)
    assert any("a" in line for line in lines) and any("b" in line for line in lines)
    # Two 'a' walls, one the mirror image of the other: the historical tournament form, in
    # which a colored wall keeps its owner under the mirror. Not the swapped form.
    kept = [line.replace("b", "a") for line in lines]
    with pytest.raises(MazeError, match="colored wall of B"):
        parse(kept, 10, "falling", colored=True, colors="swap")
    as_kept = parse(kept, 10, "falling", colored=True)
    assert colored_form(as_kept) == "keep" and as_kept.colored_b == frozenset()
    assert len(as_kept.colored_a) == 2
    with pytest.raises(MazeError, match="colored wall of A"):
        parse(lines, 10, "falling", colored=True, colors="keep")


def _kept_maze() -> Maze:
    """A crazy maze in the kept form: a pair of A's walls and a pair of B's."""
    n, axis = mm.SIZE["crazy"], mm.AXIS["crazy"]
    a = edge("b1", "b2", n)
    b = edge("e5", "e6", n)
    return Maze(
        size=n, axis=axis, walls=frozenset(),
        colored_a=frozenset({a, mirror_edge(a, n, axis)}),
        colored_b=frozenset({b, mirror_edge(b, n, axis)}),
    )


def test_a_host_maze_in_either_form_is_accepted_and_its_form_is_public() -> None:
    kept, swapped = drawing(_kept_maze()), drawing(maze("crazy", colored_a=[("b1", "b2")]))
    assert mm.configure("crazy", {"maze": kept}).colored_symmetry == "keep"
    assert mm.configure("crazy", {"maze": swapped}).colored_symmetry == "swap"
    assert mm.configure("crazy", {}).colored_symmetry == "swap"
    assert mm.configure("black-garnet", {}).colored_symmetry is None
    with pytest.raises(OptionsError, match=r"option 'maze' is not drawn in the form option 'colored_symmetry' asks for \('swap'\): .*mirrors onto one of the other"):
        mm.configure("crazy", {"maze": kept, "colored_symmetry": "swap"})
    with pytest.raises(OptionsError, match="colored_symmetry"):
        mm.configure("crazy", {"colored_symmetry": "mirror"})
    with pytest.raises(OptionsError, match="colored_symmetry"):
        mm.configure("minos", {"colored_symmetry": "keep"})
    m = MmMatch("crazy", maze=_kept_maze())
    body = m.entries[0].body
    assert body["options"]["colored_symmetry"] == "keep" and body["options"]["maze"] is None
    assert body["setup"]["source"] == "host"
    assert match_view(views, m.ms, Viewer(seat=0))["options"]["colored_symmetry"] == "keep"
    assert engine.fold(mm, m.entries).options == m.ms.options
    assert engine.verify(rules_by_name(), m.entries).ok


def test_a_generated_maze_may_keep_colored_walls_under_the_mirror() -> None:
    for seed in range(5):
        kept = generate(10, "falling", Rng(bytes([seed])), colored_pairs=3, colors="keep")
        assert colored_form(kept) == "keep" and kept.colored_a and kept.colored_b
        assert parse(render(kept), 10, "falling", colored=True, colors="keep") == kept
    m = MmMatch("crazy", colored_symmetry="keep")
    assert m.entries[0].body["options"]["colored_symmetry"] == "keep"
    assert colored_form(m.gs.maze) == "keep"
    assert engine.verify(rules_by_name(), m.entries).ok


def test_a_symmetry_error_names_the_line_and_column_of_both_walls() -> None:
    n = 8
    m = maze("black-garnet", walls=[("c4", "d4")], mirrored=False)
    with pytest.raises(MazeError) as info:
        parse(render(m), n, "rising", colored=False)
    text = str(info.value)
    assert "between d3 and d4 (line 11, column 8) there is no wall" in text, text
    assert "between c4 and d4 (line 10, column 7, its mirror image) there is a wall" in text, text


# --- moves -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "moves"),
    [
        ("", ""),
        ("   ", ""),
        ("UURDL", "UURDL"),
        ("u u r d l", "UURDL"),
        ("uU rD", "UURD"),
        ("up up right", "UUR"),
        ("Up DOWN left Right", "UDLR"),
        ("north north east", "UUR"),
        ("NNE", "UUR"),
        ("n s w e", "UDLR"),
        ("up, up, right", "UUR"),
    ],
)
def test_moves_are_read_in_every_style(text: str, moves: str) -> None:
    assert parse_moves(text) == moves


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("up U", "don't mix styles"),
        ("U up", "the letters U/D/L/R"),
        ("up north", "the words north/south/west/east"),
        ("N U", "don't mix"),
        ("UN", "mixes the letters"),
        ("upp", "not a move"),
        ("jump", "not a move"),
        ("U2", "not a move"),
    ],
)
def test_bad_moves_are_refused_with_a_reason(text: str, message: str) -> None:
    with pytest.raises(MoveError, match=message):
        parse_moves(text)


def test_the_game_reads_moves_the_same_way() -> None:
    m = MmMatch("black-garnet", maze=OPEN["black-garnet"])
    out = m.move(0, "north EAST")
    assert out.rejection is None
    assert events_of(out, Moved)[0].moves == "UR" and m.gs.seats[0].pos == (1, 1)
    bad = m.move(1, "down L")
    assert bad.rejection is not None and bad.rejection.code == "bad_moves"
    assert "don't mix styles" in bad.rejection.reason
    # A refused submission costs nothing: the first legal one is the turn.
    assert m.gs.to_move == 1 and m.ok(1, "down left").moves == "DL"
    assert m.gs.to_move == 0


# --- turns -----------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["black-garnet", "minos"])
def test_players_alternate_turns(variant: str) -> None:
    m = MmMatch(variant, maze=OPEN[variant])
    assert (m.gs.turn, m.gs.to_move) == (1, 0)
    assert m.move(1, "D").rejection.code == "not_your_turn"  # type: ignore[union-attr]
    assert m.move(0, "U", turn=None).rejection.code == "wrong_turn"  # type: ignore[union-attr]
    assert m.move(0, "U", turn=2).rejection.code == "wrong_turn"  # type: ignore[union-attr]
    m.ok(0, "U")
    assert (m.gs.turn, m.gs.to_move) == (2, 1)
    stale = m.move(0, "U", turn=1)
    assert stale.rejection is not None and stale.rejection.code == "not_your_turn"
    m.ok(1, "D")
    assert (m.gs.turn, m.gs.to_move) == (3, 0)
    late = m.move(1, "D", turn=2)
    assert late.rejection is not None


def test_who_starts_and_where_are_options() -> None:
    m = MmMatch("black-garnet", maze=OPEN["black-garnet"], first_seat=1, bottom_left_seat=1)
    assert m.gs.to_move == 1
    assert m.gs.seats[1].pos == (0, 0) and m.gs.seats[0].pos == (7, 7)
    assert m.gs.seats[0].targets == ((0, 0), (0, 7), (7, 0))


def test_a_pass_is_zero_moves() -> None:
    m = MmMatch("minos", maze=OPEN["minos"])
    moved = m.ok(0, "")
    assert moved.moves == "" and not moved.bonked and m.gs.seats[0].pos == (0, 0)
    assert m.gs.to_move == 1


@pytest.mark.parametrize(("variant", "limit"), [("black-garnet", 100), ("minos", 10)])
def test_moves_per_turn(variant: str, limit: int) -> None:
    m = MmMatch(variant, maze=OPEN[variant])
    too_many = m.move(0, "UD" * (limit // 2) + "U")
    assert too_many.rejection is not None and too_many.rejection.code == "too_many_moves"
    assert f"at most {limit}" in too_many.rejection.reason
    assert m.ok(0, "UD" * (limit // 2)).moves == "UD" * (limit // 2)


def test_crazy_takes_long_strings_up_to_its_cap() -> None:
    m = MmMatch("crazy", maze=OPEN["crazy"], max_moves=400)
    assert m.ok(0, "UD" * 200).moves == "UD" * 200
    assert m.move(1, "UD" * 200 + "U").rejection.code == "too_many_moves"  # type: ignore[union-attr]


# --- moving and bonking ----------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_success_moves_and_a_bonk_returns_to_where_the_attempt_began(variant: str) -> None:
    m = MmMatch(variant, maze=maze(variant, [("b2", "b3")]))
    first = m.ok(0, "RU")
    assert (first.to_cell, first.bonked) == (cell("b2"), False)
    assert m.gs.seats[0].pos == cell("b2")
    if variant == "crazy":
        m.tick(m.ts + 25_000)
    else:
        m.ok(1, "")
    # Left, right, then up into the wall b2|b3: back to b2, where the attempt began.
    bonk = m.ok(0, "LRU")
    assert bonk.bonked and bonk.bonk_index == 2
    assert bonk.to_cell == cell("b2") and m.gs.seats[0].pos == cell("b2")
    assert bonk.collected == ()


def test_the_bonk_index_and_a_step_off_the_board() -> None:
    m = MmMatch("black-garnet", maze=maze("black-garnet", [("a2", "a3")]))
    bonk = m.ok(0, "UUR")
    assert bonk.bonked and bonk.bonk_index == 1 and m.gs.seats[0].pos == (0, 0)
    m.ok(1, "")
    off = m.ok(0, "RLD")  # down from a1: off the board
    assert off.bonked and off.bonk_index == 2 and m.gs.seats[0].pos == (0, 0)


def test_crazy_colored_walls_let_only_their_owner_through() -> None:
    # A's colored wall between a1 and a2; its mirror (B's) between j9 and j10... the
    # mirror of a1|a2 across the top-left/bottom-right diagonal is i10|j10.
    m = MmMatch("crazy", maze=maze("crazy", colored_a=[("a1", "a2")]))
    assert m.ok(0, "U").to_cell == cell("a2")  # A passes its own wall
    b_own = m.ok(1, "L")  # B passes its own wall j10 -> i10
    assert b_own.to_cell == cell("i10")
    m.tick(m.ts + 25_000)
    back = m.ok(1, "R")  # and back
    assert back.to_cell == cell("j10")
    # Now put B next to A's wall: B bonks on it.
    m2 = MmMatch("crazy", maze=maze("crazy", colored_a=[("b1", "b2")]), bottom_left_seat=1)
    # seat 1 is A now; seat 0 is B. B walks to b2 and tries down through A's wall.
    path = "D" * 8 + "L" * 8  # j10 -> j2 -> b2
    assert m2.ok(0, path).to_cell == cell("b2")
    m2.tick(m2.ts + 25_000)
    assert m2.ok(0, "D").bonked
    # A walks through it from b1 upwards.
    assert m2.ok(1, "RU").to_cell == cell("b2")


# --- corners, keys and the win ---------------------------------------------------------


def test_black_garnet_corners_count_when_passed_and_the_win() -> None:
    m = MmMatch("black-garnet", maze=OPEN["black-garnet"])
    up = m.ok(0, "U" * 7 + "D")  # passes a8, ends on a7
    assert up.collected == (cell("a8"),) and m.gs.seats[0].visited == ((0, 7),)
    m.ok(1, "")
    # Passing the start before all corners are visited does not win.
    m.ok(0, "D" * 6 + "U")
    assert m.gs.finished is None
    m.ok(1, "")
    # a2 -> up to a8, across to h8 (B's start is a corner too), down to h1, back to a1.
    out = m.move(0, "U" * 6 + "R" * 7 + "D" * 7 + "L" * 7)
    over = events_of(out, GameOver)
    assert over and over[0].winner == 0 and over[0].collected == (3, 0)
    assert m.ms.ended and m.ms.result is not None and m.ms.result.winner == 0
    assert m.ms.result.rounds == 5


def test_black_garnet_wins_when_the_start_is_passed_after_the_last_corner() -> None:
    m = MmMatch("black-garnet", maze=OPEN["black-garnet"])
    # All three corners, then through a1 and on to b1: the player returned, so it wins.
    out = m.move(0, "U" * 7 + "R" * 7 + "D" * 7 + "L" * 7 + "R")
    assert events_of(out, GameOver)[0].winner == 0


def test_the_win_needs_every_corner() -> None:
    m = MmMatch("black-garnet", maze=OPEN["black-garnet"])
    m.ok(0, "U" * 7 + "R" * 7 + "L" * 7 + "D" * 7)  # a8, h8, back: h1 missing
    assert m.gs.finished is None and len(m.gs.seats[0].visited) == 2


def test_minos_keys_by_passing_or_ending_and_escape() -> None:
    m = MmMatch("minos", maze=OPEN["minos"])
    ended = m.ok(0, "U" * 7)  # ends on a8
    assert ended.collected == (cell("a8"),)
    m.ok(1, "")
    passed = m.ok(0, "R" * 7 + "D")  # passes h8, ends h7
    assert passed.collected == (cell("h8"),)
    m.ok(1, "")
    m.ok(0, "D" * 6)  # h1
    assert m.gs.seats[0].visited == ((0, 7), (7, 0), (7, 7))  # targets order
    m.ok(1, "")
    out = m.move(0, "L" * 7)
    over = events_of(out, GameOver)
    assert over and over[0].winner == 0 and "keys" in over[0].reason
    # Keys are never lost: the bonks along the way took none away (checked by visited).


def test_minos_keys_are_not_lost_by_a_bonk() -> None:
    m = MmMatch("minos", maze=maze("minos", [("a7", "b7")]))
    m.ok(0, "U" * 7)
    m.ok(1, "")
    bonk = m.ok(0, "DR")
    assert bonk.bonked and m.gs.seats[0].visited == ((0, 7),)


def test_crazy_corners_count_only_when_stopped_on() -> None:
    m = MmMatch("crazy", maze=OPEN["crazy"])
    passing = m.ok(0, "U" * 9 + "R")  # passes a10, ends b10
    assert passing.collected == () and m.gs.seats[0].visited == ()
    t = m.ts + 25_000
    stop = m.ok(0, "L", ts=t)
    assert stop.collected == (cell("a10"),)
    t += 25_000
    m.ok(0, "R" * 9, ts=t)  # j10 (B's start) by stopping on it
    t += 25_000
    m.ok(0, "D" * 9, ts=t)  # j1
    assert len(m.gs.seats[0].visited) == 3
    t += 25_000
    # Passing a1 does not end the game; stopping there does.
    m.ok(0, "L" * 9 + "U", ts=t)
    assert m.gs.finished is None
    t += 25_000
    out = m.move(0, "D", ts=t)
    assert events_of(out, GameOver)[0].winner == 0


def test_the_opponent_does_not_block() -> None:
    m = MmMatch("black-garnet", maze=OPEN["black-garnet"])
    m.ok(0, "U" * 7 + "R" * 6)  # g8, next to B on h8
    m.ok(1, "L")  # B onto g8 too
    assert m.gs.seats[0].pos == m.gs.seats[1].pos == cell("g8")


# --- clocks ----------------------------------------------------------------------------


def test_black_garnet_a_period_is_spent_when_a_turn_runs_past_60_s() -> None:
    m = MmMatch("black-garnet", maze=OPEN["black-garnet"])
    assert m.gs.deadline == T0 + 60_000
    out = m.tick(T0 + 59_999)
    assert not out.events
    out = m.tick(T0 + 60_000)
    [spent] = events_of(out, PeriodSpent)
    assert (spent.seat, spent.periods_left, spent.deadline) == (0, 4, T0 + 120_000)
    moved = m.ok(0, "U", ts=T0 + 90_000)
    assert moved.periods_left == 4 and m.gs.seats[0].periods == 4
    # The next turn has its own 60 s; periods do not refill.
    assert m.gs.deadline == T0 + 150_000 and m.gs.seats[1].periods == 5


def test_black_garnet_with_no_period_left_the_turn_is_a_pass() -> None:
    m = MmMatch("black-garnet", maze=OPEN["black-garnet"], periods=1)
    # One late tick expires everything due, in order.
    out = m.tick(T0 + 130_000)
    kinds = [type(e).__name__ for e in out.events]
    assert kinds == ["PeriodSpent", "Moved", "TurnStarted"]
    [moved] = events_of(out, Moved)
    assert moved.timed_out and moved.moves == "" and moved.at == T0 + 120_000
    assert m.gs.to_move == 1 and m.gs.deadline == T0 + 180_000 and m.gs.seats[0].periods == 0
    m.ok(1, "")
    out = m.tick(m.gs.deadline)  # seat 0 again: no periods left, a pass at once
    assert events_of(out, Moved)[0].timed_out and not events_of(out, PeriodSpent)


def test_minos_reserve_is_spent_past_the_minute_and_never_refills() -> None:
    m = MmMatch("minos", maze=OPEN["minos"])
    assert m.gs.deadline == T0 + 60_000 + 300_000
    moved = m.ok(0, "U", ts=T0 + 90_000)  # 30 s past the minute
    assert moved.reserve_left == 270_000 and m.gs.seats[0].reserve == 270_000
    assert m.gs.deadline == T0 + 90_000 + 60_000 + 300_000  # seat 1's full reserve
    m.ok(1, "", ts=T0 + 100_000)  # in time: nothing spent
    assert m.gs.seats[1].reserve == 300_000
    assert m.gs.deadline == T0 + 100_000 + 60_000 + 270_000
    m.ok(0, "D", ts=T0 + 150_000)
    assert m.gs.seats[0].reserve == 270_000


def test_minos_running_out_of_reserve_submits_zero_moves() -> None:
    m = MmMatch("minos", maze=OPEN["minos"], reserve_seconds=30)
    out = m.tick(T0 + 90_000)
    [moved] = events_of(out, Moved)
    assert moved.timed_out and moved.moves == "" and moved.reserve_left == 0
    assert m.gs.seats[0].reserve == 0 and m.gs.to_move == 1
    m.ok(1, "U", ts=T0 + 95_000)
    # With the reserve gone a move has its minute only.
    assert m.gs.deadline == T0 + 95_000 + 60_000
    assert m.ok(0, "U", ts=T0 + 150_000).reserve_left == 0
    m.ok(1, "")
    out = m.tick(m.gs.deadline)
    assert events_of(out, Moved)[0].timed_out


def test_crazy_cooldowns_25_s_after_a_success_35_s_after_a_bonk() -> None:
    m = MmMatch("crazy", maze=OPEN["crazy"])
    assert m.gs.deadline is None and mm.deadline(m.gs) is None
    ok = m.ok(0, "U", ts=T0 + 1_000)
    assert ok.cooldown_until == T0 + 26_000 and mm.deadline(m.gs) == T0 + 26_000
    # The other player is not held up; up from j10 bonks on the outer wall.
    bonk = m.ok(1, "U", ts=T0 + 2_000)
    assert bonk.bonked and bonk.cooldown_until == T0 + 37_000
    early = m.move(0, "U", ts=T0 + 21_000)
    assert early.rejection is not None and early.rejection.code == "cooldown"
    assert "discarded" in early.rejection.reason and "5 s" in early.rejection.reason
    assert "successful move" in early.rejection.reason
    assert m.gs.seats[0].pos == (0, 1)  # nothing happened
    out = m.tick(T0 + 26_000)
    assert events_of(out, CooldownOver) == [CooldownOver(seat=0, at=T0 + 26_000)]
    assert m.gs.seats[0].ready and mm.deadline(m.gs) == T0 + 37_000
    early = m.move(1, "D", ts=T0 + 30_000)
    assert early.rejection is not None and "after a bonk" in early.rejection.reason
    assert "7 s" in early.rejection.reason
    # At the very end of the wait a submission is taken (the wait ends first).
    out = m.move(1, "D", ts=T0 + 37_000)
    assert out.rejection is None
    assert [type(e).__name__ for e in out.events] == ["CooldownOver", "Moved"]


def test_crazy_has_no_turns_and_no_empty_submissions() -> None:
    m = MmMatch("crazy", maze=OPEN["crazy"])
    assert m.gs.to_move is None and not events_of(m.outcomes[-1], TurnStarted)
    with_turn = m.move(0, "U", turn=1)
    assert with_turn.rejection is not None and with_turn.rejection.code == "no_turns"
    empty = m.move(0, "  ")
    assert empty.rejection is not None and empty.rejection.code == "no_moves"
    # Both may move at once.
    m.ok(0, "U")
    m.ok(1, "D")


def test_crazy_cooldowns_are_options_and_scale() -> None:
    m = MmMatch("crazy", maze=OPEN["crazy"], cooldown_success_seconds=10, clock_scale=0.5)
    assert m.ok(0, "U", ts=T0).cooldown_until == T0 + 5_000


def test_replay_reproduces_the_clocks() -> None:
    m = MmMatch("black-garnet", maze=OPEN["black-garnet"], periods=1)
    m.tick(T0 + 500_000)
    m.ok(m.gs.to_move or 0, "U")
    again = engine.fold(mm, m.entries)
    assert again.game_state == m.gs
    assert engine.verify(rules_by_name(), m.entries).ok


# --- what players see ------------------------------------------------------------------


def _game_view(m: MmMatch, viewer: Viewer) -> dict[str, Any]:
    view: dict[str, Any] = match_view(views, m.ms, viewer)["game_state"]
    return view


@pytest.mark.parametrize("variant", ["black-garnet", "minos"])
def test_the_previous_sequence_is_deleted_for_everyone(variant: str) -> None:
    m = MmMatch(variant, maze=OPEN[variant])
    m.ok(0, "URURUR")
    m.ok(1, "LLLDDD")
    gv = _game_view(m, Viewer(seat=1))
    assert gv["seats"][0]["last"]["moves"] == "URURUR" and gv["seats"][0]["history"] is None
    m.ok(0, "DDD")
    for viewer in (Viewer(seat=0), Viewer(seat=1), SPECTATOR):
        gv = _game_view(m, viewer)
        assert gv["seats"][0]["last"]["moves"] == "DDD"
        assert gv["seats"][1]["last"]["moves"] == "LLLDDD"  # not yet replaced
        assert "URURUR" not in json.dumps(match_view(views, m.ms, viewer))
        # Events carry no sequence at all (a reconnecting client is sent old events
        # again); the view's `last` carries the latest one.
        for entry_outcome in m.outcomes:
            events = project_events(views, m.ms, entry_outcome, viewer)
            assert [e["moves"] for e in events if e["type"] == "moved"] in ([], [None])
    full = project_events(views, m.ms, m.outcomes[-1], AUDITOR)
    assert [e["moves"] for e in full if e["type"] == "moved"] == ["DDD"]
    # Reconnecting: the frame of the latest entry (what a client that resumes ends on)
    # has only the latest sequences.
    assert b"URURUR" not in m.stream(Viewer(seat=1))[-1]
    # A timed-out turn deletes the previous sequence too (its zero moves are the latest).
    m.tick(m.ts + 10_000_000)
    assert _game_view(m, SPECTATOR)["seats"][1]["last"]["timed_out"] is True


def test_crazy_keeps_the_whole_history() -> None:
    m = MmMatch("crazy", maze=OPEN["crazy"])
    m.ok(0, "URURUR", ts=T0)
    m.ok(0, "DDD", ts=T0 + 25_000)
    gv = _game_view(m, Viewer(seat=1))
    assert [a["moves"] for a in gv["seats"][0]["history"]] == ["URURUR", "DDD"]
    assert gv["seats"][0]["last"]["moves"] == "DDD"
    assert gv["history_kept"] is True


def test_players_and_spectators_see_the_same_and_no_walls() -> None:
    m = MmMatch("black-garnet", maze=maze("black-garnet", [("a2", "a3")]))
    m.ok(0, "UU")  # bonks on the second move
    def anonymous(viewer: Viewer) -> list[Any]:
        frames = [json.loads(f) for f in m.stream(viewer)]
        for frame in frames:
            del frame["view"]["you"]  # the one thing that differs: who is looking
        return frames

    assert anonymous(Viewer(seat=0)) == anonymous(Viewer(seat=1)) == anonymous(SPECTATOR)
    events = project_events(views, m.ms, m.outcomes[-1], Viewer(seat=0))
    [moved] = [e for e in events if e["type"] == "moved"]
    assert moved["bonked"] is True and "bonk_index" not in moved and "path" not in moved
    gv = _game_view(m, Viewer(seat=0))
    assert gv["maze"] is None and gv["colored_walls"] == []
    assert "bonk_index" not in gv["seats"][0]["last"]
    # An auditor sees where it bonked.
    full = project_events(views, m.ms, m.outcomes[-1], AUDITOR)
    [moved] = [e for e in full if e["type"] == "moved"]
    assert moved["bonk_index"] == 1 and moved["path"] == ["a1", "a2"]


def test_crazy_colored_walls_are_visible() -> None:
    m = MmMatch("crazy", maze=maze("crazy", colored_a=[("b1", "b2")]))
    gv = _game_view(m, Viewer(seat=1))
    assert gv["colored_walls"] == [
        {"between": ["b1", "b2"], "owner": 0, "letter": "A"},
        {"between": ["i9", "j9"], "owner": 1, "letter": "B"},
    ]
    assert gv["maze"] is None


def test_after_the_match_the_maze_and_every_path_are_revealed() -> None:
    walls = maze("black-garnet", [("a2", "a3")])
    m = MmMatch("black-garnet", maze=walls)
    m.ok(0, "UU")  # bonk
    m.ok(1, "")
    # Round the walls a2|a3 and b1|c1: a8, h8, h1, then back along row 2.
    m.ok(0, "RU" + "U" * 6 + "L" + "R" * 7 + "D" * 7 + "U" + "L" * 6 + "D" + "L")
    assert m.ms.ended
    view = match_view(views, m.ms, Viewer(seat=1))
    gv = view["game_state"]
    assert gv["maze"]["drawing"] == render(walls)
    assert ["a2", "a3"] in gv["maze"]["walls"] and ["b1", "c1"] in gv["maze"]["walls"]
    history = gv["seats"][0]["history"]
    assert [a["bonk_index"] for a in history] == [1, None]
    assert history[1]["path"][:3] == ["a1", "b1", "b2"]
    assert view["setup"]["drawing"] == render(walls)


# The property: a player's stream depends on no wall the attempts could not have touched.


def _touched(m: MmMatch) -> set[int]:
    n = m.gs.maze.size
    touched: set[int] = set()
    for out in m.outcomes:
        for e in events_of(out, Moved):
            edges = path_edges(e.from_cell, e.moves, n)
            if e.bonked:
                edges = edges[: e.bonk_index + 1]
            touched.update(x for x in edges if x is not None)
    return touched


Command = tuple[int, str, int]
moves_text = st.text(alphabet="UDLR", max_size=7)
commands = st.lists(
    st.tuples(st.integers(0, 1), moves_text, st.integers(0, 90_000)), min_size=1, max_size=14
)


def _play(variant: str, m_: Maze, script: list[Command], seed: bytes) -> MmMatch:
    clocks: dict[str, dict[str, Any]] = {
        "black-garnet": {"periods": 2}, "minos": {"reserve_seconds": 60}, "crazy": {}
    }
    m = MmMatch(variant, maze=m_, seed=seed, **clocks[variant])
    t = T0
    for seat, moves, dt in script:
        t += dt
        if m.ms.ended:
            break
        m.move(seat, moves, ts=t)
    return m


def _same_outcomes(run: MmMatch, other: Maze) -> bool:
    """Whether every attempt of `run` would bonk, or not, in `other` as it did."""
    for out in run.outcomes:
        for e in events_of(out, Moved):
            letter = run.gs.seats[e.seat].letter
            if trace(other, letter, e.from_cell, e.moves).bonked != e.bonked:
                return False
    return True


def _valid(m: Maze, colored: bool) -> bool:
    try:
        parse(render(m), m.size, m.axis, colored=colored)
    except MazeError:
        return False
    return True


def _flip(m: Maze, orbits: list[tuple[int, int]]) -> Maze:
    walls = set(m.walls)
    for pair in orbits:
        walls.symmetric_difference_update(pair)
    return msgspec.structs.replace(m, walls=frozenset(walls))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variant=st.sampled_from(VARIANTS),
    maze_seed=st.binary(min_size=4, max_size=4),
    script=commands,
    coin=st.randoms(use_true_random=False),
)
def test_no_message_depends_on_walls_no_attempt_could_touch(
    variant: str, maze_seed: bytes, script: list[Command], coin: random.Random
) -> None:
    """Two mazes that the rules do not let a player tell apart give it identical streams.

    The second maze is either (1) one that agrees with the first on every border any
    attempt could have touched (up to the first wall of a bonk) and on the visible colored
    walls, anything elsewhere; or, when one can be found, (2) one that differs from the
    first in a few wall pairs, possibly touched ones, yet makes every attempt come out the
    same (success or bonk): a bonk then hits a wall elsewhere on its path, which only a
    leak of *where* it bonked would show."""
    n, axis = mm.SIZE[variant], mm.AXIS[variant]
    crazy = variant == "crazy"
    first = generate(n, axis, Rng(maze_seed), colored_pairs=3 if crazy else 0)
    seed = bytes(32)
    a = _play(variant, first, script, seed)
    colored = first.colored_a | first.colored_b
    pairs = [(e, mirror_edge(e, n, axis)) for e in interior_edges(n)
             if e < mirror_edge(e, n, axis) and e not in colored]
    orbit = {e: p for p in pairs for e in p}
    bonks = [e for out in a.outcomes for e in events_of(out, Moved) if e.bonked]
    other: Maze | None = None
    for _ in range(40):
        flips = coin.sample(pairs, coin.randint(1, 4))
        if bonks and coin.random() < 0.7:
            # Move a bonk's wall elsewhere on its path: open it, close another border.
            e = coin.choice(bonks)
            edges = path_edges(e.from_cell, e.moves, n)
            assert e.bonk_index is not None
            wall = edges[e.bonk_index]
            rest = [x for x in edges if x is not None and x in orbit and x != wall]
            if wall is None or wall not in orbit or not rest:
                continue
            flips = list({orbit[wall], orbit[coin.choice(rest)]})
        candidate = _flip(first, flips)
        if _valid(candidate, crazy) and _same_outcomes(a, candidate):
            other = candidate
            break
    if other is None or coin.random() < 0.3:
        touched = _touched(a)
        free = [p for p in pairs if not (set(p) & touched)]
        other = _flip(first, [p for p in free if coin.random() < 0.5])
        if not _valid(other, crazy):  # a corner sealed off: open every untouched pair
            other = _flip(first, [p for p in free if p[0] in first.walls])
    b = _play(variant, other, script, seed)
    for viewer in (Viewer(seat=0), Viewer(seat=1), SPECTATOR):
        assert a.stream(viewer, hide_commitment=True) == b.stream(viewer, hide_commitment=True)
    assert [o.rejection for o in a.outcomes] == [o.rejection for o in b.outcomes]


def test_the_property_would_catch_a_leak() -> None:
    """Two mazes that differ on a border the player has not touched give different
    streams if the walls were shown: a sanity check of the comparison itself."""
    first, other = OPEN["black-garnet"], maze("black-garnet", [("d4", "e4")])
    a = _play("black-garnet", first, [(0, "U", 10)], bytes(32))
    b = _play("black-garnet", other, [(0, "U", 10)], bytes(32))
    assert a.stream(SPECTATOR, hide_commitment=True) == b.stream(SPECTATOR, hide_commitment=True)
    assert a.stream(AUDITOR) != b.stream(AUDITOR)


# --- replay ----------------------------------------------------------------------------


def _sim(variant: str, lineup: tuple[str, str], seed: int) -> Any:
    bots = [BOTS["memory-maze"][name](random.Random(f"{seed}:{s}")) for s, name in enumerate(lineup)]
    return simulate("memory-maze", bots, variant=variant, seed=bytes([seed]) * 32, max_entries=3_000)


def test_replay_draws_the_maze_and_both_paths() -> None:
    sim = _sim("crazy", ("explorer", "random"), 1)
    out = io.StringIO()
    assert print_replay(sim.entries, out)
    assert print_verify(sim.entries, out)
    text = out.getvalue()
    assert "Submission 1:" in text and "The maze (10x10" in text and "Legend:" in text
    ms = engine.fold(mm, sim.entries)
    for seat in (0, 1):
        rows = views.audit_drawing(ms.game_state, seat)
        assert "\n".join("    " + row for row in rows) in text
    assert ms.result is not None and ms.result.winner is not None
    won = "\n".join(views.audit_drawing(ms.game_state, ms.result.winner))
    assert "@" in won and "?" not in won  # the winner visited every corner
    assert "bonks at move" in text and "verify: ok" in text
    assert "setup: drawn again from the revealed seed, and the same" in text


def test_verify_draws_a_seeded_maze_again_and_names_a_host_maze() -> None:
    seeded = MmMatch("minos")
    assert engine.verify(rules_by_name(), seeded.entries).setup == "seed"
    hosted = MmMatch("minos", maze=maze("minos", [("a2", "a3"), ("c4", "d4")]))
    assert engine.verify(rules_by_name(), hosted.entries).setup == "host"


def test_describe_names_the_wall_of_a_bonk() -> None:
    m = MmMatch("black-garnet", maze=maze("black-garnet", [("a2", "a3")]))
    out = m.move(0, "UU")
    lines = [line for e in out.events for line in views.describe(m.ms, e)]
    assert any(
        "bonks at move 2 (up from a2 into the wall between a2 and a3); stays on a1" in line
        for line in lines
    )


# --- bots ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "bound"), [("black-garnet", 160), ("minos", 200), ("crazy", 320)]
)
def test_bots_finish_in_a_sensible_number_of_turns(variant: str, bound: int) -> None:
    for seed, lineup in enumerate((("explorer", "random"), ("random", "explorer"), ("explorer", "explorer"))):
        sim = _sim(variant, lineup, seed + 10)
        assert sim.result is not None
        assert lineup[sim.result.winner] == "explorer"
        assert sim.result.rounds <= bound, (lineup, sim.result)
        assert not sim.rejections, sim.rejections[:3]


def test_the_explorer_learns_from_bonks_and_symmetry() -> None:
    k = mm_bots.Knowledge(size=8, axis="rising", colored={})
    k.observe(0, "A", {"turn": 1, "at": 0, "from": "a1", "moves": "UR", "bonked": False})
    assert k.status(edge("a1", "a2", 8), "A") is True
    assert k.status(edge("a1", "b1", 8), "A") is True  # the mirror image of a1|a2
    # The opponent bonks from a2 going right three times: a2|b2 is known open, so one of
    # b2|c2 and c2|d2 is a wall.
    k.observe(1, "B", {"turn": 2, "at": 1, "from": "a2", "moves": "RRR", "bonked": True})
    assert k.clauses == [{k.rep(edge("b2", "c2", 8)), k.rep(edge("c2", "d2", 8))}]
    k.observe(0, "A", {"turn": 3, "at": 2, "from": "a2", "moves": "RR", "bonked": False})
    assert k.status(edge("c2", "d2", 8), "A") is False  # the clause's last border
    assert k.status(edge("b3", "c3", 8), "A") is None
    assert not k.clauses


def test_bots_read_only_their_view() -> None:
    m = MmMatch("black-garnet", maze=OPEN["black-garnet"])
    view = match_view(views, m.ms, Viewer(seat=0))
    for name in ("random", "explorer"):
        bot = BOTS["memory-maze"][name](random.Random(3))
        [command] = bot.act(json.loads(json.dumps(view)))
        assert command["type"] == "move" and command["turn"] == 1
        assert bot.act(view) == []  # once a turn
        bot.feedback(command, False, (), "busy")
        assert len(bot.act(view)) == 1
        other = BOTS["memory-maze"][name](random.Random(3))
        assert other.act(match_view(views, m.ms, Viewer(seat=1))) == []  # not its turn
        assert other.act({**view, "you": None}) == []


# --- the terminal ----------------------------------------------------------------------


def test_terminal_parses_and_renders() -> None:
    term = TERMINALS["memory-maze"]
    m = MmMatch("minos", maze=OPEN["minos"])
    view = match_view(views, m.ms, Viewer(seat=0))
    assert term.parse("u u r", view) == {"type": "move", "moves": "UUR", "turn": 1}
    assert term.parse("north east", view) == {"type": "move", "moves": "UR", "turn": 1}
    assert term.parse("pass", view) == {"type": "move", "moves": "", "turn": 1}
    for bad, message in [("up U", "don't mix"), ("fly", "not a move"), ("", "moves are")]:
        with pytest.raises(ValueError, match=message):
            term.parse(bad, view)
    text = term.render(view, 42.0)
    assert "turn 1: your move" in text and "42 s left" in text and "keys:" in text
    m.ok(0, "UU")
    view = match_view(views, m.ms, Viewer(seat=1))
    lines = term.render_events(view, project_events(views, m.ms, m.outcomes[-1], Viewer(seat=1)))
    assert lines == ["Ann: UU from a1 -> a3", "turn 2: your move"]
    crazy = MmMatch("crazy", maze=OPEN["crazy"])
    cview = match_view(views, crazy.ms, Viewer(seat=0))
    assert term.parse("UR", cview) == {"type": "move", "moves": "UR"}
    with pytest.raises(ValueError, match="no turns"):
        term.parse("pass", cview)


def test_drawing_round_trips() -> None:
    for variant in VARIANTS:
        m = generate(mm.SIZE[variant], mm.AXIS[variant], Rng(b"round"), 3 if variant == "crazy" else 0)
        assert parse(drawing(m), m.size, m.axis, colored=variant == "crazy") == m
    assert corners(8) == ((0, 0), (0, 7), (7, 0), (7, 7))


def test_the_rules_page_example_is_the_generators_maze() -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs/rules/memory-maze.md").read_text()
    example = page.split("```\n", 2)[1]
    setup = mm.make_setup(mm.configure("black-garnet", {}), Rng(bytes(range(32)), "setup"))
    assert example.splitlines() == setup["drawing"]
    assert parse(example, 8, "rising", colored=False) == mm.maze_of(setup, "black-garnet")
