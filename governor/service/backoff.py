"""Per-goal error back-off: how long a worker leaves a goal alone after its step raised.

Rules:
    * Only infrastructure errors count (a store hiccup, an unexpected exception in a
      step). Expected outcomes — a failed attempt, a vendor refusal — are events, and
      their cooldowns are the core's ``not_before``, never this.
    * It lives in the memory of one worker process: never recorded as an event, never
      charged against any budget, forgotten at the first step that goes through.
    * Exponential in the number of consecutive failures, capped (``ErrorBackoff``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from governor.service.settings import ErrorBackoff


@dataclass(slots=True)
class _Rest:
    failures: int
    until: float


class GoalBackoff:
    """Which goals are resting after an error, and until when (monotonic seconds)."""

    def __init__(
        self, policy: ErrorBackoff, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.policy = policy
        self._clock = clock
        self._resting: dict[str, _Rest] = {}

    def failed(self, goal_id: str) -> float:
        """Note one more consecutive failure; returns the pause it earns, in seconds."""
        failures = self._resting[goal_id].failures + 1 if goal_id in self._resting else 1
        delay = self.policy.delay_s(failures)
        self._resting[goal_id] = _Rest(failures, self._clock() + delay)
        return delay

    def succeeded(self, goal_id: str) -> None:
        """Forget the goal's failures: its step went through."""
        self._resting.pop(goal_id, None)

    def is_resting(self, goal_id: str) -> bool:
        """Whether the goal must be left alone for now."""
        rest = self._resting.get(goal_id)
        return rest is not None and rest.until > self._clock()

    def failures(self, goal_id: str) -> int:
        """Consecutive failures of the goal's steps so far."""
        rest = self._resting.get(goal_id)
        return rest.failures if rest else 0

    def next_end_s(self) -> float | None:
        """Seconds until the first resting goal may be stepped again; None if none rests."""
        now = self._clock()
        ends = [rest.until - now for rest in self._resting.values() if rest.until > now]
        return min(ends, default=None)
