"""The event store on Redis (server.storage.Store): one stream per match, appended to by
a Lua script.

Keys of a match share the hash tag `{match_id}`, so a Redis Cluster keeps them on one
node and the script may touch them all:

    dd:{m}:log     the stream; field `e` of each entry is the Entry as JSON. Never trimmed.
    dd:{m}:head    "<seq>:<digest>" of the last entry: the append's condition.
    dd:{m}:cids    command key -> seq: a command key is appended at most once.
    dd:{m}:tokens  SHA-256 of a seat token -> seat (tokens are never stored in clear).
    dd:{m}:expired why the match expired (JSON), kept for a while once its other keys
                   are removed (Settings.expired_record_ttl; see `expire`).
    dd:active      the matches not yet over (a server resumes their clocks at start).
    dd:creation:K  for a while (Settings.idempotency_key_ttl), the match created under
                   the idempotency key whose SHA-256 is K, and its request's (JSON).

An append is one script: if the command key was seen it answers `dup` with its seq; if
the head is not the expected one it answers `conflict` (someone else appended: fold what
is new and decide again); otherwise it adds the entry, moves the head and records the key.

Appends go through a client with retries turned off: a write that times out has an
unknown outcome and is reconciled by reading the command key and the head, never by
sending it blindly again. The key found holding this very entry (byte for byte, at its
seq) means the lost write landed: that is the append's own `ok`, not a `dup`, which
stays the answer for a key another append (an earlier command, another process) holds.

Connections: reads and appends each have a bounded pool (`_Pool`: a request that finds
every connection in use waits for one, up to the command timeout), whose connections
unused for a while are closed; `follow` blocks on a connection of its own. On a single
Redis with no replicas waited for, appends are written on a connection of their own too,
a batch at a time, without the client's command layer (`_send_lean`); it is closed
once unused for as long as a pool's.

On a Redis Cluster (`from_url(..., cluster=True)`) reads and appends go through redis-py's
cluster client (one with retries, one without), which sends each command to the node
owning its key's slot and follows MOVED and ASK. Batched appends are grouped per node,
one pipeline each, sent concurrently. A cluster refuses a command whose keys lie in
different slots, even on one node, so `follow` cannot be one XREAD: it runs one read-only
script per node (CLUSTER_FOLLOW_SCRIPT, which may read keys of several slots of its own
node) over the followed streams that node owns, every node at once, and polls: a round
that finds nothing waits `poll_s` (or until `unblock`) and reads again. A node that fails
or answers that a key is not its own has the slot map read again, and its streams are
grouped anew on the next round.

`wait_replicas` (Settings.redis_wait_replicas) makes an append wait, before it is
acknowledged, until that many replicas have it (WAIT on the connection that appended);
one that does not reach them in time raises ReplicasBehind, an unknown outcome to the
sender (it is in the master's log, and the command sent again is found there).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
from collections.abc import AsyncIterator, Coroutine, Mapping
from importlib import resources
from typing import Any, cast

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, PipelineCommand, RedisCluster
from redis.asyncio.connection import (
    AbstractConnection,
    BlockingConnectionPool,
    ConnectionPool,
    SSLConnection,
    parse_url,
)
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.crc import key_slot
from redis.exceptions import (
    AskError,
    ClusterDownError,
    MovedError,
    NoScriptError,
    RedisClusterException,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

try:  # what redis-py's hiredis parser's reader answers when it holds no whole reply
    from redis._parsers.hiredis import NOT_ENOUGH_DATA as _NOT_ENOUGH_DATA
except ImportError:  # pragma: no cover (another redis-py: replies read through read_response)
    _NOT_ENOUGH_DATA = None

from hiredis import pack_command as _pack

from domain.engine import Entry
from server.storage import FOLLOW_COUNT, Appended, AppendUnknown, Expired, head_value

ACTIVE = "dd:active"
_entry_decoder = msgspec.json.Decoder(Entry)
_encoder = msgspec.json.Encoder()
_sorted_encoder = msgspec.json.Encoder(order="sorted")


def log_key(m: str) -> str:
    return f"dd:{{{m}}}:log"


def head_key(m: str) -> str:
    return f"dd:{{{m}}}:head"


def cids_key(m: str) -> str:
    return f"dd:{{{m}}}:cids"


def tokens_key(m: str) -> str:
    return f"dd:{{{m}}}:tokens"


def append_keys(m: str) -> list[str]:
    """The append script's keys for match `m` (server/append.lua)."""
    return [log_key(m), head_key(m), cids_key(m), tokens_key(m)]


_APPEND_KEYS = 4  # (how many append_keys gives)


def expired_key(m: str) -> str:
    return f"dd:{{{m}}}:expired"


# Expire a match: remove its keys if the head is the expected one, keeping the record of
# why. KEYS: log, head, command ids, seat tokens, expired record. ARGV: expected head,
# the record (JSON), how long to keep it (ms).
EXPIRE_SCRIPT = """
local head = redis.call('GET', KEYS[2])
if not head then
  return 'gone'
end
if head ~= ARGV[1] then
  return 'conflict'
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('SET', KEYS[5], ARGV[2], 'PX', ARGV[3])
return 'expired'
"""


def creation_key(key: str) -> str:
    return f"dd:creation:{key}"


# Keep a record under a match-creation key unless it holds one. KEYS: the key. ARGV: the
# record (JSON), how long to keep it (ms). The record held, or false if this stored it.
CLAIM_SCRIPT = """
local held = redis.call('GET', KEYS[1])
if held then
  return held
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
"""

