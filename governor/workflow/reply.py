"""The reply protocol: the last top-level JSON object of a reply is the answer (SPEC §7).

Rules:
    * Prose before (or around) the answer is tolerated; the *last* top-level JSON
      object wins, so an agent may think aloud and then answer.
    * A planner answers a proposal (the ``plan.proposed`` fields; its ``plan_id`` may be
      left out, and when given must be the plan asked for) or
      ``{"status": "decision", "question": …}``; its decision must fit the goal's
      progress and its work the goal's policy and graph (``governor.core.history``).
    * A worker answers ``{"status": "done" | "failed" | "decision", "summary", "question",
      "acceptance": [{"criterion", "status"}]}``. An attempt succeeds only when the status
      is ``done`` and every criterion of the item is satisfied; a criterion the worker
      did not report is unknown, and one it reported beyond the item's as unsatisfied
      or unknown fails the attempt too.
    * Every problem comes back as a list of sentences, so the next in-agent attempt can
      be shown exactly what to fix. Finding the answer is linear in the reply's length
      and bounded (``governor.workflow.jsonscan``); no reply makes parsing raise.
    * Secrets are redacted from the *decoded* answer, every string of it (keys too), so a
      key spelled with JSON escapes (``"\\u0073k-…"``) is caught as the key it decodes to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from governor.core.event_fields import AcceptanceReport, Milestone, WorkSpec
from governor.core.proposal import check_decision, check_proposal
from governor.core.view import GoalView
from governor.workflow.jsonscan import find_answer

Redact = Callable[[str], str]
"""Removes secrets from a text (``governor.exec.environment.Redactor``)."""

_ANSWER_AGAIN = "answer with one JSON object as the last thing you write"


def last_json_object(text: str) -> dict[str, Any] | None:
    """The last top-level JSON object in ``text`` (objects nested in another are skipped)."""
    return find_answer(text).value


def read_answer(text: str, redact: Redact | None = None) -> dict[str, Any] | list[str]:
    """The reply's answer object with every string redacted, or the problems with it."""
    return _read(text, redact)[0]


def _read(text: str, redact: Redact | None) -> tuple[dict[str, Any] | list[str], str | None]:
    """``read_answer``, and why the last object begun was passed over (``Answer``)."""
    answer = find_answer(text)
    if answer.value is None:
        return [f"{answer.problem}; {_ANSWER_AGAIN}"], None
    value = _redacted(answer.value, redact) if redact is not None else answer.value
    return value, answer.passed_over


def _noted(problems: list[str], passed_over: str | None) -> list[str]:
    """The answer's problems, and first why the object the agent meant was not read."""
    return [f"{passed_over}; {_ANSWER_AGAIN}", *problems] if passed_over else problems


def _redacted(value: Any, redact: Redact) -> Any:
    """``value`` with ``redact`` applied to every string in it (nesting is bounded)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k): _redacted(v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v, redact) for v in value]
    return value


def _problems(exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "reply"
        out.append(f"{where}: {err['msg']}")
    return out


class _Decision(BaseModel):
    model_config = ConfigDict(extra="ignore")
    status: Literal["decision"]
    question: str = Field(min_length=1, max_length=2000)


class Proposal(BaseModel):
    """A planner's proposal, as it must be written."""

    model_config = ConfigDict(extra="forbid")
    plan_id: str | None = None
    """Optional (a ``plan.proposed`` field, SPEC §7): when given, the plan asked for."""
    decision: Literal["apply", "complete"]
    rationale: str = Field(default="", max_length=2000)
    work: tuple[WorkSpec, ...] = ()
    milestone: Milestone | None = None


@dataclass(frozen=True, slots=True)
class PlannerAnswer:
    """A valid planner reply: a proposal, or a question for a person."""

    proposal: Proposal | None = None
    question: str | None = None


def parse_planner_reply(
    text: str, view: GoalView, redact: Redact | None = None
) -> PlannerAnswer | list[str]:
    """Parse and check a planner reply; returns the answer or the list of problems."""
    obj, passed_over = _read(text, redact)
    if isinstance(obj, list):
        return obj
    answer = _planner_answer(obj, view)
    return _noted(answer, passed_over) if isinstance(answer, list) else answer


