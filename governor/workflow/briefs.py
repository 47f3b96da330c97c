"""Briefs: what the planner and a worker are told, rendered from the goal's view.

Rules (SPEC §4 "Retry context", §7):
    * The planner sees the objective, the acceptance criteria, the current graph with
      each item's state, the budget ledger, the causes of prior failures and the
      operator's guidance (a rejection reason, a ``goal.resumed`` answer).
    * A worker sees its item, the item's prior causes and the operator's guidance (a
      ``work.retried`` answer).
    * An uncharged prior failure is presented as **lost** to an outside failure, never as
      "your work failed": telling an agent that a vendor's 503 was its fault feeds it a
      false story.
    * A profile's ``instructions`` (SPEC §7) follow the operator's guidance under their
      own heading, for every harness but ``python`` (whose agent gets them in its
      context, and a LangChain runnable as its system message); without instructions
      there is no such section.
    * Every text is bounded; a brief never grows with the length of the history.
"""

from __future__ import annotations

from datetime import datetime

from governor.core.decision import Decision
from governor.core.headroom import item_attempts_left, must_say_complete
from governor.core.rules.decide import decide
from governor.core.view import GoalView, WorkState
from governor.workflow.prompts import render

PLANNER_SCHEMA = """{"decision": "apply" | "complete",
 "rationale": "why this plan",
 "work": [{"key": "short-key", "title": "…", "objective": "…",
           "acceptance": ["…"], "depends_on": ["an earlier key or an accepted work id"],
           "profile": "optional: the goal's profile that runs this item"}],
 "milestone": {"title": "…", "objective": "…"}}
or, when a person must decide before you can plan: {"status": "decision", "question": "…"}"""

WORKER_SCHEMA = """{"status": "done" | "failed" | "decision",
 "summary": "what you did",
 "question": "only for decision: what a person must decide",
 "acceptance": [{"criterion": "<the criterion, copied exactly>",
                 "status": "satisfied" | "unsatisfied" | "unknown"}]}"""

_LIMIT = 600


def _instructions(view: GoalView, profile_name: str) -> str:
    """The section of the prompt that holds the profile's instructions (or nothing)."""
    created = view.created
    assert created is not None
    profile = created.profiles.get(profile_name)
    text = (profile.instructions or "").strip() if profile is not None else ""
    if not text or profile is None or profile.harness == "python":
        return ""
    return f"\n\n# Instructions for this agent\n{text}"


def _clip(text: str | None, limit: int = _LIMIT) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else "…" + text[-limit:]


def _bullets(items: tuple[str, ...] | list[str], empty: str = "(none)") -> str:
    return "\n".join(f"- {item}" for item in items) if items else empty


def _lost(item: WorkState) -> bool:
    return item.failure_class in ("environment", "upstream")


def prior_of_item(item: WorkState) -> str:
    """The cause of an item's latest attempt, as the next attempt should hear it."""
    finish = item.finish
    if item.attempt == 0 or finish is None:
        return "This is the first attempt."
    if finish.outcome == "succeeded":
        return f"Attempt {item.attempt} passed; the item was reopened."
    if _lost(item):
        return (
            f"Attempt {item.attempt} was lost to an outside failure before it could do any work "
            "(the tools or the vendor were unavailable). Nothing you did caused it; start afresh."
        )
    if item.failure_class == "decision":
        return f"Attempt {item.attempt} stopped to ask a person: {_clip(finish.error)}"
    lines = [f"Attempt {item.attempt} {finish.outcome.replace('_', ' ')}: {_clip(finish.error)}"]
    if finish.acceptance and finish.acceptance.unsatisfied:
        lines.append("Unsatisfied: " + "; ".join(finish.acceptance.unsatisfied))
    return "\n".join(lines)


def _graph(view: GoalView, decision: Decision) -> str:
    states = {w: (led.status, led.next_action) for w, led in decision.ledger.work.items()}
    lines = []
    for item in view.work.values():
        status, _ = states[item.work_id]
        deps = f" (after {', '.join(item.spec.depends_on)})" if item.spec.depends_on else ""
        lines.append(
            f"- {item.work_id}: {item.spec.title}{deps} — {status}, "
            f"{item.charged_attempts}/{item.max_attempts} charged attempts"
        )
    return "\n".join(lines) if lines else "(no work yet: this is the first plan)"


