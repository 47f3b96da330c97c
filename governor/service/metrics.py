"""The service's metrics through ``prometheus_client``: collected, written, served with health.

Rules (issue 27; ``docs/deployment.md``):
    * A custom collector (``SnapshotCollector``) turns the latest ``MetricsSnapshot`` —
      the workers' counters and histograms summed, the goals by status and each
      upstream's health from the store — into metric families, beside
      ``governor_build_info`` and the process metrics of ``serve``'s own process. The
      exposition is ``prometheus_client``'s: the Prometheus text format, or OpenMetrics
      when a scraper asks for it (``Accept``).
    * The file is replaced atomically (a temporary file in the same folder, then
      ``os.replace``), so a scraper never reads half of it.
    * The endpoint serves ``/metrics``, ``/healthz`` (the process answers) and ``/readyz``
      (the store was read at the last refresh and a worker is alive; 503 with the reason
      otherwise) on one port, at most ``MAX_CONNECTIONS`` connections at once, each
      closed after ``IDLE_TIMEOUT_S`` of silence: idle or hostile clients cannot pile up
      threads.
    * Upstreams are labelled by their public names (``upstream_label``), never by an
      absolute path.
    * Imported only when metrics are asked for: ``prometheus_client`` is the ``metrics``
      extra.
"""

from __future__ import annotations

import platform
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final, get_args

from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.exposition import choose_encoder, generate_latest

from governor._version import __version__
from governor.core.decision import Status
from governor.core.outage_text import shown_name
from governor.core.pools import UNITS, PoolState, spent_now
from governor.core.upstream import UpstreamHealth
from governor.service.observe import COUNTERS, HISTOGRAMS, Histograms, Snapshot
from governor.store.files import write_atomically

STATUSES: Final[tuple[str, ...]] = get_args(Status)


@dataclass(frozen=True, slots=True)
class MetricsSnapshot:
    """Everything one rendering of the metrics shows."""

    counters: Snapshot
    goals: dict[str, int]
    workers: int
    soonest_wakeup: datetime | None
    upstreams: tuple[UpstreamHealth, ...] = ()
    histograms: Histograms = field(default_factory=dict)
    pools: tuple[PoolGauge, ...] = ()


@dataclass(frozen=True, slots=True)
class PoolGauge:
    """One pool as the metrics show it (SPEC §13.6): per unit, its spend in the current
    period, its limit (grants still open included) and its reservations in flight; and the
    grants made on it, by whom."""

    pool: str
    spent: dict[str, float]
    limit: dict[str, float]
    reserved: dict[str, float]
    grants: dict[str, int]


def pool_gauges(
    states: Iterable[PoolState], zone_of: Callable[[str], Any], now: datetime
) -> tuple[PoolGauge, ...]:
    """The gauges of every pool not deleted (pool names are an operator's few: the labels
    stay bounded)."""
    gauges = []
    for state in states:
        limits = state.limits
        if limits is None or state.deleted:
            continue
        zone = zone_of(limits.tz)
        capped = [u for u in UNITS if limits.limit(u) is not None]
        gauges.append(
            PoolGauge(
                state.name,
                {u: v for u, v in spent_now(state, zone, now).items() if u in capped},
                {u: (limits.limit(u) or 0.0) + state.granted(u, now) for u in capped},
                {u: state.reserved(u) for u in capped},
                dict(state.grants_by),
            )
        )
    return tuple(gauges)


def upstream_label(record: UpstreamHealth) -> str:
    """An upstream's label: its name as the web view and ``governor upstreams`` show it
    (SPEC §12.9: an absolute path is never a label, only its last part and a digest)."""
    return shown_name(record.upstream)


