"""A SQLite store with a goal in every status, made the way real goals are made.

Most goals are driven by the real runner (``governor.graph.build.run``) with the scripted
harness, whose agents are real subprocesses playing scenario files; a missing binary is
a real ``command`` planner that is not there. A run in flight and a cancellation are
recorded with the core's own recording functions (``governor.core.record``, ``verbs``)
appended with ``append_folded``, as the runner and the operator verbs do.

Agent text is hostile on purpose: questions, errors and work titles carry ``<script>``
tags that would set ``window.__pwned``, ANSI escapes, and 2000-character strings.
"""

from __future__ import annotations

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final

from governor.clock import utc_now
from governor.core import record, verbs
from governor.core.policy import UpstreamBackoff
from governor.core.summary import summarize
from governor.core.upstream import Seen, Upstream, observed
from governor.drive import goals
from governor.drive.append import append_folded
from governor.drive.runner import RunnerSettings
from governor.graph.build import run
from governor.store.base import EventStore
from governor.store.sqlite import SqliteEventStore
from tests.story import Story
from tests.ui.serve import GOVERNOR

SCRIPT: Final = "<script>window.__pwned = 1</script>"
IMG: Final = '<img src=x onerror="window.__pwned = 2">'
ANSI: Final = "\x1b[31mRED\x1b[0m \x1b]0;title\x07"
HUGE: Final = "W" * 1990
LONE: Final = "\ud800"
"""A lone surrogate: no UTF-8 text holds one, so a reply carrying it is refused."""
QUESTION: Final = f"Which database? {SCRIPT} {IMG} {ANSI}"
"""What the planner of ``g-blocked-decision`` asks."""
HOSTILE_TITLE: Final = f"{SCRIPT}{IMG}"[:200]

FAST: Final = {"upstream_backoff": {"initial_s": 0.01, "factor": 1, "max_s": 0.01}}
OUTAGE: Final = {"vendor_error": {"status": 503, "message": f"overloaded {SCRIPT}"}}
COMPLETE: Final = {"decision": "complete", "rationale": "done"}

EXPECTED: Final[dict[str, tuple[str, str | None]]] = {
    "g-ready": ("ready", None),
    "g-running": ("running", None),
    "g-waiting": ("waiting", "upstream"),
    "g-parked": ("waiting", "upstream"),
    "g-blocked-environment": ("blocked", "environment"),
    "g-blocked-upstream": ("blocked", "upstream"),
    "g-blocked-decision": ("blocked", "decision"),
    "g-blocked-work": ("blocked", "work"),
    "g-review-plan": ("awaiting_review", "operator"),
    "g-in-review": ("awaiting_review", "operator"),
    "g-exhausted": ("budget_exhausted", None),
    "g-succeeded": ("succeeded", None),
    "g-cancelled": ("cancelled", None),
}
"""Each goal of the fleet: (status, blocked_on) once it is built."""


def plan(*keys: str, title: str | None = None) -> dict[str, Any]:
    work = [
        {"key": k, "title": title or k, "objective": f"do {k}", "acceptance": [f"{k} works"]}
        for k in keys
    ]
    return {"decision": "apply", "rationale": f"because {SCRIPT}", "work": work}


def done(key: str) -> dict[str, Any]:
    return {
        "status": "done",
        "summary": f"did {key} {ANSI}",
        "acceptance": [{"criterion": f"{key} works", "status": "satisfied"}],
    }


def planner(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"name": "planner", "match": "role: planner", "steps": list(steps)}


def worker(key: str, *steps: dict[str, Any]) -> dict[str, Any]:
    return {"name": key, "match": ["role: worker", f"work_key: {key}"], "steps": list(steps)}


