"""The goal's policy: every budget and gate, frozen into ``goal.created``.

Rules:
    * A policy is fixed when the goal is created. ``budget.raised`` is the only way to
      change a limit afterwards, and only upwards; there is no reset.
    * Every field has a default (SPEC §5); omitted fields take it.
    * ``MAX_UNCHARGED_REPLANS`` is the module constant behind
      ``max_uncharged_replans`` and is exported from the package.
    * ``max_milestones`` never exceeds ``max_replans`` (a milestone is a charged plan):
      such a policy is refused; an omitted ``max_milestones`` is ``min(4, max_replans)``
      (SPEC §11.5; decision record 0006). A policy recorded before that rule is upgraded
      when it is read (``governor.core.upcast``).
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from governor.errors import PolicyError

MAX_UNCHARGED_REPLANS: Final = 3
"""Default ceiling on consecutive uncharged planner failures (decision record 0046)."""
MAX_MILESTONES: Final = 4
"""Default number of milestones, lowered to ``max_replans`` when that is smaller."""

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

NonNegInt = Annotated[int, Field(ge=0)]
PosInt = Annotated[int, Field(ge=1)]


def exponential_s(initial_s: float, factor: float, max_s: float, n: int) -> float:
    """The n-th wait of an exponential back-off: ``min(max_s, initial_s * factor ** (n - 1))``.

    ``n`` below 1 counts as 1; a wait too large to compute is ``max_s``.
    """
    exponent = max(n - 1, 0)
    try:
        return min(max_s, initial_s * factor**exponent)
    except OverflowError:
        return max_s


class UpstreamBackoff(BaseModel):
    """Wait before the next uncharged retry after a vendor refusal.

    The wait after the n-th consecutive uncharged upstream failure is
    ``min(max_s, initial_s * factor ** (n - 1))``, or the vendor's ``retry_after_s``
    when that is larger.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    initial_s: float = Field(default=30.0, ge=0)
    """First wait, in seconds. Default 30."""
    factor: float = Field(default=2.0, ge=1)
    """Growth per consecutive uncharged failure. Default 2."""
    max_s: float = Field(default=900.0, ge=0)
    """Longest wait, in seconds. Default 900."""

    @model_validator(mode="after")
    def _max_not_below_initial(self) -> UpstreamBackoff:
        if self.max_s < self.initial_s:
            raise ValueError(f"max_s ({self.max_s}) must be at least initial_s ({self.initial_s})")
        return self

    def wait_s(self, consecutive: int, retry_after_s: float | None) -> float:
        """The wait after the ``consecutive``-th uncharged upstream failure (SPEC §6):
        ``max(min(max_s, initial_s * factor ** (n - 1)), retry_after_s)``."""
        wait = exponential_s(self.initial_s, self.factor, self.max_s, consecutive)
        return max(wait, retry_after_s or 0.0)


