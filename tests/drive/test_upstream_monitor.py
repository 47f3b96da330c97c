"""The runner's view of shared upstream health (SPEC §11.10, §12.7, §12.9), with real
``command`` agents (small shell scripts) and a real SQLite store: a probe killed at its
timeout recorded as what it was, a vendor never reached judged by the record, and an
upstream named by the failure itself."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from governor.core.classify import SpawnResult, classify
from governor.core.event_fields import Profile
from governor.core.evidence import nothing_happened
from governor.core.policy import UpstreamBackoff
from governor.core.upstream import Seen, observed
from governor.drive.health import MonitorSettings, UpstreamMonitor
from governor.exec.harness import harness_for
from governor.store import open_store

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
BACKOFF = UpstreamBackoff(initial_s=30, factor=2, max_s=900)


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
        on_change=lambda kind, record: changes.append(kind),
    )
    yield watcher, now, changes
    store.close()


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_a_probe_killed_at_its_timeout_is_recorded_as_no_contact_not_as_refused(
    monitor, tmp_path: Path
) -> None:
    watcher, now, changes = monitor
    slow = script(tmp_path, "slow", "sleep 30\n")
    profile = Profile(harness="command", args=(slow,), probe=(slow,), timeout_s=0.5)
    upstream = watcher.upstream(profile)
    refused = Seen("refused", 503)
    watcher.store.change_upstream(
        upstream.name, lambda r: observed(r, upstream, refused, T0, BACKOFF)
    )
    now[0] = T0 + timedelta(seconds=31)  # the first probe is due
    after = watcher.probe(profile)
    assert after is not None
    assert (after.probes, after.refusals, after.last_status) == (1, 1, 503)
    assert not after.healthy
    assert changes == ["probe_unanswered"]


def failure_never_reached() -> SpawnResult:
    return classify(
        SpawnResult(
            ok=False,
            connection="unreachable",
            error="Reconnecting... waiting for network",
            evidence=nothing_happened("codex:jsonl", "waiting for network"),
        )
    )


def test_a_vendor_never_reached_is_environment_until_it_has_answered(
    monitor, tmp_path: Path
) -> None:
    watcher, _, _ = monitor
    profile = Profile(harness="command", args=(script(tmp_path, "a", "exit 0\n"),))
    first = watcher.observe(profile, failure_never_reached(), BACKOFF)
    assert (first.failure_class, first.rule, first.answered_before) == (
        "environment",
        "no-response",
        False,
    )
    assert first.endpoint == watcher.upstream(profile).endpoint
    [record] = watcher.store.upstreams()
    assert (record.healthy, record.answered) == (True, False)  # shown, never parked on
    watcher.observe(profile, SpawnResult(ok=True, reply="ok"), BACKOFF)
    again = watcher.observe(profile, failure_never_reached(), BACKOFF)
    assert (again.failure_class, again.answered_before) == ("upstream", True)
    [record] = watcher.store.upstreams()
    assert (record.healthy, record.answered) == (False, True)  # an outage: park and probe


def test_a_failure_that_names_its_upstream_is_counted_there_and_renames_the_profile(
    monitor, tmp_path: Path
) -> None:
    watcher, _, _ = monitor
    envelope = (
        '{"status":"failed","class":"upstream","vendor_status":503,"effects":"absent",'
        '"output":"absent","upstream":"openai-main"}'
    )
    agent = script(tmp_path, "agent", f"cat >/dev/null\necho '{envelope}'\nexit 1\n")
    profile = Profile(harness="command", args=(agent,))
    harness = watcher.wrap(harness_for(profile, tmp_path), profile, BACKOFF)
    result = harness.run("hi", profile, cwd=tmp_path, env={"PATH": os.environ["PATH"]})
    assert (result.failure_class, result.upstream) == ("upstream", "openai-main")
    assert [r.upstream for r in watcher.store.upstreams()] == ["openai-main"]
    assert watcher.upstream(profile).name == "openai-main"


def test_an_agent_is_named_by_its_whole_command_line_never_by_a_path(tmp_path: Path) -> None:
    from governor.exec.endpoints import upstream_of

    env: dict[str, str] = {}
    one = upstream_of(Profile(harness="command", args=("python3", "a.py")), env, tmp_path)
    two = upstream_of(Profile(harness="command", args=("python3", "b.py")), env, tmp_path)
    assert one.name != two.name
    assert one.name.startswith("command python3 a.py#")
    assert str(tmp_path) not in one.name
    declared = Profile(harness="command", args=("python3", "a.py"), upstream="openai-main")
    assert upstream_of(declared, env, tmp_path).name == "openai-main"
