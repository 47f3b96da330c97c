"""Goal decisions: SPEC §6.2 as one ordered table of named rules, with the full ledger.

Rules (first match wins; work item rules live in ``governor.core.work``):
    goal.1  cancelled -> cancelled; plan completed -> succeeded
    goal.2  cumulative runtime or cost over its limit -> budget_exhausted
    goal.3  latest plan proposed -> apply (or review_plan); rejected or failed charged
            -> plan (retry); requested without outcome -> running/wait
            (goal.same_failure: failed charged, and the planner's last max_same_failures
            charged failures share one signature -> blocked on work, SPEC §12.10)
    goal.4  latest plan failed uncharged and not resumed -> blocked on environment or
            decision; upstream: blocked at the consecutive bound, waiting before
            not_before, else fall through
    goal.5  no applied plan -> plan (initial)
    goal.6  every item of the active plan settled, one at least accepted -> plan (milestone)
    goal.7  items in review -> accept, or awaiting_review/review_work
    goal.8  dispatchable items and a free slot -> run (budget_exhausted at the total)
    goal.9  items running -> running/wait; items cooling down -> waiting/wait
    goal.10 an item stopped on environment, decision or the upstream bound -> blocked
    goal.11 items out of budget -> plan (replan)
    goal.12 fallback -> blocked on work: no legal progress action
    fleet.* the shared health of the upstreams, over the rule that fired
            (``governor.core.parking``): park, wait parked, resume

Wherever a rule says ``ready/plan``, charged replans must be below ``max_replans`` and
the raw plan count below ``max_plan_records``; otherwise ``budget_exhausted`` naming
``replans`` (first) or ``plan_records``. Replanning to go on with work (rules 6 and 11)
also needs charged goal attempts below ``max_total_attempts``, else ``budget_exhausted``
naming ``total_attempts`` before the others (SPEC §11.4). Rules 6-11 look at the active
plan's items.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from operator import attrgetter
from typing import Any, Final, NamedTuple

from governor.core.decision import Action, BlockedOn, Decision, Exhausted, Status, WorkDecision
from governor.core.events import PlanTrigger
from governor.core.headroom import (
    attempts_left_for,
    cost_over,
    cost_within,
    plan_records_left,
    repeats_itself,
    replans_left,
    runtime_over,
    runtime_within,
    total_attempts_left,
    total_attempts_remaining,
    uncharged_window_full,
)
from governor.core.ledger import NO_LEDGER, Ledger
from governor.core.memo import memo_of
from governor.core.parking import Upstreams, fleet
from governor.core.text import count, last_line, same_way, stamp
from governor.core.view import GoalView, PlanState

_status: Final = attrgetter("status")
"""A ``WorkDecision``'s status."""


Head = tuple[Status, Action, str, None, None, Exhausted | None]
"""A decision's head as ``replay --json`` prints it: status, next action, reason,
blocked_on, not_before and exhausted (in ``Decision``'s order of these fields)."""


