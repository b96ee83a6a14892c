"""The contract members most games fill the same way (see domain/contract.py)."""

from __future__ import annotations

from typing import Any


def all_public(options: Any) -> Any:
    """`public_options` of a game with no secret options: every option is recorded."""
    return options


def always_seeded(setup: Any) -> bool:
    """`seeded_setup` of a game whose setup is always drawn from the seed."""
    return True