UPSTREAM_GAUGES: Final[tuple[tuple[str, str, Callable[[UpstreamHealth], float]], ...]] = (
    ("governor_upstream_healthy", "1 when the upstream answers, 0 while it is failing.",
     lambda r: int(r.healthy)),
    ("governor_upstream_failing_since_timestamp_seconds",
     "When the upstream's current outage began (Unix time; 0 while healthy).",
     lambda r: r.failing_since.timestamp() if r.failing_since else 0),
    ("governor_upstream_next_probe_timestamp_seconds",
     "When the failing upstream is probed next (Unix time; 0 while healthy).",
     lambda r: r.probe_due_at.timestamp() if r.probe_due_at else 0),
    ("governor_upstream_parked_goals", "Goals waiting parked on the upstream.",
     lambda r: r.parked or 0),
)  # fmt: skip
"""One gauge family per fact of each upstream's health record (SPEC §11.10)."""


def families(snapshot: MetricsSnapshot) -> Iterator[Metric]:
    """The metric families of a snapshot (and the build's)."""
    goals = GaugeMetricFamily("governor_goals", "Goals in the store, by status.", labels=["status"])
    for status, n in sorted({**dict.fromkeys(STATUSES, 0), **snapshot.goals}.items()):
        goals.add_metric([status], n)
    yield goals
    yield GaugeMetricFamily(
        "governor_workers", "Worker processes of this service.", value=snapshot.workers
    )
    wakeup = snapshot.soonest_wakeup.timestamp() if snapshot.soonest_wakeup else 0
    yield GaugeMetricFamily(
        "governor_soonest_wakeup_timestamp_seconds",
        "When the earliest waiting goal may go on (Unix time; 0: no goal waits).",
        value=wakeup,
    )
    for name, help_text, value in UPSTREAM_GAUGES:
        gauge = GaugeMetricFamily(name, help_text, labels=["upstream"])
        for record in snapshot.upstreams:
            gauge.add_metric([upstream_label(record)], value(record))
        yield gauge
    yield from _pools(snapshot.pools)
    yield from _counters(snapshot.counters)
    yield from _histograms(snapshot.histograms)
    yield InfoMetricFamily(
        "governor_build",
        "The governor version and the Python running this service.",
        value={"version": __version__, "python": platform.python_version()},
    )


POOL_GAUGES: Final = (
    ("governor_pool_spend", "What the pool spent in its current period, by unit.", "spent"),
    ("governor_pool_limit", "The pool's limit per period (open grants included), by unit.", "limit"),
    ("governor_pool_reserved", "What calls in flight reserved against the pool, by unit.", "reserved"),
)  # fmt: skip


def _pools(pools: tuple[PoolGauge, ...]) -> Iterator[Metric]:
    for name, help_text, attr in POOL_GAUGES:
        gauge = GaugeMetricFamily(name, help_text, labels=["pool", "unit"])
        for pool in pools:
            for unit, value in getattr(pool, attr).items():
                gauge.add_metric([pool.pool, unit], value)
        yield gauge
    grants = CounterMetricFamily(
        "governor_grants_total",
        "Grants of more budget made on pools, by who made them.",
        labels=["by"],
    )
    for by in ("policy", "person"):
        grants.add_metric([by], sum(p.grants.get(by, 0) for p in pools))
    yield grants


def _counters(counters: Snapshot) -> Iterator[Metric]:
    for name, help_text in COUNTERS.items():
        family = counters.get(name, {})
        names = sorted({key for labels in family for key, _ in labels})
        counter = CounterMetricFamily(name, help_text, labels=names)
        for labels, value in sorted(family.items()):
            given = dict(labels)
            counter.add_metric([given.get(n, "") for n in names], value)
        if not family:
            counter.add_metric([], 0)
        yield counter


