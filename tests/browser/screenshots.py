"""Screenshots of the browser client for docs/screenshots/: the lobby and each game's
board in the middle of a match (a page in one seat, bots in the others), on a desktop
and on a phone-sized screen.

    .venv/bin/python -m tests.browser.screenshots [OUT_DIR]
"""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import async_playwright

from clients.bots import BOTS, lineup, play_bot
from clients.client import MatchConnection
from server.main import EmbeddedServer
from tests.browser.conftest import CHROMIUM_FLAGS, chromium_path
from tests.browser.helpers import seat_link, take_seat, token, until

DESKTOP = {"width": 1200, "height": 860}
PHONE = {"width": 390, "height": 844}


async def bots_for(server: EmbeddedServer, match: str, game: str, seats: range) -> list[Any]:
    names = lineup(game, max(seats) + 1)
    tasks = []
    async with httpx.AsyncClient(base_url=server.url) as http:
        for seat in seats:
            t = (await http.post(f"/matches/{match}/seats", json={"name": f"{names[seat].title()} {seat}", "seat": seat})).json()["token"]
            conn = MatchConnection(server.url, match, token=t)
            await conn.connect()
            tasks.append(asyncio.create_task(play_bot(conn, BOTS[game][names[seat]](random.Random(seat)))))
    return tasks


async def create(server: EmbeddedServer, game: str, variant: str, options: dict[str, Any]) -> str:
    async with httpx.AsyncClient(base_url=server.url) as http:
        r = await http.post("/matches", json={"game": game, "variant": variant, "options": options})
        match: str = r.json()["match"]
        return match


async def shoot(page: Any, path: Path) -> None:
    await page.wait_for_timeout(300)
    await page.screenshot(path=str(path))
    print(path)


