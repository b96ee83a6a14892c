"""Pictures of a Labyrinth plan: ASCII for the terminal and tests, SVG for browsers.

Both are pure functions of the plan returning a string (docs/rules/labyrinth.md, "Pictures").

`ascii_picture(plan, marks=None)` draws the grid as the text format does (`#` an
indestructible wall, `-` and `|` a destructible one, a gap an open exit), with wider cells
that hold the type's code and a mark for what lies there: `$` the true treasure, `*` a
fake one, `+` items, `@` the start cell of option 7.6, then any marks the caller gives
(players, say). A legend under the grid lists the marks used, every exit and the items.

`svg_picture(plan, marks=None, paths=None)` draws one square per cell, coloured by type
with a symbol: land sand, hospital pale pink with a red cross, weaponry steel with crossed
lines, encephalitis green with a mite, pit dark brown with its loop letter and place,
river blue with an arrow along the flow (arrows join cell to cell), delta deep blue with
a triangle. Walls: a destructible wall is a brown line, an indestructible one a thick
black line; on the outline, an indestructible wall is black, a closed exit an orange
dashed line and an open exit a gap with a green arrow pointing out. A true treasure is a
gold star, a fake one a grey outlined star; items are a small count (`2b 1g 1m`: bullets,
grenades, landmines); the start cell a ring. `marks` puts labels in cells (players'
positions) and `paths` draws polylines through cells (players' paths), each its own colour.
Rows and columns are numbered as the text format numbers them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from xml.sax.saxutils import escape

from domain.games.labyrinth.plan import (
    DIRECTIONS,
    OFFSETS,
    Cell,
    Delta,
    Direction,
    Encephalitis,
    Hospital,
    Items,
    Land,
    Pit,
    Plan,
    River,
    Side,
    Weaponry,
    cell_name,
    type_name,
)
from domain.games.labyrinth.plan_text import type_code

# --- ASCII -------------------------------------------------------------------------------------

_ASCII_MARKS = (("$", "the true treasure"), ("*", "a fake treasure"), ("+", "items"), ("@", "the start cell (7.6)"))


def _items_words(pile: Items) -> str:
    parts = []
    for count, word in ((pile.bullets, "bullet"), (pile.grenades, "grenade"), (pile.landmines, "landmine")):
        if count:
            parts.append(f"{count} {word}" + ("" if count == 1 else "s"))
    return ", ".join(parts)


def _ascii_content(plan: Plan, cell: Cell, marks: Mapping[Cell, str]) -> str:
    text = type_code(plan.type_at(cell))
    treasure = plan.treasure_at(cell)
    if treasure is not None:
        text += "$" if treasure.is_true else "*"
    if plan.items_at(cell) is not None:
        text += "+"
    if plan.start == cell:
        text += "@"
    mark = marks.get(cell, "")
    return f"{text} {mark}" if mark else text


def ascii_picture(plan: Plan, marks: Mapping[Cell, str] | None = None) -> str:
    """The plan drawn in text, with what lies on each cell and a legend (lines end in '\\n')."""
    marks = marks or {}
    contents = {cell: _ascii_content(plan, cell, marks) for cell in plan.cells}
    inner = max(3, *(len(text) for text in contents.values()))
    width = inner + 2
    rows, columns = plan.rows, plan.columns
    label = len(str(rows)) + 2
    margin = " " * (label + 1)
    lines = [(margin + "".join(" " + f"{c:^{width}}" for c in range(1, columns + 1))).rstrip()]
    for r in range(0, rows + 1):
        chars: list[str] = []
        for c in range(0, columns + 1):
            around = [(r, c), (r, c + 1), (r + 1, c), (r + 1, c + 1)]
            chars.append("+" if any(cell in plan for cell in around) else " ")
            if c < columns:
                chars.append(_border(plan, (r, c + 1), (r + 1, c + 1), "down") * width)
        lines.append((margin + "".join(chars)).rstrip())
        if r == rows:
            break
        row = r + 1
        chars = []
        for c in range(0, columns + 1):
            code = _border(plan, (row, c), (row, c + 1), "right")
            chars.append("|" if code == "-" else code)
            if c < columns:
                cell = (row, c + 1)
                chars.append(f" {contents[cell]:<{inner}} " if cell in plan else " " * width)
        lines.append((f"{row:>{label}} " + "".join(chars)).rstrip())
    legend = _ascii_legend(plan, marks)
    return "\n".join(lines + legend) + "\n"


def _border(plan: Plan, before: Cell, after: Cell, direction: Direction) -> str:
    if before in plan:
        kind = plan.side(before, direction)
    elif after in plan:
        kind = plan.side(after, "up" if direction == "down" else "left")
    else:
        return " "
    if kind in (Side.PASSAGE, Side.OPEN_EXIT):
        return " "
    return "-" if kind.destructible else "#"


def _ascii_legend(plan: Plan, marks: Mapping[Cell, str]) -> list[str]:
    used = "".join(_ascii_content(plan, cell, {}) for cell in plan.cells)
    keys = [f"{mark} {meaning}" for mark, meaning in _ASCII_MARKS if mark in used]
    lines = [""]
    lines.append(
        "cells: . land  H hospital  W weaponry  E encephalitis  D delta  > < ^ v river  a1 pit 1 of loop a"
    )
    lines.append("walls: # indestructible  - | destructible  (on the outline: - | a closed exit, a gap an open exit)")
    if keys:
        lines.append("marks: " + "  ".join(keys))
    exits = [f"{cell_name(e.cell)} {e.side} ({'open' if e.open else 'closed'})" for e in plan.exits]
    lines.append("exits: " + (", ".join(exits) if exits else "none"))
    for pile in plan.items:
        lines.append(f"items at {cell_name(pile.cell)}: {_items_words(pile)}")
    if plan.name:
        lines.insert(1, f"plan: {plan.name}")
    return lines


# --- SVG ---------------------------------------------------------------------------------------

CELL = 56
"""The side of a cell in the SVG, in user units."""
_PAD = 46  # room for the row and column numbers and the exits' arrows

FILL: Mapping[type, str] = {
    Land: "#f1e4c3",
    Hospital: "#fbe1e4",
    Weaponry: "#b7c3cf",
    Encephalitis: "#b9dc8c",
    Pit: "#6b4a33",
    River: "#9fd0f5",
    Delta: "#3d7fc4",
}
_WALL = "#7a4a21"
_SOLID = "#111111"
_CLOSED = "#e07b00"
_OPEN = "#1d9a3c"
_PATH_COLOURS = ("#d62728", "#9467bd", "#17becf", "#ff7f0e", "#2ca02c", "#8c564b")


def _f(x: float) -> str:
    """A coordinate as short, exact text."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _centre(cell: Cell) -> tuple[float, float]:
    row, column = cell
    return _PAD + (column - 0.5) * CELL, _PAD + (row - 0.5) * CELL


