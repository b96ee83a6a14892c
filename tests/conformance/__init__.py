"""The conformance suite: what every registered game and variant must satisfy."""

from __future__ import annotations

import inspect

from projections.registry import GAMES, Hosted


def hosted_games() -> dict[str, Hosted]:
    """The games of the registry, without the toy games some tests register in it (the
    server tests' `tests.toygame`, the broken games of `test_broken_games`)."""
    found: dict[str, Hosted] = {}
    for game, h in GAMES.items():
        module = inspect.getmodule(h.rules)
        if module is None or not module.__name__.startswith("tests."):
            found[game] = h
    return found
