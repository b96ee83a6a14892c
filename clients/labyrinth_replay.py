"""A Labyrinth match's plan with every player's path, for an auditor (`daedalus replay --picture`).

The log is folded through the engine (domain.engine) up to a chosen entry, and after
every entry each player's cell is read from the full view (projections/labyrinth.py,
`full.players[].cell`): a player's path is the cells it stood on, in order, one cell for
each entry that moved it. A move that carries a player further than the next cell (a
river, a pit, a new cell ordered) is one step of the path, drawn as a jump (dashed in
the SVG). The picture is the plan as it was at that entry (walls blown so far are gone),
drawn by domain/games/labyrinth/pictures.py: ASCII with each player's number where it
stands and its path written out under the legend, or SVG with the paths as coloured
lines from a ring at the start cell to a disc at the cell reached.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from xml.sax.saxutils import escape

from domain.games.labyrinth.pictures import CELL, ascii_picture, svg_picture
from domain.games.labyrinth.plan import Cell, Plan, cell_name
from domain.games.labyrinth.plan_text import parse_plan

PictureKind = Literal["ascii", "svg"]
PICTURE_KINDS: tuple[PictureKind, ...] = ("ascii", "svg")

COLOURS = ("#d62728", "#7b2cbf", "#ff8c00", "#e6007e", "#00897b")
"""Each player's colour in the SVG, player 1 first: none of them the plan's blues (rivers,
deltas), greens (encephalitis, open exits) or browns (walls, pits)."""
PAD = 46
"""The SVG's margin around the grid, as pictures.svg_picture draws it."""


@dataclass
class Step:
    """A cell a player stood on from the entry `seq` on; `out`: the side it walked out
    of that cell by, while it is outside the labyrinth."""

    seq: int
    cell: Cell
    out: str | None = None


@dataclass
class Trail:
    """One player's path up to the chosen entry, and how it stands there."""

    seat: int
    name: str | None
    steps: list[Step] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    """The player in the full view at the chosen entry (`full.players[seat]`)."""
    standing: str = "playing"
    """What everyone has been told of it there: playing, dead, lost or won."""

    @property
    def cells(self) -> list[Cell]:
        return [s.cell for s in self.steps]


@dataclass
class Traced:
    """The match folded up to entry `upto` (of `last`, the log's last entry)."""

    match: str
    plan: Plan
    trails: list[Trail]
    upto: int
    last: int
    ended: bool


def _folded(entries: Sequence[Any]) -> list[Any]:
    """The match state after each entry but the first: folded by the engine, or, for a
    public log (log version 3 or 4 without its audit key), by projections.seal.public_history,
    which must find that it withholds nothing. ValueError if the log does not fold."""
    from domain import engine
    from projections.registry import GAMES
    from projections.seal import is_public_log, public_history

    if is_public_log(entries):
        checked, logged = public_history({n: (h.rules, h.views) for n, h in GAMES.items()}, list(entries))
        if not checked.ok:
            raise ValueError(f"the log does not verify: {checked.failure}")
        if checked.withheld:
            raise ValueError("this public log withholds what the rules keep secret: a picture needs "
                             "the log in clear (--unseal with the match's audit key)")
        return [item.after for item in logged]
    host = GAMES.get(str(entries[0].body.get("game")) if isinstance(entries[0].body, dict) else "")
    if host is None:
        raise ValueError("not a log of a game hosted here")
    try:
        ms = engine.open_match(host.rules, entries[0])
        states = []
        for entry in entries[1:]:
            ms, _ = engine.apply(ms, entry)
            states.append(ms)
    except engine.IntegrityError as exc:
        raise ValueError(f"the log does not fold: {exc}") from None
    return states


def trace(entries: Sequence[Any], upto: int | None = None) -> Traced:
    """Fold a Labyrinth log up to entry `upto` (None: the whole log), collecting each
    player's cell after every entry from the auditor's view. ValueError if the log does
    not fold, is not a Labyrinth match's, or has no such entry."""
    from projections.contract import AUDITOR
    from projections.registry import hosted

    if not entries:
        raise ValueError("the log is empty")
    body = entries[0].body if isinstance(entries[0].body, dict) else {}
    if body.get("game") != "labyrinth":
        raise ValueError(f"not a Labyrinth match: {body.get('game')}")
    last = entries[-1].seq
    if upto is not None and not 1 <= upto <= last:
        raise ValueError(f"no entry {upto} in this log: its entries are 1 to {last}")
    views = hosted("labyrinth").views
    trails: list[Trail] = []
    states = [ms for ms in _folded(entries) if upto is None or ms.seq <= upto]
    if not states:
        raise ValueError("nothing is drawn before the match starts (entries 1 and after: --upto 2 or more)")
    for ms in states:
        if not ms.started:
            continue
        seen = views.view(ms, AUDITOR)
        full = seen["full"]
        if not trails:
            trails = [Trail(s, ms.names[s] if s < len(ms.names) else None) for s in range(len(full["players"]))]
        for trail, player, told in zip(trails, full["players"], seen["players"], strict=True):
            trail.state = player
            trail.standing = str(told.get("standing", "playing"))
            cell = player.get("cell")
            if cell is None:
                continue
            out = player.get("outside")
            step = Step(ms.seq, (int(cell[0]), int(cell[1])), out["side"] if out else None)
            if not trail.steps or (trail.steps[-1].cell, trail.steps[-1].out) != (step.cell, step.out):
                trail.steps.append(step)
    ms = states[-1]
    plan = parse_plan(views.view(ms, AUDITOR)["full"]["plan_text"])
    return Traced(match=ms.match_id, plan=plan, trails=trails, upto=ms.seq, last=last, ended=ms.ended)


