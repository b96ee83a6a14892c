"""`daedalus plan show`: the ASCII picture, the SVG and JSON files, and clear errors."""

from __future__ import annotations

import argparse
import io
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from clients.cli import build_parser, main
from domain.games.labyrinth.pictures import ascii_picture, svg_picture
from domain.games.labyrinth.plan_text import parse_plan, plan_from_json, render_plan

EXAMPLE = Path(__file__).parents[2] / "domain" / "games" / "labyrinth" / "plans" / "example.txt"


def test_show_prints_the_picture_and_writes_svg_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = parse_plan(EXAMPLE.read_text())
    svg, js = tmp_path / "p.svg", tmp_path / "p.json"
    assert main(["plan", "show", str(EXAMPLE), "--svg", str(svg), "--json", str(js)]) == 0
    out = capsys.readouterr()
    assert out.out == ascii_picture(plan) and out.err == ""
    assert svg.read_text() == svg_picture(plan)
    ET.fromstring(svg.read_text())
    assert plan_from_json(js.read_text()) == plan
    # The JSON file is a plan file too.
    assert main(["plan", "show", str(js)]) == 0
    assert capsys.readouterr().out == ascii_picture(plan)


def test_show_svg_to_standard_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "show", str(EXAMPLE), "--svg", "-"]) == 0
    assert capsys.readouterr().out == svg_picture(parse_plan(EXAMPLE.read_text()))


def test_show_reports_where_a_plan_is_wrong(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = render_plan(parse_plan(EXAMPLE.read_text())).replace("  4 # .   H", "  4 # .  HE")
    bad = tmp_path / "bad.txt"
    bad.write_text(text)
    assert main(["plan", "show", str(bad)]) == 1
    out = capsys.readouterr()
    line = text.splitlines().index(next(x for x in text.splitlines() if x.startswith("  4 #"))) + 1
    assert out.out == ""
    assert out.err == (
        f"{bad}:{line}:10: 8.1: cell 4,2 has more than one type (hospital and encephalitis); a cell has one type\n"
    )
    assert main(["plan", "show", str(tmp_path / "missing.txt")]) == 1
    assert "daedalus plan show: cannot read" in capsys.readouterr().err


def test_plan_needs_a_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["plan"])
    assert exited.value.code == 2
    assert "PLAN_COMMAND" in capsys.readouterr().err


def test_plan_show_flags_say_what_they_do_and_their_default() -> None:
    parser = build_parser()
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    plan = top.choices["plan"]
    group = next(a for a in plan._actions if isinstance(a, argparse._SubParsersAction))
    assert group.help
    show = group.choices["show"]
    for action in show._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help
        if action.option_strings:
            assert "default" in action.help, action.option_strings
    show.format_help()


def test_show_reads_standard_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    text = EXAMPLE.read_text()
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["plan", "show", "-"]) == 0
    assert capsys.readouterr().out == ascii_picture(parse_plan(text))
    monkeypatch.setattr("sys.stdin", io.StringIO("grid:\n"))
    assert main(["plan", "show", "-"]) == 1
    assert capsys.readouterr().err.startswith("-:")
