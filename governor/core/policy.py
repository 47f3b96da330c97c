"""The goal's policy: every budget and gate, frozen into ``goal.created``.

Rules:
    * A policy is fixed when the goal is created. ``budget.raised`` is the only way to
      change a limit afterwards, and only upwards; there is no reset.
    * Every field has a default (SPEC §5); omitted fields take it.
    * ``MAX_UNCHARGED_REPLANS`` is the module constant behind
      ``max_uncharged_replans`` and is exported from the package.
    * Every goal can afford its completion (SPEC §12.1): a new goal's policy needs
      ``max_replans >= 2`` and ``max_milestones <= max_replans - 1``, else it is refused
      (``new_goal_policy``, with the line ``completion_problem`` words). An omitted
      ``max_milestones`` is ``min(4, max_replans - 1)``. A ``Policy`` value may still hold
      a recorded policy that breaks the rule, read as recorded, but never one with more
      milestones than replans: that one is upgraded when it is read
      (``governor.core.wire.upcast``; decision record 0006).
    * ``max_same_failures`` (SPEC §12.10) is 3 for a new goal (``new_goal_policy`` fills it
      in unless it was given); absent from a recorded policy it is ``None``, no limit, so
      a history recorded before the rule replays unchanged. ``max_quota_wait_s`` (SPEC
      §13.2) likewise: 86,400 s for a new goal, ``None`` (no limit) when not recorded.

Start-up (issue 12): the models of ``governor.core`` build their validators on first use
(``defer_build``), so a read command that validates nothing with pydantic (the compiled
decoder reads the store) never builds them, nor loads pydantic's plugins. The defaults
made at import (``UpstreamBackoff()``, ``Policy()``, ``Evidence()``) are therefore made
with ``model_construct()``, which builds no validator and gives the same value
(``tests/core/test_policy.py`` checks each equals its validated twin).
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, model_validator
from pydantic.fields import FieldInfo

from governor.core.numbers import (
    Count,
    Factor,
    Parallel,
    PosCount,
    RuntimeS,
    Usd,
    WaitS,
)
from governor.errors import PolicyError

MAX_UNCHARGED_REPLANS: Final = 3
"""Default ceiling on consecutive uncharged planner failures (decision record 0046)."""
MAX_MILESTONES: Final = 4
"""Default number of milestones, lowered to ``max_replans - 1`` when that is smaller."""
MAX_SAME_FAILURES: Final = 3
"""A new goal's ``max_same_failures`` (SPEC §12.10)."""
MAX_QUOTA_WAIT_S: Final = 86_400.0
"""A new goal's ``max_quota_wait_s`` (SPEC §13.2): one day."""

LedgerName = Literal[
    "replans",
    "uncharged_replans",
    "plan_records",
    "total_attempts",
    "attempts",
    "uncharged_attempts",
    "runtime",
    "cost",
    "outage_wait",
]
"""A budget that ``budget.raised`` may lift: the raisable rows of ``governor.core.budgets``."""


def exponential_s(initial_s: float, factor: float, max_s: float, n: int) -> float:
    """The n-th wait of an exponential back-off: ``min(max_s, initial_s * factor ** (n - 1))``.

    ``n`` below 1 counts as 1. It cannot overflow, whatever the numbers (a policy written
    before their ranges existed included): a power too large for a float is past
    ``max_s`` by far, so the wait is ``max_s`` (0 when ``initial_s`` is 0).
    """
    # ``min`` and ``max`` spelled as comparisons (the same results, ties included): the
    # fold asks for a wait after every uncharged upstream failure
    exponent = n - 1 if n > 1 else 0
    try:
        wait = initial_s * factor**exponent
    except OverflowError:
        return max_s if initial_s > 0 else 0.0
    return wait if wait < max_s else max_s  # ``min(max_s, wait)``


