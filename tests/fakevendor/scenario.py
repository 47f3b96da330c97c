"""What the fake vendor answers, per test: a scenario of steps, one per model request.

Each *model* request (``POST /v1/responses`` or ``POST /v1/messages``) consumes the next
:class:`Step`; the last step repeats, so a CLI that retries a 503 is seen retrying and a
test can count its requests. The constructors below are the vocabulary tests use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

StepKind = Literal[
    "reply",
    "status",
    "tool_call",
    "fail_after_text",
    "malformed",
    "stream_error",
    "hangup",
    "stall",
]

TOOL_COMMAND = "echo governor-fake-tool"
"""The harmless shell command a scripted tool call asks the agent to run."""

PARTIAL_TEXT = "Let me look at the repository first"
"""The text a ``fail_after_text`` step streams before it breaks the stream."""


@dataclass(frozen=True, slots=True)
class Step:
    """How the fake vendor answers one model request.

    Attributes:
        kind: ``reply`` streams ``text`` and completes; ``status`` answers HTTP
            ``status`` with a vendor-shaped error body; ``tool_call`` streams one shell
            tool call and completes (the CLI runs it and asks again); ``fail_after_text``
            streams part of a reply, then an in-stream error event for ``status``;
            ``malformed`` answers 200 with a body that is not a valid event stream;
            ``stream_error`` answers 200 and starts a response, then sends an in-stream
            error event carrying ``code`` before any content (Anthropic's usual overload:
            ``message_start``, ``ping``, ``error``); ``stall`` reads the request and
            sends nothing until the client gives up (at most ``STALL_S``); ``hangup``
            reads the request and
            closes the connection without a response byte.
        text: the reply text for ``reply``.
        status: the HTTP status for ``status`` and ``fail_after_text``.
        retry_after_s: a ``Retry-After`` header value for ``status``, in seconds.
        tool: for ``tool_call`` in the Responses dialect (codex), a tool to call by
            name with no arguments instead of the shell (e.g. ``get_goal``, which leaves
            no item in codex's JSONL). The Messages dialect always calls ``Bash``.
        command: the shell command a shell ``tool_call`` runs.
        code: the vendor's error code for ``status`` and ``stream_error`` (e.g.
            ``insufficient_quota``, ``billing_error``, ``overloaded_error``); None: the
            dialect's usual code for the status.
        message: the vendor's error message with ``code`` (None: the dialect's usual one).
        headers: extra response headers of a ``status`` answer (a usage window's reset).
        fields: extra fields of a ``status`` answer's error object (``resets_at`` …).
    """

    kind: StepKind
    text: str = ""
    status: int = 200
    retry_after_s: int | None = None
    tool: str | None = None
    command: str = TOOL_COMMAND
    code: str | None = None
    message: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    fields: tuple[tuple[str, str | int], ...] = ()


@dataclass(frozen=True, slots=True)
class Scenario:
    """The steps a fake vendor plays, one per model request; the last one repeats."""

    steps: tuple[Step, ...]

    def step(self, index: int) -> Step:
        """The step for the ``index``-th (0-based) model request."""
        return self.steps[min(index, len(self.steps) - 1)]


def reply(text: str) -> Scenario:
    """A valid streamed reply carrying ``text`` (e.g. a plan JSON object)."""
    return Scenario((Step("reply", text=text),))


def status(
    code: int,
    retry_after: int | None = None,
    *,
    error_code: str | None = None,
    message: str | None = None,
) -> Scenario:
    """HTTP ``code`` on every model request: the first one, and any retry; ``error_code``
    and ``message`` replace the vendor's usual error body for that status."""
    step = Step("status", status=code, retry_after_s=retry_after, code=error_code, message=message)
    return Scenario((step,))


def stream_error(error_code: str, message: str | None = None) -> Scenario:
    """HTTP 200, a response started, then an in-stream error ``error_code`` before any
    content, on every model request (Anthropic's ``overloaded_error``, OpenAI's
    ``response.failed``)."""
    return Scenario((Step("stream_error", code=error_code, message=message),))


STALL_S = 60.0
"""The longest a ``stall`` step keeps a connection open without a byte."""


def stall() -> Scenario:
    """Read each model request and send nothing: the CLI times out before any byte."""
    return Scenario((Step("stall"),))


def hangup() -> Scenario:
    """Read each model request and close the connection without answering."""
    return Scenario((Step("hangup"),))


def fail_after_text(code: int = 500) -> Scenario:
    """Stream part of a reply, then break the stream with an error event for ``code``."""
    return Scenario((Step("fail_after_text", status=code),))


def fail_after_tool_call(
    code: int = 500, *, tool: str | None = None, command: str = TOOL_COMMAND
) -> Scenario:
    """Stream a tool call (the CLI runs it), then answer the follow-up with HTTP ``code``."""
    return Scenario((Step("tool_call", tool=tool, command=command), Step("status", status=code)))


def malformed() -> Scenario:
    """Answer 200 with a body that is not a valid event stream."""
    return Scenario((Step("malformed"),))


def usage_window_openai(resets_at: int, now: int) -> Scenario:
    """Codex's ChatGPT-plan window spent (SPEC §13.2): HTTP 429 ``usage_limit_reached`` with
    ``resets_at`` and the ``x-codex-*-reset-after-seconds`` headers."""
    after = str(max(resets_at - now, 0))
    step = Step(
        "status",
        status=429,
        code="usage_limit_reached",
        message="The usage limit has been reached",
        headers=(
            ("x-codex-primary-reset-after-seconds", after),
            ("x-codex-primary-used-percent", "100"),
        ),
        fields=(("plan_type", "plus"), ("resets_at", resets_at), ("resets_in_seconds", int(after))),
    )
    return Scenario((step,))


def usage_window_anthropic(resets_at: int) -> Scenario:
    """An Anthropic subscription window spent (SPEC §13.2): HTTP 429 with
    ``anthropic-ratelimit-unified-status: rejected`` and its reset."""
    step = Step(
        "status",
        status=429,
        code="rate_limit_error",
        message="This request would exceed your account's rate limit. Please try again later.",
        headers=(
            ("anthropic-ratelimit-unified-status", "rejected"),
            ("anthropic-ratelimit-unified-reset", str(resets_at)),
            ("anthropic-ratelimit-unified-5h-status", "rejected"),
            ("anthropic-ratelimit-unified-5h-reset", str(resets_at)),
            ("anthropic-ratelimit-unified-5h-utilization", "1.0"),
            ("anthropic-ratelimit-unified-representative-claim", "five_hour"),
        ),
    )
    return Scenario((step,))
