"""Explain's advice: one sentence, and the commands in it, each one runnable as printed.

Rules (SPEC §9, §12.10; issue 25 §2):
    * Environment and decision stops are not budget problems: "no policy change helps: a
      person must act", with what the person must do and the one verb that answers it
      (a worker's question: ``work retry GOAL ITEM --reason ANSWER``; the planner's:
      ``resume GOAL --reason ANSWER``).
    * The same failure again (``goal.same_failure``, or any run of charged failures with
      one recorded signature) is not a budget problem either: a budget only buys more of
      it, so the agent is to be fixed and no budget is advised.
    * A policy change is advised only when what-if shows it changes the outcome, and the
      advice says what changes (``Change.follows``).
    * Every command names the real ids and the store (``governor.analysis.runnable``) and
      is one the core would accept in the goal's state: a refused one is never printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, cast

from governor.analysis.runnable import (
    Advised,
    accept_work,
    accepted,
    answer,
    approve_plan,
    decline,
    go_on,
    grant,
    raise_to,
    reject_plan,
)
from governor.core.budgets import BY_FIELD
from governor.core.decision import Decision
from governor.core.evidence import Evidence
from governor.core.policy import LedgerName
from governor.core.question import question
from governor.core.rules.budget import ASKS, PARKS
from governor.core.view import GoalView


@dataclass(frozen=True, slots=True)
class FailureNote:
    seq: int
    what: str
    failure_class: str | None
    rule: str | None
    charged: bool
    why: str
    evidence: Evidence | None
    error: str


@dataclass(frozen=True, slots=True)
class Change:
    field: str
    before: Any
    after: Any
    follows: str = ""
    """What the what-if under the change shows would have followed (where it parts from
    the record, and how it decides there)."""


@dataclass(frozen=True, slots=True)
class Advice:
    """The advice sentence and the command lines it quotes (with the store named)."""

    text: str
    commands: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Situation:
    """What advice is given on: the goal's recorded view where it stands, when it is
    decided (``at``), and the store the commands must name."""

    goal_id: str
    view: GoalView | None
    at: datetime | None
    store_arg: str | None = None

    def offer(self, advised: Advised) -> str | None:
        """The command line of ``advised``, or None when the core would refuse it now."""
        if not accepted(advised, self.view, self.at):
            return None
        return advised.line(self.store_arg)


PERSON_MUST: Final = {
    "credential": "fix the credential",
    "billing": "add credit or quota to the vendor account",
    "no-response": "make the vendor reachable (its base URL, the network, the proxy)",
}
"""What a person must do about an environment stop, by the rule that classified it."""

REPROBED: Final = (
    "once it is there, governor looks again and goes on by itself, no command needed: "
    "`governor run` when it next starts, `governor serve` within its --reprobe interval "
    "(default 30 s), a Temporal workflow within its --reprobe interval (default 60 s)"
)
"""What happens to a missing binary's stop under each driver (the drivers' re-probe)."""

REPEATED: Final = 2
"""Charged failures in a row with one signature from which explain calls it the same
failure again (the rule ``max_same_failures`` may not have fired yet)."""


def _stopped_by(decision: Decision, notes: Sequence[FailureNote]) -> str | None:
    """The classification rule of the failure a stopped goal stopped on, if still noted."""
    if decision.rule == "goal.4":
        prefix = "plan "
    elif decision.rule == "goal.10" and decision.work_ids:
        prefix = f"{decision.work_ids[0]} attempt "
    else:
        return None
    last = next((n for n in reversed(notes) if n.what.startswith(prefix)), None)
    return last.rule if last is not None and last.failure_class == decision.blocked_on else None


def repeated(view: GoalView | None, decision: Decision) -> int:
    """The charged failures in a row with one signature of what the decision names: its
    items' (the most of any), else the planner's."""
    if view is None:
        return 0
    items = [view.work[w] for w in decision.work_ids if w in view.work]
    if items:
        return max(item.same_failures for item in items)
    return view.same_plan_failures


def _then(command: str | None, what: str) -> str:
    return f"; then `{command}` {what}" if command else ""


def _refused_item(view: GoalView) -> str | None:
    """The item a spent usage window stopped (None: the planner was)."""
    plan = view.latest_plan
    failure = plan.failure if plan is not None and not plan.resumed else None
    if failure is not None and failure.resets_at is not None:
        return None
    return min(view.windows, default=None)


def asking(decision: Decision, at: Situation) -> Advice | None:
    """The advice while the goal asks for more budget (SPEC §13.7): grant what it asked,
    or decline it — each command one the core would take now."""
    request = at.view.budget_request if at.view is not None else None
    if request is None or decision.rule not in (ASKS, PARKS):
        return None
    yes = at.offer(grant(at.goal_id, request.usd, request.attempts))
    no = at.offer(decline(at.goal_id))
    how = "".join(
        f"{sep}{what} `{c}`"
        for sep, what, c in ((" — ", "grant it with", yes), ("; or ", "decline it with", no))
        if c is not None
    )
    told = (
        f"the goal asks a person for more budget ({request.budget}){how}"
        if decision.rule == ASKS
        else f"the goal has not stopped: it waits for its pool to renew ({request.budget}); "
        f"a grant lets it go on now{how}"
    )
    return Advice(told, tuple(c for c in (yes, no) if c is not None))


def person(decision: Decision, notes: Sequence[FailureNote], at: Situation) -> Advice | None:
    """The advice when no policy change helps (None: a budget might)."""
    subject = decision.work_ids[0] if decision.work_ids else None
    rule = _stopped_by(decision, notes) if decision.blocked_on == "environment" else None
    if rule in PERSON_MUST:
        command = at.offer(go_on(at.goal_id, subject))
        return Advice(
            f"no policy change helps: a person must act — {PERSON_MUST[rule]} ({decision.reason})"
            + _then(command, "saying what changed"),
            (command,) if command else (),
        )
    if decision.rule == "fleet.6":  # an account's usage window reopens too far away
        subject = _refused_item(at.view) if at.view is not None else subject
        command = at.offer(go_on(at.goal_id, subject))
        return Advice(
            "no budget buys back the vendor's usage window: wait until it reopens, or run "
            f"the profiles under an account with quota left ({decision.reason})"
            + _then(command, "saying what changed"),
            (command,) if command else (),
        )
    if decision.blocked_on == "environment":
        return Advice(
            f"no policy change helps: a person must act — install what is missing ({decision.reason}); "
            f"{REPROBED}"
        )
    same = repeated(at.view, decision)
    if decision.rule in ("goal.same_failure", "work.same_failure") or same >= REPEATED:
        command = at.offer(go_on(at.goal_id, subject))
        told = (
            ""
            if decision.rule.endswith("same_failure")
            else f"the same failure {same} times in a row: "
        )
        return Advice(
            f"no policy change helps: a person must act — {told}{decision.reason}; fix the agent, "
            "its prompt or its environment (a larger budget only buys more of the same failure)"
            + _then(command, "saying what changed (the reason reaches the next prompt)"),
            (command,) if command else (),
        )
    if decision.blocked_on == "decision":
        asked = question(at.view, decision) if at.view is not None else None
        command = at.offer(answer(at.goal_id, asked.work_id if asked else subject))
        return Advice(
            f"no policy change helps: a person must act — answer the question ({decision.reason})"
            + (f" with `{command}`" if command else ""),
            (command,) if command else (),
        )
    return None


_WAITING: Final = {
    "waiting": "it waits for an outside service",
    "running": "a run is in flight",
    "awaiting_review": "it awaits an operator's review",
    "ready": "it is ready to go on",
}


def review(decision: Decision, at: Situation) -> Advice:
    """The advice while a proposal or items await an operator's review: the verbs that
    review them, each one the core would take now."""
    told = "the goal has not stopped: it awaits an operator's review"
    if decision.next_action == "review_plan" and decision.plan_id is not None:
        plan = decision.plan_id
        told += f" of plan {plan}"
        take = [at.offer(approve_plan(at.goal_id, plan))]
        back = at.offer(reject_plan(at.goal_id, plan))
        ways = ("approve it with", "reject it with")
    else:
        items = decision.work_ids
        told += f" of {', '.join(items)}" if items else ""
        take = [at.offer(accept_work(at.goal_id, work_id)) for work_id in items]
        back = next((c for w in items if (c := at.offer(go_on(at.goal_id, w)))), None)
        ways = ("accept with", "send one back with")
    commands = [c for c in take if c]
    if commands:
        told += f"; {ways[0]} " + ", ".join(f"`{c}`" for c in commands)
    if back:
        told += f"{', or' if commands else ';'} {ways[1]} `{back}`"
        commands.append(back)
    return Advice(told, tuple(commands))


def advise(
    decision: Decision,
    change: Change | None,
    notes: Sequence[FailureNote] = (),
    at: Situation | None = None,
) -> Advice:
    """The advice for a final decision and the change found (if any), its commands tried
    on ``at`` (without one, no command is offered)."""
    at = at or Situation("", None, None)
    early = asking(decision, at) or (
        review(decision, at) if decision.status == "awaiting_review" else None
    )
    if early is not None:
        return early
    if not decision.is_stopped:
        return Advice(f"the goal has not stopped: {_WAITING.get(decision.status, decision.status)}")
    if decision.status in ("succeeded", "cancelled"):
        return Advice(f"the goal {decision.status}; nothing to change")
    needed = person(decision, notes, at)
    if needed is not None:
        return needed
    if change is None:
        return Advice("no single budget change lets it go on: a person must act (see the reason)")
    how, command = _how(decision, change, at)
    return Advice(
        f"raise {change.field} from {change.before} to {change.after}: {how}; {change.follows}",
        (command,) if command else (),
    )


def _how(decision: Decision, change: Change, at: Situation) -> tuple[str, str | None]:
    """How to make the change: the ``raise`` that does it (if the core takes it), else for
    the goals to come."""
    budget = BY_FIELD[change.field]
    per_item = budget.scope == "item"
    later = f"set {change.field} = {change.after} in the goal file of new goals"
    if not budget.raisable or (per_item and not decision.work_ids):
        return later, None
    work = decision.work_ids[0] if per_item else None
    command = at.offer(raise_to(at.goal_id, cast(LedgerName, budget.name), change.after, work))
    if command is None:
        return later, None
    return f"`{command}`", command