async def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    async with EmbeddedServer() as server, async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        desktop = await (await browser.new_context(viewport=DESKTOP)).new_page()
        phone = await (await browser.new_context(viewport=PHONE, device_scale_factor=2)).new_page()
        tasks: list[Any] = []

        # Five-Card Trick: three rounds played, a move being composed.
        fct = await create(server, "five-card-trick", "dm12", {"round_seconds": 600})
        await take_seat(desktop, seat_link(server.url, fct, 0, token()), "Ariadne", 0)
        tasks += await bots_for(server, fct, "five-card-trick", range(1, 2))
        for r, (a, b) in enumerate([("Score", "Grow"), ("Claim", "Steal"), ("Score", "Claim")], start=1):
            await until(desktop, f"v.game_state.round === {r} && v.game_state.seats[1].submitted")
            await desktop.get_by_role("button", name=a, exact=True).click()
            await desktop.get_by_role("button", name=b, exact=True).click()
            await desktop.get_by_role("button", name="Submit move").click()
        await until(desktop, "v.game_state.round === 4")
        await desktop.get_by_role("button", name="Grow", exact=True).click()
        await desktop.get_by_role("button", name="Block", exact=True).click()
        await shoot(desktop, out / "five-card-trick.png")
        await phone.goto(f"{server.url}/#match={fct}")
        await until(phone, "v.game_state.round === 4")
        await shoot(phone, out / "five-card-trick-phone-spectator.png")

        # Memory Maze (crazy: both move at will, colored walls): two moves in.
        mm = await create(server, "memory-maze", "crazy", {"cooldown_success_seconds": 1, "cooldown_bonk_seconds": 1})
        await take_seat(desktop, seat_link(server.url, mm, 0, token()), "Theseus", 0)
        tasks += await bots_for(server, mm, "memory-maze", range(1, 2))
        await until(desktop, "v.started && v.game_state.seats[0].ready")
        grid = desktop.get_by_role("application")
        await grid.focus()
        for key in ("ArrowRight", "ArrowUp", "ArrowUp"):
            await desktop.keyboard.press(key)
        await desktop.keyboard.press("Enter")
        await until(desktop, "v.game_state.seats[0].last !== null && v.game_state.seats[0].ready && v.game_state.seats[1].last !== null")
        await grid.focus()
        for key in ("ArrowRight", "ArrowRight", "ArrowUp"):
            await desktop.keyboard.press(key)
        await shoot(desktop, out / "memory-maze.png")
        await phone.goto(f"{server.url}/#match={mm}")
        await until(phone, "v.started")
        await shoot(phone, out / "memory-maze-phone-spectator.png")

        # Keys to Success: 13 seats, two rounds in, a word in the room's chat.
        kts = await create(server, "keys-to-success", "keys-to-success", {"round_seconds": 600})
        await take_seat(desktop, seat_link(server.url, kts, 0, token()), "Daedalus", 0)
        tasks += await bots_for(server, kts, "keys-to-success", range(1, 13))
        for r in (1, 2):
            await until(desktop, f"v.game_state.round === {r} && v.game_state.me.can_submit")
            if r == 1:
                await desktop.get_by_role("textbox", name="message").fill("I take the first open door")
                await desktop.get_by_role("button", name="Send", exact=True).click()
            await desktop.locator("button.gate:not([disabled])").first.click()
            await desktop.locator("button.kcard").first.click()
            await desktop.get_by_role("button", name="Submit move").click()
        await until(desktop, "v.game_state.round === 3")
        await desktop.locator("button.gate:not([disabled])").nth(1).click()
        await desktop.locator("button.kcard").nth(4).click()
        await shoot(desktop, out / "keys-to-success.png")
        await phone.goto(f"{server.url}/#match={kts}")
        await until(phone, "v.started")
        await shoot(phone, out / "keys-to-success-phone-spectator.png")

        # Escalator: six seats, the second step's Fetch to choose.
        esc = await create(server, "escalator", "escalator", {"step_seconds": 600})
        await take_seat(desktop, seat_link(server.url, esc, 0, token()), "Icarus", 0)
        tasks += await bots_for(server, esc, "escalator", range(1, 6))
        for _ in range(1):
            await until(desktop, "v.game_state.me.must_fetch && !v.game_state.me.fetch")
            step = await desktop.evaluate("window.daedalus.view.game_state.step")
            if await desktop.evaluate("window.daedalus.view.game_state.me.must_decode"):
                await desktop.get_by_role("button", name="Decode", exact=True).click()
            await desktop.get_by_role("button", name="Fetch", exact=True).click()
            await until(desktop, f"v.game_state.step > {step}")
        await until(desktop, "v.game_state.me.must_fetch")
        await shoot(desktop, out / "escalator.png")

        # The lobby, with the matches above in play and one waiting.
        await create(server, "memory-maze", "minos", {})
        await desktop.goto(f"{server.url}/#")
        await desktop.locator(".matches li").first.wait_for()
        await desktop.wait_for_timeout(300)
        await desktop.screenshot(path=str(out / "lobby.png"), full_page=True)
        await desktop.get_by_role("button", name="Create match").click()
        await desktop.get_by_role("heading", name="created").wait_for()
        await desktop.locator("section.created").screenshot(path=str(out / "lobby-created.png"))

        # The replay of a finished match, as seat 0 saw round 3.
        async with httpx.AsyncClient(base_url=server.url) as http:
            made = (await http.post("/matches", json={"game": "five-card-trick", "options": {"rounds": 5}})).json()
        done, audit = made["match"], made.get("audit_key")
        finished = await bots_for(server, done, "five-card-trick", range(0, 2))
        await asyncio.wait_for(asyncio.gather(*finished), 30)
        # a seat's own view of a match that keeps secrets: with its audit key
        await desktop.goto(f"{server.url}/#replay={done}&as=0&round=3" + (f"&audit={audit}" if audit else ""))
        await desktop.get_by_role("heading", name="✓ Verified").wait_for()
        await shoot(desktop, out / "replay.png")

        for task in tasks:
            task.cancel()
        await browser.close()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots")))
