"""Acting from the web view, over raw HTTP to the real server: every refusal a careful
reviewer would try, and that nothing is recorded when one happens.

A POST acts only when it names this server as its ``Origin``, carries the access token's
cookie and spends a one-time form token of that goal's page. The access token is printed
once at start and never again: not in a log line, not in an address the browser keeps.
"""

from __future__ import annotations

import getpass
import html
import http.client
import os
import re
import shutil
import ssl
import subprocess
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from governor.store.sqlite import SqliteEventStore
from tests.ui.fleet import Fleet
from tests.ui.serve import GOVERNOR, Server, start_ui

CSRF = re.compile(r'name="csrf" value="([^"]*)"')


class Browser:
    """What a browser sends: its cookie, and the Origin of the page its form is on."""

    def __init__(self, server: Server, *, cookie: bool = True) -> None:
        where = urlsplit(server.url)
        self.server, self.host, self.port = server, where.hostname or "", where.port or 0
        self.origin = f"http://{self.host}:{self.port}"
        name = f"governor-ui-{self.port}"
        self.cookie = f"{name}={server.token}" if cookie else None

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        sent = {"Cookie": self.cookie} if self.cookie else {}
        conn.request(method, path, body=body, headers=sent | (headers or {}))
        response = conn.getresponse()
        data = response.read().decode("utf-8")
        conn.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data

    def form_token(self, goal_id: str) -> str:
        status, _, page = self.request("GET", f"/goals/{goal_id}")
        assert status == 200
        found = CSRF.search(page)
        assert found is not None, "the page offers no form"
        return found.group(1)

    def post(
        self, goal_id: str, fields: dict[str, str], *, origin: str | None = "same", **headers: str
    ) -> tuple[int, dict[str, str], str]:
        sent = {"Content-Type": "application/x-www-form-urlencoded", **headers}
        if origin is not None:
            sent["Origin"] = self.origin if origin == "same" else origin
        body = urlencode(fields).encode()
        return self.request("POST", f"/goals/{goal_id}/act", body, sent)


def cancel(token: str) -> dict[str, str]:
    return {"csrf": token, "form": "cancel", "verb": "cancel", "reason": "done", "confirm": "yes"}


def seq(fleet: Fleet, goal_id: str) -> int:
    with SqliteEventStore(fleet.db, read_only=True) as store:
        return store.last_seq(goal_id)


def test_an_action_without_the_access_token_is_refused_and_records_nothing(
    acting_ui: Server, acting_fleet: Fleet
) -> None:
    token = Browser(acting_ui).form_token("ready-9")
    before = seq(acting_fleet, "ready-9")
    for browser in (Browser(acting_ui, cookie=False), Browser(acting_ui)):
        if browser.cookie:
            browser.cookie = browser.cookie[:-4] + "xxxx"  # a wrong token
        status, _, text = browser.post("ready-9", cancel(token))
        assert status == 403
        assert text.startswith("refused: acting needs the access token")
    assert seq(acting_fleet, "ready-9") == before


@pytest.mark.parametrize(
    ("origin", "headers"),
    [
        (None, {}),
        ("http://evil.example", {}),
        ("null", {}),
        ("same", {"Sec-Fetch-Site": "cross-site"}),
        ("same", {"Sec-Fetch-Site": "same-site"}),
    ],
    ids=["no Origin", "another site", "an opaque origin", "cross-site fetch", "same-site fetch"],
)
def test_a_form_from_anywhere_but_this_server_is_refused(
    acting_ui: Server, acting_fleet: Fleet, origin: str | None, headers: dict[str, str]
) -> None:
    browser = Browser(acting_ui)
    before = seq(acting_fleet, "ready-9")
    status, _, text = browser.post(
        "ready-9", cancel(browser.form_token("ready-9")), origin=origin, **headers
    )
    assert status == 403
    assert text.startswith("refused: a form is taken only from this server's own page")
    assert seq(acting_fleet, "ready-9") == before


def test_a_missing_a_wrong_or_a_foreign_form_token_is_refused(
    acting_ui: Server, acting_fleet: Fleet
) -> None:
    browser = Browser(acting_ui)
    good = browser.form_token("ready-9")
    nonce, issued, mac = good.split(".")
    before = seq(acting_fleet, "ready-9")
    for token, problem in (
        ("", "no valid form token"),
        ("not-a-token", "no valid form token"),
        (f"{nonce}.{issued}.{'0' * len(mac)}", "not this server's, or not for this goal"),
        (f"{nonce}.{int(issued) + 1}.{mac}", "not this server's, or not for this goal"),
        (browser.form_token("ready-10"), "not this server's, or not for this goal"),
    ):
        status, _, page = browser.post("ready-9", cancel(token))
        assert status == 403, token
        shown = re.search(r'<p class="error" id="action-error" role="alert">([^<]*)</p>', page)
        assert shown is not None, token
        assert problem in html.unescape(shown.group(1)), token
    assert seq(acting_fleet, "ready-9") == before


