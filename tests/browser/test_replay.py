"""The replay viewer steps through a finished match as any viewer, on the game's board,
shows the log verified, and keeps a permalink to the step shown."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
from playwright.async_api import expect

from clients.bots import BOTS, play_bot
from clients.client import MatchConnection
from tests.browser.helpers import new_page, until


async def test_the_replay_viewer_steps_a_finished_match_and_shows_it_verified(server: Any, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        match = (await http.post("/matches", json={"game": "five-card-trick", "options": {"rounds": 4}})).json()["match"]
        tokens = [(await http.post(f"/matches/{match}/seats", json={"name": n})).json()["token"] for n in ("Ann", "Bob")]
    conns = [MatchConnection(server.url, match, token=t) for t in tokens]
    for c in conns:
        await c.connect()
    bots = [BOTS["five-card-trick"]["heuristic"](random.Random(s)) for s in (0, 1)]
    await asyncio.wait_for(asyncio.gather(*(play_bot(c, b) for c, b in zip(conns, bots, strict=True))), 30)
    for c in conns:
        await c.close()

    page = await new_page(browser)
    # the browser that played seat 0 holds its token (a seat's own view of a match that
    # keeps secrets after its end needs it)
    await page.goto(server.url + "/")
    await page.evaluate(f"localStorage.setItem('daedalus.seat.{match}', JSON.stringify({{seat: 0, token: '{tokens[0]}'}}))")
    await page.goto(f"{server.url}/#replay={match}&as=0&round=2")
    await expect(page.get_by_role("heading", name="✓ Verified")).to_be_visible()
    position = page.locator("#replay-position")
    await expect(position).to_contain_text("round 2")
    await until(page, "v.you === 0 && v.game_state.round === 2 && !v.ended")
    first = await page.evaluate("window.daedalus.index")
    # seat 0's view of round 2: its own cards, not the other seat's, and no move to make
    assert await page.locator("#fct-move-h").count() == 0
    assert (await page.evaluate("window.daedalus.view.game_state.seats[1].pending")) is None

    await page.get_by_role("button", name="next update").focus()
    await page.keyboard.press("ArrowRight")
    await until(page, f"window.daedalus.index === {first + 1}")
    await page.keyboard.press("PageDown")
    await expect(position).to_contain_text("round 3")
    assert "#replay=" in page.url and "as=0" in page.url and "round=3" in page.url
    await page.keyboard.press("End")
    await until(page, "v.ended")
    await expect(page.locator(".fct-seat").first).to_be_visible()

    # as everything: another stream, the same match
    await page.get_by_label("As", exact=True).select_option("full")
    await expect(position).to_contain_text("round")
    await until(page, "v.you === null")
    permalink = await page.get_by_role("link", name="Permalink to this step").get_attribute("href")
    assert permalink and "as=full" in permalink and f"replay={match}" in permalink
    # a permalink opens at its step
    other = await new_page(browser)
    await other.goto(permalink)
    await expect(other.locator("#replay-position")).to_have_text(await position.inner_text())
    assert page.errors == [] and other.errors == []
