"""Failure evidence and the gate that decides whether a failed run is charged.

Rules (decision records 0046 and 0213, SPEC §4):
    * Unknown is explicit and is the default everywhere.
    * A positive claim of absence needs a declared ``source`` and ``ref``.
    * **The gate**: a failed run is uncharged only when its class is ``environment``
      or ``upstream`` and effects, output and refusal are all ``absent`` with a
      declared source and reference, or when its class is ``decision`` (the agent
      asked a person). Everything else is charged. *Default to charging.*
    * Only the outcome ``failed`` can be uncharged: timed-out, lost and abandoned
      runs are always charged.

This module is the one definition of "charged"; the projection, plan requests and
every operator verb call :func:`is_uncharged`.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from governor.core.numbers import Int64

FailureClass = Literal["environment", "upstream", "decision"]
"""Why a failure says nothing about the work: see ``docs/concepts.md``."""

Observation = Literal["absent", "observed", "unknown"]
RefusalObservation = Literal["absent", "declared", "unknown"]

Ref = Annotated[str, Field(min_length=1, max_length=500)]


class Partial(BaseModel):
    """Output a failed run produced before it failed: its size and digest survive."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bytes: Int64
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class Evidence(BaseModel):
    """What was observed about a failed run, each observation separately (SPEC §4)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    effects: Observation = "unknown"
    """Did the run change anything or call a tool?"""
    output: Observation = "unknown"
    """Did the model produce any reply text?"""
    refusal: RefusalObservation = "unknown"
    """Did the vendor natively declare a refusal?"""
    source: Ref | None = None
    """Who observed it, as ``<adapter>:<observation>``, e.g. ``exec:spawn-errno``."""
    ref: Ref | None = None
    """A bounded reference to what was observed, e.g. ``ENOENT``."""
    rule: Annotated[str, Field(max_length=100)] | None = None
    """The classification rule that fired."""
    partial: Partial | None = None
    """Partial output that survives the failure."""


UNKNOWN: Final = Evidence()
"""Evidence of a run nobody could observe: charged whatever its class."""


def nothing_happened(source: str, ref: str, *, rule: str | None = None) -> Evidence:
    """Positive evidence that a run had no effect, produced no output and was not refused."""
    return Evidence(
        effects="absent", output="absent", refusal="absent", source=source, ref=ref, rule=rule
    )


def passes_gate(evidence: Evidence | None) -> bool:
    """True when the evidence positively shows the run did nothing at all."""
    return (
        evidence is not None
        and evidence.effects == "absent"
        and evidence.output == "absent"
        and evidence.refusal == "absent"
        and bool(evidence.source)
        and bool(evidence.ref)
    )


def is_uncharged_failure(failure_class: FailureClass | None, evidence: Evidence | None) -> bool:
    """Whether a *failed* run with this class and evidence is free (the gate of SPEC §4)."""
    if failure_class == "decision":
        return True
    if failure_class in ("environment", "upstream"):
        return passes_gate(evidence)
    return False


def is_uncharged(
    outcome: str, failure_class: FailureClass | None, evidence: Evidence | None
) -> bool:
    """The one definition of charging: only a ``failed`` outcome that passes the gate is free."""
    return outcome == "failed" and is_uncharged_failure(failure_class, evidence)


def effective_class(
    outcome: str, failure_class: FailureClass | None, evidence: Evidence | None
) -> FailureClass | None:
    """The class the rules act on: a class that fails the gate is an ordinary failure."""
    return failure_class if is_uncharged(outcome, failure_class, evidence) else None