class _Ctx(NamedTuple):
    view: GoalView
    now: datetime
    ledger: Ledger
    items: tuple[WorkDecision, ...]
    statuses: frozenset[str]
    """The statuses among ``items``: a rule skips its scan when none it looks for is there."""

    def out(
        self,
        status: Status,
        action: Action,
        reason: str,
        rule: str,
        *,
        blocked_on: BlockedOn | None = None,
        not_before: datetime | None = None,
        exhausted: Exhausted | None = None,
        trigger: PlanTrigger | None = None,
        plan_id: str | None = None,
        work_ids: tuple[str, ...] = (),
    ) -> Decision:
        return Decision(
            status=status,
            next_action=action,
            reason=reason,
            rule=rule,
            ledger=self.ledger,
            blocked_on=blocked_on,
            not_before=not_before,
            exhausted=exhausted,
            trigger=trigger,
            plan_id=plan_id,
            work_ids=work_ids,
            items=self.items,
        )

    def gate(  # noqa: PLR0917 - the two outcomes of a human gate
        self,
        auto: bool,
        action: Action,
        review: Action,
        what: str,
        then: str,
        rule: str,
        **extra: Any,
    ) -> Decision:
        """``ready/<action>`` when the policy lets governor go on alone (``auto_apply``,
        ``accept_passing``), else ``awaiting_review/<review>`` on the operator."""
        if auto:
            return self.out("ready", action, f"{what}; {then}", rule, **extra)
        why = f"{what}; awaiting an operator's review"
        return self.out("awaiting_review", review, why, rule, blocked_on="operator", **extra)

    def plan(self, trigger: PlanTrigger, why: str, rule: str) -> Decision:
        policy = self.view.policy
        if not attempts_left_for(self.view, trigger):
            why += (
                f", but the goal's charged attempts are spent ({self.view.charged_attempts} of "
                f"{policy.max_total_attempts}): a new plan would have none to run"
            )
            return self.out("budget_exhausted", "none", why, rule, exhausted="total_attempts")
        if not replans_left(self.view):
            why += f", but its charged plans are spent ({self.view.charged_replans} of {policy.max_replans})"
            return self.out("budget_exhausted", "none", why, rule, exhausted="replans")
        if not plan_records_left(self.view):
            why += f", but the goal holds {count(self.view.plans_used, 'plan')}, its limit of plan records"
            return self.out("budget_exhausted", "none", why, rule, exhausted="plan_records")
        used = f"charged {self.view.charged_replans} of {policy.max_replans} used"
        return self.out("ready", "plan", f"{why}; plan ({trigger}, {used})", rule, trigger=trigger)


def _over(ctx: _Ctx) -> Decision | None:
    if ctx.view.cancelled:
        return ctx.out("cancelled", "none", "the goal was cancelled", "goal.1")
    if ctx.view.completed:
        return ctx.out("succeeded", "none", "the planner declared the goal complete", "goal.1")
    return None


def _limits(ctx: _Ctx) -> Decision | None:
    view, policy = ctx.view, ctx.view.policy
    if runtime_over(view):
        why = f"cumulative runtime {view.runtime_s:.0f}s is over its limit of {policy.max_runtime_s:.0f}s"
        return ctx.out("budget_exhausted", "none", why, "goal.2", exhausted="runtime")
    if cost_over(view):
        why = (
            f"cumulative cost ${view.cost_usd:.2f} is over its limit of ${policy.max_cost_usd:.2f}"
        )
        return ctx.out("budget_exhausted", "none", why, "goal.2", exhausted="cost")
    return None


def _latest_plan(ctx: _Ctx) -> Decision | None:
    plan = ctx.view.latest_plan
    if plan is None:
        return None
    pid = plan.plan_id
    if plan.status == "proposed":
        what = f"plan {pid} was proposed"
        auto = ctx.view.policy.auto_apply
        return ctx.gate(auto, "apply", "review_plan", what, "apply it", "goal.3", plan_id=pid)
    if plan.status == "rejected":
        return ctx.plan("retry", f"plan {pid} was rejected", "goal.3")
    if plan.status == "failed" and plan.failure_class is None:
        return _failed_charged(ctx, plan)
    if plan.status == "requested":
        why = f"plan {pid} was requested and is running"
        return ctx.out("running", "wait", why, "goal.3", plan_id=pid)
    return None


def _failed_charged(ctx: _Ctx, plan: PlanState) -> Decision:
    """Rule 3 after a charged planner failure: plan again (``retry``), unless the planner's
    last ``max_same_failures`` charged failures share one signature (SPEC §12.10): then the
    goal stops, blocked on ``work`` — another call would fail the same way."""
    text = plan.failure.error if plan.failure else None
    view = ctx.view
    if view.same_plan_failures and repeats_itself(view):
        why = same_way(view.same_plan_failures, text, "the planner ")
        return ctx.out("blocked", "none", why, "goal.same_failure", blocked_on="work")
    error = last_line(text, "no error recorded")
    return ctx.plan("retry", f"plan {plan.plan_id} failed (charged): {error}", "goal.3")


