"""Unfilled matches expire: a match whose seats are not all taken `Settings.unfilled_ttl`
seconds after its creation is removed from the store, with a record of why.

Every process that runs a match's runner arms a timer for the match's expiry (the
creation time is in its log, so every process arms the same moment, and a process that
starts late, or resumes after a restart, finds the moment passed and expires at once).
The expiry is one conditional step in the store (`Store.expire`): it lands only if the
log's head is still the one the runner folded, in which the match has not started. So a
seat taken at the last moment wins over the expiry or loses to it whole, and of several
processes expiring at once one does it and the others find the match gone.

What an operator sees: the log line `match_expired` (info) from the process that expired
it, and `GET /matches/{id}` answering 410 `match_expired` with the reason while the store
keeps the record (`Settings.expired_record_ttl`); viewers of the match get the error
`match_expired` and close code 4010.
"""

from __future__ import annotations

import asyncio
import datetime
import time
from typing import TYPE_CHECKING, Any

import msgspec

from server import logs

if TYPE_CHECKING:
    from server.hub import Hub, MatchRunner

log = logs.get("daedalus.hub")

CLOSE_MATCH_EXPIRED = 4010


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _iso(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).isoformat(timespec="seconds")


def expired_message(record: dict[str, Any]) -> str:
    """What a client is told about an expired match, from its record."""
    message = record.get("message")
    return str(message) if message else f"match {record.get('match')!r} expired"


class Expiry:
    """The expiry timers of this process's unfilled matches (one per runner)."""

    RETRY_CONFLICT_S = 1.0  # something was appended meanwhile: look again after folding it

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._failures: dict[str, int] = {}

    def __len__(self) -> int:
        """How many matches have an expiry timer here."""
        return len(self._timers)

    def watch(self, runner: MatchRunner) -> None:
        """Arm the expiry of `runner`'s match, unless it has started (or ended)."""
        ms = runner.current
        if ms.started or ms.ended:
            return
        due = ms.created + round(self.hub.settings.unfilled_ttl * 1000)
        self._arm(runner, max(0.0, (due - _now_ms()) / 1000))

    def unwatch(self, runner: MatchRunner) -> None:
        timer = self._timers.pop(runner.match_id, None)
        if timer is not None:
            timer.cancel()
        self._failures.pop(runner.match_id, None)

    def _arm(self, runner: MatchRunner, delay: float) -> None:
        timer = self._timers.pop(runner.match_id, None)
        if timer is not None:
            timer.cancel()
        self._timers[runner.match_id] = asyncio.get_running_loop().call_later(
            delay, self._ring, runner
        )

    def _ring(self, runner: MatchRunner) -> None:
        self._timers.pop(runner.match_id, None)
        if self.hub.runners.get(runner.match_id) is runner:
            self.hub.spawn(self.expire(runner))

    async def expire(self, runner: MatchRunner) -> bool:
        """Expire `runner`'s match now if it has not started; whether it is gone."""
        match_id = runner.match_id
        settings = self.hub.settings
        async with runner.lock:
            ms = runner.current
            if ms.started or ms.ended or self.hub.runners.get(match_id) is not runner:
                self._failures.pop(match_id, None)
                return False
            now = _now_ms()
            taken = sum(1 for name in ms.names if name is not None)
            record = {
                "match": match_id,
                "reason": "unfilled",
                "message": (
                    f"match {match_id} expired at {_iso(now)}: {taken} of its {ms.seats} seats "
                    f"were taken within {settings.unfilled_ttl:g} s of its creation "
                    f"({_iso(ms.created)})"
                ),
                "game": ms.game,
                "created": ms.created,
                "expired_at": now,
                "seats": ms.seats,
                "taken": taken,
            }
            try:
                status = await self.hub.store.expire(
                    match_id, expected_head=f"{ms.seq}:{ms.head}", record=record,
                    keep_s=settings.expired_record_ttl,
                )
            except Exception as exc:
                # The store is away (or failed): try again, less and less often.
                failures = self._failures.get(match_id, 0)
                if not failures:
                    log.warning("expire_error", match=match_id, error=repr(exc))
                self._failures[match_id] = failures + 1
                if self._running(runner):
                    self._arm(runner, min(30.0, 0.5 * 2**failures))
                return False
        self._failures.pop(match_id, None)
        if status == "conflict":  # a seat was taken meanwhile: fold it, then look again
            if self._running(runner):
                self._arm(runner, self.RETRY_CONFLICT_S)
            return False
        if status == "expired":
            self.hub.metrics.match("expired")
            log.info(
                "match_expired", match=match_id, reason="unfilled", game=ms.game,
                seats=ms.seats, taken=taken, created=ms.created,
                ttl_s=settings.unfilled_ttl,
            )
            message = record["message"]
        else:  # another process expired it first
            log.debug("match_expired_elsewhere", match=match_id)
            found = await self._record(match_id)
            message = expired_message(found) if found else record["message"]
        frame = msgspec.json.encode(
            {"type": "error", "code": "match_expired", "message": message, "id": None}
        )
        for sub in list(runner.subscribers):
            sub.queue.push(frame, bounded=False)
            sub.queue.close(CLOSE_MATCH_EXPIRED, "match expired")
        self.hub.forget(match_id, runner)
        return True

    def _running(self, runner: MatchRunner) -> bool:
        return self.hub.runners.get(runner.match_id) is runner

    async def _record(self, match_id: str) -> dict[str, Any] | None:
        try:
            return await self.hub.store.expired(match_id)
        except Exception:
            return None
