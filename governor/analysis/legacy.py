"""The legacy reading: the raw observation of a failure recorded before observations were.

Rules (issue 25 §4; decision record 0023, which amends 0014):
    * Histories written before ``evidence.observation`` keep only verdicts: the class, the
      evidence (its ``ref`` names what the adapter saw and why it refused a claim) and the
      failure text. This reads back from those what it can — the vendor's status (the
      ref's ``HTTP NNN``, the text's ``status NNN``), a code the CLI's own words
      name (codex's "Quota exceeded. Check your plan and billing details": the account
      cannot pay; claude's "credit balance is too low"), an errno ``exec:spawn-errno``
      named — and builds the ``RawObservation`` today's classifier reads. The recorded
      evidence is kept as the agent's declaration (its claim, or its lack of one).
    * **Claude's overload inside an HTTP 200 stream** (SPEC §12.8): the old claude rule
      refused every ``stream_event`` line and counted Anthropic's ``message_start``
      placeholder tokens as output, so such a failure was charged. When the recorded ref
      shows nothing else against the claim (no tool, no other line kind, no status, one
      turn, a few output tokens, claude's own overload text), the reading *assumes* those
      lines were the begun requests' ``message_start``/``ping``/``error`` and the tokens
      their placeholders — their types were never recorded. Every such assumption is
      named in ``LegacyReading.assumed`` and shown to the user as inferred.
    * A failure with neither evidence nor text has nothing to read: None ("not recorded").
    * Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from governor.core.evidence import Evidence, FailureClass
from governor.core.observation import BILLING_CODES, ClaudeFacts, RawObservation
from governor.core.upstream_text import is_upstream_text

OWN_WORDS: Final = (
    ("Quota exceeded. Check your plan and billing details", "insufficient_quota"),
    ("credit balance is too low", "billing_error"),
)
"""A CLI's own words for a refusal code (codex's, claude's), as its failure text shows them."""
PLACEHOLDER_TOKENS_MAX: Final = 10
"""The most output tokens read as ``message_start`` placeholders (Anthropic reports one or
two per begun request; claude re-requests an overload twice)."""

_HTTP: Final = re.compile(r"\bHTTP (?P<status>[1-5]\d\d)\b")
_STATUS: Final = re.compile(r"\bstatus (?P<status>[1-5]\d\d)\b")
"""A status in the failure text: codex's ``unexpected status 503``, ``status 503 …``."""
_LINES: Final = re.compile(r"^claude-stream:lines 0-(?P<last>\d{1,9})\b")
_VERSION: Final = re.compile(r"; claude (?P<version>[^;]{1,40});")
_TOKENS: Final = re.compile(r"^output tokens (?P<n>\d{1,9})$")
_COST: Final = re.compile(r"^cost (?P<usd>\d{1,6}(?:\.\d{1,12})?)$")
_OVERLOAD_BLOCKERS: Final = ("other lines: stream_event", "status None")
"""What the old claude rule said against the claim of an overload in a 200 stream."""


@dataclass(frozen=True, slots=True)
class LegacyReading:
    """A failure's observation as read back from what an old history recorded."""

    observation: RawObservation
    read: tuple[str, ...]
    """What was read from the record, in words."""
    assumed: tuple[str, ...] = ()
    """What was assumed because it was never recorded (empty: nothing)."""


def legacy_reading(
    failure_class: FailureClass | None, error: str | None, evidence: Evidence | None
) -> LegacyReading | None:
    """The observation an old failure implies (see the module rules), or None."""
    if evidence is None and not error:
        return None
    ref = (evidence.ref if evidence else None) or ""
    read: list[str] = []
    status = _status(ref, error or "")
    if status is not None:
        read.append(f"vendor status {status}")
    code = _code(error or "")
    if code is not None:
        read.append(f"the CLI's own words for {code}")
    errno = None
    if evidence is not None and evidence.source == "exec:spawn-errno" and evidence.ref:
        errno = evidence.ref[:100]
        read.append(f"errno {errno}")
    if error:
        read.append("the failure text")
    claude, assumed = _claude_overload(evidence, error or "", status)
    if claude is not None:
        read.append("claude's stream summary in the ref")
    observation = RawObservation(
        spawn_errno=errno,
        vendor_status=status,
        vendor_code=code,
        billing=code in BILLING_CODES,
        claude=claude,
    )
    return LegacyReading(observation, tuple(read), assumed)


def _status(ref: str, error: str) -> int | None:
    match = _HTTP.search(ref) or _STATUS.search(error)
    return int(match["status"]) if match else None


def _code(error: str) -> str | None:
    return next((code for words, code in OWN_WORDS if words in error), None)


def _claude_overload(
    evidence: Evidence | None, error: str, status: int | None
) -> tuple[ClaudeFacts | None, tuple[str, ...]]:
    """The stream facts of claude's overload in a 200 stream, when the old ref allows no
    other reading (see the module rules); else (None, ())."""
    if evidence is None or evidence.source != "claude:stream" or not evidence.ref:
        return None, ()
    parts = [p.strip() for p in evidence.ref.split(";")]
    lines = _LINES.match(parts[0])
    start = next((i for i, p in enumerate(parts) if p.startswith("no claim: ")), len(parts))
    said = [p.removeprefix("no claim: ") for p in parts[start:]]
    tokens = next((int(m["n"]) for b in said if (m := _TOKENS.match(b))), 0)
    cost = next((float(m["usd"]) for b in said if (m := _COST.match(b))), None)
    rest = [b for b in said if not (_TOKENS.match(b) or _COST.match(b))]
    if (
        lines is None
        or status is not None
        or sorted(rest) != sorted(_OVERLOAD_BLOCKERS)
        or evidence.effects == "observed"
        or tokens > PLACEHOLDER_TOKENS_MAX
        or not is_upstream_text(error)
    ):
        return None, ()
    version = _VERSION.search(evidence.ref)
    facts = ClaudeFacts(
        lines=int(lines["last"]) + 1,
        inits=1,
        results=1,
        is_error=True,
        num_turns=1,
        output_tokens=tokens,
        start_output_tokens=tokens,
        cost_usd=cost,
        permission_denials=0,
        requests_begun=1,
        version=version["version"] if version else None,
    )
    assumed = (
        "the stream_event lines were a begun request's message_start, ping and error "
        "(their types were not recorded)",
        f"the {tokens} output tokens were message_start placeholders, not model text",
    )
    return facts, assumed