def _planner_stop(ctx: _Ctx) -> Decision | None:
    view, plan = ctx.view, ctx.view.latest_plan
    if plan is None or plan.status != "failed" or plan.failure_class is None or plan.resumed:
        return None
    failure = plan.failure
    error = failure.error if failure else None
    if plan.failure_class == "environment":
        ref = failure.evidence.ref if failure and failure.evidence else None
        why = f"planning could not start; a required precondition is missing: {last_line(error, ref or 'unknown')}"
        return ctx.out("blocked", "none", why, "goal.4", blocked_on="environment")
    if plan.failure_class == "decision":
        why = f"the planner needs a person to decide: {last_line(error, 'no question given')}"
        return ctx.out("blocked", "none", why, "goal.4", blocked_on="decision")
    if uncharged_window_full(view):
        n = view.consecutive_uncharged_plans
        why = f"blocked waiting on an outside service after {count(n, 'consecutive uncharged planner failure')}"
        return ctx.out("blocked", "none", why, "goal.4", blocked_on="upstream")
    if plan.not_before is not None and ctx.now < plan.not_before:
        why = f"the outside service refused plan {plan.plan_id} (uncharged); waiting until {stamp(plan.not_before)}"
        return ctx.out(
            "waiting", "wait", why, "goal.4", blocked_on="upstream", not_before=plan.not_before
        )
    return None


def _first_plan(ctx: _Ctx) -> Decision | None:
    if ctx.view.active_plan is None:
        return ctx.plan("initial", "no plan has been applied yet", "goal.5")
    return None


_SETTLED: Final = frozenset({"succeeded", "cancelled"})


def _milestone(ctx: _Ctx) -> Decision | None:
    # A cancelled item is settled too; at least one accepted item makes it a milestone.
    if "succeeded" not in ctx.statuses or not ctx.statuses <= _SETTLED:
        return None
    statuses = [d.status for d in ctx.items]
    plan_id = ctx.view.active_plan.plan_id if ctx.view.active_plan else "?"
    cancelled = statuses.count("cancelled")
    why = f"every item of plan {plan_id} is accepted"
    if cancelled:
        why = f"every item of plan {plan_id} is settled ({statuses.count('succeeded')} accepted, {cancelled} cancelled)"
    return ctx.plan("milestone", why, "goal.6")


def _review(ctx: _Ctx) -> Decision | None:
    if "in_review" not in ctx.statuses:
        return None
    ids = tuple([d.work_id for d in ctx.items if d.status == "in_review"])
    if not ids:
        return None
    what, auto = f"{', '.join(ids)} passed", ctx.view.policy.accept_passing
    return ctx.gate(auto, "accept", "review_work", what, "accept", "goal.7", work_ids=ids)


_RUNNABLE_OR_HELD: Final = frozenset({("ready", "run"), ("blocked", "retry")})


def _dispatch(ctx: _Ctx) -> Decision | None:
    return _dispatch_on(ctx.view, ctx.ledger, ctx.items, ctx.statuses)


def _dispatch_on(
    view: GoalView, ledger: Ledger, items: tuple[WorkDecision, ...], statuses: frozenset[str]
) -> Decision | None:
    """Rule 8 (``_dispatch``) on its inputs; the decision is made whole (``_Ctx.out``)."""
    taken = _dispatch_head(view, statuses, _runnable, items)
    if taken is None:
        return None
    (status, action, why, _, _, exhausted), ids = taken
    return Decision(
        status=status,
        next_action=action,
        reason=why,
        rule="goal.8",
        ledger=ledger,
        exhausted=exhausted,
        work_ids=ids,
        items=items,
    )


