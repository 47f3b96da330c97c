"""Goals whose Temporal workflow is gone (terminated, reset, lost): noticed, their lease let go.

Rules (SPEC §13.9):
    * A goal's workflow renews its lease while it runs. One terminated, reset or lost
      outside governor leaves the lease held by ``temporal:<namespace>@<address>`` until
      its TTL, and nothing drives the goal. ``gone`` says why a goal's workflow is not
      running (its close status, or that there is none); ``governor status`` and
      ``list`` show it.
    * Every worker process checks, every ``check_s``, the goals whose lease its server's
      holder holds: a workflow that is closed, or missing while its lease has expired (a
      missing one with a live lease may be a ``governor temporal start`` between its
      lease and its workflow), has its lease released — fenced on the token read before
      Temporal was asked, so a ``start`` that took a fresh lease meanwhile keeps it.
      ``governor temporal start`` then picks the goal up again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor
from datetime import timedelta
from functools import partial
from typing import Final

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from governor.clock import utc_now
from governor.store.base import EventStore, Lease
from governor.temporal.names import Driver, workflow_id_of

DESCRIBE_TIMEOUT: Final = timedelta(seconds=10)
MISSING: Final = "there is none"


async def gone(client: Client, workflow_id: str) -> str | None:
    """Why the goal's workflow is not running (``terminated``, ``there is none``…), or None."""
    try:
        described = await client.get_workflow_handle(workflow_id).describe(
            rpc_timeout=DESCRIBE_TIMEOUT
        )
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return MISSING
        raise
    status = described.status
    if status == WorkflowExecutionStatus.RUNNING:
        return None
    return status.name.lower().replace("_", " ") if status is not None else "closed"


async def failure(client: Client, workflow_id: str) -> str | None:
    """The message a failed workflow ended with (its history's last event), or None."""
    handle = client.get_workflow_handle(workflow_id)
    message = None
    async for event in handle.fetch_history_events():
        if event.HasField("workflow_execution_failed_event_attributes"):
            message = event.workflow_execution_failed_event_attributes.failure.message
    return message


def held_leases(store: EventStore, driver: Driver) -> list[tuple[Lease, str]]:
    """The leases ``driver``'s holder holds (one per goal it drives, or drove), each with
    its goal's workflow id."""
    leases = (store.current_lease(row.goal_id) for row in store.goals())
    return [
        (lease, workflow_id_of(store, lease.goal_id))
        for lease in leases
        if lease is not None and lease.holder == driver.holder
    ]


async def release_gone(
    client: Client,
    driver: Driver,
    pool: Executor,
    store: Callable[[], EventStore],
) -> list[tuple[str, str]]:
    """Release the leases of goals whose workflow is gone (the module rules); (goal, why).
    The store is read on ``pool``'s threads (``store`` gives the thread's own)."""
    loop = asyncio.get_running_loop()
    released = []
    leases = await loop.run_in_executor(pool, lambda: held_leases(store(), driver))
    for lease, workflow in leases:
        why = await gone(client, workflow)
        if why is None or (why == MISSING and not lease.is_expired(utc_now())):
            continue
        if await loop.run_in_executor(pool, partial(_release_same, store, lease)):
            released.append((lease.goal_id, why))
    return released


def _release_same(store: Callable[[], EventStore], lease: Lease) -> bool:
    current = store().current_lease(lease.goal_id)
    if current is None or (current.holder, current.token) != (lease.holder, lease.token):
        return False
    store().release_lease(lease)
    return True
