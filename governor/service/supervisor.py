"""``serve``: the service's top process — its workers, its signals and its metrics.

Rules (SPEC §8):
    * ``workers == 1`` runs the worker in this process; more start that many worker
      processes (real parallelism), each with its own store connection, in its own
      process group so a terminal's Ctrl-C reaches only the supervisor, which forwards
      one SIGTERM to each.
    * First SIGTERM or SIGINT: stop taking goals, let every worker finish the step in
      hand and release its lease, then exit 0. A second signal exits at once and
      SIGKILLs the worker processes (their agents die with them; the leases expire
      after their TTL and are taken over; nothing is lost). No signal handler acts in
      place: a relay thread does (``governor.service.signals``), and logs each signal
      (``stop.requested``).
    * A worker process that dies is replaced after ``RESTART_DELAY_S``; its registry
      row goes, its goals are taken over once their leases expire.
    * A worker left without its supervisor stops gracefully at its next heartbeat.
    * Metrics: every worker's counters and histograms (reported at each heartbeat) are
      summed, the goals by status come from the store; the exposition is written every
      ``metrics_interval_s`` and once more at the end (``governor.service.metrics``, the
      ``metrics`` extra, loaded only when metrics are asked for). The endpoint's
      ``/readyz`` says whether the last refresh read the store and a worker is alive.
    * Logs: records of the logger ``governor.service``, routed by ``--log-config`` when
      given, else written as JSON Lines to stderr or ``--log-file`` by every process
      (``governor.service.logs``).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from contextlib import closing, suppress
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from typing import Final

from governor.clock import utc_now
from governor.drive.lease import holder_id
from governor.drive.pools import zone
from governor.drive.runner import HarnessFactory
from governor.drive.spans import instrument_from
from governor.errors import InputError, UnavailableError
from governor.exec.harness import harness_for
from governor.registry import ServiceError
from governor.service.logs import JsonLog, configure
from governor.service.notify import Notifier
from governor.service.observe import (
    Counters,
    Histograms,
    Observation,
    Snapshot,
    merge,
    merge_histograms,
)
from governor.service.settings import ServiceSettings
from governor.service.signals import Noticed, stop_signals
from governor.service.status import forget_stale_workers
from governor.service.worker import Worker
from governor.store.base import EventStore
from governor.store.url import open_store

RESTART_DELAY_S: Final = 1.0
"""How long a dead worker process's slot stays empty before a new one starts."""
SUPERVISE_S: Final = 0.2
"""How often the supervisor looks at its worker processes."""

Report = tuple[str, Snapshot, Histograms]
"""A worker's id, its counters and its histograms, sent at each heartbeat."""


def noticed_in(log: JsonLog) -> Noticed:
    """A ``stop.requested`` log line for each stop signal (``at_once`` for the second)."""

    def noticed(sig: signal.Signals, at_once: bool) -> None:
        log.write("stop.requested", utc_now(), signal=sig.name, at_once=at_once)

    return noticed


