"""What a server process lets go of, and that what it lets go of is freed.
"""

from __future__ import annotations

import contextlib
import gc
import weakref
from collections.abc import Iterator
from typing import Any

from projections.contract import Viewer
from server.config import Settings
from server.hub import Hub, SendQueue, Subscriber
from server.storage import MemoryStore
from tests import toygame
from tests.test_hub import play_to_the_end, seated, settled

toygame.install()


# --- a finished match is freed by reference counting ----------------------------------


@contextlib.contextmanager
def no_cycle_collector() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def test_a_released_match_is_freed_without_the_cycle_collector() -> None:
    """Failed before: a match's core and its viewers' streams referred to each other, so
    a finished match let go of stayed in memory until a full collection."""
    hub = Hub(MemoryStore(), Settings(tail_block_ms=200))
    try:
        runner = await seated(hub)
        sub = Subscriber(Viewer(seat=0), SendQueue(1000))
        assert await runner.subscribe(sub, None, {"type": "welcome"}) is None
        await play_to_the_end(runner)
        assert runner.streams.length(Viewer(seat=0)) > 0
        with no_cycle_collector():
            dead: list[weakref.ref[Any]] = [weakref.ref(runner), weakref.ref(runner.core), weakref.ref(runner.streams)]
            runner.unsubscribe(sub)  # the last viewer leaves: the hub lets go of it
            del runner
            await settled(hub, lambda: not hub.runners and not hub._background)
            assert not hub.runners
            assert [ref() for ref in dead] == [None, None, None]
    finally:
        await hub.close()
