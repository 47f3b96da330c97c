"""``governor temporal worker``: a process that hosts goal workflows and their activities.

Rules (SPEC §12.11; docs/deployment.md "Many machines: Temporal"):
    * One process runs two Temporal workers on one connection: the goal workflow and
      the store activities on the task queue, the agent calls on its ``-agents`` twin
      with at most ``max_concurrent_calls`` at once. Many processes on many machines share
      the queues and one governor store (PostgreSQL across machines).
    * The workflow sandbox passes ``governor`` through (on this worker and on every
      ``Replayer``): the workflow code is the pure core, which
      ``tests/test_core_purity.py`` keeps free of I/O, clocks and randomness.
    * SIGTERM or SIGINT stops taking work and lets the calls in hand finish for
      ``graceful_s`` (then they are cancelled: their agents die, and the workflow
      continues those runs elsewhere); a second signal stops at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from governor.clock import utc_now
from governor.errors import UnavailableError
from governor.temporal.activities import Activities, WorkerConfig, activities_of
from governor.temporal.client import connect, ensure_search_attributes
from governor.temporal.names import agents_queue, gone_line
from governor.temporal.reconcile import release_gone
from governor.temporal.watch import Contact
from governor.temporal.workflow import GoalWorkflow

RESTRICTIONS: Final = SandboxRestrictions.default.with_passthrough_modules("governor")
"""The sandbox of the goal workflow: ``governor`` passes through (see the module rules)."""
STORE_THREADS: Final = 16
"""Store activities (short) one process runs at once."""


def workflow_runner() -> SandboxedWorkflowRunner:
    """The workflow runner every worker and every replayer uses."""
    return SandboxedWorkflowRunner(restrictions=RESTRICTIONS)


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    config: WorkerConfig
    task_queue: str
    max_concurrent_calls: int = 8
    graceful_s: float = 600.0
    check_s: float = 60.0
    """How often the process looks for goals whose workflow is gone (``reconcile``)."""
    metrics: str | None = None
    """``HOST:PORT`` where the Temporal SDK's Prometheus metrics are served (none: off)."""


async def serve(settings: WorkerSettings, stopping: asyncio.Event | None = None) -> None:
    """Run the workers until ``stopping`` is set (or a stop signal arrives)."""
    config = settings.config
    client = await connect(config.driver, runtime=metrics_runtime(settings.metrics))
    await ensure_search_attributes(client, config.driver)
    stopping = stopping or _on_signals()
    contact = Contact(client)
    contact.start()
    hosted = Activities(config, client, contact, max_calls=settings.max_concurrent_calls)
    store_activities, calls = activities_of(hosted)
    graceful = timedelta(seconds=settings.graceful_s)
    hosted.log.write(
        "worker.started",
        utc_now(),
        address=config.driver.address,
        namespace=config.driver.namespace,
        task_queue=settings.task_queue,
    )
    with ThreadPoolExecutor(STORE_THREADS, thread_name_prefix="store") as pool:
        main = Worker(
            client,
            task_queue=settings.task_queue,
            workflows=[GoalWorkflow],
            activities=store_activities,
            activity_executor=pool,
            workflow_runner=workflow_runner(),
            max_concurrent_activities=STORE_THREADS,
            graceful_shutdown_timeout=graceful,
        )
        agents = Worker(
            client,
            task_queue=agents_queue(settings.task_queue),
            activities=calls,
            max_concurrent_activities=settings.max_concurrent_calls,
            graceful_shutdown_timeout=graceful,
        )
        checking = asyncio.ensure_future(keep_checking(hosted, settings.check_s, stopping))
        try:
            async with main, agents:
                await stopping.wait()
        finally:
            checking.cancel()
            contact.stop()
            hosted.calls.shutdown(wait=False, cancel_futures=True)
            hosted.probes.shutdown(wait=False, cancel_futures=True)
            hosted.log.write("worker.stopped", utc_now())
            hosted.log.close()


def metrics_runtime(bind: str | None) -> Runtime | None:
    """A Temporal runtime serving the SDK's metrics (workflow and activity task latencies,
    polls, slots, sticky cache, request failures) in Prometheus's text format at
    ``http://BIND/metrics``; None when ``bind`` is None (the SDK's default runtime).

    Raises:
        UnavailableError: the endpoint cannot listen there (a port in use).
    """
    if bind is None:
        return None
    try:
        return Runtime(telemetry=TelemetryConfig(metrics=PrometheusConfig(bind_address=bind)))
    except Exception as exc:  # the SDK's core reports a bind failure as a plain exception
        raise UnavailableError(
            f"the metrics endpoint cannot listen on {bind}: {exc}", what=f"metrics on {bind}"
        ) from None


async def keep_checking(hosted: Activities, check_s: float, stopping: asyncio.Event) -> None:
    """Release the leases of goals whose workflow is gone, every ``check_s`` (``reconcile``)."""
    driver = hosted.config.driver
    while not stopping.is_set():
        try:
            released = await release_gone(hosted.client, driver, hosted.probes, hosted.store)
            for goal_id, why in released:
                hosted.log.write(
                    "lease.released", utc_now(), goal=goal_id, why=gone_line(goal_id, why)
                )
        except Exception as exc:  # the next check tries again
            hosted.log.write("check.failed", utc_now(), error=str(exc)[:300])
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), check_s)


def _on_signals() -> asyncio.Event:
    """An event set by the first SIGTERM or SIGINT; the second ends the process at once."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()

    def stop() -> None:
        if stopping.is_set():
            os._exit(130)  # the second signal: now (the guard kills the agents)
        stopping.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop)
    return stopping
