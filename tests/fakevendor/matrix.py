"""The scenario matrix of the real-CLI tests: each case, how it is staged, and its verdict.

One table per CLI. The recorder (``tests.fakevendor.record``) records every case into
``tests/fixtures/vendor/<cli>-<case>.*``; the fixture tests read those recordings, and the
live tests run the same cases against whatever CLI is installed, so a newer CLI re-runs
the whole recorded matrix and is compared case by case with what was recorded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, TypeVar

from governor.core.classify import SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import is_uncharged_failure
from governor.exec.claude import ClaudeHarness
from governor.exec.codex import CodexHarness
from tests.fakevendor import scenario as sc
from tests.fakevendor.anthropic_api import CREDIT_TOO_LOW
from tests.fakevendor.clis import claude_env, claude_profile, codex_env, codex_profile, dead_url

T = TypeVar("T")
FIXTURES: Final = Path(__file__).resolve().parents[1] / "fixtures" / "vendor"
PLAN_REPLY: Final = 'Here is the plan.\n{"decision": "apply", "rationale": "one step is enough", "work": [{"key": "hello", "title": "Say hello", "objective": "Print hello"}]}'
MCP_CONFIG: Final = json.dumps({"mcpServers": {"tiny": {"command": "true"}}})
"""An MCP server for claude's ``--mcp-config`` (it fails to start; claude still lists it)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a case must come to: the class, the rule, whether it is charged, what was seen."""

    ok: bool = False
    failure_class: str | None = None
    rule: str | None = None
    uncharged: bool = False
    """A failure the evidence gate lets go free."""
    vendor_status: int | None = None
    effects: str = "unknown"
    output: str = "unknown"
    retry_after_s: float | Literal["claude's back-off"] | None = None
    """The recorded wait; "claude's back-off" is claude's own jittered wait (under 1 s)."""
    credential: bool = False
    vendor_retries: tuple[int | None, ...] = ()
    """Statuses of the refused requests the CLI retried by itself."""
    billing: bool = False
    """The adapter read that the account cannot pay (SPEC §12.6)."""
    connection: str | None = None
    """How the call got no HTTP response (SPEC §12.7)."""
    vendor_code: str | None = None


RULE_CODES: Final = frozenset(
    {
        "billing_error",
        "insufficient_quota",
        "usage_limit_reached",
        "usage_not_included",
        "rate_limit_exceeded",
        "server_is_overloaded",
        "slow_down",
        "server_error",
    }
)
"""Vendor codes a verdict names (the codes the rules act on); the relay also reads the
usual code of each status (``api_error`` for a 503), which a verdict leaves out."""


def verdict_of(result: SpawnResult) -> Verdict:
    """The verdict a run came to (``retry_after_s`` under 1 s reads as claude's back-off;
    only ``RULE_CODES`` are named)."""
    wait = result.retry_after_s
    return Verdict(
        ok=result.ok,
        failure_class=result.failure_class,
        rule=result.rule,
        uncharged=not result.ok and is_uncharged_failure(result.failure_class, result.evidence),
        vendor_status=result.vendor_status,
        effects=result.evidence.effects,
        output=result.evidence.output,
        retry_after_s="claude's back-off" if wait is not None and wait < 1 else wait,
        credential=result.credential is not None,
        vendor_retries=result.vendor_retries,
        billing=result.billing is not None,
        connection=result.connection,
        vendor_code=result.vendor_code if result.vendor_code in RULE_CODES else None,
    )