def _star(cx: float, cy: float, outer: float) -> str:
    """The points of a five-pointed star."""
    points = []
    for k in range(10):
        radius = outer if k % 2 == 0 else outer * 0.45
        angle = -math.pi / 2 + k * math.pi / 5
        points.append(f"{_f(cx + radius * math.cos(angle))},{_f(cy + radius * math.sin(angle))}")
    return " ".join(points)


def _symbol(plan: Plan, cell: Cell) -> list[str]:
    kind = plan.type_at(cell)
    cx, cy = _centre(cell)
    s = CELL
    out: list[str] = []
    if isinstance(kind, Hospital):
        arm, long = s * 0.09, s * 0.3
        out.append(f'<rect x="{_f(cx - arm)}" y="{_f(cy - long)}" width="{_f(2 * arm)}" height="{_f(2 * long)}" fill="#d62728"/>')
        out.append(f'<rect x="{_f(cx - long)}" y="{_f(cy - arm)}" width="{_f(2 * long)}" height="{_f(2 * arm)}" fill="#d62728"/>')
    elif isinstance(kind, Weaponry):
        d = s * 0.26
        out.append(
            f'<path d="M{_f(cx - d)},{_f(cy - d)}L{_f(cx + d)},{_f(cy + d)}M{_f(cx + d)},{_f(cy - d)}'
            f'L{_f(cx - d)},{_f(cy + d)}" stroke="#33414e" stroke-width="5" stroke-linecap="round"/>'
        )
        out.append(f'<circle cx="{_f(cx)}" cy="{_f(cy)}" r="{_f(s * 0.1)}" fill="#33414e"/>')
    elif isinstance(kind, Encephalitis):
        r = s * 0.13
        legs = "".join(
            f"M{_f(cx - r * 2.1)},{_f(cy + dy)}L{_f(cx + r * 2.1)},{_f(cy - dy)}" for dy in (-r, 0.0, r)
        )
        out.append(f'<path d="{legs}" stroke="#2d4a12" stroke-width="2"/>')
        out.append(f'<ellipse cx="{_f(cx)}" cy="{_f(cy)}" rx="{_f(r * 1.2)}" ry="{_f(r * 1.5)}" fill="#2d4a12"/>')
    elif isinstance(kind, Pit):
        out.append(f'<circle cx="{_f(cx)}" cy="{_f(cy)}" r="{_f(s * 0.3)}" fill="#2b1a0e"/>')
        out.append(
            f'<text x="{_f(cx)}" y="{_f(cy + s * 0.1)}" font-size="{_f(s * 0.3)}" fill="#ffffff" '
            f'text-anchor="middle" font-weight="bold">{escape(kind.loop)}{kind.place}</text>'
        )
    elif isinstance(kind, Delta):
        t = s * 0.22
        out.append(
            f'<polygon points="{_f(cx)},{_f(cy - t)} {_f(cx + t)},{_f(cy + t * 0.8)} {_f(cx - t)},{_f(cy + t * 0.8)}" '
            'fill="none" stroke="#ffffff" stroke-width="3"/>'
        )
    return out


