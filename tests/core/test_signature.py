"""Failure signatures (SPEC §12.10, decision record 0017): what is "the same failure"."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from governor.core.signature import SIGNATURE_LIMIT, normalise, signature

PASSED = "1 failed, 12 passed in 3.41s"

SAME: dict[str, tuple[str, str]] = {
    "a temporary folder differs": (
        "/tmp/run-7f3a9c21/app/login.py:41: AssertionError",
        "/tmp/run-0be4d2aa/app/login.py:41: AssertionError",
    ),
    "a home folder differs": ("~/alice/w/x.py failed", "~/bob/w/x.py failed"),
    "the timing and the counts differ": (PASSED, "2 failed, 11 passed in 2.97s"),
    "a line number differs": (
        "x.py:41: name 'y' is not defined",
        "x.py:42: name 'y' is not defined",
    ),
    "a timestamp differs": (
        "2026-03-01T10:00:00Z error: lock held",
        "2026-03-02 11:12:13.5+01:00 error: lock held",
    ),
    "a clock time differs": ("[10:00:01] refused", "[23:59:59.123] refused"),
    "a request id differs": ("request 3f2a9c1b7e failed", "request 9e8d7c6b5a failed"),
    "a UUID differs": (
        "run 123e4567-e89b-12d3-a456-426614174000 died",
        "run 00000000-0000-4000-8000-000000000000 died",
    ),
    "a 0x address differs": ("segfault at 0x7ffd1234", "segfault at 0xDEADBEEF"),
    "the text was cut at another place": ("…ed 3.41s\nreal error: x", "…41s\nreal error: x"),
    "blanks and empty lines differ": ("error:   no\n\n  json", "error: no\njson"),
    "an exit status differs (numbers are replaced, SPEC §12.10)": ("exit 1", "exit 2"),
}

DIFFERENT: dict[str, tuple[str, str]] = {
    "another file": ("/tmp/q1/a.py:1: boom", "/tmp/q1/b.py:1: boom"),
    "another project path": ("src/lib/a.rs failed", "src/lib/b.rs failed"),
    "another word": ("no JSON object", "no JSON array"),
    "another endpoint": ("https://a.example/v1 refused", "https://b.example/v1 refused"),
    "a word made of hex letters is a word": ("deadbeef", "cafebabe"),
}


@pytest.mark.parametrize(("a", "b"), SAME.values(), ids=SAME.keys())
def test_what_varies_between_runs_of_one_failure_is_normalised_away(a: str, b: str) -> None:
    assert normalise(a) == normalise(b)
    assert signature(None, "default", a) == signature(None, "default", b)


@pytest.mark.parametrize(("a", "b"), DIFFERENT.values(), ids=DIFFERENT.keys())
def test_what_tells_failures_apart_is_kept(a: str, b: str) -> None:
    assert signature(None, "default", a) != signature(None, "default", b)


def test_the_class_and_the_rule_are_part_of_it() -> None:
    text = "HTTP/1.1 503 Service Unavailable"
    upstream = signature("upstream", "upstream-text", text)
    assert upstream != signature(None, "upstream-text", text)
    assert upstream != signature("upstream", "vendor-status", text)
    assert upstream.startswith("upstream/upstream-text ")


def test_it_reads_the_class_the_rule_a_digest_and_the_last_line() -> None:
    got = signature(None, None, "Traceback …\n" + PASSED)
    head, _, excerpt = got.partition(": ")
    kind, digest = head.split(" ")
    assert kind == "none/none"
    assert len(digest) == 12
    assert int(digest, 16) >= 0
    assert excerpt == "<n> failed, <n> passed in <n>s"
    assert signature(None, None, None).endswith(": (no error text)")
    assert signature(None, None, "") == signature(None, None, None)


@given(st.text(max_size=2000), st.sampled_from([None, "upstream"]), st.text(max_size=100))
def test_it_is_bounded_deterministic_and_normalising_twice_changes_nothing(
    text: str, failure_class: str | None, rule: str
) -> None:
    got = signature(failure_class, rule or None, text)
    assert len(got) <= SIGNATURE_LIMIT
    assert got == signature(failure_class, rule or None, text)
    assert normalise(normalise(text)) == normalise(text)
