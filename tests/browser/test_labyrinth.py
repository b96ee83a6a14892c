"""Labyrinth in the browser: a page in seat 0 plays a whole two-player match against a
second player (a client of the test's, seat 1), on a host's plan, so every answer is known:

- the start cell chosen by clicking the grid (the other player's too, in secret), a
  river cell first, refused without a reason once everyone has chosen;
- a text move the game master refuses, its error shown under the column where the text
  stops being a move; a text move answered ("Cannot move - hit a wall");
- moves built with the buttons: onto the true treasure, then out through the open exit;
- the end: the result, and the plan drawn with both players;
- the player's notes on the grid, made with the keyboard, kept in the page's
  localStorage for the match and seat across a reload, and never sent.

With DAEDALUS_SCREENSHOTS=DIR the test saves the board's pictures there
(docs/screenshots/labyrinth-*.png)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import expect

from clients.client import MatchConnection
from tests.browser.helpers import (
    new_page,
    no_horizontal_scroll_js,
    seat_link,
    take_seat,
    token,
    until,
    view,
)

# 2,2 has a wall above it; 2,1 holds the true treasure, next to the open exit on its left.
PLAN = """\
name: The browser test's plan

grid:
      1   2   3   4
    +###+###+###+###+
  1 # H   .   .   W #
    +###+---+   +   +
  2   .   .   >   D #
    +###+   +   +   +
  3 # W   .   .   H |
    +###+###+###+###+

