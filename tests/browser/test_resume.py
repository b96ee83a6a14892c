"""A page that loses its connection resumes by itself from the last update it showed:
what happened meanwhile arrives once, in order, and a move sent while it was away is
sent again under its id when it is back, and taken once."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.async_api import expect

from clients.client import MatchConnection
from tests.browser.helpers import new_page, seat_link, take_seat, token, until, view


async def test_a_page_that_loses_its_connection_resumes(server: Any, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        match = (await http.post("/matches", json={
            "game": "five-card-trick", "options": {"rounds": 3, "round_seconds": 60},
        })).json()["match"]
        other = (await http.post(f"/matches/{match}/seats", json={"name": "White", "seat": 1})).json()
    page = await new_page(browser)
    await take_seat(page, seat_link(server.url, match, 0, token()), "Black", 0)
    white = MatchConnection(server.url, match, token=other["token"])
    await white.connect()
    try:
        await until(page, "v.started && v.game_state.round === 1")
        before = await page.evaluate("window.daedalus.conn.lastSeq")

        # Cut: the page stays away for two seconds. Meanwhile White moves (an update the
        # page must not miss), and the page's own move waits for the connection.
        await page.evaluate("window.daedalus.conn.drop(2000)")
        await expect(page.locator(".conn")).to_contain_text("connection lost")
        result = await white.send_command({"type": "submit", "round": 1, "actions": ["grow", "claim"]})
        assert result.accepted
        await page.get_by_role("button", name="Score", exact=True).click()
        await page.get_by_role("button", name="Steal", exact=True).click()
        await page.get_by_role("button", name="Submit move").click()
        await expect(page.locator("#move-feedback")).to_have_text("Round 1: Sent…")

        # Back: the missed updates, the move sent again and taken, the round resolved.
        await expect(page.locator("#move-feedback")).to_have_text("Round 1: Taken.", timeout=10000)
        await until(page, "v.game_state.round === 2")
        await expect(page.locator(".conn")).to_have_text("connected")
        trace = await page.evaluate("window.daedalus.conn.trace")
        assert any(f"hello since {before}" in line for line in trace[1:]), trace
        seqs = await page.evaluate("window.daedalus.conn.received")
        assert seqs == list(range(1, len(seqs) + 1)) and seqs[-1] > before + 1
        last = (await view(page))["game_state"]["last_round"]
        assert [p["action"] for p in last["seats"][1]["plays"]] == ["grow", "claim"]
        assert [p["action"] for p in last["seats"][0]["plays"]] == ["score", "steal"]
        # the page's stream is the server's: the same updates, none twice
        assert await page.evaluate("window.daedalus.conn.lastSeq") == seqs[-1]
    finally:
        await white.close()
    assert page.errors == []
