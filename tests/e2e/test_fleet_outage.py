"""End to end: a vendor outage parks a fleet and resumes it by itself (SPEC §11.10).

Twelve goals (three per worker) whose planner and worker are the real codex CLI, on
``governor serve --workers 4``, against the loopback fake vendor. Once the vendor has
answered two goals' last planner call it answers 503 to every model request for a
stretch, so the other ten are all caught by the outage however loaded the machine is.
What must hold, counted at the vendor and read from the histories — never from how fast
the machine is:

* during the outage, besides the calls already in flight when it began (at most one per
  worker), only probes reach the vendor, one per back-off step: consecutive probes are
  at least one step apart;
* no goal's charged ledger moves (each ends with the charges of a calm run) and no goal
  needs a person: every ``goal.resumed``/``work.retried`` is governor's own;
* after recovery every goal finishes, every history validates, and ``replay`` explains
  the park (``goal.parked``, rule ``fleet.3``) and the resume (naming the probe and the
  outage span).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import orjson
import pytest

from governor.analysis.replay import ReplayStep, replay
from governor.core.policy import UpstreamBackoff
from governor.drive import goals
from governor.store import EventStore, open_store
from tests.e2e.cli import COMPLETE, Project, done, plan
from tests.fakevendor.clis import codex_env, require_cli
from tests.fakevendor.scenario import Step
from tests.fakevendor.server import FakeVendor, RecordedRequest
from tests.service.fleet import reaped, stop

GOALS = 50
"""Many goals per worker, all but two open when the outage begins: the fleet that one
probe per step speaks for (the fleet the outage issue names)."""
WORKERS = 4
BACKOFF = UpstreamBackoff(initial_s=0.5, factor=2.0, max_s=2.0)
DEADLINE_S = 300.0
"""Generous: every wait is on a condition; this only bounds a broken run."""


class Vendor:
    """Answers each model request by what its prompt asks; 503 to all while ``down``.

    It goes down by itself right after answering the ``down_after``-th goal's last
    planner call (``complete``), noting when (``began``): the fleet is under way, and no
    other goal can finish before the outage, whatever the load on the machine (waiting
    for the store to show two goals succeeded let a starved test process see a dozen)."""

    def __init__(self, down_after: int = 2) -> None:
        self.down = threading.Event()
        self.down_after = down_after
        self.began = 0.0
        self._completed = 0
        self._lock = threading.Lock()  # the vendor answers on a thread per request

    def __call__(self, request: RecordedRequest) -> Step:
        text = json.dumps(request.body)
        with self._lock:
            if self.down.is_set():
                return Step("status", status=503)
            if "role: probe" in text:
                return Step("reply", text="ok")
            if "role: worker" in text:
                return Step("reply", text=json.dumps(done("a")))
            if "asked now: milestone" in text:
                self._completed += 1
                if self._completed == self.down_after:
                    self.began = time.monotonic()
                    self.down.set()
                return Step("reply", text=json.dumps(COMPLETE))
            return Step("reply", text=json.dumps(plan("a")))


def is_probe(request: RecordedRequest) -> bool:
    return "role: probe" in json.dumps(request.body)


def wait_for(what: str, check: Callable[[], Any], *, timeout_s: float = DEADLINE_S) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (found := check()):
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)
    return found


@pytest.fixture
def vendor() -> Iterator[tuple[FakeVendor, Vendor]]:
    answers = Vendor()
    with FakeVendor() as fake:
        fake.respond(answers)
        yield fake, answers


def test_an_outage_parks_the_fleet_and_it_resumes_by_itself_without_burning_a_retry(
    tmp_path: Path, vendor: tuple[FakeVendor, Vendor]
) -> None:
    fake, answers = vendor
    cli = require_cli("codex")
    project = Project(tmp_path)
    project.env.update(codex_env(tmp_path / "home", fake.url, cli))
    codex = {"harness": "codex", "env": ["FAKE_VENDOR_API_KEY"], "timeout_s": 120}
    policy = {"upstream_backoff": BACKOFF.model_dump()}
    url = f"sqlite:///{tmp_path / 'governor.db'}"
    project.env["GOVERNOR_STORE"] = url
    with closing(open_store(url)) as store:
        for n in range(GOALS):
            goals.create(store, project.goal_file(f"g{n:02d}", codex, codex, **policy))

    log = tmp_path / "serve.log"
    serve = project.popen(
        "serve", "--workers", str(WORKERS), "--poll-s", "0.2", "--log-file", str(log)
    )
    with reaped(serve), closing(open_store(url)) as store:
        began, ended, counts = ride_out_an_outage(store, answers, GOALS)
        assert stop(serve) == 0, serve.stderr.read() if serve.stderr else ""

    # --- counted at the vendor -----------------------------------------------------------
    during = [r for r in fake.model_requests if began <= r.at < ended]
    calls = [r for r in during if not is_probe(r)]
    probes = [r for r in during if is_probe(r)]
    assert len(calls) <= WORKERS, f"{len(calls)} calls besides probes reached the vendor"
    assert len(probes) >= 3
    for step, (first, second) in enumerate(itertools.pairwise(probes), start=2):
        gap = second.at - first.at
        assert gap >= BACKOFF.wait_s(step, None) - 0.05, f"probes {gap:.2f}s apart at step {step}"

    # --- read from the histories ---------------------------------------------------------
    assert counts == {"succeeded": GOALS}
    parked, uncharged = [], 0
    with closing(open_store(url)) as store:
        for n in range(GOALS):
            goal_id = f"g{n:02d}"
            events = list(store.load(goal_id))
            ledger = goals.status(store, goal_id)[1].ledger
            assert (ledger.replans.charged, ledger.attempts.charged) == (2, 1), goal_id
            uncharged += ledger.replans.uncharged + ledger.attempts.used - ledger.attempts.charged
            operators = [e for e in events if e.actor != "governor"]
            assert operators == [], f"{goal_id} needed a person: {operators}"
            steps = list(replay(enumerate(events, start=1)))  # checks the history as it goes
            if any(e.type == "goal.parked" for e in events):
                parked.append(goal_id)
                _explains(steps)
    gaps = [round(b.at - a.at, 2) for a, b in itertools.pairwise(probes)]
    print(  # the figures a run reports (pytest -s)
        f"outage {ended - began:.1f}s: {len(calls)} calls in flight, {len(probes)} probes "
        f"{gaps}s apart; {len(parked)} goals parked, {uncharged} uncharged tries"
    )
    assert len(parked) >= GOALS // 2, f"only {len(parked)} goals were parked"
    assert uncharged <= WORKERS  # only the calls in flight when it began were refused
    kinds = [orjson.loads(line)["kind"] for line in log.read_text().splitlines()]
    assert "upstream.down" in kinds
    assert "upstream.up" in kinds
    # and the commands a person uses say the same of one parked goal's exported history
    history = tmp_path / f"{parked[0]}.jsonl"
    history.write_text(project.gov("export", parked[0]).stdout)
    assert project.gov("validate", str(history)).returncode == 0
    replayed = project.gov("replay", str(history), "--json")
    lines = [orjson.loads(line) for line in replayed.stdout.splitlines()]
    [park] = [line for line in lines if line["type"] == "goal.parked"]
    assert (park["status"], park["blocked_on"]) == ("waiting", "upstream")
    assert park["reason"].startswith("parked: codex http://127.0.0.1:")
    timeline = project.gov("replay", str(history)).stdout
    assert "goal.resumed by governor: codex http://127.0.0.1:" in timeline
    assert "the outage lasted from" in timeline


def ride_out_an_outage(
    store: EventStore, answers: Vendor, goals: int, *, timeout_s: float = DEADLINE_S
) -> tuple[float, float, dict[str, int]]:
    """Wait for the vendor to go down once the fleet is under way (``Vendor``: after two
    goals' last call), bring it back once three probes were refused and every open goal
    is parked, and wait for all ``goals`` to succeed (within ``timeout_s``): when it went
    down, when it came back, and the goal counts at the end."""
    assert answers.down.wait(timeout_s), "the vendor never answered two goals' last call"
    began = answers.began
    wait_for(
        "three refused probes and every open goal parked",
        lambda: _parked_and_probed(store, probes=3),
    )
    answers.down.clear()
    ended = time.monotonic()
    counts = wait_for(
        "every goal to succeed",
        lambda: (c := store.goal_counts()).get("succeeded") == goals and c,
        timeout_s=timeout_s,
    )
    return began, ended, counts


def _parked_and_probed(store: EventStore, *, probes: int) -> bool:
    records = store.upstreams()
    if len(records) != 1 or records[0].healthy or records[0].probes < probes:
        return False
    open_goals = sum(n for s, n in store.goal_counts().items() if s != "succeeded")
    return records[0].parked == open_goals


def _explains(steps: list[ReplayStep]) -> None:
    """The replay of a parked goal's history explains its park and its resume."""
    [park] = [s for s in steps if s.event.type == "goal.parked"]
    d = park.decision
    assert (d.status, d.next_action, d.blocked_on, d.rule) == (
        "waiting",
        "wait",
        "upstream",
        "fleet.3",
    )
    assert d.reason.startswith("parked: codex http://127.0.0.1:")
    [resumed] = [s for s in steps if s.event.type == "goal.resumed"]
    reason = resumed.event.reason or ""
    assert "is back: its probe at" in reason
    assert "the outage lasted from" in reason
    assert resumed.decision.status != "waiting"