def _runnable(items: tuple[WorkDecision, ...], held: bool) -> list[str]:
    """The items rule 8 may run, in order: ready ones, and blocked ones to retry when
    ``held`` (``retry_blocked``)."""
    if held:
        return [d.work_id for d in items if (d.status, d.next_action) in _RUNNABLE_OR_HELD]
    return [d.work_id for d in items if d.status == "ready" and d.next_action == "run"]


def _dispatch_head(
    view: GoalView,
    statuses: frozenset[str],
    runnable: Callable[[Any, bool], list[str]],
    items: Any,
    kept: dict[tuple[bool, int], tuple[Head, tuple[str, ...]]] | None = None,
) -> tuple[Head, tuple[str, ...]] | None:
    """Rule 8 on its inputs: the decision's head (``Head``) and its work ids.
    ``runnable(items, held)`` lists the items it may run (``_runnable``, or a scan the
    lean steps kept); ``kept`` holds the runs offered from those same items, by
    ``retry_blocked`` and how many (a scan's ``runs``)."""
    policy = view.policy
    free = policy.max_parallel_work - view.running_items
    held = policy.retry_blocked
    if free <= 0 or not ("ready" in statuses or (held and "blocked" in statuses)):
        return None
    ready = runnable(items, held)
    if not ready:
        return None
    if not total_attempts_left(view):
        why = (
            f"the goal's charged attempts are spent ({view.charged_attempts} of "
            f"{policy.max_total_attempts})"
        )
        return ("budget_exhausted", "none", why, None, None, "total_attempts"), ()
    # never offer more runs than the goal's total budget can start
    most = min(free, total_attempts_remaining(view))
    if kept is not None and (offered := kept.get((held, most))) is not None:
        return offered
    ids = tuple(ready[:most])
    run: tuple[Head, tuple[str, ...]] = (
        ("ready", "run", f"run {', '.join(ids)}", None, None, None),
        ids,
    )
    if kept is not None:
        kept[held, most] = run
    return run


def _running_on(ledger: Ledger, items: tuple[WorkDecision, ...]) -> Decision:
    """Rule 9 with items running (``_in_flight``): wait on them."""
    running = _running_ids(items)
    why = f"{', '.join(running)} running"
    return Decision(
        status="running",
        next_action="wait",
        reason=why,
        rule="goal.9",
        ledger=ledger,
        work_ids=running,
        items=items,
    )


def _running_ids(items: tuple[WorkDecision, ...]) -> tuple[str, ...]:
    return tuple([d.work_id for d in items if d.status == "running"])


def _in_flight(ctx: _Ctx) -> Decision | None:
    if "running" in ctx.statuses:
        return _running_on(ctx.ledger, ctx.items)
    if "waiting" not in ctx.statuses:
        return None
    # the first item of the earliest cooldown
    first, until = None, None
    for d in ctx.items:
        if (
            d.status == "waiting"
            and (when := d.not_before) is not None
            and (until is None or when < until)
        ):
            first, until = d, when
    if first is None or until is None:
        return None
    why = f"{first.work_id} is waiting on an outside service until {stamp(until)}"
    return ctx.out(
        "waiting",
        "wait",
        why,
        "goal.9",
        blocked_on="upstream",
        not_before=until,
        work_ids=(first.work_id,),
    )


def _stopped_item(ctx: _Ctx) -> Decision | None:
    if "blocked" not in ctx.statuses:
        return None
    for d in ctx.items:
        if (d.status, d.next_action) == ("blocked", "none") and d.blocked_on != "work":
            why = f"{d.work_id}: {d.reason}"
            return ctx.out(
                "blocked", "none", why, "goal.10", blocked_on=d.blocked_on, work_ids=(d.work_id,)
            )
    return None


