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
