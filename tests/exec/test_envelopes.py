"""SPEC §11.9: the command harness's failure envelope and the python harness's UpstreamUnavailable.

Real executables (small shell scripts), a real python agent file, and the example
wrapper ``examples/agents/anthropic_agent.py`` (the real Anthropic SDK) against the
loopback fake vendor.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

import governor
from governor.core.classify import SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import is_uncharged_failure
from governor.exec.command import CommandHarness
from governor.exec.python import PythonHarness, Seen, UpstreamUnavailable, exception_evidence
from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import FAKE_ANTHROPIC_KEY
from tests.fakevendor.server import FakeVendor

REPO = Path(__file__).resolve().parents[2]
WRAPPER = REPO / "examples" / "agents" / "anthropic_agent.py"
ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp", "LANG": "C.UTF-8"}


def envelope(**fields: Any) -> str:
    return json.dumps({"status": "failed", "class": "upstream", "vendor_status": 503, **fields})


def command(tmp_path: Path, stdout: str, *, exit_code: int = 1, stderr: str = "") -> SpawnResult:
    script = tmp_path / "agent.sh"
    script.write_text(
        "#!/bin/sh\ncat >/dev/null\n"
        f"printf '%s\\n' {json.dumps(stderr)} >&2\n"
        f"printf '%s\\n' '{stdout}'\nexit {exit_code}\n"
    )
    script.chmod(0o755)
    profile = Profile(harness="command", args=(str(script),), timeout_s=30)
    return CommandHarness(tmp_path).run("role: worker", profile, cwd=tmp_path, env=ENV)


def free(result: SpawnResult) -> bool:
    return not result.ok and is_uncharged_failure(result.failure_class, result.evidence)


def test_an_envelope_declaring_a_refused_first_request_is_upstream_and_free(
    tmp_path: Path,
) -> None:
    line = envelope(retry_after_s=30, effects="absent", output="absent")
    result = command(tmp_path, line, stderr="anthropic: HTTP 503")
    assert (result.failure_class, result.rule, result.vendor_status) == (
        "upstream",
        "vendor-status",
        503,
    )
    assert result.retry_after_s == 30
    evidence = result.evidence
    assert (evidence.effects, evidence.output, evidence.refusal) == ("absent",) * 3
    assert (evidence.source, evidence.ref) == ("command:envelope", "last stdout line: upstream 503")
    assert free(result)
    assert "anthropic: HTTP 503" in (result.error or "")
    assert '"class"' not in (result.error or "")  # the envelope is not failure text


def test_an_envelope_makes_the_run_a_failure_even_with_exit_0(tmp_path: Path) -> None:
    result = command(tmp_path, envelope(effects="absent", output="absent"), exit_code=0)
    assert not result.ok
    assert free(result)


ENVELOPES = {
    "effects unknown by default": (envelope(), "upstream", False),
    "effects observed": (envelope(effects="observed", output="absent"), "upstream", False),
    "a declared refusal": (
        envelope(effects="absent", output="absent", refusal="declared"),
        "upstream",
        False,
    ),
    "a refused key with a remedy": (
        envelope(
            **{"class": "environment"},
            vendor_status=401,
            effects="absent",
            output="absent",
            remedy="set MY_KEY",
        ),
        "environment",
        True,
    ),
    "a key found missing before any request": (
        json.dumps(
            {
                "status": "failed",
                "class": "environment",
                "effects": "absent",
                "output": "absent",
                "remedy": "set MY_KEY",
            }
        ),
        "environment",
        True,
    ),
}


@pytest.mark.parametrize(("line", "cls", "is_free"), ENVELOPES.values(), ids=ENVELOPES.keys())
def test_an_envelope_is_free_only_when_it_claims_absence(
    tmp_path: Path, line: str, cls: str, is_free: bool
) -> None:
    result = command(tmp_path, line)
    assert result.failure_class == cls
    assert free(result) is is_free


def test_a_credential_envelope_carries_its_remedy(tmp_path: Path) -> None:
    line = envelope(**{"class": "environment"}, vendor_status=403, remedy="set MY_KEY")
    result = command(tmp_path, line)
    assert (result.rule, result.credential) == ("credential", "set MY_KEY")


INVALID = {
    "upstream with a 401": envelope(vendor_status=401),
    "environment with a 503 and no remedy": envelope(**{"class": "environment"}),
    "an unknown field": envelope(severity="high"),
    "an effects value that is not an observation": envelope(effects="none"),
    "a negative Retry-After": envelope(retry_after_s=-1),
}


@pytest.mark.parametrize("line", INVALID.values(), ids=INVALID.keys())
def test_an_envelope_that_does_not_validate_is_ignored_and_said_so(
    tmp_path: Path, line: str
) -> None:
    result = command(tmp_path, line)
    assert result.evidence.source is None
    assert not free(result)
    assert "governor ignored the failure envelope: " in (result.error or "")


def test_only_the_last_line_is_an_envelope(tmp_path: Path) -> None:
    early = envelope(effects="absent", output="absent")
    result = command(tmp_path, f"{early}\nthen the tests failed")
    assert (result.rule, result.evidence.source) == ("upstream-text", None)  # '"status": 503'
    assert not free(result)


def test_a_worker_reply_saying_failed_is_no_envelope(tmp_path: Path) -> None:
    reply = json.dumps({"status": "failed", "summary": "the tests fail"})
    result = command(tmp_path, reply, exit_code=0)
    assert result.ok
    assert result.reply is not None
    assert json.loads(result.reply)["status"] == "failed"


AGENTS = """
import governor

