"""End to end: ``governor run`` shares the upstream health record too (SPEC §11.10).

The agents are real ``command`` scripts that call a pretend vendor: a file says whether it
is down, and each call is counted in a file. While it is down a script answers with the
structured failure envelope (a 503, nothing done), and so does the profile's ``probe``.

* A first goal meets the outage: its planner is refused (uncharged), the upstream is
  recorded failing, and the goal parks instead of spending its uncharged window.
* A second goal started during the outage parks at once: no agent is called for it.
* Once the vendor is back, the next ``run`` probes it (one call), and each goal resumes by
  itself, naming the probe and the outage span, and finishes.
* ``governor upstreams`` shows the record, and ``service status`` and ``explain`` read it.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from tests.e2e.cli import COMPLETE, Project, done, plan

AGENT = """\
#!/bin/sh
# a pretend vendor: down while $1/down exists; every call is counted
echo "$2" >> "$1/calls"
if [ -e "$1/down" ]; then
  echo '{"status":"failed","class":"upstream","vendor_status":503,"effects":"absent","output":"absent"}'
  exit 1
fi
prompt=$(cat)
case "$prompt" in
  *"role: probe"*) echo ok ;;
  *"role: worker"*) echo '%(done)s' ;;
  *"asked now: milestone"*) echo '%(complete)s' ;;
  *) echo '%(plan)s' ;;
esac
"""
BACKOFF = {"upstream_backoff": {"initial_s": 0.5, "factor": 1, "max_s": 0.5}}


def project_with_vendor(root: Path) -> tuple[Project, Path]:
    project = Project(root)
    vendor = root / "vendor"
    vendor.mkdir()
    body = AGENT % {
        "done": json.dumps(done("a")),
        "complete": json.dumps(COMPLETE),
        "plan": json.dumps(plan("a")),
    }
    project.script("agent", body.removeprefix("#!/bin/sh\n"))
    return project, vendor


def agent(vendor: Path, role: str) -> dict[str, object]:
    # the planner and the worker are the same script with other arguments: two agents
    # (SPEC §12.9), which declare the one vendor they both reach
    return {
        "harness": "command",
        "args": ["bin/agent", str(vendor), role],
        "probe": ["bin/agent", str(vendor), "probe"],
        "upstream": "pretend-vendor",
    }


def calls(vendor: Path) -> list[str]:
    path = vendor / "calls"
    return path.read_text().split() if path.exists() else []


def test_a_second_goal_started_during_an_outage_parks_at_once_and_both_resume_by_themselves(
    tmp_path: Path,
) -> None:
    project, vendor = project_with_vendor(tmp_path)
    for goal_id in ("first", "second"):
        project.goal(goal_id, agent(vendor, "planner"), agent(vendor, "worker"), **BACKOFF)
    (vendor / "down").touch()

    result = project.gov("run", "first", "--max-wait", "0")
    assert result.returncode != 0 or "waiting" in result.stdout, result.stderr
    first = project.status("first")
    assert (first["status"], first["blocked_on"]) == ("waiting", "upstream")
    assert first["reason"].startswith("parked: pretend-vendor has been failing since")
    assert first["ledger"]["replans"]["charged"] == 0
    assert project.types("first")[-1] == "goal.parked"
    assert calls(vendor) == ["planner"]

    project.gov("run", "second", "--max-wait", "0")
    assert project.types("second") == ["goal.created", "goal.parked"]
    # its planner was never called (a probe may have been: one per back-off step)
    assert calls(vendor).count("planner") == 1, "the second goal called the failing upstream"

    listed = project.gov("upstreams", "--json")
    [record] = [orjson.loads(line) for line in listed.stdout.splitlines()]
    assert (record["state"], record["last_status"], record["parked_goals"]) == ("failing", 503, 2)
    assert record["harness"] == "command"
    status = project.gov("service", "status")
    assert "FAILING since" in status.stdout
    assert "2 goals parked" in status.stdout

    (vendor / "down").unlink()
    probes = calls(vendor).count("probe")
    for goal_id in ("second", "first"):
        result = project.gov("run", goal_id, "--max-wait", "5")
        assert result.returncode == 0, result.stdout + result.stderr
        assert project.status(goal_id)["status"] == "succeeded"
        [resumed] = [e for e in project.events(goal_id) if e["type"] == "goal.resumed"]
        assert resumed["actor"] == "governor"
        assert "is back: its probe at" in resumed["reason"]
        assert "the outage lasted from" in resumed["reason"]
    assert calls(vendor).count("probe") == probes + 1  # then the first found it back
    assert project.status("first")["ledger"]["replans"]["charged"] == 2
    [record] = [
        orjson.loads(line) for line in project.gov("upstreams", "--json").stdout.splitlines()
    ]
    assert (record["state"], record["parked_goals"]) == ("healthy", 0)
    assert record["last_outage"]["ended_by"] == "probe"
    text = project.gov("upstreams").stdout
    assert "healthy; last outage" in text
