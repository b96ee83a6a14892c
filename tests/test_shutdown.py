"""Stopping: a follower whose read swallows a cancellation still stops."""

from __future__ import annotations

import asyncio
import contextlib

from server.follower import Follower, cancel_and_wait


async def _swallows_one_cancellation(forever: asyncio.Event) -> None:
    """As a read inside Python 3.11's asyncio.wait_for can: the first cancellation is lost
    and the read waits again, with no timeout."""
    with contextlib.suppress(asyncio.CancelledError):
        await forever.wait()
    await forever.wait()


async def test_a_follower_stops_even_when_its_read_swallows_the_cancellation() -> None:
    follower = Follower.__new__(Follower)  # only its task matters here
    forever = asyncio.Event()
    follower._task = asyncio.create_task(_swallows_one_cancellation(forever))
    await asyncio.sleep(0)
    stopping = asyncio.create_task(follower.stop())
    done, _ = await asyncio.wait({stopping}, timeout=5)
    assert stopping in done, "stop() still waits for a read that will never end"
    assert follower._task is None


async def test_cancel_and_wait_retrieves_an_error_raised_while_stopping() -> None:
    async def fails_on_cancel() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise RuntimeError("while stopping") from None

    task = asyncio.create_task(fails_on_cancel())
    await asyncio.sleep(0)
    await cancel_and_wait(task)
    assert task.done() and not task.cancelled()
    assert task._log_traceback is False  # retrieved: not reported as never retrieved
