"""Rate limits: websocket frames per seat and per spectator address, connections per seat,
and match creation per address (with the optional API key that may be required for it).

Every limit is a token bucket. A frame sent before the hello is charged to its
connection's own bucket; once the connection has said hello, to the bucket it shares with
every other connection of the same seat (a player) or of the same address (a spectator or
an auditor), so opening more connections buys no more frames. A seat holds at most
`Settings.seat_connections` connections at once.

A bucket nobody holds is dropped once it would have filled up again (`burst / rate`
seconds after its last connection left): dropping a full bucket changes nothing, and a
bucket emptied on purpose is not refilled by reconnecting. So nothing of a seat, an
address or a match stays here for long after its last connection.
"""

from __future__ import annotations

import hmac
import math
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from server.config import Settings

# The close code of a websocket refused because its seat holds as many connections as it
# may (docs/protocol.md); the error frame before it is `too_many_connections`.
CLOSE_TOO_MANY_CONNECTIONS = 4009


class Bucket:
    """A token bucket: `rate` tokens a second, at most `burst`; full to begin with."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.clock = clock
        self.stamp = clock()

    def take(self) -> bool:
        """Take a token if there is one."""
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def wait(self) -> float:
        """Seconds until the next token."""
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate

    def refill_time(self) -> float:
        """Seconds an unused bucket takes to fill up from empty."""
        return self.burst / self.rate if self.rate > 0 else math.inf


@dataclass
class _Shared:
    bucket: Bucket
    holders: int = 0


@dataclass
class Lease:
    """One connection's hold on a shared bucket; `release` it when the connection ends."""

    limits: Limits
    key: Hashable
    bucket: Bucket
    released: bool = field(default=False)

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.limits._release(self.key)


@dataclass(frozen=True)
class Refusal:
    """An HTTP refusal: status, error code, message and headers to send with it."""

    status: int
    code: str
    message: str
    headers: dict[str, str]


def seat_key(match_id: str, seat: int) -> Hashable:
    return ("seat", match_id, seat)


def address_key(address: str | None) -> Hashable:
    return ("address", address or "")


class Limits:
    """This process's shared buckets (see the module docstring)."""

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.clock = clock
        self._shared: dict[Hashable, _Shared] = {}
        # Buckets nobody holds, by the time they may go (in the order they were let go).
        self._idle: dict[Hashable, float] = {}
        self._creations: dict[Hashable, Bucket] = {}
        self._creations_idle: dict[Hashable, float] = {}

    # -- websocket frames ----------------------------------------------------------------

    def connection_bucket(self) -> Bucket:
        """A connection's own bucket, for the frames before its hello."""
        return Bucket(self.settings.rate, self.settings.burst, self.clock)

    def join(self, key: Hashable, *, cap: int | None = None) -> Lease | None:
        """Hold the bucket shared under `key`; None if `cap` connections hold it already."""
        self._prune()
        shared = self._shared.get(key)
        if shared is None:
            shared = self._shared[key] = _Shared(
                Bucket(self.settings.rate, self.settings.burst, self.clock)
            )
        if cap is not None and shared.holders >= cap:
            if not shared.holders:
                self._idle.setdefault(key, self.clock())
            return None
        shared.holders += 1
        self._idle.pop(key, None)
        return Lease(self, key, shared.bucket)

    def join_seat(self, match_id: str, seat: int) -> Lease | None:
        """A player's connection: None if its seat holds `seat_connections` already."""
        return self.join(seat_key(match_id, seat), cap=self.settings.seat_connections)

    def join_address(self, address: str | None) -> Lease:
        """A spectator's (or an auditor's) connection: its address's bucket."""
        lease = self.join(address_key(address))
        assert lease is not None
        return lease

    def _release(self, key: Hashable) -> None:
        shared = self._shared.get(key)
        if shared is None:
            return
        shared.holders -= 1
        if shared.holders <= 0:
            shared.holders = 0
            self._idle.pop(key, None)  # to the end: the order is the order of letting go
            self._idle[key] = self.clock() + shared.bucket.refill_time()
        self._prune()

    def _prune(self) -> None:
        now = self.clock()
        for key, due in list(self._idle.items()):
            if due > now:
                break  # later ones were let go later, with the same refill time
            del self._idle[key]
            del self._shared[key]
        for key, due in list(self._creations_idle.items()):
            if due > now:
                break
            del self._creations_idle[key]
            del self._creations[key]

    # -- match creation ------------------------------------------------------------------

    def authorized(self, authorization: str | None) -> bool:
        """Whether an `Authorization: Bearer KEY` header names one of `api_keys`."""
        if authorization is None:
            return False
        scheme, _, key = authorization.strip().partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key:
            return False
        return any(
            hmac.compare_digest(key.encode(), known.encode()) for known in self.settings.api_keys
        )

    def may_create(self, address: str | None, authorization: str | None) -> Refusal | None:
        """None if a `POST /matches` from `address` with that Authorization header may go
        on. With `api_keys` set, a key is required (401 `unauthorized` without one); a
        request with a valid key is not limited by address. Otherwise each address may
        create `create_burst` matches at once and `create_rate` a second after that
        (429 `rate_limited`, with Retry-After)."""
        authorized = self.authorized(authorization)
        if self.settings.api_keys and not authorized:
            return Refusal(
                401, "unauthorized",
                "creating a match needs an API key here: send `Authorization: Bearer KEY`",
                {"WWW-Authenticate": 'Bearer realm="daedalus"'},
            )
        if authorized:
            return None
        self._prune()
        key = address_key(address)
        bucket = self._creations.get(key)
        if bucket is None:
            bucket = self._creations[key] = Bucket(
                self.settings.create_rate, self.settings.create_burst, self.clock
            )
        taken = bucket.take()
        self._creations_idle.pop(key, None)
        self._creations_idle[key] = self.clock() + bucket.refill_time()
        if taken:
            return None
        wait = bucket.wait()
        return Refusal(
            429, "rate_limited",
            f"too many matches created from this address: at most {self.settings.create_burst} "
            f"at once and one every {1 / self.settings.create_rate:g} s after that; "
            f"try again in {math.ceil(wait)} s",
            {"Retry-After": str(max(1, math.ceil(wait)))},
        )

    # -- what is held --------------------------------------------------------------------

    def held(self) -> dict[str, int]:
        """How many buckets are kept (shared frame buckets, creation buckets)."""
        self._prune()
        return {"shared": len(self._shared), "creations": len(self._creations)}
