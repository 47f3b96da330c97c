"""``serve --log-file`` (issue 35): it used to print nothing at all on the terminal, and its
log had no line of the service's own start and stop (only each worker's)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import orjson

from tests.hardening.run import GOVERNOR


def _kinds(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [orjson.loads(line)["kind"] for line in log.read_text().splitlines() if line]


def test_serve_with_a_log_file_says_where_and_logs_its_start_and_stop(tmp_path: Path) -> None:
    log = tmp_path / "service.jsonl"
    serve = subprocess.Popen(
        [GOVERNOR, "--store", str(tmp_path / "s.db"), "serve", "--log-file", str(log)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    try:
        deadline = time.monotonic() + 60
        while "worker.started" not in _kinds(log):
            assert time.monotonic() < deadline, "the worker never started"
            time.sleep(0.1)
        serve.send_signal(signal.SIGTERM)
        _, stderr = serve.communicate(timeout=120)
    finally:
        if serve.poll() is None:
            serve.kill()
    assert serve.returncode == 0, stderr
    assert f"serving with 1 worker(s); log lines go to {log}" in stderr
    assert f"stopped (exit 0); the log is {log}" in stderr
    kinds = _kinds(log)
    assert kinds[0] == "service.started"
    assert kinds[-1] == "service.stopped"
    assert kinds.index("worker.stopped") < kinds.index("service.stopped")