def _neighbours(a: Cell, b: Cell) -> bool:
    return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1


def _who(trail: Trail) -> str:
    return f"player {trail.seat + 1}" + (f" ({trail.name})" if trail.name else "")


def _standing(trail: Trail) -> str:
    p = trail.state
    if not p:
        return "not started"
    out = p.get("outside")
    where = f"at {cell_name(tuple(p['cell']))}" if p.get("cell") is not None else (
        "out of the labyrinth" if trail.steps else "not placed yet")
    if out:
        where = f"outside, left by the {out['side']} side of {cell_name(tuple(out['cell']))}"
    alive = p.get("alive", True)
    health = [w for w, on in (("won", trail.standing == "won"), ("dead", not alive),
                              ("lost", p.get("lost")), ("wounded", alive and p.get("wounded")),
                              ("infected", alive and p.get("infected"))) if on]
    carries = f", carrying a {p['carries']}" if p.get("carries") else ""
    return where + carries + (f" ({', '.join(health)})" if health else "")


def path_words(trail: Trail) -> str:
    """A path in words: `2,5 -> 3,4 (jump) -> 3,5`; a jump is a step to a cell that is not a
    neighbour (carried by a river, fallen through a pit, a new cell ordered)."""
    parts: list[str] = []
    for n, step in enumerate(trail.steps):
        text = f"out {step.out} from {cell_name(step.cell)}" if step.out is not None else cell_name(step.cell)
        if n and _jump(trail.steps[n - 1], step):
            text += " (jump)"
        parts.append(text)
    return " -> ".join(parts) if parts else "no cell yet"


def heading(traced: Traced) -> str:
    at = "the end of the log" if traced.upto == traced.last else f"entry {traced.upto} of {traced.last}"
    return f"match {traced.match}: the plan and every player's path up to {at}"


def ascii_paths(traced: Traced) -> str:
    """The plan in text, each player's number where it stands, and the paths in words."""
    here: dict[Cell, list[str]] = {}
    for trail in traced.trails:
        p = trail.state
        if p.get("cell") is not None and not p.get("outside"):
            here.setdefault((p["cell"][0], p["cell"][1]), []).append(str(trail.seat + 1))
    marks = {cell: ",".join(seats) for cell, seats in here.items()}
    lines = [heading(traced), "", ascii_picture(traced.plan, marks).rstrip("\n"), ""]
    lines.append("players (the numbers on the plan), and their paths (a jump: carried, fallen or sent):")
    for trail in traced.trails:
        lines.append(f"  {_who(trail)}: {_standing(trail)}")
        lines.append(f"    {path_words(trail)}")
    return "\n".join(lines) + "\n"


def _centre(cell: Cell) -> tuple[float, float]:
    return PAD + (cell[1] - 0.5) * CELL, PAD + (cell[0] - 0.5) * CELL


