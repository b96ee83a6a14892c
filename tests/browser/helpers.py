"""What the browser tests share: pages of the client, seats taken through them."""

from __future__ import annotations

import secrets
import string
from typing import Any

ALPHABET = string.ascii_letters + string.digits

async def until(page: Any, condition: str, timeout: float = 30000) -> None:
    """Wait until `condition`, a JavaScript expression of `v` (the view the page shows:
    window.daedalus, set by clients/web/app.js), holds; an error in it counts as not yet."""
    await page.wait_for_function(
        f"() => {{ try {{ const v = window.daedalus.view; return !!({condition}); }} catch (e) {{ return false; }} }}",
        timeout=timeout,
    )


def token() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(32))


def seat_link(base: str, match: str, seat: int, tok: str) -> str:
    return f"{base}/#match={match}&seat={seat}&token={tok}"


async def new_page(browser: Any, *, phone: bool = False) -> Any:
    size = {"width": 390, "height": 844} if phone else {"width": 1280, "height": 900}
    context = await browser.new_context(viewport=size)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.errors = errors  # checked at the end of each test: no script error
    return page


async def take_seat(page: Any, link: str, name: str, seat: int) -> None:
    """Open a seat link, give a name, take the seat, and wait until the page plays it."""
    await page.goto(link)
    await page.get_by_label("Your name").fill(name)
    await page.get_by_role("button", name=f"Take seat {seat}").click()
    await until(page, f"v.you === {seat}")


async def view(page: Any) -> dict[str, Any]:
    result: dict[str, Any] = await page.evaluate("window.daedalus.view")
    return result


def no_horizontal_scroll_js() -> str:
    return "document.documentElement.scrollWidth <= window.innerWidth + 1"