def _river_arrow(plan: Plan, cell: Cell, kind: River) -> list[str]:
    """A line from the cell's centre to its downstream neighbour's, its head on the border."""
    cx, cy = _centre(cell)
    dr, dc = OFFSETS[kind.flow]
    half = CELL / 2
    # Join the next cell's centre when the flow goes on into a river or delta, else stop short.
    downstream = (cell[0] + dr, cell[1] + dc)
    joined = downstream in plan and isinstance(plan.type_at(downstream), River | Delta)
    reach = CELL if joined and not plan.side(cell, kind.flow).blocks else half * 0.9
    x2, y2 = cx + dc * reach, cy + dr * reach
    hx, hy = cx + dc * half, cy + dr * half  # the arrowhead's tip, on the border
    w = CELL * 0.13
    back_x, back_y = hx - dc * w * 1.4, hy - dr * w * 1.4
    px, py = -dr * w, dc * w  # perpendicular
    return [
        f'<line class="flow" x1="{_f(cx)}" y1="{_f(cy)}" x2="{_f(x2)}" y2="{_f(y2)}" stroke="#1f5fa8" stroke-width="4" '
        'stroke-linecap="round"/>',
        f'<polygon points="{_f(hx + dc * w * 0.4)},{_f(hy + dr * w * 0.4)} {_f(back_x + px)},{_f(back_y + py)} '
        f'{_f(back_x - px)},{_f(back_y - py)}" fill="#1f5fa8"/>',
    ]


def _side_line(cell: Cell, direction: Direction) -> tuple[float, float, float, float]:
    cx, cy = _centre(cell)
    h = CELL / 2
    return {
        "up": (cx - h, cy - h, cx + h, cy - h),
        "down": (cx - h, cy + h, cx + h, cy + h),
        "left": (cx - h, cy - h, cx - h, cy + h),
        "right": (cx + h, cy - h, cx + h, cy + h),
    }[direction]


def _sides(plan: Plan) -> list[str]:
    out: list[str] = []
    exits: list[str] = []
    for cell in sorted(plan.cells):
        for direction in DIRECTIONS:
            kind = plan.side(cell, direction)
            if not kind.outer and direction not in ("right", "down"):
                continue  # each inner border once
            x1, y1, x2, y2 = _side_line(cell, direction)
            line = f'x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}"'
            if kind is Side.WALL:
                out.append(f'<line class="wall" {line} stroke="{_WALL}" stroke-width="4" stroke-linecap="round"/>')
            elif kind is Side.SOLID or kind is Side.OUTER_WALL:
                name = "solid" if kind is Side.SOLID else "outer-wall"
                out.append(f'<line class="{name}" {line} stroke="{_SOLID}" stroke-width="7" stroke-linecap="square"/>')
            elif kind is Side.CLOSED_EXIT:
                exits.append(
                    f'<line class="closed-exit" {line} stroke="{_CLOSED}" stroke-width="7" stroke-dasharray="7 5"/>'
                )
            elif kind is Side.OPEN_EXIT:
                exits.append(_exit_arrow(cell, direction))
    return out + exits


