"""Hypothesis strategies for Labyrinth plans.

`plans()` draws any plan the data model can hold: any shape inside a bounding rectangle
(cells left out anywhere), any cell types (rivers flowing anywhere, pits in any loops and
places), any walls and exits, treasures, items and a start cell. Such a plan need not
keep the rules of section 8 (that is the validator's business); it is what the text and
JSON forms and the pictures must carry exactly.
"""

from __future__ import annotations

import random

from hypothesis import strategies as st

from domain.games.labyrinth.plan import (
    DELTA,
    DIRECTIONS,
    ENCEPHALITIS,
    HOSPITAL,
    LAND,
    MAX_PLACE,
    WEAPONRY,
    Cell,
    CellType,
    Exit,
    Items,
    Pit,
    Plan,
    River,
    Square,
    Treasure,
    Wall,
    step,
)

cell_types: st.SearchStrategy[CellType] = st.one_of(
    st.sampled_from([LAND, HOSPITAL, WEAPONRY, ENCEPHALITIS, DELTA]),
    st.builds(River, st.sampled_from(DIRECTIONS)),
    st.builds(
        Pit,
        st.sampled_from("abcvz"),
        st.one_of(st.integers(1, 4), st.integers(1, MAX_PLACE)),
    ),
)

names = st.text(
    alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs")), max_size=20
).map(str.strip).filter(str.isprintable)


@st.composite
def shapes(draw: st.DrawFn, max_rows: int = 7, max_columns: int = 7) -> frozenset[Cell]:
    """A set of cells whose bounding rectangle starts at (1, 1), a cell in every row and column."""
    rows = draw(st.integers(1, max_rows))
    columns = draw(st.integers(1, max_columns))
    full = draw(st.booleans())
    cells = {(r, c) for r in range(1, rows + 1) for c in range(1, columns + 1)}
    if not full:
        kept = draw(st.lists(st.booleans(), min_size=len(cells), max_size=len(cells)))
        cells = {cell for cell, keep in zip(sorted(cells), kept, strict=True) if keep}
    for r in range(1, rows + 1):
        if not any(row == r for row, _ in cells):
            cells.add((r, draw(st.integers(1, columns))))
    for c in range(1, columns + 1):
        if not any(column == c for _, column in cells):
            cells.add((draw(st.integers(1, rows)), c))
    return frozenset(cells)


@st.composite
def plans(draw: st.DrawFn, max_rows: int = 7, max_columns: int = 7) -> Plan:
    cells = sorted(draw(shapes(max_rows, max_columns)))
    squares = [Square(cell, draw(cell_types)) for cell in cells]
    inside = set(cells)
    walls = []
    exits = []
    for cell in cells:
        for direction in DIRECTIONS:
            other = step(cell, direction)
            if other in inside:
                if direction in ("right", "down"):
                    kind = draw(st.sampled_from(["none", "none", "wall", "solid"]))
                    if kind != "none":
                        walls.append(Wall(cell, other, destructible=kind == "wall"))
            else:
                kind = draw(st.sampled_from(["wall", "wall", "wall", "open", "closed"]))
                if kind != "wall":
                    exits.append(Exit(cell, direction, open=kind == "open"))
    treasure_cells = draw(st.lists(st.sampled_from(cells), unique=True, max_size=4))
    treasures = [Treasure(cell, draw(st.booleans())) for cell in treasure_cells]
    item_cells = draw(st.lists(st.sampled_from(cells), unique=True, max_size=3))
    items = []
    for cell in item_cells:
        counts = draw(st.tuples(st.integers(0, 12), st.integers(0, 3), st.integers(0, 2)).filter(any))
        items.append(Items(cell, *counts))
    start = draw(st.none() | st.sampled_from(cells))
    random.Random(draw(st.integers(0, 2**32))).shuffle(squares)  # any order builds the same plan
    return Plan(
        squares=tuple(squares),
        walls=tuple(reversed(walls)),
        exits=tuple(exits),
        treasures=tuple(treasures),
        items=tuple(items),
        start=start,
        name=draw(names),
    )