def _f(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


_OUTWARD = {"up": (0, -1), "right": (1, 0), "down": (0, 1), "left": (-1, 0)}


def _point(step: Step) -> tuple[float, float]:
    """Where a step is drawn: its cell's centre, or beyond the side it walked out by."""
    x, y = _centre(step.cell)
    if step.out is None:
        return x, y
    dx, dy = _OUTWARD[step.out]
    return x + dx * CELL * 0.85, y + dy * CELL * 0.85


def _jump(before: Step, after: Step) -> bool:
    """Whether a step is not a walk to the next cell (or out of a cell, or back in)."""
    if before.cell == after.cell:
        return False
    return after.out is not None or not _neighbours(before.cell, after.cell)


def _overlay(traced: Traced) -> list[str]:
    """Each player's path: walked steps solid, jumps dashed, a ring at its first cell and a
    numbered disc where it stands; offset a little per player so paths on one cell part."""
    out: list[str] = ['<g class="paths">']
    for trail in traced.trails:
        colour = COLOURS[trail.seat % len(COLOURS)]
        shift = (trail.seat - (len(traced.trails) - 1) / 2) * 4
        points = [(x + shift, y + shift) for x, y in (_point(s) for s in trail.steps)]
        title = escape(f"{_who(trail)}: {path_words(trail)}")
        out.append(f'<g class="path" data-player="{trail.seat + 1}"><title>{title}</title>')
        for n in range(1, len(points)):
            (x1, y1), (x2, y2) = points[n - 1], points[n]
            jump = _jump(trail.steps[n - 1], trail.steps[n])
            dash = ' stroke-dasharray="6 5"' if jump else ""
            out.append(f'<line class="{"jump" if jump else "walk"}" x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" '
                       f'y2="{_f(y2)}" stroke="{colour}" stroke-width="{2.5 if jump else 4}" '
                       f'stroke-opacity="0.85" stroke-linecap="round"{dash}/>')
        if points:
            x, y = points[0]
            out.append(f'<circle class="first" cx="{_f(x)}" cy="{_f(y)}" r="8" fill="#ffffff" fill-opacity="0.7" '
                       f'stroke="{colour}" stroke-width="3"/>')
            x, y = points[-1]
            x, y = x + shift * 1.5, y + shift * 1.5
            dead = not trail.state.get("alive", True)
            out.append(f'<circle class="reached" cx="{_f(x)}" cy="{_f(y)}" r="11" '
                       f'fill="{"#444444" if dead else colour}" stroke="{colour}" stroke-width="3"/>')
            out.append(f'<text x="{_f(x)}" y="{_f(y + 4.5)}" font-size="13" font-weight="bold" fill="#ffffff" '
                       f'text-anchor="middle">{trail.seat + 1}</text>')
        out.append("</g>")
    out.append("</g>")
    return out


def _key(traced: Traced, top: float, width: float) -> list[str]:
    """Under the picture: the heading, and each player's colour, where it stands and its path."""
    out = [f'<text x="10" y="{_f(top + 16)}" font-size="13" font-weight="bold">{escape(heading(traced))}</text>',
           f'<text x="10" y="{_f(top + 34)}" font-size="12" fill="#555555">ring: the first cell · disc: the '
           'cell reached (grey: dead) · solid: a walk to the next cell</text>',
           f'<text x="10" y="{_f(top + 50)}" font-size="12" fill="#555555">dashed: a jump (carried by a river, '
           'fallen through a pit, a new cell ordered)</text>',
           f'<text x="10" y="{_f(top + 66)}" font-size="12" fill="#555555">the walls as they are at that entry; '
           'treasures and items as they lay at the start</text>']
    y = top + 88
    for trail in traced.trails:
        colour = COLOURS[trail.seat % len(COLOURS)]
        out.append(f'<line x1="10" y1="{_f(y - 4)}" x2="34" y2="{_f(y - 4)}" stroke="{colour}" stroke-width="4"/>')
        text = f"{_who(trail)}: {_standing(trail)}"
        out.append(f'<text x="42" y="{_f(y)}" font-size="12" font-weight="bold">{escape(text)}</text>')
        y += 16
        for chunk in _wrap(path_words(trail), int((width - 50) / 6.6)):
            out.append(f'<text x="42" y="{_f(y)}" font-size="11" fill="#333333">{escape(chunk)}</text>')
            y += 14
        y += 8
    return out


def _key_height(traced: Traced, width: float) -> float:
    lines = sum(len(_wrap(path_words(t), int((width - 50) / 6.6))) for t in traced.trails)
    return 88 + len(traced.trails) * 24 + lines * 14


def _wrap(text: str, width: int) -> list[str]:
    words, lines, line = text.split(" "), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


def svg_paths(traced: Traced) -> str:
    """The plan as SVG with every player's path drawn over it and a key under it: the
    plan's picture (pictures.svg_picture) nested whole, the paths drawn inside it in its
    coordinates, the key below it."""
    plan_svg, _, _ = svg_picture(traced.plan).rpartition("</svg>")
    width, height = _size(plan_svg)
    extra = _key_height(traced, width)
    total = height + extra
    return "\n".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" height="{_f(total)}" '
        f'viewBox="0 0 {_f(width)} {_f(total)}" font-family="sans-serif">',
        f'<rect x="0" y="0" width="{_f(width)}" height="{_f(total)}" fill="#ffffff"/>',
        plan_svg.rstrip("\n"), *_overlay(traced), "</svg>",
        f'<g transform="translate(0,{_f(height)})">', *_key(traced, 0, width), "</g>",
        "</svg>",
    ]) + "\n"


def _size(svg_open: str) -> tuple[float, float]:
    """The width and height of the `<svg ...>` opening tag svg_picture writes."""
    width = re.search(r'width="([\d.]+)"', svg_open)
    height = re.search(r'height="([\d.]+)"', svg_open)
    if width is None or height is None:
        raise ValueError("the plan's SVG has no size")
    return float(width.group(1)), float(height.group(1))


def picture(entries: Sequence[Any], kind: str, upto: int | None = None) -> str:
    """`daedalus replay --picture`: the plan with every player's path up to entry `upto`,
    as `kind` (ascii or svg). ValueError saying what is wrong."""
    if kind not in PICTURE_KINDS:
        raise ValueError(f"a picture is {' or '.join(PICTURE_KINDS)}, not {kind!r}")
    traced = trace(entries, upto)
    return ascii_paths(traced) if kind == "ascii" else svg_paths(traced)
