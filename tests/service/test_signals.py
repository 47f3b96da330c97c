"""Stop signals (``governor.service.signals``): a stop is honoured wherever it lands.

Twice, on a loaded machine, a ``serve`` worker never stopped: SIGTERM had run the old
Python-level handler while the worker's main thread held the ``stopping`` event's own
lock (inside ``stopping.wait()`` of its idle loop), and the handler's ``Event.set()``
waited for that lock for ever — as did the heartbeat thread that later found the
supervisor gone. The first test puts the signal in that window on purpose, in a real
process; the second drives ``governor serve`` with worker processes through the stack
dump an operator asks for with SIGUSR1, then a graceful stop.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from tests.e2e.cli import Project

IN_THE_WINDOW = """
import signal, threading
from governor.service.signals import stop_signals

stopping = threading.Event()


def in_the_window() -> None:
    # The main thread holds the event's own lock, as it does for a moment inside every
    # stopping.wait(); a signal sent to this thread is seen by Python at the next
    # bytecode boundary, so the loop makes Python run the signal handler right here.
    with stopping._cond:
        signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
        for _ in range(10_000):
            pass


with stop_signals(stopping, at_once=lambda: print("at once", flush=True)):
    in_the_window()
    print("stopped" if stopping.wait(60) else "not stopped", flush=True)
    in_the_window()  # the second signal: at_once, then the process ends at once
    threading.Event().wait(60)
print("never ended", flush=True)
"""


def test_a_stop_signal_that_lands_while_the_main_thread_holds_the_events_lock_is_honoured(
    tmp_path: Path,
) -> None:
    # Before the fix the first signal deadlocked the process: run() would time out.
    done = subprocess.run(
        [sys.executable, "-c", IN_THE_WINDOW],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert (done.returncode, done.stdout) == (128 + signal.SIGTERM, "stopped\nat once\n")
    assert done.stderr == ""


def log_lines(path: Path) -> list[dict[str, object]]:
    try:
        return [orjson.loads(line) for line in path.read_bytes().splitlines()]
    except FileNotFoundError:
        return []


@pytest.mark.slow
def test_a_serve_worker_dumps_its_stacks_on_sigusr1_and_still_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    serve = project.popen(
        "serve", "--workers", "2", "--poll-s", "0.05", "--log-file", "service.jsonl"
    )
    try:
        deadline = time.monotonic() + 120
        while len(started := [e for e in log_lines(tmp_path / "service.jsonl")
                              if e["kind"] == "worker.started"]) < 2:  # fmt: skip
            assert serve.poll() is None, serve.communicate()
            assert time.monotonic() < deadline, "the workers never started"
            time.sleep(0.05)
        pid = started[0]["pid"]
        assert isinstance(pid, int)
        os.kill(pid, signal.SIGUSR1)  # delivered before the SIGTERM the supervisor forwards
        serve.send_signal(signal.SIGTERM)
        _, err = serve.communicate(timeout=120)
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait(timeout=30)
    assert serve.returncode == 0, err[-2000:]
    assert "most recent call first" in err  # the worker's threads, on the service's stderr
    assert "governor/service/worker.py" in err
    kinds = [e["kind"] for e in log_lines(tmp_path / "service.jsonl")]
    assert kinds.count("worker.stopped") == 2