def _replan(ctx: _Ctx) -> Decision | None:
    if "budget_exhausted" not in ctx.statuses:
        return None
    stopped = [d for d in ctx.items if d.status == "budget_exhausted"]
    if not stopped:
        return None
    spent = [d.work_id for d in stopped if d.exhausted != "same_failures"]
    same = [d.work_id for d in stopped if d.exhausted == "same_failures"]
    whys = []
    if spent:
        whose = "its" if len(spent) == 1 else "their"
        limits = sorted({ctx.view.work[w].max_attempts for w in spent})
        # SPEC §6.1 rule 9's words for every N, "1 attempts" too (``work.exhausted_its``)
        what = f"{limits[0]} attempts" if len(limits) == 1 else "attempts"
        whys.append(f"{', '.join(spent)} exhausted {whose} {what}")
    for work_id in same:  # SPEC §12.10: more tries would not help it
        n = ctx.view.work[work_id].same_failures
        whys.append(f"{work_id} failed the same way {n} times in a row")
    return ctx.plan("replan", "; ".join(whys), "goal.11")


def _fallback(ctx: _Ctx) -> Decision | None:
    view, hints = ctx.view, []
    held = [d.work_id for d in ctx.items if (d.status, d.next_action) == ("blocked", "retry")]
    if held:
        hints.append(f"{', '.join(held)} await an operator's retry (retry_blocked is off)")
    for d in ctx.items:
        dead = [
            w
            for w in view.work[d.work_id].spec.depends_on
            if w in view.work and view.work[w].cancelled
        ]
        if d.next_action == "wait_for_dependencies" and dead:
            hints.append(f"{d.work_id} waits for cancelled {', '.join(dead)}")
    why = "; ".join(["no legal progress action", *hints])
    return ctx.out("blocked", "none", why, "goal.12", blocked_on="work")


GOAL_RULES: Final[tuple[Callable[[_Ctx], Decision | None], ...]] = (
    _over,
    _limits,
    _latest_plan,
    _planner_stop,
    _first_plan,
    _milestone,
    _review,
    _dispatch,
    _in_flight,
    _stopped_item,
    _replan,
    _fallback,
)
"""The goal rules of SPEC §6.2, in order; the first that returns a decision wins."""

AFTER_DISPATCH: Final = GOAL_RULES[8:]
"""Rules 9-12: what ``decide`` scans once rules 1-8 passed."""

ITEM_RULES: Final = GOAL_RULES[5:]
"""Rules 6-12, on the active plan's items: all ``decide`` runs while the latest plan is
the applied one and the goal is neither over nor past a limit (``_goal_rules_pass``)."""


def _goal_rules_pass(view: GoalView) -> bool:
    """Rules 1-5 pass over the view (each returns ``None``), checked in one go.

    Rule 1: not cancelled, not completed. Rule 2: runtime and cost within their limits.
    Rules 3 and 4 act on a latest plan that is proposed, rejected, failed or requested:
    an applied one passes both. Rule 5: there is an active plan.
    """
    latest = view.latest_plan
    return (
        latest is not None
        and latest.status == "applied"
        and view.active_plan is not None
        and not view.cancelled
        and not view.completed
        and runtime_within(view)
        and cost_within(view)
    )


def decide(
    view: GoalView,
    now: datetime,
    *,
    with_ledger: bool = True,
    upstreams: Upstreams | None = None,
) -> Decision:
    """The goal's decision (SPEC §6.2), with its item decisions and the full ledger.

    The item decisions are kept on the view (``governor.core.memo``): only those an
    event may have changed since the last call are taken again. ``with_ledger=False``
    skips the ledger (``NO_LEDGER``) and every item outside the active plan: the same
    status, action and reason, for callers that only act on them (what-if, simulation,
    the runner). ``upstreams`` is the shared health of the upstreams the goal's profiles
    reach (profile name -> record), an input like ``now`` (``governor.core.parking``);
    without it only a recorded park holds the goal.
    """
    active = view.active_plan
    active_ids = view.items_by_plan.get(active.plan_id, ()) if active else ()
    decided = memo_of(view)
    if with_ledger:
        decided.update(view, now, None)
        ledger = decided.ledger(view)
    else:
        decided.update(view, now, active_ids)
        ledger = NO_LEDGER
    items = tuple(map(decided.decisions.__getitem__, active_ids))
    statuses = frozenset(map(_status, items))
    decision, rules = None, GOAL_RULES
    if _goal_rules_pass(view):
        rules = ITEM_RULES
        if "in_review" not in statuses and not ("succeeded" in statuses and statuses <= _SETTLED):
            # rules 6 and 7 pass too (``_milestone``, ``_review``): the usual outcomes of
            # rules 8 and 9 without the rules' context (one decision after every event)
            decision = _dispatch_on(view, ledger, items, statuses)
            if decision is None and "running" in statuses:
                decision = _running_on(ledger, items)
            rules = AFTER_DISPATCH
    if decision is None:
        ctx = _Ctx(view=view, now=now, ledger=ledger, items=items, statuses=statuses)
        for rule in rules:  # pragma: no branch - the fallback rule always decides
            decision = rule(ctx)
            if decision is not None:
                break
    assert decision is not None, "the fallback rule always decides"
    if view.parked is None and not upstreams:  # nothing known to fail, nothing parked
        return decision
    return fleet(view, now, decision, upstreams)


