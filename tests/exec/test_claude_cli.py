"""The real ``claude`` CLI against the loopback fake vendor: the whole matrix, live (SPEC §11.9).

Every case of ``tests.fakevendor.matrix.CLAUDE`` runs with each pinned claude release
(``governor/exec/cli_pins.json``: the oldest supported and the newest tested; ids
``claude-<version>``) and must come to the verdict its recording came to
(``test_claude_stream.py`` checks the recordings), or the one its case names for that
release (``Case.since``). The class and the charge must hold on every release; where only
the wire can give the rest (``Case.needs_relay``), the rest is an expected failure until
the relay reads it. A case that changes fails with the release named, and the evidence's
ref says which lines made the difference.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from governor.core.evidence import is_uncharged_failure
from governor.exec.claude import CLAUDE_VERIFIED_VERSION, ClaudeHarness
from tests.fakevendor import scenario as sc
from tests.fakevendor.anthropic_api import CREDIT_TOO_LOW
from tests.fakevendor.clis import (
    FAKE_ANTHROPIC_KEY,
    PLAN,
    PROMPT,
    claude_env,
    claude_profile,
    dead_url,
)
from tests.fakevendor.matrix import CLAUDE, at_least, classification, verdict_of
from tests.fakevendor.server import FakeVendor

pytest_plugins = ["tests.vendor_conftest"]


def installed_version(cli: str) -> str:
    out = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=60).stdout
    return out.split()[0] if out.split() else "?"


@pytest.mark.parametrize("relay", [True, False], ids=["relay", "text"])
@pytest.mark.parametrize("name", CLAUDE, ids=list(CLAUDE))
def test_the_installed_claude_comes_to_each_recorded_verdict(
    name, relay, fake_vendor, claude_cli, claude_version, workdir, tmp_path, request
):
    case = CLAUDE[name]
    fake_vendor.play(case.scenario)
    env = case.source_env(False, tmp_path / "home", fake_vendor.url, claude_cli)
    profile = case.profile(False, relay=relay)
    result = ClaudeHarness(workdir).run(PROMPT, profile, cwd=workdir, env=env)
    version = installed_version(claude_cli)
    expect, seen = case.expected(relay, claude_version), verdict_of(result)
    why = (
        f"claude {version} (the rule was verified on {CLAUDE_VERIFIED_VERSION}) "
        f"came to another verdict on '{name}'{'' if relay else ' from its text'}: "
        f"{result.evidence.ref}; error: {result.error}"
    )
    assert classification(seen) == classification(expect), why
    needs = None if relay else case.relay_reason(claude_version)
    if needs is not None:
        request.applymarker(pytest.mark.xfail(reason=f"needs the relay: {needs}", strict=False))
    assert seen == expect, why


def run_claude(
    vendor: FakeVendor, scenario: sc.Scenario, env: dict[str, str], cwd: Path, *, relay=True
):
    vendor.play(scenario)
    profile = claude_profile() if relay else claude_profile().model_copy(update={"relay": False})
    return ClaudeHarness(cwd).run(PROMPT, profile, cwd=cwd, env=env)


def test_a_streamed_plan_reply_succeeds_with_its_cost(fake_vendor, claude_source_env, workdir):
    reply = "Here is the plan.\n" + json.dumps(PLAN)
    result = run_claude(fake_vendor, sc.reply(reply), claude_source_env, workdir)
    assert result.ok, result.error
    assert result.reply is not None
    assert json.loads(result.reply.splitlines()[-1]) == PLAN
    assert result.cost_usd is not None
    assert result.cost_usd > 0
    [request] = fake_vendor.model_requests
    assert request.route == "/v1/messages"
    assert request.body["stream"] is True
    assert request.headers["x-api-key"] == "[REDACTED]"
    assert PROMPT in json.dumps(request.body["messages"])


def test_claude_retries_a_refusal_once_and_reports_the_retry_after(
    fake_vendor, claude_source_env, workdir
):
    result = run_claude(fake_vendor, sc.status(429, retry_after=2), claude_source_env, workdir)
    # system/api_retry's retry_delay_ms: the Retry-After itself (2.1.197), or claude's
    # wait with its jitter on top (2.1.332); never shorter than the vendor asked
    assert result.retry_after_s is not None
    assert 2.0 <= result.retry_after_s <= 2.0 * 1.5
    assert len(fake_vendor.model_requests) == 2  # CLAUDE_CODE_MAX_RETRIES=1 holds
    assert is_uncharged_failure(result.failure_class, result.evidence)


def test_a_stream_broken_after_text_is_not_re_requested(fake_vendor, claude_source_env, workdir):
    result = run_claude(fake_vendor, sc.fail_after_text(500), claude_source_env, workdir)
    assert result.evidence.output == "observed"  # the partial text is in the stream
    assert len(fake_vendor.model_requests) == 1  # no silent non-streaming re-request


def test_a_tool_that_ran_before_the_503_is_in_the_stream(fake_vendor, claude_source_env, workdir):
    result = run_claude(fake_vendor, sc.fail_after_tool_call(503), claude_source_env, workdir)
    assert (result.evidence.effects, result.evidence.output) == ("observed", "observed")
    tool_result = fake_vendor.model_requests[1].body["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result"


def test_claude_absent_from_path_is_an_environment_failure(claude_source_env, workdir, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {**claude_source_env, "PATH": str(empty)}
    result = ClaudeHarness(workdir).run(PROMPT, claude_profile(), cwd=workdir, env=env)
    assert (result.failure_class, result.rule, result.spawn_errno) == (
        "environment",
        "spawn-errno",
        "ENOENT",
    )
    assert is_uncharged_failure(result.failure_class, result.evidence)


def test_the_api_key_never_reaches_the_recorded_result(fake_vendor, claude_source_env, workdir):
    reply = f"my key is {FAKE_ANTHROPIC_KEY}\n" + json.dumps(PLAN)
    result = run_claude(fake_vendor, sc.reply(reply), claude_source_env, workdir)
    assert result.ok
    assert FAKE_ANTHROPIC_KEY not in result.model_dump_json()
    for scenario in (sc.status(503), sc.status(401)):
        failed = run_claude(fake_vendor, scenario, claude_source_env, workdir)
        assert FAKE_ANTHROPIC_KEY not in failed.model_dump_json()


def test_a_503_claude_retried_into_a_reply_is_a_success_that_says_so(
    fake_vendor, claude_source_env, workdir
):
    scenario = sc.Scenario((sc.Step("status", status=503), sc.Step("reply", text="hello")))
    result = run_claude(fake_vendor, scenario, claude_source_env, workdir)
    assert result.ok, result.error
    assert result.vendor_retries == (503,)
    assert len(fake_vendor.model_requests) == 2


@pytest.mark.parametrize("relay", [True, False], ids=["relay", "text"])
def test_an_overload_inside_a_200_stream_is_uncharged_with_every_re_request_recorded(
    fake_vendor, claude_source_env, claude_version, workdir, relay
):
    """SPEC §12.8: HTTP 200, message_start, then an ``overloaded_error`` event (2.1.332
    then prints a message_delta of its own repeating the placeholder output token)."""
    scenario = sc.stream_error("overloaded_error")
    result = run_claude(fake_vendor, scenario, claude_source_env, workdir, relay=relay)
    # the wire reads the event's type; claude 2.1.332's own result reports 529 too
    newer = at_least(claude_version, "2.1.332")
    rule = "vendor-status" if relay or newer else "upstream-text"
    assert (result.failure_class, result.rule) == ("upstream", rule)
    assert (result.evidence.effects, result.evidence.output) == ("absent", "absent")
    assert is_uncharged_failure(result.failure_class, result.evidence)
    requests = len(fake_vendor.model_requests)
    assert requests >= 2
    assert result.vendor_retries == (None,) * (requests - 1)  # every re-request recorded
    if relay or not newer:
        words = "no content streamed" if relay else "responses begun, broken before any content"
        assert words in (result.evidence.ref or "")


def test_the_input_cost_of_an_overload_inside_a_200_stream_is_recorded(
    fake_vendor, claude_source_env, claude_version, workdir, request
):
    """SPEC §12.5: the input tokens of the requests the vendor began are a cost."""
    if at_least(claude_version, "2.1.332"):
        reason = (
            "needs the relay: claude 2.1.332 reports cost 0 and no input tokens for "
            "requests the vendor began and broke; their usage is only on the wire"
        )
        request.applymarker(pytest.mark.xfail(reason=reason, strict=False))
    result = run_claude(
        fake_vendor, sc.stream_error("overloaded_error"), claude_source_env, workdir
    )
    assert result.cost_usd is not None
    assert result.cost_usd > 0
    assert result.usage is not None
    assert (result.usage.input_tokens or 0) > 0


def test_a_404_is_resent_without_streaming_and_both_requests_are_recorded(
    fake_vendor, claude_source_env, workdir
):
    result = run_claude(fake_vendor, sc.status(404), claude_source_env, workdir)
    streamed, plain = fake_vendor.model_requests
    assert streamed.body.get("stream") is True
    assert not plain.body.get("stream")  # absent (2.1.197) or false (2.1.332)
    assert result.vendor_retries == (404,)
    assert (result.vendor_status, result.failure_class) == (404, None)


@pytest.mark.parametrize(
    ("scenario", "status"),
    [
        (sc.status(402, error_code="billing_error"), 402),
        (sc.status(400, error_code="invalid_request_error", message=CREDIT_TOO_LOW), 400),
    ],
    ids=["402-billing-error", "credit-balance-too-low"],
)
def test_out_of_credit_is_environment_uncharged_with_a_billing_remedy(
    fake_vendor, claude_source_env, workdir, scenario, status
):
    result = run_claude(fake_vendor, scenario, claude_source_env, workdir)
    assert (result.failure_class, result.rule, result.vendor_status) == (
        "environment",
        "billing",
        status,
    )
    assert "Plans & Billing" in (result.billing or "")
    assert is_uncharged_failure(result.failure_class, result.evidence)


@pytest.mark.parametrize("relay", [True, False], ids=["relay", "text"])
def test_a_vendor_with_nothing_listening_is_never_reached(claude_cli, workdir, tmp_path, relay):
    env = claude_env(tmp_path / "home", dead_url(), claude_cli)
    profile = claude_profile() if relay else claude_profile().model_copy(update={"relay": False})
    result = ClaudeHarness(workdir).run(PROMPT, profile, cwd=workdir, env=env)
    assert (result.failure_class, result.rule, result.connection) == (
        "environment",
        "no-response",
        "unreachable",
    )
    if relay:  # the relay's own connect was refused; claude saw the relay close on it
        assert result.connection_detail == "ECONNREFUSED"
    else:  # claude's own words: "Unable to connect to API (ConnectionRefused)" (2.1.197),
        # "Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)" (2.1.332)
        assert result.connection_detail in ("ConnectionRefused", "ECONNREFUSED")
        assert result.connection_detail in (result.error or "")
    assert result.endpoint == env["ANTHROPIC_BASE_URL"]
    assert is_uncharged_failure(result.failure_class, result.evidence)
