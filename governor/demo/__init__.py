"""The demo: a goal driven end to end on the embedded defaults (SQLite + the scripted harness).

Scenarios:
    ``story``           a plan of three items; a vendor outage on one (uncharged, a short
                        back-off, then success); an item that fails twice, charged, and is
                        replanned around; completion. Ends with the ledger and why each
                        run was or was not charged.
    ``missing-binary``  the planner's binary is missing: an environment stop with its
                        one-line remedy, no budget spent; the binary appears; the runner
                        re-probes, resumes by itself and completes the goal.
    ``same-failure``    a planner that never answers with JSON is stopped after three
                        calls that failed the same way (SPEC §12.10), with replans left,
                        and ``explain`` advises fixing the agent, not raising a budget.

Everything happens in a fresh temporary folder; nothing outside it is touched.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from governor.analysis.asking import need_in
from governor.analysis.explain import explain
from governor.core.charges import charges
from governor.core.decision import Decision
from governor.core.events import Event
from governor.drive import goals
from governor.drive.runner import Progress, RunnerSettings
from governor.store.sqlite import SqliteEventStore

HERE: Final = Path(__file__).resolve().parent
SCENARIOS: Final = ("story", "missing-binary", "same-failure")

STORY_GOAL: Final = """\
id = "demo-login"
title = "Ship the login page"
objective = "Users can log in with an email and a password; the API is documented."
acceptance = ["bad passwords are refused", "the login API is documented"]
planner = "planner"
worker = "worker"

[policy]
max_attempts = 2                    # per work item, charged
max_replans = 4
[policy.upstream_backoff]           # shortened for the demo (default: 30 s x2, at most 900 s)
initial_s = 1
factor = 2
max_s = 2

[profiles.planner]
harness = "scripted"
args = ["story.json"]
max_attempts = 1                    # one spawn per run, so every outage shows in the ledger

[profiles.worker]
harness = "scripted"
args = ["story.json"]
max_attempts = 1
"""

MISSING_GOAL: Final = """\
id = "demo-missing-binary"
title = "Write the release notes"
objective = "NOTES.md describes the release."
acceptance = ["NOTES.md exists"]
planner = "planner"
worker = "worker"

[profiles.planner]
harness = "command"
args = ["bin/plan-agent"]           # not there yet: the demo installs it half-way

[profiles.worker]
harness = "scripted"
args = ["missing-binary.json"]
max_attempts = 1
"""

SAME_GOAL: Final = """\
id = "demo-same-failure"
title = "Ship the login page"
objective = "Users can log in with an email and a password."
acceptance = ["bad passwords are refused"]
planner = "planner"
worker = "planner"

[policy]
max_replans = 5                     # budget enough for two more calls: they would fail alike
max_same_failures = 3               # the default, written out

[profiles.planner]
harness = "scripted"
args = ["same-failure.json"]
max_attempts = 1                    # one spawn per call: each unusable reply is its own plan
"""

PLAN_AGENT: Final = """\
#!/bin/sh
# A tiny planner: reads the prompt on stdin, answers with one JSON object.
prompt=$(cat)
case "$prompt" in
  *"asked now: milestone"*) echo '{"decision": "complete", "rationale": "NOTES.md is written."}' ;;
  *) echo '{"decision": "apply", "rationale": "One file.", "work": [{"key": "notes", "title": "Release notes", "objective": "Write NOTES.md.", "acceptance": ["NOTES.md exists"]}]}' ;;