class UpstreamBackoff(BaseModel):
    """Wait before the next uncharged retry after a vendor refusal.

    The wait after the n-th consecutive uncharged upstream failure is
    ``min(max_s, initial_s * factor ** (n - 1))``, or the vendor's ``retry_after_s``
    when that is larger.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    initial_s: WaitS = 30.0
    """First wait, in seconds, 0 to ``MAX_WAIT_S`` (30 days). Default 30."""
    factor: Factor = 2.0
    """Growth per consecutive uncharged failure, 1 to ``MAX_FACTOR`` (100). Default 2."""
    max_s: WaitS = 900.0
    """Longest wait, in seconds, 0 to ``MAX_WAIT_S`` (30 days). Default 900."""

    @model_validator(mode="after")
    def _max_not_below_initial(self) -> UpstreamBackoff:
        if self.max_s < self.initial_s:
            raise ValueError(f"max_s ({self.max_s}) must be at least initial_s ({self.initial_s})")
        return self

    def wait_s(self, consecutive: int, retry_after_s: float | None) -> float:
        """The wait after the ``consecutive``-th uncharged upstream failure (SPEC §6):
        ``max(min(max_s, initial_s * factor ** (n - 1)), retry_after_s)``."""
        wait = exponential_s(self.initial_s, self.factor, self.max_s, consecutive)
        floor = retry_after_s or 0.0
        return floor if floor > wait else wait  # ``max(wait, floor)``


class Grants(BaseModel):
    """What governor may grant by itself when a budget stops a goal (SPEC §13.7), on a
    goal's policy or on a pool; a larger request waits for a person."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    auto_usd: Usd = 0.0
    """Largest request in US dollars granted without a person. Default 0."""
    auto_attempts: Count = 0
    """Largest request in charged attempts granted without a person. Default 0."""
    expires_s: RuntimeS | None = None
    """How long a grant lasts, in seconds (None: it does not expire). Default none."""


class Policy(BaseModel):
    """Budgets and gates of one goal (SPEC §5). Frozen into ``goal.created``.

    Every count is a whole number from its minimum to ``MAX_COUNT`` (10^9); seconds,
    dollars and the back-off have the ranges their fields state (``governor.core.numbers``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    max_replans: Count = 5
    """Charged planner invocations (initial, replan, milestone and retry all count). Default 5."""
    max_uncharged_replans: Count = MAX_UNCHARGED_REPLANS
    """Ceiling on *consecutive* uncharged planner failures. Default ``MAX_UNCHARGED_REPLANS``."""
    max_plan_records: PosCount = 100
    """Hard cap on the raw number of plans, charged or not (a storage bound). Default 100."""
    max_attempts: PosCount = 3
    """Charged attempts per work item. Default 3."""
    max_uncharged_attempts: Count = 3
    """Consecutive uncharged attempts per work item. Default 3."""
    max_continuations: Count = 3
    """Continuations of one lost run before it is finished as ``lost`` and charged. Default 3."""
    max_total_attempts: Count = 100
    """Charged attempts across the whole goal. Default 100."""
    max_work_items_per_plan: PosCount = 8
    """Largest number of work items one proposal may hold. Default 8."""
    max_total_work_items: PosCount = 25
    """Largest number of work items the goal may ever create. Default 25."""
    max_milestones: Count = MAX_MILESTONES
    """Plans of decision ``apply`` that may complete before the planner must say
    ``complete``; at most ``max_replans - 1`` for a new goal (SPEC §12.1). Default 4, or
    ``max_replans - 1`` when smaller."""
    max_parallel_work: Parallel = 1
    """Work items dispatched at once, 1 to ``MAX_PARALLEL`` (1000). Default 1."""
    upstream_backoff: UpstreamBackoff = UpstreamBackoff.model_construct()  # (module docstring)
    """Back-off before the next uncharged retry. Default 30 s, x2, at most 900 s."""
    auto_apply: bool = True
    """Apply a valid proposal without an operator. Default true."""
    accept_passing: bool = True
    """Accept a work item whose attempt succeeded without an operator. Default true."""
    retry_blocked: bool = True
    """Retry a failed work item without an operator while budget remains. Default true."""
    max_runtime_s: RuntimeS = 14400.0
    """Cumulative wall clock across all runs of the goal, in seconds, above 0 and at most
    ``MAX_RUNTIME_S`` (10^10). Default 14400."""
    max_cost_usd: Usd | None = None
    """Cumulative reported cost in US dollars, 0 to ``MAX_USD`` (10^9); ``None`` means no
    limit. Default none."""
    max_outage_wait_s: RuntimeS = 21600.0
    """Cumulative time the goal may wait parked on failing upstreams, in seconds, above 0
    and at most ``MAX_RUNTIME_S`` (SPEC §11.10); past it the goal stops
    ``budget_exhausted`` (``outage_wait``). Default 21600 (6 h)."""
    max_quota_wait_s: RuntimeS | None = None
    """The longest an account's spent usage window may keep the goal waiting (SPEC §13.2):
    a refusal whose window reopens further away than this after it stops the goal
    ``blocked`` on ``environment``, naming the reset time. ``None``: no limit. A new goal
    takes ``MAX_QUOTA_WAIT_S`` (86,400 s) unless it names one; a policy recorded without it
    reads ``None``."""
    max_same_failures: PosCount | None = None
    """Charged failures in a row with one signature after which more tries will not help
    (SPEC §12.10): an item is settled as exhausted, a planner stops the goal. ``None``: no
    limit. A new goal takes ``MAX_SAME_FAILURES`` (3) unless it names one; a policy
    recorded without it reads ``None``."""
    grants: Grants | None = None
    """What governor grants by itself when this goal's own budget stops it (SPEC §13.7):
    ``{auto_usd, auto_attempts, expires_s}``. ``None``: every request waits for a
    person, and a goal without grants stops ``budget_exhausted`` as before. Default none."""

    @model_validator(mode="before")
    @classmethod
    def _default_milestones(cls, data: Any) -> Any:
        if isinstance(data, dict) and "max_milestones" not in data:
            replans = whole(data.get("max_replans", cls.model_fields["max_replans"].default))
            if replans is not None:
                return {**data, "max_milestones": default_milestones(replans)}
        return data

    @model_validator(mode="after")
    def _milestones_within_replans(self) -> Policy:
        if self.max_milestones > self.max_replans:
            raise ValueError(milestones_above_replans(self.max_milestones, self.max_replans))
        return self


def whole(value: object) -> int | None:
    """``value`` as the whole number a count field reads it as (``2`` or ``2.0``), else None.

    An omitted ``max_milestones`` follows ``max_replans`` however the count is written:
    ``max_replans: 2.0`` is the count 2, so its milestones are 2 too.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) else None


