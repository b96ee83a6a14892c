"""The plan validator: every mandatory rule of section 8 (and the river and pit rules of
4.4-4.5, the limits of option 7.1) refused naming the rule and the cell, every
recommendation a named warning, and the movement rules the reachability check follows."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings

from clients.cli import main
from clients.plan_cli import plan_error_place
from domain.games.labyrinth.plan import (
    DELTA,
    ENCEPHALITIS,
    HOSPITAL,
    LAND,
    WEAPONRY,
    CellType,
    Exit,
    Land,
    Plan,
    PlanError,
    River,
    Treasure,
    direction_between,
    plan_of,
)
from domain.games.labyrinth.plan_text import parse_plan
from domain.games.labyrinth.validate import (
    PLAN_OPTIONS,
    PlanOptions,
    Problem,
    Report,
    check_text,
    crossing,
    move_result,
    moves_from,
    plan_options,
    river_sources,
    validate,
    ways_out,
)
from domain.kit.options import OptionTable
from tests.labyrinth.strategies import plans

# A plan that keeps every rule and every recommendation (for two players, with one more
# exit than them). Exits: the open left side of 3,1 and right side of 3,5, the closed top
# of 1,5. A river at 1,3 flows into the delta at 1,4; pits a1 (2,1) and a2 (3,4).
BASE = """\
name: The validator's example

grid:
      1   2   3   4   5
    +###+###+###+###+---+
  1 # .   W   >   D   . #
    +   +   +###+   +   +
  2 # a1  .   .   .   H #
    +   +   +   +   +   +
  3   .   E   .   a2  .
    +   +   +   +   +   +
  4 # H   .   .   W   . #
    +###+###+###+###+###+

