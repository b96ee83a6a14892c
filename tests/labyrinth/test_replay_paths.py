"""`daedalus replay --picture`: a Labyrinth match's plan with every player's path, up to a
chosen entry (clients/labyrinth_replay.py, reached through clients/replay.print_picture)."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import msgspec
import pytest

from clients.cli import main
from clients.driver import MatchDriver
from clients.labyrinth_replay import picture, trace
from clients.replay import print_picture
from domain.games.labyrinth import rules
from projections.registry import hosted
from projections.seal import public_log

EXAMPLE = (Path(__file__).parents[2] / "domain/games/labyrinth/plans/example.txt").read_text()
SVG = "{http://www.w3.org/2000/svg}"


def played() -> MatchDriver:
    """Two players on the example plan (player 1 moves first with this seed): player 1
    starts at 2,5, walks down to 3,5 and back up, then left into the river 2,4, which
    carries it into the delta 3,4; player 2 starts at 5,2, walks right to 5,3 and 5,4,
    asks its status (which moves nobody), and walks back left to 5,3."""
    d = MatchDriver("labyrinth", options={"players": 2, "plan": EXAMPLE}, seed=bytes(32))
    d.seat_all(["ann", "bob"])
    assert d.ms.game_state.core.order == (0, 1)
    for seat, body in [
        (0, {"type": "start", "cell": [2, 5]}),
        (1, {"type": "start", "cell": [5, 2]}),
        (0, {"type": "move", "move": "go down"}),     # 3,5
        (1, {"type": "move", "move": "go right"}),    # 5,3
        (0, {"type": "move", "move": "go up"}),       # 2,5
        (1, {"type": "move", "move": "go right"}),    # 5,4
        (0, {"type": "move", "move": "go left"}),     # into the river 2,4, carried to the delta 3,4
        (1, {"type": "move", "move": "status"}),      # moves nobody
        (1, {"type": "move", "move": "go left"}),     # 5,3
    ]:
        out = d.propose("command", seat, body)
        assert out.rejection is None, (body, out.rejection)
    return d


def finish(d: MatchDriver) -> None:
    while not d.ms.ended:
        seat = rules.to_act(d.ms.game_state.core)
        assert d.propose("command", seat, {"type": "move", "move": "skip"}).rejection is None


def test_the_paths_are_the_cells_after_each_entry() -> None:
    d = played()
    traced = trace(d.entries)
    assert traced.upto == traced.last == d.entries[-1].seq
    one, two = traced.trails
    assert one.cells == [(2, 5), (3, 5), (2, 5), (3, 4)]
    assert two.cells == [(5, 2), (5, 3), (5, 4), (5, 3)]
    assert (one.name, two.name) == ("ann", "bob")
    # Up to an earlier entry: the paths stop there (entry 5 is the second start choice).
    early = trace(d.entries, upto=7)
    assert early.trails[0].cells == [(2, 5), (3, 5)]
    assert early.trails[1].cells == [(5, 2), (5, 3)]
    assert early.upto == 7


def test_ascii_marks_where_everyone_stands_and_writes_the_paths() -> None:
    d = played()
    text = picture(d.entries, "ascii")
    assert "every player's path up to the end of the log" in text
    assert "D 1" in text  # player 1 in the delta 3,4
    assert next(line for line in text.splitlines() if line.startswith("  5 #")).split()[4:6] == [".", "2"]
    assert "player 1 (ann): at 3,4" in text
    assert "2,5 -> 3,5 -> 2,5 -> 3,4 (jump)" in text  # carried by the river: a jump
    assert "5,2 -> 5,3 -> 5,4 -> 5,3" in text
    earlier = picture(d.entries, "ascii", upto=7)
    assert "up to entry 7 of" in earlier
    assert "3,4 (jump)" not in earlier


def test_svg_draws_each_path_walks_solid_and_jumps_dashed() -> None:
    d = played()
    root = ET.fromstring(picture(d.entries, "svg"))
    paths = {g.get("data-player"): g for g in root.iter(f"{SVG}g") if g.get("class") == "path"}
    assert set(paths) == {"1", "2"}
    lines = {p: [line.get("class") for line in g.iter(f"{SVG}line")] for p, g in paths.items()}
    assert lines == {"1": ["walk", "walk", "jump"], "2": ["walk", "walk", "walk"]}
    jump = next(line for line in paths["1"].iter(f"{SVG}line") if line.get("class") == "jump")
    assert jump.get("stroke-dasharray")
    # the plan is drawn whole under the paths, every cell of it
    cells = [r.get("data-cell") for r in root.iter(f"{SVG}rect") if r.get("data-cell")]
    assert len(cells) == 29
    texts = "".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "player 2 (bob): at 5,3" in texts


def test_walking_out_is_drawn_out_of_the_cell() -> None:
    d = MatchDriver("labyrinth", options={"players": 2, "plan": EXAMPLE}, seed=bytes(32))
    d.seat_all()
    for seat, body in [(0, {"type": "start", "cell": [1, 1]}), (1, {"type": "start", "cell": [5, 2]}),
                       (0, {"type": "move", "move": "go up"})]:
        assert d.propose("command", seat, body).rejection is None
    traced = trace(d.entries)
    steps = traced.trails[0].steps
    assert [(s.cell, s.out) for s in steps] == [((1, 1), None), ((1, 1), "up")]
    assert "1,1 -> out up from 1,1" in picture(d.entries, "ascii")
    assert "outside, left by the up side of 1,1" in picture(d.entries, "ascii")


def test_a_public_log_that_withholds_nothing_is_drawn_the_same() -> None:
    d = played()
    finish(d)
    host = hosted("labyrinth")
    public = public_log(host.rules, host.views, d.entries)
    assert picture(public, "ascii") == picture(d.entries, "ascii")


def test_print_picture_and_the_cli(tmp_path: Path) -> None:
    d = played()
    finish(d)
    out = io.StringIO()
    assert print_picture(d.entries, "ascii", upto=9, out=out)
    assert "up to entry 9 of" in out.getvalue()
    out = io.StringIO()
    assert not print_picture(d.entries, "ascii", upto=999, out=out)
    assert "cannot draw it: no entry 999 in this log" in out.getvalue()
    out = io.StringIO()
    assert not print_picture(d.entries, "png", out=out)
    assert "a picture is ascii or svg, not 'png'" in out.getvalue()
    log = tmp_path / "match.jsonl"
    log.write_bytes(b"".join(msgspec.json.encode(e) + b"\n" for e in d.entries))
    svg = tmp_path / "paths.svg"
    assert main(["replay", str(log), "--picture", "svg", "--upto", "8", "--out", str(svg)]) == 0
    assert ET.fromstring(svg.read_text()).tag == f"{SVG}svg"
    assert main(["replay", str(log), "--upto", "8"]) == 2  # --upto goes with --picture
    assert main(["replay", str(log), "--picture", "ascii", "--round", "2"]) == 2


def test_another_game_has_no_picture() -> None:
    d = MatchDriver("escalator", options={"clock_scale": 0.01}, seed=bytes(32))
    d.seat_all()
    out = io.StringIO()
    assert not print_picture(d.entries, "ascii", out=out)
    assert out.getvalue() == "cannot draw it: escalator has no picture of a match\n"


def test_a_log_that_does_not_fold_is_said_so() -> None:
    d = played()
    entries: list[Any] = list(d.entries)
    entries[3] = msgspec.structs.replace(entries[3], body={"type": "start", "cell": [3, 3]})
    with pytest.raises(ValueError, match="does not fold"):
        trace(entries)


def test_how_players_stand_at_the_entry_drawn() -> None:
    d = MatchDriver("labyrinth", options={"players": 2, "plan": EXAMPLE}, seed=bytes(32))
    d.seat_all(["ann", "bob"])
    for seat, move in [(0, "shoot right, go up"), (1, "go left"), (0, "shoot down, go up")]:
        if d.ms.game_state.core.phase == "start":
            assert d.propose("command", 0, {"type": "start", "cell": [3, 4]}).rejection is None
            assert d.propose("command", 1, {"type": "start", "cell": [3, 5]}).rejection is None
        assert d.propose("command", seat, {"type": "move", "move": move}).rejection is None
    assert d.ms.ended
    text = picture(d.entries, "ascii")
    assert "player 1 (ann): at 3,4, carrying a landmine (won)" in text
    assert "player 2 (bob): at 3,4 (dead)" in text
    assert "D 1,2" in text
    wounded = picture(d.entries, "ascii", upto=6)  # after the first shot
    assert "player 2 (bob): at 3,5 (wounded)" in wounded
