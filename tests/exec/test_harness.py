"""The harness registry and the shared translation of a process result into a failure."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from governor.core.classify import ERROR_LIMIT
from governor.core.event_fields import Profile
from governor.exec.command import CommandHarness
from governor.exec.environment import REDACTED, Redactor
from governor.exec.harness import failure_of, harness_for, partial_of, spawn_result, stdout_text
from governor.exec.process import ProcessResult
from governor.exec.scripted import ScriptedHarness

SECRET = "tok-0123456789abcdef"


def process(
    *,
    stdout: bytes = b"",
    stderr: bytes = b"",
    exit_code: int | None = 1,
    timed_out: bool = False,
    head: int | None = None,
) -> ProcessResult:
    return ProcessResult(
        argv=("agent",),
        exit_code=exit_code,
        spawn_errno=None,
        spawn_error=None,
        timed_out=timed_out,
        stdout_head=stdout[:head] if head is not None else stdout,
        stdout_tail=stdout[-1000:],
        stderr_tail=stderr,
        stdout_bytes=len(stdout),
        stderr_bytes=len(stderr),
        stdout_sha256=hashlib.sha256(stdout).hexdigest(),
        duration_s=1.25,
    )


@pytest.mark.parametrize(
    ("harness", "adapter"),
    [
        pytest.param("command", CommandHarness, id="command"),
        pytest.param("scripted", ScriptedHarness, id="scripted"),
    ],
)
def test_the_registry_builds_the_adapter_for_a_profile(
    tmp_path: Path, harness: str, adapter: type
) -> None:
    found = harness_for(Profile.model_validate({"harness": harness}), tmp_path)
    assert isinstance(found, adapter)
    assert found.name == harness


@pytest.mark.parametrize(
    ("harness", "class_name"),
    [
        pytest.param("codex", "CodexHarness", id="codex"),
        pytest.param("claude", "ClaudeHarness", id="claude"),
        pytest.param("gemini", "GeminiHarness", id="gemini"),
    ],
)
def test_the_registry_finds_the_vendor_adapters_by_name(
    tmp_path: Path, harness: str, class_name: str
) -> None:
    found = harness_for(Profile.model_validate({"harness": harness}), tmp_path)
    assert type(found).__name__ == class_name
    assert found.name == harness


def test_every_harness_has_an_adapter(tmp_path: Path) -> None:
    for name in ("codex", "claude", "gemini", "command", "python", "scripted"):
        assert harness_for(Profile(harness=name), tmp_path).name == name  # type: ignore[arg-type]


def test_redaction_happens_before_the_cut_so_no_piece_of_a_secret_survives() -> None:
    redact = Redactor({"AGENT_TOKEN": SECRET})
    # the secret straddles the point where a 2000-character tail would cut it
    stderr = ("x" * 3000 + SECRET + "y" * (ERROR_LIMIT - 10)).encode()
    text = failure_of(process(stderr=stderr), redact)
    assert len(text) <= ERROR_LIMIT
    assert text.startswith("…")
    assert "0123456789" not in text
    assert "abcdef" not in text


def test_failure_text_is_stderr_then_stdout_with_notes_for_what_text_cannot_say() -> None:
    redact = Redactor({})
    assert failure_of(process(stderr=b"bad\n", stdout=b"partial"), redact) == "bad\npartial"
    assert failure_of(process(exit_code=5), redact) == "exited 5 with no output"
    assert failure_of(process(exit_code=-9, stderr=b"x"), redact) == "x\nkilled by signal SIGKILL"
    timed_out = failure_of(process(timed_out=True, stdout=b"so far"), redact)
    assert timed_out == "so far\ntimed out after 1.2 s; its process group was killed"
    garbled = failure_of(process(stderr=b"caf\xe9 \xff"), redact)
    assert garbled == "caf\ufffd \ufffd"


def test_a_long_note_still_fits_the_limit() -> None:
    result = process(timed_out=True, stderr=b"e" * 10_000, stdout=b"o" * 10_000)
    assert len(failure_of(result, Redactor({}))) <= ERROR_LIMIT


def test_stdout_text_is_whole_when_it_fit_and_tail_marked_when_it_did_not() -> None:
    assert stdout_text(process(stdout=b"abc")) == "abc"
    cut = stdout_text(process(stdout=b"a" * 5000 + b"END", head=10))
    assert cut.startswith("…")
    assert cut.endswith("END")


def test_partial_evidence_is_the_size_and_digest_of_stdout() -> None:
    assert partial_of(process()) is None
    partial = partial_of(process(stdout=b"half"))
    assert partial is not None
    assert (partial.bytes, partial.sha256) == (4, hashlib.sha256(b"half").hexdigest())


def test_a_success_is_never_classed_and_its_reply_is_redacted() -> None:
    result = spawn_result(
        process(exit_code=0, stderr=b"HTTP/1.1 503 Service Unavailable"),
        Redactor({"AGENT_TOKEN": SECRET}),
        ok=True,
        reply=f"done with {SECRET}",
    )
    assert result.ok
    assert result.failure_class is None
    assert result.error is None
    assert result.reply == f"done with {REDACTED}"
