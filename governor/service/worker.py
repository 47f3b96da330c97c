"""One service worker: find due goals, step each once under its lease, sleep when none is due.

Rules (SPEC §8):
    * A turn asks the store for due goals and steps each once: take its lease (a goal
      whose lease another worker holds is skipped), decide, act once, release. A step
      never sleeps: cooldowns are the goals' ``not_before``, which the store schedules.
    * The lease is what keeps two workers off one goal, on one machine or many; its
      fencing token refuses a worker whose lease was taken over. A worker that died
      mid-step leaves a run started but not finished, which the next step continues
      (uncharged, SPEC §6.3) once the lease has expired.
    * A step that raises is an infrastructure error: logged, kept among the registry's
      recent errors, and the goal rests (``GoalBackoff``) — never an event, never
      charged. Whatever the step had appended stays; the next step goes on from there.
    * Idle, a worker sleeps until the soonest ``not_before`` of a waiting goal, the end
      of a back-off, or ``poll_s``, whichever comes first; a stop request wakes it.
    * Its registry row is written at start and at every heartbeat (with the goal it is
      stepping), and removed when it stops cleanly.
    * Goals that wait on a person are never due, but some of them wait only on a binary
      (an environment stop): the first worker (``index`` 0) looks at them at start and
      then every ``reprobe_s``, and steps each whose binary can start now — the step
      records ``work.retried`` / ``goal.resumed`` by ``governor``, as ``governor run``
      does before it decides.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Final

from governor.clock import utc_now
from governor.core.decision import Decision
from governor.core.events import Event
from governor.core.route import Action, acts, name_of
from governor.drive import goals
from governor.drive.lease import holder_id
from governor.drive.runner import HarnessFactory, Runner
from governor.errors import LeaseError
from governor.exec.harness import harness_for
from governor.registry import ServiceError, WorkerBeat
from governor.service.backoff import GoalBackoff
from governor.service.observe import Observation
from governor.service.settings import ServiceSettings
from governor.store.base import EventStore

MIN_IDLE_S: Final = 0.01
"""The shortest idle sleep: a worker never spins on the store."""


class Worker:
    """Steps due goals until told to stop; see the module rules."""

    def __init__(
        self,
        store: EventStore,
        settings: ServiceSettings,
        observation: Observation,
        *,
        stopping: threading.Event,
        index: int = 0,
        clock: Callable[[], datetime] = utc_now,
        harnesses: HarnessFactory = harness_for,
        on_beat: Callable[[], None] | None = None,
    ) -> None:
        self.store, self.settings, self.observation = store, settings, observation
        self.log, self.counters = observation.log, observation.counters
        self.stopping, self.index, self.clock = stopping, index, clock
        self.harnesses, self.on_beat = harnesses, on_beat
        self.worker_id = holder_id()
        """This process's worker id, also the holder name of the leases it takes."""
        self.started_at = clock()
        self.backoff = GoalBackoff(settings.error_backoff)
        self._current: tuple[str, datetime] | None = None
        self._reprobe_at: float | None = None
        """When this worker next re-probes environment stops (None: it does not; the first
        worker's ``run`` sets it)."""

    def run(self) -> None:
        """Turn until ``stopping`` is set, then finish the step in hand and leave."""
        self.log.write("worker.started", self.clock(), pid=os.getpid(), index=self.index)
        self._beat()
        if self.index == 0:
            self._reprobe_at = time.monotonic()
        beats = threading.Event()
        thread = threading.Thread(target=self._beats, args=(beats,), daemon=True, name="beat")
        thread.start()
        try:
            while not self.stopping.is_set():
                stepped = self.turn() + self.reprobe()
                if stepped == 0 and not self.stopping.is_set():
                    self.idle()
        finally:
            beats.set()
            thread.join()
            self._guarded(lambda: self.store.remove_worker(self.worker_id))
            if self.on_beat is not None:
                self.on_beat()
            self.log.write("worker.stopped", self.clock(), pid=os.getpid())

    def turn(self) -> int:
        """One look at the store: step every due goal once; returns the steps that acted."""
        try:
            due = self.store.due(self.clock(), limit=self.settings.max_goals_per_tick)
        except Exception as exc:
            self.failed(None, exc)
            return 0
        if due:  # workers start at different places, so they rarely race for one lease
            start = self.index % len(due)
            due = due[start:] + due[:start]
        steps = 0
        for summary in due:
            if self.stopping.is_set():
                break
            if not self.backoff.is_resting(summary.goal_id):
                steps += self.step(summary.goal_id)
        return steps

    def reprobe(self) -> int:
        """When due, step each goal waiting on a person whose missing binary is there now
        (module rules); returns the steps that acted."""
        if self._reprobe_at is None or time.monotonic() < self._reprobe_at:
            return 0
        self._reprobe_at = time.monotonic() + self.settings.reprobe_s
        steps, offset, page = 0, 0, self.settings.max_goals_per_tick
        while not self.stopping.is_set():
            try:
                waiting = self.store.goals(needs_person=True, offset=offset, limit=page)
            except Exception as exc:
                self.failed(None, exc)
                break
            for summary in waiting:
                if self.stopping.is_set():
                    break
                if not self.backoff.is_resting(summary.goal_id):
                    steps += self.step(summary.goal_id, reprobing=True)
            if len(waiting) < page:
                break
            offset += page
        return steps

    def step(self, goal_id: str, *, reprobing: bool = False) -> bool:
        """One step of the goal under its lease; False when it was held or nothing acted.

        ``reprobing``: the goal waits on a person; it is stepped only when one of its
        environment stops can be cleared now."""
        decided: list[Action] = []
        try:
            prior = self.store.current_lease(goal_id)
            if prior is not None and not prior.is_expired(self.clock()):
                return False
            self._current = (goal_id, self.clock())
            began = time.monotonic()
            self._tick(goal_id, decided, reprobing=reprobing)
            if decided and acts(decided[0]):
                self.observation.stepped(name_of(decided[0]), time.monotonic() - began)
        except LeaseError as exc:
            if decided:  # taken over mid-step: the fencing token refused our appends
                self.log.write("lease.lost", self.clock(), goal=goal_id, error=str(exc))
            return False
        except Exception as exc:
            self.failed(goal_id, exc)
            return False
        finally:
            self._current = None
        self.backoff.succeeded(goal_id)
        if prior is not None and decided:
            self.counters.add("governor_lease_takeovers_total")
            self.log.write(
                "lease.takeover", self.clock(), goal=goal_id, previous_holder=prior.holder
            )
        return bool(decided) and acts(decided[0])

    def _tick(self, goal_id: str, decided: list[Action], *, reprobing: bool = False) -> None:
        """Step the goal once (``goals.tick``), unless it no longer needs a step (or, when
        ``reprobing``, no environment stop of it can be cleared)."""
        runner: Runner | None = None

        def observed(events: Sequence[Event]) -> None:  # the view names each run's harness
            self.observation.appended(events, runner.view if runner is not None else None)

        runner = goals.runner(
            self.store,
            goal_id,
            self.settings.runner_settings(self.worker_id),
            observer=observed,
            harnesses=self.harnesses,
            on_upstream=self.observation.upstream,
        )
        if reprobing:
            if not goals.environment_back(runner):
                return
        elif not goals.needs_step(runner):
            # another worker stepped it since the store said it was due, or it waits parked
            # on an upstream whose probe someone else holds: store when it is due next
            runner.reschedule()
            return

        def on_decision(decision: Decision, action: Action) -> None:
            decided.append(action)
            self.observation.decided(goal_id, decision, action, self.clock())

        goals.tick(runner, on_decision=on_decision)

    def failed(self, goal_id: str | None, exc: Exception) -> None:
        """An infrastructure error: log it, keep it in the registry, rest the goal."""
        now = self.clock()
        delay = self.backoff.failed(goal_id) if goal_id else self.settings.poll_s
        text = self.log.redact(f"{type(exc).__name__}: {exc}")[:2000]
        self.counters.add("governor_step_errors_total")
        self.log.write(
            "step.error",
            now,
            goal=goal_id,
            error=text,
            failures=self.backoff.failures(goal_id) if goal_id else None,
            retry_in_s=round(delay, 3),
            traceback="".join(traceback.format_exception(exc)[-6:]),
        )
        error = ServiceError(now, self.worker_id, goal_id, text)
        self._guarded(lambda: self.store.add_service_error(error))

    def idle(self) -> None:
        """Sleep until a waiting goal's ``not_before``, a back-off's end, or ``poll_s``."""
        delay = self.settings.poll_s
        try:
            soonest = self.store.soonest_wakeup()
        except Exception as exc:
            self.failed(None, exc)
            soonest = None
        if soonest is not None and (until := (soonest - self.clock()).total_seconds()) > 0:
            delay = min(delay, until)
        rest = self.backoff.next_end_s()
        if rest is not None:
            delay = min(delay, rest)
        if self._reprobe_at is not None:
            delay = min(delay, self._reprobe_at - time.monotonic())
        self.stopping.wait(max(delay, MIN_IDLE_S))

    def _beat(self) -> None:
        current = self._current
        beat = WorkerBeat(
            worker_id=self.worker_id,
            host=socket.gethostname(),
            pid=os.getpid(),
            started_at=self.started_at,
            heartbeat_at=self.clock(),
            goal_id=current[0] if current else None,
            step_started_at=current[1] if current else None,
        )
        self._guarded(lambda: self.store.heartbeat(beat))

    def _beats(self, done: threading.Event) -> None:
        while not done.wait(self.settings.heartbeat_s):
            self._beat()
            if self.on_beat is not None:
                self.on_beat()

    def _guarded(self, call: Callable[[], None]) -> None:
        """A registry write: its failure is logged, never allowed to stop the worker."""
        try:
            call()
        except Exception as exc:
            self.log.write("registry.error", self.clock(), error=f"{type(exc).__name__}: {exc}")
