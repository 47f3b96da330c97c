"""The claude result-envelope parser, and the evidence it supports, on recorded fixtures.

The fixtures in ``tests/fixtures/vendor`` are the real CLI's output against the fake
vendor (re-record with ``python -m tests.fakevendor.record``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from governor.core.evidence import is_uncharged_failure
from governor.exec.claude import claude_evidence, claude_result, parse_claude_envelope
from governor.exec.environment import Redactor
from governor.exec.process import ProcessResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vendor"


def fixture(name: str) -> str:
    return (FIXTURES / f"claude-{name}.json").read_text()


def process(stdout: str, *, exit_code: int = 1) -> ProcessResult:
    out = stdout.encode()
    return ProcessResult(
        argv=("claude", "-p"),
        exit_code=exit_code,
        spawn_errno=None,
        spawn_error=None,
        timed_out=False,
        stdout_head=out,
        stdout_tail=out,
        stderr_tail=b"",
        stdout_bytes=len(out),
        stderr_bytes=0,
        stdout_sha256=hashlib.sha256(out).hexdigest(),
        duration_s=0.5,
    )


# fixture -> (api_error_status, num_turns, effects, output)
SCENARIOS = {
    "503": (503, 1, "unknown", "unknown"),
    "429": (429, 1, "unknown", "unknown"),
    "529": (529, 1, "unknown", "unknown"),
    "500": (500, 1, "unknown", "unknown"),
    "500-after-tool-call": (500, 2, "observed", "observed"),
    "500-after-text": (None, 1, "unknown", "unknown"),
    "malformed-stream": (None, 1, "unknown", "unknown"),
}


@pytest.mark.parametrize(("name", "expected"), SCENARIOS.items(), ids=list(SCENARIOS))
def test_each_recorded_failure_yields_its_status_and_evidence(name, expected):
    run = parse_claude_envelope(fixture(name))
    status, turns, effects, output = expected
    evidence = claude_evidence(run)
    assert run.parsed
    assert run.is_error
    assert (run.api_error_status, run.num_turns) == (status, turns)
    assert (evidence.effects, evidence.output) == (effects, output)
    assert not is_uncharged_failure("upstream", evidence)  # never proves absence


def test_a_recorded_reply_carries_the_result_cost_and_session():
    run = parse_claude_envelope(fixture("reply"))
    assert (run.subtype, run.is_error) == ("success", False)
    assert run.result is not None
    assert run.result.startswith("Here is the plan.")
    assert run.total_cost_usd is not None
    assert run.total_cost_usd > 0
    assert run.session_id


def test_a_stream_cut_after_text_looks_exactly_like_a_503_in_the_envelope():
    """Why claude cannot be uncharged-eligible: the envelope does not see partial text."""
    cut, refused = (parse_claude_envelope(fixture(n)) for n in ("500-after-text", "503"))
    assert (cut.num_turns, cut.output_tokens, cut.total_cost_usd) == (1, 0, 0.0)
    assert (refused.num_turns, refused.output_tokens, refused.total_cost_usd) == (1, 0, 0.0)


@pytest.mark.parametrize(
    "stdout",
    ["", "Error: something broke\n", "[1, 2]", '{"type": "assistant"}'],
    ids=["nothing", "plain text", "a JSON array", "an object that is not a result"],
)
def test_stdout_without_a_result_envelope_is_unparsed_and_unknown(stdout):
    run = parse_claude_envelope(stdout)
    assert not run.parsed
    evidence = claude_evidence(run)
    assert (evidence.effects, evidence.output, evidence.refusal) == ("unknown",) * 3


def test_the_envelope_is_found_on_the_last_line_after_noise():
    run = parse_claude_envelope("warming up\n" + fixture("503"))
    assert (run.parsed, run.api_error_status) == (True, 503)


def test_a_native_refusal_stop_reason_is_a_declared_refusal():
    envelope = json.loads(fixture("reply")) | {"is_error": True, "stop_reason": "refusal"}
    evidence = claude_evidence(parse_claude_envelope(json.dumps(envelope)))
    assert evidence.refusal == "declared"
    assert evidence.source == "claude:result"


def test_a_recorded_503_is_upstream_and_charged():
    result = claude_result(process(fixture("503")), Redactor({}))
    assert (result.failure_class, result.rule, result.vendor_status) == (
        "upstream",
        "vendor-status",
        503,
    )
    assert not is_uncharged_failure(result.failure_class, result.evidence)


def test_a_recorded_reply_is_a_success_with_its_cost():
    result = claude_result(process(fixture("reply"), exit_code=0), Redactor({}))
    assert result.ok
    assert result.reply is not None
    assert result.cost_usd == parse_claude_envelope(fixture("reply")).total_cost_usd


def test_an_error_envelope_is_a_failure_even_with_exit_0():
    result = claude_result(process(fixture("503"), exit_code=0), Redactor({}))
    assert not result.ok
    assert result.failure_class == "upstream"