@dataclass(frozen=True, slots=True)
class Case:
    """One staged scenario and what it must come to."""

    scenario: sc.Scenario
    expect: Verdict
    args: tuple[str, ...] = ()
    """Profile arguments."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables added to the source environment and named in the profile's ``env``."""
    drop_key: bool = False
    """Run without the API key variable: the CLI's own "not logged in" path."""
    dead: bool = False
    """Point the CLI at a port nothing listens on instead of the fake vendor (SPEC §12.7)."""
    since: Mapping[str, Verdict] = field(default_factory=dict)
    """What a release from this version on comes to from its text, where the CLI itself
    behaves otherwise (it reports a status it did not, makes fewer requests): never another
    class or charge (``classification``; ``test_matrix_versions`` checks it)."""
    needs_relay: Mapping[str, str] = field(default_factory=dict)
    """Releases from this version on whose verdict only the wire can give in full, and
    why: from the text alone their class and charge must hold, the rest is expected to
    fail (through the relay they must hold whole)."""
    wire: Verdict | None = None
    """What the case comes to through governor's relay, when the wire says more than the
    text (SPEC §13.1); None: the same as the text's verdict."""
    wire_since: Mapping[str, Verdict] = field(default_factory=dict)
    """Like ``since``, through the relay."""

    def verdict(self, version: str) -> Verdict:
        """What release ``version`` must come to from its text alone."""
        return _from(self.since, version) or self.expect

    def relay_reason(self, version: str) -> str | None:
        """Why release ``version``'s full verdict needs the relay, if it does."""
        return _from(self.needs_relay, version)

    def expected(self, relay: bool, version: str | None = None) -> Verdict:
        """The verdict through the relay (``relay``) or from the text alone, of release
        ``version`` (None: the oldest)."""
        text = self.verdict(version) if version else self.expect
        if not relay:
            return text
        newer = _from(self.wire_since, version) if version else None
        return newer or self.wire or text

    def profile(self, codex: bool, *, relay: bool = True) -> Profile:
        base = codex_profile(args=self.args) if codex else claude_profile(args=self.args)
        update: dict[str, object] = {"env": (*base.env, *self.env)}
        if not relay:
            update["relay"] = False
        return base.model_copy(update=update)

    def source_env(self, codex: bool, home: Path, base_url: str, cli: str) -> dict[str, str]:
        env = (codex_env if codex else claude_env)(home, dead_url() if self.dead else base_url, cli)
        env.update(self.env)
        if self.drop_key:
            env.pop("FAKE_VENDOR_API_KEY" if codex else "ANTHROPIC_API_KEY")
        return env


def _from(by_version: Mapping[str, T], version: str) -> T | None:
    """The entry of the newest version in ``by_version`` at or below ``version``."""
    reached = [v for v in by_version if _key(v) <= _key(version)]
    return by_version[max(reached, key=_key)] if reached else None


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def at_least(version: str, since: str) -> bool:
    """Whether release ``version`` is ``since`` or newer."""
    return _key(version) >= _key(since)


def classification(verdict: Verdict) -> tuple[bool, str | None, bool]:
    """What must hold on every release: success, the class, and whether it is charged."""
    return verdict.ok, verdict.failure_class, verdict.uncharged


ENVIRONMENT_RULES: Final = frozenset({"credential", "billing"})


def _free(
    status: int | None, *, rule: str = "vendor-status", cls: str | None = None, **kw: object
) -> Verdict:
    cls = cls or ("environment" if rule in ENVIRONMENT_RULES else "upstream")
    return Verdict(
        failure_class=cls,
        rule=rule,
        uncharged=True,
        vendor_status=status,
        effects="absent",
        output="absent",
        credential=rule == "credential",
        **kw,  # type: ignore[arg-type]
    )


BACKOFF: Final = "claude's back-off"
FALLBACK_ON: Final = {"CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK": "0"}