def test_a_replayed_form_is_refused_and_records_nothing_more(
    acting_ui: Server, acting_fleet: Fleet
) -> None:
    browser = Browser(acting_ui)
    fields = cancel(browser.form_token("ready-3"))
    status, headers, _ = browser.post("ready-3", fields)
    assert (status, headers["location"]) == (303, "/goals/ready-3?done=cancel")
    after = seq(acting_fleet, "ready-3")
    status, _, page = browser.post("ready-3", fields)  # the same form, sent again
    assert status == 403
    assert "this form was already sent once; nothing more was recorded" in page
    assert seq(acting_fleet, "ready-3") == after


def test_a_goal_whose_temporal_server_is_gone_records_nothing_from_the_page(
    acting_ui: Server, acting_fleet: Fleet
) -> None:
    """Its workflow is its one writer (SPEC §12.11): the page sends the verb there as an
    update (tests/temporal/test_ui_acts.py); with no server there, it says so (503) and
    nothing is recorded."""
    browser = Browser(acting_ui)
    before = seq(acting_fleet, "on-temporal")
    status, _, page = browser.post("on-temporal", cancel(browser.form_token("on-temporal")))
    assert status == 503
    shown = re.search(r'<p class="error" id="action-error" role="alert">([^<]*)</p>', page)
    assert shown is not None
    assert html.unescape(shown.group(1)).startswith(
        "error: cannot reach the Temporal server at 127.0.0.1:7233"
    )
    assert seq(acting_fleet, "on-temporal") == before


