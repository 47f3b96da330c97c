"""The threads a runner runs its agent calls on, kept from one dispatch to the next.

Rules:
    * Every call handed over starts at once: an idle thread takes it, or a new one is
      started for it (a dispatch of n items runs n calls side by side, never queued).
    * A thread that finished its call waits for the next one instead of ending, so a goal
      of many items starts a thread per call only while its dispatches grow wider
      (issue 36: a thread pool made and joined per dispatch cost ~0.5 ms a call).
    * Each call runs in a copy of the caller's context (``governor.exec.call.in_context``);
      its result or exception is its ``Future``'s, never lost.
    * ``close`` ends the idle threads (a call running is let finish, then waits idle); a
      call handed over after it starts a thread again. The threads are daemons: a process that exits does
      not wait on an idle one.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

from governor.exec.call import in_context

T = TypeVar("T")

_Job = Callable[[Callable[[], None]], None] | None
"""A call bound to its future, given what makes its thread idle again; None ends the thread."""


class CallThreads:
    """Threads that run calls and are kept for the next ones (the module rules)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue[_Job]] = []
        self._started = 0

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Run ``fn()`` on a thread now, in a copy of the caller's context."""
        future: Future[T] = Future()
        call = in_context(fn)

        def job(idle: Callable[[], None]) -> None:
            if not future.set_running_or_notify_cancel():
                idle()
                return
            try:
                result = call()
            except BaseException as exc:
                idle()  # before the caller learns of it: its next call reuses this thread
                future.set_exception(exc)
            else:
                idle()
                future.set_result(result)

        with self._lock:
            inbox = self._idle.pop() if self._idle else None
            if inbox is None:
                inbox = queue.SimpleQueue()
                self._started += 1
                threading.Thread(
                    target=self._serve,
                    args=(inbox,),
                    daemon=True,
                    name=f"{self._name}-{self._started}",
                ).start()
        inbox.put(job)
        return future

    @property
    def started(self) -> int:
        """How many threads were started so far (each is reused after its call)."""
        return self._started

    def close(self) -> None:
        """End the idle threads; one still running a call goes idle after it."""
        with self._lock:
            idle, self._idle = self._idle, []
        for inbox in idle:
            inbox.put(None)

    def _serve(self, inbox: queue.SimpleQueue[_Job]) -> None:
        def idle() -> None:
            with self._lock:
                self._idle.append(inbox)

        while (job := inbox.get()) is not None:
            job(idle)
            del job  # hold no call (nor its result) while idle
