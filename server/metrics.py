"""The server's metrics, served at `GET /metrics` in Prometheus's text format.

One `Metrics` per hub (so per application): its own registry, never the client library's
global one, so that several applications in one process (tests, an embedded server)
count apart. Everything the server counts goes through the methods here; the rest of
the server calls them from a handful of places (server/app.py, server/hub.py, the
follower and the expiry). The gauges that mirror what the hub holds (runners, viewers,
followed matches) are read when /metrics is asked for, not kept up to date per command.

A command costs one count and an append one observation, kept in plain numbers that a
collector of ours turns into the counter and histogram when /metrics is asked for
(`_Counts`, `_Observed`): the client library's own take a lock and look up a child at
every call, about a microsecond of a command (docs/performance.md, "Metrics" and "A
ninth sitting"). The rest, counted far less often, are the client library's.

What each metric means, and the alerts worth setting on them: deploy/README.md,
"Metrics and alerts".
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from server.hub import Hub
    from server.route import Handoff

# What became of a command a player sent (server/app.py: Connection._command, counted by
# Connection.receive_loop).
OUTCOMES = ("accepted", "rejected", "duplicate", "error")

# Seconds: an append is a Redis round trip (a millisecond or less on one host) unless
# Redis is slow, far, or waits for replicas.
APPEND_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
# Seconds: a round lasts from a fraction of a second (bots) to its clock (minutes).
ROUND_BUCKETS = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)

ROUND_HELP = (
    "Log time from a round's first command to the entry that ended the round (its last "
    "submission or its clock's tick), by game; counted by the process that appended that "
    "entry."
)

# The text format generate_latest writes, as every Prometheus reads it (the client's
# CONTENT_TYPE_LATEST names format 1.0.0 in its recent versions, which older servers
# do not know; every name here is one the older format allows).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """The counters, gauges and histograms of one hub (see the module docstring)."""

    def __init__(self, hub: Hub | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        # The process's start time, CPU, memory and descriptors (process_*): a restart
        # shows as a new process_start_time_seconds.
        ProcessCollector(registry=r)
        self._commands = _Counts(
            "daedalus_commands", "Commands players sent, by game and outcome "
            "(accepted, rejected by the rules, duplicate of one sent before, error: not "
            "applied, e.g. the store was away or the match busy).",
            ("game", "outcome"),
        )
        r.register(self._commands)
        self.append_seconds = _Observed(
            "daedalus_append_seconds", "Time of one conditional append to the store (a "
            "command, a join or a tick), answer included, whatever the answer.",
            APPEND_BUCKETS,
        )
        r.register(self.append_seconds)
        self.append_conflicts = Counter(
            "daedalus_append_conflicts", "Appends refused because another process had "
            "appended to the match first (its entry is folded and the command decided again).",
            registry=r,
        )
        self.append_retries = Counter(
            "daedalus_append_retries", "Entries decided again after an append that did not "
            "land (a conflict, a command key held by an entry not folded here yet, or the "
            "append of the entry it was decided on, in flight with it, did not land).",
            registry=r,
        )
        self._round_seconds: dict[str, _Observed] = {}  # by game (see round_ended)
        r.register(_Families(
            "daedalus_round_seconds", ROUND_HELP, "game", self._round_seconds
        ))
        self.follow_lag = Histogram(
            "daedalus_follow_lag_seconds", "For entries other processes appended, the time "
            "from the newest one's timestamp (the appending process's clock) to its fold "
            "here, once per read of the follower: how far behind this process's viewers "
            "see other processes' moves (the hosts' clocks must agree: NTP).",
            buckets=APPEND_BUCKETS, registry=r,
        )
        self.connections = Gauge(
            "daedalus_connections", "Websocket connections open on this process.", registry=r
        )
        self.send_queue_overflows = Counter(
            "daedalus_send_queue_overflows", "Connections closed with 4008 because their "
            "reader fell more than the send queue behind (they resume from their last seq).",
            registry=r,
        )
        self._redis_errors = Counter(
            "daedalus_redis_errors", "Requests and background work that found the store "
            "away (store_unavailable answered, a tick or a follow read failed), by where.",
            ["where"], registry=r,
        )
        self.resumes = Counter(
            "daedalus_resumes", "Hellos that resumed a stream (since > 0).", registry=r
        )
        self._matches = Counter(
            "daedalus_matches", "Matches created, finished (counted by the process that "
            "appended the last entry) and expired (unfilled), by event.",
            ["event"], registry=r,
        )
        for event in ("created", "finished", "expired"):
            self._matches.labels(event)
        self._handoff: Handoff | None = None
        r.register(_Workers(self))
        if hub is not None:
            self.watch(hub)

    def watch_handoff(self, handoff: Handoff) -> None:
        """A worker of `daedalus serve --workers N`: its index, and the connections it
        handed to the worker owning their match and adopted from another (server/route.py)."""
        self._handoff = handoff

    @property
    def worker(self) -> tuple[int, int]:
        """(this process's index among the workers, their number): (0, 1) without --workers."""
        handoff = self._handoff
        return (0, 1) if handoff is None else (handoff.index, handoff.workers)

    def watch(self, hub: Hub) -> None:
        """The gauges read from `hub` when /metrics is asked for."""
        r = self.registry
        Gauge(
            "daedalus_viewers", "Viewers (players, spectators, auditors) subscribed to a "
            "match on this process.", registry=r,
        ).set_function(lambda: sum(len(runner.subscribers) for runner in list(hub.runners.values())))
        Gauge(
            "daedalus_matches_loaded", "Matches this process holds in memory.", registry=r
        ).set_function(lambda: len(hub.runners))
        Gauge(
            "daedalus_followed_matches", "Unfinished matches whose streams this process follows.",
            registry=r,
        ).set_function(lambda: len(hub.follower.runners))
        r.register(_Receipts(hub))

    # -- what the server calls ------------------------------------------------------------

    def command(self, game: str, outcome: str) -> None:
        self._commands.inc((game, outcome))

    def round_ended(self, game: str, ms: int) -> None:
        observed = self._round_seconds.get(game)
        if observed is None:
            observed = self._round_seconds[game] = _Observed(
                "daedalus_round_seconds", ROUND_HELP, ROUND_BUCKETS, {"game": game}
            )
        observed.observe(ms / 1000)

    def redis_error(self, where: str) -> None:
        self._redis_errors.labels(where).inc()

    def match(self, event: str) -> None:
        self._matches.labels(event).inc()

    def text(self) -> bytes:
        """Every metric in Prometheus's text format."""
        return bytes(generate_latest(self.registry))


class _Counts(Collector):
    """A counter by labels, kept as plain numbers (see the module docstring): `inc`
    counts one for a tuple of label values; /metrics reads them as the client library's
    Counter would show them (`<name>_total` and `<name>_created` of each label set)."""

    def __init__(self, name: str, documentation: str, labels: Sequence[str]) -> None:
        self.name, self.documentation, self.labels = name, documentation, list(labels)
        self.counts: dict[tuple[str, ...], int] = {}
        self._created: dict[tuple[str, ...], float] = {}

    def inc(self, values: tuple[str, ...]) -> None:
        counts = self.counts
        if values in counts:
            counts[values] += 1
        else:
            counts[values] = 1
            self._created[values] = time.time()

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labels)
        for values, count in list(self.counts.items()):
            family.add_metric(list(values), count, created=self._created[values])
        yield family


