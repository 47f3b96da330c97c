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

The same story runs twice: with ``command`` agents whose envelope names the window, and
with the real codex CLI through governor's relay in front of the loopback fake vendor,
whose 429 ``usage_limit_reached`` (with ``resets_at``) is read on the wire (SPEC §13.2).
"""

from __future__ import annotations

import json
import re
import threading
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
from tests.fakevendor import scenario as sc
from tests.fakevendor.clis import FAKE_OPENAI_KEY, codex_env, require_cli
from tests.fakevendor.scenario import Step
from tests.fakevendor.server import FakeVendor, RecordedRequest
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


SHARED = ("a1", "a2", "a3")
"""The goals of account ``acct-a``; ``b1`` runs under ``acct-b``."""
ACCOUNTS = {**dict.fromkeys(SHARED, "acct-a"), "b1": "acct-b"}


class Accounts:
    """The loopback vendor's answers by account (the command ``VENDOR``'s, for codex): the
    first worker call of ``acct-a`` shuts its window for ``WINDOW_S``; every call of that
    account before the reset is refused the same way. Each call is noted (wall clock,
    account, role) as the command vendor notes it."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, str, str]] = []
        self.refused: tuple[float, float] | None = None
        self._shut: dict[str, float] = {}
        self._lock = threading.Lock()  # the vendor answers on a thread per request

    def __call__(self, request: RecordedRequest) -> Step:
        text = json.dumps(request.body)
        found = re.search(r"Goal (\w+)", text)
        assert found is not None, "a model request without its goal's title"
        account = ACCOUNTS[found.group(1)]
        role = "worker" if "role: worker" in text else "planner"
        now = time.time()
        with self._lock:
            self.calls.append((now, account, role))
            until = self._shut.get(account)
            if until is not None and now < until:
                return refusal(until, now)
            if role == "worker" and account == "acct-a" and self.refused is None:
                reset = float(int(now + WINDOW_S) + 1)  # the wire states whole seconds
                self._shut[account], self.refused = reset, (now, reset)
                return refusal(reset, now)
        if role == "worker":
            return Step("reply", text=json.dumps(done("a")))
        if "asked now: milestone" in text:
            return Step("reply", text=json.dumps(COMPLETE))
        return Step("reply", text=json.dumps(plan("a")))


def key_digest(account: str) -> str:
    """``account`` when it is a digest that does not hold the fake key."""
    assert re.fullmatch(r"[0-9a-f]{32}", account), account
    assert FAKE_OPENAI_KEY not in account
    return account


def refusal(reset: float, now: float) -> Step:
    """codex's ChatGPT-plan window spent, as its vendor says it on the wire."""
    [step] = sc.usage_window_openai(int(reset), int(now)).steps
    return step


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
    serve_fleet(
        project,
        {g: (agent(vendor, a, "planner"), agent(vendor, a, "worker")) for g, a in ACCOUNTS.items()},
    )
    refused_at, reset = (float(x) for x in (vendor / "refused").read_text().split())
    holds_and_resumes(project, calls(vendor), refused_at, reset, wire=False)


def test_codex_a_spent_usage_window_read_on_the_wire_parks_its_accounts_goals(
    tmp_path: Path,
) -> None:
    cli = require_cli("codex")
    project = Project(tmp_path)
    answers = Accounts()
    with FakeVendor() as fake:
        fake.respond(answers)
        project.env.update(codex_env(tmp_path / "home", fake.url, cli))
        profiles = {}
        for goal_id, account in ACCOUNTS.items():
            codex = {"harness": "codex", "env": ["FAKE_VENDOR_API_KEY"], "account": account}
            profiles[goal_id] = (codex, codex)
        serve_fleet(project, profiles)
    assert answers.refused is not None, "no worker call of acct-a reached the vendor"
    holds_and_resumes(project, answers.calls, *answers.refused, wire=True)


def serve_fleet(
    project: Project, profiles: dict[str, tuple[dict[str, Any], dict[str, Any]]]
) -> None:
    """Create each goal with its (planner, worker) profiles and serve them until every
    one has succeeded."""
    url = f"sqlite:///{project.root / 'governor.db'}"
    project.env["GOVERNOR_STORE"] = url
    with closing(open_store(url)) as store:
        for goal_id, (planner, worker) in profiles.items():
            goals.create(store, project.goal_file(goal_id, planner, worker))
    serve = project.popen("serve", "--workers", "1", "--poll-s", "0.2", "--log-file", "serve.log")
    with reaped(serve), closing(open_store(url)) as store:
        wait_for("every goal to succeed", lambda: store.goal_counts().get("succeeded") == 4)
        assert stop(serve) == 0, serve.stderr.read() if serve.stderr else ""


def holds_and_resumes(
    project: Project,
    seen: list[tuple[float, str, str]],
    refused_at: float,
    reset: float,
    *,
    wire: bool,
) -> None:
    """What must hold of the fleet's story, counted at the vendor (``seen``: each call's
    time, account and role) and read from the histories."""
    shared = SHARED
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
    assert finished["class"] == "upstream"
    # the account the call reported: the envelope's name, or on the wire the key's digest
    # (never the key); the profile's name is what the goals park on either way
    assert finished["account"] == ("acct-a" if not wire else key_digest(finished["account"]))
    if wire:  # the reset came from the vendor's 429 on the wire, not from codex's words
        evidence = finished["evidence"]
        assert (evidence["source"], evidence["rule"]) == ("relay:wire", "usage-window")
        [request] = evidence["observation"]["wire"]["requests"]
        assert (request["status"], request["error_code"]) == (429, "usage_limit_reached")
        assert datetime.fromtimestamp(request["resets_at"], UTC) == datetime.fromisoformat(
            finished["resets_at"]
        )
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

    history = project.root / "history.jsonl"
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