treasure 3,3 true
treasure 2,2 fake
"""


def edit(text: str, line: int, column: int, new: str) -> str:
    """The text with `new` written over line `line` (0 = first grid line, the column
    ruler) from column `column`."""
    lines = text.split("\n")
    first = lines.index("grid:") + 1
    old = lines[first + line].ljust(column + len(new))
    lines[first + line] = old[:column] + new + old[column + len(new):]
    return "\n".join(lines)


def cell_at(text: str, row: int, column: int, code: str) -> str:
    """The text with the cell row,column holding `code` (a cell code, up to 3 characters)."""
    return edit(text, 2 * row, 4 + 4 * (column - 1) + 1, code.center(3))


def border_right(text: str, row: int, column: int, code: str) -> str:
    """The border right of row,column: " ", "|" (destructible) or "#"."""
    return edit(text, 2 * row, 4 + 4 * column, code)


def border_below(text: str, row: int, column: int, code: str) -> str:
    """The border below row,column (row 0: the top outline): "   ", "---" or "###"."""
    return edit(text, 2 * row + 1, 4 + 4 * (column - 1) + 1, code)


def check(text: str, options: PlanOptions | None = None, players: int | None = 2) -> Report:
    return check_text(text, options, players)[1]


def only_error(report: Report) -> Problem:
    assert len(report.errors) == 1, [p.text for p in report.errors]
    return report.errors[0]


def test_the_base_plan_keeps_every_rule_and_recommendation() -> None:
    report = check(BASE)
    assert report.ok and not report.warnings, [p.text for p in report.problems]


def test_the_editing_helpers_write_where_they_say() -> None:
    plan = parse_plan(cell_at(border_right(BASE, 4, 4, "|"), 4, 2, "E"))
    assert plan.side((4, 4), "right").value == "wall"
    assert type(plan.type_at((4, 2))).__name__ == "Encephalitis"
    plan = parse_plan(border_below(BASE, 0, 3, "   "))
    assert plan.exit_at((1, 3), "up") is not None


# --- 8.1 to 8.6: each refused naming the rule and the cell --------------------------------


def test_8_1_a_cell_of_two_types_is_refused_naming_the_cell() -> None:
    problem = only_error(check(cell_at(BASE, 2, 3, ".D")))
    assert (problem.rule, problem.cell) == ("8.1", (2, 3))
    assert "more than one type" in problem.message and "2,3" in problem.text


@pytest.mark.parametrize("kind, code", [("hospital", "H"), ("weaponry", "W")])
def test_8_2_a_plan_without_a_weaponry_or_hospital_is_refused(kind: str, code: str) -> None:
    text = BASE
    for row, column in ((1, 2), (4, 4)) if code == "W" else ((2, 5), (4, 1)):
        text = cell_at(text, row, column, ".")
    problem = only_error(check(text))
    assert problem.rule == "8.2" and problem.cell is None
    assert f"no {kind} cell" in problem.message


def test_8_2_a_plan_without_land_is_refused() -> None:
    plan = parse_plan(BASE)
    kinds = {c: ENCEPHALITIS if isinstance(t, Land) else t for c, t in plan.types.items()}
    report = validate(plan_of(kinds, plan.walls, plan.exits))
    assert [p.message for p in report.errors if p.rule == "8.2"] == [
        "the labyrinth has no land cell; it needs at least one weaponry, one hospital and one "
        "land cell"
    ]


def test_8_3_two_true_treasures_are_refused_naming_the_second() -> None:
    problem = only_error(check(BASE.replace("treasure 2,2 fake", "treasure 2,2 true")))
    assert (problem.rule, problem.cell) == ("8.3", (3, 3))
    assert "second true treasure (the first is at 2,2)" in problem.message


def test_8_3_no_true_treasure_is_refused() -> None:
    problem = only_error(check(BASE.replace("treasure 3,3 true", "treasure 3,3 fake")))
    assert problem.rule == "8.3" and "no true treasure" in problem.message


def test_8_3_a_true_treasure_off_land_is_refused_naming_its_cell() -> None:
    problem = only_error(check(BASE.replace("treasure 3,3 true", "treasure 4,4 true")))
    assert (problem.rule, problem.cell) == ("8.3", (4, 4))
    assert "lies on weaponry; it must lie on land" in problem.message


def test_3_1_a_fake_treasure_off_land_is_refused() -> None:
    problem = only_error(check(BASE.replace("treasure 2,2 fake", "treasure 3,2 fake")))
    assert (problem.rule, problem.cell) == ("3.1", (3, 2))


def test_8_4_one_exit_is_refused() -> None:
    text = border_right(border_right(BASE, 3, 0, "#"), 3, 5, "#")
    problem = only_error(check(text))
    assert (problem.rule, problem.cell) == ("8.4", (1, 5))
    assert "1 exit; it needs at least two" in problem.message


def test_8_4_an_exit_from_a_river_source_is_refused_naming_the_source() -> None:
    problem = only_error(check(border_below(BASE, 0, 3, "   ")))
    assert (problem.rule, problem.cell) == ("8.4", (1, 3))
    assert "river source" in problem.message


def test_8_5_a_walled_in_cell_is_refused_naming_it() -> None:
    text = border_below(border_right(BASE, 4, 4, "|"), 3, 5, "---")
    problem = only_error(check(text))
    assert (problem.rule, problem.cell) == ("8.5", (4, 5))
    assert "cut off" in problem.message and "without grenades" in problem.message


def test_8_5_a_delta_between_walls_and_its_river_is_a_trap() -> None:
    text = border_below(border_right(BASE, 1, 4, "|"), 1, 4, "---")
    report = check(text)
    problem = only_error(report)
    assert (problem.rule, problem.cell) == ("8.5", (1, 4))
    assert "is a trap" in problem.message
    assert "attractor" in report.names()


def corner(text: str) -> str:
    """Walls round the top-left corner (1,1, 1,2, 2,1, 2,2) but for its way into the river
    at 1,3, and the pit a1 moved from 2,1 to 4,2."""
    text = border_below(border_below(text, 2, 1, "---"), 2, 2, "---")
    text = border_right(text, 2, 2, "|")
    return cell_at(cell_at(text, 2, 1, "."), 4, 2, "a1")


def test_8_5_an_area_a_river_leads_out_of_but_nothing_into_is_refused() -> None:
    problem = only_error(check(corner(BASE)))
    assert (problem.rule, problem.cell) == ("8.5", (1, 1))
    assert problem.message == (
        "cell 1,1 (with 1,2, 2,1, 2,2) cannot be reached from the rest of the labyrinth "
        "without grenades"
    )


def test_8_5_an_area_walled_in_on_every_side_is_cut_off() -> None:
    problem = only_error(check(border_right(corner(BASE), 1, 2, "|")))
    assert (problem.rule, problem.cell) == ("8.5", (1, 1))
    assert "is cut off" in problem.message


def test_8_5_a_pit_loop_is_a_way_in_and_out() -> None:
    # The corner with the pit a1 left in it: falling into a2 arrives there, and a player
    # leaves by the loop.
    text = border_below(border_below(BASE, 2, 1, "---"), 2, 2, "---")
    text = border_right(border_right(text, 2, 2, "|"), 1, 2, "|")
    assert check(text).ok


def test_8_5_a_cell_reached_only_by_a_pit_is_fine_and_one_left_only_by_a_pit_too() -> None:
    # 4,5 walled off but for the pit: make it pit a2, moved from 3,4. A player falls into
    # a1 and arrives at 4,5, and leaves it by the loop.
    text = border_below(border_right(BASE, 4, 4, "|"), 3, 5, "---")
    text = cell_at(cell_at(text, 3, 4, "."), 4, 5, "a2")
    assert check(text).ok


def test_8_6_the_announced_numbers_are_checked() -> None:
    problem = only_error(check(BASE, PlanOptions(heal_moves=0)))
    assert problem.rule == "8.6" and "moves to heal" in problem.message
    problem = only_error(check(BASE, PlanOptions(nstop=0)))
    assert problem.rule == "8.6" and "Nstop" in problem.message
    assert check(BASE, PlanOptions(heal_moves=None, nstop=5)).ok


# --- 4.4 and 4.5: pits and rivers as the rule book defines them ------------------------------


def test_4_5_a_wall_across_a_river_is_refused() -> None:
    problem = only_error(check(border_right(BASE, 1, 3, "|")))
    assert (problem.rule, problem.cell, problem.name) == ("4.5", (1, 3), "wall-across-river")
    assert "lies across the river's flow (right)" in problem.message


def test_4_5_a_river_flowing_out_or_into_land_or_in_a_circle_is_refused() -> None:
    report = check(cell_at(BASE, 1, 3, "^"))
    assert any(p.rule == "4.5" and p.cell == (1, 3) and "flows up, out of the labyrinth"
               in p.message for p in report.errors)
    report = check(cell_at(BASE, 1, 3, "v"))
    assert any(p.rule == "4.5" and "into land at 2,3" in p.message for p in report.errors)
    report = check(cell_at(cell_at(BASE, 1, 4, "<"), 1, 3, ">"))
    assert any(p.rule == "4.5" and "in a circle (1,3, 1,4)" in p.message for p in report.errors)


def test_4_5_a_delta_without_a_river_is_refused() -> None:
    problem = only_error(check(cell_at(BASE, 1, 1, "D")))
    assert (problem.rule, problem.cell) == ("4.5", (1, 1))
    assert "no river flows into this delta" in problem.message


def test_4_4_pit_loops_are_numbered_1_to_n_with_two_pits_or_more() -> None:
    problem = only_error(check(cell_at(BASE, 3, 4, ".")))
    assert (problem.rule, problem.cell) == ("4.4", (2, 1)) and "one pit" in problem.message
    problem = only_error(check(cell_at(BASE, 3, 4, "a3")))
    assert (problem.rule, problem.cell) == ("4.4", (3, 4)) and "a2 is missing" in problem.message
    problem = only_error(check(cell_at(cell_at(BASE, 3, 4, "a1"), 4, 3, "a2")))
    assert problem.rule == "4.4" and "pit a1 is also at 2,1" in problem.message


# --- 7.1 and 7.6 -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, fragment, cell",
    [
        (PlanOptions(encephalitis=False), "without encephalitis", (3, 2)),
        (PlanOptions(max_pits=1), "2 pits; the match allows at most 1", (2, 1)),
        (PlanOptions(max_pit_loops=0), "1 pit loops; the match allows at most 0", None),
        (PlanOptions(max_loop_length=1), "2 pits in loop a", (2, 1)),
        (PlanOptions(max_rivers=0), "1 river systems", None),
        (PlanOptions(weaponries=3), "2 weaponries; the match allows exactly 3", None),
        (PlanOptions(hospitals=1), "2 hospitals; the match allows exactly 1", None),
        (PlanOptions(treasures=3), "2 treasures; the match allows exactly 3", None),
        (PlanOptions(inner_walls=0), "1 inner walls; the match allows exactly 0", None),
        (PlanOptions(exits=4), "3 exits; the match allows exactly 4", None),
        (PlanOptions(closed_exits=False), "the exit on the up side is closed", (1, 5)),
    ],
)
def test_7_1_limits(options: PlanOptions, fragment: str, cell: tuple[int, int] | None) -> None:
    problem = only_error(check(BASE, options))
    assert problem.rule == "7.1" and problem.cell == cell
    assert fragment in problem.message


def test_7_1_river_length_branches_landmines_and_an_open_exit() -> None:
    long_river = cell_at(BASE, 1, 2, ">").replace("treasure 2,2 fake", "treasure 4,2 fake")
    long_river = cell_at(long_river, 2, 2, "W")  # the weaponry moved from 1,2
    assert check(long_river).ok
    assert check(long_river, PlanOptions(max_river_length=3)).ok
    problem = only_error(check(long_river, PlanOptions(max_river_length=2)))
    assert (problem.rule, problem.cell) == ("7.1", (1, 2))
    assert "3 cells from the source at 1,2 to the delta at 1,4" in problem.message
    branched = cell_at(BASE, 2, 4, "^")
    assert check(branched).ok
    problem = only_error(check(branched, PlanOptions(max_river_branches=1)))
    assert (problem.rule, problem.cell) == ("7.1", (1, 4))
    mined = BASE + "items 4,2: 1 landmine\n"
    assert check(mined).ok
    problem = only_error(check(mined, PlanOptions(landmines=False)))
    assert (problem.rule, problem.cell) == ("7.1", (4, 2))
    closed = border_right(border_right(BASE, 3, 5, "|"), 3, 0, "|")
    assert check(closed).ok
    problem = only_error(check(closed, PlanOptions(open_exit=True)))
    assert problem.rule == "7.1" and "at least one open" in problem.message


def test_7_1_crossings_join_the_opposite_sides() -> None:
    assert check(BASE, PlanOptions(crossings=True)).ok
    plan = parse_plan(BASE)
    assert crossing(plan, "left", "right") == [(4, 1), (4, 2), (4, 3), (4, 4), (4, 5)]
    assert crossing(plan, "up", "down") == [(1, 5), (2, 5), (3, 5), (4, 5)]
    # Walls right of 2,3 and 4,2 and below 2,3 leave no walkable chain from left to right
    # (the encephalitis cell at 3,2 and the pits are no part of one).
    text = border_below(border_right(border_right(BASE, 2, 3, "|"), 4, 2, "|"), 2, 3, "---")
    assert check(text).ok
    problem = only_error(check(text, PlanOptions(crossings=True)))
    assert problem.rule == "7.1" and problem.cell is None
    assert "joins the left and right sides (across)" in problem.message
    assert crossing(parse_plan(text), "left", "right", walls=False) is not None


def test_7_6_a_common_start_on_a_river_source_is_refused() -> None:
    assert check(BASE + "start 2,3\n").ok
    problem = only_error(check(BASE + "start 1,3\n"))
    assert (problem.rule, problem.cell) == ("7.6", (1, 3))


def test_the_plan_options_declarations_match_the_struct() -> None:
    class Options(PlanOptions, frozen=True, kw_only=True):
        variant: str = "x"

    table = OptionTable(Options, ("x",), PLAN_OPTIONS)
    configured = table.configure("x", {"max_pits": 4, "landmines": False})
    assert plan_options({f: getattr(configured, f) for f in configured.__struct_fields__}) == \
        PlanOptions(max_pits=4, landmines=False)
    assert table.defaults("x").heal_moves == 10 and table.defaults("x").nstop is None


# --- recommendations: warnings, each named --------------------------------------------------


def names(text: str, players: int | None = 2) -> set[str]:
    report = check(text, players=players)
    assert report.ok, [p.text for p in report.errors]
    return report.names()


def test_8_r1_fewer_than_two_weaponries_or_hospitals() -> None:
    assert names(cell_at(BASE, 1, 2, ".")) == {"two-weaponries"}
    assert names(cell_at(BASE, 2, 5, ".")) == {"two-hospitals"}


def test_8_r2_a_hospital_next_to_a_weaponry() -> None:
    report = check(cell_at(BASE, 2, 2, "H").replace("treasure 2,2 fake", "treasure 2,3 fake"))
    assert report.names() == {"hospital-next-to-weaponry"}
    assert report.warnings[0].cell == (2, 2) and report.warnings[0].rule == "8.R2"


def test_8_r3_fake_treasures_from_one_to_the_players() -> None:
    assert names(BASE.replace("treasure 2,2 fake\n", "")) == {"fake-treasures"}
    three = BASE + "treasure 4,2 fake\ntreasure 4,3 fake\n"
    no_mines = PlanOptions(landmines=False)
    assert check(three, no_mines, players=3).names() == set()
    assert check(three, no_mines, players=2).names() == {"fake-treasures"}
    assert check(three, no_mines, players=None).names() == set()


def test_8_r4_a_delta_with_one_way_out_and_adjacent_deltas() -> None:
    report = check(border_right(BASE, 1, 4, "|"))
    assert report.names() == {"attractor"} and report.warnings[0].cell == (1, 4)
    two = cell_at(cell_at(cell_at(BASE, 2, 4, "D"), 3, 4, "^"), 4, 3, "a2")
    report = check(two)
    assert "adjacent-deltas" in report.names()


def test_8_r5_nothing_misleading_and_devices_inside() -> None:
    plain = cell_at(cell_at(cell_at(cell_at(BASE, 1, 3, "."), 1, 4, "."), 2, 1, "."), 3, 4, ".")
    assert names(plain) == {"no-rivers-or-pits"}
    inside = cell_at(cell_at(BASE, 2, 1, "."), 2, 3, "a1")
    report = check(inside)
    assert report.names() == {"device-inside"} and report.warnings[0].cell == (2, 3)


def test_8_r6_a_treasure_next_to_an_exit() -> None:
    report = check(BASE.replace("treasure 2,2 fake", "treasure 4,5 fake"))
    assert report.names() == {"treasure-near-exit"}
    assert "a fake treasure" in report.warnings[0].message
    report = check(BASE.replace("treasure 3,3 true", "treasure 3,1 true").replace(
        "treasure 2,2 fake", "treasure 2,3 fake"))
    assert report.names() == {"treasure-near-exit"}
    assert "the true treasure" in report.warnings[0].message


def test_5_7_more_exits_than_players_with_landmines() -> None:
    assert names(BASE, players=3) == {"exits-for-landmines"}
    assert check(BASE, PlanOptions(landmines=False), players=3).warnings == ()


def test_4_6_items_on_a_river_source_are_lost() -> None:
    assert names(BASE + "items 1,3: 2 bullets\n") == {"lost-items"}


# --- how a player moves (the reachability check's model) ----------------------------------


def test_movement_follows_rivers_pits_and_walls() -> None:
    plan = parse_plan(BASE)
    # Walking into the river source at 1,3 from the weaponry carries on to the delta.
    assert move_result(plan, (1, 2), "right") == (1, 4)
    # From the delta, walking upstream into the river leaves the player where it was.
    assert move_result(plan, (1, 4), "left") == (1, 4)
    # A pit sends a player on to the next pit of its loop, after the last to the first.
    assert move_result(plan, (1, 1), "down") == (3, 4)
    assert move_result(plan, (3, 3), "right") == (2, 1)
    # A wall, an outer wall and an open exit all leave a player where it stood.
    assert move_result(plan, (2, 3), "up") == (2, 3)
    assert move_result(plan, (4, 1), "down") == (4, 1)
    assert move_result(plan, (3, 1), "left") == (3, 1)
    assert river_sources(plan) == ((1, 3),)
    assert ways_out(plan, (1, 4)) == 2


def test_a_river_carries_a_player_who_hits_a_wall_and_goes_by_the_flow() -> None:
    plan = parse_plan(cell_at(BASE, 1, 2, ">"))
    # Standing in the river at 1,3 (carried there from 1,2), a wall below: carried on.
    assert move_result(plan, (1, 3), "down") == (1, 4)
    assert move_result(plan, (1, 3), "up") == (1, 4)
    # By the flow (and into the delta by walking) the player also reaches the delta.
    assert (1, 4) in moves_from(plan, (1, 3))
    # In a pit, by the loop is one of the moves.
    assert (3, 4) in moves_from(plan, (2, 1))


@settings(max_examples=150, deadline=None)
@given(plans())
def test_any_plan_the_model_holds_is_validated_without_a_crash(plan: Plan) -> None:
    report = validate(plan, PlanOptions(), players=3)
    for problem in report.problems:
        assert problem.rule and problem.message
        assert problem.cell is None or problem.cell in plan.cells
    assert report.ok == (not report.errors)


# --- daedalus plan check ------------------------------------------------------------------------


def test_plan_check_exits_1_with_the_errors_and_0_with_warnings_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, warned, broken = tmp_path / "good.txt", tmp_path / "warned.txt", tmp_path / "broken.txt"
    good.write_text(BASE)
    warned.write_text(cell_at(BASE, 1, 2, "."))
    broken.write_text(border_below(border_right(BASE, 4, 4, "|"), 3, 5, "---"))
    assert main(["plan", "check", str(good)]) == 0
    assert capsys.readouterr().out == f"{good}: the plan keeps the rules (0 errors, 0 warnings)\n"
    assert main(["plan", "check", str(warned)]) == 0
    assert capsys.readouterr().out == (
        f"{warned}: warning 8.R1 (two-weaponries): 1 weaponry; two or more make wounded "
        f"players' lives easier and dark moves harder to follow\n"
        f"{warned}: the plan keeps the rules (0 errors, 1 warning)\n"
    )
    assert main(["plan", "check", str(broken)]) == 1
    assert capsys.readouterr().out == (
        f"{broken}: error 8.5 at 4,5: cell 4,5 is cut off: no way in from the rest of the "
        f"labyrinth or out to it without grenades\n"
        f"{broken}: refused (1 error, 0 warnings)\n"
    )


def test_plan_check_takes_the_match_limits_and_players(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.txt"
    good.write_text(BASE)
    assert main(["plan", "check", str(good), "--option", "max_pits=1", "--players", "3"]) == 1
    out = capsys.readouterr().out
    assert "error 7.1 at 2,1: the plan has 2 pits; the match allows at most 1" in out
    assert "warning 5.7 (exits-for-landmines)" in out
    assert main(["plan", "check", str(good), "--option", "landmines=false", "--players", "3",
                 "--option", "max_pits=null"]) == 0
    with pytest.raises(SystemExit):
        main(["plan", "check", str(good), "--option", "max_pitz=1"])
    assert "KEY one of landmines, encephalitis, max_pits" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["plan", "check", str(good), "--option", "max_pits=-1"])
    assert "option 'max_pits' must be between 0 and 3600" in capsys.readouterr().err


def test_plan_check_json_and_unreadable_plans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.txt"
    broken.write_text(BASE.replace("treasure 2,2 fake", "treasure 2,2 true"))
    assert main(["plan", "check", str(broken), "--json"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert found["ok"] is False and found["warnings"][0]["name"] == "fake-treasures"
    assert found["errors"] == [{
        "rule": "8.3", "cell": [3, 3], "name": "true-treasure", "warning": False,
        "message": "a second true treasure (the first is at 2,2); there must be exactly one",
    }]
    broken.write_text(cell_at(BASE, 2, 3, "HW"))
    assert main(["plan", "check", str(broken)]) == 1
    err = capsys.readouterr().err
    assert "8.1: cell 2,3 has more than one type (hospital and weaponry)" in err


# --- the rules page -------------------------------------------------------------------------------

PAGE = Path(__file__).parents[2] / "docs" / "rules" / "labyrinth.md"

# The copies of BASE the page breaks, one rule each, in the page's order.
PAGE_CASES: list[tuple[str, PlanOptions | None]] = [
    (cell_at(BASE, 2, 3, "HW"), None),
    (cell_at(cell_at(BASE, 2, 5, "."), 4, 1, "."), None),
    (BASE.replace("treasure 2,2 fake", "treasure 2,2 true"), None),
    (BASE.replace("treasure 3,3 true", "treasure 4,4 true"), None),
    (border_right(border_right(BASE, 3, 0, "#"), 3, 5, "#"), None),
    (border_below(BASE, 0, 3, "   "), None),
    (border_below(border_right(BASE, 4, 4, "|"), 3, 5, "---"), None),
    (corner(BASE), None),
    (border_below(border_right(BASE, 1, 4, "|"), 1, 4, "---"), None),
    (BASE, PlanOptions(heal_moves=0)),
    (cell_at(BASE, 3, 4, "a3"), None),
    (border_right(BASE, 1, 3, "|"), None),
    (cell_at(BASE, 1, 1, "D"), None),
    (BASE, PlanOptions(max_pits=1)),
    (BASE + "start 1,3\n", None),
]


def test_the_page_quotes_the_validators_own_errors() -> None:
    """The lines are what `daedalus plan check plan.txt` prints (8.6 only through options
    a match's table would refuse before, so from the validator itself)."""
    page = PAGE.read_text()
    assert f"```\n{BASE}```" in page
    quoted = re.findall(r"^      (plan\.txt:.*)$", page, re.MULTILINE)
    said = []
    for text, options in PAGE_CASES:
        try:
            parse_plan(text)
        except PlanError as exc:
            said.append(f"plan.txt:{plan_error_place(exc)} {exc.rule}: {exc.message}")
            continue
        said += [f"plan.txt: {p.text}" for p in check(text, options).errors]
    assert quoted == said
    assert ("`plan.txt: warning 8.R4 (attractor) at 1,4: a delta with one way out (the\nother "
            "sides are walls or rivers flowing in): a strong attractor`") in page
    assert check(border_right(BASE, 1, 4, "|")).warnings[0].text == (
        "warning 8.R4 (attractor) at 1,4: a delta with one way out (the other sides are walls "
        "or rivers flowing in): a strong attractor"
    )
    for option in PLAN_OPTIONS:
        assert f"| `{option.name}` | {json.dumps(option.default)} | {option.description} |" in page


def test_a_long_river_is_followed_once_not_once_a_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host's plan may be one river winding through 900 cells: following the flow from
    every cell to the delta again took time growing with the square of the cells (a 60x60
    snake took half a minute). The flows are followed once now; counted in look-ups of a
    river's next cell, not timed."""
    size = 30
    order = [(r, c) for r in range(1, size + 1)
             for c in (range(1, size + 1) if r % 2 else range(size, 0, -1))]
    kinds: dict[tuple[int, int], CellType] = {}
    for a, b in itertools.pairwise(order):
        direction = direction_between(a, b)
        assert direction is not None
        kinds[a] = River(direction)
    kinds[order[-1]] = DELTA
    kinds.update({order[0]: LAND, order[1]: HOSPITAL, order[2]: WEAPONRY})
    plan = plan_of(kinds, exits=[Exit((1, 1), "up", True), Exit((1, 2), "up", True)],
                   treasures=[Treasure((1, 1), True)])
    looked = 0
    follow = Plan.river_next

    def counting(self: Plan, cell: tuple[int, int]) -> tuple[int, int] | None:
        nonlocal looked
        looked += 1
        return follow(self, cell)

    monkeypatch.setattr(Plan, "river_next", counting)
    report = validate(plan, PlanOptions(max_river_length=size * size))
    assert report.ok, [p.text for p in report.errors]
    assert looked < 40 * size * size