@dataclass
class Fleet:
    """The folder, the store file, and how to make and drive goals in it."""

    root: Path
    store: EventStore

    @property
    def db(self) -> Path:
        return self.root / "governor.db"

    def scenario(self, goal_id: str, *scripts: dict[str, Any]) -> dict[str, Any]:
        path = self.root / f"{goal_id}.scenario.json"
        path.write_text(json.dumps({"name": goal_id, "scripts": list(scripts)}))
        return {"harness": "scripted", "args": [path.name], "max_attempts": 1, "timeout_s": 60}

    def goal(
        self,
        goal_id: str,
        planner: dict[str, Any] | None = None,
        worker: dict[str, Any] | None = None,
        **policy: Any,
    ) -> str:
        default = {"harness": "scripted", "max_attempts": 1}
        spec = {
            "id": goal_id,
            "title": f"Goal {goal_id}",
            "objective": f"Do {goal_id}. {SCRIPT}",
            "acceptance": ["it is done", ANSI],
            "planner": "planner",
            "worker": "worker",
            "policy": policy,
            "profiles": {"planner": planner or default, "worker": worker or planner or default},
        }
        path = self.root / f"{goal_id}.json"
        path.write_text(json.dumps(spec))
        goals.create(self.store, path)
        return goal_id

    def cli_run(self, goal_id: str) -> subprocess.CompletedProcess[str]:
        """``governor run GOAL``, a real process in the fleet's folder (its scripted agents
        keep their steps under ``.governor/scripted`` there)."""
        return subprocess.run(
            [GOVERNOR, "run", goal_id, "--store", str(self.db), "--max-wait", "5"],
            capture_output=True,
            text=True,
            cwd=self.root,
            timeout=120,
        )

    def story(self, story: Story) -> str:
        """Store a history made with the core's recording functions (``tests/story.py``)."""
        view = story.view
        self.store.append(
            view.goal_id, story.events, expected_seq=0, summary=summarize(view, story.now)
        )
        return view.goal_id

    def run(self, goal_id: str) -> None:
        settings = RunnerSettings(
            workdir=self.root,
            env=dict(os.environ),
            state_dir=self.root / "scripted" / goal_id,
            max_wait_s=5.0,
        )
        run(goals.runner(self.store, goal_id, settings))


def build(root: Path) -> Fleet:
    """Make the store of ``EXPECTED`` in ``root/governor.db``."""
    fleet = Fleet(root, SqliteEventStore(root / "governor.db"))
    fleet.goal("g-ready")

    running = fleet.goal("g-running")
    view = goals.load(fleet.store, running)
    append_folded(
        fleet.store,
        view,
        record.request_plan(view, plan_id="p1", trigger="initial", at=utc_now()),
        utc_now(),
    )

    s = fleet.scenario("g-waiting", planner(OUTAGE))
    fleet.goal("g-waiting", s, upstream_backoff={"initial_s": 3600, "factor": 2, "max_s": 7200})
    fleet.run("g-waiting")

    # its planner's upstream refuses, and so does the probe: the goal waits parked on it
    probe = {"name": "probe", "match": "role: probe", "steps": [OUTAGE]}
    s = fleet.scenario("g-parked", planner(OUTAGE), probe)
    s["probe"] = s["args"]
    fleet.goal("g-parked", s, upstream_backoff={"initial_s": 3600, "factor": 2, "max_s": 7200})
    fleet.run("g-parked")

    missing = {"harness": "command", "args": ["bin/no-such-planner"], "max_attempts": 1}
    fleet.goal("g-blocked-environment", missing, fleet.scenario("env-worker", planner(COMPLETE)))
    fleet.run("g-blocked-environment")

    s = fleet.scenario("g-blocked-upstream", planner(OUTAGE))
    fleet.goal("g-blocked-upstream", s, **FAST)
    fleet.run("g-blocked-upstream")

    s = fleet.scenario(
        "g-blocked-decision", planner({"reply": {"status": "decision", "question": QUESTION}})
    )
    fleet.goal("g-blocked-decision", s)
    fleet.run("g-blocked-decision")

    fails = {"effects": True, "stderr": f"tests failed {SCRIPT}\n{HUGE}\n", "exit_code": 1}
    s = fleet.scenario(
        "g-blocked-work", planner({"reply": plan("a", title=HOSTILE_TITLE)}), worker("a", fails)
    )
    fleet.goal("g-blocked-work", s, retry_blocked=False)
    fleet.run("g-blocked-work")

    s = fleet.scenario("g-review-plan", planner({"reply": plan("a", "b")}))
    fleet.goal("g-review-plan", s, auto_apply=False)
    fleet.run("g-review-plan")

    s = fleet.scenario(
        "g-in-review", planner({"reply": plan("a")}), worker("a", {"reply": done("a")})
    )
    fleet.goal("g-in-review", s, accept_passing=False)
    fleet.run("g-in-review")

    broken = {"stderr": f"{HUGE} {SCRIPT}\n", "exit_code": 1}
    surrogate = {"reply": {**plan("a"), "rationale": f"lone {LONE} surrogate"}}
    s = fleet.scenario("g-exhausted", planner(surrogate, broken))
    fleet.goal("g-exhausted", s, max_replans=2)
    fleet.run("g-exhausted")

    s = fleet.scenario(
        "g-succeeded",
        planner({"reply": plan("a")}, {"reply": COMPLETE}),
        worker("a", OUTAGE, {"effects": True, "reply": done("a"), "cost_usd": 0.25}),
    )
    fleet.goal("g-succeeded", s, **FAST)
    fleet.run("g-succeeded")

    cancelled = fleet.goal("g-cancelled")
    goals.operate(
        fleet.store,
        cancelled,
        lambda v: verbs.cancel_goal(
            v, reason=f"not needed {SCRIPT}", at=utc_now(), actor="operator:test"
        ),
    )
    vendors(fleet.store, failing=True)
    return fleet


