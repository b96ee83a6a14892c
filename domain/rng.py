"""The match's random generator: SHA-256 in counter mode, keyed by the match seed.

Python's `random` may change its algorithms between versions; a replay years later must
draw the same numbers, so draws come from this small generator instead:

    block(i) = SHA-256(seed || label || i as 8 bytes big-endian)

Each block yields four 64-bit words (big-endian). `below(n)` draws an integer in
[0, n) by rejection sampling over 64-bit words, so every value is equally likely;
`shuffle` is Fisher-Yates from the last index down, drawing `below(i + 1)` for each i.
The label separates independent streams of one seed (say "setup" and "tiebreak").
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_WORD = 1 << 64


class Rng:
    """A deterministic stream of 64-bit words from (seed, label)."""

    __slots__ = ("_counter", "_label", "_seed", "_words")

    def __init__(self, seed: bytes, label: str = "") -> None:
        self._seed = bytes(seed)
        self._label = label.encode()
        self._counter = 0
        self._words: list[int] = []

    def _refill(self) -> None:
        block = hashlib.sha256(
            self._seed + self._label + self._counter.to_bytes(8, "big")
        ).digest()
        self._counter += 1
        self._words = [
            int.from_bytes(block[i : i + 8], "big") for i in range(24, -1, -8)
        ]

    def word(self) -> int:
        """The next 64-bit word."""
        if not self._words:
            self._refill()
        return self._words.pop()

    def below(self, n: int) -> int:
        """A uniform integer in [0, n)."""
        if n <= 0:
            raise ValueError("below() needs a positive bound")
        limit = _WORD - (_WORD % n)
        while True:
            w = self.word()
            if w < limit:
                return w % n

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def shuffle(self, items: Sequence[T]) -> list[T]:
        """A new list: the items in an order drawn from the stream."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out
