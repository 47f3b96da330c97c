"""``governor run`` on SIGTERM (issue 35): it used to exit 143 silently and keep its lease
until it expired (60 s), so an immediate rerun was refused (exit 6). Now it gives the lease
back on the way out, says so on stderr, and ends its agents as on any exit."""

from __future__ import annotations

import signal
from pathlib import Path

from governor.cli.exit_codes import ExitCode
from tests.e2e.cli import Project
from tests.e2e.workers import all_dead, install, kill_all, lease_free, processes, wait_for_ticks


def test_sigterm_releases_the_lease_and_says_so(tmp_path: Path) -> None:
    project = Project(tmp_path)
    agents = install(project, ticks=100_000)  # the planner works until it is killed
    project.goal("g", agents, agents)
    runner = project.popen("run", "g", "--quiet", "--lease-ttl", "600")
    try:
        wait_for_ticks(project, 1)
        pids = processes(project)
        runner.send_signal(signal.SIGTERM)
        _, stderr = runner.communicate(timeout=120)
        assert runner.returncode == ExitCode.TERMINATED, stderr
        assert "terminated (SIGTERM): the lease on g is released" in stderr
        assert "Traceback" not in stderr
        assert lease_free(project, "g")  # not in 600 s: now
        assert all_dead(pids) == [], "agent processes outlived their runner"
    finally:
        if runner.poll() is None:
            runner.kill()
        kill_all(processes(project))