def default_milestones(replans: int) -> int:
    """The ``max_milestones`` of a policy that does not name it: ``min(4, max_replans - 1)``
    (never below 0), which leaves a planner call for the completion review (SPEC §12.1)."""
    return max(0, min(MAX_MILESTONES, replans - 1))


def milestones_above_replans(milestones: int, replans: int) -> str:
    """Why a policy leaves no planner call for the completion review (SPEC §12.1), naming
    both numbers and the fix: each milestone is a charged plan, and so is the ``complete``."""
    if replans < 2:
        return (
            f"max_replans {replans} leaves no planner call for the completion review: "
            f"use max_replans ≥ {max(2, milestones + 1)}"
        )
    return (
        f"max_milestones {milestones} leaves no planner call for the completion review under "
        f"max_replans {replans}: use max_milestones ≤ {replans - 1} or max_replans ≥ {milestones + 1}"
    )


def completion_problem(policy: Policy) -> str | None:
    """Why ``policy`` can never succeed — no planner call left for the completion review
    (SPEC §12.1: ``max_replans >= 2`` and ``max_milestones <= max_replans - 1``) — or None."""
    if policy.max_replans >= 2 and policy.max_milestones <= policy.max_replans - 1:
        return None
    return milestones_above_replans(policy.max_milestones, policy.max_replans)


def recorded_policy_notes(policy: Policy, line: int = 1) -> list[str]:
    """What ``validate`` notes about a recorded policy (``goal.created`` at ``line``) that a
    new goal could not have: it is read as recorded, and replays as it ran (SPEC §12.1)."""
    problem = completion_problem(policy)
    if problem is None:
        return []
    return [
        f"line {line}: goal.created: {problem} (SPEC §12.1); a new goal is refused such a "
        "policy, this one is read as recorded"
    ]


def new_goal_policy(policy: Policy) -> Policy:
    """``policy`` as a new goal records it: ``max_same_failures`` is ``MAX_SAME_FAILURES``
    unless the policy named it (SPEC §12.10), and a policy that can never succeed is refused.

    Raises:
        PolicyError: the policy leaves no planner call for the completion review (SPEC §12.1).
    """
    problem = completion_problem(policy)
    if problem is not None:
        raise PolicyError(f"policy: {problem}", field="max_milestones")
    if "max_same_failures" not in policy.model_fields_set:
        policy = policy.model_copy(update={"max_same_failures": MAX_SAME_FAILURES})
    if "max_quota_wait_s" not in policy.model_fields_set:
        policy = policy.model_copy(update={"max_quota_wait_s": MAX_QUOTA_WAIT_S})
    return policy


def _field_type(info: FieldInfo) -> Any:
    """A field's annotation with its constraints, as a ``TypeAdapter`` takes it."""
    return Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation


@functools.cache
def _field_check(field: str) -> TypeAdapter[Any]:
    """The check of one policy field, built on first use (start-up)."""
    return TypeAdapter[Any](_field_type(Policy.model_fields[field]))


def check_policy_value(field: str, value: object) -> str | None:
    """What is wrong with ``value`` as the policy field ``field`` (None: nothing).

    ``budget.raised`` checks its new limit here, so a raise can never set a limit that a
    policy could not hold (non-finite, out of range, fractional where it counts).
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 1e30 as a count: say it is too large, not unparsable
    try:
        _field_check(field).validate_python(value)
    except ValidationError as exc:
        return str(exc.errors(include_url=False)[0]["msg"])
    return None