CLAUDE: Final[dict[str, Case]] = {
    "reply": Case(sc.reply(PLAN_REPLY), Verdict(ok=True)),
    "503": Case(sc.status(503), _free(503, retry_after_s=BACKOFF, vendor_retries=(503,))),
    "529": Case(sc.status(529), _free(529, retry_after_s=BACKOFF, vendor_retries=(529,))),
    "500": Case(sc.status(500), _free(500, retry_after_s=BACKOFF, vendor_retries=(500,))),
    "429": Case(
        sc.status(429, retry_after=2),
        _free(429, retry_after_s=2.0, vendor_retries=(429,)),
        needs_relay={
            "2.1.332": "claude 2.1.332 reports its own jittered wait (2.0-2.5 s for a "
            "Retry-After of 2 s); the vendor's header is only on the wire"
        },
    ),
    "429-retry-after-beyond-60s": Case(
        sc.status(429, retry_after=61),
        _free(429),
        wire=_free(429, retry_after_s=61.0),  # the vendor's Retry-After, read on the wire
    ),
    "401": Case(
        sc.status(401),
        _free(401, rule="credential", retry_after_s=BACKOFF, vendor_retries=(401,)),
    ),
    "403": Case(sc.status(403), _free(403, rule="credential")),
    "not-logged-in": Case(
        sc.status(503),
        _free(None, rule="credential"),
        drop_key=True,
    ),
    "503-after-tool-call": Case(
        sc.fail_after_tool_call(503),
        Verdict(
            failure_class="upstream",
            rule="vendor-status",
            vendor_status=503,
            effects="observed",
            output="observed",
            retry_after_s=BACKOFF,
            vendor_retries=(503,),
        ),
    ),
    "500-after-text": Case(
        sc.fail_after_text(500),
        Verdict(failure_class="upstream", rule="upstream-text", output="observed"),
        wire=Verdict(
            failure_class="upstream", rule="vendor-status", vendor_status=500, output="observed"
        ),
    ),
    "fallback-retried-503": Case(
        sc.Scenario((sc.Step("fail_after_text", status=500), sc.Step("status", status=503))),
        Verdict(
            failure_class="upstream",
            rule="vendor-status",
            vendor_status=503,
            output="observed",
            retry_after_s=BACKOFF,
            vendor_retries=(503,),
        ),
        env=FALLBACK_ON,
        needs_relay={
            "2.1.332": "claude 2.1.332 re-sends the broken streamed request without "
            "streaming and prints nothing of it (no api_retry); only the wire sees the "
            "re-sent request and its 503"
        },
        # through the relay the class and charge come from the wire's 503 after streamed
        # content; claude 2.1.332 prints no api_retry, so no back-off and no retry list
        wire_since={
            "2.1.332": Verdict(
                failure_class="upstream",
                rule="vendor-status",
                vendor_status=503,
                output="observed",
            )
        },
    ),
    "503-with-fallback-variable-overridden": Case(
        sc.status(503),
        Verdict(
            failure_class="upstream",
            rule="vendor-status",
            vendor_status=503,
            retry_after_s=BACKOFF,
            vendor_retries=(503,),
        ),
        env=FALLBACK_ON,
        # the wire sees every request, re-sent or not: absence needs no stream flag
        wire=_free(503, retry_after_s=BACKOFF, vendor_retries=(503,)),
    ),
    "503-with-output-format-overridden": Case(
        sc.status(503), Verdict(rule="default"), args=("--output-format", "json")
    ),
    "503-with-an-mcp-server": Case(
        sc.status(503),
        Verdict(
            failure_class="upstream",
            rule="vendor-status",
            vendor_status=503,
            retry_after_s=BACKOFF,
            vendor_retries=(503,),
        ),
        args=("--mcp-config", MCP_CONFIG),
    ),
    "malformed-stream": Case(sc.malformed(), Verdict(rule="default")),
    # SPEC §12.8: Anthropic's usual overload, HTTP 200 + message_start + error; claude
    # 2.1.197 re-requests it twice without an api_retry line, then ends is_error with no
    # status; 2.1.332 re-requests it once (CLAUDE_CODE_MAX_RETRIES=1) and reports 529
    "200-overload-in-stream": Case(
        sc.stream_error("overloaded_error"),
        _free(None, rule="upstream-text", vendor_retries=(None, None)),
        since={"2.1.332": _free(529, vendor_retries=(None,))},
        wire=_free(529, vendor_retries=(None, None)),  # overloaded_error stands for 529
        wire_since={"2.1.332": _free(529, vendor_retries=(None,))},
    ),
    # SPEC §12.6: out of credit
    "402-billing-error": Case(
        sc.status(402, error_code="billing_error"),
        _free(402, rule="billing", billing=True),
        wire=_free(402, rule="billing", billing=True, vendor_code="billing_error"),
    ),
    "credit-balance-too-low": Case(
        sc.status(400, error_code="invalid_request_error", message=CREDIT_TOO_LOW),
        _free(400, rule="billing", billing=True, vendor_code="billing_error"),
    ),
    # SPEC §12.7: no HTTP response. Nothing listening: claude fails in about a second
    "no-listener": Case(
        sc.status(503),
        _free(
            None,
            rule="no-response",
            cls="environment",
            connection="unreachable",
            retry_after_s=BACKOFF,
            vendor_retries=(None,),
        ),
        dead=True,
    ),
    "connection-closed-before-a-response": Case(
        sc.hangup(),
        _free(
            None,
            rule="no-response",
            connection="reset",
            retry_after_s=BACKOFF,
            vendor_retries=(None,),
        ),
    ),
    # SPEC §13.4: no response byte within API_TIMEOUT_MS, claude retries once, then says
    # "Request timed out": a reset before any byte
    "request-timed-out-before-a-byte": Case(
        sc.stall(),
        _free(
            None,
            rule="no-response",
            connection="reset",
            retry_after_s=BACKOFF,
            vendor_retries=(None,),
        ),
        env={"API_TIMEOUT_MS": "3000"},
    ),
    # a 404 on the streamed request: claude re-sends it once without streaming
    "404-resent-without-streaming": Case(
        sc.status(404),
        Verdict(rule="default", vendor_status=404, vendor_retries=(404,)),
        # the wire proves nothing was produced; a 404 is still charged (no class)
        wire=Verdict(
            rule="default",
            vendor_status=404,
            vendor_retries=(404,),
            effects="absent",
            output="absent",
        ),
    ),
}
"""The claude matrix (SPEC §11.9, §12.6-§12.8): what is free, what is charged, and why."""

