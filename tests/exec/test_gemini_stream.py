"""gemini's stream-json fold and its absence rule, on recordings of the real CLI (issue 32).

``tests/fixtures/vendor/gemini-*.jsonl`` (stdout) and ``.stderr`` are gemini 0.61.0's
output against the fake vendor through ``GeminiHarness``'s invocation (recorded with
the same environment ``tests/exec/test_gemini_cli.py`` uses); the live tests run the
same cases.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from governor.core.absence import GeminiFacts, gemini_blockers
from governor.core.evidence import is_uncharged_failure, passes_gate
from governor.core.upstream import probe_profile
from governor.exec.cli_pins import cli_pins
from governor.exec.endpoints import upstream_of
from governor.exec.environment import Redactor
from governor.exec.gemini import (
    GEMINI_VERIFIED_VERSION,
    SETTINGS,
    GeminiEvents,
    GeminiHarness,
    call_settings,
    gemini_result,
    insecure_ancestor,
    settings_root,
    stderr_status,
    vendor_error,
)
from governor.exec.process import ProcessResult
from tests.fakevendor.clis import FAKE_GEMINI_KEY, gemini_profile
from tests.fakevendor.matrix import FIXTURES

EXITS = {
    "reply": 0,
    "503": 247,
    "429": 173,
    "400-api-key-invalid": 144,
    "no-listener": 1,
    "503-after-tool-call": 247,
    "500-after-text": 0,
}
"""The exit code gemini 0.61.0 gave each recording (they mean nothing to governor)."""


def replay(name: str, *, stdout: str | None = None, stderr: str | None = None):
    out = stdout if stdout is not None else (FIXTURES / f"gemini-{name}.jsonl").read_text()
    err = stderr if stderr is not None else (FIXTURES / f"gemini-{name}.stderr").read_text()
    events = GeminiEvents()
    for line in out.splitlines():
        events.feed(line)
    data = out.encode()
    process = ProcessResult(
        argv=("gemini", "-p", ""),
        exit_code=EXITS[name],
        spawn_errno=None,
        spawn_error=None,
        timed_out=False,
        stdout_head=data,
        stdout_tail=data,
        stderr_tail=err.encode(),
        stdout_bytes=len(data),
        stderr_bytes=len(err),
        stdout_sha256=hashlib.sha256(data).hexdigest(),
        duration_s=1.0,
    )
    return gemini_result(process, events, Redactor({"GEMINI_API_KEY": FAKE_GEMINI_KEY}))


def test_the_verified_version_is_the_oldest_pin() -> None:
    assert cli_pins()["gemini"].oldest == GEMINI_VERIFIED_VERSION


def test_a_reply_is_a_success_with_its_usage() -> None:
    result = replay("reply")
    assert result.ok
    assert result.reply is not None
    assert result.reply.startswith("Here is the plan.")
    assert result.usage is not None
    assert result.usage.output_tokens == 30


@pytest.mark.parametrize(("name", "status"), [("503", 503), ("429", 429)])
def test_a_refusal_reads_its_status_from_stderr_and_is_free(name: str, status: int) -> None:
    result = replay(name)
    assert (result.failure_class, result.rule, result.vendor_status) == (
        "upstream",
        "vendor-status",
        status,
    )
    assert passes_gate(result.evidence)
    assert result.evidence.ref == f"gemini-stream-json:lines 0-2; HTTP {status}"


def test_an_invalid_key_is_read_from_the_vendors_json_in_the_message() -> None:
    result = replay("400-api-key-invalid")
    assert (result.failure_class, result.rule, result.vendor_code) == (
        "environment",
        "credential",
        "API_KEY_INVALID",
    )
    assert is_uncharged_failure(result.failure_class, result.evidence)


def test_no_http_response_is_a_vendor_never_reached() -> None:
    result = replay("no-listener")
    assert (result.failure_class, result.rule, result.connection) == (
        "environment",
        "no-response",
        "unreachable",
    )
    assert result.endpoint == "https://generativelanguage.googleapis.com"
    assert passes_gate(result.evidence)


def test_a_tool_that_ran_and_text_that_streamed_are_charged() -> None:
    tool = replay("503-after-tool-call")
    assert (tool.vendor_status, tool.evidence.effects) == (503, "observed")
    assert "other lines: tool_use, tool_result" in (tool.evidence.ref or "")
    text = replay("500-after-text")
    assert (text.ok, text.evidence.output) == (False, "observed")
    assert not passes_gate(text.evidence)


def test_the_failure_text_is_geminis_message_and_stderr_never_the_prompt() -> None:
    result = replay("503")
    assert "The model is overloaded" in (result.error or "")
    assert "Plan the goal" not in (result.error or "")


def _lines(name: str) -> list[dict]:
    return [
        json.loads(line) for line in (FIXTURES / f"gemini-{name}.jsonl").read_text().splitlines()
    ]


def _dump(events: list[dict]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def _with_result(**changes: object) -> str:
    events = _lines("503")
    return _dump([*events[:-1], {**events[-1], **changes}])


BROKEN = {
    "a malformed line": (
        _dump(_lines("503")[:-1]) + "{not json\n" + _dump(_lines("503")[-1:]),
        "1 malformed lines",
    ),
    "a line after the result": (_dump(_lines("503")) + "{}\n", "lines after the result"),
    "an assistant message": (
        _dump(
            [
                *_lines("503")[:-1],
                {"type": "message", "role": "assistant", "content": "x"},
                _lines("503")[-1],
            ]
        ),
        "other lines: message/assistant",
    ),
    "an error line": (
        _dump([*_lines("503")[:-1], {"type": "error", "message": "x"}, _lines("503")[-1]]),
        "other lines: error",
    ),
    "output tokens": (
        _with_result(stats={"output_tokens": 3, "tool_calls": 0}),
        "output tokens 3",
    ),
    "no stats": (_with_result(stats=None), "output tokens None"),
    "a tool call counted": (
        _with_result(stats={"output_tokens": 0, "tool_calls": 1}),
        "tool calls 1",
    ),
    "two results": (_dump([*_lines("503"), _lines("503")[-1]]), "2 result lines"),
}


@pytest.mark.parametrize(("stdout", "why"), BROKEN.values(), ids=BROKEN.keys())
def test_the_claim_needs_every_condition(stdout: str, why: str) -> None:
    result = replay("503", stdout=stdout)
    assert not passes_gate(result.evidence)
    assert why in (result.evidence.ref or "")


def test_a_refusal_without_a_status_it_can_read_is_charged() -> None:
    result = replay("503", stderr="something else went wrong\n")
    assert (result.vendor_status, result.failure_class) == (None, "upstream")
    # the vendor's words still match the tight upstream text list, but no claim holds
    assert not passes_gate(result.evidence)
    assert "no refusal read" in (result.evidence.ref or "")


@pytest.mark.parametrize(
    ("message", "read"),
    [
        (
            '[API Error: {"error":{"code":400,"details":[{"reason":"API_KEY_INVALID"}]}}]',
            (400, "API_KEY_INVALID"),
        ),
        ('[API Error: {"error":{"code":503}}]', (503, None)),
        ("[API Error: The model is overloaded. Please try again later.]", (None, None)),
        ('[API Error: {"error": "not an object"}]', (None, None)),
        ('[API Error: {"error":{"code":99999}}]', (None, None)),
        ("the model said [API Error: {} ] somewhere", (None, None)),
        (None, (None, None)),
    ],
)
def test_vendor_error_reads_only_the_vendors_json_envelope(message, read) -> None:
    assert vendor_error(message) == read


def test_stderr_status_is_read_only_after_geminis_error_line() -> None:
    assert stderr_status("Error when talking to Gemini API x\n  status: 503\n}\n") == 503
    assert stderr_status("  status: 503\n") is None
    assert stderr_status("Error when talking to Gemini API x\n  status: 5030\n") is None


def test_the_call_settings_bound_retries_over_the_machines_own(tmp_path) -> None:
    machine = tmp_path / "system.json"
    machine.write_text(
        json.dumps({"general": {"maxAttempts": 10, "vimMode": True}, "ui": {"x": 1}})
    )
    merged = call_settings({"GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(machine)})
    assert merged["general"] == {"vimMode": True, **SETTINGS["general"]}
    assert merged["ui"] == {"x": 1}
    machine.write_text("not json")
    assert call_settings({"GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(machine)}) == SETTINGS


def test_the_settings_folder_and_its_safety(tmp_path) -> None:
    assert str(settings_root({"GOVERNOR_GEMINI_DIR": "/x/y"})) == "/x/y"
    assert str(settings_root({"XDG_CACHE_HOME": "/c", "HOME": "/h"})) == "/c/governor/gemini"
    assert str(settings_root({"HOME": "/h"})) == "/h/.cache/governor/gemini"
    assert settings_root({}) is None
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert insecure_ancestor(shared / "calls") == shared
    assert insecure_ancestor(tmp_path.parents[-1]) is None  # "/" is root's alone


def test_the_child_gets_the_call_settings_and_a_private_tmpdir(tmp_path) -> None:
    env = {"PATH": "/bin", "GEMINI_API_KEY": "k" * 10, "OPENAI_API_KEY": "o" * 10, "HOME": "/h"}
    child = GeminiHarness(tmp_path).environment(gemini_profile(), env, tmp_path / "call")
    assert child["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] == str(tmp_path / "call" / "settings.json")
    assert child["TMPDIR"] == str(tmp_path / "call" / "tmp")
    assert "OPENAI_API_KEY" not in child
    assert child["GEMINI_API_KEY"] == "k" * 10
    argv = GeminiHarness(tmp_path).argv(gemini_profile())
    assert argv[:3] == ("gemini", "-p", "")
    assert "--skip-trust" in argv
    assert argv[argv.index("--model") + 1] == "gemini-2.5-flash"


def test_the_facts_without_lines_say_nothing() -> None:
    assert gemini_blockers(GeminiFacts()) != []


def test_a_gemini_profile_is_its_own_upstream_and_probes_itself(tmp_path) -> None:
    profile = gemini_profile()
    upstream = upstream_of(profile, {"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9/x/"}, tmp_path)
    assert (upstream.harness, upstream.endpoint) == ("gemini", "http://127.0.0.1:9/x")
    assert (
        upstream_of(profile, {}, tmp_path).endpoint == "https://generativelanguage.googleapis.com"
    )
    probe = probe_profile(profile)
    assert probe is not None
    assert probe.max_attempts == 1
