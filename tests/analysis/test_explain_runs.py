"""Every command ``governor explain`` prints runs as printed (issue 25 §2).

Over every golden history (each imported into its own SQLite store) and over goals the
real runner drove to a stop with scripted agents (a worker's question, a planner's
question, a budget spent, a missing binary, the same failure again, an upstream bound),
each command explain prints is run as a real ``governor`` process (the console script) on a copy of the
store: it must exit 0 and move the goal (its last seq grows). Only free text a person
writes may stand as a placeholder (``ANSWER``, ``REASON``): the test writes it.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest

from governor.analysis.explain import explain
from governor.analysis.runnable import ANSWER, REASON
from governor.clock import utc_now
from governor.errors import GovernorError
from governor.store.sqlite import SqliteEventStore
from governor.store.transfer import import_history
from tests.ui.fleet import EXPECTED, Fleet, build, planner, worker
from tests.ui.serve import GOVERNOR

GOLDEN: Final = Path(__file__).parent.parent / "golden"
ASK: Final = {"reply": {"status": "decision", "question": "OAuth or passwords?"}}
PLAN_A: Final = {
    "decision": "apply",
    "rationale": "one item",
    "work": [{"key": "a", "title": "a", "objective": "do a", "acceptance": ["a works"]}],
}
PROSE: Final = {"reply": "I would start with the schema, then the API."}


@dataclass(frozen=True)
class Told:
    """A goal, its store, and the commands explain printed for it."""

    goal_id: str
    db: Path
    commands: tuple[str, ...]
    advice: str


def _last_seq(db: Path, goal_id: str) -> int:
    with SqliteEventStore(db) as store:
        return list(store.load(goal_id))[-1].seq


def _run_printed(told: Told, tmp: Path) -> None:
    """Run each printed command on a copy of the store: exit 0, and the goal moves."""
    for index, line in enumerate(told.commands):
        words = shlex.split(line)
        assert words[0] == "governor", line
        assert "GOAL" not in words, f"an id left as a placeholder: {line}"
        assert "ITEM" not in words, f"an id left as a placeholder: {line}"
        assert told.goal_id in words, line
        copy = tmp / f"{told.goal_id}-{index}.db"
        shutil.copyfile(told.db, copy)
        store = words.index("--store")
        assert Path(words[store + 1]) == told.db, line  # the store explain was given
        words[store + 1] = str(copy)
        words = [{ANSWER: "SQLite, please", REASON: "the agent is fixed"}.get(w, w) for w in words]
        before = _last_seq(copy, told.goal_id)
        done = subprocess.run(
            [GOVERNOR, *words[1:]],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{line}: exit {done.returncode}: {done.stderr}"
        assert _last_seq(copy, told.goal_id) > before, f"{line}: the goal did not move"


def _golden_goals(root: Path) -> list[Told]:
    told = []
    for path in sorted(GOLDEN.glob("*.jsonl")):
        db = root / f"{path.stem}.db"
        with SqliteEventStore(db) as store:
            try:
                goal_id = import_history(store, path).goal_id
            except GovernorError:  # a corrupt history is refused on import: nothing to explain
                continue
            ex = explain(
                lambda s=store, g=goal_id: s.load(g),  # type: ignore[misc]
                now=utc_now(),
                store_arg=str(db),
            )
        told.append(Told(goal_id, db, ex.commands, ex.advice))
    return told


def test_every_command_explain_prints_over_the_golden_histories_runs(tmp_path: Path) -> None:
    told = _golden_goals(tmp_path)
    assert len(told) > 60
    with_commands = [t for t in told if t.commands]
    assert len(with_commands) >= 10, [t.advice for t in told]
    for one in with_commands:
        for line in one.commands:
            assert f"`{line}`" in one.advice  # the advice quotes exactly what it lists
        _run_printed(one, tmp_path)


# --- goals the real runner drove to a stop -----------------------------------------------


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """The web view's fleet (every status, driven by the runner and scripted agents), and
    a worker's question and a planner that fails the same way again."""
    fleet = build(tmp_path_factory.mktemp("stopped"))
    s = fleet.scenario("g-worker-asks", planner({"reply": PLAN_A}), worker("a", ASK))
    fleet.goal("g-worker-asks", s)
    fleet.run("g-worker-asks")
    s = fleet.scenario("g-same-failure", planner(PROSE, PROSE, PROSE, PROSE))
    fleet.goal("g-same-failure", s)
    fleet.run("g-same-failure")
    fleet.store.close()
    return fleet


def _cli_explain(fleet: Fleet, goal_id: str) -> Told:
    done = subprocess.run(
        [GOVERNOR, "explain", goal_id, "--store", str(fleet.db), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=fleet.root,
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    text = subprocess.run(
        [GOVERNOR, "explain", goal_id, "--store", str(fleet.db)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=fleet.root,
    )
    assert text.returncode == 0, text.stderr
    for line in record["commands"]:  # the text prints the very commands --json lists
        assert f"`{line}`" in text.stdout
    return Told(goal_id, fleet.db, tuple(record["commands"]), record["advice"])


STOPPED: Final = {
    "g-worker-asks": "work retry g-worker-asks",
    "g-blocked-decision": "resume g-blocked-decision --reason ANSWER",
    "g-same-failure": "resume g-same-failure",
    "g-exhausted": "raise g-exhausted --ledger replans",
    "g-blocked-upstream": "raise g-blocked-upstream --ledger uncharged_replans",
    "g-blocked-environment": "",
}
"""Each stopped goal, and the command explain must advise for it ('': none, the runner
re-probes a missing binary by itself)."""


@pytest.mark.parametrize("goal_id", sorted({*STOPPED, *EXPECTED}))
def test_every_command_explain_prints_for_a_runner_made_goal_runs(
    stopped: Fleet, goal_id: str, tmp_path: Path
) -> None:
    """The stopped goals get the verb that answers their stop; every goal of the web
    view's fleet (each status) gets only commands that run."""
    told = _cli_explain(stopped, goal_id)
    wanted = STOPPED.get(goal_id)
    if wanted == "":
        assert told.commands == (), told.advice
    elif wanted is not None:
        assert len(told.commands) == 1, told.advice
        assert told.commands[0].startswith(f"governor {wanted}"), told.advice
    _run_printed(told, tmp_path)


@pytest.mark.parametrize(
    ("golden", "verbs"),
    [
        ("awaiting_review_plan", ("plan approve", "plan reject")),
        ("review_work_gate", ("work accept", "work retry")),
    ],
)
def test_a_goal_awaiting_review_is_told_the_verbs_that_review_it(
    golden: str, verbs: tuple[str, ...], tmp_path: Path
) -> None:
    """A goal that waits on an operator's review is not stopped, but a person must act:
    explain names the verbs that review it (each one runs and moves the goal)."""
    db = tmp_path / "review.db"
    with SqliteEventStore(db) as store:
        goal_id = import_history(store, GOLDEN / f"{golden}.jsonl").goal_id
        ex = explain(lambda: store.load(goal_id), now=utc_now(), store_arg=str(db))
    assert "awaits an operator's review" in ex.advice
    assert [line.split()[1:3] for line in ex.commands] == [verb.split() for verb in verbs]
    _run_printed(Told(goal_id, db, ex.commands, ex.advice), tmp_path)
