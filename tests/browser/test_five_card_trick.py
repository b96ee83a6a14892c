"""Two browser pages play a whole Five-Card Trick match through the lobby: one creates
it with its options' form, both take a seat by its link, and each round both choose their
cards with the mouse or the keyboard and submit them."""

from __future__ import annotations

import json
from typing import Any

import httpx
from playwright.async_api import expect

from clients.client import decode_log
from clients.replay import check_receipts
from tests.browser.helpers import new_page, no_horizontal_scroll_js, take_seat, until, view

# Each page's cards, round after round (never the same pair twice in a row, nor an
# action a third time in a row, so no warning is expected).
PLAYS = [
    [("Score", "Grow"), ("Claim", "Steal"), ("Block", "Claim")],
    [("Grow", "Claim"), ("Score", "Steal"), ("Claim", "Grow")],
]


async def test_two_pages_play_a_whole_match(server: Any, browser: Any) -> None:
    host = await new_page(browser)
    await host.goto(server.url + "/")
    await host.get_by_label("Game").select_option("five-card-trick")
    await host.get_by_label("Variant").select_option("dm12")
    await host.locator("summary", has_text="Options").click()
    await host.get_by_label("rounds", exact=True).fill("3")
    await host.get_by_label("round_seconds").fill("30")
    await host.get_by_role("button", name="Create match").click()
    links = [await host.get_by_role("textbox", name=f"link of seat {s}").input_value() for s in (0, 1)]
    assert all("#match=" in link and "&token=" in link and "?" not in link for link in links)

    guest = await new_page(browser, phone=True)
    pages = [host, guest]
    await take_seat(host, links[0], "Black", 0)
    await take_seat(guest, links[1], "White", 1)
    for page in pages:
        await until(page, "v.started")

    for r in range(3):
        for seat, page in enumerate(pages):
            await until(page, f"v.game_state.round === {r + 1}")
            await page.get_by_role("heading", name=f"Your move, round {r + 1}").wait_for()
            first, second = PLAYS[seat][r]
            if seat == 0:  # the mouse
                await page.get_by_role("button", name=first, exact=True).click()
                await page.get_by_role("button", name=second, exact=True).click()
                if first == "Block":
                    await page.get_by_label("Block which action?").select_option("score")
                await page.get_by_role("button", name="Submit move").click()
            else:  # the keyboard: keys 1 to 5 add a card, Enter submits
                keys = {"Score": "1", "Grow": "2", "Claim": "3", "Steal": "4", "Block": "5"}
                await page.get_by_role("button", name=first, exact=True).focus()
                await page.keyboard.press(keys[first])
                await page.keyboard.press(keys[second])
                await page.keyboard.press("Enter")
            # the answer, next to the move (hidden with the move once the match is over)
            await expect(page.locator("#move-feedback")).to_have_text(f"Round {r + 1}: Taken.")
    for page in pages:
        await until(page, "v.ended")
        await page.locator(".result h2").wait_for()
    final = await view(host)
    assert final["result"]["rounds"] == 3
    scores = final["result"]["scores"]
    text = await host.locator(".result").inner_text()
    assert final["result"]["reason"] in text
    assert await guest.evaluate(no_horizontal_scroll_js())
    # every update once, in order
    for page in pages:
        seqs = await page.evaluate("window.daedalus.conn.received")
        assert seqs == list(range(1, len(seqs) + 1)) and seqs
        assert page.errors == [], page.errors
    assert sum(scores) > 0

    # Fairness: each page gave entropy of its own when it took its seat, and kept the
    # server's receipts, which hold the match's log (docs/fairness.md).
    match = final["match"]
    async with httpx.AsyncClient(base_url=server.url) as http:
        log_text = (await http.get(f"/matches/{match}/log")).text
    entries = decode_log(log_text)
    joins = [e for e in entries if e.kind == "join"]
    assert len(joins) == 2 and all(isinstance(e.body.get("entropy"), str) for e in joins)
    for page in pages:
        await expect(page.locator("#receipts")).to_have_text("Download your receipts")
        text = await page.evaluate("window.daedalus.conn.receiptsText()")
        receipts = [json.loads(line) for line in text.splitlines()]
        kinds = {r["type"] for r in receipts}
        assert kinds == {"receipt", "ack"}, kinds
        assert any(r.get("what") == "ended" for r in receipts)
        checked, problems = check_receipts(entries, receipts)
        assert checked and not problems, problems
