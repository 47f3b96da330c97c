"""Parking: what the shared health of the upstreams does to a goal's decision (SPEC §11.10).

Rules (a layer over the goal rules of ``governor.core.rules.decide``; first match wins):
    fleet.0 a stop (succeeded, cancelled, a spent budget) stands as it is.
    fleet.1 parked, and the parked profile's upstream is healthy again -> ready/resume:
            ``goal.resumed`` (and ``work.retried`` for the items it refused), naming the
            probe and the outage span.
    fleet.2 parked past ``max_outage_wait_s`` (cumulative) -> budget_exhausted
            (``outage_wait``).
    fleet.3 parked, and the goal's next step would call an agent (or it is stopped on
            the upstream bound) -> waiting/wait on ``upstream`` until the next probe.
    fleet.4 not parked, and an upstream its next step calls is failing -> waiting/park on
            ``upstream`` (a run goes on with the items whose upstreams are healthy); a
            goal stopped on the upstream bound or cooling down parks too, so nobody has
            to resume it by hand.
    fleet.5 stopped on the upstream bound, and that upstream came back after the stop
            -> ready/resume.
    fleet.6 (before fleet.1) a run of the goal was refused because its account's usage
            window is spent (SPEC §13.2), and the window reopens further after the refusal
            than the policy's ``max_quota_wait_s`` -> blocked on ``environment``, naming
            the reset time and the remedy; so is a goal about to park on an account whose
            window reopens further than that from now. Until a person resumes (``resume``,
            ``work retry``) the recorded refusal keeps the stop.

An account's spent usage window (SPEC §13.2) is a record like an upstream's
(``UpstreamHealth.is_account``): the shell gives it for each profile whose calls run under
that account, the goal parks on it (fleet.4) until the time it reopens — no probe — and
resumes by itself once the record says it reopened (fleet.1).

The health is an input like ``now``: a mapping from each of the goal's profile names to
its upstream's record, given by the shell (None: the recorded park alone decides, as in a
replay; a mapping without the parked profile: the shell knows of no failure any more, so
the goal resumes). A park is recorded (``goal.parked``) and so is its end (``goal.resumed``), so a
replay explains both. Nothing here reads a clock or a store.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from governor.core.decision import Action, BlockedOn, Decision, Exhausted, Status
from governor.core.headroom import outage_wait_over, outage_wait_s
from governor.core.outage_text import parked_reason, recovery_text
from governor.core.text import stamp
from governor.core.upstream import ACCOUNT, Outage, UpstreamHealth
from governor.core.view import GoalView

Upstreams = Mapping[str, UpstreamHealth]
"""Profile name -> the health record of the upstream that profile reaches."""


def _as(
    d: Decision,
    status: Status,
    action: Action,
    reason: str,
    rule: str,
    *,
    blocked_on: BlockedOn | None = None,
    not_before: datetime | None = None,
    exhausted: Exhausted | None = None,
    outage: Outage | None = None,
) -> Decision:
    """``d`` turned into another decision by a fleet rule (its ledger and items kept)."""
    return d._replace(
        status=status,
        next_action=action,
        reason=reason,
        rule=rule,
        blocked_on=blocked_on,
        not_before=not_before,
        exhausted=exhausted,
        outage=outage,
    )


def calls(view: GoalView, decision: Decision) -> tuple[str, ...]:
    """The profiles the goal's next step would call (or is stopped or cooling down on)."""
    created = view.created
    if created is None:
        return ()
    agent_step = decision.next_action in ("plan", "run") or decision.status == "running"
    upstream_hold = decision.blocked_on == "upstream" and decision.status in (
        "waiting",
        "blocked",
    )
    if not (agent_step or upstream_hold):
        return ()
    if decision.next_action == "plan" or decision.plan_id is not None or not decision.work_ids:
        return (created.planner,)
    return tuple(dict.fromkeys(view.work[w].spec.profile for w in decision.work_ids))


def _profiles_of(upstream: str, upstreams: Upstreams) -> tuple[str, ...]:
    return tuple(p for p, h in upstreams.items() if h.upstream == upstream)


def _resume(d: Decision, health: UpstreamHealth, upstreams: Upstreams, rule: str) -> Decision:
    text = recovery_text(health) if health.recovered_at else f"{health.upstream} is healthy"
    since = health.outage_started or health.updated_at
    outage = Outage(health.upstream, _profiles_of(health.upstream, upstreams), since, None, text)
    return _as(d, "ready", "resume", f"{text}; resume", rule, outage=outage)


def _parked_wait(view: GoalView, d: Decision, health: UpstreamHealth | None) -> Decision:
    parked = view.parked
    assert parked is not None
    if health is not None and not health.healthy:
        until, why = health.probe_due_at or parked.until, parked_reason(health)
    elif parked.upstream.startswith(f"{ACCOUNT} "):  # a spent usage window (SPEC §13.2)
        until = parked.until
        why = (
            f"parked: the usage window of {parked.upstream} is spent until {stamp(until)} "
            "(the vendor said so); no call before it"
        )
    else:
        until = parked.until
        why = (
            f"parked: {parked.upstream} has been failing since {stamp(parked.since)}; "
            f"no call until its probe at {stamp(until)}"
        )
    outage = Outage(parked.upstream, (parked.profile,), parked.since, until, why)
    return _as(
        d, "waiting", "wait", why, "fleet.3", blocked_on="upstream", not_before=until, outage=outage
    )


def _over(view: GoalView, d: Decision, now: datetime) -> Decision:
    limit = view.policy.max_outage_wait_s
    why = (
        f"parked on failing upstreams for {outage_wait_s(view, now):.0f}s in all, over its "
        f"limit of {limit:.0f}s"
    )
    return _as(d, "budget_exhausted", "none", why, "fleet.2", exhausted="outage_wait")


