"""The fake vendor itself, without any CLI: routing, steps, recording, and finding the CLIs."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.fakevendor import clis
from tests.fakevendor import scenario as sc
from tests.fakevendor.server import FakeVendor


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
