"""SPEC §4: the classification table, the evidence gate and the run-level class."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from governor.core.classify import (
    ERROR_LIMIT,
    RULES,
    SpawnResult,
    classify,
    failure_text,
    tail,
)
from governor.core.evidence import UNKNOWN, Evidence, is_uncharged, nothing_happened, passes_gate
from governor.core.proof import AgentAttemptProof, AgentProof, RunProof, derive_run_class
from governor.core.upstream_text import is_upstream_text

UPSTREAM_TEXT = {
    "an HTTP/1.1 status line": "HTTP/1.1 503 Service Unavailable",
    "an HTTP/2 status line": "upstream said HTTP/2 429",
    "status 503": "request failed with status 503",
    "status: 429": "error: status: 429",
    "status code 502": "unexpected status code 502 from api",
    "status=529": "retrying: status=529",
    "a status line at the start of a line": "banner\n503 Service Unavailable",
    "circuit open": "the circuit is open; try later",
    "circuit breaker open": "Circuit breaker open for vendor",
    "service unavailable": "Service Unavailable",
    "too many requests": "Too Many Requests",
    "rate limit": "you hit a rate limit",
    "rate_limit_error": '{"type":"rate_limit_error"}',
    "overloaded": "Overloaded",
    "bad gateway": "502 Bad Gateway",
    "gateway timeout": "Gateway Timeout",
    "internal server error": "Internal Server Error",
    # SPEC §11.7: phrases match across "_", "-" and space, and vendor envelopes give status context
    "circuit_open (underscores)": "503 biscuit_baker_service_me_circuit_open",
    "circuit-open (hyphen)": "error: circuit-open",
    "circuit open inside an identifier": "upstream_circuit_open=true",
    "service-unavailable (hyphen)": "service-unavailable",
    "service_unavailable (underscore)": '{"code": "service_unavailable"}',
    "too_many_requests (underscore)": "too_many_requests",
    "too-many-requests (hyphen)": "error too-many-requests",
    "rate-limit (hyphen)": "rate-limit reached",
    "overloaded_error (underscore)": '{"type":"overloaded_error","message":"Overloaded"}',
    "overloaded-error (hyphen)": "overloaded-error",
    "OverloadedError (no separator)": "anthropic.OverloadedError",
    "bad_gateway (underscore)": "bad_gateway",
    "gateway-timeout (hyphen)": "gateway-timeout",
    "gateway_time_out (underscores)": "gateway_time_out",
    "internal_server_error (underscore)": "internal_server_error",
    "InternalServerError (no separator)": "openai.InternalServerError: boom",
    "api_error_status: 529": "api_error_status: 529",
    '"api_error_status":503 in JSON': '{"is_error":true,"api_error_status":503}',
    '"status": 503 in a vendor envelope': '{"error": {"status": 503}}',
    '"status":429 in compact JSON': '{"status":429}',
    "a status line with an underscored phrase": "503 service_unavailable",
}

NOT_UPSTREAM_TEXT = {
    "error 503 mid-line": "there was an error 503 somewhere",
    "429 items": "processed 429 items",
    "502 seconds": "took 502 seconds",
    "502 seconds at line start": "502 seconds elapsed",
    "port 5001": "listening on port 5001",
    "HTTP 5031": "HTTP 5031",
    "status 5000": "status 5000",
    "quota exceeded": "quota exceeded",
    "401": "HTTP/1.1 401 Unauthorized",
    "ECONNRESET": "read ECONNRESET",
    "a 404 status": "status 404",
    "empty text": "",
    "status_5031 is not a status": "status_5031",
    '"status": 5000 is not a status': '{"status": 5000}',
    "api_error_status: 401 is not upstream": "api_error_status: 401",
    "circuit_opener is another word": "the circuit_opener module",
    "overloadedness is another word": "overloadedness",
    "a phrase glued to a word before it": "myrate_limiter_notes",
}


@pytest.mark.parametrize("text", UPSTREAM_TEXT.values(), ids=UPSTREAM_TEXT.keys())
def test_upstream_text_matches(text: str) -> None:
    assert is_upstream_text(text)


@pytest.mark.parametrize("text", NOT_UPSTREAM_TEXT.values(), ids=NOT_UPSTREAM_TEXT.keys())
def test_upstream_text_does_not_match(text: str) -> None:
    assert not is_upstream_text(text)


def failed(**fields: object) -> SpawnResult:
    return SpawnResult.model_validate({"ok": False, **fields})


CLASSIFY = {
    "a timeout is charged even after exit 0": (
        failed(timed_out=True, exit_code=0, error="HTTP/1.1 503"),
        None,
        "timeout",
    ),
    "ENOENT is environment": (failed(spawn_errno="ENOENT"), "environment", "spawn-errno"),
    "EACCES is environment": (failed(spawn_errno="EACCES"), "environment", "spawn-errno"),
    "ENOEXEC is environment": (failed(spawn_errno="ENOEXEC"), "environment", "spawn-errno"),
    "another errno is not classed": (failed(spawn_errno="ENOMEM"), None, "default"),
    "a bare exit 127 is charged": (
        failed(exit_code=127, error="sh: 1: codex: not found"),
        None,
        "default",
    ),
    "a structured 503 is upstream": (
        failed(exit_code=1, vendor_status=503),
        "upstream",
        "vendor-status",
    ),
    "a structured 529 is upstream": (
        failed(exit_code=1, vendor_status=529),
        "upstream",
        "vendor-status",
    ),
    "a structured 429 is upstream": (
        failed(exit_code=1, vendor_status=429),
        "upstream",
        "vendor-status",
    ),
    "a structured 401 is a credential refusal": (
        failed(exit_code=1, vendor_status=401, error="unauthorized"),
        "environment",
        "credential",
    ),
    "a structured 403 is a credential refusal": (
        failed(exit_code=1, vendor_status=403, error="Internal server error"),
        "environment",
        "credential",
    ),
    "the CLI's own not-logged-in envelope is a credential refusal": (
        failed(exit_code=1, credential="run `claude /login`", error="Not logged in"),
        "environment",
        "credential",
    ),
    "401 in text alone is not environment": (
        failed(exit_code=1, error="HTTP/1.1 401 Unauthorized: invalid x-api-key"),
        None,
        "default",
    ),
    "'not logged in' in text alone is not environment": (
        failed(exit_code=1, error="Not logged in · Please run /login"),
        None,
        "default",
    ),
    "a structured 404 is not classed": (
        failed(exit_code=1, vendor_status=404, error="not found"),
        None,
        "default",
    ),
    "upstream text is upstream": (
        failed(exit_code=1, error="HTTP/1.1 503 Service Unavailable"),
        "upstream",
        "upstream-text",
    ),
    "a question is a decision": (
        failed(exit_code=0, question="Which database?"),
        "decision",
        "decision",
    ),
    "anything else is charged": (
        failed(exit_code=1, error="TypeError: x is undefined"),
        None,
        "default",
    ),
}


@pytest.mark.parametrize(("result", "cls", "rule"), CLASSIFY.values(), ids=CLASSIFY.keys())
def test_classify(result: SpawnResult, cls: str | None, rule: str) -> None:
    classified = classify(result)
    assert classified.failure_class == cls
    assert classified.rule == rule


def test_spawn_errno_gives_positive_no_effect_evidence() -> None:
    evidence = classify(failed(spawn_errno="ENOENT")).evidence
    assert (evidence.effects, evidence.output, evidence.refusal) == ("absent", "absent", "absent")
    assert (evidence.source, evidence.ref) == ("exec:spawn-errno", "ENOENT")
    assert passes_gate(evidence)


def test_a_success_is_never_classed() -> None:
    result = SpawnResult.model_validate({"ok": True, "class": "upstream", "reply": "{}"})
    assert classify(result).failure_class is None


def test_rules_are_in_spec_order() -> None:
    assert [name for name, _ in RULES] == [
        "timeout",
        "budget",
        "spawn-errno",
        "credential",
        "usage-window",
        "plan",
        "billing",
        "no-response",
        "vendor-status",
        "upstream-text",
        "decision",
        "default",
    ]


def test_failure_text_keeps_the_tail() -> None:
    text = failure_text("x" * 10_000 + "\nHTTP/1.1 503 Service Unavailable", "")
    assert len(text) == ERROR_LIMIT
    assert text.startswith("…")
    assert text.endswith("HTTP/1.1 503 Service Unavailable")


def test_failure_text_is_stderr_then_stdout() -> None:
    assert failure_text("err", "out") == "err\nout"
    assert tail("short") == "short"


ABSENT = nothing_happened("codex:jsonl", "events 0-2")

GATE = {
    "all absent with source and ref is uncharged": ("upstream", ABSENT, True),
    "effects observed is charged": (
        "upstream",
        ABSENT.model_copy(update={"effects": "observed"}),
        False,
    ),
    "output observed is charged": (
        "upstream",
        ABSENT.model_copy(update={"output": "observed"}),
        False,
    ),
    "effects unknown is charged": (
        "upstream",
        ABSENT.model_copy(update={"effects": "unknown"}),
        False,
    ),
    "output unknown is charged": (
        "upstream",
        ABSENT.model_copy(update={"output": "unknown"}),
        False,
    ),
    "refusal unknown is charged": (
        "upstream",
        ABSENT.model_copy(update={"refusal": "unknown"}),
        False,
    ),
    "a declared refusal is charged": (
        "upstream",
        ABSENT.model_copy(update={"refusal": "declared"}),
        False,
    ),
    "absence without a source is charged": (
        "upstream",
        ABSENT.model_copy(update={"source": None}),
        False,
    ),
    "absence without a ref is charged": (
        "upstream",
        ABSENT.model_copy(update={"ref": None}),
        False,
    ),
    "null evidence is charged": ("upstream", None, False),
    "environment with absence is uncharged": ("environment", ABSENT, True),
    "environment with unknown evidence is charged": ("environment", UNKNOWN, False),
    "a decision needs no evidence": ("decision", None, True),
    "no class is charged": (None, ABSENT, False),
}


@pytest.mark.parametrize(("cls", "evidence", "uncharged"), GATE.values(), ids=GATE.keys())
def test_evidence_gate(cls: str | None, evidence: Evidence | None, uncharged: bool) -> None:
    assert is_uncharged("failed", cls, evidence) is uncharged  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["source", "ref", "rule"])
def test_evidence_names_are_non_empty_or_null(field: str) -> None:
    """SPEC §4: ``source``, ``ref`` and ``rule`` are non-empty strings or null."""
    assert getattr(Evidence.model_validate({field: None}), field) is None
    assert getattr(Evidence.model_validate({field: "x"}), field) == "x"
    with pytest.raises(ValidationError, match="at least 1 character"):
        Evidence.model_validate({field: ""})


@pytest.mark.parametrize("outcome", ["timed_out", "lost", "abandoned", "succeeded"])
def test_only_a_failed_outcome_can_be_uncharged(outcome: str) -> None:
    assert not is_uncharged(outcome, "upstream", ABSENT)


def attempt(
    ok: bool = False, cls: str | None = None, evidence: Evidence = ABSENT
) -> AgentAttemptProof:
    return AgentAttemptProof.model_validate({"ok": ok, "class": cls, "evidence": evidence})


def agent(*attempts: AgentAttemptProof, name: str = "a") -> AgentProof:
    return AgentProof(agent=name, attempts=attempts)


PRODUCTIVE = ABSENT.model_copy(update={"output": "observed"})

RUN_CLASS = {
    "a succeeded run is never classed": (
        RunProof(succeeded=True, agents=(agent(attempt(cls="upstream")),)),
        None,
    ),
    "one environment agent": (
        RunProof(succeeded=False, agents=(agent(attempt(cls="environment")),)),
        "environment",
    ),
    "environment beats upstream": (
        RunProof(
            succeeded=False,
            agents=(agent(attempt(cls="upstream")), agent(attempt(cls="environment"), name="b")),
        ),
        "environment",
    ),
    "a productive sibling charges the run": (
        RunProof(
            succeeded=False,
            agents=(
                agent(attempt(ok=True, evidence=UNKNOWN)),
                agent(attempt(cls="environment"), name="b"),
            ),
        ),
        None,
    ),
    "an earlier productive in-agent attempt charges the run": (
        RunProof(
            succeeded=False, agents=(agent(attempt(evidence=PRODUCTIVE), attempt(cls="upstream")),)
        ),
        None,
    ),
    "a 503 then a schema-invalid reply is charged": (
        RunProof(
            succeeded=False, agents=(agent(attempt(cls="upstream"), attempt(evidence=PRODUCTIVE)),)
        ),
        None,
    ),
    "a failure swallowed by a fan-out keeps its class": (
        RunProof(
            succeeded=False,
            agents=(agent(attempt(cls="upstream")), agent(attempt(cls="upstream"), name="b")),
        ),
        "upstream",
    ),
    "a declared decision overrides": (
        RunProof(succeeded=False, question="Which?", agents=(agent(attempt(evidence=PRODUCTIVE)),)),
        "decision",
    ),
    "an empty set of agents proves nothing": (RunProof(succeeded=False), None),
}


@pytest.mark.parametrize(("proof", "cls"), RUN_CLASS.values(), ids=RUN_CLASS.keys())
def test_run_class(proof: RunProof, cls: str | None) -> None:
    assert derive_run_class(proof)[0] == cls


def test_run_evidence_is_absent_only_where_every_agent_shows_it() -> None:
    proof = RunProof(
        succeeded=False,
        agents=(
            agent(attempt(cls="environment")),
            agent(attempt(cls="upstream", evidence=UNKNOWN), name="b"),
        ),
    )
    cls, evidence = derive_run_class(proof)
    assert cls == "environment"
    assert not passes_gate(evidence)
    assert not is_uncharged("failed", cls, evidence)