def _exit_arrow(cell: Cell, direction: Direction) -> str:
    cx, cy = _centre(cell)
    dr, dc = OFFSETS[direction]
    h = CELL / 2
    bx, by = cx + dc * (h - 6), cy + dr * (h - 6)
    tx, ty = cx + dc * (h + 20), cy + dr * (h + 20)
    w = 8
    px, py = -dr * w, dc * w
    sx, sy = tx - dc * 12, ty - dr * 12
    return (
        f'<g class="open-exit"><line x1="{_f(bx)}" y1="{_f(by)}" x2="{_f(sx)}" y2="{_f(sy)}" stroke="{_OPEN}" '
        f'stroke-width="4"/><polygon points="{_f(tx)},{_f(ty)} {_f(sx + px)},{_f(sy + py)} '
        f'{_f(sx - px)},{_f(sy - py)}" fill="{_OPEN}"/></g>'
    )


def _on_cell(plan: Plan, cell: Cell) -> list[str]:
    """Treasure, items and the start ring of one cell."""
    cx, cy = _centre(cell)
    s = CELL
    out: list[str] = []
    treasure = plan.treasure_at(cell)
    if treasure is not None:
        sx, sy = cx + s * 0.28, cy - s * 0.27
        if treasure.is_true:
            out.append(f'<polygon class="treasure true" points="{_star(sx, sy, s * 0.19)}" fill="#ffc400" '
                       'stroke="#7a5a00" stroke-width="1.5"/>')
        else:
            out.append(f'<polygon class="treasure fake" points="{_star(sx, sy, s * 0.19)}" fill="#ffffff" '
                       'fill-opacity="0.7" stroke="#6d6d6d" stroke-width="1.5" stroke-dasharray="3 2"/>')
    pile = plan.items_at(cell)
    if pile is not None:
        text = " ".join(
            f"{n}{letter}" for n, letter in ((pile.bullets, "b"), (pile.grenades, "g"), (pile.landmines, "m")) if n
        )
        out.append(
            f'<text class="items" x="{_f(cx - s * 0.42)}" y="{_f(cy + s * 0.38)}" font-size="{_f(s * 0.2)}" '
            f'fill="#000000" stroke="#ffffff" stroke-width="3" paint-order="stroke">{text}</text>'
        )
    if plan.start == cell:
        out.append(f'<circle class="start" cx="{_f(cx)}" cy="{_f(cy)}" r="{_f(s * 0.4)}" fill="none" '
                   'stroke="#ff00aa" stroke-width="3" stroke-dasharray="5 3"/>')
    return out


