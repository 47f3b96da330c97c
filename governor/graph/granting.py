"""Requests for more budget in the graph: a goal waiting on a person's grant, put to that
person through ``interrupt()`` and answered with ``Command(resume=…)`` (SPEC §13.7).

Rules:
    * The graph asks when the goal's decision is the budget stop only a person moves
      (``budget.3``: a ``total`` pool, or the goal's own budget under a ``grants`` policy)
      and its request is still open and not declined. A pool that renews (``budget.2``)
      is not asked: the goal goes on by itself at the renewal, the run ends ``waiting``.
    * The interrupt's value is Agent Inbox's ``HumanInterrupt`` (as a question's is):
      its ``args`` are the grant's editable fields (``usd``, ``attempts``, ``expires``,
      ``reason``), the request's keys beside it. The resume value is the answer:
      ``{"grant": {"usd"?, "attempts"?, "expires"?, "reason", "actor"?}}``,
      ``{"decline": {"reason", "actor"?}}``, or an inbox ``accept`` (the amount asked),
      ``edit`` (the edited fields), ``response`` (declined, the text its reason) or
      ``ignore`` (the request stands; the run ends).
    * An answer is recorded by ``governor.drive.grants`` — the one path ``governor
      grant``/``governor decline`` and the web view's forms take — its amounts checked
      as the CLI's options are; a bad one is refused with one line, nothing recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from governor.analysis import runnable
from governor.core.decision import Decision
from governor.core.rules.budget import ASKS, asked_amount
from governor.core.text import stamp
from governor.core.view import BudgetRequest, GoalView
from governor.drive import grants
from governor.drive.runner import Runner
from governor.errors import InputError

AS_ASKED: Final = "granted as asked (LangGraph)"
"""The reason recorded on a grant an inbox accepted (or edited without a reason)."""


@dataclass(frozen=True, slots=True)
class GrantAsked:
    """A goal's open request for more budget that a person must answer."""

    goal_id: str
    request: BudgetRequest
    decision_reason: str
    """The goal's decision's reason (the request and the commands that answer it)."""


@dataclass(frozen=True, slots=True)
class GrantAnswer:
    """A person's answer to a request: a grant (its amounts) or a decline."""

    verb: Literal["grant", "decline"]
    reason: str
    actor: str
    usd: float | None = None
    attempts: int | None = None
    expires_s: float | None = None


def grant_asked(view: GoalView, decision: Decision) -> GrantAsked | None:
    """The request the goal waits on a person for, or None (module rules)."""
    request = view.budget_request
    if request is None or request.declined or decision.rule != ASKS:
        return None
    return GrantAsked(view.goal_id, request, decision.reason)


def grant_identity(asked: GrantAsked) -> dict[str, Any]:
    """What tells one request from another: its budget and when it was made."""
    return {"budget": asked.request.budget, "requested_at": stamp(asked.request.at)}


def is_grant_identity(asked: Mapping[str, Any] | None) -> bool:
    """Whether an ``asked`` identity is a request's (else a question's)."""
    return asked is not None and "budget" in asked


def grant_record(asked: GrantAsked) -> dict[str, Any]:
    """The interrupt's value: Agent Inbox's ``HumanInterrupt``, and the request's keys."""
    request = asked.request
    keys = {
        "goal_id": asked.goal_id,
        "budget": request.budget,
        "usd": request.usd,
        "attempts": request.attempts,
        "request": request.reason,
        "requested_at": stamp(request.at),
        "grant_with": runnable.grant(asked.goal_id, request.usd, request.attempts).line(None),
        "decline_with": runnable.decline(asked.goal_id).line(None),
    }
    editable = {"usd": request.usd, "attempts": request.attempts, "expires": None, "reason": ""}
    return {
        "action_request": {
            "action": f"Grant {asked_amount(request)} to {asked.goal_id}?",
            "args": editable,
        },
        "config": {
            "allow_ignore": True,
            "allow_respond": True,
            "allow_edit": True,
            "allow_accept": True,
        },
        "description": f"{request.reason}\n\n---\nAccept grants the amount asked; Edit "
        "changes the amount (usd, attempts), when the grant expires (expires: 2h) and its "
        f"reason; each is recorded as `{keys['grant_with']}` records it. Respond declines "
        "it, your text its reason. Ignore leaves it waiting.",
        **keys,
    }


def grant_answer_of(value: Any, default_actor: str) -> GrantAnswer | None:
    """The person's answer from a resume value (None: they ignored it); module rules."""
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, dict):
        raise InputError(ANSWER_FORMS)
    kind = value.get("type")
    if kind == "ignore":
        return None
    if kind == "accept":
        return GrantAnswer("grant", AS_ASKED, default_actor)
    if kind == "edit" and isinstance(value.get("args"), dict):
        edited = value["args"].get("args", value["args"])
        return _grant({"reason": AS_ASKED, **_given(edited)}, default_actor)
    if kind == "response" and isinstance(value.get("args"), str) and value["args"].strip():
        return GrantAnswer("decline", value["args"], default_actor)
    if isinstance(value.get("grant"), dict):
        return _grant(value["grant"], default_actor)
    if isinstance(value.get("decline"), dict):
        return GrantAnswer(
            "decline", _reason(value["decline"]), _actor(value["decline"], default_actor)
        )
    raise InputError(ANSWER_FORMS)


ANSWER_FORMS: Final = (
    'answer a request for more budget with Command(resume={"grant": {"usd": X, "attempts": '
    'N, "expires": "2h", "reason": "…"}}) or {"decline": {"reason": "…"}}, or an inbox '
    "accept, edit, response (declines) or ignore"
)


def record_answer(runner: Runner, asked: GrantAsked, answer: GrantAnswer) -> None:
    """Record the answer as ``governor grant``/``governor decline`` record it."""
    given = grants.Answer(answer.reason, answer.actor, usd=answer.usd,
                          attempts=answer.attempts, expires_s=answer.expires_s)  # fmt: skip
    record = grants.grant_goal if answer.verb == "grant" else grants.decline_goal
    record(runner.store, asked.goal_id, given, clock=runner.clock)


def answer_report(answer: GrantAnswer) -> dict[str, Any]:
    """What the run's result says of a recorded answer (``GoalOutput.answer``)."""
    report: dict[str, Any] = {"recorded": True, "answer": answer.reason, "actor": answer.actor}
    report["verb"] = answer.verb
    if answer.verb == "grant":
        report.update(usd=answer.usd, attempts=answer.attempts, expires_s=answer.expires_s)
    return report


def _grant(fields: Mapping[str, Any], default_actor: str) -> GrantAnswer:
    usd, attempts, expires_s = grants.amounts(
        _text(fields.get("usd")), _text(fields.get("attempts")), _text(fields.get("expires"))
    )
    return GrantAnswer(
        "grant", _reason(fields), _actor(fields, default_actor), usd, attempts, expires_s
    )


def _given(fields: Any) -> dict[str, Any]:
    """An inbox edit's fields, the empty ones dropped (an empty reason: as asked)."""
    if not isinstance(fields, dict):
        raise InputError(ANSWER_FORMS)
    return {k: v for k, v in fields.items() if v not in (None, "")}


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _reason(fields: Mapping[str, Any]) -> str:
    reason = fields.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise InputError('an answer to a request for more budget needs a reason ("reason": "…")')
    return reason


def _actor(fields: Mapping[str, Any], default_actor: str) -> str:
    actor = fields.get("actor", default_actor)
    if not isinstance(actor, str) or not actor.strip():
        raise InputError('"actor" must name who answered (operator:NAME)')
    return actor