def _unrecorded(d: Decision, view: GoalView) -> Decision:
    parked = view.parked
    assert parked is not None
    text = f"{parked.upstream} has no failing record any more"
    outage = Outage(parked.upstream, (parked.profile,), parked.since, None, text)
    return _as(d, "ready", "resume", f"{text}; resume", "fleet.1", outage=outage)


def _while_parked(
    view: GoalView, now: datetime, d: Decision, upstreams: Upstreams | None
) -> Decision:
    parked = view.parked
    assert parked is not None
    health = upstreams.get(parked.profile) if upstreams is not None else None
    if health is not None and health.healthy:
        return _resume(d, health, upstreams or {}, "fleet.1")
    if upstreams is not None and health is None:
        return _unrecorded(d, view)  # the shell knows of no failure of what it calls now
    if outage_wait_over(view, now):
        return _over(view, d, now)
    if not calls(view, d):
        return d  # nothing to call: accept, apply, review, or a stop only a person can clear
    return _parked_wait(view, d, health)


def _window_too_long(
    d: Decision, account: str, resets_at: datetime, wait_s: float, limit: float
) -> Decision:
    why = (
        f"the usage window of account {account} is spent until {stamp(resets_at)}, "
        f"{wait_s:.0f}s away, over the policy's max_quota_wait_s of {limit:.0f}s: wait until "
        "then and resume the goal by hand (`governor resume`, or `governor work retry` for "
        "the item), or run its profiles under an account with quota left"
    )
    return _as(d, "blocked", "none", why, "fleet.6", blocked_on="environment")


def _refused_window(view: GoalView) -> tuple[str, datetime, datetime] | None:
    """The goal's standing refusal by a spent usage window: account, reset, refused at."""
    plan = view.latest_plan
    if plan is not None and plan.status == "failed" and not plan.resumed:
        failure = plan.failure
        if failure is not None and failure.resets_at and failure.account:
            return failure.account, failure.resets_at, failure.at
    for work_id in sorted(view.windows):  # usually none: never every item of the plan
        item = view.work[work_id]
        finish = item.finish
        done = item.accepted or item.cancelled or item.running or item.fresh
        if done or finish is None or item.failure_class != "upstream":
            continue
        if finish.resets_at is not None and finish.account is not None:
            return finish.account, finish.resets_at, finish.at
    return None


def refused_by_window(view: GoalView) -> bool:
    """Whether a run of the goal stands refused by a spent usage window (cheap: the
    decision need not consult fleet.6 otherwise)."""
    plan = view.latest_plan
    failure = plan.failure if plan is not None else None
    return bool(view.windows) or (failure is not None and failure.resets_at is not None)


def _quota_stop(view: GoalView, d: Decision) -> Decision | None:
    """fleet.6 over the goal's own recorded refusal (see the module rules)."""
    limit = view.policy.max_quota_wait_s
    refused = _refused_window(view) if limit is not None else None
    if refused is None or limit is None:
        return None
    account, resets_at, at = refused
    wait_s = (resets_at - at).total_seconds()
    return _window_too_long(d, account, resets_at, wait_s, limit) if wait_s > limit else None


def _park(
    view: GoalView, now: datetime, d: Decision, health: UpstreamHealth, down: tuple[str, ...]
) -> Decision:
    if outage_wait_over(view, now):
        return _over(view, d, now)
    limit = view.policy.max_quota_wait_s
    reopens = health.next_probe_at
    if health.is_account and limit is not None and reopens is not None:
        wait_s = (reopens - now).total_seconds()
        if wait_s > limit:
            return _window_too_long(d, health.endpoint, reopens, wait_s, limit)
    why = parked_reason(health)
    outage = Outage(health.upstream, down, health.failing_since or now, health.probe_due_at, why)
    return _as(
        d,
        "waiting",
        "park",
        why,
        "fleet.4",
        blocked_on="upstream",
        not_before=outage.until,
        outage=outage,
    )


def _stop_time(view: GoalView, d: Decision) -> datetime | None:
    if d.work_ids:
        finish = view.work[d.work_ids[0]].finish
        return finish.at if finish else None
    plan = view.latest_plan
    return plan.failure.at if plan and plan.failure else None


def _resume_stopped(view: GoalView, d: Decision, upstreams: Upstreams) -> Decision | None:
    if (d.status, d.blocked_on) != ("blocked", "upstream"):
        return None
    stopped = _stop_time(view, d)
    for profile in calls(view, d):
        health = upstreams.get(profile)
        back = health.recovered_at if health and health.healthy else None
        if health is not None and back is not None and stopped is not None and back >= stopped:
            return _resume(d, health, upstreams, "fleet.5")
    return None


def fleet(view: GoalView, now: datetime, d: Decision, upstreams: Upstreams | None) -> Decision:
    """The goal's decision with the upstreams' health taken into account (the module rules)."""
    if d.status in ("succeeded", "cancelled") or d.exhausted is not None:
        return d
    stop = _quota_stop(view, d)
    if stop is not None:
        return stop
    if view.parked is not None:
        return _while_parked(view, now, d, upstreams)
    upstreams = upstreams or {}
    profiles = calls(view, d)
    down = tuple(p for p in profiles if (h := upstreams.get(p)) is not None and not h.healthy)
    if not down:
        return _resume_stopped(view, d, upstreams) or d
    if d.next_action == "run":
        healthy = tuple(w for w in d.work_ids if view.work[w].spec.profile not in down)
        if healthy:
            return d._replace(work_ids=healthy, reason=f"run {', '.join(healthy)}")
    first = upstreams[down[0]]
    same = tuple(p for p in down if upstreams[p].upstream == first.upstream)
    return _park(view, now, d, first, same)
