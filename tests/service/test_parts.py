"""The service's parts, in one process: back-off, counters and log lines, metrics text,
the idle sleep, and the ``service status`` command."""

from __future__ import annotations

import platform
import threading
import urllib.request
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

import governor
from governor.cli.main import main
from governor.core import upstream as health
from governor.core.evidence import Evidence, Tries
from governor.core.policy import UpstreamBackoff
from governor.core.summary import GoalSummary
from governor.registry import ServiceError, WorkerBeat
from governor.service.backoff import GoalBackoff
from governor.service.logs import JsonLog
from governor.service.metrics import MetricsServer, MetricsSnapshot, render, write_text_atomically
from governor.service.observe import Counters, Observation, merge
from governor.service.settings import ErrorBackoff, ServiceSettings
from governor.service.worker import Worker
from governor.store.sqlite import SqliteEventStore
from tests.story import ABSENT, T0, Story

SECRET = "sk-live-abcdefghijklmnopqrstuvwx"


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("failures", "delay_s"),
    [(1, 1.0), (2, 2.0), (3, 4.0), (9, 256.0), (10, 300.0), (40, 300.0)],
    ids=["first failure", "second", "third", "ninth", "tenth: capped", "fortieth: capped"],
)
def test_the_error_backoff_doubles_per_failure_up_to_its_cap(failures: int, delay_s: float) -> None:
    assert ErrorBackoff(initial_s=1, factor=2, max_s=300).delay_s(failures) == delay_s


def test_a_goal_rests_after_an_error_and_is_forgotten_once_a_step_goes_through() -> None:
    clock = FakeMonotonic()
    backoff = GoalBackoff(ErrorBackoff(initial_s=0.5, factor=2, max_s=10), clock=clock)
    assert backoff.failed("g") == 0.5
    assert backoff.failed("g") == 1.0
    assert backoff.is_resting("g")
    assert not backoff.is_resting("other")
    assert backoff.next_end_s() == pytest.approx(1.0)
    clock.now += 1.0
    assert not backoff.is_resting("g")
    assert backoff.failures("g") == 2
    backoff.succeeded("g")
    assert backoff.failures("g") == 0
    assert backoff.next_end_s() is None


def observed(tmp_path: Path) -> tuple[Observation, Path]:
    path = tmp_path / "log.jsonl"
    return Observation(JsonLog(path, {"OPENAI_API_KEY": SECRET}, worker="w1"), Counters()), path


def test_a_finished_run_is_one_log_line_and_one_count_charged_by_the_gate(tmp_path) -> None:
    observation, path = observed(tmp_path)
    story = Story()
    story.plan("a")
    run = len(story.events)
    story.attempt("p1-a", failure_class="upstream", evidence=ABSENT, error=f"503 key={SECRET}")
    story.attempt("p1-a", "failed", error="tests failed")
    observation.appended(story.events)
    observation.log.close()

    counts = observation.counters.snapshot()["governor_attempts_total"]
    assert counts == {
        (("charged", "false"), ("class", "upstream"), ("outcome", "failed")): 1,
        (("charged", "true"), ("class", "none"), ("outcome", "failed")): 1,
    }
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    calls = [line for line in lines if line["kind"] == "agent_call"]
    assert [(c["role"], c["charged"]) for c in calls] == [
        ("planner", True),
        ("worker", False),
        ("worker", True),
    ]
    first = calls[1]
    assert (first["goal"], first["item"], first["attempt"], first["class"]) == (
        "g",
        "p1-a",
        1,
        "upstream",
    )
    assert first["rule"] == "test"
    assert first["duration_s"] == 1.0
    assert story.events[run].type == "attempt.started"
    assert SECRET not in path.read_text()
    assert "[REDACTED]" in first["error"]
    assert "tries" not in first  # one try: nothing to add


