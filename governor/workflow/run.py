"""Planner and worker runs: one agent call each, its proof, and what the core should record.

Rules:
    * The run's class comes from the proof (``governor.core.proof.derive_run_class``),
      never from the last error alone.
    * A planner that asks a question, or a worker that answers ``decision``, ends the run
      as a ``decision`` with the question as its error text.
    * A worker run succeeds only when its reply is ``done`` and every criterion of the
      item is satisfied (``governor.workflow.reply.passed``).
    * A run stopped by a refused credential (SPEC §11.8) ends its error with "the
      credential for <profile> was refused: <remedy>", the line a person reads in the
      goal's reason; an account that cannot pay (SPEC §12.6) with "the account behind
      <profile> is out of credit or quota: <remedy>"; a vendor never reached (SPEC §12.7)
      with "never reached <endpoint>: check the profile's base URL, the network and the
      proxy".
    * What every call of the run reported it cost (dollars, tokens) is recorded on the
      run's outcome event, planner and worker alike, charged or not (SPEC §12.5).
    * A run that took more than one in-agent try, or whose agent CLI retried a refused
      request by itself, records its ``tries`` in the evidence of its outcome event,
      whatever the outcome (SPEC §11.9).
    * These functions return values; the graph appends the events they imply.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from governor.core import record, record_work
from governor.core.classify import SpawnResult
from governor.core.event_fields import AcceptanceReport, Outcome
from governor.core.events import Event
from governor.core.evidence import Evidence, FailureClass, Tries
from governor.core.observation import Cost, Usage, Window
from governor.core.proof import RunProof, derive_run_class
from governor.core.remedy import billing_line, credential_line, never_reached_line, plan_line
from governor.core.view import GoalView
from governor.exec.environment import Redactor
from governor.workflow.agent import (
    AgentCall,
    AgentOutcome,
    ProofRecorder,
    RetrySettings,
    call_agent,
    tries_of,
)
from governor.workflow.reply import (
    PlannerAnswer,
    WorkerReply,
    acceptance_report,
    parse_planner_reply,
    parse_worker_reply,
    passed,
)


@dataclass(frozen=True, slots=True)
class Runtime:
    """The shell's effects a run may use, injectable for tests."""

    sleep: Callable[[float], None] = time.sleep
    jitter: Callable[[], float] = random.random
    retry: RetrySettings = field(default_factory=RetrySettings)


@dataclass(frozen=True, slots=True)
class RunResult:
    """What a planner or worker run came to, in the terms the core records."""

    proof: RunProof
    failure_class: FailureClass | None
    evidence: Evidence
    error: str | None
    retry_after_s: float | None
    cost_usd: float | None
    timed_out: bool
    prompt: str
    tries: Tries | None
    """The run's in-agent tries, when it took more than one or its CLI retried itself."""
    usage: Usage | None = None
    """The tokens every call of the run reported, summed (a default, so a result a
    Temporal history recorded before it existed still decodes: decision record 0020)."""
    account: str | None = None
    """The account whose spent usage window refused the run (SPEC §13.2; a default, as
    ``usage``)."""
    resets_at: datetime | None = None
    """When the vendor said that window reopens."""

    @property
    def window(self) -> Window:
        """The spent usage window that refused the run, as its failure event records it."""
        return Window(self.account, self.resets_at)

    @property
    def cost(self) -> Cost:
        """What the run's calls reported they cost, as its outcome event records it."""
        return Cost(self.cost_usd, self.usage)

    @property
    def outcome_evidence(self) -> Evidence | None:
        """The evidence its outcome event records: the failure's, or only the tries."""
        if not self.proof.succeeded:
            return with_tries(self.evidence, self.tries)
        return Evidence(tries=self.tries) if self.tries else None


def with_tries(evidence: Evidence, tries: Tries | None) -> Evidence:
    """``evidence`` carrying ``tries`` (unchanged when there are none)."""
    return evidence.model_copy(update={"tries": tries}) if tries else evidence


@dataclass(frozen=True, slots=True)
class PlannerRun(RunResult):
    answer: PlannerAnswer | None = None


@dataclass(frozen=True, slots=True)
class WorkerRun(RunResult):
    reply: WorkerReply | None = None
    acceptance: AcceptanceReport | None = None

    @property
    def outcome(self) -> Outcome:
        if self.proof.succeeded:
            return "succeeded"
        return "timed_out" if self.timed_out else "failed"


def _result(
    call: AgentCall,
    outcome: AgentOutcome[Any],
    recorder: ProofRecorder,
    *,
    succeeded: bool,
    question: str | None,
    error: str | None,
) -> dict[str, object]:
    proof = RunProof(succeeded=succeeded, agents=recorder.proofs(), question=question)
    failure_class, evidence = derive_run_class(proof)
    last = outcome.last
    error = question or error or last.error
    if failure_class == "environment":
        error = "\n".join(filter(None, (error, stop_line(call.who, last))))
    return {
        "proof": proof,
        "failure_class": failure_class,
        "evidence": evidence,
        "tries": tries_of(proof.agents, recorder.vendor_retries()),
        "error": None if succeeded else error,
        "retry_after_s": last.retry_after_s if failure_class == "upstream" else None,
        "cost_usd": outcome.cost_usd,
        "usage": outcome.usage,
        **(
            {"account": last.account, "resets_at": last.resets_at.astimezone(UTC)}
            if failure_class == "upstream" and last.resets_at is not None
            else {}
        ),
        "timed_out": last.timed_out and outcome.answer is None,
        "prompt": outcome.prompt,
    }


