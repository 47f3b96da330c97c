"""The runner's call threads (``governor.drive.threads``): side by side, kept, closed."""

from __future__ import annotations

import contextvars
import threading
import time

import pytest

from governor.drive.threads import CallThreads

DEADLINE_S = 30.0
WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


def _named(prefix: str) -> set[str]:
    return {t.name for t in threading.enumerate() if t.name.startswith(prefix)}


def test_every_call_handed_over_runs_at_once_side_by_side() -> None:
    threads = CallThreads("side")
    together = threading.Barrier(4, timeout=DEADLINE_S)  # breaks if any call were queued
    futures = [threads.submit(together.wait) for _ in range(4)]
    assert sorted(f.result(DEADLINE_S) for f in futures) == [0, 1, 2, 3]
    assert threads.started == 4
    threads.close()


def test_a_thread_whose_call_ended_runs_the_next_dispatch() -> None:
    threads = CallThreads("kept")
    for width in (3, 2, 3, 1):
        together = threading.Barrier(width, timeout=DEADLINE_S)
        futures = [threads.submit(together.wait) for _ in range(width)]
        for f in futures:
            f.result(DEADLINE_S)
    assert threads.started == 3
    threads.close()


def test_wider_dispatch_starts_only_the_threads_missing() -> None:
    threads = CallThreads("wider")
    threads.submit(lambda: None).result(DEADLINE_S)
    together = threading.Barrier(3, timeout=DEADLINE_S)
    for f in [threads.submit(together.wait) for _ in range(3)]:
        f.result(DEADLINE_S)
    assert threads.started == 3
    threads.close()


def test_an_exception_reaches_the_caller_and_the_thread_is_kept() -> None:
    threads = CallThreads("raises")

    def boom() -> None:
        raise ValueError("the call failed")

    with pytest.raises(ValueError, match="the call failed"):
        threads.submit(boom).result(DEADLINE_S)
    assert threads.submit(lambda: 7).result(DEADLINE_S) == 7
    assert threads.started == 1
    threads.close()


def test_a_call_runs_in_a_copy_of_the_callers_context() -> None:
    threads = CallThreads("context")
    token = WHO.set("the runner")
    try:
        assert threads.submit(WHO.get).result(DEADLINE_S) == "the runner"
    finally:
        WHO.reset(token)
    assert threads.submit(WHO.get).result(DEADLINE_S) == "nobody"
    threads.close()


def test_close_ends_the_idle_threads_and_a_later_call_starts_one_again() -> None:
    threads = CallThreads("closing")
    together = threading.Barrier(2, timeout=DEADLINE_S)
    for f in [threads.submit(together.wait) for _ in range(2)]:
        f.result(DEADLINE_S)
    assert len(_named("closing-")) == 2
    threads.close()
    deadline = time.monotonic() + DEADLINE_S
    while _named("closing-") and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _named("closing-")
    assert threads.submit(lambda: "again").result(DEADLINE_S) == "again"
    assert _named("closing-") == {"closing-3"}
    threads.close()
