"""Helpers for the Memory Maze tests: mazes drawn to order, a match driven through the engine."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from domain.engine import Outcome
from domain.games import memory_maze as mm
from domain.games.memory_maze import Moved, State
from domain.games.memory_maze.maze import (
    Maze,
    edge_between,
    mirror_edge,
    render,
)
from projections import memory_maze as views
from projections.common import match_view, project_events
from projections.contract import Viewer
from tests.match_driver import MatchDriver

SEED = bytes(range(32))
T0 = 1_000_000


def cell(name: str) -> tuple[int, int]:
    return ("abcdefghij".index(name[0]), int(name[1:]) - 1)


def edge(a: str, b: str, n: int) -> int:
    found = edge_between(cell(a), cell(b), n)
    assert found is not None
    return found


def maze(
    variant: str,
    walls: Iterable[tuple[str, str]] = (),
    colored_a: Iterable[tuple[str, str]] = (),
    mirrored: bool = True,
) -> Maze:
    """A maze of the variant's size with these walls (and, if `mirrored`, their mirror
    images); `colored_a`: colored walls of A (their mirror images become B's)."""
    n, axis = mm.SIZE[variant], mm.AXIS[variant]
    ws: set[int] = set()
    for a, b in walls:
        e = edge(a, b, n)
        ws.add(e)
        if mirrored:
            ws.add(mirror_edge(e, n, axis))
    ca = {edge(a, b, n) for a, b in colored_a}
    cb = {mirror_edge(e, n, axis) for e in ca}
    return Maze(size=n, axis=axis, walls=frozenset(ws), colored_a=frozenset(ca), colored_b=frozenset(cb))


def drawing(m: Maze) -> str:
    return "\n".join(render(m))


class MmMatch(MatchDriver):
    """A match of Memory Maze, every step proposed through the engine and logged."""

    def __init__(
        self,
        variant: str | None = None,
        names: tuple[str, str] = ("Ann", "Bob"),
        ts: int = T0,
        seed: bytes = SEED,
        **options: Any,
    ) -> None:
        if isinstance(options.get("maze"), Maze):
            options["maze"] = drawing(options["maze"])
        super().__init__(
            mm, variant=variant, names=names, ts=ts, match_id="m1", seed=seed,
            options=options,
        )

    @property
    def gs(self) -> State:
        state: State = self.ms.game_state
        return state

    def move(self, seat: int, moves: str, turn: int | None = -1, ts: int | None = None) -> Outcome:
        """Send moves; `turn` -1: the turn in play (turn editions), none in crazy."""
        body: dict[str, Any] = {"type": "move", "moves": moves}
        if turn == -1:
            if mm.has_turns(self.gs.variant):
                body["turn"] = self.gs.turn
        elif turn is not None:
            body["turn"] = turn
        return self.propose("command", seat, body, ts)

    def ok(self, seat: int, moves: str, ts: int | None = None) -> Moved:
        """Send moves that must be accepted; the attempt."""
        out = self.move(seat, moves, ts=ts)
        assert out.rejection is None, out.rejection
        moved = [e for e in out.events if isinstance(e, Moved) and not e.timed_out]
        assert len(moved) == 1, out.events
        return moved[0]

    def tick(self, ts: int) -> Outcome:
        return self.propose("tick", None, None, ts)

    def stream(self, viewer: Viewer, hide_commitment: bool = False) -> list[bytes]:
        """Every update frame this viewer gets while the match is on, as the server frames
        it (projected events and the view after each entry that shows it something).

        `hide_commitment`: blank the published commitment (a hash of the secret seed and
        setup, so it differs between two mazes without telling anything about either)."""
        frames = []
        for ms, out in zip(self.states[1:], self.outcomes[1:], strict=True):
            if ms.ended:
                break
            events = project_events(views, ms, out, viewer)
            if events:
                view = match_view(views, ms, viewer)
                if hide_commitment:
                    view["commitment"] = "-"
                frames.append(msgspec.json.encode({"events": events, "view": view}))
        return frames
