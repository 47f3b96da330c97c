"""End to end: a vendor that cannot be reached (SPEC §12.7), with the real codex CLI.

With nothing listening codex prints "Reconnecting... waiting for network" every few
seconds and ignores ``request_max_retries = 0``. governor ends it at the first such line
instead of waiting out the profile's ``timeout_s`` (here 600 s), and classifies the call
by the upstream's shared record:

* a vendor that has never answered is a missing precondition: the goal stops ``blocked``
  on ``environment`` at once, uncharged, with the "never reached <endpoint>" remedy;
* a vendor that answered before and is gone now is an outage: the goal parks on the
  upstream (uncharged), and resumes by itself once a probe is answered again.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import COMPLETE, Project, done, plan
from tests.e2e.test_fleet_outage import wait_for
from tests.fakevendor.clis import codex_env, dead_url, require_cli
from tests.fakevendor.scenario import Step
from tests.fakevendor.server import FakeVendor, RecordedRequest

CODEX = {"harness": "codex", "env": ["FAKE_VENDOR_API_KEY"], "timeout_s": 600}
BACKOFF = {"upstream_backoff": {"initial_s": 0.5, "factor": 1, "max_s": 0.5}}
GATE = """\
# a worker that waits for the test to open its gate, then reports the item done
while [ ! -e "$1" ]; do sleep 0.05; done
cat > /dev/null
echo '%s'
"""


def answer(request: RecordedRequest) -> Step:
    text = json.dumps(request.body)
    if "role: probe" in text:
        return Step("reply", text="ok")
    if "asked now: milestone" in text:
        return Step("reply", text=json.dumps(COMPLETE))
    return Step("reply", text=json.dumps(plan("a")))


def at(event: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(event["at"].replace("Z", "+00:00"))


def test_a_codex_vendor_down_from_the_start_stops_the_goal_on_environment_at_once(
    tmp_path: Path,
) -> None:
    cli = require_cli("codex")
    project = Project(tmp_path)
    url = dead_url()
    project.env.update(codex_env(tmp_path / "home", url, cli))
    project.goal("g", CODEX, CODEX)

    # the subprocess's own limit (120 s) is far below the profile's timeout_s (600 s)
    result = project.gov("run", "g", timeout=120)
    assert result.returncode == 10, result.stdout + result.stderr
    status = project.status("g")
    assert (status["status"], status["blocked_on"]) == ("blocked", "environment")
    remedy = f"never reached {url}/v1: check the profile's base URL, the network and the proxy"
    assert remedy in status["reason"]
    assert status["ledger"]["replans"]["charged"] == 0
    requested, failed = [e for e in project.events("g") if e["type"].startswith("plan.")]
    assert (failed["class"], failed["evidence"]["rule"]) == ("environment", "no-response")
    observation = failed["evidence"]["observation"]
    assert (observation["connection"], observation["stopped"]) == ("unreachable", True)
    assert observation["answered_before"] is False
    assert (at(failed) - at(requested)).total_seconds() < 60  # not the 600 s timeout
    upstreams = project.gov("upstreams").stdout
    assert "never answered" in upstreams
    explained = project.gov("explain", "g").stdout
    assert "make the vendor reachable" in explained


def test_the_same_vendor_gone_after_it_answered_parks_the_goal_and_it_resumes(
    tmp_path: Path,
) -> None:
    cli = require_cli("codex")
    project = Project(tmp_path)
    gate = tmp_path / "gate"
    worker = project.script("worker", GATE % json.dumps(done("a")))
    vendor = FakeVendor().start()
    vendor.respond(answer)
    port = int(vendor.url.rsplit(":", 1)[1])
    project.env.update(codex_env(tmp_path / "home", vendor.url, cli))
    command = {"harness": "command", "args": [worker, str(gate)]}
    project.goal("g", CODEX, command, **BACKOFF)

    run = project.popen("run", "g", "--max-wait", "0")
    try:
        # the planner's first call was answered; the worker waits at its gate
        wait_for(
            "the worker to start", lambda: "attempt.started" in project.types("g"), timeout_s=120
        )
        vendor.stop()  # nothing listens on the vendor's port any more
        gate.touch()
        stdout, stderr = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    status = project.status("g")
    assert (status["status"], status["blocked_on"]) == ("waiting", "upstream"), stdout + stderr
    assert status["ledger"]["replans"]["charged"] == 1
    failed = [e for e in project.events("g") if e["type"] == "plan.failed"]
    assert failed, stdout + stderr
    evidence = failed[-1]["evidence"]
    assert (failed[-1]["class"], evidence["rule"]) == ("upstream", "no-response")
    assert (evidence["effects"], evidence["output"], evidence["refusal"]) == ("absent",) * 3
    assert evidence["observation"]["answered_before"] is True
    assert project.types("g")[-1] == "goal.parked"

    back = FakeVendor(port=port).start()  # the vendor answers again on the same port
    try:
        back.respond(answer)
        result = project.gov("run", "g", "--max-wait", "10", timeout=180)
    finally:
        back.stop()
    assert result.returncode == 0, result.stdout + result.stderr
    status = project.status("g")
    assert status["status"] == "succeeded"
    assert status["ledger"]["replans"]["charged"] == 2
    [resumed] = [e for e in project.events("g") if e["type"] == "goal.resumed"]
    assert resumed["actor"] == "governor"


@pytest.fixture(autouse=True)
def _codex_only() -> None:
    require_cli("codex")
