"""The registry's records: the workers of ``governor serve``, the errors they met, and the
agent processes runners have running.

Rules:
    * ``governor serve``'s workers write these records (a heartbeat row each, and every
      infrastructure error of a step); ``governor service status`` reads them. The store
      keeps them for every machine to see, without interpreting them, and keeps only the
      ``ERRORS_KEPT`` most recent errors.
    * A runner records every agent process it spawns (``AgentRecord``), so that whoever
      takes the goal's lease over can make sure it is gone (SPEC §11.11, decision
      record 0007).
    * They are never events: nothing here is charged or replayed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

ERRORS_KEPT: Final = 100
"""How many recent service errors the registry keeps (older ones are dropped)."""


@dataclass(frozen=True, slots=True)
class WorkerBeat:
    """One service worker's row of the registry: who it is, and what it is doing now.

    Written by the worker at every heartbeat; ``governor service status`` reads them.
    A row whose ``heartbeat_at`` is old belongs to a worker that died.
    """

    worker_id: str
    host: str
    pid: int
    started_at: datetime
    heartbeat_at: datetime
    goal_id: str | None = None
    """The goal the worker is stepping, None while it looks for work or sleeps."""
    step_started_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ServiceError:
    """An infrastructure error a service worker met while stepping a goal (never an event)."""

    at: datetime
    worker_id: str
    goal_id: str | None
    error: str


@dataclass(frozen=True, slots=True)
class AgentRecord:
    """One agent process a runner has running for a goal (SPEC §11.11).

    Written right after the spawn under the runner's lease (an append's fencing check),
    removed once the agent is reaped. A process is the same one only if its pid *and*
    its start time match: a pid alone may have been reused.
    """

    goal_id: str
    host: str
    """The machine's host name: only there can the process be checked."""
    boot_id: str
    """The kernel's boot id: after a reboot no process of before is alive."""
    pid: int
    """The agent's pid, which is also its process group id (it leads its own session)."""
    start_ticks: int
    """When the process started, in clock ticks since boot (``/proc/<pid>/stat`` field 22)."""
    run: str
    """What it works for: a plan id or an attempt's run id."""
    holder: str
    """The lease holder that spawned it."""
    started_at: datetime
    last_line: str | None = None
    """The last telling line of the agent's output, redacted and bounded, as of the
    runner's last heartbeat (``governor.drive.agents.Agents.beat``); agent text: data, to
    be shown quoted. None until the first heartbeat after output."""