def svg_picture(
    plan: Plan,
    marks: Mapping[Cell, str] | None = None,
    paths: Mapping[str, Sequence[Cell]] | None = None,
    *,
    legend: bool = True,
) -> str:
    """The plan as an SVG document (a string)."""
    width = 2 * _PAD + plan.columns * CELL
    grid_bottom = 2 * _PAD + plan.rows * CELL
    title_h = 26 if plan.name else 0
    legend_h = 108 if legend else 0
    width = max(width, 570) if legend else width
    height = grid_bottom + legend_h + title_h
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 {-title_h} {width} {height}" font-family="sans-serif">',
        f'<rect x="0" y="{-title_h}" width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    if plan.name:
        out.append(f'<text x="{_PAD}" y="-6" font-size="17" font-weight="bold">{escape(plan.name)}</text>')
    for column in range(1, plan.columns + 1):
        x, _ = _centre((1, column))
        out.append(f'<text x="{_f(x)}" y="16" font-size="12" fill="#555555" '
                   f'text-anchor="middle">{column}</text>')
    for row in range(1, plan.rows + 1):
        _, y = _centre((row, 1))
        out.append(f'<text x="16" y="{_f(y + 4)}" font-size="12" fill="#555555" '
                   f'text-anchor="end">{row}</text>')
    for cell in sorted(plan.cells):
        kind = plan.type_at(cell)
        x, y = _PAD + (cell[1] - 1) * CELL, _PAD + (cell[0] - 1) * CELL
        out.append(f'<rect class="cell {type_name(kind)}" data-cell="{cell_name(cell)}" x="{x}" y="{y}" width="{CELL}" '
                   f'height="{CELL}" fill="{FILL[type(kind)]}" stroke="#d9cfb8" stroke-width="1"/>')
    for cell in sorted(plan.cells):
        out += _symbol(plan, cell)
    for cell in sorted(plan.cells):
        kind = plan.type_at(cell)
        if isinstance(kind, River):
            out += _river_arrow(plan, cell, kind)
    out += _sides(plan)
    for cell in sorted(plan.cells):
        out += _on_cell(plan, cell)
    for n, (label, cells) in enumerate(sorted((paths or {}).items())):
        colour = _PATH_COLOURS[n % len(_PATH_COLOURS)]
        shift = (n % 5 - 2) * 3
        points = " ".join(f"{_f(_centre(c)[0] + shift)},{_f(_centre(c)[1] + shift)}" for c in cells)
        out.append(f'<polyline class="path" points="{points}" fill="none" stroke="{colour}" stroke-width="3" '
                   f'stroke-opacity="0.8" stroke-linejoin="round"><title>{escape(label)}</title></polyline>')
    for n, (cell, label) in enumerate(sorted((marks or {}).items())):
        cx, cy = _centre(cell)
        colour = _PATH_COLOURS[n % len(_PATH_COLOURS)]
        out.append(f'<circle class="mark" cx="{_f(cx - CELL * 0.22)}" cy="{_f(cy - CELL * 0.22)}" r="10" '
                   f'fill="{colour}" stroke="#ffffff" stroke-width="2"/>')
        out.append(f'<text x="{_f(cx - CELL * 0.22)}" y="{_f(cy - CELL * 0.22 + 4)}" font-size="11" '
                   f'fill="#ffffff" text-anchor="middle" font-weight="bold">{escape(label)}</text>')
    if legend:
        out += _svg_legend(grid_bottom - _PAD // 2 + 8)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _svg_legend(top: float) -> list[str]:
    out: list[str] = []
    entries = [
        (Land, "land"), (Hospital, "hospital"), (Weaponry, "weaponry"), (Encephalitis, "encephalitis"),
        (Pit, "pit"), (River, "river"), (Delta, "delta"),
    ]
    x = 10.0
    for kind, name in entries:
        out.append(f'<rect x="{_f(x)}" y="{_f(top)}" width="14" height="14" fill="{FILL[kind]}" stroke="#777777"/>')
        out.append(f'<text x="{_f(x + 18)}" y="{_f(top + 12)}" font-size="12">{name}</text>')
        x += 18 + 7.2 * len(name) + 12
    y = top + 30
    lines = [
        (f'<line x1="10" y1="{_f(y)}" x2="40" y2="{_f(y)}" stroke="{_WALL}" stroke-width="4"/>', "wall"),
        (f'<line x1="10" y1="{_f(y)}" x2="40" y2="{_f(y)}" stroke="{_SOLID}" stroke-width="7"/>',
         "indestructible wall"),
        (f'<line x1="10" y1="{_f(y)}" x2="40" y2="{_f(y)}" stroke="{_CLOSED}" stroke-width="7" '
         'stroke-dasharray="7 5"/>', "closed exit"),
        (f'<line x1="10" y1="{_f(y)}" x2="32" y2="{_f(y)}" stroke="{_OPEN}" stroke-width="4"/>'
         f'<polygon points="42,{_f(y)} 32,{_f(y - 7)} 32,{_f(y + 7)}" fill="{_OPEN}"/>', "open exit"),
    ]
    x = 0.0
    for shape, name in lines:
        out.append(f'<g transform="translate({_f(x)},0)">{shape}</g>')
        out.append(f'<text x="{_f(x + 48)}" y="{_f(y + 4)}" font-size="12">{name}</text>')
        x += 48 + 7.2 * len(name) + 14
    y += 30
    out.append(f'<polygon points="{_star(18, y, 9)}" fill="#ffc400" stroke="#7a5a00" stroke-width="1.5"/>')
    out.append(f'<text x="32" y="{_f(y + 4)}" font-size="12">true treasure</text>')
    out.append(f'<polygon points="{_star(148, y, 9)}" fill="#ffffff" stroke="#6d6d6d" stroke-width="1.5" '
               'stroke-dasharray="3 2"/>')
    out.append(f'<text x="162" y="{_f(y + 4)}" font-size="12">fake treasure</text>')
    out.append(f'<text x="272" y="{_f(y + 4)}" font-size="12">2b 1g 1m: bullets, grenades, landmines</text>')
    y += 26
    out.append(f'<circle cx="18" cy="{_f(y)}" r="9" fill="none" stroke="#ff00aa" stroke-width="3" '
               'stroke-dasharray="5 3"/>')
    out.append(f'<text x="32" y="{_f(y + 4)}" font-size="12">start cell (option 7.6)</text>')
    out.append(f'<text x="200" y="{_f(y + 4)}" font-size="12">a1: pit 1 of loop a</text>')
    return out
