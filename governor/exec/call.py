"""Which goal, plan, item and attempt an agent call serves: a context variable, and the
typed context a python agent receives.

Rules:
    * The driver says what a call serves (``CallInfo``) and sets ``current_call`` around
      the harness run; harnesses that can use it read it, the others ignore it. It is a
      ``contextvars`` variable, so it follows the call into the threads that run it
      (``run_in_context``) and never leaks between concurrent calls.
    * A call made outside a goal (``governor probe``) has no ``CallInfo``: the ids of
      ``AgentContext`` are then ``None``.
    * ``run_in_context`` is how the shell starts a thread for work done on behalf of the
      caller: the thread runs in a copy of the caller's context, so tracing (LangSmith's
      parent run, OpenTelemetry's current span, LangChain's callbacks) and the call's
      ``CallInfo`` reach whatever runs there.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, ParamSpec, TypedDict, TypeVar

from governor.core.events import GoalCreated
from governor.core.view import WorkState

P = ParamSpec("P")
T = TypeVar("T")
Role = Literal["planner", "worker"]


@dataclass(frozen=True, slots=True)
class CallInfo:
    """What one agent call serves."""

    goal_id: str
    role: Role
    plan_id: str | None = None
    work_id: str | None = None
    attempt: int | None = None
    run_id: str | None = None
    objective: str = ""
    """The goal's objective for the planner; the item's for a worker."""
    acceptance: tuple[str, ...] = ()
    """The goal's criteria for the planner; the item's for a worker."""

    @classmethod
    def of_planner(cls, created: GoalCreated, plan_id: str) -> CallInfo:
        """The call of the planner asked for plan ``plan_id``."""
        return cls(
            created.goal_id,
            "planner",
            plan_id=plan_id,
            objective=created.objective,
            acceptance=created.acceptance,
        )

    @classmethod
    def of_worker(cls, goal_id: str, item: WorkState, run_id: str) -> CallInfo:
        """The call of an item's worker, for its current attempt."""
        return cls(
            goal_id,
            "worker",
            plan_id=item.plan_id,
            work_id=item.work_id,
            attempt=item.attempt,
            run_id=run_id,
            objective=item.spec.objective,
            acceptance=item.spec.acceptance,
        )

    def metadata(self) -> dict[str, str | int]:
        """The ids as tracing metadata (LangSmith, LangChain callbacks, OpenTelemetry)."""
        found = {
            "goal_id": self.goal_id,
            "role": self.role,
            "plan_id": self.plan_id,
            "work_id": self.work_id,
            "attempt": self.attempt,
        }
        return {key: value for key, value in found.items() if value is not None}


current_call: contextvars.ContextVar[CallInfo | None] = contextvars.ContextVar(
    "governor_current_call", default=None
)
"""The call the current context's agent run serves (None outside a goal)."""


class AgentContext(TypedDict):
    """The second argument of a python agent: who calls it, for what, and how.

    The ids are ``None`` for a call made outside a goal (``governor probe``).
    """

    goal_id: str | None
    role: Role | None
    """``planner`` or ``worker``."""
    plan_id: str | None
    work_id: str | None
    """The work item (a worker's call only)."""
    attempt: int | None
    """The attempt number of the item (a worker's call only)."""
    objective: str | None
    """What to achieve: the goal's objective (planner) or the item's (worker)."""
    acceptance: list[str]
    """The criteria the result is judged by."""
    cwd: str
    """The working directory agents run in."""
    model: str | None
    instructions: str | None
    env: dict[str, str]
    """The variables the profile passes through (its ``env`` list), and nothing else."""


def in_context(fn: Callable[P, T]) -> Callable[P, T]:
    """``fn``, to be run in a copy of the context of whoever calls ``in_context`` (hand it
    to a thread or an executor: what runs there sees the caller's tracing and call)."""
    context = contextvars.copy_context()

    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return context.copy().run(fn, *args, **kwargs)

    return run


def run_in_context(target: Callable[[], object], *, name: str) -> threading.Thread:
    """Start a daemon thread running ``target`` in a copy of the caller's context."""
    thread = threading.Thread(target=in_context(target), daemon=True, name=name)
    thread.start()
    return thread
