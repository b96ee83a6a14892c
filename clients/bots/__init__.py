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
from typing import TYPE_CHECKING, Any

from clients.bots.common import Bot, BotFactory
from clients.driver import Simulation, simulate  # re-exported (in-process matches)
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