class _Observed(Collector):
    """A histogram kept as plain numbers (see the module docstring): `observe` adds a
    value to its bucket's count and the sum; /metrics reads them as the client library's
    Histogram would show them (cumulative `_bucket`s up to +Inf, `_count`, `_sum`,
    `_created`), with `labels` on each."""

    def __init__(
        self, name: str, documentation: str, buckets: Sequence[float],
        labels: dict[str, str] | None = None,
    ) -> None:
        self.name, self.documentation = name, documentation
        self.bounds = tuple(buckets)
        self.labels = labels or {}
        self.counts = [0] * (len(self.bounds) + 1)  # the last: above every bound
        self.sum = 0.0
        self._created = time.time()

    def observe(self, value: float) -> None:
        # (a bucket's bound is inclusive: `le`)
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value

    def family(self) -> HistogramMetricFamily:
        names, values = list(self.labels), list(self.labels.values())
        family = HistogramMetricFamily(self.name, self.documentation, labels=names)
        cumulative, total = [], 0
        for bound, count in zip((*self.bounds, float("inf")), self.counts, strict=True):
            total += count
            cumulative.append(("+Inf" if bound == float("inf") else repr(float(bound)), total))
        family.add_metric(values, cumulative, self.sum)
        family.add_sample(f"{self.name}_created", dict(self.labels), self._created)
        return family

    def collect(self) -> Iterator[Metric]:
        yield self.family()


class _Families(Collector):
    """Histograms of one name, one per label set (`_Observed`s, by a label's value),
    shown as one family (its help and type even before the first)."""

    def __init__(self, name: str, documentation: str, label: str, by: dict[str, _Observed]) -> None:
        self.name, self.documentation, self.label, self._by = name, documentation, label, by

    def collect(self) -> Iterator[Metric]:
        merged = HistogramMetricFamily(self.name, self.documentation, labels=[self.label])
        for observed in list(self._by.values()):
            merged.samples.extend(observed.family().samples)
        yield merged


class _Receipts(Collector):
    """`daedalus_receipts` and `daedalus_receipt_signatures`: how many receipts the
    hub's key signed, and with how many signatures (a busy server signs those of a turn
    of its loop together: server/keys.py Batch). Read from the hub when asked for."""

    def __init__(self, hub: Hub) -> None:
        self._hub = hub

    def collect(self) -> Iterator[Metric]:
        batch = self._hub.receipts
        yield CounterMetricFamily(
            "daedalus_receipts", "Receipts signed (a round ended, a match started or ended, "
            "a match created) by this process.", value=batch.receipts if batch else 0,
        )
        yield CounterMetricFamily(
            "daedalus_receipt_signatures", "Signatures those receipts took (the receipts of "
            "one turn of the event loop share one).", value=batch.signatures if batch else 0,
        )


class _Workers(Collector):
    """`daedalus_worker` and, in a worker, the hand-off counters (read when asked for)."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        index, workers = self._metrics.worker
        info = GaugeMetricFamily(
            "daedalus_worker", "Always 1: which worker of `daedalus serve --workers N` this "
            "process is, and N (0 and 1 without --workers).", labels=["worker", "workers"],
        )
        info.add_metric([str(index), str(workers)], 1)
        yield info
        handoff = self._metrics._handoff
        if handoff is not None:
            yield CounterMetricFamily(
                "daedalus_connections_handed", "Connections this worker accepted and handed "
                "to the worker owning their match (or, for /metrics?worker=k, to worker k).",
                value=handoff.handed,
            )
            yield CounterMetricFamily(
                "daedalus_connections_adopted", "Connections another worker accepted and "
                "handed to this one.", value=handoff.adopted,
            )
