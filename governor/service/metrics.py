"""The service's metrics in Prometheus text format: rendered, written atomically, served.

Rules:
    * ``render`` is pure: a snapshot in, the exposition text out.
    * The file is replaced atomically (a temporary file in the same folder, then
      ``os.replace``), so a scraper never reads half of it.
    * The endpoint serves at most ``MAX_CONNECTIONS`` connections at once, each closed
      after ``IDLE_TIMEOUT_S`` of silence: idle or hostile clients cannot pile up threads.
    * Goals by status come from the store (what every worker shares); counters come
      from the workers of this ``governor serve`` (each process counts what it did).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final, get_args

from governor.core.decision import Status
from governor.core.upstream import UpstreamHealth
from governor.service.observe import COUNTERS, Labels, Snapshot
from governor.store.files import write_atomically

STATUSES: Final[tuple[str, ...]] = get_args(Status)
CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"


@dataclass(frozen=True, slots=True)
class MetricsSnapshot:
    """Everything one rendering of the metrics shows."""

    counters: Snapshot
    goals: dict[str, int]
    workers: int
    soonest_wakeup: datetime | None
    upstreams: tuple[UpstreamHealth, ...] = ()


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _sample(name: str, labels: Labels, value: float) -> str:
    inside = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
    number = int(value) if float(value).is_integer() else value
    return f"{name}{{{inside}}} {number}" if inside else f"{name} {number}"


def _family(name: str, kind: str, help_text: str, samples: list[str]) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", *samples]


def render(snapshot: MetricsSnapshot) -> str:
    """The Prometheus text exposition of a snapshot."""
    goals = {**dict.fromkeys(STATUSES, 0), **snapshot.goals}
    lines = _family(
        "governor_goals",
        "gauge",
        "Goals in the store, by status.",
        [_sample("governor_goals", (("status", s),), n) for s, n in sorted(goals.items())],
    )
    lines += _family(
        "governor_workers", "gauge", "Worker processes of this service.",
        [_sample("governor_workers", (), snapshot.workers)],
    )  # fmt: skip
    wakeup = snapshot.soonest_wakeup.timestamp() if snapshot.soonest_wakeup else 0
    lines += _family(
        "governor_soonest_wakeup_timestamp_seconds", "gauge",
        "When the earliest waiting goal may go on (Unix time; 0: no goal waits).",
        [_sample("governor_soonest_wakeup_timestamp_seconds", (), wakeup)],
    )  # fmt: skip
    lines += _upstreams(snapshot.upstreams)
    for name, help_text in COUNTERS.items():
        family = snapshot.counters.get(name, {})
        samples = [_sample(name, labels, v) for labels, v in sorted(family.items())]
        lines += _family(name, "counter", help_text, samples or [_sample(name, (), 0)])
    return "\n".join(lines) + "\n"


UPSTREAM_GAUGES: Final = (
    ("governor_upstream_healthy", "1 when the upstream answers, 0 while it is failing."),
    ("governor_upstream_failing_since_timestamp_seconds",
     "When the upstream's current outage began (Unix time; 0 while healthy)."),
    ("governor_upstream_next_probe_timestamp_seconds",
     "When the failing upstream is probed next (Unix time; 0 while healthy)."),
    ("governor_upstream_parked_goals", "Goals waiting parked on the upstream."),
)  # fmt: skip
"""One gauge family per fact of each upstream's health record (SPEC §11.10)."""


def _upstreams(records: tuple[UpstreamHealth, ...]) -> list[str]:
    def seconds(when: datetime | None) -> float:
        return when.timestamp() if when else 0

    values: dict[str, Callable[[UpstreamHealth], float]] = {
        "governor_upstream_healthy": lambda r: int(r.healthy),
        "governor_upstream_failing_since_timestamp_seconds": lambda r: seconds(r.failing_since),
        "governor_upstream_next_probe_timestamp_seconds": lambda r: seconds(r.probe_due_at),
        "governor_upstream_parked_goals": lambda r: r.parked or 0,
    }
    lines: list[str] = []
    for name, help_text in UPSTREAM_GAUGES:
        samples = [_sample(name, (("upstream", r.upstream),), values[name](r)) for r in records]
        lines += _family(name, "gauge", help_text, samples)
    return lines


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


class MetricsServer:
    """``GET /metrics`` over HTTP, serving the latest text it was given."""

    def __init__(self, host: str, port: int) -> None:
        self.text = render(MetricsSnapshot({}, {}, 0, None))
        owner = self

        class Handler(BaseHTTPRequestHandler):
            timeout = IDLE_TIMEOUT_S

            def do_GET(self) -> None:
                body = owner.text.encode()
                found = self.path.split("?")[0] in ("/metrics", "/")
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", CONTENT_TYPE)
                self.send_header("Content-Length", str(len(body) if found else 0))
                self.end_headers()
                if found:
                    self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                """Requests are not logged (scrapers call every few seconds)."""

        self._server = _BoundedServer((host, port), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True, name="metrics").start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
