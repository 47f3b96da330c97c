"""A vendor outage across a Temporal-driven fleet: parked, probed once per step, resumed.

Twelve goals whose planner and worker are the real codex CLI, driven by two ``governor
temporal worker`` processes, against the loopback fake vendor. Once it has answered two
goals' last planner call, the vendor answers 503 to every model request for a stretch
(``tests/e2e/test_fleet_outage.Vendor``): the other ten are all caught by it. Counted at
the vendor and read from the histories, never from how fast the machine is:

* during the outage, besides the calls in flight when it began (at most the workers'
  call slots), only probes reach the vendor, one per back-off step for the whole fleet:
  consecutive probes are at least one step apart;
* no goal is charged for it (each ends with the charges of a calm run), none needs a
  person, and every goal resumes and succeeds by itself.
"""

from __future__ import annotations

import itertools
from contextlib import closing
from pathlib import Path

from governor.drive import goals
from governor.store import open_store
from governor.temporal.wire import DriveSettings
from tests.e2e.test_fleet_outage import (
    BACKOFF,
    DEADLINE_S,
    Vendor,
    is_probe,
    ride_out_an_outage,
    vendor,
    wait_for,
)
from tests.fakevendor.clis import codex_env, require_cli
from tests.fakevendor.server import FakeVendor
from tests.temporal.conftest import TemporalProject, start_all

__all__ = ["vendor"]  # the fake vendor fixture of the serve test, reused

GOALS = 50
"""Issue 23's fleet: many more goals than the workers' call slots, all but two open when
the outage begins (the vendor goes down by itself after the second goal's last call)."""
WORKERS = 2
CALLS = 4
"""Call slots per worker: at most WORKERS * CALLS calls are in flight when the outage begins."""


def test_an_outage_parks_the_temporal_fleet_and_it_resumes_by_itself(
    tmp_path: Path, project: TemporalProject, vendor: tuple[FakeVendor, Vendor]
) -> None:
    fake, answers = vendor
    cli = require_cli("codex")
    project.env.update(codex_env(tmp_path / "home", fake.url, cli))
    codex = {"harness": "codex", "env": ["FAKE_VENDOR_API_KEY"], "timeout_s": 120}
    policy = {"upstream_backoff": BACKOFF.model_dump()}
    url = project.env["GOVERNOR_STORE"]
    ids = [f"g{n:02d}" for n in range(GOALS)]
    with closing(open_store(url)) as store:
        for goal_id in ids:
            goals.create(store, project.goal_file(goal_id, codex, codex, **policy))
    start_all(project, ids, DriveSettings(lease_ttl_s=60))
    for _ in range(WORKERS):
        project.worker("--max-concurrent-calls", str(CALLS))

    with closing(open_store(url)) as store:
        began, ended, counts = ride_out_an_outage(store, answers, GOALS, timeout_s=DEADLINE_S * 2)

    during = [r for r in fake.model_requests if began <= r.at < ended]
    calls = [r for r in during if not is_probe(r)]
    probes = [r for r in during if is_probe(r)]
    assert len(calls) <= WORKERS * CALLS, f"{len(calls)} calls besides probes reached the vendor"
    assert len(probes) >= 3
    for step, (first, second) in enumerate(itertools.pairwise(probes), start=2):
        gap = second.at - first.at
        assert gap >= BACKOFF.wait_s(step, None) - 0.05, f"probes {gap:.2f}s apart at step {step}"

    assert counts == {"succeeded": GOALS}
    parked = 0
    with closing(open_store(url)) as store:
        for goal_id in ids:
            events = list(store.load(goal_id))
            ledger = goals.status(store, goal_id)[1].ledger
            assert (ledger.replans.charged, ledger.attempts.charged) == (2, 1), goal_id
            assert [e for e in events if e.actor != "governor"] == [], f"{goal_id} needed a person"
            parked += any(e.type == "goal.parked" for e in events)
        wait_for(
            "every ended goal's workflow to let its lease go",
            lambda: all(store.current_lease(g) is None for g in ids),
        )
    gaps = [round(b.at - a.at, 2) for a, b in itertools.pairwise(probes)]
    print(
        f"temporal outage {ended - began:.1f}s: {len(calls)} calls, {len(probes)} probes {gaps}s apart; {parked} parked"
    )
    assert parked >= GOALS // 2, f"only {parked} goals were parked"
