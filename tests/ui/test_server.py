"""``governor ui`` over HTTP, as a real process: read only, strict headers, clear errors."""

from __future__ import annotations

import hashlib
import http.client
import io
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from governor.store import export_history
from governor.store.sqlite import SqliteEventStore
from tests.ui.fleet import EXPECTED, Fleet
from tests.ui.serve import GOVERNOR, Server, start_ui

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND")
PATHS = (
    "/",
    "/?status=blocked",
    "/?status=ready&page=2",
    "/?page=999",
    "/goals/g-succeeded",
    "/goals/g-blocked-decision",
    "/goals/no-such-goal",
    "/goals/",
    "/static/ui.css",
    "/static/ui.js",
    "/static/favicon.svg",
    "/static/nothing.css",
    "/api/goals",
    "/goals/g-ready/cancel",
    "/goals/g-ready/act",
    "/?token=a-guess",
    "/?needs=person&q=g-",
)


HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=", re.IGNORECASE)
"""An event-handler attribute inside a real tag."""


def request(
    server: Server, method: str, path: str, *, body: bytes | None = None, host: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    where = urlsplit(server.url)
    conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=30)
    headers = {"Host": host} if host else {}
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def snapshot(db: Path) -> tuple[str, str]:
    """The database file's bytes, and every goal's history and summary, as digests."""
    raw = hashlib.sha256(db.read_bytes()).hexdigest()
    logical = io.BytesIO(repr(SqliteEventStore(db, read_only=True).goals()).encode())
    with SqliteEventStore(db, read_only=True) as store:
        for summary in store.goals():
            export_history(store, summary.goal_id, logical)
    return raw, hashlib.sha256(logical.getvalue()).hexdigest()


def test_every_route_answers_only_get_and_head_and_the_store_never_changes(
    fleet: Fleet, ui: Server
) -> None:
    files = [fleet.db, *fleet.db.parent.glob("governor.db-*")]  # the WAL and its index too
    touched = {path: path.stat().st_mtime_ns for path in files}
    before = snapshot(fleet.db)
    for path in PATHS:
        get, _, _ = request(ui, "GET", path)
        assert get in (200, 404), (path, get)
        head, _, body = request(ui, "HEAD", path)
        assert (head, body) == (get, b""), path
        for method in METHODS[2:]:
            status, headers, _ = request(ui, method, path, body=b"status=cancelled&reason=x")
            assert status in (404, 405), (method, path, status)
            if status == 405:
                assert set(headers["allow"].replace(" ", "").split(",")) <= {"GET", "HEAD"}
    assert snapshot(fleet.db) == before
    assert {path: path.stat().st_mtime_ns for path in files} == touched


def test_the_read_only_view_opens_the_database_for_reading_only(fleet: Fleet, ui: Server) -> None:
    assert request(ui, "GET", "/goals/g-succeeded")[0] == 200
    modes = open_modes(ui.proc.pid, fleet.db)
    assert modes, "the server holds the database open"
    assert modes == {os.O_RDONLY}  # no descriptor could write, whatever the code did
    _, headers, body = request(ui, "GET", "/?token=a-guess")
    assert "set-cookie" not in headers  # no token, no cookie, no forms
    assert b"<form" in body  # the search box (a GET form) …
    assert b'method="post"' not in body  # … and no form that would act


def open_modes(pid: int, path: Path) -> set[int]:
    """How a process holds a file open: O_RDONLY, O_WRONLY or O_RDWR of each descriptor."""
    modes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            if Path(os.readlink(fd)) != path.resolve():
                continue
            flags = next(
                line
                for line in (Path(f"/proc/{pid}/fdinfo") / fd.name).read_text().splitlines()
                if line.startswith("flags:")
            )
        except OSError:
            continue  # closed meanwhile
        modes.add(int(flags.split()[1], 8) & os.O_ACCMODE)
    return modes


def test_every_response_carries_a_strict_content_security_policy(ui: Server) -> None:
    for path in ("/", "/goals/g-blocked-work", "/goals/nope", "/static/ui.js", "/nope"):
        for method in ("GET", "POST"):
            _, headers, _ = request(ui, method, path)
            policy = dict(
                d.strip().split(" ", 1) for d in headers["content-security-policy"].split(";")
            )
            assert policy["default-src"] == "'none'"
            assert policy["script-src"] == policy["style-src"] == "'self'"
            assert policy["frame-ancestors"] == "'none'"
            assert "unsafe" not in headers["content-security-policy"]
            assert "*" not in headers["content-security-policy"]
            assert headers["x-content-type-options"] == "nosniff"
            assert headers["cache-control"] == "no-store"


