"""A game without a board of its own is played on the generic one: its state as the
server sends it and a form for each of its commands (from GET /schema). Here Escalator:
the page sends a Fetch from its form, and the answer shows next to it."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import pytest
from playwright.async_api import expect

from clients.bots import BOTS, lineup, play_bot
from clients.client import MatchConnection
from tests.browser.helpers import new_page, seat_link, take_seat, token, until
from tests.browser.test_http import OWN_BOARDS


async def test_a_game_without_a_board_of_its_own_is_played_on_the_generic_one(server: Any, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        games = {g["name"]: g for g in (await http.get("/games")).json()["games"]}
        others = [name for name in games if name not in OWN_BOARDS and name in BOTS]
        if "escalator" not in others:
            pytest.skip("no game without a board of its own is hosted with bots")
        created = (await http.post("/matches", json={"game": "escalator"})).json()
        match, seats = created["match"], created["seats"]
        bot_tokens = [
            (await http.post(f"/matches/{match}/seats", json={"name": f"Bot{s}", "seat": s})).json()["token"]
            for s in range(1, seats)
        ]
    page = await new_page(browser)
    await take_seat(page, seat_link(server.url, match, 0, token()), "Page", 0)
    names = lineup("escalator", seats)
    conns = [MatchConnection(server.url, match, token=t) for t in bot_tokens]
    for conn in conns:
        await conn.connect()
    bots = [asyncio.create_task(play_bot(c, BOTS["escalator"][names[s]](random.Random(s)))) for s, c in enumerate(conns, 1)]
    try:
        await until(page, "v.started && v.game_state.me && v.game_state.me.must_fetch")
        await expect(page.locator("#match-title")).to_contain_text(games["escalator"]["title"])
        await expect(page.get_by_label("the game's state")).to_contain_text('"fetch_round"')
        gs = await page.evaluate("window.daedalus.view.game_state")
        form = page.get_by_role("form", name="command fetch")
        await expect(form.get_by_label("round")).to_have_value(str(gs["fetch_round"]))
        command = next(c["name"] for c in gs["edition"]["commands"] if c["name"] not in gs["disabled"])
        await form.get_by_label("command").fill(command)
        await form.get_by_label("target").fill("1")
        await form.get_by_role("button", name="Send fetch").click()
        await expect(page.locator("#cmd-fetch-feedback")).to_contain_text("Taken")
    finally:
        for task in bots:
            task.cancel()
        for conn in conns:
            await conn.close()
    assert page.errors == []
