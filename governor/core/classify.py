"""Failure classification: one ordered table of named rules over a ``SpawnResult``.

Rules (SPEC §4; the first rule that matches wins, and its name is recorded):
    1. ``timeout``        the child was killed for running too long -> work failure
                          (charged), even if it exited 0 afterwards.
    1b. ``budget``        governor's relay refused a model request itself because the
                          goal's budget was spent mid-run (``wire.gated``) -> no class:
                          a charged failure named ``budget``; what the agent did stays.
    2. ``spawn-errno``    the process never started (ENOENT, EACCES, ENOEXEC)
                          -> ``environment`` with positive no-effect evidence. A shell
                          exiting 127 without an errno is *not* classed.
    3. ``credential``     a structured credential refusal: a vendor status 401 or 403,
                          or the CLI's own "not logged in / invalid API key" envelope
                          (the adapter sets ``credential`` to the remedy) ->
                          ``environment`` (SPEC §11.8). Text alone never matches.
    4. ``usage-window``   the vendor said the account's usage window is spent and when it
                          reopens (codex ``usage_limit_reached``, Anthropic's unified
                          rate limit ``rejected``) -> ``upstream``; the reset and the
                          account are on the result (SPEC §13.2).
    5. ``plan``           the account's plan does not include the product at all (codex
                          ``usage_not_included``) -> ``environment`` (SPEC §13.2).
    6. ``billing``        the account cannot pay: a vendor code ``insufficient_quota`` or
                          ``billing_error``, HTTP 402, or the CLI's own envelope saying
                          so (the adapter sets ``billing`` to the remedy) ->
                          ``environment`` whatever the status, 429 included (SPEC §12.6).
    7. ``no-response``    no HTTP response came back (SPEC §12.7): a vendor that could
                          not be reached at all -> ``upstream`` when its upstream has
                          answered before (an outage), ``environment`` when it never has
                          (a wrong base URL, network or proxy); a connection reset or
                          closed before any response byte -> ``upstream``.
    8. ``vendor-status``  a structured vendor status of 5xx, 529 or 429 -> ``upstream``.
    9. ``upstream-text``  a short list over the failure text: 429/5xx in status
                          context, or a handful of phrases, their words joined by
                          space, ``_``, ``-`` or nothing (SPEC §11.7) -> ``upstream``.
   10. ``decision``       the agent's structured reply asks a person -> ``decision``.
   11. ``default``        anything else -> no class: a charged work failure.

**Wire first** (SPEC §13.1, ``governor.core.wire_evidence``): when the relay saw the call's
model requests (``SpawnResult.wire``), the rules run over what the vendor sent — its
status, code, reset, whether any response byte came back, with the wire's absence
evidence — and not over the CLI's text (``upstream-text`` does not apply); the rules over
the text alone run too, and when the two classes differ the wire's wins and the evidence
records ``disagreement``. A call whose wire carried no model request is judged by its text.
No response in a call where the vendor answered before (``wire.responded``) is never
"never reached": reached is reached (SPEC §13.4).

Every classified failure records what the rules read (``Evidence.observation``, built by
``observation_of``), so ``governor.core.reclassify`` can run them again.

A class says *why*; whether the run is charged is decided separately by the evidence
gate (``governor.core.evidence``). A false upstream match grants a free retry, so the
text list stays tight, and the tests pin both what matches and what must not.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from governor.core.evidence import (
    UNKNOWN,
    Disagreement,
    Evidence,
    FailureClass,
    nothing_happened,
)
from governor.core.observation import (
    BILLING_CODES,
    BILLING_STATUS,
    ClaudeFacts,
    CodexFacts,
    Connection,
    RawObservation,
    Usage,
    WireFacts,
)
from governor.core.remedy import GENERIC_BILLING_REMEDY, GENERIC_REMEDY
from governor.core.upstream_text import is_upstream_status, is_upstream_text
from governor.core.wire_evidence import (
    CREDENTIAL_CODES,
    NOT_INCLUDED_CODE,
    WINDOW_CODE,
    read_wire,
    wire_absence,
)

ERROR_LIMIT: Final = 2000
"""Longest failure text recorded; longer text keeps its *tail* (vendors put the reason last)."""

ENVIRONMENT_ERRNOS: Final = frozenset({"ENOENT", "EACCES", "ENOEXEC"})
"""Errnos that prove the binary could not be started."""
CREDENTIAL_STATUSES: Final = frozenset({401, 403})
"""Structured vendor statuses that refuse the credential: a precondition, not an outage."""


class SpawnResult(BaseModel):
    """One agent call, as a value: what happened, its class and its evidence."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    ok: bool
    """True when the call produced a reply the harness accepted."""
    exit_code: int | None = None
    """The child's exit status (negative: killed by that signal); None if it never ran."""
    spawn_errno: str | None = None
    """The OS errno name when the child never started, e.g. ``ENOENT``."""
    timed_out: bool = False
    """The child was killed for running past its limit."""
    vendor_status: int | None = None
    """A status read from a structured vendor envelope (e.g. Claude's ``api_error_status``)."""
    vendor_retries: tuple[int | None, ...] = Field(default=(), max_length=20)
    """Statuses of refused requests the agent CLI retried by itself within this call (None:
    no HTTP status, e.g. a broken stream it re-requested): claude's ``system/api_retry``,
    codex's request retries. The first 20."""
    credential: str | None = Field(default=None, min_length=1, max_length=500)
    """Set by an adapter that read a structured credential refusal (a vendor 401/403, or
    the CLI's own "not logged in" envelope): what a person must do about it, e.g.
    ``set ANTHROPIC_API_KEY to a valid key, or run `claude /login```."""
    error: str | None = Field(default=None, max_length=ERROR_LIMIT)
    """Tail-preserved failure text."""
    failure_class: FailureClass | None = Field(default=None, alias="class")
    """The class the rules gave the failure; never set on success."""
    evidence: Evidence = UNKNOWN
    """What was observed about the failure."""
    reply: str | None = None
    """The reply text (the agent's answer), when there is one."""
    question: str | None = None
    """The question the agent asks a person, for a ``decision``."""
    retry_after_s: float | None = Field(default=None, ge=0)
    """The vendor's Retry-After hint, in seconds."""
    duration_s: float = Field(default=0.0, ge=0)
    """Wall time of the call, in seconds."""
    cost_usd: float | None = Field(default=None, ge=0)
    """Cost the vendor reported for the call."""
    usage: Usage | None = None
    """Tokens the vendor reported the call used."""
    vendor_code: str | None = Field(default=None, min_length=1, max_length=100)
    """The vendor's structured error code, when the adapter read one (``insufficient_quota``,
    ``overloaded_error`` …)."""
    billing: str | None = Field(default=None, min_length=1, max_length=500)
    """Set by an adapter that read that the account cannot pay (SPEC §12.6): what a person
    must do about it."""
    connection: Connection | None = None
    """No HTTP response came back (SPEC §12.7): ``unreachable`` (never connected) or
    ``reset`` (connected, then reset or closed before a response byte)."""
    connection_detail: str | None = Field(default=None, min_length=1, max_length=100)
    """What said so (an errno, the CLI's words)."""
    stopped: bool = False
    """The adapter ended the agent at its first sign of an unreachable vendor (SPEC §12.7)."""
    endpoint: str | None = Field(default=None, min_length=1, max_length=500)
    """The vendor endpoint the call was for, when the adapter knows it (for the remedy)."""
    answered_before: bool | None = None
    """Whether the upstream's health record had seen it answer before (None: not asked;
    ``governor.drive.health`` asks, and classifies again)."""
    stream: ClaudeFacts | CodexFacts | None = None
    """The summary of the stream the adapter's absence rule judged."""
    upstream: str | None = Field(default=None, min_length=1, max_length=200)
    """The upstream the failure names (a command envelope's ``upstream``, SPEC §12.9)."""
    wire: WireFacts | None = None
    """What governor's relay saw pass between the CLI and its vendor (SPEC §13.1)."""
    account: str | None = Field(default=None, min_length=1, max_length=64)
    """An opaque digest of the account the call ran under — never the credential (SPEC §13.2)."""
    resets_at: datetime | None = None
    """When the vendor said the account's usage window reopens (SPEC §13.2)."""

    @property
    def rule(self) -> str | None:
        """Name of the classification rule that fired (recorded in the evidence)."""
        return self.evidence.rule


