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

In-agent tries (SPEC §11.9) are recorded beside the evidence (``Evidence.tries``) so they
are never invisible; they never change the gate's verdict. Nor does the raw observation
the classification read (``Evidence.observation``, ``governor.core.observation``).
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from governor.core.numbers import Int64, PosCount
from governor.core.observation import RawObservation

FailureClass = Literal["environment", "upstream", "decision"]
"""Why a failure says nothing about the work: see ``docs/concepts.md``."""

Observation = Literal["absent", "observed", "unknown"]
RefusalObservation = Literal["absent", "declared", "unknown"]

Ref = Annotated[str, Field(min_length=1, max_length=500)]

TryOutcome = Literal[
    "ok", "invalid_reply", "timed_out", "environment", "upstream", "decision", "failed"
]
"""What one in-agent try came to: a usable reply (``ok``), a reply that did not parse or
validate, a timeout, a failure of that class, or a failure with no class (``failed``)."""
TRIES_LISTED: Final = 20
"""The most try outcomes one record lists (``count`` still counts them all)."""


class Partial(BaseModel):
    """Output a failed run produced before it failed: its size and digest survive."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    bytes: Int64
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class Tries(BaseModel):
    """Every in-agent try of one run, when it took more than one (SPEC §11.9)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    count: PosCount
    """How many times the agent was spawned for this run."""
    classes: tuple[TryOutcome, ...] = Field(default=(), max_length=TRIES_LISTED)
    """What each try came to, in order (the first ``TRIES_LISTED``)."""
    vendor_retries: tuple[Int64 | None, ...] = Field(default=(), max_length=TRIES_LISTED)
    """Statuses of refused requests the agent CLI retried by itself inside those tries
    (None: no HTTP status), e.g. claude's ``system/api_retry``; the first ``TRIES_LISTED``."""
    last_error: Annotated[str, Field(min_length=1, max_length=500)] | None = None
    """The last line of the last failed try's error, redacted like every error."""


class Disagreement(BaseModel):
    """The CLI's text said another class than its vendor's wire (SPEC §13.1): the wire won."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    text_class: FailureClass | None = None
    """The class the CLI's text alone gave (None: a charged failure with no class)."""
    text_rule: Annotated[str, Field(min_length=1, max_length=100)]
    """The rule that fired over the text alone."""
    cli: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    """The CLI and its version, as its requests named it (``claude-cli/2.1.332``)."""


class Evidence(BaseModel):
    """What was observed about a failed run, each observation separately (SPEC §4)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

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
    rule: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    """The classification rule that fired (like ``source`` and ``ref``: a non-empty string,
    or null when not declared)."""
    partial: Partial | None = None
    """Partial output that survives the failure."""
    tries: Tries | None = None
    """The run's in-agent tries, when it took more than one or its agent CLI retried a
    refused request itself; absent from older histories."""
    observation: RawObservation | None = None
    """The raw facts the classification of the try that ended the run read (SPEC §12,
    issue 25 §4), so ``governor.core.reclassify`` can re-run the rules; absent from older
    histories ("not recorded")."""
    disagreement: Disagreement | None = None
    """The CLI's text alone said another class than the wire (SPEC §13.1); absent when
    they agreed, without a relay, and in older histories."""


UNKNOWN: Final = Evidence.model_construct()  # ``Evidence()``: see ``policy.py``
"""Evidence of a run nobody could observe: charged whatever its class."""


def nothing_happened(source: str, ref: str, *, rule: str | None = None) -> Evidence:
    """Positive evidence that a run had no effect, produced no output and was not refused."""
    return Evidence(
        effects="absent", output="absent", refusal="absent", source=source, ref=ref, rule=rule
    )


def passes_gate(evidence: Evidence | None) -> bool:
    """True when the evidence positively shows the run did nothing at all."""
    if (
        evidence is None
        or evidence.effects != "absent"
        or evidence.output != "absent"
        or evidence.refusal != "absent"
    ):
        return False
    return bool(evidence.source and evidence.ref)


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
    # ``is_uncharged``, one call less: the fold asks on every finished run with a class
    if failure_class is None or outcome != "failed":
        return None
    return failure_class if is_uncharged_failure(failure_class, evidence) else None
