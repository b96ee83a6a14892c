"""Memory Maze for clients: reading the view, commands, and bots.

A bot sees only its seat's view: both positions, the corners visited, each player's latest
sequence (`crazy`: every sequence) and whether it bonked, the visible colored walls of
`crazy`. It never sees a wall. The maze geometry (cells, edges, mirror images) is asked
of the rules package, which every client may use.

Bots:
- `RandomBot`: a random sequence of 1 to 8 moves each time it may move (now and then a
  pass in the turn editions). It hardly ever wins; it keeps the other seat busy.
- `ExplorerBot`: remembers what every sequence it has seen proves. A success proves
  every border it crossed open; a bonk proves that at least one of the borders it tried
  is a wall (a *clause*), and once all but one border of a clause are known open, the
  last is a wall. Because the maze is symmetric, each border learned is learned twice
  (its mirror image too). It learns from the opponent's sequences as well (in `crazy`
  from the opponent's side of the colored walls). Each move it plans the cheapest path
  to the nearest corner it still needs (then back to its start), known passages costing
  1 and unknown borders more, and sends the part of that path up to a few unknown
  borders: few enough that a success is likely and a bonk is easy to place.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clients.bots.common import BotFactory, seat_in_play
from domain.games.memory_maze.maze import (
    COLUMNS,
    DIRECTIONS,
    Cell,
    edge_between,
    mirror_edge,
    path_edges,
    step,
)


def parse_cell(name: str) -> Cell:
    """(x, y) of a cell name like `c3`."""
    return (COLUMNS.index(name[0]), int(name[1:]) - 1)


def move_command(moves: str, turn: int | None) -> dict[str, Any]:
    command: dict[str, Any] = {"type": "move", "moves": moves}
    if turn is not None:
        command["turn"] = turn
    return command


# --- reading the view ------------------------------------------------------------------


@dataclass(frozen=True)
class Situation:
    """What a seat needs to decide, from its view."""

    variant: str
    me: int
    size: int
    axis: str
    turns: bool
    turn: int
    max_moves: int
    seats: list[dict[str, Any]]
    colored: dict[int, str]  # edge -> letter of the player who passes it

    @property
    def mine(self) -> dict[str, Any]:
        return self.seats[self.me]

    @property
    def my_time(self) -> bool:
        """Whether this seat may submit now."""
        return bool(self.mine["ready"])

    @property
    def key(self) -> tuple[int, int]:
        """What identifies one chance to move (a turn, or the n-th submission of mine)."""
        if self.turns:
            return (self.turn, 0)
        history = self.mine.get("history") or []
        return (0, len(history))

    @classmethod
    def of(cls, view: dict[str, Any]) -> Situation | None:
        """None when this seat has nothing to decide (not seated, not in play)."""
        seated = seat_in_play(view)
        if seated is None:
            return None
        me, gs = seated
        if gs.get("over") is not None:
            return None
        size = int(gs["size"])
        colored: dict[int, str] = {}
        for wall in gs.get("colored_walls") or []:
            a, b = (parse_cell(c) for c in wall["between"])
            edge = edge_between(a, b, size)
            if edge is not None:
                colored[edge] = wall["letter"]
        return cls(
            variant=gs["variant"],
            me=me,
            size=size,
            axis=gs["symmetry"],
            turns=bool(gs["turns"]),
            turn=int(gs["turn"]),
            max_moves=int(gs["max_moves"]),
            seats=gs["seats"],
            colored=colored,
        )

    def attempts(self) -> list[tuple[int, dict[str, Any]]]:
        """Every sequence the view shows: (seat, attempt)."""
        out: list[tuple[int, dict[str, Any]]] = []
        for s, seat in enumerate(self.seats):
            shown = seat.get("history")
            if shown is None:
                shown = [seat["last"]] if seat.get("last") is not None else []
            out.extend((s, a) for a in shown)
        return out


# --- what the sequences prove ----------------------------------------------------------


@dataclass
class Knowledge:
    """Borders known open, known walls, and clauses (sets of borders, one at least a wall).

    Plain borders are kept by their mirror pair's smaller number (both are alike);
    colored walls are known from the start."""

    size: int
    axis: str
    colored: dict[int, str]
    open: set[int] = field(default_factory=set)
    walls: set[int] = field(default_factory=set)
    clauses: list[set[int]] = field(default_factory=list)
    seen: set[tuple[int, int, int]] = field(default_factory=set)

    def rep(self, edge: int) -> int:
        return min(edge, mirror_edge(edge, self.size, self.axis))

    def status(self, edge: int | None, letter: str) -> bool | None:
        """True: open for that player; False: a wall for it; None: unknown."""
        if edge is None:
            return False
        owner = self.colored.get(edge)
        if owner is not None:
            return owner == letter
        r = self.rep(edge)
        if r in self.open:
            return True
        if r in self.walls:
            return False
        return None

    def suspect(self, edge: int) -> bool:
        r = self.rep(edge)
        return any(r in clause for clause in self.clauses)

    def observe(self, seat: int, letter: str, attempt: dict[str, Any]) -> None:
        key = (seat, int(attempt["turn"]), int(attempt["at"]))
        if key in self.seen:
            return
        self.seen.add(key)
        edges = path_edges(parse_cell(attempt["from"]), attempt["moves"], self.size)
        if not attempt["bonked"]:
            for edge in edges:
                if edge is not None and edge not in self.colored:
                    self.open.add(self.rep(edge))
        else:
            clause: set[int] = set()
            for edge in edges:
                known = self.status(edge, letter)
                if known is False:
                    return  # a wall it already knew of explains the bonk: nothing new
                if known is None and edge is not None:
                    clause.add(self.rep(edge))
            if not clause:
                return  # cannot be (every border known open); ignore
            self.clauses.append(clause)
        self._propagate()

    def _propagate(self) -> None:
        changed = True
        while changed:
            changed = False
            kept: list[set[int]] = []
            for clause in self.clauses:
                if clause & self.walls:
                    continue
                clause = clause - self.open
                if len(clause) == 1:
                    self.walls.add(next(iter(clause)))
                    changed = True
                    continue
                if clause and clause not in kept:
                    kept.append(clause)
            self.clauses = kept

    def open_share(self) -> float:
        """An estimate of how many unknown borders are open (with a prior)."""
        return (len(self.open) + 6) / (len(self.open) + len(self.walls) + 10)


UNKNOWN_COST = 2.5
SUSPECT_COST = 3.0


def plan(k: Knowledge, letter: str, start: Cell, goal: Cell) -> tuple[float, str]:
    """The cheapest path from start to goal (cost, moves); (inf, "") if none is possible."""
    best: dict[Cell, float] = {start: 0.0}
    back: dict[Cell, tuple[Cell, str]] = {}
    todo: list[tuple[float, Cell]] = [(0.0, start)]
    while todo:
        cost, cell = heapq.heappop(todo)
        if cell == goal:
            break
        if cost > best.get(cell, math.inf):
            continue
        for move in DIRECTIONS:
            nxt = step(cell, move)
            edge = edge_between(cell, nxt, k.size)
            known = k.status(edge, letter)
            if known is False or edge is None:
                continue
            extra = 1.0 if known else UNKNOWN_COST + (SUSPECT_COST if k.suspect(edge) else 0.0)
            if cost + extra < best.get(nxt, math.inf):
                best[nxt] = cost + extra
                back[nxt] = (cell, move)
                heapq.heappush(todo, (cost + extra, nxt))
    if goal not in best:
        return math.inf, ""
    moves = []
    cell = goal
    while cell != start:
        cell, move = back[cell]
        moves.append(move)
    return best[goal], "".join(reversed(moves))


def probe(k: Knowledge, letter: str, start: Cell, moves: str, unknowns: int, limit: int) -> str:
    """The part of a planned path to send now: up to `unknowns` unknown borders (at least
    one step), at most `limit` moves, and never every border of a clause (that would
    surely bonk and teach nothing)."""
    out: list[str] = []
    tried: set[int] = set()
    pos = start
    for move in moves[:limit]:
        nxt = step(pos, move)
        edge = edge_between(pos, nxt, k.size)
        if edge is not None and k.status(edge, letter) is None:
            r = k.rep(edge)
            if r not in tried:
                with_it = tried | {r}
                if out and (
                    len(tried) >= unknowns or any(clause <= with_it for clause in k.clauses)
                ):
                    break
                tried = with_it
        out.append(move)
        pos = nxt
    return "".join(out)


# --- bots ------------------------------------------------------------------------------


class _Bot:
    """What both bots share: when to act, and not acting twice on one chance."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.sent: tuple[int, int] | None = None

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        s = Situation.of(view)
        if s is None:
            return []
        self.observe(s)
        if not s.my_time or self.sent == s.key:
            return []
        self.sent = s.key
        return [move_command(self.choose(s), s.turn if s.turns else None)]

    def feedback(
        self, command: dict[str, Any], accepted: bool, warnings: Sequence[str], code: str | None
    ) -> None:
        if not accepted:
            self.sent = None  # try again on the next view

    def observe(self, s: Situation) -> None:
        pass

    def choose(self, s: Situation) -> str:
        raise NotImplementedError


