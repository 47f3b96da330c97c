"""SPEC §11 (and §1, §2) read line by line against the real command (audit D).

Each test names the rule the command broke before and drives the real ``governor`` in a
temporary folder, with real agent executables.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from governor.clock import utc_now
from governor.core.proposal import FIRST_COMPLETE
from governor.core.view import GoalView
from governor.core.wire.codec import decode
from governor.drive.append import append_folded
from governor.store.sqlite import SqliteEventStore
from tests.e2e.cli import Project, plan

RECORDING_PLANNER = f"""n=$(ls planner-prompt-*.txt 2>/dev/null | wc -l)
cat > planner-prompt-$n.txt
echo '{json.dumps(plan("a"))}'
"""


def _imported_first_complete(tmp_path: Path, *, auto_apply: bool) -> Project:
    """A goal whose first proposal says ``complete`` (no plan was ever applied), held by a
    store since before SPEC §11.3. ``import`` refuses such a history now (SPEC §12.4), so
    it is appended straight to the store, as a runner before the rule had recorded it."""
    source = Project(tmp_path / "source")
    (tmp_path / "source").mkdir()
    planner = source.script("planner", RECORDING_PLANNER)
    source.goal("g", {"harness": "command", "args": [planner]}, {"harness": "command",
                "args": [planner]}, auto_apply=auto_apply)  # fmt: skip
    exported = source.gov("export", "g")
    assert exported.returncode == 0, exported.stderr
    created = orjson.loads(exported.stdout.splitlines()[0])
    head = {"schema_version": 1, "goal_id": "g", "at": created["at"], "actor": "governor"}
    lines = [
        exported.stdout.rstrip("\n"),
        json.dumps({**head, "seq": 2, "type": "plan.requested", "plan_id": "p1",
                    "sequence": 1, "trigger": "initial", "fingerprint": "0" * 64}),
        json.dumps({**head, "seq": 3, "type": "plan.proposed", "plan_id": "p1",
                    "decision": "complete", "rationale": "nothing to do", "work": []}),
    ]  # fmt: skip
    (tmp_path / "h.jsonl").write_text("\n".join(lines) + "\n")
    project = Project(tmp_path)
    (tmp_path / "bin").symlink_to(tmp_path / "source" / "bin")
    imported = project.gov("import", "h.jsonl")
    assert imported.returncode == 3, imported.stderr
    assert "line 3: plan.proposed: complete before any work was done" in imported.stderr
    with SqliteEventStore(tmp_path / "governor.db") as store:
        append_folded(store, GoalView(), [decode(line.encode()) for line in lines], utc_now())
    return project


def test_import_and_validate_refuse_a_recorded_first_complete_at_its_line(
    tmp_path: Path,
) -> None:
    """SPEC §12.4: a history whose first ``plan.proposed`` says ``complete`` is invalid at
    that line for ``validate``, ``replay`` and ``import`` (it used to replay as a goal that
    succeeded with no work)."""
    _imported_first_complete(tmp_path, auto_apply=False)
    (tmp_path / "fresh").mkdir()
    project = Project(tmp_path / "fresh")  # a store that does not hold the goal yet
    for command in ("validate", "replay", "import"):
        result = project.gov(command, str(tmp_path / "h.jsonl"))
        assert result.returncode == 3, (command, result.stderr)
        errors = [line for line in result.stderr.splitlines() if "line 3" in line]
        assert len(errors) == 1, (command, result.stderr)
        assert "plan.proposed: complete before any work was done" in errors[0]


def test_approving_a_recorded_first_complete_is_refused(tmp_path: Path) -> None:
    """SPEC §11.3: a first plan that says `complete` is not a valid proposal. `plan
    approve` of one (imported) used to record `plan.completed`: the goal succeeded with no
    work done."""
    project = _imported_first_complete(tmp_path, auto_apply=False)
    approved = project.gov("plan", "approve", "g", "p1")
    assert approved.returncode == 5, approved.stderr
    assert FIRST_COMPLETE in approved.stderr
    assert project.types("g")[-1] == "plan.proposed"


def test_a_recorded_first_complete_is_rejected_and_the_planner_told_why(
    tmp_path: Path,
) -> None:
    """SPEC §11.3: ... recorded as a charged failure and the error goes to the next planner
    prompt. The runner used to apply it: `plan.completed`, the goal succeeded."""
    project = _imported_first_complete(tmp_path, auto_apply=True)
    ran = project.gov("tick", "g")
    assert ran.returncode == 0, ran.stderr
    rejected = project.events("g")[-1]
    assert (rejected["type"], rejected["actor"]) == ("plan.rejected", "governor")
    assert FIRST_COMPLETE in rejected["reason"]
    status = project.status("g")
    assert (status["status"], status["next_action"]) == ("ready", "plan")
    assert status["ledger"]["replans"]["charged"] == 1
    assert project.gov("tick", "g").returncode == 0
    (prompt,) = [p.read_text() for p in tmp_path.glob("planner-prompt-*.txt")]
    assert FIRST_COMPLETE in prompt


@pytest.mark.parametrize("auto_apply", [True, False])
def test_a_first_complete_never_makes_the_goal_succeed(tmp_path: Path, auto_apply: bool) -> None:
    project = _imported_first_complete(tmp_path, auto_apply=auto_apply)
    project.gov("tick", "g")
    project.gov("plan", "approve", "g", "p1")
    assert "plan.completed" not in project.types("g")
