"""Push (issue 35 §5): ``governor serve --notify-url`` tells a webhook exactly once when a
goal starts waiting on a person and once when it stops, for 20 goals, never more.

Real processes and sockets: ``governor serve --workers 2``, its worker processes, the
scripted agents, and a loopback HTTP receiver in the test that fails its first answer
(so the back-off is taken) and counts what arrives. The person answers through the
library, as the CLI would.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from contextlib import closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from governor.drive import goals
from governor.service.notify import masked_url
from governor.store import open_store
from tests.e2e.cli import COMPLETE, Project, done, plan, planner_script, worker_script
from tests.service.fleet import Kind, create_goals, reaped, stop

GOALS = 20
ASK = {"reply": {"status": "decision", "question": "Postgres or SQLite?"}}
ASKING = Kind(
    "asking",
    [planner_script([{"reply": plan("a")}, {"reply": COMPLETE}]),
     worker_script("a", [ASK, {"reply": done("a")}])],
)  # fmt: skip


class Receiver(ThreadingHTTPServer):
    """Counts the notices it is sent; refuses the very first one with a 503."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.notices: list[dict[str, Any]] = []
        self.refused = 0
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://user:s3cret@127.0.0.1:{self.server_address[1]}/hook?token=t0ps3cret"

    def counts(self) -> Counter[tuple[str, str]]:
        with self.lock:
            return Counter((n["goal_id"], n["event"]) for n in self.notices)

    def blocked(self) -> list[dict[str, Any]]:
        with self.lock:
            return [n for n in self.notices if n["event"] == "goal.waiting"]


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        body["authorization"] = self.headers.get("authorization")
        with self.server.lock:
            if self.server.refused == 0:
                self.server.refused += 1
                self.send_response(503)
                self.end_headers()
                return
            self.server.notices.append(body)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return


def _until(check: Any, what: str, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def _statuses(url: str, ids: list[str]) -> dict[str, str]:
    with closing(open_store(url)) as store:
        return {g.goal_id: g.status for g in store.goals() if g.goal_id in ids}


def test_each_wait_on_a_person_is_told_once_when_it_starts_and_once_when_it_ends(
    tmp_path: Path,
) -> None:
    receiver = Receiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    project = Project(tmp_path)
    url = project.env["GOVERNOR_STORE"]
    ids = create_goals(project, url, [(f"g{i:02d}", ASKING) for i in range(GOALS)])
    project.env["GOVERNOR_NOTIFY_URL"] = receiver.url  # kept out of the process list
    serve = project.popen(
        "serve", "--workers", "2", "--poll-s", "0.05", "--notify-poll", "0.2",
        "--log-file", "service.jsonl",
    )  # fmt: skip
    try:
        with reaped(serve):
            _until(lambda: set(_statuses(url, ids).values()) == {"blocked"}, "every goal asks")
            waiting = {(g, "goal.waiting") for g in ids}
            _until(lambda: set(receiver.counts()) == waiting, "a notice per goal that asks")
            with closing(open_store(url)) as store:
                for goal_id in ids:
                    goals.answer(store, goal_id, "SQLite", actor="operator:test")
            _until(lambda: set(_statuses(url, ids).values()) == {"succeeded"}, "all finish")
            every = waiting | {(g, "goal.unblocked") for g in ids}
            _until(lambda: set(receiver.counts()) == every, "a notice per goal answered")
            time.sleep(1.0)  # five more looks: nothing more may come
            assert stop(serve) == 0
    finally:
        receiver.shutdown()
    assert receiver.counts() == Counter(every)  # exactly one of each
    assert receiver.refused == 1  # the first delivery failed and was tried again
    first = receiver.notices[0]
    assert first.pop("authorization") == "Basic dXNlcjpzM2NyZXQ="  # user:s3cret
    assert set(first) == {
        "version", "event", "goal_id", "title", "status", "blocked_on", "reason", "rule", "at"
    }  # fmt: skip
    log = (tmp_path / "service.jsonl").read_text()
    assert "s3cret" not in log
    assert "t0ps3cret" not in log
    assert '"kind":"notify.retry"' in log


def test_a_url_is_logged_without_its_secrets() -> None:
    assert masked_url("https://u:pw@h.example/x?token=abc&v=1") == (
        "https://u:***@h.example/x?token=***&v=***"
    )
    assert masked_url("https://h.example/hooks/T000/B000") == "https://h.example/hooks/T000/B000"
