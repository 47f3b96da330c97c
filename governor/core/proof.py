"""Run proofs: what every agent of one run did, and the class of the run derived from them.

Rules (SPEC §4, decision records 0046 and 0213):
    * A succeeded run is never classed.
    * A workflow that declares a ``decision`` (the agent asked a person) gets ``decision``.
    * If any agent, or any in-agent attempt of any agent, was *productive* (it produced
      a result, model output or an effect), the run is charged: no class.
    * Otherwise ``environment`` beats ``upstream``; anything else has no class.
    * An empty set of agents proves nothing: no class, unknown evidence.

The class is derived from the per-agent records, never from one terminal error, so a
parallel fan-out that swallows one agent's exception cannot erase that agent's class.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from governor.core.evidence import UNKNOWN, Evidence, FailureClass, passes_gate


class AgentAttemptProof(BaseModel):
    """One spawn of one agent inside a run (an in-agent retry is another attempt)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    ok: bool
    failure_class: FailureClass | None = Field(default=None, alias="class")
    evidence: Evidence = UNKNOWN
    error: str | None = None

    @property
    def productive(self) -> bool:
        """It produced a result, model output or an effect: the work was touched."""
        return self.ok or "observed" in (self.evidence.effects, self.evidence.output)


class AgentProof(BaseModel):
    """Every attempt one agent made inside a run, recorded before any exception escapes."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    agent: str
    attempts: tuple[AgentAttemptProof, ...] = ()

    @property
    def productive(self) -> bool:
        return any(attempt.productive for attempt in self.attempts)

    @property
    def failure_class(self) -> FailureClass | None:
        """The class of this agent's last attempt (what finally stopped it)."""
        return self.attempts[-1].failure_class if self.attempts else None


class RunProof(BaseModel):
    """The proof of one planner or worker run."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    succeeded: bool
    agents: tuple[AgentProof, ...] = ()
    question: str | None = None
    """Set when the workflow declares that a person must rule."""


def _merge(values: Iterable[str], *, positive: str, negative: str) -> str:
    seen = set(values)
    if not seen:
        return "unknown"
    if positive in seen:
        return positive
    return negative if seen == {negative} else "unknown"


def merged_evidence(attempts: Iterable[AgentAttemptProof]) -> Evidence:
    """Evidence over many attempts: absence holds only where every attempt shows it; the
    raw observation and any text/wire disagreement are the last attempt's (the try that
    ended the run)."""
    attempts = tuple(attempts)
    if not attempts:
        return UNKNOWN
    witness = next((a.evidence for a in attempts if passes_gate(a.evidence)), attempts[0].evidence)
    return Evidence(
        effects=_merge(
            (a.evidence.effects for a in attempts), positive="observed", negative="absent"
        ),  # type: ignore[arg-type]
        output=_merge(
            (a.evidence.output for a in attempts), positive="observed", negative="absent"
        ),  # type: ignore[arg-type]
        refusal=_merge(
            (a.evidence.refusal for a in attempts), positive="declared", negative="absent"
        ),  # type: ignore[arg-type]
        source=witness.source,
        ref=witness.ref,
        rule=witness.rule,
        partial=next((a.evidence.partial for a in attempts if a.evidence.partial), None),
        observation=attempts[-1].evidence.observation,
        disagreement=attempts[-1].evidence.disagreement,
    )


def derive_run_class(proof: RunProof) -> tuple[FailureClass | None, Evidence]:
    """The run-level class and the evidence behind it (see the module rules)."""
    attempts = [attempt for agent in proof.agents for attempt in agent.attempts]
    evidence = merged_evidence(attempts)
    if proof.succeeded:
        return None, evidence
    if proof.question:
        return "decision", evidence
    if not attempts or any(attempt.productive for attempt in attempts):
        return None, evidence
    classes = {agent.failure_class for agent in proof.agents}
    if "environment" in classes:
        return "environment", evidence
    if "upstream" in classes:
        return "upstream", evidence
    return None, evidence
