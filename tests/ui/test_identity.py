"""Who acts from the web view (issue 35 §4), over raw HTTP to the real ``governor ui``:
each person of a ``--users`` file acts with their own token, recorded as ``ui:NAME``, and
the tokens stay good across a restart and never reach the server's output; behind an
authenticating proxy (``--trusted-header``) the name it sets is who acts, and a request
without it acts as nobody.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from governor.errors import InputError
from governor.store.sqlite import SqliteEventStore
from governor.ui.keys import read_users
from tests.e2e.cli import Project
from tests.ui.serve import start_ui
from tests.ui.test_acting_http import CSRF, Browser, cancel

ALICE, BOB = "alice-0123456789abcdef", "bob-fedcba9876543210xyz"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store of four ready goals (``id-1`` .. ``id-4``)."""
    project = Project(tmp_path)
    agent = {"harness": "scripted", "args": []}
    for n in range(1, 5):
        project.goal(f"id-{n}", agent, agent)
    return tmp_path / "governor.db"


def _actor(db: Path, goal_id: str) -> str:
    with SqliteEventStore(db, read_only=True) as store:
        return str(getattr(list(store.load(goal_id))[-1], "actor", ""))


def test_each_person_acts_with_their_own_token_across_restarts(tmp_path: Path, store: Path) -> None:
    users = tmp_path / "users.txt"
    users.write_text(f"# who may act\nalice {ALICE}\n\nbob   {BOB}\n")
    outputs = []
    for person, token, goal_id in (("alice", ALICE, "id-1"), ("bob", BOB, "id-2")):
        server = start_ui("--store", str(store), "--allow-actions", "--users", str(users))
        try:
            browser = Browser(server)
            browser.cookie = f"governor-ui-{browser.port}={token}"
            status, _, text = browser.post(goal_id, cancel(browser.form_token(goal_id)))
            assert status == 303, text
            nobody = Browser(server)
            nobody.cookie = f"governor-ui-{nobody.port}=not-anyones-token-at-all"
            status, _, text = nobody.post("id-3", cancel(browser.form_token("id-3")))
            assert status == 403
        finally:
            outputs.append(server.banner + server.stop())
        assert _actor(store, goal_id) == f"ui:{person}"
    assert all(ALICE not in o and BOB not in o for o in outputs)
    assert "actions allowed for 2 people" in outputs[0]


def test_a_trusted_proxy_header_names_who_acts(store: Path) -> None:
    server = start_ui(
        "--store", str(store), "--allow-actions", "--trusted-header", "X-Forwarded-User"
    )
    try:
        browser = Browser(server, cookie=False)
        carol = {"X-Forwarded-User": "carol"}
        status, _, page = browser.request("GET", "/goals/id-4", headers=carol)
        assert status == 200
        assert "recorded as ui:carol" in page
        found = CSRF.search(page)
        assert found is not None
        status, _, text = browser.post("id-4", cancel(found.group(1)))  # no header: nobody
        assert status == 403
        assert "named nobody" in text
        status, _, text = browser.post("id-4", cancel(found.group(1)), **carol)
        assert status == 303, text
    finally:
        server.stop()
    assert _actor(store, "id-4") == "ui:carol"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("alice short\n", "alice's token is shorter than 16 characters"),
        (f"alice {ALICE}\nalice {BOB}\n", "line 2: alice or its token is given twice"),
        ("a b c\n", "line 1: expected NAME TOKEN"),
        ("# nobody\n", "names nobody"),
    ],
    ids=["a short token", "a name twice", "three words", "nobody"],
)
def test_a_users_file_that_cannot_work_is_refused_naming_the_line(
    tmp_path: Path, body: str, error: str
) -> None:
    users = tmp_path / "users.txt"
    users.write_text(body)
    with pytest.raises(InputError, match=error) as raised:
        read_users(users)
    assert BOB not in str(raised.value)