def tail(text: str, limit: int = ERROR_LIMIT) -> str:
    """Keep the last ``limit`` characters of ``text``, marking a cut with a leading ``…``."""
    if len(text) <= limit:
        return text
    return "…" + text[len(text) - limit + 1 :]


def failure_text(stderr: str, stdout: str, limit: int = ERROR_LIMIT) -> str:
    """The recorded failure text: stderr then stdout, tail-preserved."""
    stderr = stderr.rstrip("\n")
    joined = f"{stderr}\n{stdout}" if stderr and stdout else stderr or stdout
    return tail(joined.strip("\n"), limit)


Verdict = tuple[FailureClass | None, Evidence]
Rule = Callable[[SpawnResult], Verdict | None]


def _timeout(result: SpawnResult) -> Verdict | None:
    return (None, result.evidence) if result.timed_out else None


def _budget(result: SpawnResult) -> Verdict | None:
    return (None, result.evidence) if result.wire is not None and result.wire.gated else None


def _spawn_errno(result: SpawnResult) -> Verdict | None:
    if result.spawn_errno in ENVIRONMENT_ERRNOS:
        return ("environment", nothing_happened("exec:spawn-errno", result.spawn_errno or ""))
    return None


def _credential(result: SpawnResult) -> Verdict | None:
    refused = result.credential is not None or result.vendor_status in CREDENTIAL_STATUSES
    return ("environment", result.evidence) if refused else None