treasure 2,1 true
treasure 1,3 fake
"""

PAGE_START, OTHER_START = "2,2", [3, 3]


async def shot(page: Any, name: str, *, height: int | None = None) -> None:
    """The page as it is, into DAEDALUS_SCREENSHOTS (when set), `height` pixels tall."""
    where = os.environ.get("DAEDALUS_SCREENSHOTS")
    if where:
        size = page.viewport_size
        if height:
            await page.set_viewport_size({"width": size["width"], "height": height})
        await page.wait_for_timeout(300)
        await page.screenshot(path=str(Path(where) / f"labyrinth-{name}.png"))
        await page.set_viewport_size(size)


async def my_turn(page: Any, other: MatchConnection) -> None:
    """Let the other player skip until the page is to play (once both see the same turn)."""
    while True:
        mine = (await view(page))["game_state"]["to_act"]
        theirs = other.view["game_state"]["to_act"] if other.view else None
        if mine == theirs == 0:
            return
        if mine == theirs == 1:
            answer = await other.send_command({"type": "move", "move": "skip"})
            assert answer.accepted, answer
            await other.wait_view(lambda v: v["game_state"]["to_act"] != 1)
        await page.wait_for_timeout(50)


async def test_a_page_plays_a_whole_labyrinth_match(server: Any, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        created = (await http.post("/matches", json={
            "game": "labyrinth", "options": {"players": 2, "plan": PLAN, "move_seconds": 600},
        })).json()
        match = created["match"]
        other_token = (await http.post(f"/matches/{match}/seats", json={"name": "Ariadne", "seat": 1})).json()["token"]
    page = await new_page(browser)
    sent: list[str] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(str(payload))))
    other = MatchConnection(server.url, match, token=other_token)
    await other.connect()
    try:
        await take_seat(page, seat_link(server.url, match, 0, token()), "Theseus", 0)
        await until(page, "v.started && v.game_state.phase === 'start'")

        # The start: each in the drawn order, in secret; the page by clicking the grid. The
        # page's first choice is a river cell: once everyone has chosen, it is refused
        # without a reason (6.1), and the page chooses again.
        tried_river = False
        while (await view(page))["game_state"]["phase"] == "start":
            gs = (await view(page))["game_state"]
            if gs["to_act"] == 1:
                assert (await other.send_command({"type": "start", "cell": OTHER_START})).accepted
                await until(page, "v.game_state.to_act !== 1")
                continue
            await expect(page.locator("#waiting")).to_contain_text("choose your start cell")
            if not tried_river:
                tried_river = True
                await page.locator('.lab-grid [data-cell="2,3"]').click()
                await page.get_by_role("button", name="Start on 2,3").click()
                await until(page, "v.game_state.to_act === 1 || v.game_state.me.refused.length > 0")
                continue
            await expect(page.locator(".lab-transcript li.private", has_text="Your choice is invalid")).to_contain_text(
                "to you alone")
            await expect(page.locator(".lab-known")).to_contain_text("Refused (no reason is given): 2,3.")
            await expect(page.locator(".lab-grid .lab-fact")).to_have_text(["✗"])
            await page.locator(f'.lab-grid [data-cell="{PAGE_START}"]').click()
            await expect(page.locator("#lab-cursor")).to_contain_text(f"Cell {PAGE_START}")
            await page.get_by_role("button", name=f"Start on {PAGE_START}").click()
            await expect(page.locator("#lab-cell-feedback")).to_contain_text("Taken")
            await until(page, "v.game_state.to_act !== 0 || v.game_state.phase !== 'start'")
        await until(page, "v.game_state.phase === 'play'")
        said = page.locator(".lab-transcript")
        await expect(said.locator("li.private", has_text=f"You start at {PAGE_START}")).to_contain_text("to you alone")
        await expect(said).to_contain_text("Player 1 starts on land")
        assert "3,3" not in await said.inner_text()  # the other's start is its own secret

        # Notes on the grid, by keyboard: the wall above 2,2 and a hospital guessed at 1,1.
        grid = page.get_by_role("application", name="the labyrinth's grid: your notes")
        await grid.focus()
        await page.keyboard.press("Shift+ArrowUp")
        await page.keyboard.press("ArrowUp")  # 2,2 -> 1,2
        await page.keyboard.press("ArrowLeft")  # 1,1
        await page.keyboard.press("h")
        await expect(page.locator("#lab-cursor")).to_contain_text("Cell 1,1: your notes: hospital")
        await expect(page.locator(".lab-note-wall")).to_have_count(1)

        # A text that is not a move: refused, the error under the column where it stops.
        await my_turn(page, other)
        await expect(page.locator("#waiting")).to_contain_text("your move")
        move = page.get_by_role("textbox", name="Your move, as text")
        await move.fill("go sideways")
        await page.get_by_role("button", name="Send move").click()
        await expect(page.locator("#lab-move-feedback")).to_contain_text("Refused")
        caret = page.locator("#lab-caret")
        await expect(caret).to_be_visible()
        assert (await caret.inner_text()).splitlines()[:2] == [
            "go sideways", "   ^ expected where to go: up, right, down, left, by the flow or by the loop, not 'sideways'"]
        assert (await view(page))["game_state"]["to_act"] == 0  # a refusal costs nothing

        # A text move, and the game master's answer.
        await move.fill("go up")
        await page.get_by_role("button", name="Send move").click()
        await expect(page.locator("#lab-move-feedback")).to_contain_text("Taken")
        await expect(said).to_contain_text("Player 1: go up")
        await expect(said).to_contain_text("Cannot move - hit a wall")
        await expect(page.locator("#lab-answer")).to_contain_text("The game master's answer: Cannot move - hit a wall")
        await expect(page.locator("[data-seat='0'] .lab-last")).to_contain_text("go up")
        await expect(page.locator("#lab-caret")).to_be_hidden()

        # Built with the buttons: left onto the true treasure, which the page picks up.
        await my_turn(page, other)
        await page.get_by_role("button", name="go left ←").click()
        await expect(move).to_have_value("go left")
        await page.get_by_role("button", name="Send move").click()
        await expect(said).to_contain_text("Walked onto land")
        await expect(page.locator("#lab-carries")).to_have_text("a treasure")
        await expect(page.locator("#lab-bullets")).to_have_text("3")
        # noted: land with a treasure at 2,1, where the page is now
        await page.locator('.lab-grid [data-cell="2,1"]').click()
        for key in ("l", "t", "m"):
            await page.keyboard.press(key)
        await expect(page.locator("#lab-cursor")).to_have_text(
            "Cell 2,1: your notes: land; treasure; you think you are here.")
        # a shot before the movement, added and taken out again
        await my_turn(page, other)
        await page.get_by_label("Action", exact=True).select_option("shoot")
        await page.get_by_label("Direction").select_option("right")
        await page.get_by_role("button", name="Add before the movement").click()
        await page.get_by_role("button", name="go left ←").click()
        await expect(move).to_have_value("shoot right, go left")
        # a conditional action (6.5) and a dark move (6.7), then taken out again
        await page.get_by_label("Condition", exact=True).select_option("treasure")
        await page.get_by_role("button", name="Add on this condition").click()
        await page.get_by_role("radio", name="nothing: a dark move (6.7)").check()
        await expect(move).to_have_value("shoot right, go left; if I find a treasure, shoot right; don't tell the result")
        await page.get_by_role("button", name="remove “shoot right”").click()
        await page.get_by_role("button", name="remove “if I find a treasure, shoot right”").click()
        await page.get_by_role("radio", name="everything (a normal move)").check()
        await expect(move).to_have_value("go left")
        await page.evaluate("window.scrollTo(0, 0)")
        await shot(page, "play", height=1500)

        # Out through the open exit with the true treasure: the page wins.
        await page.get_by_role("button", name="Send move").click()
        await until(page, "v.ended")
        await expect(said).to_contain_text("Walked out with the true treasure: player 1 wins!")
        await expect(page.get_by_role("heading", name="won")).to_contain_text("you won")
        plan = page.get_by_role("img", name="The plan")
        await expect(plan).to_be_visible()
        await expect(plan.locator("rect.cell")).to_have_count(12)
        await expect(plan.locator("rect.cell.river")).to_have_count(1)
        await expect(plan.locator(".open-exit")).to_have_count(1)
        await expect(plan.locator(".closed-exit")).to_have_count(1)
        await expect(plan.locator(".treasure.fake")).to_have_count(1)
        await expect(plan.locator(".lab-player")).to_have_count(2)
        await expect(page.locator(".lab-plan-players")).to_contain_text("Player 2 (Ariadne): at 3,3")
        await expect(page.locator(".lab-plan-players")).to_contain_text("carrying the true treasure")
        assert await page.evaluate(no_horizontal_scroll_js())
        await page.evaluate("window.scrollTo(0, 0)")
        await shot(page, "end", height=1100)

        # The notes are the page's own: kept for the match and seat, never sent.
        stored = await page.evaluate(f"localStorage.getItem('daedalus.labyrinth.notes.{match}.seat0')")
        notes = json.loads(stored)
        # the wall above 2,2 is the wall below 1,2: noted on both, drawn once
        assert notes["cells"]["2,2"] == {"wall_up": True} and notes["cells"]["1,2"] == {"wall_down": True}
        assert notes["cells"]["1,1"] == {"type": "H"}
        assert sent and not any("wall_up" in frame or '"H"' in frame for frame in sent)
        await page.reload()
        await until(page, "v.ended")
        await expect(said).to_contain_text("Cannot move - hit a wall")  # the transcript told again
        await expect(page.locator(".lab-note-wall")).to_have_count(1)
        await expect(page.locator(".lab-grid .lab-note-type")).to_have_text(["H", "."])
        # what the game master told the page alone: the refused start, and the start
        await expect(page.locator(".lab-grid .lab-fact")).to_have_text(["S", "✗"])
    finally:
        await other.close()
    assert page.errors == []


async def test_a_handicapped_page_asks_cell_types_and_a_wounded_one_orders_a_new_cell(server: Any, browser: Any) -> None:
    """Option 7.2: player 1 asks the types of two cells before the start (told to it
    alone) and starts on one; wounded by a shot, it orders a new cell by the grid on its
    next turn (5.5), which only it is told; then asks its status, recalls the other's
    last move, and votes on a break the other proposed."""
    async with httpx.AsyncClient(base_url=server.url) as http:
        match = (await http.post("/matches", json={"game": "labyrinth", "options": {
            "players": 2, "plan": PLAN, "move_seconds": 600, "handicaps": [{"player": 1, "cells": 2}],
        }})).json()["match"]
        other_token = (await http.post(f"/matches/{match}/seats", json={"name": "Minos", "seat": 1})).json()["token"]
    page = await new_page(browser)
    other = MatchConnection(server.url, match, token=other_token)
    await other.connect()
    try:
        await take_seat(page, seat_link(server.url, match, 0, token()), "Theseus", 0)
        await until(page, "v.started && v.game_state.me.asks === 2")
        said = page.locator(".lab-transcript")
        grid = page.locator(".lab-grid")
        for cell, answer in (("1,1", "Cell 1,1 is a hospital"), ("2,2", "Cell 2,2 is land")):
            await grid.locator(f'[data-cell="{cell}"]').click()
            await page.get_by_role("button", name=f"Ask the type of {cell}").click()
            await expect(said.locator("li.private", has_text=answer)).to_contain_text("to you alone")
        assert "hospital" not in json.dumps(other.view["game_state"])  # the answer is the asker's
        while (await view(page))["game_state"]["phase"] == "start":
            if (await view(page))["game_state"]["to_act"] == 1:
                assert (await other.send_command({"type": "start", "cell": [3, 2]})).accepted
                await until(page, "v.game_state.to_act !== 1")
                continue
            # by keyboard: the grid, from 2,2 (the cell asked last) up and back down, Enter
            await page.get_by_role("application", name="the labyrinth's grid: your notes").focus()
            await page.keyboard.press("ArrowUp")
            await page.keyboard.press("ArrowDown")
            await expect(page.get_by_role("button", name="Start on 2,2")).to_be_visible()
            await page.keyboard.press("Enter")
            await until(page, "v.game_state.to_act !== 0 || v.game_state.phase !== 'start'")
        await until(page, "v.game_state.phase === 'play'")

        # Player 2, on the cell below, shoots up: player 1 is wounded.
        if (await view(page))["game_state"]["to_act"] == 0:
            await page.get_by_role("button", name="Skip my move").click()
            await other.wait_view(lambda v: v["game_state"]["to_act"] == 1)
        assert (await other.send_command({"type": "move", "move": "shoot up, go right"})).accepted
        await expect(said).to_contain_text("A scream is heard!")
        await until(page, "v.game_state.to_act === 0 && v.game_state.me.may_order")
        await expect(page.locator("#lab-health")).to_contain_text("wounded")
        await expect(page.locator("#waiting")).to_contain_text("may first order a new cell")
        await grid.locator('[data-cell="1,3"]').click()
        await page.get_by_role("button", name="Order 1,3 as my new cell").click()
        await expect(said.locator("li.private", has_text="You continue from 1,3")).to_contain_text("to you alone")
        await expect(said).to_contain_text("Player 1 (Theseus) orders a new cell (1,3, known to you alone)")
        await page.get_by_role("button", name="Skip my move").click()
        await other.wait_view(lambda v: v["game_state"]["to_act"] == 1)
        assert "1,3" not in json.dumps(other.view["game_state"])  # the new cell is the page's secret

        # Free at any time: the status question and a recall, answered to everyone.
        await page.get_by_role("button", name="Status (free)").click()
        await expect(said.locator("li", has_text="Player 1 (Theseus) asks for its status")).to_contain_text(
            "Player 1: No bullets, three grenades, wounded")
        await page.get_by_label("Recall the last move of").select_option(label="Player 2 (Minos)")
        await page.get_by_role("button", name="Recall", exact=True).click()
        await expect(said).to_contain_text("Player 2's last move: shoot up, go right - ")
        # A break put to the vote by the other player; the page's no makes a tie, which grants it.
        assert (await other.send_command({"type": "vote", "yes": True})).accepted
        await expect(said).to_contain_text("Player 2 proposes a break: vote yes or no")
        await page.get_by_role("button", name="Vote no").click()
        await expect(said).to_contain_text("Player 1 votes no")
        await expect(said).to_contain_text("The players agree: a break of 300 seconds")
    finally:
        await other.close()
    assert page.errors == []


async def test_a_spectator_sees_the_public_answers_only(server: Any, browser: Any) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        match = (await http.post("/matches", json={
            "game": "labyrinth", "options": {"players": 2, "plan": PLAN, "move_seconds": 600},
        })).json()["match"]
        tokens = [(await http.post(f"/matches/{match}/seats", json={"name": f"P{s}", "seat": s})).json()["token"]
                  for s in range(2)]
    conns = [MatchConnection(server.url, match, token=t) for t in tokens]
    for conn in conns:
        await conn.connect()
    page = await new_page(browser, phone=True)
    try:
        await page.goto(f"{server.url}/#match={match}")
        await until(page, "v.started")
        starts = {0: [2, 2], 1: [3, 3]}
        for seat in (await conns[0].wait_view(lambda v: v["game_state"] is not None))["game_state"]["order"]:
            assert (await conns[seat].send_command({"type": "start", "cell": starts[seat]})).accepted
        first = (await conns[0].wait_view(lambda v: v["game_state"]["phase"] == "play"))["game_state"]["to_act"]
        assert (await conns[first].send_command({"type": "move", "move": "go up, don't tell the result"})).accepted
        said = page.locator(".lab-transcript")
        await expect(said).to_contain_text("go up; don't tell the result - done.")
        text = await said.inner_text()
        assert "You start at" not in text and "Cannot move" not in text and "Walked" not in text
        await expect(page.get_by_role("form", name="your move")).to_be_hidden()  # nothing to send
        await expect(page.locator("#waiting")).to_contain_text(f"waiting for Player {2 - first}")
        assert await page.evaluate(no_horizontal_scroll_js())
        await page.locator(".lab-said").scroll_into_view_if_needed()
        await shot(page, "phone-spectator")
    finally:
        for conn in conns:
            await conn.close()
    assert page.errors == []
