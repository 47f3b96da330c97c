"""End to end: a spent usage window parks every goal of its account until the reset
(SPEC §13.2), under ``governor serve``.

The agents are real ``command`` scripts in front of a pretend vendor (``VENDOR``): each call
is counted in a file with its time and account. The first worker call of account
``acct-a`` shuts that account's window for ``WINDOW_S`` seconds: it is refused with a
failure envelope naming the account and ``resets_at`` (a 429 ``usage_limit_reached``,
nothing done); any call of that account before the reset would be refused the same way.

* The goal whose call was refused, and the two others whose profiles run under
  ``acct-a``, park on the account (``goal.parked``, uncharged) and make **no** call before
  the reset — no probe either.
* A goal on another account (``acct-b``) keeps calling during the window.
* After the reset every goal resumes by itself (``goal.resumed`` by governor, naming the
  reopened window) and succeeds; ``governor upstreams`` shows the account's record by its
  name, and a replay of a parked goal explains the wait.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from governor.drive import goals
from governor.store import open_store
from tests.e2e.cli import COMPLETE, Project, done, plan
from tests.service.fleet import reaped, stop

WINDOW_S = 12.0
"""How long the window stays shut: long enough for the other account's goal to call in it."""
DEADLINE_S = 240.0
"""Generous: every wait is on a condition; this only bounds a broken run."""

VENDOR = """\
import json, pathlib, sys, time
from datetime import datetime, timezone

vendor, account, role = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
prompt = sys.stdin.read()
now = time.time()
with open(vendor / "calls", "a") as calls:
    calls.write(f"{now} {account} {role}\\n")

def refuse(reset):
    at = datetime.fromtimestamp(reset, timezone.utc).isoformat()
    print(json.dumps({"status": "failed", "class": "upstream", "vendor_status": 429,
                      "code": "usage_limit_reached", "account": account, "resets_at": at,
                      "effects": "absent", "output": "absent"}))
    sys.exit(1)

window, shut = vendor / f"window-{account}", vendor / f"shut-{account}"
if window.exists() and now < float(window.read_text()):
    refuse(float(window.read_text()))
if role == "worker" and shut.exists():
    reset = now + float(shut.read_text())
    window.write_text(repr(reset))
    shut.unlink()
    with open(vendor / "refused", "w") as refused:
        refused.write(f"{now} {reset}")
    refuse(reset)
if "role: worker" in prompt:
    print(%(done)r)
elif "asked now: milestone" in prompt:
    print(%(complete)r)
else:
    print(%(plan)r)
print(json.dumps({"status": "ok", "account": account, "usage": {"input_tokens": 10, "output_tokens": 2}}))
"""


def agent(vendor: Path, account: str, role: str) -> dict[str, Any]:
    return {
        "harness": "command",
        "args": ["python3", "bin/vendor.py", str(vendor), account, role],
        "account": account,
    }


def calls(vendor: Path) -> list[tuple[float, str, str]]:
    path = vendor / "calls"
    lines = path.read_text().splitlines() if path.exists() else []
    return [(float(t), account, role) for t, account, role in (line.split() for line in lines)]


def wait_for(what: str, check: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + DEADLINE_S
    while not (found := check()):
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)
    return found


def test_a_spent_usage_window_parks_every_goal_of_its_account_until_the_reset(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "vendor.py").write_text(
        VENDOR
        % {
            "done": json.dumps(done("a")),
            "complete": json.dumps(COMPLETE),
            "plan": json.dumps(plan("a")),
        }
    )
    (vendor / "shut-acct-a").write_text(str(WINDOW_S))
    url = f"sqlite:///{tmp_path / 'governor.db'}"
    project.env["GOVERNOR_STORE"] = url
    shared = ("a1", "a2", "a3")
    with closing(open_store(url)) as store:
        for goal_id, account in (*((g, "acct-a") for g in shared), ("b1", "acct-b")):
            path = project.goal_file(
                goal_id, agent(vendor, account, "planner"), agent(vendor, account, "worker")
            )
            goals.create(store, path)

    serve = project.popen("serve", "--workers", "1", "--poll-s", "0.2")
    with reaped(serve), closing(open_store(url)) as store:
        wait_for("every goal to succeed", lambda: store.goal_counts().get("succeeded") == 4)
        assert stop(serve) == 0, serve.stderr.read() if serve.stderr else ""

    refused_at, reset = (float(x) for x in (vendor / "refused").read_text().split())
    seen = calls(vendor)
    after = [c for c in seen if c[0] > refused_at]
    # no call of acct-a (no probe either) reached the vendor before its window reopened
    assert [c for c in after if c[1] == "acct-a" and c[0] < reset] == []
    assert any(c[1] == "acct-a" for c in after)  # and they called again after it
    # the other account's goal kept calling while the window was shut
    assert [c for c in after if c[1] == "acct-b" and c[0] < reset], seen

    resets_at = datetime.fromtimestamp(reset, UTC)
    parked_goals = []
    for goal_id in shared:
        events = project.events(goal_id)
        parks = [e for e in events if e["type"] == "goal.parked"]
        if not parks:
            continue  # it had finished before the window was shut
        parked_goals.append(goal_id)
        [park] = parks
        assert park["upstream"] == "account acct-a"
        assert datetime.fromisoformat(park["until"]) >= resets_at.replace(microsecond=0)
        [resumed] = [e for e in events if e["type"] == "goal.resumed"]
        assert resumed["actor"] == "governor"
        assert "the usage window of account acct-a reopened at" in resumed["reason"]
        assert [e for e in events if e["actor"] != "governor"] == []
        status = project.status(goal_id)
        assert status["status"] == "succeeded"
    assert len(parked_goals) >= 2, "the window should have caught the account's other goals"
    assert "goal.parked" not in project.types("b1")

    # the refused call is recorded with its account and reset, and charged nothing
    refused = [
        (goal_id, e)
        for goal_id in shared
        for e in project.events(goal_id)
        if e["type"] == "attempt.finished" and e.get("resets_at")
    ]
    [(first, finished)] = refused
    assert (finished["class"], finished["account"]) == ("upstream", "acct-a")
    assert project.status(first)["ledger"]["attempts"]["charged"] == 1

    listed = project.gov("upstreams", "--json")
    records = {r["upstream"]: r for r in map(orjson.loads, listed.stdout.splitlines())}
    account = records["account acct-a"]
    assert (account["harness"], account["kind"], account["state"]) == (
        "account",
        "account",
        "healthy",
    )
    assert account["last_outage"]["ended_by"] == "reset"
    assert "account acct-a: healthy; last outage" in project.gov("upstreams").stdout

    history = tmp_path / "history.jsonl"
    history.write_text(project.gov("export", parked_goals[0]).stdout)
    assert project.gov("validate", str(history)).returncode == 0
    replayed = [
        orjson.loads(line)
        for line in project.gov("replay", str(history), "--json").stdout.splitlines()
    ]
    [park_line] = [line for line in replayed if line["type"] == "goal.parked"]
    assert (park_line["status"], park_line["blocked_on"]) == ("waiting", "upstream")
    assert park_line["reason"].startswith(
        "parked: the usage window of account acct-a is spent until"
    )
