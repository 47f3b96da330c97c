"""The legacy reading (issue 25 §4, decision record 0023): what an old failure's verdict,
evidence ref and text say, read back as the observation today's classifier needs; and
``judge``'s three readings."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from governor.analysis.corpus import corpus_of
from governor.analysis.legacy import PLACEHOLDER_TOKENS_MAX, legacy_reading
from governor.analysis.reclassified import judge, reclassify_history
from governor.core.events import PlanFailed
from governor.core.evidence import Evidence, nothing_happened
from governor.core.observation import RawObservation

OVERLOAD_REF = (
    "claude-stream:lines 0-8; claude 2.1.197; no claim: other lines: stream_event; "
    "status None; output tokens 2; cost 0.001875"
)
QUOTA_TEXT = '{"type":"turn.failed","error":{"message":"Quota exceeded. Check your plan and billing details."}}'
GOLDEN = sorted((Path(__file__).resolve().parent.parent / "golden").glob("[!c]*.jsonl"))


def claude(ref: str, effects: str = "unknown") -> Evidence:
    return Evidence.model_validate(
        {"effects": effects, "output": "observed", "source": "claude:stream", "ref": ref}
    )


def test_an_overload_in_a_200_stream_is_read_as_begun_requests_and_says_what_it_assumed() -> None:
    reading = legacy_reading(None, "API Error: Overloaded", claude(OVERLOAD_REF))
    assert reading is not None
    facts = reading.observation.claude
    assert facts is not None
    assert (facts.lines, facts.requests_begun, facts.output_tokens) == (9, 1, 2)
    assert (facts.start_output_tokens, facts.cost_usd, facts.version) == (2, 0.001875, "2.1.197")
    assert (facts.output, facts.effects, facts.others) == (False, False, ())
    assert len(reading.assumed) == 2
    assert "their types were not recorded" in reading.assumed[0]


@pytest.mark.parametrize(
    ("ref", "error", "effects"),
    [
        (
            OVERLOAD_REF.replace("stream_event", "stream_event, user"),
            "API Error: Overloaded",
            "unknown",
        ),
        (OVERLOAD_REF + "; num_turns 2", "API Error: Overloaded", "unknown"),
        (OVERLOAD_REF, "API Error: Overloaded", "observed"),
        (OVERLOAD_REF.replace("status None", "status 500"), "API Error: Overloaded", "unknown"),
        (
            OVERLOAD_REF.replace("tokens 2", f"tokens {PLACEHOLDER_TOKENS_MAX + 1}"),
            "API Error: Overloaded",
            "unknown",
        ),
        (OVERLOAD_REF, "the model said no", "unknown"),
        ("claude-stream:lines 0-3; claude 2.1.197; HTTP 503", "API Error: 503", "unknown"),
    ],
    ids=[
        "another line kind than stream_event",
        "a second turn",
        "a tool was seen",
        "a status",
        "more output tokens than placeholders",
        "no overload text",
        "no claim was refused (nothing to infer of the stream)",
    ],
)
def test_anything_else_against_the_claim_infers_no_stream(
    ref: str, error: str, effects: str
) -> None:
    reading = legacy_reading(None, error, claude(ref, effects))
    assert reading is not None
    assert reading.observation.claude is None
    assert reading.assumed == ()


@pytest.mark.parametrize(
    ("error", "evidence", "observation"),
    [
        (
            QUOTA_TEXT,
            nothing_happened(
                "codex:jsonl",
                "codex-jsonl:events 0-4; codex-trace:1 model request, HTTP 429, 0 stream events",
            ),
            RawObservation(vendor_status=429, vendor_code="insufficient_quota", billing=True),
        ),
        (
            "Your credit balance is too low to access the Anthropic API",
            None,
            RawObservation(vendor_code="billing_error", billing=True),
        ),
        (
            "turn.failed: unexpected status 503 Service Unavailable",
            None,
            RawObservation(vendor_status=503),
        ),
        (
            "spawn failed",
            nothing_happened("exec:spawn-errno", "ENOENT"),
            RawObservation(spawn_errno="ENOENT"),
        ),
        ("the tests failed", None, RawObservation()),
    ],
    ids=[
        "codex's quota words",
        "claude's credit words",
        "a status in the text",
        "an errno",
        "text only",
    ],
)
def test_statuses_codes_and_errnos_are_read_back(
    error: str, evidence: Evidence | None, observation: RawObservation
) -> None:
    reading = legacy_reading(None, error, evidence)
    assert reading is not None
    assert reading.observation == observation


def test_nothing_to_read_is_none() -> None:
    assert legacy_reading(None, None, None) is None
    assert legacy_reading("upstream", "", None) is None


def failed(**fields: object) -> PlanFailed:
    at = datetime(2026, 3, 1, tzinfo=UTC)
    return PlanFailed.model_validate(
        {"goal_id": "g", "seq": 3, "at": at, "actor": "governor", "plan_id": "p1", **fields}
    )


def test_judge_keeps_a_failure_with_nothing_recorded_as_it_was() -> None:
    event = failed(**{"class": "upstream"})
    judged, today = judge(event)
    assert judged.reading == "not recorded"
    assert judged.today == judged.recorded
    assert judged.recorded.charged  # no evidence: charged
    assert today is event


def test_judge_uses_the_recorded_observation_when_there_is_one() -> None:
    observation = RawObservation(vendor_status=429, vendor_code="insufficient_quota", billing=True)
    evidence = nothing_happened("codex:jsonl", "r").model_copy(update={"observation": observation})
    judged, today = judge(
        failed(**{"class": "upstream", "error": QUOTA_TEXT, "evidence": evidence})
    )
    assert judged.reading == "recorded"
    assert (judged.today.failure_class, judged.today.rule, judged.today.charged) == (
        "environment",
        "billing",
        False,
    )
    assert today.failure_class == "environment"
    assert judged.changed


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_every_golden_history_keeps_its_verdicts_and_outcome(path: Path) -> None:
    corpus = corpus_of([str(path)])
    result = reclassify_history(lambda: corpus.events(0, checked=False), source=str(path))
    assert [j for j in result.failures if j.changed] == []
    assert result.whatif.outcome == "same"
