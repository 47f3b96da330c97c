"""Today's classifier over what was recorded: a failure's class and evidence, judged again.

Rules (issue 25 §4; decision record 0014):
    * A failed run records the raw facts its classification read
      (``Evidence.observation``, ``governor.core.observation``) beside its ``error``. This
      rebuilds the call's ``SpawnResult`` from them and runs ``classify`` and the absence
      rules again, as a pure function: no I/O, no clock, the same answer every time.
    * The stream facts (claude, codex) are judged again by today's absence rule; an
      agent that declared its own evidence (a ``command`` envelope, a python exception,
      the scripted player) keeps what it declared — the declaration *is* the observation.
    * The evidence gate (``governor.core.evidence``) then says whether today's verdict is
      charged, as for a live call.
    * A failure recorded without an observation (histories written before it, a reply
      that could not be used, a run governor gave up on) cannot be judged again:
      ``reclassify_event`` returns None for it ("not recorded").
    * A remedy the adapter wrote is kept as recorded: ``credential`` and ``billing`` are
      facts here, their sentences are in the recorded ``error``.
"""

from __future__ import annotations

from typing import Final

from governor.core.absence import stream_absence
from governor.core.classify import SpawnResult, classify
from governor.core.evidence import UNKNOWN, Evidence, FailureClass, is_uncharged_failure
from governor.core.observation import RawObservation

PRODUCTIVE_TRIES: Final = frozenset({"ok", "invalid_reply"})
"""What an earlier try came to when it reached the model: the run is charged."""
RECORDED: Final = "(as recorded)"
"""The remedy of a credential or billing refusal judged again (its text is in the error)."""


def reclassify(
    observation: RawObservation, *, error: str | None, evidence: Evidence = UNKNOWN
) -> SpawnResult:
    """The failed call rebuilt from its recorded facts and classified by today's rules.

    Args:
        observation: the raw facts recorded with the failure.
        error: the recorded failure text (the upstream-text rule reads it).
        evidence: the recorded evidence: kept for an agent that declared its own (no
            stream facts), replaced by today's absence rule otherwise.

    Returns:
        The classified result: ``failure_class``, ``evidence`` (with ``rule``) as a live
        call with these facts would get them today.
    """
    judged = stream_absence(observation)
    declared = evidence.model_copy(update={"rule": None, "observation": None, "tries": None})
    result = SpawnResult(
        ok=False,
        timed_out=observation.timed_out,
        stopped=observation.stopped,
        spawn_errno=observation.spawn_errno,
        vendor_status=observation.vendor_status,
        vendor_code=observation.vendor_code,
        credential=RECORDED if observation.credential else None,
        billing=RECORDED if observation.billing else None,
        connection=observation.connection,
        connection_detail=observation.connection_detail,
        answered_before=observation.answered_before,
        error=error,
        evidence=judged if judged is not None else declared,
        stream=observation.claude or observation.codex,
        wire=observation.wire,
    )
    return classify(result)


def reclassify_event(
    failure_class: FailureClass | None, error: str | None, evidence: Evidence | None
) -> tuple[FailureClass | None, Evidence, bool] | None:
    """Today's ``(class, evidence, uncharged)`` for a recorded failure (a ``plan.failed``'s
    or a failed ``attempt.finished``'s fields), or None when it recorded no observation.

    A ``decision`` is the workflow's (a person must rule), not the classifier's: it is
    kept as recorded. A run whose earlier in-agent try reached the model (a reply, an
    invalid one) was productive: charged whatever its last try was (SPEC §4, run-level
    class).
    """
    if evidence is None or evidence.observation is None:
        return None
    if failure_class == "decision":
        return failure_class, evidence, True
    earlier = evidence.tries.classes[:-1] if evidence.tries else ()
    if any(outcome in PRODUCTIVE_TRIES for outcome in earlier):
        return None, evidence, False
    result = reclassify(evidence.observation, error=error, evidence=evidence)
    judged = result.evidence.model_copy(update={"tries": evidence.tries})
    return result.failure_class, judged, is_uncharged_failure(result.failure_class, judged)
