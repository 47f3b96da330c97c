"""The runner's view of accounts' usage windows (SPEC §13.2), with a real ``command`` agent
and a real SQLite store: a refusal naming its account and reset shuts the account's record,
every profile under that account is given it (probe or not), the upstream itself learns an
answer, and the record reopens by itself at the reset."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from governor.core.accounts import JITTER_MAX_S, window_jitter_s
from governor.core.event_fields import Profile
from governor.core.policy import UpstreamBackoff
from governor.core.view import Parked
from governor.drive.health import MonitorSettings, UpstreamMonitor
from governor.exec.harness import harness_for
from governor.store import open_store

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
BACKOFF = UpstreamBackoff(initial_s=30, factor=2, max_s=900)
RESET = T0 + timedelta(hours=1)
REFUSAL = (
    '{"status": "failed", "class": "upstream", "vendor_status": 429, '
    '"code": "usage_limit_reached", "account": "acct-a", '
    f'"resets_at": "{RESET.isoformat()}", "effects": "absent", "output": "absent"}}'
)


@pytest.fixture
def monitor(tmp_path: Path):
    store = open_store(f"sqlite:///{tmp_path / 'governor.db'}")
    now = [T0]
    changes: list[str] = []
    settings = MonitorSettings(tmp_path, {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, "w1")
    watcher = UpstreamMonitor(
        store,
        settings,
        clock=lambda: now[0],
        harnesses=harness_for,
        on_change=lambda kind, record: changes.append(f"{kind} {record.upstream}"),
        jitter=lambda: 0.5,
    )
    yield watcher, now, changes
    store.close()


def agent(tmp_path: Path, name: str, line: str, status: int) -> tuple[str, ...]:
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\ncat >/dev/null\necho '{line}'\nexit {status}\n")
    path.chmod(0o755)
    return (str(path),)


def call(watcher: UpstreamMonitor, profile: Profile, tmp_path: Path) -> None:
    harness = watcher.wrap(harness_for(profile, tmp_path), profile, BACKOFF)
    harness.run("role: worker\n", profile, cwd=tmp_path, env=watcher.settings.env)


def test_a_refusal_naming_its_account_shuts_every_profile_of_that_account(
    monitor, tmp_path: Path
) -> None:
    watcher, now, changes = monitor
    refused = Profile(harness="command", args=agent(tmp_path, "a", REFUSAL, 1))
    sibling = Profile(harness="command", args=agent(tmp_path, "b", "{}", 0), account="acct-a")
    other = Profile(harness="command", args=agent(tmp_path, "c", "{}", 0), account="acct-b")
    call(watcher, refused, tmp_path)

    health = watcher.health({"refused": refused, "sibling": sibling, "other": other})
    assert set(health) == {"refused", "sibling"}  # no probe needed; acct-b is not spent
    window = health["sibling"]
    assert (window.upstream, window.is_account, window.healthy) == ("account acct-a", True, False)
    reopens = RESET + timedelta(seconds=window_jitter_s(3600, 0.5))
    assert window.next_probe_at == reopens
    assert watcher.is_failing(sibling)
    assert not watcher.is_failing(other)
    # the vendor answered the refused call: its upstream is not failing
    upstream = watcher.upstream(refused).name
    assert watcher.store.upstream_health([upstream])[upstream].healthy
    assert changes == ["down account acct-a"]

    now[0] = reopens - timedelta(seconds=1)
    assert not watcher.health({"sibling": sibling})["sibling"].healthy
    now[0] = reopens
    back = watcher.health({"sibling": sibling})
    assert back == {}  # reopened: nothing holds the profile any more
    assert changes == ["down account acct-a", "up account acct-a"]
    [record] = [r for r in watcher.store.upstreams() if r.is_account]
    assert (record.healthy, record.recovered_by) == (True, "reset")


def test_a_goal_parked_on_an_account_keeps_it_across_runners(monitor, tmp_path: Path) -> None:
    watcher, now, _ = monitor
    refused = Profile(harness="command", args=agent(tmp_path, "a", REFUSAL, 1))
    call(watcher, refused, tmp_path)
    fresh = UpstreamMonitor(
        watcher.store, watcher.settings, clock=lambda: now[0], harnesses=harness_for
    )
    parked = Parked("account acct-a", "worker", T0, RESET, T0)
    assert fresh.health({"worker": refused}) == {}  # a new runner never saw the call
    held = fresh.health({"worker": refused}, parked)
    assert held["worker"].upstream == "account acct-a"
    now[0] = RESET + timedelta(minutes=5)
    resumed = fresh.health({"worker": refused}, parked)
    assert resumed["worker"].healthy  # the record it is parked on, reopened: resume


@pytest.mark.parametrize(
    ("wait_s", "draw", "jitter"),
    [
        (3600, 0.0, 0.0),
        (600, 0.999, 600 * 0.05 * 0.999),
        (100_000, 1.0, JITTER_MAX_S),
        (-5, 0.5, 0.0),
    ],
)
def test_the_jitter_is_small(wait_s: float, draw: float, jitter: float) -> None:
    assert window_jitter_s(wait_s, draw) == pytest.approx(jitter)
