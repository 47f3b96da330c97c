"""Today's classifier over what was recorded (issue 25 §4; decision record 0014): the new
rules of SPEC §12.6-§12.8 as a table, and ``reclassify`` giving a recorded failure the
verdict a live call with the same facts gets."""

from __future__ import annotations

import pytest

from governor.core.absence import claude_absence, codex_absence
from governor.core.classify import SpawnResult, classify
from governor.core.evidence import Evidence, is_uncharged_failure
from governor.core.observation import ClaudeFacts, CodexFacts, RawObservation
from governor.core.reclassify import reclassify, reclassify_event
from governor.core.remedy import never_reached_line

ABSENT = Evidence(effects="absent", output="absent", refusal="absent", source="x:y", ref="r")

# Claude's usual overload (SPEC §12.8) as claude 2.1.197 prints it: three requests begun
# (message_start), no content, an error result with no status and the input cost.
OVERLOAD = ClaudeFacts(
    lines=8, results=1, is_error=True, num_turns=1, output_tokens=2, cost_usd=0.001875,
    permission_denials=0, requests_begun=3, start_output_tokens=3, inits=1,
    synthetic_errors=("unknown",), version="2.1.197",
)  # fmt: skip


def failed(**fields) -> SpawnResult:
    return SpawnResult(ok=False, **fields)


RULES = {
    "insufficient_quota on a 429 is billing, not an outage": (
        failed(vendor_status=429, vendor_code="insufficient_quota", evidence=ABSENT),
        ("environment", "billing", True),
    ),
    "HTTP 402 is billing": (
        failed(vendor_status=402, evidence=ABSENT),
        ("environment", "billing", True),
    ),
    "a plain 429 rate limit stays upstream": (
        failed(vendor_status=429, vendor_code="rate_limit_exceeded", evidence=ABSENT),
        ("upstream", "vendor-status", True),
    ),
    "a vendor never reached and never answered is environment": (
        failed(connection="unreachable", evidence=ABSENT),
        ("environment", "no-response", True),
    ),
    "a vendor never reached that answered before is an outage": (
        failed(connection="unreachable", answered_before=True, evidence=ABSENT),
        ("upstream", "no-response", True),
    ),
    "a connection reset before a response byte is upstream": (
        failed(connection="reset", evidence=ABSENT),
        ("upstream", "no-response", True),
    ),
    "a reset after work is charged": (
        failed(connection="reset", evidence=ABSENT.model_copy(update={"effects": "observed"})),
        ("upstream", "no-response", False),
    ),
    "a timeout still wins": (
        failed(timed_out=True, connection="unreachable", evidence=ABSENT),
        (None, "timeout", False),
    ),
}


@pytest.mark.parametrize(("result", "expected"), RULES.values(), ids=RULES.keys())
def test_the_new_rules(result: SpawnResult, expected) -> None:
    classified = classify(result)
    uncharged = is_uncharged_failure(classified.failure_class, classified.evidence)
    assert (classified.failure_class, classified.rule, uncharged) == expected


def test_an_overload_in_a_200_stream_proves_absence_and_keeps_its_input_cost() -> None:
    evidence = claude_absence(OVERLOAD)
    assert (evidence.effects, evidence.output, evidence.refusal) == ("absent",) * 3
    assert "3 responses begun" in (evidence.ref or "")


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"others": ("stream_event/content_block_start",)}, "other lines"),
        ({"delta_output_tokens": 5}, "output tokens"),
        ({"output_tokens": 4}, "output tokens 4"),
        ({"requests_begun": 0, "start_output_tokens": 0, "output_tokens": 0}, "status None"),
        ({"refusal": True}, "a refusal stop reason"),
        ({"output": True}, "model output or a tool"),
    ],
    ids=["a content block", "output in a delta", "more output than the placeholders",
         "no request begun and no status", "a refusal", "text seen"],
)  # fmt: skip
def test_the_overload_claim_needs_every_condition(change, why) -> None:
    evidence = claude_absence(OVERLOAD.model_copy(update=change))
    assert (
        evidence.effects != "absent" or evidence.output != "absent" or evidence.refusal != "absent"
    )
    assert why in (evidence.ref or "")