CODEX: Final[dict[str, Case]] = {
    "401": Case(sc.status(401), _free(401, rule="credential")),
    "403": Case(sc.status(403), _free(403, rule="credential")),
    "missing-key": Case(
        sc.status(503),
        _free(None, rule="credential"),
        drop_key=True,
    ),
    # SPEC §12.6: out of credit, on HTTP 429 and in-stream; a plain rate limit stays upstream
    "429-insufficient-quota": Case(
        sc.status(429, error_code="insufficient_quota"),
        _free(429, rule="billing", billing=True, vendor_code="insufficient_quota"),
    ),
    "insufficient-quota-in-stream": Case(
        sc.stream_error("insufficient_quota"),
        _free(None, rule="billing", billing=True, vendor_code="insufficient_quota"),
    ),
    "429-rate-limit-exceeded": Case(
        sc.status(429, error_code="rate_limit_exceeded"),
        _free(429),
        wire=_free(429, vendor_code="rate_limit_exceeded"),
    ),
    "rate-limit-exceeded-in-stream": Case(
        sc.stream_error("rate_limit_exceeded"),
        _free(None, rule="upstream-text", retry_after_s=1.5, vendor_code="rate_limit_exceeded"),
        wire=_free(429, retry_after_s=1.5, vendor_code="rate_limit_exceeded"),
    ),
    "500-server-error": Case(
        sc.status(500), _free(500), wire=_free(500, vendor_code="server_error")
    ),
    # an in-stream server_error cannot be told from text streamed, then cut (the trace
    # does not show text deltas): charged by the text; the wire sees that no output item
    # was added before it (SPEC §13.3): upstream, free
    "server-error-in-stream": Case(
        sc.stream_error("server_error"),
        Verdict(rule="default", vendor_code="server_error"),
        wire=_free(500, vendor_code="server_error"),
    ),
    # SPEC §12.7: no HTTP response. Nothing listening: ended at codex's first
    # "Reconnecting... waiting for network", never reached -> environment
    "no-listener": Case(
        sc.status(503),
        _free(None, rule="no-response", cls="environment", connection="unreachable"),
        dead=True,
    ),
    "connection-closed-before-a-response": Case(
        sc.hangup(), _free(None, rule="no-response", connection="reset")
    ),
}
"""Codex's matrix of credential, billing and connection cases (SPEC §11.8, §12.6, §12.7;
its first outage matrix is ``tests/exec/test_codex_cli.py``)."""


def harness_for(codex: bool, base_dir: Path) -> ClaudeHarness | CodexHarness:
    return CodexHarness(base_dir) if codex else ClaudeHarness(base_dir)


def line_kinds(stdout: str) -> list[str]:
    """The kind of each JSON line of a stream (``type``, or ``system/<subtype>``)."""
    kinds = []
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            kinds.append("<not JSON>")
            continue
        kind = event.get("type", "?") if isinstance(event, dict) else "?"
        kinds.append(f"system/{event.get('subtype')}" if kind == "system" else kind)
    return kinds
