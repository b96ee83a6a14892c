"""What each viewer may see of a Memory Maze.

Everything a player may know is public (the texts reveal nothing in private), so players
and spectators get the same views: both positions, the corners (keys) each player has
visited, whose turn it is and the clocks, and each player's latest sequence with whether
it bonked. A bonk says only that it bonked: not which move, not where.

- `black-garnet`, `minos`: a player's previous sequence is deleted when it submits a new
  one, so neither the view nor any event carries more than each player's latest.
- `crazy`: every sequence stays visible (`history`); its colored walls are visible.

No invisible wall is sent before the match is over. Full viewers (the after-the-match
view, auditors) also get the maze (its drawing and walls), where each bonk happened, and
every path.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import msgspec

from domain.engine import MatchState
from domain.engine import deadline as engine_deadline
from domain.games import memory_maze as mm
from domain.games.memory_maze import (
    TERMS,
    CooldownOver,
    GameOver,
    Moved,
    PeriodSpent,
    State,
    TurnStarted,
)
from domain.games.memory_maze.maze import (
    AXIS_TEXT,
    DIRECTION_WORDS,
    Cell,
    Maze,
    MazeError,
    border_position,
    cell_name,
    cell_position,
    check_corners,
    edge_between,
    edge_cells,
    edge_name,
    generate,
    interior_edges,
    mirror_edge,
    on_board,
    render,
    step,
    trace,
)
from domain.rng import Rng
from projections.common import who
from projections.contract import NOTHING_SEALED, Rehearsal, Twins, Viewer


def _cells(cells: tuple[Cell, ...] | list[Cell]) -> list[str]:
    return [cell_name(c) for c in cells]


def _attempt_view(gs: State, a: Moved, viewer: Viewer, *, latest: bool) -> dict[str, Any]:
    """An attempt. `latest`: it is a seat's latest, shown in the view. In the turn
    editions an attempt *event* does not carry the sequence (the view's `last` does, and
    only the latest one): an event is sent again to a viewer who catches up after a
    reconnect, long after the rules deleted that sequence."""
    shown = latest or viewer.full or not mm.has_turns(gs.variant)
    out: dict[str, Any] = {
        "seat": a.seat,
        "turn": a.turn,
        "at": a.at,
        "moves": a.moves if shown else None,
        "from": cell_name(a.from_cell),
        "to": cell_name(a.to_cell),
        "bonked": a.bonked,
        "timed_out": a.timed_out,
        "collected": _cells(a.collected),
    }
    if viewer.full:
        letter = gs.seats[a.seat].letter
        out["bonk_index"] = a.bonk_index
        out["path"] = _cells(trace(gs.maze, letter, a.from_cell, a.moves).cells)
    return out


def _clock_fields(a: Moved) -> dict[str, Any]:
    return {
        "periods_left": a.periods_left,
        "reserve_left": a.reserve_left,
        "cooldown_until": a.cooldown_until,
    }


def _game_over_view(event: GameOver) -> dict[str, Any]:
    return {
        "type": "game_over",
        "winner": event.winner,
        "reason": event.reason,
        "turns": event.turns,
        "collected": list(event.collected),
    }


def event(ms: MatchState, event: Any, viewer: Viewer) -> dict[str, Any] | None:
    """One game event as `viewer` may see it."""
    gs: State = ms.game_state
    if isinstance(event, TurnStarted):
        return {
            "type": "turn_started",
            "turn": event.turn,
            "seat": event.seat,
            "at": event.at,
            "deadline": event.deadline,
        }
    if isinstance(event, PeriodSpent):
        return {
            "type": "period_spent",
            "seat": event.seat,
            "turn": event.turn,
            "periods_left": event.periods_left,
            "deadline": event.deadline,
        }
    if isinstance(event, Moved):
        return {
            "type": "moved",
            **_attempt_view(gs, event, viewer, latest=False),
            **_clock_fields(event),
        }
    if isinstance(event, CooldownOver):
        return {"type": "cooldown_over", "seat": event.seat, "at": event.at}
    if isinstance(event, GameOver):
        return _game_over_view(event)
    return None


def _colored_walls(gs: State) -> list[dict[str, Any]]:
    n = gs.maze.size
    seat_of = {s.letter: i for i, s in enumerate(gs.seats)}
    out = []
    for letter, edges in (("A", gs.maze.colored_a), ("B", gs.maze.colored_b)):
        for edge in sorted(edges):
            out.append(
                {"between": _cells(list(edge_cells(edge, n))), "owner": seat_of[letter], "letter": letter}
            )
    return out


def _maze_view(gs: State) -> dict[str, Any]:
    n = gs.maze.size
    return {
        "drawing": render(gs.maze),
        "walls": [_cells(list(edge_cells(e, n))) for e in sorted(gs.maze.walls)],
        "colored_walls": _colored_walls(gs),
    }


def _seat_view(ms: MatchState, gs: State, s: int, viewer: Viewer) -> dict[str, Any]:
    seat = gs.seats[s]
    keeps_history = viewer.full or not mm.has_turns(gs.variant)
    return {
        "seat": s,
        "name": ms.names[s],
        "letter": seat.letter,
        "start": cell_name(seat.start),
        "start_xy": list(seat.start),
        "position": cell_name(seat.pos),
        "xy": list(seat.pos),
        "targets": _cells(seat.targets),
        "visited": _cells(seat.visited),
        "to_move": gs.to_move == s,
        "periods_left": seat.periods,
        "reserve_ms": seat.reserve,
        "cooldown_until": seat.cooldown_until,
        "ready": seat.ready if not mm.has_turns(gs.variant) else gs.to_move == s,
        # False only while the turn clock waits on this seat (for `daedalus play`'s reminder)
        "submitted": gs.to_move != s,
        "last": _attempt_view(gs, seat.last, viewer, latest=True) if seat.last is not None else None,
        "history": [_attempt_view(gs, a, viewer, latest=True) for a in seat.attempts] if keeps_history else None,
    }


def _clock_view(gs: State) -> dict[str, Any]:
    o = gs.options
    if gs.variant == "black-garnet":
        return {"kind": "periods", "periods": o.periods, "period_ms": mm.period_ms(o)}
    if gs.variant == "minos":
        return {"kind": "reserve", "move_ms": mm.move_ms(o), "reserve_ms": mm.reserve_ms(o)}
    return {
        "kind": "cooldown",
        "success_ms": mm.cooldown_ms(o, bonked=False),
        "bonk_ms": mm.cooldown_ms(o, bonked=True),
    }


def view(ms: MatchState, viewer: Viewer) -> dict[str, Any]:
    """The game's state as `viewer` may see it."""
    gs: State = ms.game_state
    terms = TERMS[gs.variant]
    return {
        "variant": gs.variant,
        "size": gs.maze.size,
        "symmetry": gs.maze.axis,
        "symmetry_text": AXIS_TEXT[gs.maze.axis],
        "terms": {"goal": terms.goal, "goals": terms.goals},
        "turns": mm.has_turns(gs.variant),
        "counts_passing": mm.counts_passing(gs.variant),
        "history_kept": not mm.has_turns(gs.variant),
        "turn": gs.turn,
        "to_move": gs.to_move,
        "turn_started": gs.turn_started,
        "deadline": mm.deadline(gs),
        "max_moves": gs.options.max_moves,
        "clock": _clock_view(gs),
        "seats": [_seat_view(ms, gs, s, viewer) for s in range(len(gs.seats))],
        "colored_walls": _colored_walls(gs),
        "maze": _maze_view(gs) if viewer.full else None,
        "over": _game_over_view(gs.finished) if gs.finished is not None else None,
    }


