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
from contextlib import closing
from pathlib import Path
from typing import Any

import orjson
import pytest

from governor.store import open_store
from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script
from tests.service.fleet import Kind, create_goals, mid_run

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


def log_lines(path: Path) -> list[dict[str, Any]]:
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


LONG = Kind(
    "long",
    [
        planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
        worker_script("a", [{"delay_s": 600, "effects": True, "reply": done("a")}]),
    ],
)
"""One item whose agent runs for ten minutes: a step in hand the first signal waits for."""


def alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


@pytest.mark.slow
def test_a_second_sigterm_ends_serve_and_its_workers_at_once_mid_step(tmp_path: Path) -> None:
    project = Project(tmp_path)
    url = project.env["GOVERNOR_STORE"]
    create_goals(project, url, [("long", LONG)])
    log = tmp_path / "service.jsonl"
    serve = project.popen("serve", "--workers", "2", "--poll-s", "0.05", "--log-file", log.name)
    try:
        with closing(open_store(url)) as store:
            holder, _ = mid_run(store, ["long"], timeout_s=120)  # its agent sleeps for ten minutes
        deadline = time.monotonic() + 120
        # both workers past their start (a worker still importing when the stop comes dies
        # of it, as it should, and logs nothing): each logs the signal it is relayed
        while sum(e["kind"] == "worker.started" for e in log_lines(log)) < 2:
            assert time.monotonic() < deadline, log_lines(log)
            time.sleep(0.05)
        serve.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 120
        while sum(e["kind"] == "stop.requested" for e in log_lines(log)) < 3:
            assert time.monotonic() < deadline, log_lines(log)  # serve's, then each worker's
            time.sleep(0.05)
        assert serve.poll() is None  # the step in hand goes on
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=120)
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait(timeout=30)
    assert serve.returncode == 128 + signal.SIGTERM
    pids = [e["pid"] for e in log_lines(log) if e["kind"] == "worker.started"]
    assert holder in pids
    deadline = time.monotonic() + 60
    while any(alive(pid) for pid in pids):  # killed with serve, not left to finish the step
        assert time.monotonic() < deadline, [pid for pid in pids if alive(pid)]
        time.sleep(0.05)
    requests = [(e["worker"].split(":")[0], e["at_once"]) for e in log_lines(log)
                if e["kind"] == "stop.requested"]  # fmt: skip
    assert requests.count(("supervisor", False)) == 1
    assert requests.count(("supervisor", True)) == 1
