"""The claude stream-json fold and its absence rule (SPEC §11.9), on recorded fixtures.

The fixtures in ``tests/fixtures/vendor/claude-*.jsonl`` are the real CLI's output
against the fake vendor, one per case of ``tests.fakevendor.matrix.CLAUDE`` (re-record
with ``python -m tests.fakevendor.record claude``). ``test_claude_cli.py`` runs the same
cases live.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from governor.core.evidence import passes_gate
from governor.exec.claude import (
    CLAUDE_VERIFIED_VERSION,
    FALLBACK_VAR,
    ClaudeHarness,
    claim_blockers,
    claim_overrides,
    claude_result,
)
from governor.exec.claude_stream import parse_claude_stream
from governor.exec.cli_pins import cli_pins
from governor.exec.environment import Redactor
from governor.exec.process import ProcessResult
from tests.fakevendor.matrix import CLAUDE, FIXTURES, Case, verdict_of

REPO = Path(__file__).resolve().parents[2]


def fixture(name: str) -> str:
    return (FIXTURES / f"claude-{name}.jsonl").read_text()


def lines(name: str) -> list[dict]:
    return [json.loads(line) for line in fixture(name).splitlines()]


def dump(events: list[dict]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


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


def replay(case: Case, stdout: str, *, exit_code: int = 1):
    """What the adapter makes of ``stdout`` for ``case``'s profile and environment."""
    profile = case.profile(codex=False)
    child_env = ClaudeHarness(REPO).environment(profile, {"PATH": "/usr/bin", **case.env})
    stream = parse_claude_stream(stdout.splitlines())
    overrides = claim_overrides(profile, child_env)
    return claude_result(
        process(stdout, exit_code=exit_code), stream, Redactor({}), overrides=overrides
    )


@pytest.mark.parametrize("name", CLAUDE, ids=list(CLAUDE))
def test_each_recorded_case_comes_to_its_verdict(name: str) -> None:
    case = CLAUDE[name]
    result = replay(case, fixture(name), exit_code=0 if case.expect.ok else 1)
    assert verdict_of(result) == case.expect, result.evidence.ref


def test_the_fixtures_were_recorded_with_the_pinned_version() -> None:
    versions = {
        e["claude_code_version"]
        for name in CLAUDE
        for e in lines(name)
        if e.get("type") == "system" and e.get("subtype") == "init"
    }
    assert versions == {CLAUDE_VERIFIED_VERSION}
    assert cli_pins()["claude"].oldest == CLAUDE_VERIFIED_VERSION


def test_a_refused_request_and_a_stream_cut_after_text_now_differ() -> None:
    """The stream shows the partial text the old result envelope hid."""
    refused, cut = (parse_claude_stream(fixture(n).splitlines()) for n in ("503", "500-after-text"))
    assert claim_blockers(refused) == []
    assert cut.output
    blockers = claim_blockers(cut)
    assert blockers[0].startswith("other lines: stream_event/content_block_start")


def test_the_ref_names_the_version_the_status_and_claudes_own_retry() -> None:
    result = replay(CLAUDE["503"], fixture("503"))
    assert result.evidence.source == "claude:stream"
    assert result.evidence.ref == (
        f"claude-stream:lines 0-4; claude {CLAUDE_VERIFIED_VERSION}; HTTP 503; 1 api_retry (503)"
    )


def test_the_429s_retry_after_comes_from_api_retry() -> None:
    [retry] = [e for e in lines("429") if e.get("subtype") == "api_retry"]
    result = replay(CLAUDE["429"], fixture("429"))
    assert result.retry_after_s == retry["retry_delay_ms"] / 1000 == 2.0


def test_not_logged_in_names_the_login_remedy() -> None:
    result = replay(CLAUDE["not-logged-in"], fixture("not-logged-in"))
    assert result.credential is not None
    assert "ANTHROPIC_API_KEY" in result.credential
    assert "claude /login" in result.credential
    assert "Not logged in" in (result.error or "")


NEW_LINES = {
    "a line type claude may add one day": {"type": "usage_report", "usage": {}},
    "a system subtype the rule does not know": {"type": "system", "subtype": "compact_boundary"},
    "a hook that ran before the request": {"type": "system", "subtype": "hook_started"},
    "a streamed content block": {
        "type": "stream_event",
        "event": {"type": "content_block_start", "content_block": {"type": "text"}},
    },
    "a streamed event of a kind the rule does not know": {
        "type": "stream_event",
        "event": {"type": "message_continue"},
    },
    "a tool result": {"type": "user", "message": {"content": [{"type": "tool_result"}]}},
}