# --- replay text -----------------------------------------------------------------------


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f}".rstrip("0").rstrip(".") + " s"


def _bonk_text(maze: Maze, a: Moved) -> str:
    """Where an attempt bonked, for auditors."""
    if a.bonk_index is None:
        return ""
    pos = a.from_cell
    for move in a.moves[: a.bonk_index]:
        pos = step(pos, move)
    move = a.moves[a.bonk_index]
    nxt = step(pos, move)
    if not on_board(nxt, maze.size):
        into = "the outer wall"
    else:
        edge = edge_between(pos, nxt, maze.size)
        assert edge is not None
        owner = maze.owner(edge)
        into = edge_name(edge, maze.size) if owner is None else (
            f"{owner}'s colored wall between {cell_name(pos)} and {cell_name(nxt)}"
        )
    return (
        f"bonks at move {a.bonk_index + 1} ({DIRECTION_WORDS[move]} from {cell_name(pos)} "
        f"into {into})"
    )


def _moved_lines(ms: MatchState, gs: State, a: Moved) -> list[str]:
    terms = TERMS[gs.variant]
    head = f"Turn {a.turn}" if mm.has_turns(gs.variant) else f"Submission {a.turn}"
    player = who(ms, a.seat)
    if a.timed_out:
        why = "no periods left" if gs.variant == "black-garnet" else "the reserve is gone"
        text = f"{head}: {player} runs out of time ({why}): zero moves, stays on {cell_name(a.to_cell)}"
    elif a.bonked:
        text = (
            f"{head}: {player} from {cell_name(a.from_cell)}: {a.moves} {_bonk_text(gs.maze, a)}; "
            f"stays on {cell_name(a.from_cell)}"
        )
    elif not a.moves:
        text = f"{head}: {player} passes (zero moves) on {cell_name(a.to_cell)}"
    else:
        text = f"{head}: {player} from {cell_name(a.from_cell)}: {a.moves} -> {cell_name(a.to_cell)}"
    if a.collected:
        text += f"; {terms.visit} " + ", ".join(_cells(a.collected))
    if a.reserve_left is not None:
        text += f"; reserve left {_seconds(a.reserve_left)}"
    if a.cooldown_until is not None:
        text += f"; may move again at {a.cooldown_until} ms"
    return [text + "."]