class Publisher:
    """Refreshes the metrics (file and endpoint) from a background thread."""

    def __init__(self, store: EventStore, settings: ServiceSettings, log: JsonLog) -> None:
        self.store, self.settings, self.log = store, settings, log
        self.reports: dict[str, tuple[Snapshot, Histograms]] = {}
        self.local: list[Counters] = []
        self.workers: Callable[[], int] = lambda: 1
        self.queues: dict[int, Queue[Report]] = {}
        """Each worker slot's own report queue (see ``_serve_processes``)."""
        self.wanted = settings.metrics_file is not None or settings.metrics_port is not None
        self._unready: str | None = "starting"
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="metrics")
        if not self.wanted:
            return
        try:
            from governor.service import metrics  # noqa: PLC0415 - the metrics extra, when asked for
        except ImportError as exc:
            raise UnavailableError(
                "--metrics-file and --metrics-port need the metrics extra: "
                "pip install 'governor[metrics]'",
                what="the metrics extra",
            ) from exc
        self._metrics = metrics
        self._collector = metrics.SnapshotCollector()
        self._registry = metrics.registry_of(self._collector)
        self._server = (
            metrics.MetricsServer(settings.metrics_host, settings.metrics_port)
            if settings.metrics_port is not None
            else None
        )
        if self._server is not None:
            self._server.exposition = lambda accept: metrics.exposition(self._registry, accept)
            self._server.unready = lambda: self._unready

    @property
    def port(self) -> int | None:
        return self._server.port if self.wanted and self._server else None

    def start(self) -> None:
        if not self.wanted:
            return
        if self._server is not None:
            url = f"http://{self.settings.metrics_host}:{self._server.port}/"
            self.log.write("metrics.serving", utc_now(), url=url)
        self.publish()
        self._thread.start()

    def _loop(self) -> None:
        while not self._done.wait(self.settings.metrics_interval_s):
            self.publish()

    def drain(self) -> None:
        """Take in every report the worker processes sent."""
        for queue in list(self.queues.values()):
            while True:
                try:
                    worker, snapshot, histograms = queue.get_nowait()
                except Exception:  # queue.Empty, or a queue closed under us
                    break
                self.reports[worker] = (snapshot, histograms)

    def publish(self) -> None:
        """Refresh the metrics now and write them out."""
        self.drain()
        reports = [*self.reports.values(), *((c.snapshot(), c.histograms()) for c in self.local)]
        counters = merge([counted for counted, _ in reports])
        histograms = merge_histograms([observed for _, observed in reports])
        try:
            goals, soonest = self.store.goal_counts(), self.store.soonest_wakeup()
            upstreams = tuple(self.store.upstreams())
            pools = self._metrics.pool_gauges(self.store.pool_states(), zone, utc_now())
        except Exception as exc:
            self._unready = f"the store could not be read ({type(exc).__name__})"
            self.log.write("metrics.error", utc_now(), error=f"{type(exc).__name__}: {exc}")
            return
        workers = self.workers()
        self._unready = None if workers else "no worker process is alive"
        snapshot = self._metrics.MetricsSnapshot(
            counters, goals, workers, soonest, upstreams, histograms, pools
        )
        self._collector.update(snapshot)
        if self.settings.metrics_file is not None:
            text = self._metrics.text_of(self._registry)
            self._metrics.write_text_atomically(self.settings.metrics_file, text)

    def close(self) -> None:
        self._unready = "stopping"
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()
        if self.wanted:
            self.publish()
            self._unready = "stopping"
            if self._server is not None:
                self._server.close()


def serve(settings: ServiceSettings, *, harnesses: HarnessFactory = harness_for) -> int:
    """Run the service until a stop signal; returns the exit code (0 after a graceful stop).

    Raises:
        InputError: for settings that cannot work (no worker, ``memory:`` across processes).
        StoreError: when the store cannot be opened.
    """
    if settings.workers < 1:
        raise InputError("--workers must be at least 1")
    if settings.workers > 1 and settings.store_url == "memory:":
        raise InputError("a memory: store lives in one process; use --workers 1 with it")
    stopping = threading.Event()
    if settings.log_config is not None:
        configure(settings.log_config)
    log = JsonLog(settings.log_file, settings.env, worker=f"supervisor:{os.getpid()}")
    with closing(open_store(settings.store_url)) as store:
        forget_stale_workers(store, utc_now())
        try:
            publisher = Publisher(store, settings, log)
        except BaseException:
            log.close()
            raise
        # the service's own start and stop, besides each worker's (issue 35)
        log.write("service.started", utc_now(), workers=settings.workers, store=_shown(settings))
        notifier = _notifier(settings, log)
        try:
            if settings.workers == 1:
                return _serve_here(settings, stopping, publisher, harnesses)
            return _serve_processes(settings, stopping, publisher, log, store)
        finally:
            if notifier is not None:
                notifier.close()
            publisher.close()
            log.write("service.stopped", utc_now(), workers=settings.workers)
            log.close()


def _shown(settings: ServiceSettings) -> str:
    """The store as a log line names it (its password masked by the log itself)."""
    return settings.store_url or ".governor/governor.db"


def _notifier(settings: ServiceSettings, log: JsonLog) -> Notifier | None:
    """The notifier (started), when ``settings.notify`` names a receiver."""
    if not settings.notify.wanted:
        return None
    notifier = Notifier(
        lambda: open_store(settings.store_url),
        settings.notify,
        log,
        workdir=settings.workdir,
        env=settings.env,
    )
    notifier.start()
    return notifier


def _serve_here(
    settings: ServiceSettings,
    stopping: threading.Event,
    publisher: Publisher,
    harnesses: HarnessFactory,
) -> int:
    counters = Counters()
    publisher.local.append(counters)
    log = JsonLog(settings.log_file, settings.env, worker=holder_id())
    with (
        closing(open_store(settings.store_url)) as store,
        stop_signals(stopping, at_once=log.close, noticed=noticed_in(log)),
    ):
        publisher.start()
        observation = Observation(log, counters)
        Worker(store, settings, observation, stopping=stopping, harnesses=harnesses).run()
    log.close()
    return 0