class RandomBot(_Bot):
    """A random sequence of 1 to 8 moves (a pass now and then in the turn editions)."""

    def choose(self, s: Situation) -> str:
        if s.turns and self.rng.random() < 0.1:
            return ""
        length = self.rng.randint(1, min(8, s.max_moves))
        return "".join(self.rng.choice("UDLR") for _ in range(length))


class ExplorerBot(_Bot):
    """Explores, remembers what every bonk and success proves, and races the corners."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.k: Knowledge | None = None

    def observe(self, s: Situation) -> None:
        if self.k is None or self.k.size != s.size:
            self.k = Knowledge(size=s.size, axis=s.axis, colored=dict(s.colored))
        for seat, attempt in s.attempts():
            self.k.observe(seat, s.seats[seat]["letter"], attempt)

    def choose(self, s: Situation) -> str:
        k = self.k
        assert k is not None
        me = s.mine
        letter = me["letter"]
        pos = parse_cell(me["position"])
        todo = [parse_cell(c) for c in me["targets"] if c not in me["visited"]]
        goals = todo or [parse_cell(me["start"])]
        options = []
        for goal in goals:
            cost, moves = plan(k, letter, pos, goal)
            if moves:
                options.append((cost, self.rng.random(), moves))
        if not options:  # nothing known to be possible: a random step
            return self.rng.choice("UDLR")
        _, _, moves = min(options)
        p = min(0.9, max(0.3, k.open_share()))
        unknowns = max(1, round(math.log(0.5) / math.log(p)))
        return probe(k, letter, pos, moves, unknowns, s.max_moves)


# `heuristic` is the explorer too, for callers that name every game's strongest bot so.
BOTS: Mapping[str, BotFactory] = {"random": RandomBot, "explorer": ExplorerBot, "heuristic": ExplorerBot}
LINEUP: tuple[str, ...] = ("explorer", "random")