def audit_drawing(gs: State, seat: int) -> list[str]:
    """The maze with one seat's play drawn on it (see LEGEND)."""
    maze = gs.maze
    n = maze.size
    me = gs.seats[seat]
    grid = [list(line.ljust(2 * n + 1)) for line in render(maze)]
    for a in me.attempts:
        if a.bonked:
            assert a.bonk_index is not None
            pos = a.from_cell
            for move in a.moves[: a.bonk_index]:
                pos = step(pos, move)
            line, col = border_position(pos, a.moves[a.bonk_index], n)
            grid[line][col] = "X"
            continue
        cells = trace(maze, me.letter, a.from_cell, a.moves).cells
        for here, there in pairwise(cells):
            line, col = cell_position(here, n)
            dx, dy = there[0] - here[0], there[1] - here[1]
            if grid[line - dy][col + dx] == " ":
                grid[line - dy][col + dx] = ":" if dy else "."
            for cell in (here, there):
                cl, cc = cell_position(cell, n)
                grid[cl][cc] = "o"
    for corner in me.targets:
        line, col = cell_position(corner, n)
        grid[line][col] = "*" if corner in me.visited else "?"
    line, col = cell_position(me.start, n)
    grid[line][col] = me.letter
    line, col = cell_position(me.pos, n)
    grid[line][col] = "@"
    header = "   " + " ".join("abcdefghijklmnopqrstuvwxyz"[x] for x in range(n))
    rows = [header]
    for i, chars in enumerate(grid):
        label = f"{n - i // 2:>2}" if i % 2 else "  "
        rows.append(f"{label} {''.join(chars).rstrip()}")
    return rows


LEGEND = (
    "- and | walls; a / b colored walls (only the player who started at A / B passes its "
    "own); A or B the player's start; @ where it ended; * a corner (key) it visited, ? one "
    "it did not; o a cell it passed; . and : passages it crossed; X the wall or border a "
    "bonk hit"
)


