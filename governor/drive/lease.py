"""The lease a runner holds on its goal: taken, kept alive, given back.

Rules (SPEC §6.3, §8, §11.11):
    * One holder at a time: ``acquire`` is refused while another holds an unexpired lease
      (``LeaseError`` naming it); taking it over ends the agents a previous holder left
      running.
    * A heartbeat thread renews the lease every third of its time to live. A lease taken
      over meanwhile (``LeaseError``) ends our own agents and the heartbeat: the next
      append is refused by the fencing token. A store that is away is tried again at the
      next beat.
    * The heartbeat also reads what was appended since the view: when an operator ended
      the goal (``goal.cancelled``, ``plan.completed``) or finished an attempt in flight,
      the agents of what was settled are killed, since nothing they do could be recorded.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from governor.drive.agents import Agents
from governor.errors import LeaseError, StoreError
from governor.store.base import EventStore, Lease


def holder_id(role: str = "") -> str:
    """This process as a lease holder (and a service worker's id): ``[role:]host:pid``."""
    where = f"{socket.gethostname()}:{os.getpid()}"
    return f"{role}:{where}" if role else where


class LeaseKeeper:
    """One goal's lease for one holder, and the heartbeat that keeps it (the module rules).

    ``lock`` is the runner's: a renewal never interleaves with an append under the lease;
    ``seq`` is the last seq of the runner's view (read under the lock).
    """

    def __init__(
        self,
        store: EventStore,
        goal_id: str,
        holder: str,
        ttl_s: float,
        *,
        agents: Agents,
        lock: AbstractContextManager[Any],
        seq: Callable[[], int],
    ) -> None:
        self.store, self.goal_id, self.holder, self.ttl_s = store, goal_id, holder, ttl_s
        self.agents, self._lock, self._seq = agents, lock, seq
        self.lease: Lease | None = None
        self._heartbeat: threading.Event | None = None

    def acquire(self) -> Lease:
        """Take the goal's lease, end the agents a previous holder left running, and keep
        the lease alive with a heartbeat thread."""
        self.lease = self.store.acquire_lease(self.goal_id, self.holder, ttl_s=self.ttl_s)
        try:
            self.agents.end_previous()
        except BaseException:
            self.store.release_lease(self.lease)
            self.lease = None
            raise
        stop = self._heartbeat = threading.Event()
        threading.Thread(
            target=self._beat, args=(stop,), daemon=True, name=f"lease:{self.goal_id}"
        ).start()
        return self.lease

    def _beat(self, stop: threading.Event) -> None:
        while not stop.wait(self.ttl_s / 3):
            try:
                with self._lock:
                    if self.lease is not None:
                        self.lease = self.store.renew_lease(self.lease, ttl_s=self.ttl_s)
                self._end_settled_agents()
                self.agents.beat()
            except LeaseError:
                # Taken over: the next append is refused by the fencing token, and no agent
                # of ours may run beside the new holder's.
                self.agents.end_own()
                return
            except StoreError:
                continue  # the store is away; a takeover meanwhile fences us out all the same

    def _end_settled_agents(self) -> None:
        """Kill the agents whose run someone else settled after the view's last event:
        every agent when the goal ended (an operator's ``goal.cancelled``), an attempt's
        agent when an operator abandoned it. Nothing they do could be recorded, so their
        attempt is over (SPEC §11.11). Reads only what was appended since."""
        with self._lock:
            seq = self._seq()
        finished: set[str] = set()
        for event in self.store.load(self.goal_id, after_seq=seq):
            if event.type in ("goal.cancelled", "plan.completed"):
                self.agents.end_own(f"the goal ended meanwhile ({event.type})")
                return
            if event.type == "attempt.finished":
                finished.add(event.run_id)
        if finished:
            self.agents.end_own("an operator finished the attempt meanwhile", runs=finished)

    def release(self) -> None:
        """Stop the heartbeat and give the lease back (nothing when none is held)."""
        if self._heartbeat is not None:
            self._heartbeat.set()
        with self._lock:
            if self.lease is not None:
                self.store.release_lease(self.lease)
                self.lease = None
