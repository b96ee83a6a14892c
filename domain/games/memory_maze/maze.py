"""Memory Maze boards: geometry, symmetry, generation from the seed, and the text drawing.

Cells are (x, y): x the column from the left (0..n-1), y the row from the bottom
(0..n-1). They are named like chess squares: column letters a, b, c, ... from the left,
row numbers 1, 2, ... from the bottom, so on an 8x8 board the bottom-left cell is `a1`
and the top-right one `h8`. "Up" is +y.

An *edge* is the border between two neighbouring cells, numbered
`2 * (y * n + x)` for the border east of (x, y) and `2 * (y * n + x) + 1` for the border
north of (x, y). The outer border is always a wall and has no number.

Symmetry: the two 8x8 editions mirror the board across the bottom-left/top-right diagonal
(`rising`: (x, y) <-> (y, x)); `crazy` across the top-left/bottom-right one (`falling`:
(x, y) <-> (n-1-y, n-1-x)). No edge is its own mirror image, so edges come in pairs.

A maze is its invisible walls plus (crazy) colored walls, each owned by the player who
started at A (bottom-left) or B (top-right): its owner passes through it, the other
player bonks on it.

The drawing (a host may supply one; the log records one): 2n+1 lines of 2n+1 characters,
top row first. Even lines hold walls between rows, odd lines cells and the walls between
them; even columns are wall columns. At a corner of cells (even line, even column) a
`+`; on a border between two cells ` ` (open), `-` (a wall between a cell and the one
above or below it), `|` (a wall between a cell and its left or right neighbour), or, in
`crazy`, `a` / `b`: a colored wall of the player who started at A / B. The outer border is
all walls (`-` and `|`). Cell positions may hold any character (`.`, ` `, a note); they
are ignored. Trailing spaces may be left out. An 8x8 example:

    +-+-+-+-+-+-+-+-+
    |. . . .|. . . .|
    +-+-+ + + +-+-+ +
    ...
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from domain.rng import Rng

Cell = tuple[int, int]

AXIS_TEXT: dict[str, str] = {
    "rising": "the bottom-left/top-right diagonal",
    "falling": "the top-left/bottom-right diagonal",
}

DIRECTIONS: dict[str, Cell] = {"U": (0, 1), "D": (0, -1), "L": (-1, 0), "R": (1, 0)}
DIRECTION_WORDS: dict[str, str] = {"U": "up", "D": "down", "L": "left", "R": "right"}

COLUMNS = "abcdefghijklmnopqrstuvwxyz"


class MazeError(ValueError):
    """A drawing that is not a valid maze; the message names the place."""


class Maze(msgspec.Struct, frozen=True):
    size: int
    axis: str
    walls: frozenset[int]  # invisible interior walls
    colored_a: frozenset[int] = frozenset()  # colored walls of the player who started at A
    colored_b: frozenset[int] = frozenset()  # ... at B

    def blocked_for(self, letter: str) -> frozenset[int]:
        """The interior edges the player who started at `letter` ("A"/"B") cannot cross."""
        return self.walls | (self.colored_b if letter == "A" else self.colored_a)

    def owner(self, edge: int) -> str | None:
        if edge in self.colored_a:
            return "A"
        if edge in self.colored_b:
            return "B"
        return None


# --- geometry --------------------------------------------------------------------------


def cell_name(cell: Cell) -> str:
    return f"{COLUMNS[cell[0]]}{cell[1] + 1}"


def on_board(cell: Cell, n: int) -> bool:
    return 0 <= cell[0] < n and 0 <= cell[1] < n


def step(cell: Cell, move: str) -> Cell:
    dx, dy = DIRECTIONS[move]
    return (cell[0] + dx, cell[1] + dy)


def edge_between(a: Cell, b: Cell, n: int) -> int | None:
    """The edge between two neighbouring cells (None if either is off the board)."""
    if not (on_board(a, n) and on_board(b, n)):
        return None
    (x0, y0), (x1, y1) = sorted((a, b))
    if y0 == y1 and x1 == x0 + 1:
        return 2 * (y0 * n + x0)
    if x0 == x1 and y1 == y0 + 1:
        return 2 * (y0 * n + x0) + 1
    raise ValueError(f"{cell_name(a)} and {cell_name(b)} are not neighbours")


def edge_cells(edge: int, n: int) -> tuple[Cell, Cell]:
    index, north = divmod(edge, 2)
    y, x = divmod(index, n)
    return ((x, y), (x, y + 1)) if north else ((x, y), (x + 1, y))


def edge_name(edge: int, n: int) -> str:
    a, b = edge_cells(edge, n)
    return f"the wall between {cell_name(a)} and {cell_name(b)}"


def interior_edges(n: int) -> list[int]:
    edges = []
    for y in range(n):
        for x in range(n):
            if x + 1 < n:
                edges.append(2 * (y * n + x))
            if y + 1 < n:
                edges.append(2 * (y * n + x) + 1)
    return edges


def mirror_cell(cell: Cell, n: int, axis: str) -> Cell:
    x, y = cell
    return (y, x) if axis == "rising" else (n - 1 - y, n - 1 - x)


def mirror_edge(edge: int, n: int, axis: str) -> int:
    a, b = edge_cells(edge, n)
    mirrored = edge_between(mirror_cell(a, n, axis), mirror_cell(b, n, axis), n)
    assert mirrored is not None
    return mirrored


def corners(n: int) -> tuple[Cell, Cell, Cell, Cell]:
    """Bottom-left (A), top-left, bottom-right, top-right (B)."""
    return ((0, 0), (0, n - 1), (n - 1, 0), (n - 1, n - 1))


def start_of(letter: str, n: int) -> Cell:
    return (0, 0) if letter == "A" else (n - 1, n - 1)


def path_edges(start: Cell, moves: str, n: int) -> list[int | None]:
    """The edges a sequence crosses from `start`, in order; None for a step off the board.

    Stops after the first step off the board (nothing after it is ever tried)."""
    out: list[int | None] = []
    pos = start
    for move in moves:
        nxt = step(pos, move)
        edge = edge_between(pos, nxt, n)
        out.append(edge)
        if edge is None:
            break
        pos = nxt
    return out


class Trace(msgspec.Struct, frozen=True):
    """What an attempt does: the cells it passes (start first) and where it bonked."""

    cells: tuple[Cell, ...]
    bonk_index: int | None  # the move that crossed a wall (0-based), None on success

    @property
    def bonked(self) -> bool:
        return self.bonk_index is not None


def trace(maze: Maze, letter: str, start: Cell, moves: str) -> Trace:
    blocked = maze.blocked_for(letter)
    cells = [start]
    pos = start
    for i, move in enumerate(moves):
        nxt = step(pos, move)
        edge = edge_between(pos, nxt, maze.size)
        if edge is None or edge in blocked:
            return Trace(cells=tuple(cells), bonk_index=i)
        pos = nxt
        cells.append(pos)
    return Trace(cells=tuple(cells), bonk_index=None)


def reachable(n: int, blocked: Iterable[int], start: Cell) -> set[Cell]:
    closed = set(blocked)
    seen = {start}
    todo = [start]
    while todo:
        cell = todo.pop()
        for move in DIRECTIONS:
            nxt = step(cell, move)
            edge = edge_between(cell, nxt, n)
            if edge is not None and edge not in closed and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


# --- generation ------------------------------------------------------------------------


def _orbits(n: int, axis: str) -> list[tuple[int, int]]:
    pairs = []
    for edge in interior_edges(n):
        m = mirror_edge(edge, n, axis)
        assert m != edge
        if edge < m:
            pairs.append((edge, m))
    return pairs


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def generate(n: int, axis: str, rng: Rng, colored_pairs: int = 0, colors: str = "swap") -> Maze:
    """A symmetric maze in which every cell is reachable (for each player, counting its
    own colored walls as open), drawn from `rng`.

    Randomized Kruskal over mirror pairs of edges: a pair is opened when one of its edges
    joins two regions, so the open passages connect every cell and the walls stay
    symmetric. (Opening the mirror edge too leaves some loops: an 8x8 maze has 42 walls
    of 112 borders, a 10x10 one 72 of 180.) Colored walls are mirror pairs placed where
    they leave every cell reachable for both players: with `colors` "swap" one edge of a
    pair for each player (A's wall mirrors onto B's), with "keep" both edges of a pair for
    one player, the pairs going to A and B in turn (A's wall mirrors onto A's)."""
    orbits = rng.shuffle(_orbits(n, axis))
    parent = list(range(n * n))
    opened: set[int] = set()
    for e, m in orbits:
        (a, b) = edge_cells(e, n)
        ra, rb = _find(parent, a[1] * n + a[0]), _find(parent, b[1] * n + b[0])
        if ra == rb:
            continue
        parent[ra] = rb
        for edge in (e, m):
            (c, d) = edge_cells(edge, n)
            rc, rd = _find(parent, c[1] * n + c[0]), _find(parent, d[1] * n + d[0])
            parent[rc] = rd
        opened.update((e, m))
    walls = frozenset(e for e in interior_edges(n) if e not in opened)
    maze = Maze(size=n, axis=axis, walls=walls)
    if colored_pairs <= 0:
        return maze
    colored_a: set[int] = set()
    colored_b: set[int] = set()
    placed = 0
    for e, m in rng.shuffle(_orbits(n, axis)):
        if placed >= colored_pairs:
            break
        mine: set[int]
        theirs: set[int]
        if colors == "keep":
            mine, theirs = ({e, m}, set()) if placed % 2 == 0 else (set(), {e, m})
        else:
            mine, theirs = ({e}, {m}) if rng.below(2) == 0 else ({m}, {e})
        trial = Maze(
            size=n,
            axis=axis,
            walls=frozenset(maze.walls - {e, m}),
            colored_a=frozenset(colored_a | mine),
            colored_b=frozenset(colored_b | theirs),
        )
        if all(
            len(reachable(n, trial.blocked_for(letter), start_of(letter, n))) == n * n
            for letter in "AB"
        ):
            maze = trial
            colored_a |= mine
            colored_b |= theirs
            placed += 1
    return maze


# --- the drawing -----------------------------------------------------------------------


def cell_position(cell: Cell, n: int) -> tuple[int, int]:
    """(line, column) of a cell in the drawing (line 0 is the top)."""
    return 2 * (n - 1 - cell[1]) + 1, 2 * cell[0] + 1


def border_position(cell: Cell, move: str, n: int) -> tuple[int, int]:
    """(line, column) in the drawing of the border a move from `cell` crosses (an edge or
    a piece of the outer wall)."""
    line, col = cell_position(cell, n)
    dx, dy = DIRECTIONS[move]
    return line - dy, col + dx


def _wall_pos(edge: int, n: int) -> tuple[int, int]:
    """(line, column) of an edge in the drawing (line 0 is the top)."""
    (x, y), _ = edge_cells(edge, n)
    if edge % 2:  # north of (x, y): the line above its row
        return 2 * (n - 1 - y), 2 * x + 1
    return 2 * (n - 1 - y) + 1, 2 * x + 2


def render(maze: Maze, cell_marks: dict[Cell, str] | None = None) -> list[str]:
    """The maze as a drawing (see the module docstring)."""
    n = maze.size
    grid = [[" "] * (2 * n + 1) for _ in range(2 * n + 1)]
    for line in range(0, 2 * n + 1, 2):
        for col in range(0, 2 * n + 1, 2):
            grid[line][col] = "+"
    for col in range(1, 2 * n, 2):
        grid[0][col] = grid[2 * n][col] = "-"
    for line in range(1, 2 * n, 2):
        grid[line][0] = grid[line][2 * n] = "|"
    for edge in interior_edges(n):
        line, col = _wall_pos(edge, n)
        owner = maze.owner(edge)
        if owner is not None:
            grid[line][col] = owner.lower()
        elif edge in maze.walls:
            grid[line][col] = "-" if edge % 2 else "|"
    for cell, mark in (cell_marks or {}).items():
        line, col = cell_position(cell, n)
        grid[line][col] = mark
    return ["".join(row).rstrip() for row in grid]


def parse(
    text: str | Sequence[str], n: int, axis: str, colored: bool, colors: str | None = None
) -> Maze:
    """A maze from its drawing, validated: size, outer border, symmetry across `axis`
    (colored walls in the form `colors`, "swap" or "keep"; None: the form the drawing
    shows, see `colored_form`), and every corner reachable by both players. MazeError
    names what is wrong."""
    lines = text.splitlines() if isinstance(text, str) else list(text)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    width = 2 * n + 1
    if len(lines) != width:
        raise MazeError(
            f"the drawing has {len(lines)} lines; a {n}x{n} maze is drawn in {width} lines "
            f"of {width} characters"
        )
    # Keep a common indentation out of the way (a drawing pasted with a margin).
    margin = min(len(text) - len(text.lstrip(" ")) for text in lines)
    lines = [text[margin:].rstrip() for text in lines]
    for i, text in enumerate(lines):
        if len(text) > width:
            raise MazeError(
                f"line {i + 1} of the drawing is {len(text)} characters; a {n}x{n} maze is "
                f"{width} wide"
            )
    grid = [text.ljust(width) for text in lines]

    def where(line: int, col: int) -> str:
        return f"line {line + 1}, column {col + 1}"

    for line in range(0, width, 2):
        for col in range(0, width, 2):
            if grid[line][col] != "+":
                raise MazeError(
                    f"{where(line, col)}: expected '+' at a corner of cells, found {grid[line][col]!r}"
                )
    for x in range(n):
        for line, side, cell in ((0, "above", (x, n - 1)), (2 * n, "below", (x, 0))):
            if grid[line][2 * x + 1] != "-":
                raise MazeError(
                    f"the outer wall {side} {cell_name(cell)} is missing ({where(line, 2 * x + 1)})"
                )
    for y in range(n):
        line = 2 * (n - 1 - y) + 1
        for col, side, cell in ((0, "left of", (0, y)), (2 * n, "right of", (n - 1, y))):
            if grid[line][col] != "|":
                raise MazeError(
                    f"the outer wall {side} {cell_name(cell)} is missing ({where(line, col)})"
                )

    walls: set[int] = set()
    colored_a: set[int] = set()
    colored_b: set[int] = set()
    for edge in interior_edges(n):
        line, col = _wall_pos(edge, n)
        char = grid[line][col]
        wall_char = "-" if edge % 2 else "|"
        if char == " ":
            continue
        if char == wall_char:
            walls.add(edge)
        elif colored and char in "aAbB":
            (colored_a if char in "aA" else colored_b).add(edge)
        else:
            allowed = f"' ' (open) or {wall_char!r} (a wall)"
            if colored:
                allowed += ", 'a' or 'b' (a colored wall of the player who started at A or B)"
            raise MazeError(
                f"{edge_name(edge, n)} ({where(line, col)}) is drawn as {char!r}; use {allowed}"
            )
    maze = Maze(
        size=n,
        axis=axis,
        walls=frozenset(walls),
        colored_a=frozenset(colored_a),
        colored_b=frozenset(colored_b),
    )
    check_symmetry(maze, colors or colored_form(maze))
    check_corners(maze)
    return maze


def _kind(maze: Maze, edge: int) -> str:
    owner = maze.owner(edge)
    if owner is not None:
        return f"a colored wall of {owner}"
    return "a wall" if edge in maze.walls else "no wall"


# How the mirror maps colored walls: "swap" (A's onto B's: each player faces the mirror
# image of the other's maze; generated mazes by default) or "keep" (A's onto A's: the
# historical tournament mazes).
COLOR_FORMS: dict[str, dict[str | None, str | None]] = {
    "swap": {"A": "B", "B": "A", None: None},
    "keep": {"A": "A", "B": "B", None: None},
}
COLOR_FORM_TEXT: dict[str, str] = {
    "swap": "a colored wall mirrors onto one of the other player's",
    "keep": "a colored wall mirrors onto one of the same player's",
}


def colored_form(maze: Maze) -> str:
    """The form the drawing's colored walls are in: that of the first colored wall whose
    mirror image is colored too ("swap" where there is none: then the symmetry check
    names the wall that breaks it)."""
    for edge in interior_edges(maze.size):
        owner = maze.owner(edge)
        if owner is None:
            continue
        mirrored = maze.owner(mirror_edge(edge, maze.size, maze.axis))
        if mirrored is not None:
            return "keep" if mirrored == owner else "swap"
    return "swap"


def check_symmetry(maze: Maze, colors: str = "swap") -> None:
    n, axis = maze.size, maze.axis
    for edge in interior_edges(n):
        m = mirror_edge(edge, n, axis)
        if edge > m:
            continue
        expected = COLOR_FORMS[colors][maze.owner(edge)]
        same = maze.owner(m) == expected and (edge in maze.walls) == (m in maze.walls)
        if not same:
            a, b = edge_cells(edge, n)
            c, d = edge_cells(m, n)
            want = f"a colored wall of {expected}" if expected else _kind(maze, edge)
            form = f" ({COLOR_FORM_TEXT[colors]})" if maze.colored_a or maze.colored_b else ""
            raise MazeError(
                f"the maze is not symmetric across {AXIS_TEXT[axis]}{form}: between "
                f"{cell_name(a)} and {cell_name(b)} ({_where_edge(edge, n)}) there is "
                f"{_kind(maze, edge)}, but between {cell_name(c)} and {cell_name(d)} "
                f"({_where_edge(m, n)}, its mirror image) there is {_kind(maze, m)} instead "
                f"of {want}"
            )


def _where_edge(edge: int, n: int) -> str:
    line, col = _wall_pos(edge, n)
    return f"line {line + 1}, column {col + 1}"


def check_corners(maze: Maze) -> None:
    """Every corner reachable by each player from its start (its own colored walls open)."""
    n = maze.size
    for letter in "AB":
        start = start_of(letter, n)
        seen = reachable(n, maze.blocked_for(letter), start)
        for corner in corners(n):
            if corner not in seen:
                raise MazeError(
                    f"corner {cell_name(corner)} cannot be reached from {cell_name(start)} "
                    f"(the start {letter}); every corner must be reachable by both players"
                )