def outage(prompt, context):
    raise governor.UpstreamUnavailable(503, retry_after_s=12, effects="absent", output="absent")

def vague(prompt, context):
    raise governor.UpstreamUnavailable(529)

def refused_key(prompt, context):
    raise governor.UpstreamUnavailable(401, effects="absent", output="absent")

def after_a_tool(prompt, context):
    raise governor.UpstreamUnavailable(500, effects="observed", output="absent")

def not_a_status(prompt, context):
    raise governor.UpstreamUnavailable(5031)
"""


def python(tmp_path: Path, target: str) -> SpawnResult:
    (tmp_path / "agents.py").write_text(AGENTS)
    profile = Profile(harness="python", args=(f"agents.py:{target}",))
    return PythonHarness(tmp_path).run("hello", profile, cwd=tmp_path, env=ENV)


def test_upstream_unavailable_is_exported_from_governor() -> None:
    assert governor.UpstreamUnavailable is UpstreamUnavailable


def test_a_raised_refusal_with_no_effect_is_upstream_and_free(tmp_path: Path) -> None:
    result = python(tmp_path, "outage")
    assert (result.failure_class, result.rule, result.vendor_status) == (
        "upstream",
        "vendor-status",
        503,
    )
    assert result.retry_after_s == 12
    assert (result.evidence.source, result.evidence.ref) == (
        "python:exception",
        "UpstreamUnavailable(status=503)",
    )
    assert free(result)


RAISED = {
    "effects left unknown are charged": ("vague", "upstream", False),
    "a refused key is environment and free": ("refused_key", "environment", True),
    "a refusal after a tool ran is charged": ("after_a_tool", "upstream", False),
    "a status out of range is an ordinary failure": ("not_a_status", None, False),
}


@pytest.mark.parametrize(("target", "cls", "is_free"), RAISED.values(), ids=RAISED.keys())
def test_a_raised_refusal_is_classed_by_its_status_and_charged_by_its_claim(
    tmp_path: Path, target: str, cls: str | None, is_free: bool
) -> None:
    result = python(tmp_path, target)
    assert result.failure_class == cls
    assert free(result) is is_free


def test_what_the_harness_observes_beats_the_callables_claim() -> None:
    claim = UpstreamUnavailable(503, effects="absent", output="absent")
    assert exception_evidence(claim).effects == "absent"
    watched = exception_evidence(claim, Seen(effects="observed", output="observed"))
    assert (watched.effects, watched.output, watched.refusal) == ("observed", "observed", "unknown")


@pytest.fixture
def vendor() -> Any:
    with FakeVendor() as fake:
        yield fake


def wrapper(tmp_path: Path, vendor: FakeVendor, scenario: sc.Scenario, **env: str) -> SpawnResult:
    vendor.play(scenario)
    source = {**ENV, "ANTHROPIC_BASE_URL": vendor.url, "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_KEY}
    source.update(env)
    profile = Profile(
        harness="command",
        args=(sys.executable, str(WRAPPER)),
        env=("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
        timeout_s=60,
    )
    return CommandHarness(tmp_path).run("Say hello.", profile, cwd=tmp_path, env=source)


@pytest.mark.parametrize("code", [503, 529, 500], ids=["http-503", "http-529", "http-500"])
def test_the_example_wrapper_turns_an_sdk_outage_into_a_free_failure(
    tmp_path: Path, vendor: FakeVendor, code: int
) -> None:
    result = wrapper(tmp_path, vendor, sc.status(code))
    assert (result.failure_class, result.vendor_status) == ("upstream", code)
    assert free(result)
    assert len(vendor.model_requests) == 1  # max_retries=0: governor does the retrying


def test_the_example_wrapper_passes_the_retry_after_on(tmp_path: Path, vendor: FakeVendor) -> None:
    result = wrapper(tmp_path, vendor, sc.status(429, retry_after=7))
    assert (result.failure_class, result.retry_after_s) == ("upstream", 7)
    assert free(result)


def test_the_example_wrapper_reports_a_refused_key_with_its_remedy(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    result = wrapper(tmp_path, vendor, sc.status(401))
    assert (result.failure_class, result.rule) == ("environment", "credential")
    assert "ANTHROPIC_API_KEY" in (result.credential or "")
    assert free(result)
    assert FAKE_ANTHROPIC_KEY not in result.model_dump_json()


def test_the_example_wrapper_without_a_key_sends_nothing_and_stops(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    result = wrapper(tmp_path, vendor, sc.status(503), ANTHROPIC_API_KEY="")
    assert (result.failure_class, result.rule) == ("environment", "credential")
    assert free(result)
    assert vendor.model_requests == []


def test_the_example_wrapper_replies_on_stdout(tmp_path: Path, vendor: FakeVendor) -> None:
    result = wrapper(tmp_path, vendor, sc.reply('{"status": "done"}'))
    assert result.ok, result.error
    assert (result.reply or "").strip() == '{"status": "done"}'


def test_docs_goals_quotes_the_example_wrapper_exactly() -> None:
    doc = (REPO / "docs" / "goals.md").read_text()
    quoted = doc.split(
        "`examples/agents/anthropic_agent.py`, tested against the fake vendor):\n\n```python\n", 1
    )[1]
    assert quoted.split("```\n", 1)[0] == WRAPPER.read_text()
