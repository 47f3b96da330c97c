"""The fake vendor itself, without any CLI: routing, steps, recording, and finding the CLIs."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.fakevendor import clis, matrix
from tests.fakevendor import scenario as sc
from tests.fakevendor.server import FakeVendor, redact_headers


def post(vendor: FakeVendor, path: str, body: dict[str, object]) -> tuple[int, bytes]:
    request = urllib.request.Request(
        vendor.url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer sk-secret-value"},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_each_model_request_plays_the_next_step_and_the_last_repeats():
    with FakeVendor(sc.fail_after_tool_call(503)) as vendor:
        codes = [post(vendor, "/v1/responses", {"stream": True})[0] for _ in range(3)]
    assert codes == [200, 503, 503]


def test_a_reply_streams_the_text_in_responses_events():
    with FakeVendor(sc.reply('{"ok": true}')) as vendor:
        status, body = post(vendor, "/v1/responses", {"stream": True})
    events = [json.loads(line[6:]) for line in body.decode().splitlines() if line[:6] == "data: "]
    assert status == 200
    assert events[0]["type"] == "response.created"
    assert events[-1]["type"] == "response.completed"
    done = [e for e in events if e["type"] == "response.output_item.done"]
    assert done[0]["item"]["content"][0]["text"] == '{"ok": true}'


def test_a_refusal_answers_the_status_with_retry_after_and_a_vendor_error_body():
    with FakeVendor(sc.status(429, retry_after=7)) as vendor:
        status, body = post(vendor, "/v1/messages?beta=true", {"stream": True})
    assert status == 429
    assert json.loads(body)["error"]["type"] == "rate_limit_error"


def test_requests_are_recorded_with_credentials_redacted():
    with FakeVendor() as vendor:
        post(vendor, "/v1/messages", {"model": "m", "stream": False})
        post(vendor, "/v1/messages/count_tokens", {"model": "m"})
        [first, second] = vendor.requests
    assert first.headers["authorization"] == "[REDACTED]"
    assert "sk-secret-value" not in json.dumps([r.headers for r in vendor.requests])
    assert (first.is_model_request, second.is_model_request) == (True, False)
    assert first.body == {"model": "m", "stream": False}


def test_play_swaps_the_scenario_and_forgets_earlier_requests():
    with FakeVendor(sc.status(503)) as vendor:
        post(vendor, "/v1/responses", {})
        vendor.play(sc.reply("hi"))
        status, _ = post(vendor, "/v1/responses", {})
        assert (status, len(vendor.requests)) == (200, 1)


def test_a_missing_cli_skips_locally(monkeypatch, tmp_path):
    monkeypatch.setattr(clis, "NPM_BIN", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(clis.REQUIRE_ALL, raising=False)
    with pytest.raises(pytest.skip.Exception, match="codex CLI not installed"):
        clis.require_cli("codex")


def test_a_missing_cli_fails_when_everything_is_required(monkeypatch, tmp_path):
    monkeypatch.setattr(clis, "NPM_BIN", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv(clis.REQUIRE_ALL, "1")
    with pytest.raises(pytest.fail.Exception, match="forbids skipping"):
        clis.require_cli("claude")


@pytest.mark.parametrize("cases", [matrix.CLAUDE, matrix.CODEX], ids=["claude", "codex"])
def test_a_newer_release_may_change_a_verdict_but_never_its_class_or_charge(cases):
    for name, case in cases.items():
        for version, verdict in case.since.items():
            assert matrix.classification(verdict) == matrix.classification(case.expect), (
                name,
                version,
            )


def test_a_versioned_verdict_applies_from_its_release_on():
    case = matrix.CLAUDE["200-overload-in-stream"]
    assert case.verdict("2.1.197") == case.expect
    assert case.verdict("2.1.332") == case.verdict("2.1.400") == case.since["2.1.332"]
    assert case.relay_reason("2.1.332") is None
    assert matrix.CLAUDE["429"].relay_reason("2.1.197") is None
    assert "wire" in (matrix.CLAUDE["429"].relay_reason("2.1.332") or "")


def test_a_pinned_release_that_is_missing_names_its_version(monkeypatch, tmp_path):
    monkeypatch.setattr(clis, "NPM_BIN", tmp_path)
    monkeypatch.setattr(clis, "NPM_VERSIONS", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(clis.REQUIRE_ALL, raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"claude 9\.9\.9 CLI not installed"):
        clis.require_cli("claude", "9.9.9")
    monkeypatch.setenv(clis.REQUIRE_ALL, "1")
    with pytest.raises(pytest.fail.Exception, match=r"claude 9\.9\.9 CLI not installed"):
        clis.require_cli("claude", "9.9.9")


def test_a_cli_reporting_another_version_is_not_taken_for_the_pinned_one(tmp_path, monkeypatch):
    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\necho '1.0.0 (Claude Code)'\n")
    fake.chmod(0o755)
    monkeypatch.setattr(clis, "NPM_BIN", tmp_path)
    monkeypatch.setattr(clis, "NPM_VERSIONS", tmp_path / "none")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert clis.find_cli("claude", "1.0.0") == str(fake)
    assert clis.find_cli("claude", "2.1.332") is None


def test_the_gemini_dialect_streams_a_reply_and_answers_errors_in_googles_envelope():
    route = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    with FakeVendor(sc.reply("hello")) as vendor:
        status, body = post(vendor, route, {"contents": []})
        assert status == 200
        [event] = [json.loads(line[6:]) for line in body.decode().splitlines() if line]
        candidate = event["candidates"][0]
        assert (candidate["content"]["parts"], candidate["finishReason"]) == (
            [{"text": "hello"}],
            "STOP",
        )
        vendor.play(sc.Scenario((sc.Step("status", status=400, code="API_KEY_INVALID"),)))
        status, body = post(vendor, route, {})
        error = json.loads(body)["error"]
        assert (status, error["status"], error["details"][0]["reason"]) == (
            400,
            "INVALID_ARGUMENT",
            "API_KEY_INVALID",
        )
        status, _ = post(vendor, "/v1beta/models/gemini-2.5-flash:countTokens", {})
        assert status == 200
        assert [r.is_model_request for r in vendor.requests] == [True, False]
        assert vendor.requests[0].headers["authorization"] == "[REDACTED]"


def test_the_gemini_key_header_is_redacted():
    assert redact_headers({"X-Goog-Api-Key": "AIza-secret"}) == {"x-goog-api-key": "[REDACTED]"}