def _usage_window(result: SpawnResult) -> Verdict | None:
    window = result.vendor_code == WINDOW_CODE or result.resets_at is not None
    return ("upstream", result.evidence) if window else None


def _plan(result: SpawnResult) -> Verdict | None:
    return ("environment", result.evidence) if result.vendor_code == NOT_INCLUDED_CODE else None


def is_billing(result: SpawnResult) -> bool:
    """The account behind the call cannot pay (the ``billing`` rule)."""
    return (
        result.billing is not None
        or result.vendor_code in BILLING_CODES
        or result.vendor_status == BILLING_STATUS
    )


def _billing(result: SpawnResult) -> Verdict | None:
    return ("environment", result.evidence) if is_billing(result) else None


def _no_response(result: SpawnResult) -> Verdict | None:
    reached = result.answered_before or (result.wire is not None and result.wire.responded)
    if result.connection == "reset" or (result.connection == "unreachable" and reached):
        return ("upstream", result.evidence)
    return ("environment", result.evidence) if result.connection == "unreachable" else None


def _vendor_status(result: SpawnResult) -> Verdict | None:
    return ("upstream", result.evidence) if is_upstream_status(result.vendor_status) else None


def _upstream_text(result: SpawnResult) -> Verdict | None:
    return ("upstream", result.evidence) if is_upstream_text(result.error) else None


def _decision(result: SpawnResult) -> Verdict | None:
    return ("decision", result.evidence) if result.question else None


def _default(result: SpawnResult) -> Verdict | None:
    return (None, result.evidence)


RULES: Final[tuple[tuple[str, Rule], ...]] = (
    ("timeout", _timeout),
    ("budget", _budget),
    ("spawn-errno", _spawn_errno),
    ("credential", _credential),
    ("usage-window", _usage_window),
    ("plan", _plan),
    ("billing", _billing),
    ("no-response", _no_response),
    ("vendor-status", _vendor_status),
    ("upstream-text", _upstream_text),
    ("decision", _decision),
    ("default", _default),
)
"""The classification table, in order. The first rule that returns a verdict wins."""


