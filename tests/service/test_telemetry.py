"""Telemetry that fits its ecosystem (issue 27 §4), against a real ``governor serve``:
``/metrics`` read by prometheus_client's own parsers (the Prometheus text format and
OpenMetrics), its histograms, build info and process metrics, upstream labels without
absolute paths, ``/healthz`` and ``/readyz`` on the same port; the JSON log lines carry
``ts``, ``level`` and ``msg`` and can be routed with ``--log-config``."""

from __future__ import annotations

import json
import platform
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families

import governor
from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script

DEADLINE_S = 120.0


def get(url: str, accept: str = "") -> tuple[int, str, str]:
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, reply.headers["Content-Type"], reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()


def wait_for(check: Any, what: str) -> Any:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    pytest.fail(f"never: {what}")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A goal whose worker fails once (charged), then succeeds."""
    project = Project(tmp_path)
    scripts = [
        planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
        worker_script(
            "a",
            [
                {"stderr": "the tests failed\n", "exit_code": 1},
                {"delay_s": 0.3, "reply": done("a")},
            ],
        ),
    ]
    agent = {"harness": "scripted", "args": [project.scenario("scenario.json", scripts)]}
    project.goal("g", agent, agent)
    return project


@pytest.fixture
def serving(project: Project) -> Iterator[tuple[subprocess.Popen[str], str]]:
    service = project.popen(
        "serve", "--workers", "2", "--poll-s", "0.2", "--lease-ttl", "3",
        "--metrics-port", "0", "--metrics-interval", "0.2", "--log-file", "service.jsonl",
    )  # fmt: skip
    log = project.root / "service.jsonl"

    def url() -> str | None:
        for line in log.read_text().splitlines() if log.exists() else []:
            record = json.loads(line)
            if record.get("kind") == "metrics.serving":
                return str(record["url"])
        return None

    try:
        yield service, wait_for(url, "serve logs where its metrics are served")
    finally:
        service.send_signal(signal.SIGTERM)
        service.communicate(timeout=120)


def samples(text: str) -> list[Any]:
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def test_metrics_are_prometheus_and_openmetrics_with_histograms_build_info_and_health(
    project: Project, serving: tuple[subprocess.Popen[str], str], tmp_path: Path
) -> None:
    _, base = serving
    assert get(base + "healthz")[:1] == (200,)

    def finished() -> str | None:
        code, kind, body = get(base + "metrics")
        counts = [
            s.value for s in samples(body) if s.name == "governor_agent_call_duration_seconds_count"
        ]
        return body if code == 200 and kind.startswith("text/plain") and sum(counts) >= 4 else None

    body = wait_for(finished, "four agent calls (plan, fail, succeed, complete) in the histogram")
    families = {f.name: f for f in text_string_to_metric_families(body)}
    calls = families["governor_agent_call_duration_seconds"]
    assert calls.type == "histogram"
    labels = {
        (s.labels["role"], s.labels["harness"], s.labels["class"], s.labels["charged"])
        for s in calls.samples
        if s.name.endswith("_count")
    }
    assert labels == {
        ("planner", "scripted", "none", "true"),
        ("worker", "scripted", "none", "true"),
    }
    worker = [
        s for s in calls.samples if s.name.endswith("_count") and s.labels["role"] == "worker"
    ]
    assert worker[0].value == 2  # the failed try and the good one
    assert families["governor_step_duration_seconds"].type == "histogram"
    nodes = {s.labels["node"] for s in families["governor_step_duration_seconds"].samples}
    assert {"plan", "apply", "dispatch"} <= nodes
    [build] = families["governor_build_info"].samples
    assert build.labels["version"] == governor.__version__
    assert build.labels["python"] == platform.python_version()
    names = {s.name for s in samples(body)}
    assert "process_cpu_seconds_total" in names
    assert "governor_attempts_total" in names
    upstreams = {s.labels["upstream"] for s in families["governor_upstream_healthy"].samples}
    assert upstreams == {"scripted scenario.json default"}
    assert str(tmp_path) not in body  # no absolute path reaches a label

    code, kind, text = get(base + "metrics", "application/openmetrics-text; version=1.0.0")
    assert code == 200
    assert kind.startswith("application/openmetrics-text")
    assert text.endswith("# EOF\n")
    parsed = {f.name: f.type for f in openmetrics_families(text)}
    assert parsed["governor_build"] == "info"
    assert parsed["governor_agent_call_duration_seconds"] == "histogram"
    assert parsed["governor_attempts"] == "counter"
    assert get(base + "readyz")[::2] == (200, "ready\n")
    assert get(base + "nothing")[0] == 404


def test_log_lines_carry_ts_level_msg_and_no_secret(
    project: Project, serving: tuple[subprocess.Popen[str], str]
) -> None:
    service, _ = serving
    wait_for(lambda: project.status("g")["status"] == "succeeded", "the goal succeeded")
    service.send_signal(signal.SIGTERM)
    assert service.wait(timeout=120) == 0
    lines = [
        orjson.loads(line) for line in (project.root / "service.jsonl").read_bytes().splitlines()
    ]
    assert all({"ts", "level", "msg", "kind"} <= set(line) for line in lines)
    failed = next(
        line for line in lines if line["kind"] == "agent_call" and line["outcome"] == "failed"
    )
    assert failed["level"] == "info"
    assert failed["msg"] == "g: worker run of p1-a finished: failed"
    stops = [line for line in lines if line["kind"] == "stop.requested"]
    assert stops
    assert all(line["level"] == "warning" for line in stops)


def test_log_config_routes_the_records(project: Project) -> None:
    config = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "governor.service.logs.JsonLinesFormatter"}},
        "handlers": {
            "file": {
                "class": "logging.FileHandler",
                "filename": "routed.jsonl",
                "formatter": "json",
            }
        },
        "loggers": {
            "governor.service": {"handlers": ["file"], "level": "INFO", "propagate": False}
        },
    }
    (project.root / "logging.json").write_text(json.dumps(config))
    service = project.popen("serve", "--poll-s", "0.2", "--log-config", "logging.json")
    try:
        wait_for(lambda: project.status("g")["status"] == "succeeded", "the goal succeeded")
    finally:
        service.send_signal(signal.SIGTERM)
        _, stderr = service.communicate(timeout=120)
    assert service.returncode == 0, stderr
    assert '"kind"' not in stderr  # the configuration routes them, not the default handler
    routed = [
        orjson.loads(line) for line in (project.root / "routed.jsonl").read_bytes().splitlines()
    ]
    kinds = {line["kind"] for line in routed}
    assert {"worker.started", "decision", "agent_call", "worker.stopped"} <= kinds
    assert all(line["level"] in ("info", "warning", "error") for line in routed)


def test_a_bad_log_config_is_one_line(project: Project) -> None:
    (project.root / "bad.json").write_text('{"version": 2}')
    result = project.gov("serve", "--log-config", "bad.json")
    assert result.returncode == 3
    assert result.stderr.strip().splitlines()[-1].startswith("error: --log-config bad.json:")
    missing = project.gov("serve", "--log-config", "nope.json")
    assert missing.returncode == 4
