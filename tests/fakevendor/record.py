"""Re-record the vendor fixtures: run the real CLIs against the fake vendor, keep their output.

Usage: ``.venv/bin/python -m tests.fakevendor.record [codex|claude|gemini] [CASE …]``
(needs the CLIs, see ``.ci/install-node-clis``); without arguments, every case of each.
gemini's cases (``GEMINI_CASES``) are written as ``gemini-*.jsonl`` with ``.stderr``. Writes ``tests/fixtures/vendor/codex-*.jsonl`` (stdout)
with ``codex-*.stderr`` (codex's trace), and ``claude-*.jsonl`` (claude's stream-json
stdout) for every case of ``tests.fakevendor.matrix``. The parser unit tests read these
files; the CLI tests run the same cases live and compare them with these recordings.
After upgrading a CLI: re-record, read the diff, and move the pinned version.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Final

from governor.exec.codex_events import CodexEvents
from governor.exec.gemini import GeminiHarness, call_settings
from governor.exec.process import run_process
from tests.fakevendor import matrix
from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import PROMPT, dead_url, find_cli, gemini_env, gemini_profile
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


GEMINI_CASES: Final[dict[str, sc.Scenario | None]] = {
    "reply": sc.reply('Here is the plan.\n{"decision": "apply"}'),
    "503": sc.status(503),
    "429": sc.status(429),
    "400-api-key-invalid": sc.Scenario((sc.Step("status", status=400, code="API_KEY_INVALID"),)),
    "no-listener": None,  # a port nothing listens on
    "503-after-tool-call": sc.fail_after_tool_call(503),
    "500-after-text": sc.fail_after_text(500),
}
"""gemini's recorded cases (their verdicts live in ``tests/exec/test_gemini_stream.py``)."""


def record_gemini(cli: str, name: str, scenario: sc.Scenario | None) -> None:
    """Run one gemini case as ``GeminiHarness`` would, and write its fixture files."""
    harness, profile = GeminiHarness(FIXTURES), gemini_profile()
    with tempfile.TemporaryDirectory() as tmp, FakeVendor(scenario) as vendor:
        home = Path(tmp)
        (home / "work").mkdir()
        url = vendor.url if scenario is not None else dead_url()
        env = gemini_env(home / "home", url, cli)
        call = Path(tempfile.mkdtemp(dir=env["GOVERNOR_GEMINI_DIR"]))
        try:
            (call / "tmp").mkdir()
            (call / "settings.json").write_text(json.dumps(call_settings(env)))
            result = run_process(
                harness.argv(profile),
                stdin=PROMPT.encode(),
                env=harness.environment(profile, env, call),
                cwd=home / "work",
                timeout_s=profile.timeout_s,
            )
        finally:
            shutil.rmtree(call, ignore_errors=True)
    (FIXTURES / f"gemini-{name}.jsonl").write_bytes(result.stdout_head)
    (FIXTURES / f"gemini-{name}.stderr").write_bytes(result.stderr_tail)
    print(f"gemini-{name}: exit {result.exit_code}, {len(vendor.model_requests)} model request(s)")


def main(argv: list[str]) -> int:
    """Record the cases named on the command line (default: all) for each installed CLI."""
    only_cli, only_cases = (argv[0], set(argv[1:])) if argv else (None, set())
    FIXTURES.mkdir(parents=True, exist_ok=True)
    codex_cases = {
        **CODEX_OUTAGES,
        "503-after-sandbox-denied-command": CODEX_READ_ONLY,
        **matrix.CODEX,
    }
    gemini = find_cli("gemini") if only_cli in (None, "gemini") else None
    for case_name, scenario in GEMINI_CASES.items() if gemini else ():
        if not only_cases or case_name in only_cases:
            record_gemini(gemini or "gemini", case_name, scenario)
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