def _judge(result: SpawnResult, *, text: bool = True) -> tuple[str, FailureClass | None, Evidence]:
    """The first rule that matches: its name, class and evidence (``text``: the
    upstream-text rule may match)."""
    for name, rule in RULES:
        if name == "upstream-text" and not text:
            continue
        verdict = rule(result)
        if verdict is not None:
            return name, verdict[0], verdict[1]
    raise AssertionError("the default rule always matches")  # pragma: no cover


def with_wire(result: SpawnResult) -> SpawnResult | None:
    """The result as the wire shows it (see the module rules), or None when the wire
    carried no model request."""
    wire = result.wire
    reading = read_wire(wire)
    if wire is None or reading is None:
        return None
    billing = reading.code in BILLING_CODES or reading.status == BILLING_STATUS
    refused = reading.status in CREDENTIAL_STATUSES or reading.code in CREDENTIAL_CODES
    resets = datetime.fromtimestamp(reading.resets_at, UTC) if reading.resets_at else None
    return result.model_copy(
        update={
            "vendor_status": reading.status,
            "vendor_code": reading.code[:100] if reading.code else None,
            "connection": reading.connection,
            "connection_detail": reading.detail[:100] if reading.detail else None,
            "billing": (result.billing or GENERIC_BILLING_REMEDY) if billing else None,
            "credential": (result.credential or GENERIC_REMEDY) if refused else None,
            "resets_at": resets if reading.window else None,
            "retry_after_s": reading.retry_after_s
            if reading.retry_after_s is not None
            else result.retry_after_s,
            "evidence": wire_absence(wire, result.evidence, result.stream),
        }
    )


def classify(result: SpawnResult) -> SpawnResult:
    """Give a failed result its class and stamp on its evidence the rule that fired and
    what the rules read (``observation_of``); with wire evidence, the wire first and any
    disagreement of the text (see the module rules).

    A successful result is returned unchanged: a success is never classed.
    """
    if result.ok:
        return result.model_copy(update={"failure_class": None})
    observation = observation_of(result)
    text_rule, text_class, evidence = _judge(result)
    wired = with_wire(result)
    stamped: dict[str, object] = {"rule": text_rule, "observation": observation}
    if wired is not None:
        rule, failure_class, evidence = _judge(wired, text=False)
        stamped["rule"] = rule
        if failure_class != text_class:
            stamped["disagreement"] = Disagreement(
                text_class=text_class, text_rule=text_rule, cli=_cli(result)
            )
        result, text_class = wired, failure_class
    return result.model_copy(
        update={"failure_class": text_class, "evidence": evidence.model_copy(update=stamped)}
    )


def _cli(result: SpawnResult) -> str | None:
    """The CLI and its version: as its requests named it, else as its stream did."""
    if result.wire is not None and result.wire.agent:
        return result.wire.agent
    version = result.stream.version if isinstance(result.stream, ClaudeFacts) else None
    return f"claude {version}" if version else None


def observation_of(result: SpawnResult) -> RawObservation:
    """What the rules read of a failed result, as it is recorded (issue 25 §4)."""
    stream = result.stream
    status = result.vendor_status
    return RawObservation(
        timed_out=result.timed_out,
        stopped=result.stopped,
        spawn_errno=result.spawn_errno[:100] if result.spawn_errno else None,
        vendor_status=status if status is not None and 0 <= status <= 999 else None,
        vendor_code=result.vendor_code,
        credential=result.credential is not None,
        billing=result.billing is not None,
        connection=result.connection,
        connection_detail=result.connection_detail,
        answered_before=result.answered_before,
        claude=stream if isinstance(stream, ClaudeFacts) else None,
        codex=stream if isinstance(stream, CodexFacts) else None,
        wire=result.wire,
    )
