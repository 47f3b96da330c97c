"""The scrubbed environment and the redaction of secrets."""

from __future__ import annotations

import pytest

from governor.exec.environment import (
    BASE_ALLOW,
    REDACTED,
    Redactor,
    redact,
    scrubbed_env,
    secret_values,
)

SOURCE = {
    "PATH": "/usr/bin",
    "HOME": "/home/a",
    "LANG": "C.UTF-8",
    "LC_ALL": "C",
    "TERM": "xterm",
    "TMPDIR": "/tmp",
    "USER": "a",
    "CODEX_HOME": "/home/a/.codex",
    "OPENAI_API_KEY": "sk-should-not-pass-0123456789",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG",
    "LD_PRELOAD": "/evil.so",
    "MY_API_KEY": "my-api-key-value-42",
}


def test_only_the_base_allow_list_passes_by_default() -> None:
    assert set(scrubbed_env(SOURCE, ())) == set(BASE_ALLOW)


def test_named_variables_pass_through_and_nothing_else() -> None:
    env = scrubbed_env(SOURCE, ["CODEX_HOME", "MY_API_KEY", "NOT_SET_ANYWHERE"])
    assert set(env) == set(BASE_ALLOW) | {"CODEX_HOME", "MY_API_KEY"}
    assert env["MY_API_KEY"] == SOURCE["MY_API_KEY"]
    assert "LD_PRELOAD" not in env
    assert "OPENAI_API_KEY" not in env


def test_secret_values_are_those_of_secret_names_long_enough_longest_first() -> None:
    env = {"A_KEY": "abcdef", "B_TOKEN": "abcdefghij", "C_SECRET": "short", "D_VALUE": "abcdefg"}
    assert secret_values(env) == ("abcdefghij", "abcdef")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("key my-api-key-value-42!", f"key {REDACTED}!", id="a *_KEY value"),
        pytest.param("pw hunter2hunter2", f"pw {REDACTED}", id="a *_PASSWORD value"),
        pytest.param("tok ghs_tokentokentoken", f"tok {REDACTED}", id="a *_TOKEN value"),
        pytest.param(
            "use sk-ant-api03-AbCdEfGhIjKlMnOpQrSt_uv-wx now",
            f"use {REDACTED} now",
            id="an Anthropic key",
        ),
        pytest.param("sk-proj-AbCdEfGhIjKlMnOpQrStUv1", REDACTED, id="an OpenAI project key"),
        pytest.param("sk-AbCdEfGhIjKlMnOpQrStUv", REDACTED, id="a plain sk- key"),
        pytest.param(
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.x.y\nnext",
            f"Authorization: {REDACTED}\nnext",
            id="an Authorization header",
        ),
        pytest.param(
            '{"authorization": "Basic dXNlcjpwYXNz"}',
            f'{{"authorization": "{REDACTED}"}}',
            id="an authorization field in JSON",
        ),
        pytest.param("x-api-key: abcdef123456", f"x-api-key: {REDACTED}", id="an x-api-key header"),
        pytest.param(
            "sent Bearer abcdefghijklmnop to it", f"sent Bearer {REDACTED} to it", id="a bearer"
        ),
        pytest.param("ghp_" + "a" * 36, REDACTED, id="a GitHub classic token"),
        pytest.param("github_pat_11AAAAAAA0" + "b" * 40, REDACTED, id="a GitHub fine-grained PAT"),
        pytest.param("id AKIAIOSFODNN7EXAMPLE here", f"id {REDACTED} here", id="an AWS key id"),
    ],
)
def test_secrets_are_redacted(text: str, expected: str) -> None:
    env = {
        "MY_API_KEY": "my-api-key-value-42",
        "DB_PASSWORD": "hunter2hunter2",
        "GH_TOKEN": "ghs_tokentokentoken",
    }
    assert redact(text, env) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("exit 1 after 12 s; task-force-alpha-bravo-charlie", id="sk- inside a word"),
        pytest.param("the bearer of bad news", id="the word bearer"),
        pytest.param("value 1 and 12345", id="short secret values"),
        pytest.param("HTTP/1.1 503 Service Unavailable", id="a status line"),
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text, {"X_KEY": "1", "Y_TOKEN": "12345"}) == text


def test_a_redactor_is_reusable_and_treats_values_literally() -> None:
    redactor = Redactor({"WEIRD_SECRET": "a.b*c(d)e"})
    assert redactor("x a.b*c(d)e y aXb*c(d)e") == f"x {REDACTED} y aXb*c(d)e"
    assert redactor("nothing") == "nothing"