@pytest.mark.parametrize("line", NEW_LINES.values(), ids=NEW_LINES.keys())
def test_any_other_line_before_the_result_charges_the_503(line: dict) -> None:
    events = lines("503")
    result = replay(CLAUDE["503"], dump([*events[:-1], line, events[-1]]))
    assert result.failure_class == "upstream"
    assert not passes_gate(result.evidence)
    assert "no claim: other lines: " in (result.evidence.ref or "")


def rate_limit_event(status: str) -> dict:
    """A ``rate_limit_event`` line as claude 2.1.197 writes it (its SDK message schema):
    its account's rate-limit state, read from the vendor's response headers."""
    info = {"status": status, "resetsAt": 1_900_000_000, "rateLimitType": "five_hour"}
    return {
        "type": "rate_limit_event",
        "rate_limit_info": {**info, "utilization": 0.95, "isUsingOverage": False},
        "uuid": "6f1c0a52-6d8e-4c43-9a55-3f1d4c1b2a10",
        "session_id": lines("503")[0]["session_id"],
    }


@pytest.mark.parametrize("status", ["allowed", "allowed_warning", "rejected"])
def test_a_rate_limit_event_is_recognised_and_keeps_the_503s_claim(status: str) -> None:
    events = lines("503")
    stdout = dump([*events[:-1], rate_limit_event(status), events[-1]])
    stream = parse_claude_stream(stdout.splitlines())
    assert stream.others == ()  # a known line, not an unknown one
    assert stream.rate_limit == f"{status} five_hour"
    assert claim_blockers(stream) == []
    result = replay(CLAUDE["503"], stdout)
    assert verdict_of(result) == CLAUDE["503"].expect  # still uncharged, as without it
    assert passes_gate(result.evidence)
    assert f"rate limit {status} five_hour" in (result.evidence.ref or "")


def test_a_rate_limit_event_in_a_reply_changes_nothing_of_its_success() -> None:
    events = lines("reply")
    stdout = dump([events[0], rate_limit_event("allowed_warning"), *events[1:]])
    result = replay(CLAUDE["reply"], stdout, exit_code=0)
    assert verdict_of(result) == CLAUDE["reply"].expect
    assert result.ok
    assert result.reply == replay(CLAUDE["reply"], fixture("reply"), exit_code=0).reply


def test_a_rate_limit_event_without_its_info_is_still_recognised() -> None:
    events = lines("503")
    for info in ({}, None, "rejected", {"status": 5, "rateLimitType": ["x"]}):
        line = {"type": "rate_limit_event", "rate_limit_info": info}
        stream = parse_claude_stream(dump([*events[:-1], line, events[-1]]).splitlines())
        assert (stream.others, stream.rate_limit) == ((), "? ?"), info
        assert claim_blockers(stream) == []


def _with_result(**changes: object) -> str:
    events = lines("503")
    return dump([*events[:-1], {**events[-1], **changes}])


def _with_init(**changes: object) -> str:
    events = lines("503")
    return dump([{**events[0], **changes}, *events[1:]])


BROKEN = {
    "a malformed line": (fixture("503") + "{not json\n", "malformed lines"),
    "a line after the result": (
        fixture("503") + json.dumps({"type": "system", "subtype": "status"}) + "\n",
        "lines after the result",
    ),
    "two result lines": (fixture("503") + fixture("503").splitlines()[-1] + "\n", "2 result lines"),
    "a second turn": (_with_result(num_turns=2), "num_turns 2"),
    "output tokens": (_with_result(usage={"output_tokens": 3}), "output tokens 3"),
    "a cost": (_with_result(total_cost_usd=0.01), "cost 0.01"),
    "a permission denial": (
        _with_result(permission_denials=[{"tool_name": "Write"}]),
        "permission denials 1",
    ),
    "not an error": (_with_result(is_error=False), "not an error result"),
    "a status that is no outage": (_with_result(api_error_status=404), "status 404"),
    "MCP servers it cannot read": (_with_init(mcp_servers="many"), "1 MCP servers configured"),
}


