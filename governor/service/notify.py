"""Push: tell someone when a goal starts waiting on a person, and when it stops (issue 35 §5).

Rules (docs/operators.md, docs/decisions/0030-identity-and-notify.md):
    * A goal waits on a person when any of its blockers is a person's: the list's "needs a
      person" (``GoalSummary.attention`` 0, kept in the summary row). The notifier reads
      that set from the store every ``poll_s`` on a thread of ``serve``'s own process,
      and each goal that entered it is one ``goal.waiting`` notice, each that left it one
      ``goal.unblocked`` — whoever moved it (a worker, the CLI, the web page).
    * The set last told is kept in ``state_file``, so a restarted ``serve`` tells nobody
      twice, and tells of what changed while it was down. With no state file yet, every
      goal that waits at start is told once.
    * Notices are delivered from a queue by a second thread — never on a worker's path,
      so a slow or dead receiver never holds a goal: a webhook (``POST`` of the JSON
      payload) and/or a command (the payload on its stdin, an argument list, no shell),
      each retried with back-off (``initial_s`` doubling to ``max_s``, ``tries`` in all)
      and then logged as ``notify.failed``. A 2xx answer or exit status 0 is delivered.
    * URLs are logged with their password and query values masked: a webhook's secret
      token never reaches a log line.
    * A goal that starts and stops waiting between two looks is not told (nobody could
      have acted on it); the look is every ``poll_s`` (default 2 s).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from governor.clock import utc_now
from governor.core.summary import GoalSummary
from governor.core.text import stamp
from governor.service.logs import JsonLog
from governor.store.base import EventStore

PAYLOAD_VERSION: Final = 1
"""The payload's ``version``: fields are only ever added."""
PAGE: Final = 500
"""Summaries read per query while listing the goals that wait on a person."""


@dataclass(frozen=True, slots=True)
class NotifySettings:
    """Where notices go and how hard to try (``serve --notify-url/--notify-command``)."""

    url: str | None = None
    """A webhook: the payload is POSTed to it as JSON."""
    command: tuple[str, ...] = ()
    """A command: run with the payload on stdin (an argument list; no shell)."""
    state_file: Path | None = None
    """Where the set last told is kept (None: ``.governor/notified.json`` in the workdir)."""
    poll_s: float = 2.0
    """How often the store is looked at, in seconds (default 2)."""
    tries: int = 6
    """Deliveries tried per notice and receiver before it is logged as failed (default 6)."""
    initial_s: float = 1.0
    """The pause after a first failed delivery; doubles per failure (default 1 s)."""
    max_s: float = 60.0
    """The longest pause between deliveries (default 60 s)."""
    timeout_s: float = 10.0
    """How long one delivery may take (default 10 s)."""

    @property
    def wanted(self) -> bool:
        return self.url is not None or bool(self.command)


