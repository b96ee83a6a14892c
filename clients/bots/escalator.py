"""Escalator for clients: commands and bots.

Everything here works from the `view` a seat receives (projections/escalator.py): the
edition's commands, every level and lock, the disabled commands, its own list, its own
block of colours and the colours it has used on each player.

Bots (any number of seats):
- `RandomBot`: a random legal Fetch (a command, a standing target, the colour rules
  kept) and a random Decode choice.
- `HeuristicBot`: scores every legal Fetch by what its user program does for itself
  (up, shield, points) and what its target program does to the target (down counts most
  on a player above it, up on a player below it; a swap pays when the target stands
  higher), with a little noise so that bots do not crowd one command out; in Decode it
  activates the command whose target program is kindest to it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from clients.bots.common import BotFactory, seat_in_play


def fetch(round_: int, command: str, target: int) -> dict[str, Any]:
    return {"type": "fetch", "round": round_, "command": command, "target": target}


def decode(round_: int, command: str) -> dict[str, Any]:
    return {"type": "decode", "round": round_, "command": command}


def commands_of(gs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in gs["edition"]["commands"]}


def legal_fetches(gs: dict[str, Any], me: int) -> list[tuple[str, int]]:
    """Every (command, target) the rules let `me` fetch now, as the view shows them."""
    mine = gs.get("me") or {}
    disabled = set(gs.get("disabled", ()))
    used_on = {t["seat"]: t["colours_used"] for t in mine.get("targets", ())}
    block = mine.get("block") or {}
    needed = block.get("needed", [])
    strict = bool(needed) and len(needed) > block.get("rounds_left", 0)
    targets = [p["seat"] for p in gs["players"] if p["fell"] is None and p["seat"] != me]
    out = []
    for c in gs["edition"]["commands"]:
        if c["name"] in disabled or (strict and c["colour"] not in needed):
            continue
        for t in targets:
            colours = used_on.get(t, [])
            if len(colours) < 3 and c["colour"] not in colours:
                out.append((c["name"], t))
    return out


def _amount(effect: str) -> tuple[str, int]:
    words = effect.split()
    return words[0], int(words[1]) if len(words) > 1 else 0


class _Bot:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.fetched: int | None = None  # the step a Fetch was sent in
        self.decoded: int | None = None
        self.refused: set[tuple[int, str, int]] = set()

    def act(self, view: dict[str, Any]) -> list[dict[str, Any]]:
        seated = seat_in_play(view)
        if seated is None:
            return []
        me, gs = seated
        mine = gs.get("me") or {}
        if gs.get("phase") != "play":
            return []
        step = gs["step"]
        out: list[dict[str, Any]] = []
        if mine.get("must_decode") and mine.get("decode") is None and self.decoded != step:
            given = [g["command"] for g in mine.get("given", ())]
            if given:
                self.decoded = step
                out.append(decode(gs["decode_round"], self.choose_decode(gs, me, given)))
        if mine.get("must_fetch") and mine.get("fetch") is None and self.fetched != step:
            options = [o for o in legal_fetches(gs, me) if (step, *o) not in self.refused]
            if options:
                self.fetched = step
                command, target = self.choose_fetch(gs, me, options)
                out.append(fetch(gs["fetch_round"], command, target))
        return out

    def feedback(
        self, command: dict[str, Any], accepted: bool, warnings: Sequence[str], code: str | None
    ) -> None:
        if accepted:
            return
        if command.get("type") == "fetch":
            if self.fetched is not None:
                self.refused.add((self.fetched, command["command"], command["target"]))
            self.fetched = None
        elif command.get("type") == "decode":
            self.decoded = None

    def choose_fetch(self, gs: dict[str, Any], me: int, options: list[tuple[str, int]]) -> tuple[str, int]:
        return self.rng.choice(options)

    def choose_decode(self, gs: dict[str, Any], me: int, given: list[str]) -> str:
        return self.rng.choice(given)


class RandomBot(_Bot):
    """A random legal Fetch and a random Decode choice."""


class HeuristicBot(_Bot):
    """Helps itself and pushes those above it down (see the module's docstring)."""

    noise = 1.5

    def _levels(self, gs: dict[str, Any]) -> dict[int, int]:
        return {p["seat"]: p["level"] for p in gs["players"]}

    def score(self, gs: dict[str, Any], me: int, command: dict[str, Any], target: int) -> float:
        levels = self._levels(gs)
        mine, theirs = levels[me], levels[target]
        weight = 1.0 + max(-0.5, min(1.0, (theirs - mine) / 8))
        value = 0.0
        for effect in command["user"]:
            kind, n = _amount(effect)
            value += {
                "up": n, "down": -n, "shield": 2.0, "points": 0.8 * n,
                "learn_points": 0.2, "redirect": 1.0,
            }.get(kind, 0.0)
        for effect in command["target"]:
            kind, n = _amount(effect)
            if kind == "down":
                value += n * weight
            elif kind == "up":
                value -= n * weight * 0.5
            elif kind == "shield":
                value -= 1.0 * weight
            elif kind == "points":
                value -= 0.3 * n
            elif kind == "unmask":
                value -= 0.3
            elif kind == "swap":
                value += theirs - mine
            elif kind == "redirect":
                value -= 1.0
            elif kind == "learn_points":
                value -= 0.1
        return value + self.rng.uniform(0, self.noise)

    def choose_fetch(self, gs: dict[str, Any], me: int, options: list[tuple[str, int]]) -> tuple[str, int]:
        by_name = commands_of(gs)
        return max(options, key=lambda o: self.score(gs, me, by_name[o[0]], o[1]))

    def choose_decode(self, gs: dict[str, Any], me: int, given: list[str]) -> str:
        by_name = commands_of(gs)

        def kindness(name: str) -> float:
            value = 0.0
            for effect in by_name[name]["target"]:
                kind, n = _amount(effect)
                value += {"up": n, "down": -n, "shield": 2.0, "points": 0.5 * n}.get(kind, 0.0)
            return value + self.rng.uniform(0, 0.1)

        return max(given, key=kindness)


BOTS: Mapping[str, BotFactory] = {"random": RandomBot, "heuristic": HeuristicBot}
LINEUP: tuple[str, ...] = ("heuristic", "random")
