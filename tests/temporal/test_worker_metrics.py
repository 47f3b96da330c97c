"""A Temporal worker's own metrics (issue 34, Build 6): ``governor temporal worker
--metrics-port`` serves the Temporal SDK's Prometheus metrics of the goals it hosts; a port
it cannot listen on is one line and exit 9."""

from __future__ import annotations

import socket
import time
import urllib.request

from tests.e2e.cli import MILESTONE_COMPLETE, done, plan, planner_script, worker_script
from tests.temporal.conftest import TemporalProject, free_port
from tests.temporal.test_verbs import scripted


def scrape(port: int, *, within_s: float = 120) -> str:
    """The metrics page, once the endpoint answers (a generous deadline)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as page:
                return str(page.read().decode())
        except OSError:
            assert time.monotonic() < deadline, "the worker's metrics endpoint never answered"
            time.sleep(0.2)


def test_a_worker_serves_the_sdks_metrics_of_the_goals_it_hosts(project: TemporalProject) -> None:
    scripts = [
        MILESTONE_COMPLETE,
        planner_script([{"reply": plan("a")}]),
        worker_script("a", [{"reply": done("a")}]),
    ]
    agents = scripted(project, scripts)
    assert project.gov("new", project.goal_file("m", agents, agents).name).returncode == 0
    port = free_port()
    project.worker("--metrics-port", str(port))
    assert project.gov("temporal", "start", "m").returncode == 0
    project.wait_status("m", {"succeeded"})
    deadline = time.monotonic() + 120
    while "temporal_workflow_completed" not in (page := scrape(port)):
        assert time.monotonic() < deadline, page[-2000:]
        time.sleep(0.5)
    namespace = f'namespace="{project.temporal.namespace}"'
    completed = [
        line
        for line in page.splitlines()
        if line.startswith("temporal_workflow_completed") and namespace in line
    ]
    assert completed, page[-2000:]
    assert any(line.startswith("temporal_activity_execution_latency") for line in page.splitlines())


def test_a_metrics_port_in_use_is_one_line_and_exit_9(project: TemporalProject) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        worker = project.worker("--metrics-port", str(port))
        assert worker.wait(timeout=120) == 9
    [log] = project.root.glob("worker-*.log")
    line = log.read_text().strip()
    assert "\n" not in line, line
    assert line.startswith(f"error: the metrics endpoint cannot listen on 127.0.0.1:{port}"), line
