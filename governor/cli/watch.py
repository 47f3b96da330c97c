"""``run`` and ``status`` as a person sees them: live calls while a run drives, ``--watch``.

Rules (issue 27, ``governor.cli.live``):
    * ``governor run``: progress lines on stderr, and under them one live row per agent
      call in flight (item, attempt, elapsed, the agent's last line) on a terminal, or a
      heartbeat line after 30 s of silence elsewhere.
    * ``--watch`` follows a goal another driver runs (``governor.drive.watch``): its
      events as ``run`` would print them, its calls in flight, who drives it, until it
      stops; then the status block (or ``--json``). Ctrl-C stops watching (exit 130):
      the goal goes on.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from governor.cli.exit_codes import STATUS_CODES, ExitCode
from governor.cli.io import err, json_line, out, stamped, store_from
from governor.cli.live import Screen, screen
from governor.clock import utc_now
from governor.drive.calls import Calls, RunningCall
from governor.render import records
from governor.render.progress import format_event_line, format_heartbeat, format_running
from governor.render.text import format_decision, format_status

if TYPE_CHECKING:
    from governor.core.events import Event


def _rows(calls: Callable[[], list[RunningCall]]) -> Callable[[], list[str]]:
    return lambda: [format_running(call) for call in calls()]


def _beat(calls: Callable[[], list[RunningCall]]) -> Callable[[], str | None]:
    def beat() -> str | None:
        text = format_heartbeat(calls())
        return stamped(text) if text else None

    return beat


@contextmanager
def live_run(quiet: bool) -> Iterator[tuple[Callable[[str], None] | None, Calls]]:
    """The progress callback and the calls of a ``run`` (live rows or heartbeats)."""
    calls = Calls()
    if quiet:
        yield None, calls
        return
    with screen(_rows(calls.snapshot), _beat(calls.snapshot)) as shown:
        yield (lambda message: shown.line(stamped(message))), calls


class _Follower:
    """What a watch shows: the calls of the last look, aged since."""

    def __init__(self) -> None:
        self.calls: list[RunningCall] = []
        self.looked = time.monotonic()
        self.holder: str | None = ""

    def now(self) -> list[RunningCall]:
        """The calls in flight, aged since the last look; their output is the driver's to
        show, so the row names the driver instead."""
        aged = time.monotonic() - self.looked
        by = f"(run by {self.holder})" if self.holder else ""
        return [
            dataclasses.replace(c, elapsed_s=c.elapsed_s + aged, last_line=by) for c in self.calls
        ]

    def driver(self, holder: str | None, shown: Screen) -> None:
        if holder != self.holder:
            shown.line(
                stamped(f"driven by {holder}" if holder else "nobody drives it now (no lease)")
            )
            self.holder = holder


def watch(args: argparse.Namespace, *, as_run: bool) -> int:
    """Follow the goal until it stops; its final status, and the exit code ``run``'s
    (``as_run``) or ``status``'s (0)."""
    from governor.drive.watch import follow, running_calls  # noqa: PLC0415 - start-up

    follower, look = _Follower(), None
    with store_from(args.store, read_only=True) as store:
        with screen(_rows(follower.now), _beat(follower.now)) as shown:
            try:
                for index, look in enumerate(follow(store, args.goal)):
                    if index == 0:
                        head = f"following {args.goal}: {format_decision(look.decision)}"
                        shown.line(stamped(head))
                    _show(look.events if index else [], shown)
                    follower.calls = running_calls(look.view, utc_now())
                    follower.looked = time.monotonic()
                    if not look.ended:
                        follower.driver(look.holder, shown)
            except KeyboardInterrupt:
                look = None
        if look is None:
            err(f"stopped watching {args.goal}; the goal goes on (governor status {args.goal})")
            return ExitCode.INTERRUPTED
    decision, view = look.decision, look.view
    if args.json:
        json_line(records.run_record(args.goal, "stopped", decision))
    else:
        title = view.created.title if view.created else ""
        out(format_status(args.goal, title, decision), colour=True)
    return STATUS_CODES.get(decision.status, ExitCode.OK) if as_run else ExitCode.OK


def _show(events: list[Event], shown: Screen) -> None:
    for event in events:
        line = format_event_line(event)
        if line:
            shown.line(stamped(line))
