"""The plan generator: every plan it draws keeps section 8's rules and recommendations (no
warning but those the options make unavoidable), within the 7.1 limits it is given; the
same seed draws the same plan; options no plan can meet are a clear error."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clients.cli import main
from domain.games.labyrinth.generate import (
    GenerateOptions,
    GenerationError,
    expected_warnings,
    generate,
)
from domain.games.labyrinth.pictures import ascii_picture, svg_picture
from domain.games.labyrinth.plan import Delta, Hospital, Pit, Plan, River, Weaponry
from domain.games.labyrinth.plan_text import parse_plan, render_plan
from domain.games.labyrinth.validate import PlanOptions, crossing, on_outline, validate
from domain.rng import Rng


def draw(options: GenerateOptions, seed: int) -> Plan:
    return generate(options, Rng(seed.to_bytes(8, "big"), "plan"))


def assert_follows_section_8(plan: Plan, options: GenerateOptions) -> None:
    report = validate(plan, options.limits, options.players)
    assert report.ok, [p.text for p in report.errors]
    unexpected = report.names() - expected_warnings(options)
    assert not unexpected, [p.text for p in report.warnings]
    assert plan.rows == options.rows and plan.columns == options.columns
    assert parse_plan(render_plan(plan)) == plan


sizes = st.integers(4, 9)


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    rows=sizes,
    columns=sizes,
    players=st.integers(1, 4),
    repeat=st.booleans(),
    corners=st.booleans(),
)
def test_every_plan_drawn_follows_the_rules_and_recommendations(
    seed: int, rows: int, columns: int, players: int, repeat: bool, corners: bool
) -> None:
    if not corners and min(rows, columns) < 5:
        corners = True
    options = GenerateOptions(rows=rows, columns=columns, players=players, repeat=repeat,
                              corners=corners)
    plan = draw(options, seed)
    assert_follows_section_8(plan, options)
    assert not expected_warnings(options)
    fakes = sum(1 for t in plan.treasures if not t.is_true)
    assert 1 <= fakes <= players
    assert len(plan.exits) > players  # 5.7: landmines are on by default
    assert any(e.open for e in plan.exits)


limits = st.builds(
    PlanOptions,
    landmines=st.booleans(),
    encephalitis=st.booleans(),
    max_pits=st.none() | st.integers(0, 5),
    max_pit_loops=st.none() | st.integers(0, 2),
    max_loop_length=st.none() | st.integers(2, 4),
    max_rivers=st.none() | st.integers(0, 3),
    max_river_branches=st.none() | st.integers(1, 2),
    max_river_length=st.none() | st.integers(2, 5),
    weaponries=st.none() | st.integers(1, 3),
    hospitals=st.none() | st.integers(1, 3),
    treasures=st.none() | st.integers(1, 5),
    inner_walls=st.none() | st.integers(5, 20),
    exits=st.none() | st.integers(2, 5),
    closed_exits=st.booleans(),
    open_exit=st.booleans(),
    crossings=st.booleans(),
)


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**32), rows=st.integers(6, 8), columns=st.integers(6, 8),
       players=st.integers(1, 5), limits=limits, repeat=st.booleans())
def test_plans_keep_within_the_match_limits(
    seed: int, rows: int, columns: int, players: int, limits: PlanOptions, repeat: bool
) -> None:
    options = GenerateOptions(rows=rows, columns=columns, players=players, limits=limits,
                              repeat=repeat)
    plan = draw(options, seed)
    assert_follows_section_8(plan, options)
    if not limits.closed_exits:
        assert all(e.open for e in plan.exits)


def test_the_same_seed_draws_the_same_plan_and_others_differ() -> None:
    options = GenerateOptions()
    first = draw(options, 7)
    assert draw(options, 7) == first
    assert render_plan(draw(options, 7)) == render_plan(first)
    others = {render_plan(draw(options, seed)) for seed in range(20)}
    assert len(others) == 20
    other_label = generate(options, Rng((7).to_bytes(8, "big"), "other"))
    assert other_label != first


def test_the_default_plan_has_what_section_8_recommends() -> None:
    for seed in range(30):
        plan = draw(GenerateOptions(), seed)
        assert len(plan.cells_of(Weaponry)) >= 2 and len(plan.cells_of(Hospital)) >= 2
        assert plan.cells_of(River) and plan.cells_of(Pit)
        for loop in plan.pit_loops().values():
            assert any(on_outline(plan, c) for c in loop)
        for source in plan.cells_of(River):
            if not plan.upstream(source):
                assert on_outline(plan, source)


def twin(cell: tuple[int, int]) -> tuple[int, int]:
    """The cell a half-turn away in a plan of 6 rows and 5 columns."""
    return (7 - cell[0], 6 - cell[1])


def test_a_repeating_layout_has_twins_a_half_turn_apart() -> None:
    for seed in range(20):
        plan = draw(GenerateOptions(rows=6, columns=5, players=3), seed)

        for kind in (Weaponry, Hospital):
            cells = set(plan.cells_of(kind))
            assert {twin(c) for c in cells} == cells
        pits = set(plan.cells_of(Pit))
        assert {twin(c) for c in pits} == pits
        true = plan.true_treasures()[0]
        assert plan.treasure_at(twin(true)) is not None
        assert {(twin(w.a), twin(w.b)) for w in plan.walls} == {(w.b, w.a) for w in plan.walls}


def test_a_plan_without_rivers_or_pits_when_the_match_has_none() -> None:
    options = GenerateOptions(limits=PlanOptions(max_rivers=0, max_pits=0))
    assert expected_warnings(options) == {"no-rivers-or-pits"}
    plan = draw(options, 3)
    assert not plan.cells_of(River) and not plan.cells_of(Pit) and not plan.cells_of(Delta)
    assert_follows_section_8(plan, options)


def test_crossings_when_the_match_wants_them() -> None:
    for seed in range(10):
        options = GenerateOptions(rows=5, columns=6, limits=PlanOptions(crossings=True))
        plan = draw(options, seed)
        assert_follows_section_8(plan, options)
        assert crossing(plan, "left", "right") and crossing(plan, "up", "down")


def test_the_common_start_cell_is_land_without_a_treasure() -> None:
    plan = draw(GenerateOptions(common_start=True), 5)
    assert plan.start is not None and plan.treasure_at(plan.start) is None
    assert type(plan.type_at(plan.start)).__name__ == "Land"


@pytest.mark.parametrize(
    "options, fragment",
    [
        (GenerateOptions(rows=2), "rows: 2; a generated plan has 3 to 30"),
        (GenerateOptions(columns=31), "columns: 31"),
        (GenerateOptions(players=0), "players: 0"),
        (GenerateOptions(rows=4, columns=4, limits=PlanOptions(weaponries=9, hospitals=9)),
         "9 weaponries, 9 hospitals and 2 treasures on land do not fit in 16 cells"),
        (GenerateOptions(rows=3, columns=3, limits=PlanOptions(exits=9)),
         "9 exits, and the outline has 8 cells"),
        (GenerateOptions(rows=3, columns=3), "no plan of 3x3 cells fits these options after 40"),
        (GenerateOptions(limits=PlanOptions(heal_moves=0)), "(8.6)"),
        (GenerateOptions(rows=8, columns=8, limits=PlanOptions(inner_walls=70)),
         "70 inner walls do not fit in a plan of 8x8 cells: of its 112 borders between cells, "
         "59 at least must be open for every cell to be within reach (8.5)"),
        (GenerateOptions(limits=PlanOptions(inner_walls=20)),
         "20 inner walls do not fit in a plan of 5x5 cells where every cell stays within reach "
         "(8.5): 8 draws took"),
    ],
)
def test_impossible_options_are_a_clear_error(options: GenerateOptions, fragment: str) -> None:
    with pytest.raises(GenerationError) as caught:
        draw(options, 1)
    assert fragment in str(caught.value)


# --- daedalus plan generate ----------------------------------------------------------------------


def test_plan_generate_writes_the_plan_and_its_picture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, svg = tmp_path / "p.txt", tmp_path / "p.svg"
    assert main(["plan", "generate", "--seed", "1", "--out", str(out), "--svg", str(svg)]) == 0
    plan = parse_plan(out.read_text())
    assert plan.name == "generated: seed 1, 5x5, 2 players"
    assert plan == msgspec.structs.replace(generate(GenerateOptions(), Rng(b"1", "setup")),
                                           name=plan.name)
    assert capsys.readouterr().out == ascii_picture(plan)
    assert svg.read_text() == svg_picture(plan)
    ET.fromstring(svg.read_text())
    assert main(["plan", "check", str(out)]) == 0
    assert "the plan keeps the rules (0 errors, 0 warnings)" in capsys.readouterr().out


def test_plan_generate_options_reach_the_generator(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "generate", "--seed", "x", "--size", "7x4", "--players", "3", "--no-repeat",
            "--option", "encephalitis=false", "--option", "max_pits=0", "--common-start"]
    assert main(args) == 0
    plan = parse_plan(capsys.readouterr().out)
    options = GenerateOptions(rows=4, columns=7, players=3, repeat=False, common_start=True,
                              limits=PlanOptions(encephalitis=False, max_pits=0))
    assert plan == msgspec.structs.replace(generate(options, Rng(b"x", "setup")), name=plan.name)
    assert plan.name == ("generated: seed x, 7x4, 3 players, encephalitis=false, max_pits=0, "
                         "no repeat, common start")
    match_seed = bytes(range(32))
    assert main(["plan", "generate", "--seed", match_seed.hex()]) == 0
    plan = parse_plan(capsys.readouterr().out)
    assert plan.squares == generate(GenerateOptions(), Rng(match_seed, "setup")).squares


def test_plan_generate_refuses_what_cannot_be_drawn(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "generate", "--seed", "1", "--size", "3x3"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("daedalus plan generate: no plan of 3x3 cells fits")
    page = (Path(__file__).parents[2] / "docs" / "rules" / "labyrinth.md").read_text()
    assert f"\n    {err.strip()}\n" in page  # the page quotes it
    with pytest.raises(SystemExit):
        main(["plan", "generate", "--size", "5by5"])
    assert "expected WxH, such as 5x4 (columns x rows)" in capsys.readouterr().err
    assert main(["plan", "generate"]) == 0
    assert "daedalus plan generate: --seed " in capsys.readouterr().err