CODEX: Final = Upstream("codex", "https://api.openai.com/v1", "gpt-5-codex")
CLAUDE: Final = Upstream("claude", "https://api.anthropic.com", "claude-sonnet-4-5")


def vendors(store: EventStore, *, failing: bool) -> None:
    """Two vendors' health records, written by the core's transitions as a runner writes
    them: codex answered; claude answered, or (``failing``) refused with a 529."""
    backoff, now = UpstreamBackoff(), utc_now()
    claude = Seen("refused", 529) if failing else Seen("answered")
    for upstream, seen in ((CODEX, Seen("answered")), (CLAUDE, claude)):
        change = partial(observed, upstream=upstream, seen=seen, now=now, backoff=backoff)
        store.change_upstream(upstream.name, change)


ANSWERED: Final = {"decision": "apply", "rationale": "SQLite, as told", "work": plan("a")["work"]}
ASK: Final = {"reply": {"status": "decision", "question": "Postgres or SQLite?"}}


ON_TEMPORAL = "temporal:default@127.0.0.1:7233"
"""The lease holder of a goal a Temporal workflow drives (``governor.temporal.names``)."""


def build_acting(root: Path) -> Fleet:
    """A store of goals for a person to act on from the page, each for one test: questions
    of a planner and of a worker, reviews of work and of plans, a blocked item, an
    attempt in flight, a spent budget, and ready goals. The goals that go on after an
    action are driven by ``governor run`` processes (``Fleet.cli_run``)."""
    fleet = Fleet(root, SqliteEventStore(root / "governor.db"))
    s = fleet.scenario("ask-planner", planner(ASK, {"reply": ANSWERED}, {"reply": COMPLETE}),
                       worker("a", {"reply": done("a")}))  # fmt: skip
    fleet.goal("ask-planner", s)
    s = fleet.scenario("ask-worker", planner({"reply": plan("a")}, {"reply": COMPLETE}),
                       worker("a", ASK, {"reply": done("a")}))  # fmt: skip
    fleet.goal("ask-worker", s)
    for goal_id in ("review-work", "review-work-2", "review-twice"):
        s = fleet.scenario(goal_id, planner({"reply": plan("a")}, {"reply": COMPLETE}),
                           worker("a", {"reply": done("a")}, {"reply": done("a")}))  # fmt: skip
        fleet.goal(goal_id, s, accept_passing=False)
    for goal_id in ("review-plan", "review-plan-2"):
        fleet.goal(
            goal_id, fleet.scenario(goal_id, planner({"reply": plan("a", "b")})), auto_apply=False
        )
    fails = {"effects": True, "stderr": "tests failed\n", "exit_code": 1}
    s = fleet.scenario("blocked-work", planner({"reply": plan("a")}), worker("a", fails))
    fleet.goal("blocked-work", s, retry_blocked=False)
    fleet.goal(
        "exhausted",
        fleet.scenario("exhausted", planner(fails, fails)),
        max_replans=2,
        max_milestones=1,
    )
    driven = ("ask-planner", "ask-worker", "review-work", "review-work-2", "review-twice",
              "review-plan", "review-plan-2", "blocked-work", "exhausted")  # fmt: skip
    with ThreadPoolExecutor(3) as pool:  # one goal each: the runs need not wait on each other
        for ran in pool.map(fleet.cli_run, driven):
            assert "Traceback" not in ran.stderr, ran.stderr
    running = Story("running")
    running.plan("a")
    running.start("p1-a")
    fleet.story(running)
    for n in range(1, 12):
        fleet.goal(f"ready-{n}")
    fleet.goal("on-temporal")  # its workflow holds the lease, as `governor temporal start` takes it
    fleet.store.acquire_lease("on-temporal", ON_TEMPORAL, ttl_s=7 * 24 * 3600)
    return fleet
