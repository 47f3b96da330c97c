"""The python harness: a callable run in-process, classified like any other agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from governor.core.events import Profile
from governor.core.evidence import passes_gate
from governor.exec.python import PythonHarness

AGENTS = """
import time

def answer(prompt, context):
    return {"status": "done", "echo": prompt, "model": context["model"], "key": context["env"].get("MY_API_KEY")}

def prose(prompt, context):
    return "thinking... " + '{"status": "done"}'

def rate_limited(prompt, context):
    raise RuntimeError("429 Too Many Requests")

def slow(prompt, context):
    time.sleep(5)
    return "late"
"""


def harness(tmp_path: Path) -> PythonHarness:
    (tmp_path / "agents.py").write_text(AGENTS)
    return PythonHarness(tmp_path)


def run(tmp_path: Path, target: str, **profile: Any) -> Any:
    h = harness(tmp_path)
    env = {"PATH": "/usr/bin", "MY_API_KEY": "sk-test-abcdefghijklmnop"}
    return h.run(
        "hello",
        Profile(harness="python", args=(f"agents.py:{target}",), env=("MY_API_KEY",), **profile),
        cwd=tmp_path,
        env=env,
    )  # type: ignore[arg-type]


def test_a_dict_reply_is_json_and_secrets_are_redacted(tmp_path: Path) -> None:
    result = run(tmp_path, "answer", model="m1")
    assert result.ok  # type: ignore[attr-defined]
    reply = json.loads(result.reply)  # type: ignore[attr-defined]
    assert (reply["echo"], reply["model"], reply["key"]) == ("hello", "m1", "[REDACTED]")


def test_a_string_reply_passes_through(tmp_path: Path) -> None:
    assert run(tmp_path, "prose").reply.endswith('{"status": "done"}')  # type: ignore[attr-defined]


def test_a_missing_callable_is_environment_with_positive_evidence(tmp_path: Path) -> None:
    result = run(tmp_path, "nope")
    assert result.failure_class == "environment"  # type: ignore[attr-defined]
    assert passes_gate(result.evidence)  # type: ignore[attr-defined]
    assert "has no callable 'nope'" in result.error  # type: ignore[attr-defined]


def test_a_missing_module_is_environment(tmp_path: Path) -> None:
    result = PythonHarness(tmp_path).run(
        "x", Profile(harness="python", args=("no_such_module_xyz:f",)), cwd=tmp_path, env={}
    )
    assert result.failure_class == "environment"
    assert "cannot import no_such_module_xyz" in (result.error or "")


def test_an_exception_naming_a_rate_limit_is_upstream_but_charged(tmp_path: Path) -> None:
    result = run(tmp_path, "rate_limited")
    assert result.failure_class == "upstream"  # type: ignore[attr-defined]
    assert not passes_gate(result.evidence)  # type: ignore[attr-defined]
    assert result.error == "RuntimeError: 429 Too Many Requests"  # type: ignore[attr-defined]


def test_an_overrunning_callable_times_out(tmp_path: Path) -> None:
    result = run(tmp_path, "slow", timeout_s=0.2)
    assert result.timed_out  # type: ignore[attr-defined]
    assert result.rule == "timeout"  # type: ignore[attr-defined]