esac
"""


@dataclass(frozen=True, slots=True)
class DemoResult:
    folder: Path
    decision: Decision


Say = Callable[[str], None]


def _run(folder: Path, goal_id: str, say: Say, progress: Progress) -> Decision:
    store = SqliteEventStore(folder / "governor.db")
    try:
        from governor.graph.build import run  # noqa: PLC0415 - langgraph takes 0.3 s to import

        settings = RunnerSettings(
            workdir=folder,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin"},
            state_dir=folder / "scripted",
            max_wait_s=30,
            asking=need_in,
        )
        return run(goals.runner(store, goal_id, settings, progress=progress)).decision
    finally:
        store.close()


def _events(folder: Path, goal_id: str) -> list[Event]:
    store = SqliteEventStore(folder / "governor.db")
    try:
        return list(store.load(goal_id))
    finally:
        store.close()


def _ledger_and_charges(folder: Path, goal_id: str, say: Say) -> None:
    say("\nwhy each run was or was not charged:")
    for charge in charges(_events(folder, goal_id)):
        mark = "charged  " if charge.charged else "free     "
        say(f"  {mark} {charge.what:<22} {charge.why}")


def _create(folder: Path, goal_text: str, say: Say) -> str:
    (folder / "goal.toml").write_text(goal_text)
    store = SqliteEventStore(folder / "governor.db")
    try:
        view = goals.create(store, folder / "goal.toml")
    finally:
        store.close()
    say(f"created goal {view.goal_id} in {folder}")
    return view.goal_id


def _staged(folder: Path, scenario: str, goal_text: str, say: Say) -> str:
    """The scenario's file copied into ``folder`` and its goal created; the goal's id."""
    shutil.copy(HERE / f"{scenario}.json", folder / f"{scenario}.json")
    return _create(folder, goal_text, say)


def _shown(
    folder: Path, goal_id: str, say: Say, progress: Progress, show: Callable[[str, Decision], None]
) -> Decision:
    """Run the goal until it stops or waits, and show where it is."""
    decision = _run(folder, goal_id, say, progress)
    show(goal_id, decision)
    return decision


def story(
    folder: Path, say: Say, progress: Progress, show: Callable[[str, Decision], None]
) -> Decision:
    goal_id = _staged(folder, "story", STORY_GOAL, say)
    decision = _shown(folder, goal_id, say, progress, show)
    _ledger_and_charges(folder, goal_id, say)
    return decision


def missing_binary(
    folder: Path, say: Say, progress: Progress, show: Callable[[str, Decision], None]
) -> Decision:
    goal_id = _staged(folder, "missing-binary", MISSING_GOAL, say)
    say("\n1. the planner's binary (bin/plan-agent) does not exist yet")
    decision = _shown(folder, goal_id, say, progress, show)
    say(
        f"\nremedy: install the planner at {folder / 'bin' / 'plan-agent'} "
        "(`governor doctor goal.toml` names what is missing); no budget was spent"
    )
    say(
        "\n2. installing bin/plan-agent, then running again: the runner re-probes and resumes by itself"
    )
    agent = folder / "bin" / "plan-agent"
    agent.parent.mkdir(exist_ok=True)
    agent.write_text(PLAN_AGENT)
    agent.chmod(0o755)
    decision = _shown(folder, goal_id, say, progress, show)
    _ledger_and_charges(folder, goal_id, say)
    return decision


def same_failure(
    folder: Path, say: Say, progress: Progress, show: Callable[[str, Decision], None]
) -> Decision:
    goal_id = _staged(folder, "same-failure", SAME_GOAL, say)
    say("\nthe planner answers in prose, never with the JSON object it is asked for")
    decision = _shown(folder, goal_id, say, progress, show)
    say(f"\nexplain: {explain(_events(folder, goal_id)).advice}")
    _ledger_and_charges(folder, goal_id, say)
    return decision


PLAYS: Final = {"story": story, "missing-binary": missing_binary, "same-failure": same_failure}


def run_demo(
    scenario: str,
    say: Say,
    progress: Progress,
    show: Callable[[str, Decision], None],
    *,
    folder: Path | None = None,
) -> DemoResult:
    """Run a demo scenario in ``folder`` (a new temporary folder by default)."""
    folder = folder or Path(tempfile.mkdtemp(prefix="governor-demo-"))
    return DemoResult(folder, PLAYS[scenario](folder, say, progress, show))
