"""A raw protocol client for server tests: frames in, frames out, nothing clever."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect


class Raw:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.seen: list[dict[str, Any]] = []

    @classmethod
    async def open(cls, ws_url: str, **kw: Any) -> Raw:
        # A test client that stops reading leaves the server's close frame behind unread
        # updates; do not wait long for it.
        kw.setdefault("close_timeout", 0.5)
        return cls(await connect(ws_url, **kw))

    async def send(self, msg: Any) -> None:
        await self.ws.send(msg if isinstance(msg, str | bytes) else json.dumps(msg))

    async def recv(self, timeout: float = 5) -> dict[str, Any]:
        msg: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), timeout))
        self.seen.append(msg)
        return msg

    async def until(self, pred: Any, timeout: float = 5) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            msg = await self.recv(max(0.01, end - loop.time()))
            if pred(msg):
                return msg

    async def hello(self, match: str, token: str | None = None, since: int = 0) -> dict[str, Any]:
        await self.send({"type": "hello", "match": match, "token": token, "since": since})
        return await self.until(lambda m: m["type"] in ("welcome", "error"))

    async def command(self, cid: str, command: dict[str, Any]) -> dict[str, Any]:
        await self.send({"type": "command", "id": cid, "command": command})
        return await self.until(lambda m: m.get("id") == cid and m["type"] != "update")

    async def close(self) -> None:
        await self.ws.close()


async def new_match(base: str, game: str, options: dict[str, Any] | None = None,
                    variant: str | None = None, names: tuple[str, ...] = ("Ann", "Bob")) -> tuple[str, list[str]]:
    async with httpx.AsyncClient(base_url=base) as http:
        r = await http.post("/matches", json={"game": game, "variant": variant, "options": options or {}})
        r.raise_for_status()
        match = r.json()["match"]
        tokens = []
        for name in names:
            r = await http.post(f"/matches/{match}/seats", json={"name": name})
            r.raise_for_status()
            tokens.append(r.json()["token"])
    return match, tokens