def describe(ms: MatchState, event: Any) -> list[str]:
    """Lines for a human reading the match (everything shown)."""
    gs: State = ms.game_state
    if isinstance(event, TurnStarted):
        return [
            f"Turn {event.turn}: {who(ms, event.seat)} to move, by {event.deadline} ms "
            f"(+{_seconds(event.deadline - event.at)})."
        ]
    if isinstance(event, PeriodSpent):
        return [
            f"Turn {event.turn}: {who(ms, event.seat)} runs past its time: a period is spent "
            f"({event.periods_left} left); the turn now closes at {event.deadline} ms."
        ]
    if isinstance(event, Moved):
        return _moved_lines(ms, gs, event)
    if isinstance(event, CooldownOver):
        return [f"{who(ms, event.seat)} may move again ({event.at} ms)."]
    if isinstance(event, GameOver):
        terms = TERMS[gs.variant]
        counted = " to ".join(str(c) for c in event.collected)
        lines = [
            f"Game over after {event.turns} {'turns' if mm.has_turns(gs.variant) else 'submissions'}: "
            f"{who(ms, event.winner)} wins ({event.reason}); {terms.goals} {counted}.",
            f"The maze ({gs.maze.size}x{gs.maze.size}, symmetric across "
            f"{AXIS_TEXT[gs.maze.axis]}, {len(gs.maze.walls)} of "
            f"{len(interior_edges(gs.maze.size))} inner borders walled) and each player's play.",
            f"Legend: {LEGEND}.",
        ]
        for s, seat in enumerate(gs.seats):
            bonks = sum(1 for a in seat.attempts if a.bonked)
            lines.append(
                f"{who(ms, s)}, start {seat.letter} = {cell_name(seat.start)}: "
                f"{len(seat.attempts)} sequences, {bonks} bonked:"
            )
            lines.extend(audit_drawing(gs, s))
        return lines
    return []


# --- twin worlds (the leak property) ---------------------------------------------------

_TWIN_T0 = 1_732_233_600_000


def _twin_mazes(variant: str, rng: Rng) -> tuple[Maze, Maze, frozenset[int]]:
    """A maze drawn from `rng`, and the same maze with one mirror pair of plain borders
    walled in the first and open in the second (every corner reachable in both); that
    pair of edges."""
    n, axis = mm.SIZE[variant], mm.AXIS[variant]
    maze = generate(n, axis, rng, colored_pairs=1 + rng.below(3) if variant == "crazy" else 0)
    pairs = [(e, mirror_edge(e, n, axis)) for e in interior_edges(n)]
    for e, m in rng.shuffle([(e, m) for e, m in pairs if e < m]):
        if maze.owner(e) is not None or maze.owner(m) is not None:
            continue  # a colored wall is in sight of everyone
        walled = msgspec.structs.replace(maze, walls=maze.walls | {e, m})
        try:
            check_corners(walled)
        except MazeError:
            continue
        return walled, msgspec.structs.replace(maze, walls=maze.walls - {e, m}), frozenset((e, m))
    raise RuntimeError("no border pair to wall")  # pragma: no cover


def _toward(maze: Maze, letter: str, start: Cell, goal: Cell) -> str:
    """The shortest sequence from `start` to `goal` for the player who started at
    `letter` (breadth first over the borders it may cross)."""
    n = maze.size
    blocked = maze.blocked_for(letter)
    came: dict[Cell, tuple[Cell, str]] = {}
    todo = [start]
    seen = {start}
    for cell in todo:
        if cell == goal:
            break
        for move in "UDLR":
            nxt = step(cell, move)
            edge = edge_between(cell, nxt, n)
            if edge is not None and edge not in blocked and nxt not in seen:
                seen.add(nxt)
                came[nxt] = (cell, move)
                todo.append(nxt)
    moves: list[str] = []
    cell = goal
    while cell != start:
        cell, move = came[cell]
        moves.append(move)
    return "".join(reversed(moves))


