"""What a finished run adds to a goal: its events, the automatic acceptance that may join
them in the same append (issue 12), and its account on the progress line. The runner and
the Temporal workflow build a finish through these."""

from __future__ import annotations

from datetime import datetime

from governor.core import verbs
from governor.core.charges import RunEvent, describe
from governor.core.events import Event
from governor.core.fold import fold
from governor.core.rules.decide import decide
from governor.core.rules.decider import Decider
from governor.core.view import GoalView
from governor.workflow.run import WorkerRun, attempt_events


def finish_events(
    view: GoalView,
    *,
    work_id: str,
    run_id: str,
    run: WorkerRun,
    at: datetime,
    decider: Decider | None = None,
) -> list[Event]:
    """A finished worker run's events: its ``attempt.finished``, and its acceptance when
    it is automatic (``auto_accepted``; ``decider``: the view's, when it has one)."""
    finished = attempt_events(view, work_id=work_id, run_id=run_id, run=run, at=at)
    return auto_accepted(view, finished, work_id, decider)


def auto_accepted(
    view: GoalView, finished: list[Event], work_id: str, decider: Decider | None = None
) -> list[Event]:
    """``finished`` (built on ``view``), and the item's ``work.accepted`` when the decision
    right after them accepts it without an operator (``accept_passing``): what the next
    step would append on its own, in the same transaction.

    Given the view's ``decider`` (a runner's), the finish is folded into ``view`` itself,
    once (the append folds only what follows it: ``governor.drive.append``), and decided
    for what changed; otherwise into a copy, decided from scratch."""
    last = finished[-1] if finished else None
    if (
        last is None
        or last.type != "attempt.finished"
        or last.outcome != "succeeded"
        or not view.policy.accept_passing
    ):
        return finished
    # the upstreams' health does not bear on an acceptance (it calls no agent); a park does,
    # and the view holds it
    if decider is not None and decider.view is view:
        after = fold(view, finished)
        decision = decider.decide(last.at, with_ledger=False)
    else:
        after = fold(view.copy(), finished)
        decision = decide(after, last.at, with_ledger=False)
    if decision.status != "ready" or decision.next_action != "accept":
        return finished
    if work_id not in decision.work_ids:
        return finished
    return [*finished, *verbs.accept_work(after, work_id=work_id, at=last.at, actor="governor")]


def describe_run(event: Event) -> str:
    """The progress line's account of a finished run (charged or not, its tries)."""
    if isinstance(event, RunEvent):
        return describe(event)
    return event.type  # pragma: no cover - a run always ends in one of RunEvent
