"""Fixtures of the browser tests: Debian's chromium driven by Playwright, and the server
on a real Redis.

The browser is the system's `chromium` (DAEDALUS_TEST_CHROMIUM, else `chromium` on PATH,
else /usr/bin/chromium), never one Playwright downloads. Where there is none, or no
Playwright, these tests are skipped on a developer's machine and fail under CI (CI set),
as the real-Redis tests are: CI must run them (.ci/run installs chromium)."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from server.config import Settings
from server.main import EmbeddedServer
from server.store import EventStore
from tests.conftest import RedisServer

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]


def without_browser(why: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(f"CI needs a browser for these tests: {why}")
    pytest.skip(f"no browser here ({why}); CI runs these")


def chromium_path() -> str:
    for candidate in (
        os.environ.get("DAEDALUS_TEST_CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium",
    ):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    without_browser("no chromium executable (apt-get install chromium)")


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    try:
        from playwright.async_api import async_playwright
    except ImportError as exc:
        without_browser(f"Playwright is not installed ({exc}): pip install -e '.[test]'")
    path = chromium_path()
    async with async_playwright() as pw:
        b = await pw.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS, headless=True)
        try:
            yield b
        finally:
            await b.close()


@pytest.fixture
async def server(real_redis: RedisServer) -> AsyncIterator[EmbeddedServer]:
    """The server on the real Redis of the session (emptied first)."""
    store = EventStore.from_url(real_redis.url)
    await store.reads.flushdb()
    try:
        async with EmbeddedServer(Settings(), store=store) as srv:
            yield srv
    finally:
        await store.close()
