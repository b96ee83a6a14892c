"""A browser page plays a whole Memory Maze match against a bot, drawing its moves with
the keyboard (arrow keys, W A S D) and by clicking cells. The maze is the host's own
(an open one), so the page's route is known: up to a8, across to h8, down to h1, back
to a1. At most 7 steps a turn: the bot, moving second, cannot finish first."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
from playwright.async_api import expect

from clients.bots import BOTS, play_bot
from clients.client import MatchConnection
from tests.browser.helpers import new_page, seat_link, take_seat, token, until, view

OPEN_MAZE = "\n".join(
    ["+-+-+-+-+-+-+-+-+"] + ["|               |", "+ + + + + + + + +"] * 7 + ["|               |", "+-+-+-+-+-+-+-+-+"]
)


async def my_turn(page: Any) -> None:
    await until(page, "v.game_state.seats[0].ready")


async def sent(page: Any) -> None:
    await expect(page.locator("#mm-feedback")).to_have_text("Taken.")


async def test_a_page_plays_memory_maze_against_a_bot(server: Any, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        created = (await http.post("/matches", json={
            "game": "memory-maze", "variant": "black-garnet",
            "options": {"maze": OPEN_MAZE, "max_moves": 7, "first_seat": 0, "period_seconds": 30},
        })).json()
        match = created["match"]
        bot_seat = (await http.post(f"/matches/{match}/seats", json={"name": "Bot", "seat": 1})).json()
    page = await new_page(browser)
    await take_seat(page, seat_link(server.url, match, 0, token()), "Ann", 0)
    bot_conn = MatchConnection(server.url, match, token=bot_seat["token"])
    await bot_conn.connect()
    bot = asyncio.create_task(play_bot(bot_conn, BOTS["memory-maze"]["explorer"](random.Random(3))))
    try:
        grid = page.get_by_role("application")
        await my_turn(page)
        await grid.focus()
        for _ in range(7):
            await page.keyboard.press("ArrowUp")
        await page.keyboard.press("ArrowDown")  # a step too far back ...
        await page.keyboard.press("Backspace")  # ... taken back
        await page.keyboard.press("ArrowUp")
        await expect(page.locator("#mm-draft")).to_contain_text("ending at a8")
        await page.keyboard.press("Enter")
        await sent(page)
        await until(page, "v.game_state.seats[0].position === 'a8'")

        await my_turn(page)
        await page.locator('[data-cell="h8"]').click()  # a cell in line: seven steps right
        await expect(page.locator("#mm-draft")).to_contain_text("RRRRRRR")
        await page.get_by_role("button", name="Send move").click()
        await sent(page)

        await my_turn(page)
        await grid.focus()
        for _ in range(7):
            await page.keyboard.press("s")
        await page.keyboard.press("Enter")
        await sent(page)

        await my_turn(page)
        await page.locator('[data-cell="d1"]').click()
        await page.locator('[data-cell="a1"]').click()
        await page.get_by_role("button", name="Send move").click()
        await until(page, "v.ended")
        final = await view(page)
        assert final["result"]["winner"] == 0
        assert sorted(final["game_state"]["seats"][0]["visited"]) == ["a8", "h1", "h8"]
        await expect(page.locator(".result h2")).to_contain_text("Ann (seat 0) won")
        # once over, the maze is drawn: the outer wall and no inner one
        assert final["game_state"]["maze"]["walls"] == []
        await asyncio.wait_for(bot, 10)
    finally:
        bot.cancel()
        await bot_conn.close()
    seqs = await page.evaluate("window.daedalus.conn.received")
    assert seqs == list(range(1, len(seqs) + 1))

    # the replay: the host's maze drawn from the first move on, the log verified
    await page.get_by_role("link", name="Replay it").click()
    await expect(page.get_by_role("heading", name="✓ Verified")).to_be_visible()
    await expect(page.locator(".verify")).to_contain_text("given by the match's host")
    await page.keyboard.press("Home")
    await expect(page.locator("#replay-position")).to_contain_text("Update 1 of")
    await until(page, "v.game_state.maze !== null && !v.ended")
    await expect(page.get_by_role("application")).to_be_visible()
    assert page.errors == []
