"""docs/rules/labyrinth.md shows the example plan, its ASCII picture and its SVG as the code
makes them today."""

from __future__ import annotations

import re
from pathlib import Path

from clients.plan_cli import plan_error_place
from domain.games.labyrinth.pictures import ascii_picture, svg_picture
from domain.games.labyrinth.plan import PlanError
from domain.games.labyrinth.plan_text import parse_plan

ROOT = Path(__file__).parents[2]
PAGE = ROOT / "docs" / "rules" / "labyrinth.md"
EXAMPLE = ROOT / "domain" / "games" / "labyrinth" / "plans" / "example.txt"


def blocks() -> list[str]:
    return re.findall(r"^```[a-z]*\n(.*?)^```$", PAGE.read_text(), re.DOTALL | re.MULTILINE)


def test_page_shows_the_example_file_and_its_ascii_picture() -> None:
    found = blocks()
    text = EXAMPLE.read_text()
    assert text in found
    assert ascii_picture(parse_plan(text), {(2, 5): "1", (5, 2): "2"}) in found


def test_page_svg_is_the_example_picture() -> None:
    plan = parse_plan(EXAMPLE.read_text())
    assert (PAGE.parent / "labyrinth-example.svg").read_text() == svg_picture(plan)
    assert "(labyrinth-example.svg)" in PAGE.read_text()


GOOD = """\
grid:
    1   2
  +---+###+
1 # .   H #
  +###+###+
"""
BAD = [
    GOOD.replace("1 # .   H #", "1 # .   X #"),
    GOOD.replace("+###+###+", "+###-###+"),
    GOOD.replace("+---+###+\n1", "+-#-+###+\n1"),
    GOOD + "\ntreasure 1,3 true\n",
    GOOD + "\nitems 1,1: 2 bullets, 3 knives\n",
    GOOD.replace("1 # .   H #", "1 # .  HW #"),
]


def test_page_error_examples_are_real_messages() -> None:
    """The error lines the page quotes are what `daedalus plan show bad.txt` says."""
    quoted = re.findall(r"^    (bad\.txt:.*)$", PAGE.read_text(), re.MULTILINE)
    said = []
    for text in BAD:
        try:
            parse_plan(text)
        except PlanError as exc:
            rule = f"{exc.rule}: " if exc.rule else ""
            said.append(f"bad.txt:{plan_error_place(exc)} {rule}{exc.message}")
    assert quoted == said