# Remove a match-creation key if it holds the record ARGV[1].
RELEASE_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 0
"""


# What became of an append whose answer was lost: read in one step, as the append script
# writes. KEYS: log, head, command ids. ARGV: the command key, the entry's seq, the entry
# (JSON). {'ok', stream id}: this entry is in the log at its seq, under the key (the lost
# write landed); {'dup', seq}: the key is there for another entry; {'head', head}: the
# key is not there.
RECONCILE_SCRIPT = """
local seen = redis.call('HGET', KEYS[3], ARGV[1])
if seen then
  if seen == ARGV[2] then
    local back = redis.call('XLEN', KEYS[1]) - tonumber(seen) + 1
    if back >= 1 then
      local found = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', back)
      local item = found[#found]
      if item[2][2] == ARGV[3] then
        return {'ok', item[1]}
      end
    end
  end
  return {'dup', seen}
end
return {'head', redis.call('GET', KEYS[2]) or ''}
"""


# Read new entries of many streams of one cluster node, whatever their slots (a cluster
# refuses a command, XREAD too, whose keys lie in different slots). The keys come as
# arguments, not KEYS, so the cluster does not refuse them; a key of another node is an
# error ("non local key"). ARGV: the most entries per stream, then stream key, stream id
# after which to read, for each stream. Each stream with entries, then its entries.
CLUSTER_FOLLOW_SCRIPT = """#!lua flags=no-writes,allow-cross-slot-keys
local count = ARGV[1]
local out = {}
for i = 2, #ARGV, 2 do
  local found = redis.call('XRANGE', ARGV[i], '(' .. ARGV[i + 1], '+', 'COUNT', count)
  if #found > 0 then
    out[#out + 1] = ARGV[i]
    out[#out + 1] = found
  end
end
return out
"""


_FOLLOW_SHA = hashlib.sha1(CLUSTER_FOLLOW_SCRIPT.encode()).hexdigest()


class SlotNotCovered(RedisClusterException):
    """The cluster's slot map has no node for a followed match's slot (it is read again)."""


class ReplicasBehind(AppendUnknown):
    """An append landed on the master, but fewer replicas than `wait_replicas` had it
    when WAIT gave up: not acknowledged (the sender sends it again and finds it)."""


# What a caller of the store sees while Redis cannot be reached (down, restarting, the
# network, a cluster failing over): the request is to be tried again later, with the
# same command id.
UNAVAILABLE: tuple[type[Exception], ...] = (
    AppendUnknown, RedisConnectionError, RedisTimeoutError,
    ClusterDownError, TryAgainError, RedisClusterException,
)
# What leaves an append's outcome unknown (it may or may not have landed).
_LOST: tuple[type[BaseException], ...] = (
    RedisTimeoutError, RedisConnectionError, OSError,
    ClusterDownError, TryAgainError, RedisClusterException,
)


def _field_e(fields: list[bytes]) -> bytes:
    """Field `e` of a stream entry's [field, value, ...] list (it is the only one)."""
    if fields[0] == b"e":
        return fields[1]
    return fields[fields.index(b"e", 0, len(fields) - 1) + 1]


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class _Pool(BlockingConnectionPool):
    """redis-py's blocking pool (at most `max_connections`; a request finding them all in
    use waits up to `timeout` seconds for one, then gets ConnectionError "No connection
    available"), whose connections unused for `idle_timeout` seconds are closed.

    redis-py keeps every connection it ever opened until the pool is closed, so a burst
    or an outage (each stalled command holds a connection until it times out) would
    leave its peak open. Here a connection put back is stamped with the time; a timer
    closes those left unused for `idle_timeout` (the least recently used first: the
    pool hands out the most recently put back)."""

    def __init__(self, *, idle_timeout: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.idle_timeout = idle_timeout
        self._idle_since: dict[AbstractConnection, float] = {}
        self._trimming: asyncio.TimerHandle | None = None
        self._closing: set[asyncio.Task[None]] = set()

    async def release(self, connection: AbstractConnection) -> None:
        self._idle_since[connection] = asyncio.get_running_loop().time()
        await super().release(connection)
        if self._trimming is None:
            self._trim_later(self.idle_timeout)

    def _trim_later(self, delay: float) -> None:
        loop = asyncio.get_running_loop()
        self._trimming = loop.call_later(max(0.01, delay), self._trim)

    def _trim(self) -> None:
        """Close the connections unused for `idle_timeout`; look again when the next
        one will have been."""
        self._trimming = None
        now = asyncio.get_running_loop().time()
        keep: list[AbstractConnection] = []
        for conn in self._available_connections:
            since = self._idle_since.get(conn, now)
            if now - since < self.idle_timeout:
                keep.append(conn)
                continue
            self._idle_since.pop(conn, None)
            task = asyncio.ensure_future(conn.disconnect(nowait=True))
            self._closing.add(task)
            task.add_done_callback(self._closed)
        self._available_connections[:] = keep  # no longer the pool's: not handed out again
        if keep:
            oldest = min(self._idle_since.get(c, now) for c in keep)
            self._trim_later(oldest + self.idle_timeout - now)

    def _closed(self, task: asyncio.Task[None]) -> None:
        self._closing.discard(task)
        if not task.cancelled():
            task.exception()  # a connection that fails to close is gone all the same

    async def disconnect(self, inuse_connections: bool = True) -> None:
        if self._trimming is not None:
            self._trimming.cancel()
            self._trimming = None
        await super().disconnect(inuse_connections)
        for task in list(self._closing):
            with contextlib.suppress(Exception):
                await task


class _Cluster(RedisCluster):
    """redis-py's cluster client, with at most `max_connections` commands in flight at
    once: one more waits for one to end (up to `wait` seconds, then ConnectionError "No
    connection available", as the single-node pool). redis-py's own bound, per node,
    refuses at once (MaxConnectionsError) instead of waiting."""

    def __init__(self, *args: Any, wait: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._wait = wait
        self._room = asyncio.Semaphore(int(kwargs["max_connections"]))

    @contextlib.asynccontextmanager
    async def connection_slot(self) -> AsyncIterator[None]:
        try:
            await asyncio.wait_for(self._room.acquire(), self._wait)
        except TimeoutError:
            raise RedisConnectionError("No connection available.") from None
        try:
            yield
        finally:
            self._room.release()

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        async with self.connection_slot():
            return await super().execute_command(*args, **kwargs)


async def _connection(client: aioredis.Redis) -> Any:
    """The connection of a single-connection client, made at the first call. (redis-py's
    `initialize` takes a lock and dispatches an event at every call: where each append
    or read goes alone, at 20 commands/s, 2% of a command's instructions.)"""
    conn = client.connection
    if conn is None:
        await client.initialize()
        conn = client.connection
        assert conn is not None
    return conn


async def _read_replies(conn: Any, n: int, replies: list[Any]) -> None:
    """Read `n` replies of a batch from `conn` into `replies`, an append's own error
    (ResponseError) as its reply. With redis-py's hiredis parser, straight from its
    reader, a socket read when it holds no whole reply: read_response's layers (its
    timeout, its checks, two coroutines a reply) cost 0.6-0.9 us of a 1.2-2.2 us reply,
    timed on a redis-server (docs/performance.md, "A ninth sitting"). Any other parser,
    or a redis-py that no longer has these, is read through read_response."""
    parser = getattr(conn, "_parser", None)
    reader = getattr(parser, "_reader", None)
    more = getattr(parser, "read_from_socket", None)
    if _NOT_ENOUGH_DATA is None or reader is None or more is None or not hasattr(reader, "gets"):
        for _ in range(n):
            try:
                replies.append(await conn.read_response(disable_decoding=True, timeout=math.inf))
            except ResponseError as exc:  # this append's own error: the others stand
                replies.append(exc)
        return
    want = len(replies) + n
    while len(replies) < want:
        reply = reader.gets(False)
        if reply is _NOT_ENOUGH_DATA:
            if getattr(parser, "_stream", None) is None:  # (closed meanwhile, as read_response says)
                raise RedisConnectionError("the append connection was closed")
            await more()  # (a connection the server closed raises ConnectionError)
        elif isinstance(reply, RedisConnectionError):
            raise reply
        else:  # (a ResponseError is this append's own reply)
            replies.append(reply)


class EventStore:
    """A server.storage.Store on Redis (a redis-server, or fakeredis in-process)."""

    def __init__(
        self,
        reads: aioredis.Redis,
        writes: aioredis.Redis,
        *,
        description: str,
        owns_clients: bool = True,
        follows: aioredis.Redis | None = None,
    ) -> None:
        self.reads = reads
        self.writes = writes
        # `follow` blocks on one connection of its own (so CLIENT UNBLOCK can reach it).
        self.follows = follows if follows is not None else reads
        self.description = description
        self._owns = owns_clients
        # `follow` without the client's command layer (on a real Redis, see from_url).
        self._lean_follow = False
        self._key_args: dict[str, tuple[bytes, bytes]] = {}
        # Appends without the client's command layer (on a real Redis, see from_url): the
        # client whose one connection they are written on, and the task writing them.
        self._appends: aioredis.Redis | None = None
        self._append_keys: dict[str, bytes] = {}
        # An append's EVALSHA up to its keys (append_keys), by its number of arguments.
        self._evalsha_heads: dict[int, bytes] = {}
        self._appender: asyncio.Task[None] | None = None
        self._appends_used = 0.0  # when the last batch ended (loop time)
        self._appends_trim: asyncio.TimerHandle | None = None
        self.timeout = 5.0
        self.idle_timeout = 30.0
        script = resources.files("server").joinpath("append.lua").read_text()
        self._append = writes.register_script(script)
        self._expire = writes.register_script(EXPIRE_SCRIPT)
        self._find = reads.register_script(RECONCILE_SCRIPT)
        self._claim = writes.register_script(CLAIM_SCRIPT)
        self._release = writes.register_script(RELEASE_SCRIPT)
        # Appends waiting for the next batch (see _run_script), and the batches in flight.
        # (each by its match's id: the script's keys made from it where a batch needs them)
        self._queued: list[tuple[str, list[str | bytes], asyncio.Future[Any]]] = []
        self._batches: set[asyncio.Task[None]] = set()
        # Replicas an append waits for (WAIT) before it is acknowledged; 0: none.
        self.wait_replicas = 0
        self.wait_ms = 1000
        # On a Redis Cluster (see from_url): `reads` and `writes` are RedisCluster clients.
        self.cluster = False
        self.poll_s = 0.025
        self._node_opts: dict[str, Any] = {}
        self._node_follows: dict[str, aioredis.Redis] = {}  # node name -> its follow connection
        self._slots: dict[str, int] = {}  # followed match -> slot of its log
        self._following = 0  # cluster follows in progress
        self._wake: asyncio.Event | None = None

    # -- construction ------------------------------------------------------------------

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        timeout: float = 5.0,
        max_connections: int = 32,
        idle_timeout: float = 30.0,
        cluster: bool = False,
        wait_replicas: int = 0,
        poll_s: float = 0.025,
    ) -> EventStore:
        """The store on the Redis at `url`. `timeout`: how long a command waits for its
        answer (and for a free connection); reads and appends each have a pool of at most
        `max_connections`, whose connections unused for `idle_timeout` seconds are closed
        (server.config.Settings: redis_timeout, redis_max_connections, redis_idle_timeout).
        Appends are batched into pipelines and `follow` has a connection of its own, so
        a pool is rarely more than a few connections busy.

        `cluster`: `url` is a node of a Redis Cluster (the others are found from it); each
        node gets at most `max_connections` for reads and as many for appends (a request
        finding them all busy is refused at once, as store_unavailable), and `follow`
        polls every `poll_s` seconds while nothing is new. `wait_replicas`: see the module
        docstring; WAIT gives up after half of `timeout`."""
        if cluster:
            store = cls._cluster_from_url(url, timeout=timeout, max_connections=max_connections, poll_s=poll_s)
            store.wait_replicas = wait_replicas
            store.wait_ms = max(1, round(timeout * 500))
            return store
        def pool(retry: Retry, **kwargs: Any) -> aioredis.Redis:
            return aioredis.Redis.from_pool(_Pool.from_url(
                url, max_connections=max_connections, timeout=timeout,
                idle_timeout=idle_timeout, socket_timeout=timeout, retry=retry, **kwargs,
            ))

        reads = pool(Retry(ExponentialBackoff(cap=1.0, base=0.05), 3), health_check_interval=30)
        writes = pool(Retry(NoBackoff(), 0))
        follows = aioredis.Redis.from_url(
            url, retry=Retry(NoBackoff(), 0), single_connection_client=True
        )
        store = cls(reads, writes, description=url, follows=follows)
        store._lean_follow = True
        store._appends = aioredis.Redis.from_url(
            url, retry=Retry(NoBackoff(), 0), single_connection_client=True,
            socket_timeout=timeout, socket_connect_timeout=timeout,
        )
        store.timeout = timeout
        store.idle_timeout = idle_timeout
        store.wait_replicas = wait_replicas
        store.wait_ms = max(1, round(timeout * 500))
        return store

    @classmethod
    def _cluster_from_url(
        cls, url: str, *, timeout: float, max_connections: int, poll_s: float
    ) -> EventStore:
        opts = dict(parse_url(url))
        if opts.pop("connection_class", None) is SSLConnection:  # rediss://
            opts["ssl"] = True

        def client(retry: Retry) -> _Cluster:
            return _Cluster(
                **opts, max_connections=max_connections, socket_timeout=timeout,
                socket_connect_timeout=timeout, retry=retry, wait=timeout,
            )

        # Appends are never sent again blindly (the module docstring): no retries.
        reads = client(Retry(ExponentialBackoff(cap=1.0, base=0.05), 3))
        writes = client(Retry(NoBackoff(), 0))
        store = cls(reads, writes, description=f"{url} (Redis Cluster)")  # type: ignore[arg-type]
        store.cluster = True
        store.poll_s = poll_s
        opts = dict(parse_url(url))
        opts.pop("db", None)
        store._node_opts = {**opts, "socket_timeout": timeout, "socket_connect_timeout": timeout}
        return store

    @classmethod
    def embedded(cls) -> EventStore:
        import fakeredis

        server = fakeredis.FakeServer()
        reads = fakeredis.FakeAsyncRedis(server=server)
        writes = fakeredis.FakeAsyncRedis(server=server)
        follows = fakeredis.FakeAsyncRedis(server=server, single_connection_client=True)
        return cls(
            reads, writes, follows=follows,
            description="embedded fakeredis (in-process, not persistent)",
        )

    async def close(self) -> None:
        if self._owns:
            await self.reads.aclose()
            await self.writes.aclose()
            if self.follows is not self.reads:
                await self.follows.aclose()
            if self._appends_trim is not None:
                self._appends_trim.cancel()
                self._appends_trim = None
            if self._appender is not None:
                with contextlib.suppress(BaseException):
                    await self._appender
            if self._appends is not None:
                await self._appends.aclose()
            for follows in list(self._node_follows.values()):
                with contextlib.suppress(Exception):
                    await follows.aclose()
            self._node_follows.clear()

    async def ping(self) -> bool:
        return bool(await self.reads.ping())

    # -- appends ---------------------------------------------------------------------------

    async def append(
        self,
        match_id: str,
        entry: Entry,
        *,
        expected_head: str,
        key: str,
        token_hash: str | None = None,
        seat: int | None = None,
        encoded: bytes | None = None,
        attempts: int = 3,
    ) -> Appended:
        """Append `entry` (its JSON `encoded`, when the caller has it) if `key` is new and
        the head is `expected_head`.

        On a timeout or lost connection the outcome is unknown: read the key and the
        head to learn it; only if the head still stands is the append tried again (it
        is conditional, so it cannot land twice). Found landed, it is this append's `ok`
        (with its stream id); a `dup` after such a try is looked into the same way."""
        return await self.begin_append(
            match_id, entry, expected_head=expected_head, key=key, token_hash=token_hash,
            seat=seat, encoded=encoded, attempts=attempts,
        )

    @property
    def ordered(self) -> bool:
        """Whether appends begun one after another (`begin_append`) are tried in that
        order: one batch at a time, except on a Cluster or when waiting for replicas,
        where batches go concurrently."""
        return not self.wait_replicas and not self.cluster

    def begin_append(
        self,
        match_id: str,
        entry: Entry,
        *,
        expected_head: str,
        key: str,
        token_hash: str | None = None,
        seat: int | None = None,
        encoded: bytes | None = None,
        attempts: int = 3,
    ) -> Coroutine[Any, Any, Appended]:
        """`append`, its first try queued now (see server.storage.Store.begin_append):
        await what it returns for the outcome."""
        args = self._script_args(entry, expected_head, key, token_hash, seat, encoded)
        return self._appended(match_id, entry, expected_head, key, args, self._run_script(match_id, args), attempts)

    async def _appended(
        self,
        match_id: str,
        entry: Entry,
        expected_head: str,
        key: str,
        args: list[str | bytes],
        first: asyncio.Future[Any],
        attempts: int,
    ) -> Appended:
        encoded: bytes = args[3]  # type: ignore[assignment]  # (typing.cast: a call an append)
        uncertain = False  # whether a try of this call may have landed unheard
        for attempt in range(attempts):
            try:
                status, value = await (first if attempt == 0 else self._run_script(match_id, args))
            except _LOST:
                uncertain = True
                reconciled = await self._reconcile(match_id, key, expected_head, entry.seq, encoded)
                if reconciled is not None:
                    return reconciled
                await asyncio.sleep(0.05 * (attempt + 1))
                continue
            status = _s(status)
            if status == "ok":
                return Appended("ok", seq=entry.seq, stream_id=_s(value))
            if status == "dup":
                seq = int(_s(value))
                if uncertain and seq == entry.seq:
                    # An earlier try may be what holds the key: whose entry is it?
                    reconciled = await self._reconcile(match_id, key, expected_head, seq, encoded)
                    if reconciled is None:
                        await asyncio.sleep(0.05 * (attempt + 1))
                        continue
                    return reconciled
                return Appended("dup", seq=seq)
            return Appended("conflict")
        raise AppendUnknown(f"match {match_id}: the store did not answer")

    @staticmethod
    def _script_args(
        entry: Entry, expected_head: str, key: str,
        token_hash: str | None = None, seat: int | None = None, encoded: bytes | None = None,
    ) -> list[str | bytes]:
        """The append script's arguments (server/append.lua; its keys: `append_keys`)."""
        args: list[str | bytes] = [
            expected_head,
            head_value(entry),
            key,
            _encoder.encode(entry) if encoded is None else encoded,
            str(entry.seq),
            token_hash or "",
            "" if seat is None else str(seat),
        ]
        return args

    def _run_script(self, match_id: str, args: list[str | bytes]) -> asyncio.Future[Any]:
        """Run the append script once for match `match_id`, batched with the other appends
        of this moment.

        Appends of different matches that are decided in the same turn of the event
        loop go to Redis as one batch (one write, one read of the replies), not one
        round trip each. A batch is no transaction: each script runs and answers on its
        own, exactly as alone; an error of the connection is every append's.

        Unless on a Cluster or waiting for replicas (see `ordered`), one task writes the
        appends a batch at a time, in the order they were queued: a batch is everything
        queued while the one before it was in flight (`_append_in_order`; on a real Redis
        on a connection of their own, see from_url). Otherwise each turn's appends go as
        a pipeline of their own, concurrently (`_flush`)."""
        # (the appender's loop while it runs, as it does under load: get_running_loop
        # asks the kernel for the process's id at every call, Python 3.11)
        appender = self._appender
        loop = asyncio.get_running_loop() if appender is None else appender.get_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if self.ordered:
            if self._appender is None:
                self._appender = loop.create_task(self._append_in_order())
        elif not self._queued:
            loop.call_soon(self._flush)
        self._queued.append((match_id, args, future))
        return future

    def _flush(self) -> None:
        batch, self._queued = self._queued, []
        task = asyncio.ensure_future(self._send(batch))
        self._batches.add(task)
        task.add_done_callback(self._batches.discard)

    async def _append_in_order(self) -> None:
        try:
            while self._queued:
                batch, self._queued = self._queued, []
                await self._send(batch)
        finally:
            self._appender = None
            loop = asyncio.get_running_loop()
            self._appends_used = loop.time()
            if self._appends_trim is None:
                self._appends_trim = loop.call_later(self.idle_timeout, self._trim_appends)

    def _trim_appends(self) -> None:
        """Close the append connection once unused for `idle_timeout`, as the pools close
        theirs (the next append opens it again)."""
        self._appends_trim = None
        loop = asyncio.get_running_loop()
        idle = loop.time() - self._appends_used
        if self._appender is None and idle >= self.idle_timeout:
            conn = self._appends.connection if self._appends is not None else None
            if conn is not None:
                task = asyncio.ensure_future(conn.disconnect(nowait=True))
                self._batches.add(task)
                task.add_done_callback(self._batches.discard)
        else:
            self._appends_trim = loop.call_later(max(0.01, self.idle_timeout - idle), self._trim_appends)

    async def _send(self, batch: list[tuple[str, list[str | bytes], asyncio.Future[Any]]]) -> None:
        """Send a batch and settle each append's future with its reply (or the error)."""
        try:
            replies = await self._replies([(match_id, args) for match_id, args, _ in batch])
        except BaseException as exc:
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        for (_, _, future), reply in zip(batch, replies, strict=True):
            if future.done():
                continue
            if isinstance(reply, BaseException):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    async def _replies(self, batch: list[tuple[str, list[str | bytes]]]) -> list[Any]:
        """The append script's reply for each (match id, args) of the batch, in order; a
        ResponseError of one append is its reply, an error of the connection is raised."""
        replies: list[Any]
        if self._appends is not None and not self.cluster and not self.wait_replicas:
            replies = await self._send_lean(batch)
        else:
            # (the lean batch needs no keys as text: each match's are kept packed)
            keyed = [(append_keys(match_id), args) for match_id, args in batch]
            if self.cluster:
                return await self._send_cluster(keyed)
            if self.wait_replicas:
                return await self._send_waiting(keyed)
            if len(keyed) == 1:
                keys, args = keyed[0]
                return [await self._append(keys=keys, args=args)]
            pipe = self.writes.pipeline(transaction=False)
            for keys, args in keyed:
                pipe.evalsha(self._append.sha, len(keys), *keys, *args)
            replies = await pipe.execute(raise_on_error=False)
        for i, reply in enumerate(replies):
            if isinstance(reply, NoScriptError):  # Redis lost its scripts: load it again
                match_id, args = batch[i]
                replies[i] = await self._append(keys=append_keys(match_id), args=args)
        return replies

    async def _send_lean(self, batch: list[tuple[str, list[str | bytes]]]) -> list[Any]:
        """A batch on the append connection: one string of EVALSHA commands built from
        bytes (the keys of a match encoded once), the replies read in order under one
        timeout. Through the client's pipeline, packing every argument of every command
        and reading each reply under a timeout of its own cost about a tenth of a
        command's server CPU (docs/performance.md). On any error the connection is closed,
        so that no reply is ever read as another append's."""
        assert self._appends is not None
        heads = self._evalsha_heads
        parts: list[bytes] = []
        for match_id, args in batch:
            head = heads.get(len(args))
            if head is None:
                sha = self._append.sha.encode()
                head = heads[len(args)] = b"*%d\r\n$7\r\nEVALSHA\r\n$%d\r\n%b\r\n$1\r\n%d\r\n" % (
                    3 + _APPEND_KEYS + len(args), len(sha), sha, _APPEND_KEYS)
            # The arguments as bulk strings: what hiredis packs for a command of them, past
            # its array's header (in C: 1.7 -> 1.1 us an append, and 20 pieces fewer to join).
            packed = _pack(tuple(args))  # type: ignore[arg-type]  # (its stub: a 1-tuple)
            parts += (head, self._packed_keys(match_id), packed[packed.index(b"\r\n") + 2 :])
        conn = await _connection(self._appends)
        replies: list[Any] = []
        try:
            async with asyncio.timeout(self.timeout):
                await conn.send_packed_command(b"".join(parts), check_health=False)
                await _read_replies(conn, len(batch), replies)
        except BaseException as exc:
            await conn.disconnect(nowait=True)
            if isinstance(exc, TimeoutError):
                raise RedisTimeoutError("the append batch was not answered in time") from exc
            raise
        return replies

    def _packed_keys(self, match_id: str) -> bytes:
        """The keys of an append as RESP bulk strings, encoded once per match (the four
        keys of one match, kept by its id; dropped with the match's other cached bytes by
        `forget`)."""
        packed = self._append_keys.get(match_id)
        if packed is None:
            packed = b"".join(
                b"$%d\r\n%b\r\n" % (len(k), k) for k in (key.encode() for key in append_keys(match_id))
            )
            self._append_keys[match_id] = packed
        return packed

    def _waited(self, replies: list[Any], replicas: Any) -> list[Any]:
        """The replies of appends followed by WAIT, which answered `replicas`: an `ok`
        not on enough replicas becomes ReplicasBehind."""
        behind: BaseException
        if isinstance(replicas, BaseException):
            behind = ReplicasBehind(f"WAIT failed: {replicas}")
        elif int(replicas) >= self.wait_replicas:
            return replies
        else:
            behind = ReplicasBehind(
                f"the append reached {int(replicas)} of the {self.wait_replicas} replicas "
                f"it waits for within {self.wait_ms} ms"
            )
        return [
            behind if not isinstance(r, BaseException) and _s(r[0]) == "ok" else r
            for r in replies
        ]

    async def _send_waiting(
        self, batch: list[tuple[list[str], list[str | bytes]]]
    ) -> list[Any]:
        """One Redis: the batch and a WAIT for `wait_replicas`, in one pipeline (WAIT
        waits for what its own connection wrote)."""
        replies: list[Any] = [None] * len(batch)
        todo = list(range(len(batch)))
        for _ in range(2):
            pipe = self.writes.pipeline(transaction=False)
            for i in todo:
                keys, args = batch[i]
                pipe.evalsha(self._append.sha, len(keys), *keys, *args)
            pipe.execute_command("WAIT", self.wait_replicas, self.wait_ms)
            *got, replicas = await pipe.execute(raise_on_error=False)
            got = self._waited(got, replicas)
            again = []
            for i, reply in zip(todo, got, strict=True):
                replies[i] = reply
                if isinstance(reply, NoScriptError):
                    again.append(i)
            if not again:
                break
            self._append.sha = await self.writes.script_load(self._append.script)
            todo = again
        return replies

    async def _send_cluster(
        self, batch: list[tuple[list[str], list[str | bytes]]]
    ) -> list[Any]:
        """A cluster: the batch grouped by the node owning each match's slot, one pipeline
        per node (with a WAIT at its end if `wait_replicas`), the nodes at once. An append
        answered MOVED or CLUSTERDOWN did not run: the slot map is read again and it is sent
        to the new owner (up to three rounds); one answered ASK (a slot being migrated)
        goes through the client, which sends ASKING first (and is not waited for: WAIT
        would run on another connection); a node that lost the script (a replica just
        promoted: Redis does not hand its masters' scripts to replicas) gets it again and
        the append is sent again, without counting against the three rounds of the slot
        map. An append still answered MOVED or NOSCRIPT at the end did not run: its reply
        is a RedisClusterException, an outcome `append` looks into and tries again."""
        cluster = cast(_Cluster, self.writes)
        replies: list[Any] = [None] * len(batch)
        todo = list(range(len(batch)))
        redirects = loads = 0
        while True:
            await cluster.initialize()
            groups: dict[str, tuple[ClusterNode, list[int]]] = {}
            for i in todo:
                node = cluster.get_node_from_key(batch[i][0][0])
                assert node is not None
                groups.setdefault(node.name, (node, []))[1].append(i)
            outcomes = await asyncio.gather(
                *(self._node_appends(cluster, node, [batch[i] for i in items]) for node, items in groups.values()),
                return_exceptions=True,
            )
            again: list[int] = []
            stale = False
            loaded: set[str] = set()  # the nodes sent the script in this round
            for (node, items), outcome in zip(groups.values(), outcomes, strict=True):
                if isinstance(outcome, BaseException):
                    if not isinstance(outcome, Exception):
                        raise outcome
                    stale = True  # the node may be gone: its appends' outcome is unknown
                    for i in items:
                        replies[i] = outcome
                    continue
                for i, reply in zip(items, outcome, strict=True):
                    replies[i] = reply
                    if isinstance(reply, AskError) and not isinstance(reply, MovedError):
                        keys, args = batch[i]
                        try:
                            replies[i] = await self._append(keys=keys, args=args)
                        except Exception as exc:  # its own answer, like a reply
                            replies[i] = exc
                    elif isinstance(reply, (MovedError, ClusterDownError, TryAgainError)):
                        stale = True
                        again.append(i)
                    elif isinstance(reply, NoScriptError):
                        if node.name not in loaded:
                            loaded.add(node.name)
                            with contextlib.suppress(Exception):
                                await node.execute_command("SCRIPT", "LOAD", self._append.script)
                        again.append(i)
            if stale:
                with contextlib.suppress(Exception):
                    await cluster.nodes_manager.initialize()
            if not again:
                break
            redirects += stale
            loads += bool(loaded)
            if redirects >= 3 or loads >= 3:
                for i in again:
                    replies[i] = RedisClusterException(f"the cluster did not take the append: {replies[i]!r}")
                break
            todo = again
        return replies

    async def _node_appends(
        self,
        cluster: _Cluster,
        node: ClusterNode,
        items: list[tuple[list[str], list[str | bytes]]],
    ) -> list[Any]:
        commands = [
            PipelineCommand(n, "EVALSHA", self._append.sha, len(keys), *keys, *args)
            for n, (keys, args) in enumerate(items)
        ]
        if self.wait_replicas:
            commands.append(PipelineCommand(len(commands), "WAIT", self.wait_replicas, self.wait_ms))
        async with cluster.connection_slot():
            await node.execute_pipeline(commands)
        replies = [c.result for c in commands]
        if self.wait_replicas:
            return self._waited(replies[:-1], replies[-1])
        return replies

    async def _reconcile(
        self, match_id: str, key: str, expected_head: str, seq: int, encoded: bytes
    ) -> Appended | None:
        """After an unknown outcome: what happened (`ok`: this entry, `encoded` at `seq`,
        landed; `dup`: the key holds another; `conflict`: the head moved on), or None if
        it did not land, or Redis did not answer."""
        try:
            status, value = await self._find(
                keys=[log_key(match_id), head_key(match_id), cids_key(match_id)],
                args=[key, str(seq), encoded],
            )
        except _LOST:
            return None
        status, value = _s(status), _s(value)
        if status == "ok":
            return Appended("ok", seq=seq, stream_id=value)
        if status == "dup":
            return Appended("dup", seq=int(value))
        if value != expected_head:
            return Appended("conflict")
        return None

    async def create(self, match_id: str, entry: Entry) -> bool:
        """Start a match log with its create entry; False if the id is taken."""
        result = await self.append(match_id, entry, expected_head="", key="create")
        if result.status != "ok":
            return False
        await self.reads.sadd(ACTIVE, match_id)
        return True

    async def mark_over(self, match_id: str) -> None:
        await self.reads.srem(ACTIVE, match_id)

    async def active(self) -> list[str]:
        return sorted(_s(m) for m in await self.reads.smembers(ACTIVE))

    # -- reads -----------------------------------------------------------------------------

    async def read(self, match_id: str, after: str = "0-0") -> list[tuple[str, Entry]]:
        """Every entry after stream id `after`, in order."""
        out: list[tuple[str, Entry]] = []
        start = "-" if after == "0-0" else f"({after}"
        while True:
            batch = await self.reads.xrange(log_key(match_id), min=start, max="+", count=1000)
            if not batch:
                return out
            for sid, fields in batch:
                out.append((_s(sid), _entry_decoder.decode(fields[b"e"])))  # type: ignore[index]
            start = f"({_s(batch[-1][0])}"
            if len(batch) < 1000:
                return out

    async def follow(
        self, after: Mapping[str, str], block_ms: int | None
    ) -> dict[str, list[tuple[str, bytes]]]:
        """For many matches at once: the entries after each one's stream id, as stored
        (the Entry as JSON), waiting up to block_ms for the first. One XREAD on the
        connection of `follows_id`, so `unblock` can end the wait early (on a cluster,
        rounds of reads per node: `_follow_cluster`)."""
        if self.cluster:
            return await self._follow_cluster(after, block_ms)
        if not self._lean_follow:
            keys = {log_key(m): m for m in after}
            res: Any = await self.follows.xread(
                {log_key(m): sid for m, sid in after.items()}, block=block_ms, count=FOLLOW_COUNT
            )  # (block=None: no BLOCK, an answer at once)
            out: dict[str, list[tuple[str, bytes]]] = {}
            for key, items in res or []:
                out[keys[_s(key)]] = [(_s(sid), fields[b"e"]) for sid, fields in items]
            return out
        return await self._follow_lean(after, block_ms)

    async def _follow_lean(
        self, after: Mapping[str, str], block_ms: int | None
    ) -> dict[str, list[tuple[str, bytes]]]:
        """`follow` on a real Redis: the XREAD is written and read on the follow
        connection directly. Through the client, encoding the many arguments of a read
        over hundreds of streams and reshaping its reply cost more than the read."""
        cache = self._key_args  # per followed match, until `forget`
        wait = () if block_ms is None else ("BLOCK", str(block_ms))  # (none: an answer at once)
        head = ("XREAD", "COUNT", str(FOLLOW_COUNT), *wait, "STREAMS")
        parts = [b"*%d\r\n" % (len(head) + 2 * len(after))]
        parts += [b"$%d\r\n%b\r\n" % (len(a), a.encode()) for a in head]
        keys: dict[bytes, str] = {}
        for m in after:
            found = cache.get(m)
            if found is None:
                key = log_key(m).encode()
                found = cache[m] = (key, b"$%d\r\n%b\r\n" % (len(key), key))
            keys[found[0]] = m
            parts.append(found[1])
        for sid in after.values():
            parts.append(b"$%d\r\n%b\r\n" % (len(sid), sid.encode()))
        conn = await _connection(self.follows)
        try:
            await conn.send_packed_command(b"".join(parts), check_health=False)
            res: Any = await conn.read_response(disable_decoding=True)
        except BaseException:
            await conn.disconnect(nowait=True)
            raise
        out = {}
        if res:
            # RESP3: a map of stream -> entries; RESP2: a list of [stream, entries].
            for key, items in res.items() if isinstance(res, dict) else res:
                out[keys[key]] = [(sid.decode(), _field_e(fields)) for sid, fields in items]
        return out

    async def _follow_cluster(
        self, after: Mapping[str, str], block_ms: int | None
    ) -> dict[str, list[tuple[str, bytes]]]:
        """`follow` on a cluster: rounds of one read per node (`_read_nodes`), every
        `poll_s` seconds until one finds entries, `block_ms` is over (None: one round),
        or `unblock`."""
        loop = asyncio.get_running_loop()
        if self._wake is None:
            self._wake = asyncio.Event()
        wake = self._wake
        if not self._following:
            wake.clear()
        self._following += 1
        try:
            deadline = None if block_ms == 0 else loop.time() + (block_ms or 0) / 1000
            while True:
                found = await self._read_nodes(after)
                if found or wake.is_set() or block_ms is None:
                    return found
                rest = self.poll_s if deadline is None else min(self.poll_s, deadline - loop.time())
                if rest <= 0:
                    return {}
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), rest)
                if wake.is_set():
                    return {}
        finally:
            self._following -= 1

    async def _read_nodes(self, after: Mapping[str, str]) -> dict[str, list[tuple[str, bytes]]]:
        """One round of a cluster's `follow`: the streams grouped by the node owning their
        slot (the client's slot map), one CLUSTER_FOLLOW_SCRIPT per node, all at once.
        A node that fails has its connection dropped and the slot map read again (a
        failover, a slot moved), and the error is raised, whatever the others found (read
        again next time): the follower says the store is away, waits until every master
        answers (`follows_id`) and then checks the logs it holds (a failover may have
        lost entries)."""
        cluster = cast(RedisCluster, self.reads)
        await cluster.initialize()
        slots = cluster.nodes_manager.slots_cache
        groups: dict[str, tuple[ClusterNode, list[str]]] = {}
        for m in after:
            slot = self._slots.get(m)
            if slot is None:
                slot = self._slots[m] = key_slot(log_key(m).encode())
            owners = slots.get(slot)
            if not owners:
                raise SlotNotCovered(f"slot {slot} (match {m}) has no node in the slot map")
            node = owners[0]
            groups.setdefault(node.name, (node, []))[1].append(m)
        outcomes = await asyncio.gather(
            *(self._read_node(node, {m: after[m] for m in ms}) for node, ms in groups.values()),
            return_exceptions=True,
        )
        found: dict[str, list[tuple[str, bytes]]] = {}
        failed: Exception | None = None
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, Exception):
                    raise outcome
                failed = outcome
            else:
                found.update(outcome)
        if failed is not None:
            with contextlib.suppress(Exception):
                await cluster.nodes_manager.initialize()
            raise failed
        return found

    async def _read_node(
        self, node: ClusterNode, after: Mapping[str, str]
    ) -> dict[str, list[tuple[str, bytes]]]:
        follows = self._node_follows.get(node.name)
        if follows is None:
            opts = {**self._node_opts, "host": node.host, "port": int(node.port)}
            follows = aioredis.Redis(
                connection_pool=ConnectionPool(**opts), retry=Retry(NoBackoff(), 0),
                single_connection_client=True,
            )
            self._node_follows[node.name] = follows
        cache = self._key_args
        head = ("EVALSHA", _FOLLOW_SHA, "0", str(FOLLOW_COUNT))
        parts = [b"*%d\r\n" % (len(head) + 2 * len(after))]
        parts += [b"$%d\r\n%b\r\n" % (len(a), a.encode()) for a in head]
        keys: dict[bytes, str] = {}
        for m, sid in after.items():
            known = cache.get(m)
            if known is None:
                key = log_key(m).encode()
                known = cache[m] = (key, b"$%d\r\n%b\r\n" % (len(key), key))
            keys[known[0]] = m
            parts.append(known[1])
            parts.append(b"$%d\r\n%b\r\n" % (len(sid), sid.encode()))
        packed = b"".join(parts)
        try:
            conn = await _connection(follows)
            try:
                await conn.send_packed_command(packed, check_health=False)
                res: Any = await conn.read_response(disable_decoding=True)
            except NoScriptError:
                await conn.send_command("SCRIPT", "LOAD", CLUSTER_FOLLOW_SCRIPT)
                await conn.read_response()
                await conn.send_packed_command(packed, check_health=False)
                res = await conn.read_response(disable_decoding=True)
        except ResponseError:
            raise  # the connection stays good: a key not of this node, the cluster down
        except BaseException:
            self._node_follows.pop(node.name, None)
            with contextlib.suppress(Exception):
                await follows.aclose()
            raise
        out: dict[str, list[tuple[str, bytes]]] = {}
        for i in range(0, len(res or ()), 2):
            out[keys[res[i]]] = [(sid.decode(), _field_e(fields)) for sid, fields in res[i + 1]]
        return out

    async def follows_id(self) -> int:
        """The Redis client id of the connection `follow` blocks on (on a cluster, which
        does not block, 1 once every master answers)."""
        if self.cluster:
            await self.reads.ping(target_nodes=RedisCluster.PRIMARIES)
            return 1
        return int(await self.follows.client_id())

    async def unblock(self, client_id: int) -> bool:
        """End a blocked `follow` now (it returns nothing); False if none was blocked."""
        if self.cluster:
            if not self._following or self._wake is None:
                return False
            self._wake.set()
            return True
        return bool(await self.reads.client_unblock(client_id))

    async def seat_for_token(self, match_id: str, token_hash: str) -> int | None:
        seat = await self.reads.hget(tokens_key(match_id), token_hash)
        return None if seat is None else int(_s(seat))

    async def length(self, match_id: str) -> int:
        return int(await self.reads.xlen(log_key(match_id)))

    def forget(self, match_id: str) -> None:
        self._key_args.pop(match_id, None)
        self._append_keys.pop(match_id, None)
        self._slots.pop(match_id, None)

    # -- expiry ------------------------------------------------------------------------------

    async def expire(
        self, match_id: str, *, expected_head: str, record: Mapping[str, Any], keep_s: float
    ) -> Expired:
        keys = [*append_keys(match_id), expired_key(match_id)]
        args: list[str | bytes] = [
            expected_head, _encoder.encode(dict(record)), str(max(1, round(keep_s * 1000)))
        ]
        status = _s(await self._expire(keys=keys, args=args))
        if status != "conflict":
            # Not in the script: `dd:active` may live on another node of a cluster. A
            # process that stops in between leaves the id there; resuming it finds no log
            # and takes it out then.
            await self.reads.srem(ACTIVE, match_id)
        return cast(Expired, status)

    async def expired(self, match_id: str) -> dict[str, Any] | None:
        raw = await self.reads.get(expired_key(match_id))
        if raw is None:
            return None
        record: dict[str, Any] = msgspec.json.decode(raw)
        return record

    # -- idempotent creation -----------------------------------------------------------------

    async def claim_creation_key(
        self, key: str, record: Mapping[str, Any], keep_s: float
    ) -> dict[str, Any] | None:
        args: list[str | bytes] = [
            _sorted_encoder.encode(dict(record)), str(max(1, round(keep_s * 1000)))
        ]
        held = await self._claim(keys=[creation_key(key)], args=args)
        if held is None:
            return None
        found: dict[str, Any] = msgspec.json.decode(held)
        return found

    async def release_creation_key(self, key: str, record: Mapping[str, Any]) -> None:
        await self._release(keys=[creation_key(key)], args=[_sorted_encoder.encode(dict(record))])