@pytest.mark.parametrize(("stdout", "why"), BROKEN.values(), ids=BROKEN.keys())
def test_the_claim_needs_every_condition(stdout: str, why: str) -> None:
    result = replay(CLAUDE["503"], stdout)
    assert not passes_gate(result.evidence)
    assert why in (result.evidence.ref or "")


def test_a_second_turn_means_effects_and_output_observed() -> None:
    evidence = replay(CLAUDE["503"], _with_result(num_turns=2)).evidence
    assert (evidence.effects, evidence.output) == ("observed", "observed")


def test_a_streamed_refusal_stop_reason_is_declared() -> None:
    events = lines("503")
    refusal = {
        "type": "stream_event",
        "event": {"type": "message_delta", "delta": {"stop_reason": "refusal"}},
    }
    evidence = replay(CLAUDE["503"], dump([*events[:-1], refusal, events[-1]])).evidence
    assert evidence.refusal == "declared"


@pytest.mark.parametrize(
    "stdout", ["", "Error: something broke\n", "[1, 2]\n"], ids=["nothing", "text", "an array"]
)
def test_stdout_without_a_stream_is_unknown_and_charged(stdout: str) -> None:
    result = replay(CLAUDE["503"], stdout)
    assert (result.evidence.effects, result.evidence.output) == ("unknown", "unknown")
    assert result.failure_class is None


def test_a_profile_overriding_a_stream_flag_or_the_fallback_variable_loses_the_claim() -> None:
    harness = ClaudeHarness(REPO)
    plain = CLAUDE["503"].profile(codex=False)
    assert claim_overrides(plain, harness.environment(plain, {})) == []
    flagged = plain.model_copy(update={"args": ("--output-format=json",)})
    assert claim_overrides(flagged, harness.environment(flagged, {})) == ["--output-format"]
    named = plain.model_copy(update={"env": (FALLBACK_VAR,)})
    overridden = harness.environment(named, {FALLBACK_VAR: "0"})
    assert claim_overrides(named, overridden) == [FALLBACK_VAR]
    assert claim_overrides(named, harness.environment(named, {FALLBACK_VAR: "1"})) == []


def test_a_recorded_reply_is_a_success_with_its_cost() -> None:
    result = replay(CLAUDE["reply"], fixture("reply"), exit_code=0)
    assert result.ok
    assert (result.reply or "").startswith("Here is the plan.")
    assert result.cost_usd is not None
    assert result.cost_usd > 0


def test_an_error_result_is_a_failure_even_with_exit_0() -> None:
    result = replay(CLAUDE["503"], fixture("503"), exit_code=0)
    assert not result.ok
    assert result.failure_class == "upstream"


def test_the_failure_text_is_claudes_message_not_the_stream() -> None:
    result = replay(CLAUDE["503"], fixture("503"))
    assert (result.error or "").startswith("API Error: 503")
    assert '"type"' not in (result.error or "")


def test_hostile_numbers_and_kinds_in_the_stream_never_break_the_facts() -> None:
    """A stream can say anything: the facts the evidence records stay valid."""
    events = lines("503")
    hostile: list[dict] = [
        {"type": ""},  # an empty kind
        {"type": "system", "subtype": "x" * 5000},
        {"type": "stream_event", "event": {"type": "message_start",
                                           "message": {"usage": {"output_tokens": 10**30}}}},
    ]  # fmt: skip
    last: dict = {**events[-1], "total_cost_usd": 1e14, "num_turns": 10**20,
            "permission_denials": [{}] * 3}  # fmt: skip
    result = replay(CLAUDE["503"], dump([*events[:-1], *hostile, last]))
    assert result.failure_class == "upstream"
    assert not passes_gate(result.evidence)
    observation = result.evidence.observation
    assert observation is not None
    assert observation.claude is not None
    assert observation.claude.cost_usd == 1_000_000_000


NEWEST = "2.1.332"
"""The newest claude the pins name; ``claude-2.1.332-<case>.jsonl`` are its recordings of
the cases whose words or stream changed since the oldest."""


@pytest.mark.parametrize(
    "name",
    [
        "200-overload-in-stream",
        "no-listener",
        "connection-closed-before-a-response",
        "request-timed-out-before-a-byte",
    ],
)
def test_the_newest_claudes_recordings_come_to_their_verdicts(name: str) -> None:
    case = CLAUDE[name]
    result = replay(case, fixture(f"{NEWEST}-{name}"))
    assert verdict_of(result) == case.verdict(NEWEST), result.evidence.ref
    assert f"claude {NEWEST}" in (result.evidence.ref or "")


