"""The lobby lists a match waiting for players, a page takes its free seat from there,
and once the match is in play another page finds it under "In play" and watches it."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.async_api import expect

from tests.browser.helpers import new_page, until


async def test_a_page_takes_a_free_seat_from_the_lobby_and_another_watches(server: Any, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        match = (await http.post("/matches", json={"game": "memory-maze", "variant": "minos"})).json()["match"]
        assert (await http.post(f"/matches/{match}/seats", json={"name": "Ann", "seat": 0})).status_code == 201
    page = await new_page(browser, phone=True)
    await page.goto(server.url + "/")
    waiting = page.get_by_role("list", name="Waiting for players")
    await expect(waiting).to_contain_text(f"{match}: 1 of 2 seats free; seated: Ann")
    await waiting.get_by_role("link", name=f"Take a seat: Memory Maze match {match}").click()
    await page.get_by_label("Your name").fill("Bob")
    await expect(page.get_by_label("Seat", exact=True)).to_have_value("1")  # the free one
    await page.get_by_role("button", name="Take the seat").click()
    await until(page, "v.you === 1 && v.started")
    assert f"#match={match}&seat=1&token=" in page.url  # the address is the seat's link
    await expect(page.locator(".seats")).to_contain_text("Bob (you)")

    watcher = await new_page(browser)
    await watcher.goto(server.url + "/")
    playing = watcher.get_by_role("list", name="In play")
    await expect(playing).to_contain_text("Ann, Bob")
    await playing.get_by_role("link", name=f"Watch: Memory Maze match {match}").click()
    await until(watcher, "v.started && v.you === null")
    await expect(watcher.locator(".conn")).to_contain_text("watching")
    await expect(watcher.get_by_role("heading", name="Your move")).to_be_hidden()
    assert page.errors == [] and watcher.errors == []
