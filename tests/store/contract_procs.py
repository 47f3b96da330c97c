"""The store contract with real processes: racing writers, a zombie runner, real expiry.

Each backend that other processes can share (SQLite, PostgreSQL) subclasses
``ProcessCases`` and provides ``url``, a fixture naming a fresh store that
``open_store`` opens; the processes are ``tests/store/proc.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from governor.clock import utc_now
from governor.core.events import GoalResumed
from governor.store import open_store
from tests.store.streams import story

ROOT = Path(__file__).resolve().parents[2]


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.store.proc", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> list[dict]:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return [json.loads(line) for line in out.splitlines()]


def stored(url: str) -> list:
    store = open_store(url)
    events = list(store.load("g1"))
    store.close()
    return events


def seed(url: str, count: int | None = None) -> list:
    events = story().events[:count]
    store = open_store(url)
    store.append("g1", events, expected_seq=0)
    store.close()
    return events


class ProcessCases:
    @pytest.fixture
    def url(self) -> str:
        raise NotImplementedError("a backend's test class names a fresh store")

    def test_two_processes_appending_to_one_goal_write_each_seq_exactly_once(self, url, tmp_path):
        seed(url, 1)
        go = tmp_path / "go"
        count = 60
        procs = [spawn("append", url, "g1", name, str(count), str(go)) for name in ("p1", "p2")]
        deadline = time.monotonic() + 30
        while not all(Path(f"{go}.ready-{name}").exists() for name in ("p1", "p2")):
            assert time.monotonic() < deadline, "the writers did not start"
            time.sleep(0.01)
        go.touch()
        reports = [finish(proc)[0] for proc in procs]
        events = stored(url)
        assert [e.seq for e in events] == list(range(1, 2 * count + 2))
        reasons = [str(e.reason) for e in events if isinstance(e, GoalResumed)]
        expected = [f"{name}-{i}" for name in ("p1", "p2") for i in range(count)]
        assert sorted(reasons) == sorted(expected)  # every append landed exactly once
        for name in ("p1", "p2"):  # and each writer's appends kept their order
            assert [r for r in reasons if r.startswith(name)] == [
                f"{name}-{i}" for i in range(count)
            ]
        assert sum(r["conflicts"] for r in reports) > 0, "the writers never raced"

    def test_a_zombie_process_cannot_append_after_another_process_took_its_lease_over(
        self, url, tmp_path
    ):
        events = seed(url)
        go = tmp_path / "go"
        zombie = spawn("hold", url, "g1", "runner-a", "0.3", str(go))
        assert zombie.stdout is not None
        held = json.loads(zombie.stdout.readline())
        successor = finish(spawn("take", url, "g1", "runner-b", "30"))
        go.touch()
        late = finish(zombie)
        assert successor[0]["token"] > held["token"]
        assert successor[1] == {"result": "appended", "seq": len(events) + 1}
        assert late[0]["result"] == "refused"
        assert late[0]["holder"] == "runner-b"
        assert "no longer current" in late[0]["message"]
        after = stored(url)
        assert len(after) == len(events) + 1
        assert after[-1].reason == "runner-b"

    def test_a_lease_takeover_waits_for_expiry_in_real_time(self, url):
        store = open_store(url)  # on the default clock: UTC now
        lease = store.acquire_lease("g1", "a", ttl_s=0.2)
        assert lease.expires_at - utc_now() <= timedelta(seconds=0.2)
        time.sleep(0.25)
        assert store.acquire_lease("g1", "b", ttl_s=1).token == lease.token + 1
        store.close()

    @pytest.mark.parametrize(
        ("ask", "cost"), [("0.1", "0.1"), ("0.1", "0.13")], ids=["as reserved", "over reservations"]
    )
    @pytest.mark.parametrize("command", ["reserve", "along"], ids=["alone", "in appends"])
    def test_eight_processes_on_one_pool_spend_past_it_only_what_was_in_flight(
        self, url, tmp_path, ask, cost, command
    ):
        """SPEC §13.6: a reservation is one transaction — of its own, or the append of the
        call's start (issue 33); with 8 drivers, the spend passes the limit by at most what
        the calls in flight cost over their reservations."""
        from governor.core.pools import PoolLimits, project_pool
        from governor.drive import pools

        store = open_store(url)
        pools.set_pool(store, "team", PoolLimits(usd=2.0), at=utc_now(), actor="t", reason=None)
        store.close()
        go, names = tmp_path / "go", [f"w{i}" for i in range(8)]
        procs = [spawn(command, url, "team", name, ask, cost, str(go)) for name in names]
        deadline = time.monotonic() + 60
        while not all(Path(f"{go}.ready-{name}").exists() for name in names):
            assert time.monotonic() < deadline, "the drivers did not start"
            time.sleep(0.01)
        go.touch()
        said = [finish(proc)[0] for proc in procs]
        calls = sum(s["calls"] for s in said)
        if command == "along":  # each call's start and finish are in its goal's stream
            assert all(s["seq"] == 1 + 2 * s["calls"] for s in said)
        store = open_store(url)
        events = store.pool_events("team")
        store.close()
        state = project_pool(events)
        assert state.in_flight == {}
        excess = float(cost) - float(ask)
        in_flight, most = 0, 0
        for event in events:  # at every point, spent + reserved stays within the limit
            in_flight += {"pool.reserved": 1, "pool.settled": -1}.get(event.type, 0)
            most = max(most, in_flight)
            partial = project_pool(events[: event.seq])
            assert partial.spent["usd"] + partial.reserved("usd") <= 2.0 + excess * most + 1e-9
        assert calls == len([e for e in events if e.type == "pool.settled"])
        if excess == 0:
            assert calls == 20
            assert abs(state.spent["usd"] - 2.0) < 1e-9
        else:
            assert 2.0 - float(ask) < state.spent["usd"] <= 2.0 + excess * most + 1e-9
            assert most >= 1