def test_the_newest_claudes_connection_words_give_the_code_and_its_kind() -> None:
    refused = replay(CLAUDE["no-listener"], fixture(f"{NEWEST}-no-listener"))
    reset = replay(
        CLAUDE["connection-closed-before-a-response"],
        fixture(f"{NEWEST}-connection-closed-before-a-response"),
    )
    assert (refused.connection, refused.connection_detail) == ("unreachable", "ECONNREFUSED")
    assert (reset.connection, reset.connection_detail) == ("reset", "ECONNRESET")


NEW_WORDS = {
    "API Error: Can't reach the API server — check your internet or DNS (ENOTFOUND)": (
        "unreachable",
        "ENOTFOUND",
    ),
    "API Error: Unable to connect to API (EPROTO)": ("unreachable", "EPROTO"),
    "API Error: Connection dropped (ECONNRESET). Check the gateway set in "
    "ANTHROPIC_BASE_URL, then try again.": ("reset", "ECONNRESET"),
    "Request timed out": ("reset", "request timed out"),
    "Request timed out. If the API is slow to answer, or a proxy or gateway holds "
    "responses, set API_TIMEOUT_MS above 3000.": ("reset", "request timed out"),
}


@pytest.mark.parametrize(
    ("words", "seen"), NEW_WORDS.items(), ids=[code for _, code in NEW_WORDS.values()]
)
def test_each_of_the_newest_claudes_connection_words_is_read(
    words: str, seen: tuple[str, str]
) -> None:
    events = lines(f"{NEWEST}-no-listener")
    stdout = dump([*events[:-1], {**events[-1], "result": words}])
    result = replay(CLAUDE["no-listener"], stdout)
    assert (result.connection, result.connection_detail) == seen
    assert passes_gate(result.evidence)


@pytest.mark.parametrize(
    "words",
    [
        "API Error: Connection refused (ECONNREFUSED)",  # not claude's sentence
        "API Error: Connection dropped after the answer began (ECONNRESET)",
        "Request timed out after the answer began",
        "API Error: Request timed out",  # not claude's whole text
    ],
)
def test_words_like_the_newest_claudes_but_not_them_read_as_nothing(words: str) -> None:
    events = lines(f"{NEWEST}-no-listener")
    result = replay(CLAUDE["no-listener"], dump([*events[:-1], {**events[-1], "result": words}]))
    assert (result.connection, result.failure_class) == (None, None)
    assert not passes_gate(result.evidence)


def _overload_332() -> list[dict]:
    return lines(f"{NEWEST}-200-overload-in-stream")


def test_claudes_own_close_of_a_broken_request_is_no_output() -> None:
    """2.1.332 prints, after its synthetic error, a message_delta repeating the
    placeholder output token of the request the vendor began (SPEC §12.8)."""
    events = _overload_332()
    kinds = [e.get("event", {}).get("type") for e in events if e["type"] == "stream_event"]
    assert "content_block_start" not in kinds
    assert kinds[-2:] == ["message_delta", "message_stop"]
    stream = parse_claude_stream(fixture(f"{NEWEST}-200-overload-in-stream").splitlines())
    assert (stream.delta_output_tokens, claim_blockers(stream)) == (0, [])


def _delta(tokens: int) -> dict:
    return {
        "type": "stream_event",
        "event": {"type": "message_delta", "usage": {"output_tokens": tokens}},
    }


def test_a_close_with_more_tokens_than_the_placeholder_is_output() -> None:
    events = _overload_332()
    at = next(i for i, e in enumerate(events) if e.get("event", {}).get("type") == "message_delta")
    stdout = dump([*events[:at], _delta(2), *events[at + 1 :]])
    assert "output tokens" in " ".join(claim_blockers(parse_claude_stream(stdout.splitlines())))


def test_a_message_delta_before_claudes_synthetic_error_is_the_vendors() -> None:
    events = _overload_332()
    synthetic = next(i for i, e in enumerate(events) if e["type"] == "assistant")
    stdout = dump([*events[:synthetic], _delta(1), *events[synthetic:]])
    stream = parse_claude_stream(stdout.splitlines())
    assert stream.delta_output_tokens == 1
    assert not passes_gate(replay(CLAUDE["200-overload-in-stream"], stdout).evidence)
