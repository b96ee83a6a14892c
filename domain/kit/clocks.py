"""Clocks: options give seconds, the log counts milliseconds.

Every clock of a match is its option in seconds times the match's `clock_scale`, rounded
to whole milliseconds, so tests and bot runs can play a day-long vote in a few
milliseconds with the same rules."""

from __future__ import annotations


def clock_ms(seconds: float | None, scale: float, least: int = 1) -> int:
    """A clock of `seconds` (None: 0) times `scale`, in whole milliseconds, at least `least`."""
    return max(least, int((seconds or 0) * 1000 * scale + 0.5))