def test_the_pages_hold_no_inline_script_or_style(ui: Server) -> None:
    for path in ("/", "/goals/g-blocked-decision", "/goals/g-succeeded"):
        _, _, body = request(ui, "GET", path)
        page = body.decode()
        assert page.count("<script") == 1
        assert '<script src="/static/ui.js" defer></script>' in page
        assert "style=" not in page
        assert "<style" not in page
        assert HANDLER.search(page) is None  # agents wrote onerror=: it is text, not markup


def test_a_request_naming_another_host_is_refused(ui: Server) -> None:
    port = urlsplit(ui.url).port
    assert request(ui, "GET", "/", host=f"evil.example:{port}")[0] == 421
    assert request(ui, "GET", "/", host="127.0.0.1.evil.example")[0] == 421
    assert request(ui, "GET", "/", host=f"localhost:{port}")[0] == 200
    assert request(ui, "GET", "/", host=f"127.0.0.1:{port}")[0] == 200


def test_hostile_addresses_get_an_escaped_page_in_valid_utf8(ui: Server) -> None:
    status, _, body = request(ui, "GET", "/?status=%3Cscript%3Ealert(1)%3C/script%3E")
    assert status == 400
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert b"<script>alert" not in body
    status, _, body = request(ui, "GET", "/goals/%ED%A0%80%1B%5B31m")  # a lone surrogate, ANSI
    assert status == 404
    text = body.decode("utf-8")  # strict: no surrogate made it into the page
    assert "\x1b" not in text


def test_the_list_and_the_goal_pages_name_what_the_store_holds(ui: Server) -> None:
    _, _, body = request(ui, "GET", "/?status=blocked")
    page = body.decode()
    blocked = [g for g, (status, _) in EXPECTED.items() if status == "blocked"]
    assert all(f'data-goal="{g}"' in page for g in blocked)
    assert page.count('data-status="blocked"') == len(blocked)
    for goal_id in EXPECTED:
        status, _, body = request(ui, "GET", f"/goals/{goal_id}")
        assert status == 200
        assert f'data-status="{EXPECTED[goal_id][0]}"' in body.decode()


# --- the command line: one clear line, never a traceback ---------------------------------------


def run_ui(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GOVERNOR, "ui", *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_a_taken_port_is_one_line_and_exit_9(fleet: Fleet) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_ui("--store", str(fleet.db), "--port", str(port))
    assert result.returncode == 9
    assert one_line(result) == (
        f"error: port {port} on 127.0.0.1 is taken by another program; "
        "choose another with --port N (or --port 0 for any free port)"
    )


def test_a_missing_store_is_one_line_and_never_created(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "governor.db"
    result = run_ui("--store", str(missing))
    assert result.returncode == 4
    assert one_line(result).startswith(f"error: no store at {missing}: a read never creates one")
    default = run_ui(cwd=tmp_path)
    assert default.returncode == 4
    assert "no store at .governor/governor.db" in one_line(default)
    assert list(tmp_path.iterdir()) == []


def test_without_the_ui_extra_it_says_which_extra_to_install(fleet: Fleet) -> None:
    script = (
        "import sys; sys.modules['starlette'] = None;"  # what an absent package looks like
        "from governor.cli.main import main; sys.exit(main(sys.argv[1:]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, "ui", "--store", str(fleet.db)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 9
    assert one_line(result).startswith(
        "error: governor ui needs the ui extra: pip install 'governor[ui]'"
    )


@pytest.mark.parametrize("port", ["x", "-1", "65536"])
def test_a_bad_port_is_a_usage_error(port: str) -> None:
    result = run_ui("--port", port)
    assert result.returncode == 2
    assert "not a port number" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_says_what_it_serves_and_that_it_is_read_only() -> None:
    result = run_ui("--help")
    assert result.returncode == 0
    for words in ("read-only", "--host HOST", "--port PORT", "--store URL", "127.0.0.1",
                  "governor[ui]", "--refresh-s", "--page-size", "--allow-actions",
                  "--actor NAME", "--tls-cert FILE", "--tls-key FILE", "--insecure-actions"):  # fmt: skip
        assert words in result.stdout, words


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_it_stops_cleanly_on_a_stop_signal(fleet: Fleet, sig: int) -> None:
    server = start_ui("--store", str(fleet.db))
    assert request(server, "GET", "/")[0] == 200
    stderr = server.stop(sig)
    assert server.proc.returncode == 0, stderr
    assert stderr.strip().splitlines()[-1] == "governor ui: stopped"
    assert "Traceback" not in stderr
