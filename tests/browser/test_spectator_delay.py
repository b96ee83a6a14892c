"""A spectator page of a match with a spectator delay never shows a round before its
time: the lobby's form offers the option (from the schema), the page says how far behind
it is, every update reaches it no sooner than its entry's time plus the delay, and it
shows each round only then; the end shows everything at once."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx
from playwright.async_api import expect

from tests.browser.helpers import new_page, until
from tests.wsutil import Raw

DELAY_MS = 1500
ROUNDS = 3
# Each seat's actions, round after round (as tests/browser/test_five_card_trick.py plays
# them: the match ends after its third round); seat 0 blocks Score in the third.
PLAYS = [
    [["score", "grow"], ["claim", "steal"], ["block", "claim"]],
    [["grow", "claim"], ["score", "steal"], ["claim", "grow"]],
]

# Every frame the page's websockets receive, with the page's time of arrival.
RECORD_FRAMES = """
(() => {
  const Native = window.WebSocket;
  window.__frames = [];
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (e) => window.__frames.push([Date.now(), e.data]));
    }
  };
})();
"""

# The round the page shows once the match has started, each time it changes, with the
# time (polled every 5 ms).
RECORD_ROUNDS = """
() => {
  window.__rounds = [];
  setInterval(() => {
    const v = window.daedalus && window.daedalus.view;
    const r = v && v.started && v.game_state ? v.game_state.round : undefined;
    const last = window.__rounds[window.__rounds.length - 1];
    if (r !== undefined && (!last || last[1] !== r)) window.__rounds.push([Date.now(), r]);
  }, 5);
}
"""


async def test_a_delayed_spectator_page_never_shows_a_round_before_its_time(server: Any, browser: Any) -> None:
    host = await new_page(browser)
    await host.goto(server.url + "/")
    await host.get_by_label("Game").select_option("five-card-trick")
    await host.get_by_label("Variant").select_option("dm12")
    await host.locator("summary", has_text="Options").click()
    await host.get_by_label("rounds", exact=True).fill(str(ROUNDS))
    await host.get_by_label("round_seconds").fill("60")
    await host.get_by_label("spectator_delay").fill("1.5s")  # offered by the schema
    await host.get_by_role("button", name="Create match").click()
    links = [await host.get_by_role("textbox", name=f"link of seat {s}").input_value() for s in (0, 1)]
    match = re.search(r"match=([A-Za-z0-9_-]+)", links[0]).group(1)  # type: ignore[union-attr]
    tokens = [re.search(r"token=([A-Za-z0-9_-]+)", link).group(1) for link in links]  # type: ignore[union-attr]

    watcher = await new_page(browser)
    await watcher.add_init_script(RECORD_FRAMES)
    await watcher.goto(f"{server.url}/#match={match}")
    await until(watcher, "v.you === null")
    await watcher.evaluate(RECORD_ROUNDS)
    await expect(watcher.locator("#delay")).to_contain_text("Delayed by 1.5 s")

    ws_url = server.url.replace("http", "ws") + "/ws"
    players = []
    async with httpx.AsyncClient(base_url=server.url) as http:
        for seat, (name, tok) in enumerate(zip(("Black", "White"), tokens, strict=True)):
            r = await http.post(f"/matches/{match}/seats", json={"name": name, "seat": seat, "token": tok})
            assert r.status_code == 201, r.text
            raw = await Raw.open(ws_url)
            assert (await raw.hello(match, tok))["type"] == "welcome"
            players.append(raw)
        for r in range(1, ROUNDS + 1):
            for seat, raw in enumerate(players):
                actions = PLAYS[seat][r - 1]
                command = {"type": "submit", "round": r, "actions": actions, "block": "score" if "block" in actions else None}
                answer = await raw.command(f"r{r}s{seat}", command)
                assert answer["type"] == "ack", answer
            if r < ROUNDS:  # the players are in the next round at once; the page is not
                gs = await watcher.evaluate("window.daedalus.view.game_state")
                assert gs is None or gs["round"] <= r, gs
                await asyncio.sleep(DELAY_MS / 1000 + 0.5)
        await until(watcher, "v.ended")
        replay = (await http.get(f"/matches/{match}/replay", params={"as": "spectator"})).json()
    for raw in players:
        await raw.close()

    updates = replay["updates"]
    end_ts = updates[-1]["ts"]
    frames = [(at, json.loads(data)) for at, data in await watcher.evaluate("window.__frames")]
    received = [(at, f) for at, f in frames if f["type"] == "update"]
    assert [f["seq"] for _, f in received] == [u["n"] for u in updates]  # all, once, in order
    for at, frame in received:
        if frame["view"]["started"]:  # (a seat taken before the start comes at once)
            assert at >= min(frame["ts"] + DELAY_MS, end_ts), (at - frame["ts"], frame["events"])
    # Each round is shown no sooner than the entry that began it, plus the delay.
    began = {}
    for u in updates:
        if u["view"]["started"]:
            began.setdefault(u["view"]["game_state"]["round"], u["ts"])
    shown = await watcher.evaluate("window.__rounds")
    assert [r for _, r in shown][-1] == ROUNDS
    for at, round_ in shown:
        assert at >= min(began[round_] + DELAY_MS, end_ts), (round_, at - began[round_])
    assert any(at >= began[r] + DELAY_MS and at < end_ts for at, r in shown if r == 2)
    await expect(watcher.locator("#delay")).to_be_hidden()  # the end: all of it, at once
    assert host.errors == [] and watcher.errors == []
