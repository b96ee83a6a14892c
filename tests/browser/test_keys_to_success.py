"""A browser page plays a 13-seat Keys to Success match against twelve bots: each round
it picks an open door of its room and a key-card with the mouse or the keyboard, talks in
its room's chat, and, if it wins, votes for the Elimination Candidate."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
from playwright.async_api import expect

from clients.bots import BOTS, lineup, play_bot
from clients.client import MatchConnection
from tests.browser.helpers import new_page, seat_link, take_seat, token, until, view

GAME = "keys-to-success"
SEATS = 13


async def test_a_page_plays_a_13_seat_match_against_bots(server: Any, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        created = (await http.post("/matches", json={
            "game": GAME, "options": {"round_seconds": 30, "vote_seconds": 3},
        })).json()
        match = created["match"]
        assert created["seats"] == SEATS
        bot_tokens = [
            (await http.post(f"/matches/{match}/seats", json={"name": f"Bot{seat}", "seat": seat})).json()["token"]
            for seat in range(1, SEATS)
        ]
    page = await new_page(browser, phone=True)
    await take_seat(page, seat_link(server.url, match, 0, token()), "Page", 0)
    names = lineup(GAME, SEATS)
    conns = [MatchConnection(server.url, match, token=t) for t in bot_tokens]
    for conn in conns:
        await conn.connect()
    bots = [
        asyncio.create_task(play_bot(conn, BOTS[GAME][names[seat]](random.Random(seat))))
        for seat, conn in enumerate(conns, start=1)
    ]
    try:
        await until(page, "v.started")
        rounds = 0
        while True:
            await until(
                page, "v.game_state.phase !== 'play' || v.game_state.me.escaped !== null"
                " || (v.game_state.me.can_submit && !v.game_state.me.submitted)",
            )
            gs = (await view(page))["game_state"]
            if gs["phase"] != "play" or gs["me"]["escaped"] is not None:
                break
            rounds += 1
            await expect(page.locator("#waiting")).to_contain_text("waiting for your move")
            if rounds == 1:  # a word to the room
                await page.get_by_role("textbox", name="message").fill("I take the first door")
                await page.get_by_role("button", name="Send", exact=True).click()
                await expect(page.locator(".chat-log")).to_contain_text("Page: I take the first door")
            gate = page.locator("button.gate:not([disabled])").first
            card = page.locator("button.kcard").first
            if rounds % 2:  # the mouse
                await gate.click()
                await card.click()
                await page.get_by_role("button", name="Submit move").click()
            else:  # the keyboard
                await gate.focus()
                await page.keyboard.press("Enter")
                await page.locator("button.kcard").first.focus()
                await page.keyboard.press("Space")
                await page.get_by_role("button", name="Submit move").focus()
                await page.keyboard.press("Enter")
            await expect(page.locator("#kts-move-feedback")).to_have_text(f"Round {gs['round']}: Taken.")
            await until(page, f"v.game_state.round !== {gs['round']} || v.game_state.phase !== 'play'")
        assert rounds >= 1
        gs = (await view(page))["game_state"]
        if gs["phase"] == "vote" and 0 in gs["results"]["winners"] and gs["results"]["losers"]:
            await page.get_by_role("button", name="Vote").click()
            await expect(page.locator("#kts-vote-feedback")).to_have_text("Taken.")
        await until(page, "v.ended", timeout=60000)
        final = await view(page)
        assert final["game_state"]["open"] and len(final["game_state"]["players"]) == SEATS
        await expect(page.locator(".result h2")).to_be_visible()
        await expect(page.get_by_role("heading", name="Every Room")).to_be_visible()
        await asyncio.wait_for(asyncio.gather(*bots), 20)
    finally:
        for task in bots:
            task.cancel()
        for conn in conns:
            await conn.close()
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    seqs = await page.evaluate("window.daedalus.conn.received")
    assert seqs == list(range(1, len(seqs) + 1))
    assert page.errors == []