def _histograms(histograms: Histograms) -> Iterator[Metric]:
    for name, (help_text, bounds) in HISTOGRAMS.items():
        family = histograms.get(name, {})
        names = sorted({key for labels in family for key, _ in labels})
        histogram = HistogramMetricFamily(name, help_text, labels=names)
        for labels, buckets in sorted(family.items()):
            given, running, cumulative = dict(labels), 0.0, []
            for bound, count in zip((*bounds, float("inf")), buckets[:-1], strict=True):
                running += count
                cumulative.append((_bound(bound), running))
            histogram.add_metric([given.get(n, "") for n in names], cumulative, buckets[-1])
        yield histogram


def _bound(bound: float) -> str:
    return "+Inf" if bound == float("inf") else f"{float(bound):g}"


class SnapshotCollector:
    """A ``prometheus_client`` collector of the latest snapshot (``update`` replaces it)."""

    def __init__(self) -> None:
        self._snapshot = MetricsSnapshot({}, {}, 0, None)

    def update(self, snapshot: MetricsSnapshot) -> None:
        self._snapshot = snapshot

    def collect(self) -> Iterator[Metric]:
        return families(self._snapshot)

    def describe(self) -> list[Metric]:
        return []  # registered without a first collection


def registry_of(collector: SnapshotCollector, *, process: bool = True) -> CollectorRegistry:
    """A registry holding the snapshot collector (and, with ``process``, this process's metrics)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    if process:
        ProcessCollector(registry=registry)
    return registry


def text_of(registry: CollectorRegistry) -> str:
    """The registry in the Prometheus text format (the metrics file's)."""
    return generate_latest(registry).decode()


def render(snapshot: MetricsSnapshot) -> str:
    """The Prometheus text exposition of a snapshot (no process metrics: deterministic)."""
    collector = SnapshotCollector()
    collector.update(snapshot)
    return text_of(registry_of(collector, process=False))


def exposition(registry: CollectorRegistry, accept: str) -> tuple[bytes, str]:
    """The registry's exposition in the format ``accept`` asks for: OpenMetrics when it
    names ``application/openmetrics-text``, else the Prometheus text format."""
    encoder, content_type = choose_encoder(accept)
    return encoder(registry), content_type


def write_text_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that a reader sees the old or the new file, whole."""
    with write_atomically(path, durable=False) as handle:
        handle.write(text.encode("utf-8"))


MAX_CONNECTIONS: Final = 16
"""Connections served at once; more are closed at once (a scraper retries)."""
IDLE_TIMEOUT_S: Final = 10.0
"""How long a connection may send nothing before it is closed."""


class _BoundedServer(ThreadingHTTPServer):
    """One thread per connection, at most ``MAX_CONNECTIONS`` of them, none kept idle."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)  # every slot busy: refuse, never queue a thread
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


Exposition = Callable[[str], tuple[bytes, str]]
"""The metrics in the format an ``Accept`` header asks for: the body and its content type."""
Readiness = Callable[[], str | None]
"""Why the service is not ready (None: it is)."""


class MetricsServer:
    """``GET /metrics``, ``/healthz`` and ``/readyz`` over HTTP."""

    def __init__(self, host: str, port: int) -> None:
        self.exposition: Exposition = lambda _accept: (b"", "text/plain; charset=utf-8")
        self.unready: Readiness = lambda: "starting"
        owner = self

        class Handler(BaseHTTPRequestHandler):
            timeout = IDLE_TIMEOUT_S

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                if path in ("/metrics", "/"):
                    body, content_type = owner.exposition(self.headers.get("Accept", ""))
                    self._reply(200, body, content_type)
                elif path == "/healthz":
                    self._reply(200, b"ok\n")
                elif path == "/readyz":
                    why = owner.unready()
                    text = f"not ready: {why}\n" if why else "ready\n"
                    self._reply(503 if why else 200, text.encode())
                else:
                    self._reply(404, b"")

            def _reply(
                self, code: int, body: bytes, content_type: str = "text/plain; charset=utf-8"
            ) -> None:
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                """Requests are not logged (scrapers call every few seconds)."""

        self._server = _BoundedServer((host, port), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True, name="metrics").start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