class _Scan(NamedTuple):
    """What rules 7-9 read of the active plan's item decisions, scanned once per pattern
    of their statuses and actions (``decide_head``)."""

    statuses: frozenset[str]
    ready: list[str]
    """``_runnable(items, False)``."""
    ready_or_held: list[str]
    """``_runnable(items, True)``."""
    running: str
    """Rule 9's reason with items running (``_running_on``)."""
    runs: dict[tuple[bool, int], tuple[Head, tuple[str, ...]]]
    """Rule 8's runs offered from these items, by ``retry_blocked`` and how many."""


def _scan(items: tuple[WorkDecision, ...]) -> _Scan:
    return _Scan(
        frozenset(map(_status, items)),
        _runnable(items, False),
        _runnable(items, True),
        f"{', '.join(_running_ids(items))} running",
        {},
    )


def _kept_runnable(scan: _Scan, held: bool) -> list[str]:
    return scan.ready_or_held if held else scan.ready


_SCANS_KEPT: Final = 1024
"""Scans a memo keeps at most (``DecisionMemo.scans``; then it starts again)."""


def decide_head(view: GoalView, now: datetime) -> Head | None:
    """The head of ``decide(view, now)`` when its short path of rules 8 and 9 takes it and
    nothing is parked, without the ``Decision``, its ledger and its items; ``None`` when
    another rule may fire (then call ``decide``, which finds the item decisions taken).

    For the lean steps of ``replay --json`` (``governor.render.lines``), whose ledger is
    laid out from ``DecisionMemo.relaid``: the item decisions are brought up to date as
    ``decide`` with the ledger does (every item). What rules 7-9 read of the active
    plan's items is scanned once per plan and pattern of statuses and actions (the memo
    keeps the scans: a replay repeats a few patterns). ``tests/test_lean_steps.py`` holds
    each head equal to ``decide``'s.
    """
    decided = memo_of(view)
    decided.update(view, now, None)
    if view.parked is not None or not _goal_rules_pass(view):
        return None
    active = view.active_plan
    assert active is not None, "rule 5 passed"
    ids = view.items_by_plan.get(active.plan_id, ())
    # the plan (its items' ids) and their statuses and actions in order: the scan
    key = (active.plan_id, tuple(map(decided.pairs.__getitem__, ids)))
    scans = decided.scans
    scan = scans.get(key)
    if scan is None:
        if len(scans) >= _SCANS_KEPT:
            scans.clear()
        scan = scans[key] = _scan(tuple(map(decided.decisions.__getitem__, ids)))
    statuses = scan.statuses
    if "in_review" in statuses:
        return None  # rule 7 fires (rule 6, every item settled, leaves none to run or wait on)
    taken = _dispatch_head(view, statuses, _kept_runnable, scan, scan.runs)
    if taken is not None:
        return taken[0]
    if "running" in statuses:
        return ("running", "wait", scan.running, None, None, None)
    return None
