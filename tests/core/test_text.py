"""``governor.core.text``: the line a failure is told by, and agent text quoted as data."""

from __future__ import annotations

import pytest

from governor.core.text import quoted, said, telling_line

TOLD = {
    "the 503 before the agent's next line": (
        "HTTP/1.1 503 Service Unavailable\ncalling https://api.example/v1/responses",
        "HTTP/1.1 503 Service Unavailable",
    ),
    "the failing test on stderr before stdout's last line": (
        "FAILED tests/test_login.py::test_bad_password - assert 200 == 401\nran 12 tests",
        "FAILED tests/test_login.py::test_bad_password - assert 200 == 401",
    ),
    "pytest's summary when it is last": (
        "FAILED tests/a.py::t\n===== 1 failed, 12 passed in 3.05s =====",
        "===== 1 failed, 12 passed in 3.05s =====",
    ),
    "a vendor envelope's status": (
        '{"type": "error", "status": 529}\nretrying',
        '{"type": "error", "status": 529}',
    ),
    "an exception": (
        "Traceback (most recent call last):\nValueError: bad\ncleaning up",
        "ValueError: bad",
    ),
    "no verdict: the last line": ("one\ntwo\n", "two"),
}


@pytest.mark.parametrize(("text", "line"), TOLD.values(), ids=TOLD.keys())
def test_a_failure_is_told_by_its_verdict_line(text: str, line: str) -> None:
    assert telling_line(text, "none") == line


def test_agent_text_is_quoted_with_its_back_quotes_disarmed() -> None:
    assert quoted("run `rm -rf /` now") == "“run 'rm -rf /' now”"
    assert quoted("a “nested” quote") == '“a "nested" quote”'
    assert said(None, "no question given") == "no question given"
    assert said("   \n", "no error recorded") == "no error recorded"
