"""The codex JSONL and trace parsers, and the evidence they support, on recorded fixtures.

The fixtures in ``tests/fixtures/vendor`` are the real CLI's output against the fake
vendor (re-record with ``python -m tests.fakevendor.record``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from governor.core.evidence import is_uncharged_failure
from governor.exec.codex import codex_evidence, codex_result, codex_status
from governor.exec.codex_events import CodexEvents, parse_codex_events
from governor.exec.codex_trace import parse_codex_trace
from governor.exec.environment import Redactor
from governor.exec.process import ProcessResult
from tests.fakevendor.matrix import CODEX, verdict_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vendor"


def fixture(name: str) -> tuple[bytes, str]:
    """A recorded codex run: its stdout (JSONL) and its stderr (trace)."""
    stem = FIXTURES / f"codex-{name}"
    return stem.with_suffix(".jsonl").read_bytes(), stem.with_suffix(".stderr").read_text()


def process(stdout: bytes, stderr: str = "", *, exit_code: int = 1, timed_out: bool = False):
    err = stderr.encode()
    return ProcessResult(
        argv=("codex", "exec", "--json"),
        exit_code=exit_code,
        spawn_errno=None,
        spawn_error=None,
        timed_out=timed_out,
        stdout_head=stdout,
        stdout_tail=stdout,
        stderr_tail=err,
        stdout_bytes=len(stdout),
        stderr_bytes=len(err),
        stdout_sha256=hashlib.sha256(stdout).hexdigest(),
        duration_s=0.4,
    )


def recorded(name: str):
    stdout, stderr = fixture(name)
    run = parse_codex_events(stdout.splitlines())
    return run, parse_codex_trace(stderr, complete=True)


# fixture -> (vendor status, effects, output, uncharged-eligible evidence)
SCENARIOS = {
    "503": (503, "absent", "absent", True),
    "429": (429, "absent", "absent", True),
    "529": (529, "absent", "absent", True),
    "500": (500, "absent", "absent", True),
    "500-after-tool-call": (500, "observed", "unknown", False),
    "503-after-itemless-tool-call": (503, "observed", "unknown", False),
    "503-after-sandbox-denied-command": (503, "observed", "unknown", False),
    "500-after-text": (None, "unknown", "unknown", False),
    "malformed-stream": (None, "unknown", "unknown", False),
}


@pytest.mark.parametrize(("name", "expected"), SCENARIOS.items(), ids=list(SCENARIOS))
def test_each_recorded_failure_yields_its_status_and_evidence(name, expected):
    run, trace = recorded(name)
    status, effects, output, free = expected
    evidence = codex_evidence(run, trace)
    assert run.failed
    assert codex_status(run, trace) == status
    assert (evidence.effects, evidence.output) == (effects, output)
    assert is_uncharged_failure("upstream", evidence) is free


@pytest.mark.parametrize(
    "hidden", ["503-after-itemless-tool-call", "503-after-sandbox-denied-command"]
)
def test_the_jsonl_alone_cannot_tell_a_hidden_tool_call_from_a_refused_first_request(hidden):
    """Why the adapter needs codex's trace: these streams equal a plain 503's, event for event."""

    def shape(name: str) -> list[str]:
        lines = fixture(name)[0].splitlines()
        return [json.loads(line)["type"] for line in lines]

    assert shape(hidden) == shape("503")
    assert parse_codex_trace(fixture(hidden)[1], complete=True).tool_calls > 0


def test_a_recorded_reply_is_the_last_agent_message():
    run, _ = recorded("reply")
    assert run.completed
    assert not run.failed
    assert run.reply is not None
    assert run.reply.startswith("Here is the plan.")
    assert run.text_items == 1
    assert run.tool_items == 0


def test_codex_diagnostic_error_items_are_neither_effects_nor_output():
    run, _ = recorded("503")
    assert run.events == 5
    assert run.tool_items == run.text_items == run.unknown_items == 0


def test_a_refusal_is_only_absent_when_the_trace_is_complete():
    run, _ = recorded("503")
    _, stderr = fixture("503")
    cut = parse_codex_trace(stderr, complete=False)
    assert codex_evidence(run, cut).effects == "unknown"


def test_a_stream_without_the_trace_proves_nothing():
    run, _ = recorded("503")
    evidence = codex_evidence(run, parse_codex_trace("", complete=True))
    assert (evidence.effects, evidence.output) == ("unknown", "unknown")
    assert codex_status(run, parse_codex_trace("", complete=True)) == 503  # from the message


def test_a_malformed_line_withdraws_the_claim_of_absence():
    stdout, stderr = fixture("503")
    run = parse_codex_events([*stdout.splitlines(), b"{not json"])
    assert run.malformed == 1
    assert codex_evidence(run, parse_codex_trace(stderr, complete=True)).effects == "unknown"


def test_an_unknown_item_type_withdraws_the_claim_of_absence():
    stdout, stderr = fixture("503")
    lines = stdout.splitlines()
    novel = b'{"type":"item.completed","item":{"id":"x","type":"hologram"}}'
    run = parse_codex_events([*lines[:3], novel, *lines[3:]])
    assert run.unknown_items == 1
    assert codex_evidence(run, parse_codex_trace(stderr, complete=True)).effects == "unknown"


@pytest.mark.parametrize(
    ("message", "status"),
    [
        ("unexpected status 503 Service Unavailable: busy, url: http://x/v1/responses", 503),
        ("exceeded retry limit, last status: 429 Too Many Requests", 429),
        ("stream disconnected before completion: unexpected status 503", None),
        ("We\u2019re currently experiencing high demand, which may cause temporary errors.", None),
        ("unexpected status 5031 nonsense", None),
    ],
    ids=[
        "codex's unexpected-status error names the status",
        "codex's retry-limit error names the last status",
        "a status quoted later in the message does not count",
        "codex's HTTP 500 sentence carries no number",
        "four digits are not a status",
    ],
)
def test_the_status_is_read_only_from_the_start_of_codex_messages(message, status):
    events = CodexEvents()
    events.feed(json.dumps({"type": "turn.failed", "error": {"message": message}}))
    assert codex_status(events.result(), parse_codex_trace("", complete=True)) == status


def test_a_recorded_503_is_classed_upstream_and_uncharged_eligible():
    stdout, stderr = fixture("503")
    run = parse_codex_events(stdout.splitlines())
    result = codex_result(process(stdout, stderr), run, Redactor({}))
    assert (result.failure_class, result.rule, result.vendor_status) == (
        "upstream",
        "vendor-status",
        503,
    )
    assert is_uncharged_failure(result.failure_class, result.evidence)
    assert result.error is not None
    assert result.error.endswith("}}")  # the tail keeps turn.failed, codex's last word
    assert "codex_otel" not in result.error  # governor's own telemetry request stays out


def test_a_recorded_reply_is_a_success():
    stdout, stderr = fixture("reply")
    run = parse_codex_events(stdout.splitlines())
    result = codex_result(process(stdout, stderr, exit_code=0), run, Redactor({}))
    assert result.ok
    assert result.reply == run.reply
    assert result.failure_class is None


def test_a_timed_out_run_is_charged_whatever_the_stream_says():
    stdout, stderr = fixture("503")
    run = parse_codex_events(stdout.splitlines())
    result = codex_result(process(stdout, stderr, timed_out=True), run, Redactor({}))
    assert (result.failure_class, result.rule) == (None, "timeout")
    assert not is_uncharged_failure(result.failure_class, result.evidence)


@pytest.mark.parametrize("name", CODEX, ids=list(CODEX))
def test_each_recorded_matrix_case_comes_to_its_verdict(name):
    stdout, stderr = fixture(name)
    run = parse_codex_events(stdout.splitlines())
    result = codex_result(process(stdout, stderr), run, Redactor({}))
    assert verdict_of(result) == CODEX[name].expect, result.evidence.ref


def test_a_missing_key_names_the_variable_and_was_never_sent():
    stdout, stderr = fixture("missing-key")
    run = parse_codex_events(stdout.splitlines())
    result = codex_result(process(stdout, stderr), run, Redactor({}))
    assert result.credential == (
        "codex found no key: set FAKE_VENDOR_API_KEY in governor's environment and list it "
        "in the profile's env"
    )
    assert "not sent (no FAKE_VENDOR_API_KEY)" in (result.evidence.ref or "")


def test_missing_environment_variable_text_in_a_later_message_is_not_a_credential():
    events = CodexEvents()
    message = "tool output said: Missing environment variable: `X`."
    events.feed(json.dumps({"type": "turn.failed", "error": {"message": message}}))
    result = codex_result(process(b""), events.result(), Redactor({}))
    assert result.credential is None
    assert result.failure_class is None


def test_the_requests_codex_retried_itself_are_read_from_the_trace():
    line = 'x INFO codex_otel.trace_safe: event.name="codex.api_request" http.response.status_code={} attempt={}\n'
    trace = parse_codex_trace(
        line.format(503, 0) + line.format(429, 1) + line.format(200, 2), complete=True
    )
    assert trace.request_statuses == (503, 429, 200)
    assert trace.retried == (503, 429)
    single = parse_codex_trace(fixture("503")[1], complete=True)
    assert single.retried == ()


def test_hostile_trace_numbers_never_break_the_facts():
    stdout, stderr = fixture("503")
    stderr = stderr.replace("sampling_request_count=1", "sampling_request_count=" + "9" * 40)
    run = parse_codex_events(stdout.splitlines())
    result = codex_result(process(stdout, stderr), run, Redactor({}))
    assert result.failure_class == "upstream"
    assert not is_uncharged_failure(result.failure_class, result.evidence)  # not one request