def _ledger(decision: Decision) -> str:
    r, a = decision.ledger.replans, decision.ledger.attempts
    return (
        f"plans: {r.charged} of {r.limit} charged used ({r.remaining} left)\n"
        f"attempts across the goal: {a.charged} of {a.limit} charged used ({a.remaining} left)"
    )


def _planner_prior(view: GoalView) -> str:
    lines = []
    # the latest plan with an outcome: the one being requested now has none yet
    plan = next((p for p in reversed(view.plans.values()) if p.status != "requested"), None)
    if plan is not None and plan.status == "failed" and plan.failure is not None:
        if plan.failure_class in ("environment", "upstream"):
            lines.append(
                f"Plan {plan.plan_id} was lost to an outside failure; it says nothing about your plan."
            )
        else:
            lines.append(f"Plan {plan.plan_id} failed: {_clip(plan.failure.error)}")
    if plan is not None and plan.status == "rejected":
        lines.append(f"Plan {plan.plan_id} was rejected by an operator: {_clip(plan.rejection)}")
    for item in view.items_of(view.active_plan):
        if not item_attempts_left(view, item) and not item.accepted:
            lines.append(f"{item.work_id} exhausted its attempts. Last: {prior_of_item(item)}")
    return "\n".join(lines) or "Nothing has failed yet."


def _profiles(view: GoalView) -> str:
    names = sorted(view.created.profiles) if view.created else []
    return ", ".join(f"'{name}'" for name in names)


def _rules(view: GoalView, trigger: str) -> str:
    policy = view.policy
    lines = [
        f"- Propose at most {policy.max_work_items_per_plan} work items; the goal may hold "
        f"{policy.max_total_work_items - len(view.work)} more in all.",
        "- Keys are lowercase letters, digits and dashes; depends_on names earlier keys of this "
        "proposal or accepted work ids shown above.",
        "- Every work item needs acceptance criteria a worker can check.",
        f"- An item may name the profile that runs it: one of {_profiles(view)}; without one, "
        f"'{view.created.worker if view.created else 'worker'}' runs it.",
    ]
    if must_say_complete(view):
        lines.append("- The goal has used all its milestones: your decision must be 'complete'.")
    elif trigger == "milestone":
        lines.append(
            "- Every item of the last plan is done: say 'complete' if the goal's criteria are met, "
            "or propose the next milestone."
        )
    return "\n".join(lines)


def planner_prompt(view: GoalView, trigger: str, now: datetime) -> str:
    """The planner's prompt for the next plan."""
    created = view.created
    assert created is not None
    decision = decide(view, now)
    return render(
        "planner",
        goal_id=view.goal_id,
        title=created.title,
        objective=created.objective,
        acceptance=_bullets(created.acceptance),
        trigger=trigger,
        graph=_graph(view, decision),
        ledger=_ledger(decision),
        prior=_planner_prior(view),
        guidance=_clip(view.guidance) or "(none)",
        instructions=_instructions(view, created.planner),
        rules=_rules(view, trigger),
        schema=PLANNER_SCHEMA,
    )


def _done(item: WorkState) -> str:
    summary = item.finish.reason if item.finish else None
    return f"{item.work_id} ({item.spec.title}) is done: {_clip(summary, 300) or 'no summary'}"


def worker_prompt(view: GoalView, item: WorkState) -> str:
    """A worker's prompt for the next attempt of ``item``."""
    created = view.created
    assert created is not None
    context = _bullets(
        [_done(view.work[w]) for w in item.spec.depends_on if w in view.work], "(no dependencies)"
    )
    key = item.work_id.removeprefix(f"{item.plan_id}-")
    return render(
        "worker",
        goal_id=view.goal_id,
        goal_title=created.title,
        work_id=item.work_id,
        work_key=key,
        title=item.spec.title,
        objective=item.spec.objective,
        acceptance=_bullets(item.spec.acceptance),
        context=context,
        prior=prior_of_item(item),
        guidance=_clip(item.guidance) or "(none)",
        instructions=_instructions(view, item.spec.profile),
        schema=WORKER_SCHEMA,
    )
