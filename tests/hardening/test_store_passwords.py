"""No message shows a store password (issue 9, item 6).

``--store 'postgresql://u:PW@[::1'`` used to echo the whole URL, password included, in
its error. Every message that can show a store URL now masks the password, whatever
form the URL takes (URL userinfo, percent-encoded, a libpq ``password=`` pair) and
wherever it came from (``--store`` or ``$GOVERNOR_STORE``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from governor.store.masking import mask_password
from tests.hardening.run import assert_one_line, governor

SECRET = "Sup3rS3cret"

URLS = {
    "ipv6 unclosed": f"postgresql://u:{SECRET}@[::1",
    "ipv6 unclosed, percent-encoded": "postgresql://u:Sup3r%53%33cret@[::1",
    "bad port": f"postgresql://u:{SECRET}@localhost:99999999/db",
    "unknown scheme": f"mysql://u:{SECRET}@db.example/x",
    "sqlite with a host": f"sqlite://u:{SECRET}@host/x.db",
    "conninfo": f"host=localhost password={SECRET} dbname=x",
    "conninfo quoted": f"host=localhost password='{SECRET} x' dbname=x",
}


@pytest.mark.parametrize("name", sorted(URLS))
@pytest.mark.parametrize("via", ["--store", "GOVERNOR_STORE"])
def test_a_bad_store_url_is_one_line_without_its_password(
    tmp_path: Path, name: str, via: str
) -> None:
    url = URLS[name]
    if via == "--store":
        result = governor(tmp_path, "list", "--store", url)
    else:
        result = governor(tmp_path, "list", env={"GOVERNOR_STORE": url})
    line = assert_one_line(result, 7)
    assert SECRET not in line
    assert SECRET[:6] not in line
    assert SECRET not in result.stdout


def test_a_refused_connection_names_the_server_but_not_the_password(tmp_path: Path) -> None:
    url = f"postgresql://u:{SECRET}@127.0.0.1:9/db?connect_timeout=5"
    for command in (("status", "g"), ("tick", "g"), ("list",)):
        result = governor(tmp_path, *command, "--store", url)
        line = assert_one_line(result, 7, "127.0.0.1")
        assert SECRET not in line


@pytest.mark.parametrize(
    ("text", "url"),
    [
        (f"connect to postgresql://me:{SECRET}@db/x failed", None),
        (f"password={SECRET} host=db", None),
        (f"password = '{SECRET} spaced' host=db", None),
        (f"the driver said: {SECRET} is wrong", f"postgresql://me:{SECRET}@db/x"),
        ("the driver said: p@ss/word is wrong", "postgresql://me:p%40ss%2Fword@db/x"),
    ],
)
def test_mask_password_masks_every_form(text: str, url: str | None) -> None:
    masked = mask_password(text, url)
    assert SECRET not in masked
    assert "p@ss/word" not in masked
    assert "***" in masked
