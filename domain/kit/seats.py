"""Per-seat state: a tuple with one item a seat, replaced one seat at a time."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

T = TypeVar("T")


def replace_at(items: tuple[T, ...], index: int, new: T) -> tuple[T, ...]:
    """`items` with the one at `index` replaced by `new`."""
    return (*items[:index], new, *items[index + 1 :])


def update_at(items: tuple[T, ...], index: int, **changes: Any) -> tuple[T, ...]:
    """`items` with the struct at `index` given `changes` (msgspec.structs.replace)."""
    return replace_at(items, index, msgspec.structs.replace(items[index], **changes))  # type: ignore[type-var]
