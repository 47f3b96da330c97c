"""The shapes the CLIs' words miss, read on the wire (SPEC §13.2-§13.4), with the real CLIs.

Each test runs the real codex or claude through governor's relay against the loopback fake
vendor; where today's text alone comes to another verdict, the test says so, and the
recorded evidence names the disagreement.
"""

from __future__ import annotations

import socket
import threading
import time
from datetime import UTC, datetime

import pytest

from governor.core.evidence import is_uncharged_failure
from governor.core.observation import Usage
from governor.core.upstream import seen
from governor.exec.claude import ClaudeHarness
from governor.exec.codex import CodexHarness
from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import (
    FAKE_ANTHROPIC_KEY,
    FAKE_OPENAI_KEY,
    PROMPT,
    claude_env,
    claude_profile,
    codex_profile,
)
from tests.fakevendor.raw import RawServer
from tests.fakevendor.server import FakeVendor

pytest_plugins = ["tests.vendor_conftest"]

BILLING_MESSAGE = "There is an issue with your billing or payment information"


def codex(vendor: FakeVendor, scenario: sc.Scenario, env, cwd, *, relay=True, **profile):
    vendor.play(scenario)
    chosen = codex_profile().model_copy(update={"relay": None if relay else False, **profile})
    return CodexHarness(cwd).run(PROMPT, chosen, cwd=cwd, env=env)


def claude(vendor: FakeVendor, scenario: sc.Scenario, env, cwd, *, relay=True, **profile):
    vendor.play(scenario)
    chosen = claude_profile().model_copy(update={"relay": None if relay else False, **profile})
    return ClaudeHarness(cwd).run(PROMPT, chosen, cwd=cwd, env=env)


def test_claude_a_billing_400_by_its_body_type_is_environment_not_charged(
    fake_vendor, claude_source_env, workdir
):
    scenario = sc.status(400, error_code="billing_error", message=BILLING_MESSAGE)
    result = claude(fake_vendor, scenario, claude_source_env, workdir)
    assert (result.failure_class, result.rule) == ("environment", "billing")
    assert is_uncharged_failure(result.failure_class, result.evidence)
    assert result.billing is not None
    # claude's own words carry no type: the text alone charged it (the wire disagrees)
    text = claude(fake_vendor, scenario, claude_source_env, workdir, relay=False)
    assert text.failure_class is None
    assert result.evidence.disagreement is not None
    assert result.evidence.disagreement.text_class is None
    assert (result.evidence.disagreement.cli or "").startswith("claude-cli/")


def test_claude_a_spent_subscription_window_is_upstream_with_its_reset_and_account(
    fake_vendor, claude_source_env, workdir
):
    reset = int(time.time()) + 3 * 3600
    result = claude(fake_vendor, sc.usage_window_anthropic(reset), claude_source_env, workdir)
    assert (result.failure_class, result.rule) == ("upstream", "usage-window")
    assert result.resets_at == datetime.fromtimestamp(reset, UTC)
    assert result.retry_after_s is not None
    assert 3 * 3600 - 120 < result.retry_after_s <= 3 * 3600
    assert is_uncharged_failure(result.failure_class, result.evidence)
    assert result.account is not None
    assert FAKE_ANTHROPIC_KEY not in result.account
    limits = result.evidence.observation.wire.requests[-1].limits  # type: ignore[union-attr]
    assert "anthropic-ratelimit-unified-status=rejected" in limits


def test_codex_a_spent_usage_window_is_upstream_with_its_reset(
    fake_vendor, codex_source_env, workdir
):
    now = int(time.time())
    reset = now + 2 * 86400
    result = codex(fake_vendor, sc.usage_window_openai(reset, now), codex_source_env, workdir)
    assert (result.failure_class, result.rule, result.vendor_code) == (
        "upstream",
        "usage-window",
        "usage_limit_reached",
    )
    assert result.resets_at == datetime.fromtimestamp(reset, UTC)
    assert is_uncharged_failure(result.failure_class, result.evidence)
    assert result.account is not None
    assert FAKE_OPENAI_KEY not in result.account
    assert len(fake_vendor.model_requests) == 1


def test_codex_the_same_key_is_the_same_account_and_another_key_another(
    fake_vendor, codex_source_env, workdir
):
    now = int(time.time())
    scenario = sc.usage_window_openai(now + 600, now)
    first = codex(fake_vendor, scenario, codex_source_env, workdir)
    again = codex(fake_vendor, scenario, codex_source_env, workdir)
    other_env = {**codex_source_env, "FAKE_VENDOR_API_KEY": "sk-fake-another-key-000111"}
    other = codex(fake_vendor, scenario, other_env, workdir)
    assert first.account == again.account != other.account


def test_codex_usage_not_included_is_environment_with_the_plan_remedy(
    fake_vendor, codex_source_env, workdir
):
    scenario = sc.status(429, error_code="usage_not_included", message="upgrade to Plus")
    result = codex(fake_vendor, scenario, codex_source_env, workdir)
    assert (result.failure_class, result.rule) == ("environment", "plan")
    assert is_uncharged_failure(result.failure_class, result.evidence)


