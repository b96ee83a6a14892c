"""Escalator in the browser: a page in seat 0 against five bots sends its Fetch from its
board, and, on the generic board (`&board=generic`, the one a game without a board of
its own gets: its state as the server sends it and a form per command from GET
/schema), from the command's form; either way the answer shows next to it."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
from playwright.async_api import expect

from clients.bots import BOTS, lineup, play_bot
from clients.client import MatchConnection
from tests.browser.helpers import new_page, seat_link, take_seat, token, until

GAME = "escalator"


async def _match_with_bots(server: Any) -> tuple[str, dict[str, Any], list[Any], list[Any]]:
    async with httpx.AsyncClient(base_url=server.url) as http:
        game = next(g for g in (await http.get("/games")).json()["games"] if g["name"] == GAME)
        created = (await http.post("/matches", json={"game": GAME})).json()
        match, seats = created["match"], created["seats"]
        bot_tokens = [
            (await http.post(f"/matches/{match}/seats", json={"name": f"Bot{s}", "seat": s})).json()["token"]
            for s in range(1, seats)
        ]
    names = lineup(GAME, seats)
    conns = [MatchConnection(server.url, match, token=t) for t in bot_tokens]
    for conn in conns:
        await conn.connect()
    bots = [asyncio.create_task(play_bot(c, BOTS[GAME][names[s]](random.Random(s)))) for s, c in enumerate(conns, 1)]
    return match, game, conns, bots


async def _stop(conns: list[Any], bots: list[Any]) -> None:
    for task in bots:
        task.cancel()
    for conn in conns:
        await conn.close()


async def test_a_page_fetches_on_the_escalator_board(server: Any, browser: Any) -> None:
    match, game, conns, bots = await _match_with_bots(server)
    page = await new_page(browser, phone=True)
    try:
        await take_seat(page, seat_link(server.url, match, 0, token()), "Page", 0)
        await until(page, "v.started && v.game_state.me && v.game_state.me.must_fetch")
        await expect(page.locator("#match-title")).to_contain_text(game["title"])
        await expect(page.locator("#waiting")).to_contain_text("waiting for your Fetch")
        gs = await page.evaluate("window.daedalus.view.game_state")
        await expect(page.get_by_role("meter")).to_have_count(len(gs["players"]))  # one a player
        command = next(c["name"] for c in gs["edition"]["commands"] if c["name"] not in gs["disabled"])
        await page.get_by_label("Command").select_option(command)
        await page.get_by_label("Target").select_option("2")
        await page.get_by_role("button", name="Fetch", exact=True).click()
        await expect(page.locator("#esc-fetch-feedback")).to_contain_text(f"Round {gs['fetch_round']}: Taken")
        assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        # Every seat is in: the step resolves, and the board lists it with the ones before.
        await until(page, "v.game_state.last_step && v.game_state.last_step.step >= 1")
        await expect(page.get_by_text("Steps so far (1)")).to_be_visible()
    finally:
        await _stop(conns, bots)
    assert page.errors == []


async def test_the_generic_board_plays_any_game(server: Any, browser: Any) -> None:
    match, game, conns, bots = await _match_with_bots(server)
    page = await new_page(browser)
    try:
        await take_seat(page, seat_link(server.url, match, 0, token()) + "&board=generic", "Page", 0)
        await until(page, "v.started && v.game_state.me && v.game_state.me.must_fetch")
        await expect(page.locator("#match-title")).to_contain_text(game["title"])
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
        await _stop(conns, bots)
    assert page.errors == []
