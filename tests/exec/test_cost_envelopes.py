"""What a call cost and whose account it ran under, as custom agents report it (SPEC §13.2,
§13.5): the command harness's reply and failure envelopes (real child processes) and the
python harness's ``AgentReply`` / ``UpstreamUnavailable``."""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from governor.core.classify import SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import passes_gate
from governor.core.observation import Usage
from governor.exec.command import CommandHarness
from governor.exec.python import PythonHarness

DONE = '{"status": "done", "summary": "did it"}'


def command(tmp_path: Path, base_env: dict[str, str], *lines: str, status: int = 0) -> SpawnResult:
    """Run a real shell script that prints ``lines`` and exits ``status``."""
    script = tmp_path / "agent.sh"
    body = "".join(f"printf '%s\\n' {json.dumps(line)}\n" for line in lines)
    script.write_text(f"#!/bin/sh\ncat >/dev/null\n{body}exit {status}\n")
    script.chmod(0o755)
    profile = Profile(harness="command", args=("./agent.sh",), timeout_s=30)
    return CommandHarness(tmp_path).run("role: worker\n", profile, cwd=tmp_path, env=base_env)


def envelope(**fields: Any) -> str:
    return json.dumps(fields)


def test_a_reply_envelope_reports_cost_usage_and_account_and_leaves_the_reply(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    said = envelope(
        status="ok",
        cost_usd=0.0125,
        usage={"input_tokens": 900, "output_tokens": 40, "cached_input_tokens": 300},
        account="team-a",
    )
    result = command(tmp_path, base_env, "working", DONE, said)
    assert result.ok, result.error
    assert result.reply == f"working\n{DONE}"
    assert result.cost_usd == 0.0125
    assert result.usage == Usage(input_tokens=900, output_tokens=40, cached_input_tokens=300)
    assert result.account == "team-a"


def test_usage_alone_is_reported_without_a_cost(tmp_path: Path, base_env: dict[str, str]) -> None:
    result = command(tmp_path, base_env, DONE, envelope(status="ok", usage={"output_tokens": 7}))
    assert result.ok
    assert (result.cost_usd, result.usage) == (None, Usage(output_tokens=7))
    assert result.reply == DONE


def test_a_reply_without_an_envelope_is_unchanged(tmp_path: Path, base_env: dict[str, str]) -> None:
    result = command(tmp_path, base_env, DONE, '{"status": "ok"}')  # no cost field: a reply
    assert result.ok
    assert result.reply == f'{DONE}\n{{"status": "ok"}}\n'
    assert (result.cost_usd, result.usage, result.account) == (None, None, None)


def test_a_reply_envelope_that_does_not_validate_fails_the_run_saying_why(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    said = envelope(status="ok", cost_usd=-1, usage={"input_tokens": "many"})
    result = command(tmp_path, base_env, DONE, said)
    assert not result.ok
    assert result.failure_class is None  # an ordinary, charged failure
    assert "governor could not read the reply envelope" in (result.error or "")
    assert "cost_usd" in (result.error or "")
    assert "usage.input_tokens" in (result.error or "")


def test_a_failure_envelope_carries_cost_account_and_the_windows_reset(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    said = envelope(
        status="failed",
        **{"class": "upstream"},
        vendor_status=429,
        code="usage_limit_reached",
        effects="absent",
        output="absent",
        account="team-a",
        resets_at="2026-12-08T04:10:00Z",
        usage={"input_tokens": 12},
        cost_usd=0.0001,
    )
    result = command(tmp_path, base_env, said)
    assert not result.ok
    assert result.failure_class == "upstream"
    assert result.account == "team-a"
    assert result.resets_at == datetime(2026, 12, 8, 4, 10, tzinfo=UTC)
    assert (result.cost_usd, result.usage) == (0.0001, Usage(input_tokens=12))


def test_a_reset_time_needs_an_account_and_an_upstream_class(
    tmp_path: Path, base_env: dict[str, str]
) -> None:
    said = envelope(
        status="failed", **{"class": "upstream"}, vendor_status=429, resets_at=1_765_000_000
    )
    result = command(tmp_path, base_env, said, status=1)
    assert not passes_gate(result.evidence)  # the envelope is ignored: charged
    assert "resets_at needs an account" in (result.error or "")
    assert result.resets_at is None


AGENTS = """
from datetime import datetime, timezone

import governor

def priced(prompt, context):
    return governor.AgentReply('{"status": "done"}', usage={"input_tokens": 5, "output_tokens": 2}, account="team-b")

def with_cost(prompt, context):
    return governor.AgentReply('{"status": "done"}', cost_usd=0.25)

def bad_cost(prompt, context):
    return governor.AgentReply('{"status": "done"}', cost_usd=float("nan"))

def window(prompt, context):
    raise governor.UpstreamUnavailable(
        429, effects="absent", output="absent", code="usage_limit_reached", account="team-b",
        resets_at=datetime(2026, 12, 8, 4, 10, tzinfo=timezone.utc), usage={"input_tokens": 3},
    )
"""


def python(tmp_path: Path, target: str) -> SpawnResult:
    (tmp_path / "agents.py").write_text(textwrap.dedent(AGENTS))
    profile = Profile(harness="python", args=(f"agents.py:{target}",), timeout_s=30)
    return PythonHarness(tmp_path).run("hello", profile, cwd=tmp_path, env={"PATH": "/usr/bin"})


def test_a_python_agent_reports_its_usage_and_account_through_agent_reply(tmp_path: Path) -> None:
    result = python(tmp_path, "priced")
    assert result.ok
    assert result.reply == '{"status": "done"}'
    assert result.usage == Usage(input_tokens=5, output_tokens=2)
    assert (result.cost_usd, result.account) == (None, "team-b")
    assert python(tmp_path, "with_cost").cost_usd == 0.25


def test_an_agent_reply_out_of_range_is_the_agents_ordinary_failure(tmp_path: Path) -> None:
    result = python(tmp_path, "bad_cost")
    assert not result.ok
    assert result.failure_class is None
    assert "cost_usd must be a finite number" in (result.error or "")


def test_a_python_refusal_reports_the_accounts_window_and_its_cost(tmp_path: Path) -> None:
    result = python(tmp_path, "window")
    assert result.failure_class == "upstream"
    assert (result.account, result.resets_at) == (
        "team-b",
        datetime(2026, 12, 8, 4, 10, tzinfo=UTC),
    )
    assert result.usage == Usage(input_tokens=3)
