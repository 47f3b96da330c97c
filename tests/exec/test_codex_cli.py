"""The real ``codex`` CLI against the loopback fake vendor: every scenario's class and evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governor.core.evidence import is_uncharged_failure
from governor.exec.codex import CodexHarness
from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import FAKE_OPENAI_KEY, PLAN, PROMPT, codex_profile, is_charged
from tests.fakevendor.matrix import CODEX, verdict_of
from tests.fakevendor.server import FakeVendor

pytest_plugins = ["tests.vendor_conftest"]


def run_codex(
    vendor: FakeVendor, scenario: sc.Scenario, env: dict[str, str], cwd: Path, *, relay=True
):
    vendor.play(scenario)
    profile = codex_profile() if relay else codex_profile().model_copy(update={"relay": False})
    return CodexHarness(cwd).run(PROMPT, profile, cwd=cwd, env=env)


def test_a_streamed_plan_reply_succeeds_and_the_reply_carries_the_plan(
    fake_vendor, codex_source_env, workdir
):
    reply = "Here is the plan.\n" + json.dumps(PLAN)
    result = run_codex(fake_vendor, sc.reply(reply), codex_source_env, workdir)
    assert result.ok, result.error
    assert result.failure_class is None
    assert result.reply is not None
    assert json.loads(result.reply.splitlines()[-1]) == PLAN
    [request] = fake_vendor.model_requests
    assert request.route == "/v1/responses"
    assert request.body["stream"] is True
    assert request.headers["authorization"] == "[REDACTED]"
    assert PROMPT in json.dumps(request.body["input"])


@pytest.mark.parametrize("relay", [True, False], ids=["relay", "text"])
@pytest.mark.parametrize("code", [503, 429, 529], ids=["http-503", "http-429", "http-529"])
def test_a_refused_first_request_is_upstream_with_positive_no_effect_evidence(
    fake_vendor, codex_source_env, workdir, code, relay
):
    scenario = sc.status(code, retry_after=7)
    result = run_codex(fake_vendor, scenario, codex_source_env, workdir, relay=relay)
    assert not result.ok
    assert (result.failure_class, result.rule, result.vendor_status) == (
        "upstream",
        "vendor-status",
        code,
    )
    evidence = result.evidence
    assert (evidence.effects, evidence.output, evidence.refusal) == ("absent",) * 3
    assert evidence.ref is not None
    if relay:  # the wire says it, Retry-After included
        assert evidence.source == "relay:wire"
        assert f"last refused {code}" in evidence.ref
        assert result.retry_after_s == 7.0
    else:
        assert evidence.source == "codex:jsonl"
        assert evidence.ref.startswith("codex-jsonl:events 0-")
        assert f"HTTP {code}" in evidence.ref
        assert result.retry_after_s is None  # codex's text does not surface Retry-After
    assert is_uncharged_failure(result.failure_class, evidence)
    assert len(fake_vendor.model_requests) == 1  # in-CLI retries are off


def test_http_500_on_the_first_request_is_read_from_the_trace(
    fake_vendor, codex_source_env, workdir
):
    result = run_codex(fake_vendor, sc.status(500), codex_source_env, workdir)
    assert "high demand" in (result.error or "")  # codex prints no status for a 500
    assert (result.failure_class, result.vendor_status) == ("upstream", 500)
    assert is_uncharged_failure(result.failure_class, result.evidence)


def test_a_500_after_a_tool_ran_is_upstream_but_charged_with_effects_observed(
    fake_vendor, codex_source_env, workdir
):
    result = run_codex(fake_vendor, sc.fail_after_tool_call(500), codex_source_env, workdir)
    assert (result.failure_class, result.vendor_status) == ("upstream", 500)
    assert result.evidence.effects == "observed"
    assert is_charged(result)
    assert len(fake_vendor.model_requests) == 2
    tool_output = fake_vendor.model_requests[1].body["input"][-1]
    assert tool_output["type"] == "function_call_output"


def test_a_503_after_a_tool_that_leaves_no_jsonl_item_is_charged(
    fake_vendor, codex_source_env, workdir
):
    scenario = sc.fail_after_tool_call(503, tool="get_goal")
    result = run_codex(fake_vendor, scenario, codex_source_env, workdir)
    assert (result.failure_class, result.vendor_status) == ("upstream", 503)
    assert result.evidence.effects == "observed"  # seen in codex's trace, not its JSONL
    assert is_charged(result)


def test_a_503_after_a_command_the_sandbox_denied_is_charged(
    fake_vendor, codex_source_env, workdir
):
    fake_vendor.play(sc.fail_after_tool_call(503, command="touch denied.txt"))
    profile = codex_profile(args=("--sandbox", "read-only"))
    result = CodexHarness(workdir).run(PROMPT, profile, cwd=workdir, env=codex_source_env)
    assert not (workdir / "denied.txt").exists()
    assert (result.failure_class, result.vendor_status) == ("upstream", 503)
    assert result.evidence.effects == "observed"  # codex's JSONL has no item for it
    assert is_charged(result)


@pytest.mark.parametrize("relay", [True, False], ids=["relay", "text"])
def test_a_stream_broken_after_text_is_charged_without_positive_evidence(
    fake_vendor, codex_source_env, workdir, relay
):
    scenario = sc.fail_after_text(500)
    result = run_codex(fake_vendor, scenario, codex_source_env, workdir, relay=relay)
    assert not result.ok
    if relay:  # the wire saw the text stream, then the vendor's in-stream server_error
        assert (result.failure_class, result.vendor_status) == ("upstream", 500)
        assert result.evidence.output == "observed"
    else:
        assert result.failure_class is None  # codex reports a stream disconnect, no status
        assert result.evidence.effects == result.evidence.output == "unknown"
    assert is_charged(result)
    assert "stream disconnected" in (result.error or "")


def test_a_malformed_stream_is_charged_without_positive_evidence(
    fake_vendor, codex_source_env, workdir
):
    result = run_codex(fake_vendor, sc.malformed(), codex_source_env, workdir)
    assert not result.ok
    assert (result.failure_class, result.rule) == (None, "default")
    assert result.evidence.effects == result.evidence.output == "unknown"
    assert is_charged(result)


def test_codex_absent_from_path_is_an_environment_failure(codex_source_env, workdir, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {**codex_source_env, "PATH": str(empty)}
    result = CodexHarness(workdir).run(PROMPT, codex_profile(), cwd=workdir, env=env)
    assert (result.failure_class, result.rule, result.spawn_errno) == (
        "environment",
        "spawn-errno",
        "ENOENT",
    )
    assert result.evidence.source == "exec:spawn-errno"
    assert is_uncharged_failure(result.failure_class, result.evidence)


def test_the_api_key_never_reaches_the_recorded_result(fake_vendor, codex_source_env, workdir):
    reply = f"my key is {FAKE_OPENAI_KEY}\n" + json.dumps(PLAN)
    result = run_codex(fake_vendor, sc.reply(reply), codex_source_env, workdir)
    assert result.ok
    assert FAKE_OPENAI_KEY not in result.model_dump_json()
    failed = run_codex(fake_vendor, sc.status(503), codex_source_env, workdir)
    assert FAKE_OPENAI_KEY not in failed.model_dump_json()


def run_case(name, vendor, cli, workdir, home, *, relay=True, **profile):
    case = CODEX[name]
    vendor.play(case.scenario)
    env = case.source_env(True, home, vendor.url, cli)
    chosen = case.profile(True, relay=relay).model_copy(update=profile)
    result = CodexHarness(workdir).run(PROMPT, chosen, cwd=workdir, env=env)
    assert verdict_of(result) == case.expected(relay), (result.evidence.ref, result.error)
    return result


@pytest.mark.parametrize("relay", [True, False], ids=["relay", "text"])
@pytest.mark.parametrize("name", CODEX, ids=list(CODEX))
def test_the_installed_codex_comes_to_each_recorded_verdict(
    name, relay, fake_vendor, codex_cli, workdir, tmp_path
):
    run_case(name, fake_vendor, codex_cli, workdir, tmp_path / "home", relay=relay)


CREDENTIAL_CASES = [name for name, case in CODEX.items() if case.expect.credential]


@pytest.mark.parametrize("name", CREDENTIAL_CASES, ids=CREDENTIAL_CASES)
def test_a_refused_or_missing_key_stops_at_once_uncharged_with_its_remedy(
    name, fake_vendor, codex_cli, workdir, tmp_path
):
    case = CODEX[name]
    result = run_case(name, fake_vendor, codex_cli, workdir, tmp_path / "home")
    assert result.credential is not None
    remedy = "FAKE_VENDOR_API_KEY" if case.drop_key else "codex login"
    assert remedy in result.credential
    assert len(fake_vendor.model_requests) == (0 if case.drop_key else 1)


def test_a_403_says_a_proxy_may_be_refusing_too(fake_vendor, codex_cli, workdir, tmp_path):
    result = run_case("403", fake_vendor, codex_cli, workdir, tmp_path / "home")
    assert "a proxy between governor and the vendor" in (result.credential or "")


@pytest.mark.parametrize("name", ["429-insufficient-quota", "insufficient-quota-in-stream"])
def test_out_of_credit_is_environment_uncharged_with_a_billing_remedy(
    name, fake_vendor, codex_cli, workdir, tmp_path
):
    result = run_case(name, fake_vendor, codex_cli, workdir, tmp_path / "home")
    assert (result.failure_class, result.rule) == ("environment", "billing")
    assert "Quota exceeded. Check your plan and billing details." in (result.error or "")
    assert "platform.openai.com/account/billing" in (result.billing or "")
    assert is_uncharged_failure(result.failure_class, result.evidence)
    assert len(fake_vendor.model_requests) == 1


def test_an_in_stream_rate_limit_fills_retry_after_and_stays_upstream(
    fake_vendor, codex_cli, workdir, tmp_path
):
    name = "rate-limit-exceeded-in-stream"
    result = run_case(name, fake_vendor, codex_cli, workdir, tmp_path / "home")
    assert (result.failure_class, result.retry_after_s) == ("upstream", 1.5)
    assert "try again in 1.5s" in (result.error or "")


def test_a_vendor_with_nothing_listening_ends_the_agent_at_the_first_sign(
    fake_vendor, codex_cli, workdir, tmp_path
):
    # codex would wait for the network until timeout_s; the test's own deadline (90 s)
    # is far shorter than this timeout, so only an early end passes
    result = run_case(
        "no-listener",
        fake_vendor,
        codex_cli,
        workdir,
        tmp_path / "home",
        relay=False,
        timeout_s=1800.0,
    )
    assert result.stopped
    assert not result.timed_out
    assert (result.failure_class, result.connection) == ("environment", "unreachable")
    assert "waiting for network" in (result.error or "")
    assert "ended by governor" in (result.error or "")
    assert result.endpoint is not None
    assert result.endpoint.startswith("http://127.0.0.1:")
    assert fake_vendor.requests == []  # nothing reached any vendor
    observation = result.evidence.observation
    assert observation is not None
    assert (observation.stopped, observation.connection_detail) == (True, "waiting for network")


def test_through_the_relay_a_vendor_with_nothing_listening_ends_the_agent_at_once(
    fake_vendor, codex_cli, workdir, tmp_path
):
    # the relay's own connection was refused: the agent is ended without waiting for
    # codex's words, and the wire names the errno
    result = run_case(
        "no-listener", fake_vendor, codex_cli, workdir, tmp_path / "home", timeout_s=1800.0
    )
    assert result.stopped
    assert not result.timed_out
    assert (result.failure_class, result.connection) == ("environment", "unreachable")
    assert result.connection_detail == "ECONNREFUSED"
    assert fake_vendor.requests == []
    wire = result.wire
    assert wire is not None
    assert wire.requests[-1].ended == "connect"
    assert not wire.responded
