"""Labyrinth bots. They read only their seat's view (projections/labyrinth.py): the shape
of the labyrinth, whose turn it is, each player's last move as everyone heard it, and
their own belongings and what they were told alone.

- `random`: chooses a random start cell, then a random movement a turn, sometimes with a
  shot, a grenade or a status question first."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from clients.bots.common import BotFactory, seat_in_play

DIRECTIONS = ("up", "right", "down", "left")


class RandomBot:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.sent: tuple[int, int, str] | None = None  # (round, moves made, phase) acted on

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        found = seat_in_play(view)
        if found is None:
            return []
        seat, gs = found
        if gs["to_act"] != seat:
            return []
        me = gs["me"]
        mark = (gs["round"], gs["players"][seat]["moves"], gs["phase"] + str(len(me["refused"])))
        if mark == self.sent:
            return []
        self.sent = mark
        if gs["phase"] == "start":
            refused = {tuple(c) for c in me["refused"]}
            cells = [c for c in gs["shape"] if tuple(c) not in refused]
            return [{"type": "start", "cell": self.rng.choice(cells)}]
        if me["may_order"] and self.rng.random() < 0.3:
            return [{"type": "order", "cell": self.rng.choice(gs["shape"])},
                    {"type": "move", "move": self._move(me)}]
        return [{"type": "move", "move": self._move(me)}]

    def _move(self, me: Mapping[str, Any]) -> str:
        r = self.rng.random()
        go = self.rng.choice(DIRECTIONS)
        if r < 0.05:
            return "skip"
        if r < 0.15 and me["bullets"]:
            return f"go {go}, shoot {self.rng.choice(DIRECTIONS)}"
        if r < 0.25 and me["grenades"]:
            return f"blow the {go} wall, go {go}"
        if r < 0.3:
            return "go by the flow"
        if r < 0.35:
            return "go by the loop"
        return f"go {go}"

    def feedback(self, command: dict[str, Any], accepted: bool, warnings: Sequence[str], code: str | None) -> None:
        if not accepted:
            self.sent = None


BOTS: Mapping[str, BotFactory] = {"random": RandomBot}
LINEUP: tuple[str, ...] = ("random",)