class Policy(BaseModel):
    """Budgets and gates of one goal (SPEC §5). Frozen into ``goal.created``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_replans: NonNegInt = 5
    """Charged planner invocations (initial, replan, milestone and retry all count). Default 5."""
    max_uncharged_replans: NonNegInt = MAX_UNCHARGED_REPLANS
    """Ceiling on *consecutive* uncharged planner failures. Default ``MAX_UNCHARGED_REPLANS``."""
    max_plan_records: PosInt = 100
    """Hard cap on the raw number of plans, charged or not (a storage bound). Default 100."""
    max_attempts: PosInt = 3
    """Charged attempts per work item. Default 3."""
    max_uncharged_attempts: NonNegInt = 3
    """Consecutive uncharged attempts per work item. Default 3."""
    max_continuations: NonNegInt = 3
    """Continuations of one lost run before it is finished as ``lost`` and charged. Default 3."""
    max_total_attempts: NonNegInt = 100
    """Charged attempts across the whole goal. Default 100."""
    max_work_items_per_plan: PosInt = 8
    """Largest number of work items one proposal may hold. Default 8."""
    max_total_work_items: PosInt = 25
    """Largest number of work items the goal may ever create. Default 25."""
    max_milestones: NonNegInt = MAX_MILESTONES
    """Plans of decision ``apply`` that may complete before the planner must say
    ``complete``; at most ``max_replans``. Default 4, or ``max_replans`` when smaller."""
    max_parallel_work: PosInt = 1
    """Work items dispatched at once. Default 1."""
    upstream_backoff: UpstreamBackoff = UpstreamBackoff()
    """Back-off before the next uncharged retry. Default 30 s, x2, at most 900 s."""
    auto_apply: bool = True
    """Apply a valid proposal without an operator. Default true."""
    accept_passing: bool = True
    """Accept a work item whose attempt succeeded without an operator. Default true."""
    retry_blocked: bool = True
    """Retry a failed work item without an operator while budget remains. Default true."""
    max_runtime_s: float = Field(default=14400.0, gt=0)
    """Cumulative wall clock across all runs of the goal, in seconds. Default 14400."""
    max_cost_usd: float | None = Field(default=None, ge=0)
    """Cumulative reported cost in US dollars; ``None`` means no limit. Default none."""
    max_outage_wait_s: float = Field(default=21600.0, gt=0)
    """Cumulative time the goal may wait parked on failing upstreams, in seconds
    (SPEC §11.10); past it the goal stops ``budget_exhausted`` (``outage_wait``).
    Default 21600 (6 h)."""

    @model_validator(mode="before")
    @classmethod
    def _default_milestones(cls, data: Any) -> Any:
        if isinstance(data, dict) and "max_milestones" not in data:
            replans = data.get("max_replans", cls.model_fields["max_replans"].default)
            if isinstance(replans, int) and not isinstance(replans, bool):
                return {**data, "max_milestones": min(MAX_MILESTONES, replans)}
        return data

    @model_validator(mode="after")
    def _milestones_within_replans(self) -> Policy:
        if self.max_milestones > self.max_replans:
            raise ValueError(milestones_above_replans(self.max_milestones, self.max_replans))
        return self


def milestones_above_replans(milestones: int, replans: int) -> str:
    """Why a policy with more milestones than replans is refused."""
    return (
        f"max_milestones ({milestones}) must not exceed max_replans ({replans}): "
        "each milestone is a charged plan"
    )


def policy_from(values: dict[str, Any] | None = None) -> Policy:
    """Build a policy from plain values, turning validation failures into one clear error.

    Args:
        values: policy fields; omitted fields take their defaults.

    Raises:
        PolicyError: naming the first unknown field or out-of-range value.
    """
    try:
        return Policy.model_validate(values or {})
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(part) for part in err["loc"])
        if err["type"] == "extra_forbidden":
            raise PolicyError(f"unknown policy field '{field}'", field=field) from exc
        message = err["msg"].removeprefix("Value error, ")
        if not field:  # a rule between fields
            raise PolicyError(f"policy: {message}", field="max_milestones") from exc
        raise PolicyError(f"policy field '{field}': {err['msg']}", field=field) from exc


def with_overrides(policy: Policy, overrides: dict[str, Any]) -> Policy:
    """Return ``policy`` with some fields replaced, validated as a whole.

    Nested ``upstream_backoff`` fields may be given as ``upstream_backoff.initial_s``.
    Lowering ``max_replans`` without naming ``max_milestones`` lowers the milestones with
    it (to at most the new ``max_replans``), as an omitted ``max_milestones`` would be.

    Raises:
        PolicyError: naming the unknown field or the bad value.
    """
    merged: dict[str, Any] = policy.model_dump()
    for key, value in overrides.items():
        head, _, tail = key.partition(".")
        if tail:
            if head != "upstream_backoff":
                raise PolicyError(f"unknown policy field '{key}'", field=key)
            merged["upstream_backoff"] = {**merged["upstream_backoff"], tail: value}
        else:
            merged[key] = value
    replans = merged["max_replans"]
    if "max_milestones" not in overrides and isinstance(replans, int):
        merged["max_milestones"] = min(merged["max_milestones"], replans)
    return policy_from(merged)


def _value(text: str) -> Any:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text.strip()


def parse_assignments(text: str) -> dict[str, Any]:
    """``"max_replans=8,auto_apply=false"`` as a dict of typed values.

    Raises:
        PolicyError: for a part without ``=``.
    """
    out: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise PolicyError(f"'{part}' is not field=value", field=key.strip() or None)
        out[key.strip()] = _value(value)
    return out