def test_the_log_line_of_a_run_carries_its_in_agent_tries(tmp_path) -> None:
    observation, path = observed(tmp_path)
    story = Story()
    story.plan("a")
    tries = Tries(count=2, classes=("upstream", "ok"), last_error=f"status 503 key={SECRET}")
    story.attempt("p1-a", "succeeded", evidence=Evidence(tries=tries))
    observation.appended(story.events)
    observation.log.close()
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    [worker] = [line for line in lines if line.get("role") == "worker"]
    assert worker["tries"] == {
        "count": 2,
        "classes": ["upstream", "ok"],
        "vendor_retries": [],
        "last_error": "status 503 key=[REDACTED]",
    }


def test_counters_of_several_workers_add_up() -> None:
    one, two = Counters(), Counters()
    one.add("governor_step_errors_total")
    two.add("governor_step_errors_total")
    two.add("governor_steps_total", node="plan")
    total = merge([one.snapshot(), two.snapshot()])
    assert total["governor_step_errors_total"] == {(): 2}
    assert total["governor_steps_total"] == {(("node", "plan"),): 1}


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition, read by prometheus_client's own parser."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_the_metrics_text_is_prometheus_exposition_with_every_family() -> None:
    counters = Counters()
    counters.add(
        "governor_planner_calls_total", outcome="failed", charged="false", **{"class": 'up"stream'}
    )
    text = render(MetricsSnapshot(counters.snapshot(), {"ready": 3}, 2, T0))
    assert "# TYPE governor_goals gauge" in text
    found = samples(text)
    assert found[("governor_goals", (("status", "ready"),))] == 3
    assert found[("governor_goals", (("status", "succeeded"),))] == 0
    assert found[("governor_workers", ())] == 2
    assert found[("governor_soonest_wakeup_timestamp_seconds", ())] == T0.timestamp()
    labels = (("charged", "false"), ("class", 'up"stream'), ("outcome", "failed"))
    assert found[("governor_planner_calls_total", labels)] == 1
    assert "# TYPE governor_lease_takeovers_total counter" in text
    assert found[("governor_lease_takeovers_total", ())] == 0
    assert (
        "governor_build_info",
        (("python", platform.python_version()), ("version", governor.__version__)),
    ) in found
    assert text.endswith("\n")


def test_the_metrics_show_each_upstream_its_outage_and_the_goals_parked_on_it() -> None:
    codex = health.Upstream("codex", "https://api.openai.com/v1", "gpt-5-codex")
    claude = health.Upstream("claude", "https://api.anthropic.com", "default")
    failing = health.observed(None, codex, health.Seen("refused", 503), T0, UpstreamBackoff())
    healthy = health.observed(None, claude, health.Seen("answered"), T0, UpstreamBackoff())
    assert failing is not None
    assert healthy is not None
    records = (replace(failing, parked=7), replace(healthy, parked=0))
    text = render(MetricsSnapshot({}, {"waiting": 7}, 1, None, records))
    found = samples(text)
    name = (("upstream", codex.name),)
    assert found[("governor_upstream_healthy", name)] == 0
    assert found[("governor_upstream_healthy", (("upstream", claude.name),))] == 1
    assert found[("governor_upstream_failing_since_timestamp_seconds", name)] == T0.timestamp()
    assert found[("governor_upstream_next_probe_timestamp_seconds", name)] == T0.timestamp() + 30
    assert found[("governor_upstream_parked_goals", name)] == 7
    assert "# TYPE governor_upstream_changes_total counter" in text


def test_the_metrics_file_is_replaced_whole_and_served_over_http(tmp_path: Path) -> None:
    target = tmp_path / "metrics.prom"
    write_text_atomically(target, "one\n")
    write_text_atomically(target, "two\n")
    assert target.read_text() == "two\n"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.prom"]
    server = MetricsServer("127.0.0.1", 0)
    try:
        server.exposition = lambda accept: (b"governor_workers 1\n", "text/plain; version=0.0.4")
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=5) as reply:
            assert reply.read() == b"governor_workers 1\n"
            assert reply.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    finally:
        server.close()