def worker_process(settings: ServiceSettings, index: int, reports: Queue[Report]) -> None:
    """The body of one worker process (started by ``serve`` with the spawn method)."""
    os.setpgrp()  # a terminal's Ctrl-C goes to the supervisor, which forwards one SIGTERM
    instrument_from(settings.env)  # a spawned process starts without the parent's spans
    if settings.log_config is not None:  # nor its logging configuration
        configure(settings.log_config)
    parent = os.getppid()
    stopping = threading.Event()
    counters = Counters()
    log = JsonLog(settings.log_file, settings.env, worker=holder_id())

    def on_beat() -> None:
        reports.put((holder_id(), counters.snapshot(), counters.histograms()))
        if os.getppid() != parent and not stopping.is_set():
            log.write("worker.orphaned", utc_now(), detail="the supervisor is gone; stopping")
            stopping.set()

    with (
        stop_signals(stopping, at_once=lambda: None, noticed=noticed_in(log)),
        closing(open_store(settings.store_url)) as store,
    ):
        worker = Worker(
            store,
            settings,
            Observation(log, counters),
            stopping=stopping,
            index=index,
            on_beat=on_beat,
        )
        worker.run()
    if os.getppid() != parent:  # nobody reads the reports any more: never wait on the pipe
        reports.cancel_join_thread()
    reports.close()
    reports.join_thread()  # the last report reaches the supervisor before the process ends
    log.close()


def _serve_processes(
    settings: ServiceSettings,
    stopping: threading.Event,
    publisher: Publisher,
    log: JsonLog,
    store: EventStore,
) -> int:
    context = multiprocessing.get_context("spawn")
    slots: dict[int, BaseProcess] = {}
    restart_at: dict[int, float] = {}

    def start(index: int) -> None:
        # A queue per worker: a queue's writers share one lock across processes, and a
        # worker SIGKILLed while holding it would leave every other worker's last report,
        # and so its exit, waiting on it for ever.
        reports: Queue[Report] = context.Queue()
        process = context.Process(
            target=worker_process, args=(settings, index, reports), name=f"governor-worker-{index}"
        )
        process.start()
        publisher.drain()  # the last report of the worker this one replaces, then its queue goes
        publisher.queues[index] = reports
        slots[index] = process

    def at_once() -> None:  # on the signal relay's thread, while the main one may start one
        # SIGKILL, not a second SIGTERM: one sent just after _stop_all's, still pending,
        # would merge with it and leave the worker finishing its step. Its agents die
        # with it (SPEC §11.11); its leases expire and are taken over.
        for process in list(slots.values()):
            if process.pid is not None and process.is_alive():
                with suppress(ProcessLookupError):  # it ended meanwhile: on to the next
                    os.kill(process.pid, signal.SIGKILL)

    publisher.workers = lambda: sum(p.is_alive() for p in slots.values())
    with stop_signals(stopping, at_once=at_once, noticed=noticed_in(log)):
        for index in range(settings.workers):
            start(index)
        publisher.start()
        while not stopping.wait(SUPERVISE_S):
            publisher.drain()  # a worker's reports never fill its pipe, even without metrics
            _replace_dead(slots, restart_at, start, log, store)
        _stop_all(slots, publisher)
    return 0


def _replace_dead(
    slots: dict[int, BaseProcess],
    restart_at: dict[int, float],
    start: Callable[[int], None],
    log: JsonLog,
    store: EventStore,
) -> None:
    """Notice worker processes that died; start a new one in each slot after a delay."""
    now = time.monotonic()
    for index, process in list(slots.items()):
        if process.is_alive():
            continue
        if index not in restart_at:
            dead = f"{socket.gethostname()}:{process.pid}"
            text = f"worker process {dead} died (exit code {process.exitcode}); replacing it"
            log.write("worker.died", utc_now(), dead=dead, exit_code=process.exitcode)
            try:
                store.remove_worker(dead)
                store.add_service_error(ServiceError(utc_now(), dead, None, text))
            except Exception as exc:
                log.write("registry.error", utc_now(), error=f"{type(exc).__name__}: {exc}")
            restart_at[index] = now + RESTART_DELAY_S
        elif restart_at[index] <= now:
            del restart_at[index]
            start(index)


def _stop_all(slots: dict[int, BaseProcess], publisher: Publisher) -> None:
    """Ask every worker to stop after its current step, and wait for them."""
    for process in slots.values():
        if process.pid is not None and process.is_alive():
            os.kill(process.pid, signal.SIGTERM)
    for process in slots.values():
        while process.is_alive():
            publisher.drain()  # a worker's last report must not fill the pipe and block it
            process.join(SUPERVISE_S)
    publisher.drain()