def masked_url(url: str) -> str:
    """``url`` with its password and every query value replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "***"
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        name = user.split(":", 1)[0]
        netloc = f"{name}:***@{host}" if ":" in user else f"{name}@{host}"
    query = "&".join(
        f"{pair.split('=', 1)[0]}=***" if "=" in pair else "***"
        for pair in parts.query.split("&")
        if pair
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def payload(event: str, row: GoalSummary, at: datetime) -> dict[str, Any]:
    """The JSON a receiver gets (docs/operators.md)."""
    return {
        "version": PAYLOAD_VERSION,
        "event": event,
        "goal_id": row.goal_id,
        "title": row.title,
        "status": row.status,
        "blocked_on": row.blocked_on,
        "reason": row.reason,
        "rule": row.rule,
        "at": stamp(at),
    }


class Notifier:
    """Watches who waits on a person and delivers each change once (module rules)."""

    def __init__(
        self,
        open_store: Callable[[], EventStore],
        settings: NotifySettings,
        log: JsonLog,
        *,
        workdir: Path,
        env: Mapping[str, str],
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.open_store, self.settings, self.log, self.clock = open_store, settings, log, clock
        self.env = {k: v for k, v in env.items() if k in ("PATH", "HOME", "LANG", "TZ")}
        self.state = settings.state_file or workdir / ".governor" / "notified.json"
        self.notices: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._watch, daemon=True, name="notify-watch"),
            threading.Thread(target=self._deliver_all, daemon=True, name="notify-send"),
        ]

    def start(self) -> None:
        where = [masked_url(self.settings.url)] if self.settings.url else []
        where += [self.settings.command[0]] if self.settings.command else []
        self.log.write("notify.started", self.clock(), to=", ".join(where), state=str(self.state))
        for thread in self._threads:
            thread.start()

    def close(self, timeout_s: float = 5.0) -> None:
        """Stop looking; deliver what is queued for at most ``timeout_s``."""
        self._stop.set()
        self.notices.put(None)
        for thread in self._threads:
            thread.join(timeout_s)

    # ------------------------------------------------------------ watching

    def _watch(self) -> None:
        told = self._told()
        try:
            store = self.open_store()
        except Exception as exc:
            self.log.write("notify.error", self.clock(), error=f"{type(exc).__name__}: {exc}")
            return
        try:
            while True:
                told = self.look(store, told)
                if self._stop.wait(self.settings.poll_s):
                    return
        finally:
            store.close()

    def look(self, store: EventStore, told: dict[str, GoalSummary]) -> dict[str, GoalSummary]:
        """One look: queue a notice per change since ``told``; the set told after it."""
        try:
            now_waiting = {s.goal_id: s for s in _waiting(store)}
        except Exception as exc:
            self.log.write("notify.error", self.clock(), error=f"{type(exc).__name__}: {exc}")
            return told
        at = self.clock()
        for goal_id in sorted(now_waiting.keys() - told.keys()):
            self.notices.put(payload("goal.waiting", now_waiting[goal_id], at))
        for goal_id in sorted(told.keys() - now_waiting.keys()):
            self.notices.put(payload("goal.unblocked", told[goal_id], at))
        if now_waiting.keys() != told.keys():
            self._keep(now_waiting)
        return now_waiting

    def _told(self) -> dict[str, GoalSummary]:
        """The set last told (from ``state_file``); empty when there is none yet."""
        try:
            kept = json.loads(self.state.read_text())
            rows = kept["waiting"]
        except (OSError, ValueError, KeyError, TypeError):
            return {}
        return {
            r["goal_id"]: GoalSummary(
                r["goal_id"], r.get("title", ""), 0, r.get("status", "blocked"), "none",
                r.get("blocked_on"), None, self.clock(), r.get("rule"), r.get("reason"),
            )
            for r in rows
            if isinstance(r, dict) and isinstance(r.get("goal_id"), str)
        }  # fmt: skip

    def _keep(self, waiting: dict[str, GoalSummary]) -> None:
        rows = [
            {"goal_id": s.goal_id, "title": s.title, "status": s.status,
             "blocked_on": s.blocked_on, "rule": s.rule, "reason": s.reason}
            for s in waiting.values()
        ]  # fmt: skip
        try:
            self.state.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(dir=self.state.parent, prefix=".notified-")
            with os.fdopen(fd, "w") as file:
                json.dump({"version": PAYLOAD_VERSION, "waiting": rows}, file)
            Path(name).replace(self.state)
        except OSError as exc:
            self.log.write("notify.error", self.clock(), error=f"{type(exc).__name__}: {exc}")

    # ------------------------------------------------------------ delivering

    def _deliver_all(self) -> None:
        while (notice := self.notices.get()) is not None:
            body = json.dumps(notice).encode()
            if self.settings.url:
                self._deliver(notice, "webhook", partial(self._post, body))
            if self.settings.command:
                self._deliver(notice, "command", partial(self._run, body))

    def _deliver(self, notice: dict[str, Any], to: str, send: Callable[[], str | None]) -> None:
        """Try ``send`` (None: delivered, else why not) with back-off, then give up."""
        pause = self.settings.initial_s
        for attempt in range(1, self.settings.tries + 1):
            problem = send()
            if problem is None:
                self.log.write(
                    "notify.sent", self.clock(), goal=notice["goal_id"], notice=notice["event"],
                    to=to, attempt=attempt,
                )  # fmt: skip
                return
            last = self.tries_left(attempt)
            self.log.write(
                "notify.failed" if last else "notify.retry", self.clock(),
                goal=notice["goal_id"], notice=notice["event"], to=to, attempt=attempt,
                error=problem, retry_in_s=None if last else round(pause, 3),
            )  # fmt: skip
            if last:
                return
            time.sleep(pause)
            pause = min(pause * 2, self.settings.max_s)

    def tries_left(self, attempt: int) -> bool:
        """Whether ``attempt`` was the last try."""
        return attempt >= self.settings.tries

    def _post(self, body: bytes) -> str | None:
        import urllib.error  # noqa: PLC0415 - only a serve that notifies needs them
        import urllib.request  # noqa: PLC0415 - as above

        assert self.settings.url is not None
        target, auth = _without_user(self.settings.url)
        headers = {"content-type": "application/json", "user-agent": "governor-notify"}
        request = urllib.request.Request(  # noqa: S310 - the operator's own webhook URL
            target, data=body, headers=headers | auth, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.settings.timeout_s) as reply:  # noqa: S310 - as above
                return None if 200 <= reply.status < 300 else f"HTTP {reply.status}"
        except urllib.error.HTTPError as exc:
            return f"HTTP {exc.code}"
        except (OSError, ValueError) as exc:
            return masked_url(self.settings.url) + f": {type(exc).__name__}"

    def _run(self, body: bytes) -> str | None:
        try:
            done = subprocess.run(  # noqa: S603 - an argument list the operator gave
                self.settings.command,
                input=body,
                capture_output=True,
                timeout=self.settings.timeout_s,
                env=self.env,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{type(exc).__name__}"
        return None if done.returncode == 0 else f"exit status {done.returncode}"


def _without_user(url: str) -> tuple[str, dict[str, str]]:
    """The URL without its ``user:password@``, and those as a Basic authorization header."""
    import base64  # noqa: PLC0415 - only a serve that notifies needs it
    from urllib.parse import unquote  # noqa: PLC0415 - as above

    parts = urlsplit(url)
    if parts.username is None:
        return url, {}
    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
    host = parts.netloc.rpartition("@")[2]
    bare = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return bare, {"authorization": "Basic " + base64.b64encode(pair).decode()}


def _waiting(store: EventStore) -> list[GoalSummary]:
    """Every goal that waits on a person, page by page."""
    found: list[GoalSummary] = []
    while True:
        page = store.goals(needs_person=True, offset=len(found), limit=PAGE)
        found += page
        if len(page) < PAGE:
            return found