def test_a_cost_without_any_request_begun_refuses_the_claim() -> None:
    facts = OVERLOAD.model_copy(update={"requests_begun": 0, "start_output_tokens": 0,
                                        "output_tokens": 0, "status": 503})  # fmt: skip
    assert "cost 0.001875" in (claude_absence(facts).ref or "")
    assert claude_absence(facts.model_copy(update={"cost_usd": 0.0})).effects == "absent"


CODEX_REFUSED_IN_STREAM = CodexFacts(
    events=5, failed=True, code="insufficient_quota", trace_complete=True, requests=1,
    statuses=(200,), sse_events=2, sse_kinds=("response.failed", "response.completed"),
    sampling_requests=1, sampling_retries=0,
)  # fmt: skip


def test_codex_in_stream_refusal_codes_prove_absence_other_codes_do_not() -> None:
    assert codex_absence(CODEX_REFUSED_IN_STREAM).effects == "absent"
    server = CODEX_REFUSED_IN_STREAM.model_copy(update={"code": "server_error"})
    assert codex_absence(server).effects == "unknown"


def test_codex_waiting_for_the_network_proves_absence_until_it_did_work() -> None:
    stopped = CodexFacts(
        events=4, reconnecting=1, trace_complete=True, requests=1, statuses=(None,)
    )
    assert "waiting for network" in (codex_absence(stopped).ref or "")
    worked = stopped.model_copy(update={"tool_calls": 1, "statuses": (200, None)})
    assert codex_absence(worked).effects == "observed"


def test_reclassify_gives_a_recorded_failure_todays_verdict() -> None:
    """A Claude overload and a codex insufficient_quota, as recorded with their facts."""
    overload = RawObservation(claude=OVERLOAD)
    result = reclassify(overload, error="API Error: Overloaded")
    assert (result.failure_class, result.rule) == ("upstream", "upstream-text")
    assert is_uncharged_failure(result.failure_class, result.evidence)
    quota = RawObservation(vendor_status=429, vendor_code="insufficient_quota", billing=True,
                           codex=CODEX_REFUSED_IN_STREAM.model_copy(update={"statuses": (429,), "sse_events": 0, "sse_kinds": ()}))  # fmt: skip
    judged = reclassify_event("upstream", "Quota exceeded.", Evidence(observation=quota))
    assert judged is not None
    assert (judged[0], judged[1].rule, judged[2]) == ("environment", "billing", True)


def test_reclassify_is_the_live_classification_of_the_same_facts() -> None:
    live = classify(failed(vendor_status=503, error="x", stream=OVERLOAD.model_copy(update={"status": 503}),
                           evidence=claude_absence(OVERLOAD.model_copy(update={"status": 503}))))  # fmt: skip
    observation = live.evidence.observation
    assert observation is not None
    again = reclassify(observation, error=live.error, evidence=live.evidence)
    assert (again.failure_class, again.evidence) == (live.failure_class, live.evidence)


def test_what_was_not_recorded_cannot_be_judged_again() -> None:
    assert reclassify_event("upstream", "503", Evidence()) is None
    assert reclassify_event("upstream", "503", None) is None


def test_a_run_whose_earlier_try_reached_the_model_stays_charged() -> None:
    from governor.core.evidence import Tries

    evidence = Evidence(
        observation=RawObservation(vendor_status=503),
        tries=Tries(count=2, classes=("invalid_reply", "upstream")),
    )
    assert reclassify_event("upstream", "503", evidence) == (None, evidence, False)


def test_a_declared_evidence_is_kept_as_the_agent_declared_it() -> None:
    declared = Evidence(effects="absent", output="absent", refusal="absent",
                        source="command:envelope", ref="last stdout line: upstream 503")  # fmt: skip
    judged = reclassify_event(
        None, "x", declared.model_copy(update={"observation": RawObservation(vendor_status=503)})
    )
    assert judged is not None
    assert (judged[0], judged[1].source, judged[2]) == ("upstream", "command:envelope", True)


def test_the_never_reached_line_names_the_endpoint() -> None:
    assert never_reached_line("http://127.0.0.1:9/v1") == (
        "never reached http://127.0.0.1:9/v1: check the profile's base URL, the network and the proxy"
    )