def _twin_moves(gs: State, seat: int, walled: Maze, avoid: frozenset[int], rng: Rng) -> str:
    """A sequence for `seat` that never tries a border in `avoid`: half the time the way
    to its next corner (or home), otherwise a few random moves (which may bonk)."""
    me = gs.seats[seat]
    n = walled.size
    limit = gs.options.max_moves
    if rng.below(2) == 0:
        left = [c for c in me.targets if c not in me.visited]
        goal = min(left, key=lambda c: abs(c[0] - me.pos[0]) + abs(c[1] - me.pos[1])) if left else me.start
        path = _toward(walled, me.letter, me.pos, goal)
        if path:
            return path[:limit]
    blocked = walled.blocked_for(me.letter)
    pos: Cell | None = me.pos
    moves: list[str] = []
    for _ in range(rng.below(min(limit, 12)) + 1):
        here = pos if pos is not None else me.pos
        move = rng.choice([m for m in "UDLR" if edge_between(here, step(here, m), n) not in avoid])
        moves.append(move)
        if pos is not None:
            edge = edge_between(pos, step(pos, move), n)
            pos = None if edge is None or edge in blocked else step(pos, move)
    return "".join(moves)


# What stays sealed after the match: nothing. The walls, the sequences and every move are
# revealed when the match ends (RULINGS.md, "After a match").
sealed = NOTHING_SEALED


def twins(variant: str, rng: Rng) -> Twins:
    """Two Memory Maze matches on a host's maze that differ in one mirror pair of
    borders, walled in one world and open in the other, which no attempt ever tries;
    both players play the same in both (attempts that bonk elsewhere, turns run out,
    rejected commands, play to a win now and then). Players and spectators see the same
    of a Memory Maze, so no seat may tell the worlds apart: only full viewers, who see
    the maze."""
    walled, opened, avoid = _twin_mazes(variant, rng)
    options: dict[str, Any] = {"clock_scale": 0.01, "bottom_left_seat": rng.below(2)}
    if mm.has_turns(variant):
        options["first_seat"] = rng.below(2)
    if variant == "black-garnet":
        options["periods"] = rng.below(4)
    if variant == "minos":
        options["reserve_seconds"] = rng.choice([0, 2, 300])
    mazes = (walled, opened) if rng.below(2) == 0 else (opened, walled)
    seed = bytes(rng.below(256) for _ in range(32))
    a, b = (
        Rehearsal(mm, variant, {**options, "maze": "\n".join(render(m))}, seed, _TWIN_T0)
        for m in mazes
    )
    length = 20 + rng.below(60)
    while not a.ms.ended and len(a.steps) < length:
        gs: State = a.gs
        due = engine_deadline(a.ms)
        r = rng.below(12)
        if mm.has_turns(variant):
            seat = gs.to_move if gs.to_move is not None else 0
            body: dict[str, Any] = {"type": "move", "moves": "", "turn": gs.turn}
            if r == 0:
                seat = 1 - seat  # not its turn
            elif r == 1:
                body["turn"] = gs.turn + 1 + rng.below(2) * -2  # a stale or future turn
            elif r == 2:
                body["moves"] = "UX"  # not moves
            elif r != 3:  # r == 3: no moves (a pass)
                body["moves"] = _twin_moves(gs, seat, walled, avoid, rng)
        else:
            seat = rng.below(2)
            body = {"type": "move", "moves": _twin_moves(gs, seat, walled, avoid, rng)}
            if not gs.seats[seat].ready and r < 9 and due is not None:
                late = rng.below(3)
                a.tick(late)  # its cooldown ends first (most of the time)
                b.tick(late)
                continue
        if r == 4 and due is not None:
            late = rng.below(3)
            a.tick(late)
            b.tick(late)
            continue
        # now and then past the deadline: a period or the reserve is spent first, or the
        # turn is gone and the move is refused
        at = a.ts + 1 + rng.below(40)
        if due is not None and rng.below(6) == 0:
            at = max(at, due + rng.below(50))
        a.step("command", seat, body, at)
        b.step("command", seat, body, at)
    return Twins(variant=variant, worlds=(a.world(), b.world()), tells=())
