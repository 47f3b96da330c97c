"""Re-record the vendor fixtures: run the real CLIs against the fake vendor, keep their output.

Usage: ``.venv/bin/python -m tests.fakevendor.record`` (needs the CLIs, see
``.ci/install-node-clis``). Writes ``tests/fixtures/vendor/codex-*.jsonl`` (stdout)
with ``codex-*.stderr`` (codex's trace), and ``claude-*.json`` (stdout). The parser unit
tests read these files; the CLI tests run the same scenarios live.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

from governor.exec.claude import ClaudeHarness
from governor.exec.codex import CodexHarness
from governor.exec.process import run_process
from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import (
    PLAN,
    claude_env,
    claude_profile,
    codex_env,
    codex_profile,
    find_cli,
)
from tests.fakevendor.server import FakeVendor

FIXTURES: Final = Path(__file__).resolve().parents[1] / "fixtures" / "vendor"
PLAN_REPLY: Final = "Here is the plan.\n" + json.dumps(PLAN)

SCENARIOS: Final[dict[str, sc.Scenario]] = {
    "reply": sc.reply(PLAN_REPLY),
    "503": sc.status(503),
    "429": sc.status(429, retry_after=7),
    "500": sc.status(500),
    "529": sc.status(529),
    "500-after-tool-call": sc.fail_after_tool_call(500),
    "500-after-text": sc.fail_after_text(500),
    "malformed-stream": sc.malformed(),
}
CODEX_ONLY: Final[dict[str, sc.Scenario]] = {
    # a tool that leaves no item in the JSONL stream, then a 503: only the trace tells
    "503-after-itemless-tool-call": sc.fail_after_tool_call(503, tool="get_goal"),
}
READ_ONLY_CODEX: Final[dict[str, sc.Scenario]] = {
    # under --sandbox read-only a command the sandbox denies leaves no item either
    "503-after-sandbox-denied-command": sc.fail_after_tool_call(503, command="touch x"),
}

EnvFor = Callable[[Path, str, str], dict[str, str]]


def record(
    cli: str, name: str, scenario: sc.Scenario, *, codex: bool, args: tuple[str, ...] = ()
) -> None:
    """Run one scenario and write its fixture files."""
    harness = CodexHarness(FIXTURES) if codex else ClaudeHarness(FIXTURES)
    env_for: EnvFor = codex_env if codex else claude_env
    profile = codex_profile(args=args) if codex else claude_profile(args=args)
    with tempfile.TemporaryDirectory() as tmp, FakeVendor(scenario) as vendor:
        home = Path(tmp)
        env: Mapping[str, str] = env_for(home, vendor.url, cli)
        (home / "work").mkdir()
        result = run_process(
            harness.argv(profile),
            stdin=b"Plan the goal: say hello.",
            env=harness.environment(profile, env),
            cwd=home / "work",
            timeout_s=profile.timeout_s,
        )
    stem = f"{'codex' if codex else 'claude'}-{name}"
    (FIXTURES / f"{stem}.{'jsonl' if codex else 'json'}").write_bytes(result.stdout_head)
    if codex:
        (FIXTURES / f"{stem}.stderr").write_bytes(result.stderr_tail)
    print(f"{stem}: exit {result.exit_code}, {len(vendor.model_requests)} model request(s)")


def main() -> int:
    """Record every scenario for every CLI that is installed."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, codex in (("codex", True), ("claude", False)):
        cli = find_cli(name)
        if cli is None:
            print(f"{name} CLI not found: skipped", file=sys.stderr)
            continue
        scenarios = {**SCENARIOS, **CODEX_ONLY} if codex else SCENARIOS
        for scenario_name, scenario in scenarios.items():
            record(cli, scenario_name, scenario, codex=codex)
        if codex:
            for scenario_name, scenario in READ_ONLY_CODEX.items():
                record(cli, scenario_name, scenario, codex=True, args=("--sandbox", "read-only"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
