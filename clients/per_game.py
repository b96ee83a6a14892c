"""Client modules found per registered game, by a naming convention.

A game's client modules are named after the game, with '-' as '_': the bots of
`five-card-trick` are `clients.bots.five_card_trick`. Only games in
`projections.registry.GAMES` are looked for, so registering a game and writing its
modules is all it takes; nothing here lists games by hand.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Generic, TypeVar, cast

T = TypeVar("T")


def module_name(game: str) -> str:
    """The module name of a game's client modules: `five-card-trick` -> `five_card_trick`."""
    return game.replace("-", "_")


def find(package: str, game: str) -> ModuleType | None:
    """`package.<module_name(game)>` for a registered game; None if it has no such module."""
    from projections.registry import GAMES

    if game not in GAMES:
        return None
    name = f"{package}.{module_name(game)}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:  # the module exists but one of its imports does not
            raise
        return None


class ByGame(Mapping[str, T], Generic[T]):
    """A read-only mapping game -> `attribute` of the game's module in `package`, over
    the registered games that have such a module (looked up on every access)."""

    def __init__(self, package: str, attribute: str) -> None:
        self.package = package
        self.attribute = attribute

    def __getitem__(self, game: str) -> T:
        module = find(self.package, game)
        if module is None:
            raise KeyError(game)
        return cast(T, getattr(module, self.attribute))

    def __iter__(self) -> Iterator[str]:
        from projections.registry import GAMES

        return iter([game for game in GAMES if find(self.package, game) is not None])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"ByGame({self.package!r}, {self.attribute!r})"