def stop_line(who: str, last: SpawnResult) -> str | None:
    """The sentence that says what a person must do about an ``environment`` stop: a
    refused credential, an account that cannot pay, a vendor never reached (None: the
    failure text says it, e.g. a missing binary)."""
    match last.rule:
        case "credential":
            return credential_line(who, last.credential)
        case "billing":
            return billing_line(who, last.billing)
        case "plan":
            return plan_line(who)
        case "no-response":
            return never_reached_line(last.endpoint)
    return None


def _problems_text(problems: Sequence[str]) -> str | None:
    return "the reply could not be used: " + "; ".join(problems) if problems else None


def run_planner(call: AgentCall, view: GoalView, *, runtime: Runtime = Runtime()) -> PlannerRun:
    """Ask the planner for a proposal (or a question), retrying in-agent as the rules allow."""
    recorder = ProofRecorder()
    redact = Redactor(call.env)
    outcome = call_agent(
        call,
        lambda text: parse_planner_reply(text, view, redact),
        recorder,
        sleep=runtime.sleep,
        jitter=runtime.jitter,
        settings=runtime.retry,
    )
    answer = outcome.answer
    question = answer.question if answer else None
    fields = _result(
        call,
        outcome,
        recorder,
        succeeded=bool(answer and answer.proposal),
        question=question,
        error=_problems_text(outcome.problems),
    )
    return PlannerRun(answer=answer, **fields)  # type: ignore[arg-type]


def run_worker(
    call: AgentCall, criteria: Sequence[str], *, runtime: Runtime = Runtime()
) -> WorkerRun:
    """Ask a worker to do one item, and judge its reply against the item's criteria."""
    recorder = ProofRecorder()
    redact = Redactor(call.env)
    outcome = call_agent(
        call,
        lambda text: parse_worker_reply(text, redact),
        recorder,
        sleep=runtime.sleep,
        jitter=runtime.jitter,
        settings=runtime.retry,
    )
    reply = outcome.answer
    report = acceptance_report(criteria, reply) if reply else None
    ok = bool(reply and report and passed(reply, report))
    question = reply.question if reply and reply.status == "decision" else None
    error = _problems_text(outcome.problems)
    if reply and not ok and question is None:
        error = _unmet(reply, report)
    fields = _result(call, outcome, recorder, succeeded=ok, question=question, error=error)
    return WorkerRun(reply=reply, acceptance=report, **fields)  # type: ignore[arg-type]


def _unmet(reply: WorkerReply, report: AcceptanceReport | None) -> str:
    parts = [
        f"the worker reported '{reply.status}'" + (f": {reply.summary}" if reply.summary else "")
    ]
    if report and report.unsatisfied:
        parts.append("unsatisfied: " + "; ".join(report.unsatisfied))
    if report and report.unknown:
        parts.append("not shown satisfied: " + "; ".join(report.unknown))
    return "\n".join(parts)


def plan_events(view: GoalView, plan_id: str, run: PlannerRun, at: datetime) -> list[Event]:
    """The events a finished planner run implies: a proposal, or a failure."""
    proposal = run.answer.proposal if run.answer else None
    if proposal is not None:
        milestone = proposal.milestone.model_dump() if proposal.milestone else None
        return record.plan_proposed(
            view,
            plan_id=plan_id,
            at=at,
            decision=proposal.decision,
            rationale=proposal.rationale,
            work=proposal.work,
            milestone=milestone,
            evidence=run.outcome_evidence,
            cost=run.cost,
        )
    return record.plan_failed(
        view,
        plan_id=plan_id,
        at=at,
        failure_class=run.failure_class,
        evidence=run.outcome_evidence,
        error=run.error,
        retry_after_s=run.retry_after_s,
        cost=run.cost,
        window=run.window,
    )


def attempt_events(
    view: GoalView, work_id: str, run_id: str, run: WorkerRun, at: datetime
) -> list[Event]:
    """The ``attempt.finished`` a finished worker run implies."""
    return record_work.finish_attempt(
        view,
        work_id=work_id,
        run_id=run_id,
        at=at,
        outcome=run.outcome,
        failure_class=run.failure_class,
        error=run.error,
        evidence=run.outcome_evidence,
        acceptance=run.acceptance,
        cost_usd=run.cost_usd,
        retry_after_s=run.retry_after_s,
        summary=run.reply.summary if run.reply and run.reply.summary else None,
        usage=run.usage,
        window=run.window,
    )