@pytest.mark.parametrize("code", ["server_is_overloaded", "slow_down", "rate_limit_exceeded"])
def test_codex_an_in_stream_refusal_before_any_output_item_is_upstream_and_free(
    code, fake_vendor, codex_source_env, workdir
):
    result = codex(fake_vendor, sc.stream_error(code), codex_source_env, workdir)
    assert result.failure_class == "upstream"
    assert is_uncharged_failure(result.failure_class, result.evidence)
    assert result.evidence.source == "relay:wire"


def test_codex_usage_comes_from_the_wire_when_codex_reports_none(
    fake_vendor, codex_source_env, workdir
):
    result = codex(fake_vendor, sc.fail_after_tool_call(503), codex_source_env, workdir)
    assert not result.ok
    assert result.usage is not None  # codex's failed turn reports none; the wire does
    assert (result.usage.input_tokens, result.usage.output_tokens) == (120, 30)


def test_claude_a_request_that_times_out_before_any_byte_is_upstream(claude_cli, workdir, tmp_path):
    def silent(conn: socket.socket, head: bytes) -> None:
        server.peer_closed(conn)  # never a byte back

    with RawServer(silent) as server:
        env = {**claude_env(tmp_path / "home", server.url, claude_cli), "API_TIMEOUT_MS": "2000"}
        profile = claude_profile().model_copy(update={"env": ("API_TIMEOUT_MS",)})
        result = ClaudeHarness(workdir).run(PROMPT, profile, cwd=workdir, env=env)
    assert not result.timed_out
    assert (result.failure_class, result.connection) == ("upstream", "reset")
    assert result.wire is not None
    assert result.wire.requests[-1].ended == "timeout"
    assert is_uncharged_failure(result.failure_class, result.evidence)


def test_codex_reached_is_reached_a_vendor_that_answered_then_dropped_is_never_environment(
    fake_vendor, codex_source_env, workdir
):
    # the first answer (a tool call) came back and ran; then every connection is closed
    # before a byte: a vendor failure after an answer, charged (the tool ran)
    scenario = sc.Scenario((sc.Step("tool_call"), sc.Step("hangup")))
    result = codex(fake_vendor, scenario, codex_source_env, workdir, timeout_s=30.0)
    assert not result.stopped
    assert result.wire is not None
    assert result.wire.responded
    assert result.failure_class == "upstream"
    assert not is_uncharged_failure(result.failure_class, result.evidence)
    assert seen(result).contact == "refused"
    assert not seen(result).unreachable  # the health record learns that it answered


def test_a_budget_spent_mid_run_refuses_the_next_request_and_the_tool_effect_stays(
    fake_vendor, codex_source_env, workdir
):
    asked: list[Usage | None] = []

    def gate(usage: Usage | None) -> str | None:
        asked.append(usage)
        return "governor: the goal's cost budget is spent"

    scenario = sc.Scenario((sc.Step("tool_call", command="touch gated.txt"), sc.Step("reply")))
    fake_vendor.play(scenario)
    harness = CodexHarness(workdir, gate=gate)
    result = harness.run(PROMPT, codex_profile(), cwd=workdir, env=codex_source_env)
    assert (workdir / "gated.txt").exists()  # what the agent did is kept
    assert len(fake_vendor.model_requests) == 1  # the second never left the relay
    assert asked  # asked before the second model request, not the first
    assert asked[0] is not None
    assert asked[0].output_tokens
    assert (result.failure_class, result.rule) == (None, "budget")
    assert not is_uncharged_failure(result.failure_class, result.evidence)
    assert result.wire is not None
    assert result.wire.gated


def test_a_relay_that_fails_mid_call_makes_the_call_a_continuation_not_a_charge(
    fake_vendor, claude_source_env, workdir
):
    """SPEC §13.1: the relay failing never costs an attempt. Here the relay's own gate
    breaks (raises) at the second model request, which never leaves the relay; the call is
    run again through a fresh relay and its result stands, with both runs' usage."""
    asked: list[threading.Thread] = []

    def broken_gate(usage: Usage | None) -> str | None:
        asked.append(threading.current_thread())
        if asked[0] is threading.current_thread():  # the first relay's thread only
            raise RuntimeError("a gate that fails inside the relay")
        return None

    scenario = sc.Scenario((sc.Step("tool_call", command="touch continued.txt"), sc.Step("reply")))
    fake_vendor.play(scenario)
    harness = ClaudeHarness(workdir, gate=broken_gate)
    result = harness.run(PROMPT, claude_profile(), cwd=workdir, env=claude_source_env)
    assert asked  # the first run's second request reached the gate and broke the relay
    assert result.ok, result.error  # the continuation's one request was answered
    assert len(fake_vendor.model_requests) >= 2  # the first run's, then the continuation's
    assert len(set(asked)) == 2  # two relays: the call ran again
    assert result.wire is not None
    assert result.wire.failed is None  # the facts are the continuation's relay's
    assert result.usage is not None
    assert (result.usage.input_tokens or 0) > 120  # both runs' usage, counted once each