class RecordingEvent(threading.Event):
    """A stop flag whose waits return at once, remembering how long they would have slept."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout or 0.0)
        return self.is_set()


def waiting(goal_id: str, not_before_s: float) -> GoalSummary:
    from governor.clock import utc_now

    now = utc_now()
    return GoalSummary(
        goal_id, "t", 1, "waiting", "wait", "upstream", now + timedelta(seconds=not_before_s), now
    )


def test_an_idle_worker_sleeps_until_the_soonest_wakeup_or_a_backoff_or_poll_s(tmp_path) -> None:
    store = SqliteEventStore(tmp_path / "g.db")
    settings = ServiceSettings(
        workdir=tmp_path, poll_s=5.0, error_backoff=ErrorBackoff(initial_s=0.25)
    )
    stopping = RecordingEvent()
    worker = Worker(
        store, settings, Observation(JsonLog(tmp_path / "l", {}), Counters()), stopping=stopping
    )
    worker.idle()
    assert stopping.waits[-1] == 5.0  # nothing waits: poll_s
    story = Story("w")
    store.append("w", story.events, expected_seq=0, summary=waiting("w", 2.0))
    worker.idle()
    assert 1.5 < stopping.waits[-1] <= 2.0
    worker.backoff.failed("other")
    worker.idle()
    assert 0.1 < stopping.waits[-1] <= 0.25
    store.close()


def test_service_status_shows_workers_goals_the_soonest_wakeup_and_errors(tmp_path, capsys) -> None:
    from governor.clock import utc_now

    url = str(tmp_path / "g.db")
    now = utc_now()
    with SqliteEventStore(url) as store:
        store.append("w", Story("w").events, expected_seq=0, summary=waiting("w", 60))
        store.heartbeat(WorkerBeat("vm:1", "vm", 1, now, now, "w", now))
        store.heartbeat(WorkerBeat("vm:2", "vm", 2, now, now - timedelta(minutes=5)))
        store.add_service_error(ServiceError(now, "vm:1", "w", "StoreError: the disk is full"))
    assert main(["service", "status", "--store", url]) == 0
    text = capsys.readouterr().out
    assert "workers: 2" in text
    assert "stepping w" in text
    assert "STALE" in text
    assert "goals: 1 waiting" in text
    assert "soonest wake-up: 20" in text
    assert "goal w: StoreError: the disk is full" in text
    assert main(["service", "status", "--json", "--store", url]) == 0
    record = orjson.loads(capsys.readouterr().out)
    assert [w["stale"] for w in record["workers"]] == [False, True]
    assert record["goals"] == {"waiting": 1}
    assert record["due_now"] == 0
    assert record["errors"][0]["goal_id"] == "w"


def test_serve_refuses_a_memory_store_across_processes(capsys) -> None:
    assert main(["serve", "--workers", "2", "--store", "memory:"]) == 3
    assert "memory: store lives in one process" in capsys.readouterr().err


def test_the_log_goes_to_stderr_without_a_file(capsysbinary) -> None:
    log = JsonLog(None, {"TOKEN": SECRET})
    log.write("step.error", T0, goal="g", error=f"Bearer {SECRET}")
    log.close()
    line = orjson.loads(capsysbinary.readouterr().err)
    assert line == {
        "ts": "2026-01-01T00:00:00Z",
        "level": "error",
        "msg": "g: the step failed: Bearer [REDACTED]",
        "at": "2026-01-01T00:00:00Z",
        "kind": "step.error",
        "goal": "g",
        "error": "Bearer [REDACTED]",
    }


def test_the_service_api_is_pinned() -> None:
    import governor.service
    from governor.service.supervisor import serve

    assert sorted(governor.service.__all__) == [
        "ErrorBackoff",
        "ServiceSettings",
        "ServiceStatus",
        "serve",
        "service_status",
    ]
    assert governor.service.serve is serve
