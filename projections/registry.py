"""The one registry of hosted games: rules and views, by game name.

The server, the clients and the replay tool find every game here and nowhere else.
Adding a game is adding a line here (plus its modules in domain/games and projections).
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.contract import Game
from domain.games import escalator as esc_rules
from domain.games import five_card_trick as fct_rules
from domain.games import keys_to_success as kts_rules
from domain.games import memory_maze as mm_rules
from domain.games.labyrinth import game as lab_rules
from projections import escalator as esc_views
from projections import five_card_trick as fct_views
from projections import keys_to_success as kts_views
from projections import labyrinth as lab_views
from projections import memory_maze as mm_views
from projections.contract import GameViews


@dataclass(frozen=True)
class Hosted:
    rules: Game
    views: GameViews


GAMES: dict[str, Hosted] = {
    fct_rules.name: Hosted(rules=fct_rules, views=fct_views),
    mm_rules.name: Hosted(rules=mm_rules, views=mm_views),
    kts_rules.name: Hosted(rules=kts_rules, views=kts_views),
    esc_rules.name: Hosted(rules=esc_rules, views=esc_views),
    lab_rules.name: Hosted(rules=lab_rules, views=lab_views),
}


class UnknownGame(KeyError):
    pass


def hosted(name: str) -> Hosted:
    try:
        return GAMES[name]
    except KeyError:
        raise UnknownGame(f"unknown game {name!r} (hosted: {', '.join(sorted(GAMES))})") from None


def rules_by_name() -> dict[str, Game]:
    return {name: h.rules for name, h in GAMES.items()}


def resolve_game(game: str, variant: str | None) -> tuple[str, str | None]:
    """(game, variant) for a game named by a client: a hosted game's name, or else the
    name of a variant that exactly one hosted game has (`gatekeeping` is the game
    keys-to-success, variant gatekeeping). A different variant keeps `game` as given."""
    if game in GAMES:
        return game, variant
    owners = [name for name, h in GAMES.items() if any(v.name == game for v in h.rules.variants)]
    if len(owners) == 1 and variant in (None, game):
        return owners[0], game
    return game, variant
