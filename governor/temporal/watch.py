"""Keeping an agent call honest while it runs: heartbeats, the watchdog, cancellation.

Rules (SPEC §11.11, §12.11):
    * A call heartbeats while its agent works, so Temporal finds a lost worker by the
      heartbeat timeout, and so it learns of a cancellation (an operator's ``cancel`` or
      ``work abandon``, a worker shutting down).
    * The worker checks it can reach the server (``Contact``: one cheap request a
      second for the whole process). A call whose worker has not reached the server for
      half its heartbeat timeout kills its agent: by then the server may start the run
      elsewhere, and two agents must never work one item.
    * Cancelled, or cut off, the call keeps killing its agent's group until the run's
      thread ends (a spawn racing the kill is killed at the next beat).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Final, TypeVar

from temporalio import activity
from temporalio.api.workflowservice.v1 import GetSystemInfoRequest
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

T = TypeVar("T")
PING_S: Final = 1.0
"""How often a worker checks that it reaches the server."""
BEATS_PER_TIMEOUT: Final = 5
"""Heartbeats per heartbeat timeout (the SDK throttles what it sends)."""


class Contact:
    """When this worker last reached its Temporal server (one check a second)."""

    def __init__(self, client: Client, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.client, self.clock = client, clock
        self.last_ok = clock()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._ping(), name="contact")

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def lost_for_s(self) -> float:
        """Seconds since the server last answered."""
        return self.clock() - self.last_ok

    async def _ping(self) -> None:
        while True:
            try:
                await self.client.workflow_service.get_system_info(
                    GetSystemInfoRequest(), timeout=timedelta(seconds=2 * PING_S)
                )
                self.last_ok = self.clock()
            except Exception:  # noqa: S110 - unreachable is what is measured: no answer, no update
                pass
            await asyncio.sleep(PING_S)


async def supervise(
    running: asyncio.Future[T],
    kill: Callable[[str], None],
    contact: Contact,
) -> T:
    """Await a call's run (a thread), heartbeating; kill its agent when cancelled or cut off.

    Raises:
        ApplicationError: the worker lost the server; the agent was killed.
        asyncio.CancelledError: the call was cancelled; the agent was killed.
    """
    timeout = activity.info().heartbeat_timeout or timedelta(seconds=30)
    beat_s = timeout.total_seconds() / BEATS_PER_TIMEOUT
    cut_off_s = timeout.total_seconds() / 2
    try:
        while True:
            done, _ = await asyncio.wait({running}, timeout=beat_s)
            if done:
                return running.result()
            activity.heartbeat()
            if contact.lost_for_s() > cut_off_s:
                why = f"this worker has not reached the Temporal server for {contact.lost_for_s():.0f}s"
                await _killed(running, kill, why, beat_s)
                raise ApplicationError(f"{why}; its agent was killed", non_retryable=True)
    except asyncio.CancelledError:
        await _killed(running, kill, "the call was cancelled", beat_s)
        raise


async def _killed(
    running: asyncio.Future[T], kill: Callable[[str], None], why: str, beat_s: float
) -> None:
    """Kill the call's agent until its run ends."""
    while not running.done():
        kill(why)
        await asyncio.wait({running}, timeout=min(beat_s, 1.0))