def _planner_answer(obj: dict[str, Any], view: GoalView) -> PlannerAnswer | list[str]:
    if obj.get("status") == "decision":
        try:
            return PlannerAnswer(question=_Decision.model_validate(obj).question)
        except ValidationError as exc:
            return _problems(exc)
    try:
        proposal = Proposal.model_validate(obj)
    except ValidationError as exc:
        return _problems(exc)
    problems = (
        _plan_id_problems(proposal, view)
        + _shape_problems(proposal)
        + check_decision(view, proposal.decision)
        + check_proposal(view, proposal.work)
    )
    return problems or PlannerAnswer(proposal=proposal)


def _plan_id_problems(proposal: Proposal, view: GoalView) -> list[str]:
    """A ``plan_id`` in the answer must name the plan being asked for (or be left out)."""
    asked = view.latest_plan
    if proposal.plan_id is None or asked is None or asked.status != "requested":
        return []
    if proposal.plan_id == asked.plan_id:
        return []
    return [f"plan_id: this is plan '{asked.plan_id}', not '{proposal.plan_id}' (or leave it out)"]


def _shape_problems(proposal: Proposal) -> list[str]:
    if proposal.decision == "complete" and proposal.work:
        return ["a 'complete' decision has no work"]
    if proposal.decision == "apply" and not proposal.work:
        return ["an 'apply' decision needs at least one work item"]
    keys = [spec.key for spec in proposal.work]
    return ["work keys must be unique"] if len(set(keys)) != len(keys) else []


class Criterion(BaseModel):
    model_config = ConfigDict(extra="ignore")
    criterion: str
    status: Literal["satisfied", "unsatisfied", "unknown"]


class WorkerReply(BaseModel):
    """A worker's reply, as it must be written."""

    model_config = ConfigDict(extra="ignore")
    status: Literal["done", "failed", "decision"]
    summary: str = Field(default="", max_length=20000)
    question: str | None = None
    acceptance: tuple[Criterion, ...] = ()


def parse_worker_reply(text: str, redact: Redact | None = None) -> WorkerReply | list[str]:
    """Parse a worker reply; returns it or the list of problems."""
    obj, passed_over = _read(text, redact)
    if isinstance(obj, list):
        return obj
    reply = _worker_reply(obj)
    return _noted(reply, passed_over) if isinstance(reply, list) else reply


def _worker_reply(obj: dict[str, Any]) -> WorkerReply | list[str]:
    try:
        reply = WorkerReply.model_validate(obj)
    except ValidationError as exc:
        return _problems(exc)
    if reply.status == "decision" and not (reply.question and reply.question.strip()):
        return ["a 'decision' reply needs a question"]
    return reply


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def acceptance_report(criteria: Sequence[str], reply: WorkerReply) -> AcceptanceReport:
    """Sort the item's criteria by what the worker reported (unreported: unknown).

    Criteria are matched by text (case and spacing ignored); when the worker reported
    exactly as many results as there are criteria, unmatched ones pair up by position.
    A criterion the worker reported that is none of the item's counts too when it is
    ``unsatisfied`` or ``unknown`` (SPEC §7: success needs no criterion unsatisfied or
    unknown): the worker said something is not met.
    """
    by_text = {_norm(c.criterion): c.status for c in reply.acceptance}
    positional = len(reply.acceptance) == len(criteria)
    sorted_: dict[str, list[str]] = {"satisfied": [], "unsatisfied": [], "unknown": []}
    used: set[int] = set()
    for i, criterion in enumerate(criteria):
        status = by_text.get(_norm(criterion))
        if status is None and positional:
            status = reply.acceptance[i].status
            used.add(i)
        sorted_[status or "unknown"].append(criterion)
    # a criterion the worker itself reports as not met blocks success, even one of its own
    known = {_norm(criterion) for criterion in criteria}
    for i, reported in enumerate(reply.acceptance):
        mine = i in used or _norm(reported.criterion) in known
        if not mine and reported.status != "satisfied":
            sorted_[reported.status].append(reported.criterion)
    return AcceptanceReport(
        satisfied=tuple(sorted_["satisfied"]),
        unsatisfied=tuple(sorted_["unsatisfied"]),
        unknown=tuple(sorted_["unknown"]),
    )


def passed(reply: WorkerReply, report: AcceptanceReport) -> bool:
    """The attempt succeeded: status ``done`` and nothing unsatisfied or unknown."""
    return reply.status == "done" and not report.unsatisfied and not report.unknown
