"""A runner's agent processes: recorded while they run, ended when they must not run on.

Rules (SPEC §11.11, decision record 0007):
    * Every agent process a runner spawns is recorded in the store right after the spawn
      (pid, start time, host, boot id, what run it works for), fenced by the runner's
      lease like an append: a runner whose lease was taken over cannot record one, and
      its agent is killed at once (``governor.exec.process.watching``). The record is
      removed once the agent is reaped.
    * A runner that takes a goal's lease ends every agent still recorded for the goal
      before it acts: on this machine, a process whose pid *and* start time match is
      killed with its whole group and waited for; a record whose process is gone is
      dropped. A record of another machine cannot be checked from here: it is dropped
      with a note, that machine's runner having ended it (below, or its guard).
    * A runner that learns its lease was taken over (its heartbeat is refused) kills its
      own agents' groups at once: it may no longer act for the goal. So does a runner
      that learns at a heartbeat that the goal ended (an operator cancelled it), and it
      kills the agent of an attempt an operator abandoned: nothing they do can be
      recorded any more, so their attempt is over.
    * At each lease heartbeat the runner writes each agent's latest telling line (redacted,
      at most ``LINE_CHARS``) into its row when it changed (``Agents.beat``): a page that
      reads the store shows it, quoted as agent text. One upsert per changed agent per
      heartbeat, never one per output line; the row goes with the agent.
    * An agent that cannot be ended (another user's, stuck in the kernel) stops the
      takeover with ``LeaseError``: nothing runs beside it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from datetime import datetime

from governor.errors import LeaseError
from governor.exec.process import SpawnWatch
from governor.exec.procinfo import end_group, this_machine
from governor.registry import AgentRecord
from governor.store.base import EventStore, Lease

END_TIMEOUT_S = 10.0
"""How long a takeover waits for a previous agent's group to die after SIGKILL."""

LINE_CHARS = 300
"""The most characters of an agent's last line its row keeps."""


class Agents:
    """The agent processes of one runner (one goal, one holder); thread-safe."""

    def __init__(
        self,
        store: EventStore,
        goal_id: str,
        holder: str,
        *,
        lease: Callable[[], Lease | None],
        clock: Callable[[], datetime],
        progress: Callable[[str], None],
        lines: Callable[[], Mapping[str, str]] = dict,
        redact: Callable[[str], str] = str,
    ) -> None:
        """``lines``: the latest telling line of each run's output, by run (``Calls``);
        ``redact``: what hides the secrets of the agents' environment in it."""
        self.store, self.goal_id, self.holder = store, goal_id, holder
        self._lease, self._clock, self._progress = lease, clock, progress
        self._lines, self._redact = lines, redact
        self._lock = threading.Lock()
        self._live: dict[int, AgentRecord] = {}

    def watch(self, run: str) -> SpawnWatch:
        """The watch that records the agents of one run (a plan id or a run id)."""
        return _RunWatch(self, run)

    def started(self, run: str, pid: int, ticks: int | None) -> None:
        if ticks is None:
            return  # nothing can identify the process here (not Linux): nothing to record
        host, boot_id = this_machine()
        agent = AgentRecord(
            self.goal_id, host, boot_id, pid, ticks, run, self.holder, self._clock()
        )
        with self._lock:
            self._live[pid] = agent
        self.store.add_agent(agent, lease=self._lease())

    def ended(self, pid: int) -> None:
        with self._lock:
            agent = self._live.pop(pid, None)
        if agent is not None:
            with contextlib.suppress(Exception):  # a row left behind is dropped at takeover
                self.store.remove_agent(agent)

    def beat(self) -> None:
        """Write each live agent's latest telling line into its row when it changed since
        the last heartbeat (fenced by the lease: ``LeaseError`` once taken over). Under
        the lock, so a reaped agent's row is never written back."""
        lines = self._lines()
        with self._lock:
            for pid, agent in list(self._live.items()):
                line = self._redact(lines.get(agent.run, ""))[:LINE_CHARS]
                if line and line != agent.last_line:
                    told = self._live[pid] = replace(agent, last_line=line)
                    self.store.add_agent(told, lease=self._lease())

    def end_own(
        self, why: str = "the lease was taken over", *, runs: Collection[str] | None = None
    ) -> None:
        """Kill the group of every agent this runner has running (only those working for
        ``runs``, plan ids or run ids, when given): the lease was lost, the goal ended, or
        an operator finished their attempt."""
        with self._lock:
            pids = [pid for pid, a in self._live.items() if runs is None or a.run in runs]
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        if pids:
            self._progress(f"{why}; killed {len(pids)} running agent(s)")

    def end_previous(self, runs: Collection[str] | None = None) -> None:
        """End every agent still recorded for the goal (the lease was just taken), or
        only those working for ``runs`` (plan ids or run ids) when given."""
        host, boot_id = this_machine()
        for agent in self.store.agents(self.goal_id):
            if runs is not None and agent.run not in runs:
                continue
            where = f"agent pid {agent.pid} of {agent.holder} ({agent.run})"
            if agent.host != host:
                self._progress(
                    f"{where} ran on {agent.host}, which this machine cannot check; "
                    "its runner ends it when it sees the lease gone"
                )
            elif agent.boot_id == boot_id:
                self._end(agent, where)
            self.store.remove_agent(agent)

    def _end(self, agent: AgentRecord, where: str) -> None:
        ending = end_group(agent.pid, agent.start_ticks, timeout_s=END_TIMEOUT_S)
        if ending == "ended":
            self._progress(f"{where} was still running; killed it before going on")
        elif ending == "stuck":
            raise LeaseError(
                self.goal_id,
                f"{where} is still running and could not be killed within "
                f"{END_TIMEOUT_S:.0f}s; end it (kill -9 -{agent.pid}) and try again",
                holder=agent.holder,
            )


class _RunWatch:
    """``SpawnWatch`` of one run: each spawn is recorded under ``run``."""

    def __init__(self, agents: Agents, run: str) -> None:
        self._agents, self._run = agents, run

    def started(self, pid: int, ticks: int | None) -> None:
        self._agents.started(self._run, pid, ticks)

    def ended(self, pid: int, ticks: int | None) -> None:
        self._agents.ended(pid)
