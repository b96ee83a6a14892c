"""Bots, found by game name.

A bot is a client: it sees only the `view` the server sends its seat, and it gets its
randomness from the `random.Random` its caller seeds. A registered game's bots live in
`clients/bots/<game>.py` (the game's name with '-' as '_'), which declares

    BOTS: Mapping[str, BotFactory]    # its bots by name
    LINEUP: tuple[str, ...]           # the default line-up, strongest first

and nothing else needs to change: `BOTS` and `LINEUPS` here are looked up in those
modules for every game in `projections.registry.GAMES`. (`TERMINALS` and `Terminal` are
clients.terminal's, named here too for older callers.)

    bot = BOTS["five-card-trick"]["heuristic"](random.Random(7))
    for command in bot.act(view):      # commands to send now (often none)
        ...
        bot.feedback(command, accepted, warnings, code)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clients.bots.common import Bot, BotFactory
from clients.per_game import ByGame
from clients.terminal import TERMINALS, Terminal

if TYPE_CHECKING:
    from clients.client import MatchConnection


BOTS: Mapping[str, Mapping[str, BotFactory]] = ByGame("clients.bots", "BOTS")
LINEUPS: Mapping[str, tuple[str, ...]] = ByGame("clients.bots", "LINEUP")


def _bots_of(game: str) -> Mapping[str, BotFactory]:
    try:
        return BOTS[game]
    except KeyError:
        raise KeyError(f"no bots for game {game!r} (games with bots: {', '.join(sorted(BOTS))})") from None


def bot_factory(game: str, name: str) -> BotFactory:
    bots = _bots_of(game)
    try:
        return bots[name]
    except KeyError:
        raise KeyError(f"no bot {name!r} for {game} (bots: {', '.join(sorted(bots))})") from None


def cycled(names: Sequence[str], seats: int) -> list[str]:
    """`names` repeated over `seats` seats: names[0] in seat 0, names[1] in seat 1, ..."""
    return [names[seat % len(names)] for seat in range(seats)]


def lineup(game: str, seats: int) -> list[str]:
    """The bot names of `game`'s default line-up (its LINEUP, cycled) for `seats` seats.

    KeyError if the game has no bots; ValueError if its LINEUP is empty or names a bot
    its BOTS lacks."""
    bots = _bots_of(game)
    names = LINEUPS[game]
    if not names:
        raise ValueError(f"{game}: LINEUP names no bot")
    for name in names:
        if name not in bots:
            raise ValueError(f"{game}: LINEUP names {name!r}, not one of its bots ({', '.join(sorted(bots))})")
    return cycled(names, seats)


MAX_REJECTIONS_PER_UPDATE = 3


async def play_bot(conn: MatchConnection, bot: Bot) -> dict[str, Any]:
    """Play one seat over its connection until the match ends; the final view.

    The bot acts on the latest view only once every received message is read, so a
    catch-up replay of old updates never makes it answer an old round."""
    rejections = 0
    async for message in conn:
        view = conn.view
        if view is not None and view.get("ended"):
            return view
        if message.get("type") == "update":
            rejections = 0
        if conn.backlog() or view is None or rejections >= MAX_REJECTIONS_PER_UPDATE:
            continue
        for command in bot.act(view):
            result = await conn.send_command(command)
            bot.feedback(command, result.accepted, result.warnings, result.code)
            if not result.accepted:
                rejections += 1
                break
    if conn.view is not None and conn.view.get("ended"):
        return conn.view
    raise ConnectionError(f"the connection ended before the match did: {conn.close_reason}")


@dataclass
class Simulation:
    """A bot match played in-process through the engine (no server, no clock)."""

    entries: list[Any] = field(default_factory=list)
    outcomes: list[Any] = field(default_factory=list)  # one per entry, the create's empty
    result: Any = None
    rejections: list[tuple[int, int, dict[str, Any], str]] = field(default_factory=list)
    warnings: list[tuple[int, int, dict[str, Any], tuple[str, ...]]] = field(default_factory=list)
    commands: int = 0


def simulate(
    game: str,
    bots: Sequence[Bot],
    *,
    variant: str | None = None,
    options: Mapping[str, Any] | None = None,
    seed: bytes = b"\x00" * 32,
    max_entries: int = 10_000,
) -> Simulation:
    """Play a whole match between `bots` (one a seat) through domain.engine.propose.

    Each bot sees only match_view(...) for its seat, as over a socket. Commands are sent
    a millisecond apart; when no bot has anything to send, time jumps to the deadline."""
    from domain import engine
    from projections.common import match_view
    from projections.contract import Viewer
    from projections.registry import hosted

    host = hosted(game)
    now = 1_000_000
    first = engine.create_entry(
        host.rules, match_id="simulated", variant=variant, options=options or {}, seed=seed, ts=now
    )
    ms = engine.open_match(host.rules, first)
    sim = Simulation(entries=[first], outcomes=[engine.Outcome()])
    if len(bots) != ms.seats:
        raise ValueError(f"{game} needs {ms.seats} bots, got {len(bots)}")
    for seat in range(ms.seats):
        entry, ms, outcome = engine.propose(
            ms, kind="join", seat=None, cid=f"join-{seat}", body={"name": f"bot {seat}", "seat": seat}, ts=now
        )
        sim.entries.append(entry)
        sim.outcomes.append(outcome)
        if outcome.rejection is not None:
            raise RuntimeError(f"seat {seat}: {outcome.rejection}")
    while not ms.ended:
        if len(sim.entries) > max_entries:
            raise RuntimeError(f"no end after {max_entries} entries")
        acted = False
        for seat, bot in enumerate(bots):
            if ms.ended:
                break
            for command in bot.act(match_view(host.views, ms, Viewer(seat=seat))):
                now += 1
                entry, ms, outcome = engine.propose(
                    ms, kind="command", seat=seat, cid=f"c{len(sim.entries)}", body=command, ts=now
                )
                sim.entries.append(entry)
                sim.outcomes.append(outcome)
                sim.commands += 1
                acted = True
                rejection = outcome.rejection
                bot.feedback(command, rejection is None, outcome.warnings, rejection.code if rejection else None)
                if rejection is not None:
                    sim.rejections.append((entry.seq, seat, command, f"{rejection.code}: {rejection.reason}"))
                    break
                if outcome.warnings:
                    sim.warnings.append((entry.seq, seat, command, tuple(outcome.warnings)))
        if not acted and not ms.ended:
            due = engine.deadline(ms)
            if due is None:
                raise RuntimeError("the match waits on nobody, yet has not ended")
            now = max(now + 1, due)
            entry, ms, outcome = engine.propose(
                ms, kind="tick", seat=None, cid=None, body={"deadline": due}, ts=now
            )
            sim.entries.append(entry)
            sim.outcomes.append(outcome)
    sim.result = ms.result
    return sim


__all__ = [
    "BOTS",
    "LINEUPS",
    "TERMINALS",
    "Bot",
    "BotFactory",
    "Simulation",
    "Terminal",
    "bot_factory",
    "cycled",
    "lineup",
    "play_bot",
    "simulate",
]