def test_a_refused_verb_is_the_clis_one_line_and_records_nothing(
    acting_ui: Server, acting_fleet: Fleet
) -> None:
    cli = subprocess.run(
        [GOVERNOR, "resume", "ready-2", "--reason", "go", "--store", str(acting_fleet.db)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert cli.returncode == 5
    browser = Browser(acting_ui)
    before = seq(acting_fleet, "ready-2")
    fields = {"csrf": browser.form_token("ready-2"), "verb": "resume", "reason": "go"}
    status, _, page = browser.post("ready-2", fields)
    assert status == 409
    shown = re.search(r'<p class="error" id="action-error" role="alert">([^<]*)</p>', page)
    assert shown is not None
    assert html.unescape(shown.group(1)) == cli.stderr.strip()
    assert seq(acting_fleet, "ready-2") == before
    unknown = {
        "csrf": browser.form_token("ready-2"),
        "verb": "work retry",
        "work": "p9-z",
        "reason": "x",
    }
    status, _, page = browser.post("ready-2", unknown)
    assert status == 404
    assert "error: ready-2: no work item p9-z</p>" in page


def test_only_a_post_acts_and_only_a_form_of_bounded_size(
    acting_ui: Server, acting_fleet: Fleet
) -> None:
    browser = Browser(acting_ui)
    for method in ("GET", "HEAD", "PUT", "DELETE", "PATCH"):
        status, headers, _ = browser.request(method, "/goals/ready-9/act")
        assert status == 405, method
        assert headers["allow"] == "POST"
    token = browser.form_token("ready-9")
    status, _, _ = browser.post("ready-9", cancel(token), **{"Content-Type": "application/json"})
    assert status == 415
    huge = cancel(browser.form_token("ready-9")) | {"reason": "x" * 70_000}
    assert browser.post("ready-9", huge)[0] == 413
    twice = urlencode([*cancel(browser.form_token("ready-9")).items(), ("verb", "cancel")]).encode()
    status, _, text = browser.request(
        "POST", "/goals/ready-9/act", twice,
        {"Content-Type": "application/x-www-form-urlencoded", "Origin": browser.origin},
    )  # fmt: skip
    assert (status, text) == (400, "refused: a field was sent twice\n")
    evil = browser.post("ready-9", cancel(browser.form_token("ready-9")), Host="evil.example")
    assert evil[0] == 421
    assert seq(acting_fleet, "ready-9") == 1


def test_an_action_never_takes_the_lease_a_runner_holds(
    acting_ui: Server, acting_fleet: Fleet
) -> None:
    with SqliteEventStore(acting_fleet.db) as store:
        lease = store.acquire_lease("ready-5", "runner-on-host-b", ttl_s=300)
        browser = Browser(acting_ui)
        status, _, _ = browser.post("ready-5", cancel(browser.form_token("ready-5")))
        assert status == 303  # recorded as `governor cancel` would be: on the expected seq
        held = store.current_lease("ready-5")
        assert held == lease  # the runner still holds it; its next append sees the cancel
        assert list(store.load("ready-5"))[-1].type == "goal.cancelled"
        store.release_lease(lease)


def test_the_token_link_sets_a_strict_cookie_and_leaves_the_address(acting_ui: Server) -> None:
    browser = Browser(acting_ui, cookie=False)
    status, headers, _ = browser.request("GET", f"/goals/ready-9?token={acting_ui.token}&x=1")
    assert (status, headers["location"]) == (303, "/goals/ready-9?x=1")
    cookie = headers["set-cookie"]
    assert cookie.startswith(f"governor-ui-{browser.port}={acting_ui.token};")
    assert {"HttpOnly", "SameSite=strict", "Path=/"} <= {p.strip() for p in cookie.split(";")}
    assert "Secure" not in cookie  # plain HTTP on loopback: a Secure cookie would not come back
    status, headers, text = browser.request("GET", "/?token=wrong")
    assert (status, text) == (403, "wrong access token: nothing was changed\n")
    assert "set-cookie" not in headers
    assert browser.request("GET", "/")[1]["referrer-policy"] == "same-origin"


def test_the_access_token_is_printed_once_and_never_logged(
    acting_fleet: Fleet, tmp_path: Path
) -> None:
    server = start_ui("--store", str(acting_fleet.db), "--allow-actions")
    assert server.token is not None
    browser = Browser(server)
    outsider = Browser(server, cookie=False)
    for path in (f"/?token={server.token}", f"/nope?token={server.token}",
                 f"/goals/ready-4?token={server.token}&token=x", "/?token=wrong"):  # fmt: skip
        outsider.request("GET", path)
        outsider.request("GET", path, headers={"Host": "evil.example"})
    browser.post("ready-4", cancel(browser.form_token("ready-4")))
    browser.post("ready-4", {"csrf": "x", "verb": "cancel"}, origin="http://evil.example")
    rest = server.stop()
    assert server.banner.count(server.token) == 1  # the token link, once
    assert server.token not in rest
    last = SqliteEventStore(acting_fleet.db, read_only=True)
    actor = list(last.load("ready-4"))[-1].actor
    last.close()
    assert actor == f"ui:{getpass.getuser()}"  # no --actor: the login name


# --- the command line of actions: binding, TLS ------------------------------------------------


def run_ui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([GOVERNOR, "ui", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--allow-actions", "--host", "0.0.0.0"), "--allow-actions on 0.0.0.0 needs TLS"),
        (("--tls-cert", "c.pem"), "--tls-cert and --tls-key go together"),
        (("--insecure-actions",), "--insecure-actions only applies with --allow-actions"),
    ],
    ids=["actions exposed without TLS", "a certificate without its key", "insecure alone"],
)
def test_options_that_cannot_serve_safely_are_refused_before_anything_listens(
    acting_fleet: Fleet, args: tuple[str, ...], says: str
) -> None:
    result = run_ui("--store", str(acting_fleet.db), "--port", "0", *args)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"governor ui: error: {says}")


def test_a_certificate_that_does_not_load_is_one_line_and_exit_3(
    acting_fleet: Fleet, tmp_path: Path
) -> None:
    (tmp_path / "c.pem").write_text("not a certificate")
    result = run_ui("--store", str(acting_fleet.db), "--tls-cert", str(tmp_path / "c.pem"),
                    "--tls-key", str(tmp_path / "k.pem"))  # fmt: skip
    assert result.returncode == 3
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: --tls-cert {tmp_path / 'c.pem'} --tls-key")


def test_actions_on_every_interface_with_insecure_actions_start_with_a_warning(
    acting_fleet: Fleet,
) -> None:
    server = start_ui("--store", str(acting_fleet.db), "--allow-actions", "--insecure-actions",
                      "--host", "0.0.0.0")  # fmt: skip
    try:
        assert server.proc.stderr is not None
        assert "warning: listening on 0.0.0.0" in server.banner + server.proc.stderr.readline()
    finally:
        server.stop()


def test_actions_over_tls_use_a_secure_cookie_and_an_https_origin(
    acting_fleet: Fleet, tmp_path: Path
) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed (apt-get install openssl): no certificate to serve")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    server = start_ui("--store", str(acting_fleet.db), "--allow-actions", "--actor", "tls",
                      "--tls-cert", str(cert), "--tls-key", str(key))  # fmt: skip
    try:
        assert server.url.startswith("https://127.0.0.1:")
        trusted = ssl.create_default_context(cafile=str(cert))
        port = urlsplit(server.url).port

        def request(method: str, path: str, body: bytes | None = None, **headers: str):  # type: ignore[no-untyped-def]
            conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=30, context=trusted)
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), response.read().decode()

        status, headers, _ = request("GET", f"/?token={server.token}")
        assert status == 303
        assert "Secure" in headers["set-cookie"]
        cookie = headers["set-cookie"].split(";")[0]
        _, _, page = request("GET", "/goals/ready-11", Cookie=cookie)
        token = CSRF.search(page).group(1)  # type: ignore[union-attr]
        form = urlencode(cancel(token)).encode()
        plain = {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}
        wrong = request(
            "POST", "/goals/ready-11/act", form, Origin=f"http://127.0.0.1:{port}", **plain
        )
        assert wrong[0] == 403  # the http:// origin is another origin than https://
        status, _, _ = request(
            "POST", "/goals/ready-11/act", form, Origin=f"https://127.0.0.1:{port}", **plain
        )
        assert status == 303
        assert seq(acting_fleet, "ready-11") == 2
    finally:
        server.stop()


def test_with_actions_the_store_is_opened_for_writing(
    acting_ui: Server, acting_fleet: Fleet
) -> None:
    from tests.ui.test_server import open_modes

    assert Browser(acting_ui).request("GET", "/goals/ready-9")[0] == 200
    assert os.O_RDWR in open_modes(acting_ui.proc.pid, acting_fleet.db)
