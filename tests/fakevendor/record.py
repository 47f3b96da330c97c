"""Re-record the vendor fixtures: run the real CLIs against the fake vendor, keep their output.

Usage: ``.venv/bin/python -m tests.fakevendor.record [codex|claude] [CASE …]`` (needs
the CLIs, see ``.ci/install-node-clis``); without arguments, every case of both. Writes ``tests/fixtures/vendor/codex-*.jsonl`` (stdout)
with ``codex-*.stderr`` (codex's trace), and ``claude-*.jsonl`` (claude's stream-json
stdout) for every case of ``tests.fakevendor.matrix``. The parser unit tests read these
files; the CLI tests run the same cases live and compare them with these recordings.
After upgrading a CLI: re-record, read the diff, and move the pinned version.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Final

from governor.exec.codex_events import CodexEvents
from governor.exec.process import run_process
from tests.fakevendor import matrix
from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import find_cli
from tests.fakevendor.matrix import FIXTURES, PLAN_REPLY, Case, Verdict
from tests.fakevendor.server import FakeVendor

CODEX_OUTAGES: Final[dict[str, Case]] = {
    name: Case(scenario, Verdict())
    for name, scenario in {
        "reply": sc.reply(PLAN_REPLY),
        "503": sc.status(503),
        "429": sc.status(429, retry_after=7),
        "500": sc.status(500),
        "529": sc.status(529),
        "500-after-tool-call": sc.fail_after_tool_call(500),
        "500-after-text": sc.fail_after_text(500),
        "malformed-stream": sc.malformed(),
        # a tool that leaves no item in the JSONL stream, then a 503: only the trace tells
        "503-after-itemless-tool-call": sc.fail_after_tool_call(503, tool="get_goal"),
    }.items()
}
"""Codex's outage fixtures (their verdicts live in ``tests/exec/test_codex_events.py``)."""
CODEX_READ_ONLY: Final = Case(
    # under --sandbox read-only a command the sandbox denies leaves no item either
    sc.fail_after_tool_call(503, command="touch x"),
    Verdict(),
    args=("--sandbox", "read-only"),
)


def record(cli: str, name: str, case: Case, *, codex: bool) -> None:
    """Run one case and write its fixture files."""
    harness = matrix.harness_for(codex, FIXTURES)
    profile = case.profile(codex)
    with tempfile.TemporaryDirectory() as tmp, FakeVendor(case.scenario) as vendor:
        home = Path(tmp)
        env = case.source_env(codex, home, vendor.url, cli)
        (home / "work").mkdir()
        events = CodexEvents()  # codex waiting for the network is ended, as the adapter does
        result = run_process(
            harness.argv(profile),
            stdin=b"Plan the goal: say hello.",
            env=harness.environment(profile, env),
            cwd=home / "work",
            timeout_s=profile.timeout_s,
            on_stdout_line=events.feed if codex else None,
            stop=(lambda: events.reconnecting > 0) if codex else None,
        )
    stem = f"{'codex' if codex else 'claude'}-{name}"
    (FIXTURES / f"{stem}.jsonl").write_bytes(result.stdout_head)
    if codex:
        (FIXTURES / f"{stem}.stderr").write_bytes(result.stderr_tail)
    print(f"{stem}: exit {result.exit_code}, {len(vendor.model_requests)} model request(s)")


def main(argv: list[str]) -> int:
    """Record the cases named on the command line (default: all) for each installed CLI."""
    only_cli, only_cases = (argv[0], set(argv[1:])) if argv else (None, set())
    FIXTURES.mkdir(parents=True, exist_ok=True)
    codex_cases = {
        **CODEX_OUTAGES,
        "503-after-sandbox-denied-command": CODEX_READ_ONLY,
        **matrix.CODEX,
    }
    for name, cases in (("codex", codex_cases), ("claude", matrix.CLAUDE)):
        if only_cli not in (None, name):
            continue
        cli = find_cli(name)
        if cli is None:
            print(f"{name} CLI not found: skipped", file=sys.stderr)
            continue
        for case_name, case in cases.items():
            if only_cases and case_name not in only_cases:
                continue
            record(cli, case_name, case, codex=name == "codex")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
