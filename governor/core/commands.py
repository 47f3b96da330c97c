"""Operator verbs as values: what the CLI parsed, or what a driver's message carries.

Rules (SPEC §3, §12.11):
    * ``OperatorVerb`` names one verb of ``governor.core.verbs`` and its arguments;
      ``apply_verb`` runs that verb, so the CLI, a Temporal update (its validator and its
      handler) and any other driver refuse and record exactly the same things.
    * Nothing here is recorded: it returns the events the verb would append on the view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal

from governor.core import verbs
from governor.core.events import Event
from governor.core.policy import LedgerName
from governor.core.record import apply_plan
from governor.core.record_budget import decline_budget, grant_budget
from governor.core.view import GoalView
from governor.errors import InputError

VerbName = Literal[
    "answer",
    "resume",
    "cancel",
    "raise",
    "plan approve",
    "plan reject",
    "work accept",
    "work retry",
    "work cancel",
    "work reopen",
    "work abandon",
    "grant",
    "decline",
]


@dataclass(frozen=True, slots=True)
class OperatorVerb:
    """One operator verb: its name, who gives it, and its arguments."""

    verb: VerbName
    actor: str
    reason: str | None = None
    """Why; for ``answer`` (and a decision's ``resume`` / ``work retry``) the answer."""
    plan: str | None = None
    """The plan, for ``plan approve|reject``."""
    item: str | None = None
    """The work item, for ``work …``."""
    ledger: LedgerName | None = None
    """For ``raise``: the ledger to raise (``to``: its new limit; ``work``: its item)."""
    to: float | None = None
    work: str | None = None
    usd: float | None = None
    """For ``grant``: US dollars granted (with ``attempts``: both None, what was asked)."""
    attempts: int | None = None
    """For ``grant``: charged attempts granted."""
    expires_s: float | None = None
    """For ``grant``: seconds until the grant expires (None: it does not)."""


def _named(value: str | None, what: str) -> str:
    if not value:
        raise InputError(f"name the {what}")
    return value


def _raise(o: OperatorVerb, v: GoalView, t: datetime) -> list[Event]:
    if o.ledger is None or o.to is None:
        raise InputError("raise needs a ledger and a new limit")
    return verbs.raise_budget(
        v, ledger=o.ledger, to=o.to, reason=o.reason or "", at=t, actor=o.actor, work_id=o.work
    )


def _grant(o: OperatorVerb, v: GoalView, t: datetime) -> list[Event]:
    return grant_budget(
        v, usd=o.usd, attempts=o.attempts, expires_s=o.expires_s,
        reason=_named(o.reason, "reason"), at=t, actor=o.actor,
    )  # fmt: skip


_VERBS: Final[dict[str, Callable[[OperatorVerb, GoalView, datetime], list[Event]]]] = {
    "answer": lambda o, v, t: verbs.answer(v, answer=o.reason or "", at=t, actor=o.actor),
    "resume": lambda o, v, t: verbs.resume_goal(v, reason=o.reason or "", at=t, actor=o.actor),
    "cancel": lambda o, v, t: verbs.cancel_goal(v, reason=o.reason, at=t, actor=o.actor),
    "raise": _raise,
    "plan approve": lambda o, v, t: apply_plan(
        v, plan_id=_named(o.plan, "plan"), at=t, actor=o.actor
    ),
    "plan reject": lambda o, v, t: verbs.reject_plan(
        v, plan_id=_named(o.plan, "plan"), reason=o.reason or "", at=t, actor=o.actor
    ),
    "work accept": lambda o, v, t: verbs.accept_work(
        v, work_id=_named(o.item, "work item"), at=t, actor=o.actor, reason=o.reason
    ),
    "work retry": lambda o, v, t: verbs.retry_work(
        v, work_id=_named(o.item, "work item"), reason=o.reason or "", at=t, actor=o.actor
    ),
    "work cancel": lambda o, v, t: verbs.cancel_work(
        v, work_id=_named(o.item, "work item"), at=t, actor=o.actor, reason=o.reason
    ),
    "work reopen": lambda o, v, t: verbs.reopen_work(
        v, work_id=_named(o.item, "work item"), at=t, actor=o.actor, reason=o.reason
    ),
    "work abandon": lambda o, v, t: verbs.abandon_attempt(
        v, work_id=_named(o.item, "work item"), reason=o.reason or "", at=t, actor=o.actor
    ),
    "grant": _grant,
    "decline": lambda o, v, t: decline_budget(
        v, reason=_named(o.reason, "reason"), at=t, actor=o.actor
    ),
}
VERB_NAMES: Final = tuple(_VERBS)
"""Every operator verb: the one table behind ``governor resume|cancel|raise|plan|work``
(and ``grant|decline`` of a goal's open request: ``governor.drive.grants``),
the web view's forms and a Temporal workflow's updates."""


def apply_verb(verb: OperatorVerb, view: GoalView, at: datetime) -> list[Event]:
    """The events ``verb`` records on ``view`` at ``at`` (the view is not changed).

    Raises:
        InputError, NotFoundError, CommandRefusedError: as the verb itself does; an
            unknown verb or a missing argument is an ``InputError``.
    """
    run = _VERBS.get(verb.verb)
    if run is None:
        raise InputError(f"unknown operator verb '{verb.verb}'; one of {', '.join(_VERBS)}")
    return run(verb, view, at)
