"""Finished matches' replays (`GET /matches/{id}/replay`) and logs (`/log`), kept once made.

A replay folds the whole log again, makes the view of every update and verifies the
log: 4 ms for a Five-Card Trick match, 25 ms for Keys to Success, 60 ms for Labyrinth on
the development machine, in the server's process. A finished match's replay for a
viewer does not change, and it is what a crowd asks for after a famous match (or a
client asks for again and again), so each answer is kept, by the match, its log (its
length and last digest: a log the store gives differently is replayed again) and the
viewer, as long as all of them fit in `max_bytes`; the least recently asked go first.
A log's public form (every value the rules keep secret for good withheld,
projections/seal.py) folds the whole log again too, and is kept the same way (by the
match, its log and whether the audit key was given).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable


class ReplayCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._kept: OrderedDict[Hashable, bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, key: Hashable) -> bytes | None:
        body = self._kept.get(key)
        if body is not None:
            self._kept.move_to_end(key)
        return body

    def put(self, key: Hashable, body: bytes) -> None:
        """Keep `body` (not if it alone is over `max_bytes`), letting go of the least
        recently asked as needed."""
        if len(body) > self.max_bytes:
            return
        old = self._kept.pop(key, None)
        if old is not None:
            self.size -= len(old)
        self._kept[key] = body
        self.size += len(body)
        while self.size > self.max_bytes:
            _, dropped = self._kept.popitem(last=False)
            self.size -= len(dropped)
