"""The real ``claude`` CLI against the loopback fake vendor: every scenario's class and evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governor.core.evidence import is_uncharged_failure
from governor.exec.claude import ClaudeHarness
from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import FAKE_ANTHROPIC_KEY, PLAN, PROMPT, claude_profile, is_charged
from tests.fakevendor.server import FakeVendor

pytest_plugins = ["tests.vendor_conftest"]


def run_claude(vendor: FakeVendor, scenario: sc.Scenario, env: dict[str, str], cwd: Path):
    vendor.play(scenario)
    return ClaudeHarness(cwd).run(PROMPT, claude_profile(), cwd=cwd, env=env)


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


@pytest.mark.parametrize(
    "code", [503, 429, 529, 500], ids=["http-503", "http-429", "http-529", "http-500"]
)
def test_a_refused_request_is_upstream_but_charged_for_want_of_evidence(
    fake_vendor, claude_source_env, workdir, code
):
    result = run_claude(fake_vendor, sc.status(code, retry_after=7), claude_source_env, workdir)
    assert not result.ok
    assert (result.failure_class, result.rule, result.vendor_status) == (
        "upstream",
        "vendor-status",
        code,
    )
    # The envelope cannot tell this from a stream cut after text: nothing is proven absent.
    assert (result.evidence.effects, result.evidence.output) == ("unknown", "unknown")
    assert is_charged(result)
    assert result.retry_after_s is None  # the envelope does not carry Retry-After
    assert len(fake_vendor.model_requests) == 1  # CLAUDE_CODE_MAX_RETRIES=0 holds


def test_a_500_after_a_tool_call_is_upstream_with_effects_and_output_observed(
    fake_vendor, claude_source_env, workdir
):
    result = run_claude(fake_vendor, sc.fail_after_tool_call(500), claude_source_env, workdir)
    assert (result.failure_class, result.vendor_status) == ("upstream", 500)
    assert (result.evidence.effects, result.evidence.output) == ("observed", "observed")
    assert result.evidence.source == "claude:result"
    assert is_charged(result)
    assert len(fake_vendor.model_requests) == 2
    tool_result = fake_vendor.model_requests[1].body["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool_result"


def test_a_stream_broken_after_text_is_charged(fake_vendor, claude_source_env, workdir):
    result = run_claude(fake_vendor, sc.fail_after_text(500), claude_source_env, workdir)
    assert not result.ok
    assert result.vendor_status is None  # an in-stream error has no api_error_status
    assert result.failure_class == "upstream"  # "Internal server error" in the text
    assert result.rule == "upstream-text"
    assert result.evidence.output == "unknown"  # the envelope hides the streamed text
    assert is_charged(result)
    assert len(fake_vendor.model_requests) == 1  # no silent non-streaming re-request


def test_a_malformed_stream_is_charged_without_a_class(fake_vendor, claude_source_env, workdir):
    result = run_claude(fake_vendor, sc.malformed(), claude_source_env, workdir)
    assert not result.ok
    assert (result.failure_class, result.rule) == (None, "default")
    assert result.evidence.effects == result.evidence.output == "unknown"
    assert is_charged(result)
    assert len(fake_vendor.model_requests) == 1


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
    failed = run_claude(fake_vendor, sc.status(503), claude_source_env, workdir)
    assert FAKE_ANTHROPIC_KEY not in failed.model_dump_json()
