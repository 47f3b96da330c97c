"""Classification from the wire first (SPEC §13.1-§13.4): the wire wins, the text's class is kept."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from governor.core.classify import SpawnResult, classify
from governor.core.evidence import Evidence, is_uncharged_failure, nothing_happened
from governor.core.observation import ClaudeFacts, CodexFacts, WireFacts, WireRequest
from governor.core.reclassify import reclassify_event
from governor.core.wire_evidence import read_wire


def request(ended="refused", status=None, **kw) -> WireRequest:
    return WireRequest(
        method="POST", path="/v1/messages", model=True, ended=ended, status=status, **kw
    )


def wire(*requests: WireRequest, **kw) -> WireFacts:
    responded = any(r.ttfb_ms is not None for r in requests)
    return WireFacts(
        requests=requests,
        total=len(requests),
        responded=kw.pop("responded", responded),
        content=any(r.content for r in requests),
        agent="claude-cli/2.1.332",
        **kw,
    )


def failed(**kw) -> SpawnResult:
    return SpawnResult(ok=False, **kw)


def test_a_503_on_the_wire_is_upstream_and_free_whatever_the_text_says():
    result = classify(
        failed(error="API Error: something new", wire=wire(request(status=503, ttfb_ms=3)))
    )
    assert (result.failure_class, result.rule, result.vendor_status) == (
        "upstream",
        "vendor-status",
        503,
    )
    assert result.evidence.source == "relay:wire"
    assert is_uncharged_failure(result.failure_class, result.evidence)
    disagreement = result.evidence.disagreement
    assert disagreement is not None
    assert (disagreement.text_class, disagreement.text_rule, disagreement.cli) == (
        None,
        "default",
        "claude-cli/2.1.332",
    )


def test_the_text_and_the_wire_agreeing_records_no_disagreement():
    result = classify(failed(vendor_status=529, wire=wire(request(status=529, ttfb_ms=1))))
    assert result.failure_class == "upstream"
    assert result.evidence.disagreement is None


def test_a_wire_that_saw_the_vendor_answer_in_full_charges_a_failure_the_text_called_upstream():
    answered = request(ended="answered", status=200, ttfb_ms=2, content=True)
    result = classify(failed(error="rate limit exceeded", wire=wire(answered)))
    assert (result.failure_class, result.rule) == (None, "default")
    assert result.evidence.disagreement is not None
    assert result.evidence.disagreement.text_class == "upstream"
    assert result.evidence.output == "observed"


def test_no_model_request_on_the_wire_leaves_the_text_alone():
    other = WireRequest(method="GET", path="/v1/models", ended="answered", status=200, ttfb_ms=1)
    result = classify(failed(vendor_status=503, wire=wire(other)))
    assert (result.failure_class, result.rule) == ("upstream", "vendor-status")
    assert result.evidence.disagreement is None
    assert read_wire(wire(other)) is None


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("rate_limit_exceeded", 429),
        ("server_is_overloaded", 503),
        ("slow_down", 429),
        ("server_error", 500),
        ("overloaded_error", 529),
    ],
)
def test_an_in_stream_refusal_before_any_output_is_upstream_with_absence(code, status):
    refused = request(
        status=200, ttfb_ms=1, error_code=code, events=("response.created", "response.failed")
    )
    result = classify(failed(wire=wire(refused)))
    assert (result.failure_class, result.vendor_status) == ("upstream", status)
    assert is_uncharged_failure(result.failure_class, result.evidence)


def test_a_refusal_after_content_streamed_is_upstream_but_charged():
    refused = request(status=200, ttfb_ms=1, error_code="server_error", content=True)
    result = classify(failed(wire=wire(refused)))
    assert result.failure_class == "upstream"
    assert result.evidence.output == "observed"
    assert not is_uncharged_failure(result.failure_class, result.evidence)


def test_a_billing_400_is_environment_by_its_body_type_or_its_known_phrase():
    by_type = classify(
        failed(wire=wire(request(status=400, ttfb_ms=1, error_type="billing_error")))
    )
    by_phrase = classify(
        failed(
            wire=wire(
                request(
                    status=400,
                    ttfb_ms=1,
                    error_type="invalid_request_error",
                    phrase="credit balance is too low",
                )
            )
        )
    )
    for result in (by_type, by_phrase):
        assert (result.failure_class, result.rule) == ("environment", "billing")
        assert result.billing is not None
        assert is_uncharged_failure(result.failure_class, result.evidence)


def test_usage_not_included_is_environment_named_plan():
    result = classify(
        failed(wire=wire(request(status=429, ttfb_ms=1, error_type="usage_not_included")))
    )
    assert (result.failure_class, result.rule) == ("environment", "plan")
    assert is_uncharged_failure(result.failure_class, result.evidence)


def test_a_usage_window_is_upstream_with_its_reset_and_wait():
    reset = 1_900_000_000
    window = request(
        status=429,
        ttfb_ms=1,
        error_type="usage_limit_reached",
        window="usage_limit_reached",
        resets_at=reset,
        retry_after_s=3600.0,
    )
    result = classify(failed(wire=wire(window)))
    assert (result.failure_class, result.rule) == ("upstream", "usage-window")
    assert result.resets_at == datetime.fromtimestamp(reset, UTC)
    assert result.retry_after_s == 3600.0
    assert is_uncharged_failure(result.failure_class, result.evidence)


def test_anthropics_rejected_unified_window_is_a_usage_window():
    window = request(
        status=429,
        ttfb_ms=1,
        error_type="rate_limit_error",
        window="rejected five_hour",
        resets_at=1_900_000_000,
    )
    result = classify(failed(wire=wire(window)))
    assert result.rule == "usage-window"


def test_reached_is_reached_an_unreachable_end_after_an_answer_is_upstream():
    answered = request(ended="answered", status=200, ttfb_ms=2)
    lost = request(ended="connect", detail="ECONNREFUSED")
    result = classify(failed(wire=wire(answered, lost)))
    assert (result.failure_class, result.connection) == ("upstream", "unreachable")
    never = classify(failed(wire=wire(lost)))
    assert (never.failure_class, never.rule) == ("environment", "no-response")


def test_a_timeout_before_any_byte_is_upstream_and_a_break_mid_stream_too():
    timed_out = classify(failed(wire=wire(request(ended="timeout"))))
    assert (timed_out.failure_class, timed_out.connection) == ("upstream", "reset")
    broken = classify(failed(wire=wire(request(ended="broken", status=200, ttfb_ms=1))))
    assert broken.failure_class == "upstream"


def test_a_stream_that_shows_a_tool_keeps_the_run_charged():
    stream = CodexFacts(events=3, failed=True, tool_items=1)
    result = classify(failed(stream=stream, wire=wire(request(status=503, ttfb_ms=1))))
    assert result.failure_class == "upstream"
    assert not is_uncharged_failure(result.failure_class, result.evidence)


def test_claudes_mcp_servers_keep_the_wire_from_claiming_absence():
    stream = ClaudeFacts(lines=3, results=1, is_error=True, mcp_servers=1)
    result = classify(failed(stream=stream, wire=wire(request(status=503, ttfb_ms=1))))
    assert result.evidence.source != "relay:wire"


def test_reclassify_reads_the_wire_it_recorded_and_comes_to_the_same_verdict():
    live = classify(
        failed(error="API Error: Connection dropped", wire=wire(request(status=529, ttfb_ms=1)))
    )
    again = reclassify_event(live.failure_class, live.error, live.evidence)
    assert again is not None
    failure_class, evidence, uncharged = again
    assert (failure_class, evidence.rule, uncharged) == ("upstream", "vendor-status", True)
    assert evidence.disagreement == live.evidence.disagreement


def test_the_observation_records_the_wire_and_the_evidence_round_trips():
    result = classify(failed(wire=wire(request(status=503, ttfb_ms=1))))
    observation = result.evidence.observation
    assert observation is not None
    assert observation.wire is not None
    assert Evidence.model_validate_json(result.evidence.model_dump_json()) == result.evidence


def test_positive_text_evidence_is_kept_when_the_wire_saw_nothing():
    declared = nothing_happened("exec:spawn-errno", "ENOENT")
    result = classify(failed(spawn_errno="ENOENT", evidence=declared, wire=WireFacts()))
    assert (result.failure_class, result.rule) == ("environment", "spawn-errno")


def test_a_400_whose_code_refuses_the_key_is_a_credential_failure_like_a_401():
    """Google answers a bad key with HTTP 400 and ``reason: API_KEY_INVALID``."""
    bad_key = request(status=400, ttfb_ms=2, error_code="API_KEY_INVALID")
    result = classify(failed(error="[API Error: ...]", wire=wire(bad_key)))
    assert (result.failure_class, result.rule, result.vendor_status) == (
        "environment",
        "credential",
        400,
    )
    assert result.credential is not None
    other = classify(failed(wire=wire(request(status=400, ttfb_ms=2, error_code="OTHER"))))
    assert other.failure_class is None  # any other 400 stays charged
