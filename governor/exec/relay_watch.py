"""What the relay reads of one exchange as it passes: metadata only, never a body kept.

Rules (SPEC §13.1; decision record 0027):
    * From the request: method, path without its query, whether it asks a model for a
      turn (``POST`` to ``…/messages``, ``…/responses``, ``…:generateContent``,
      ``…:streamGenerateContent``), the ``User-Agent`` product, and the account — a
      digest of the credential header (``chatgpt-account-id``, else ``x-api-key``, else
      ``authorization``), never the value.
    * From the response head: status, ``retry-after``, the vendor's rate-limit and
      usage-window headers (``anthropic-ratelimit-*``, ``x-ratelimit-*``, ``x-codex-*``) as
      ``name=value`` — a value that looks like a key is left out.
    * From the body, read as it streams and never kept: server-sent events' kinds, whether
      a content block or output item streamed, token usage, and an in-stream error's type
      and code; for a JSON answer, the first ``JSON_KEPT`` bytes are parsed at its end for
      the error's type and code, a usage window's reset, usage and content. A line longer
      than ``LINE_KEPT`` bytes is skipped, malformed JSON and invalid UTF-8 are ignored.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any, Final

import orjson

from governor.core.credentials import find_key
from governor.core.numbers import MAX_WAIT_S
from governor.core.observation import (
    KINDS_KEPT,
    LIMITS_KEPT,
    Usage,
    WireEnd,
    WireRequest,
    counted,
)
from governor.core.wire_evidence import PHRASES

MODEL_PATH: Final = re.compile(r"(?:/messages|/responses|:generateContent|:streamGenerateContent)$")
"""The path of a request that asks a model for a turn."""
LIMIT_PREFIXES: Final = ("anthropic-ratelimit-", "x-ratelimit-", "x-codex-")
EVENTS_KEPT: Final = KINDS_KEPT * 4
JSON_KEPT: Final = 1 << 20
"""The most bytes of a JSON answer parsed at its end (the rest passes unread)."""
LINE_KEPT: Final = 1 << 20
"""The longest server-sent-event line parsed."""
CONTENT_KINDS: Final = frozenset(
    {
        "content_block_start",
        "content_block_delta",
        "response.output_item.added",
        "response.output_text.delta",
        "response.content_part.added",
    }
)
"""Streamed event kinds that carry something the model produced."""
PARSED_KINDS: Final = frozenset(
    {
        "message_start",
        "message_delta",
        "error",
        "response.completed",
        "response.failed",
        "response.incomplete",
    }
)
"""Event kinds whose data the watcher parses (usage, errors)."""
ERROR_KINDS: Final = frozenset({"error", "response.failed"})
EVENT_LINE: Final = re.compile(rb"(\nevent:[ \t]*([^\r\n]{1,100})[\r\n]?)")
"""An event line, whole with its end and its kind (after a newline: a literal prefix the
engine searches for fast)."""
PARSED_PAIR: Final = re.compile(
    rb"\nevent:[ \t]*("
    + b"|".join(re.escape(k.encode()) for k in sorted(PARSED_KINDS))
    + rb")[ \t]*\r?\ndata:[ \t]?([^\r\n]*)"
)
ACCOUNT_LABEL: Final = b"governor account v1\0"
"""The fixed label of the account digest (SPEC §13.2)."""
_AGENT: Final = re.compile(r"[A-Za-z0-9._/+-]{1,100}")
_KIND: Final = re.compile(r"[A-Za-z0-9._:/-]{1,100}")


def _reason(error: dict[str, Any]) -> str | None:
    """A Google error's own code: the ``reason`` of its first ``details`` entry that has one
    (``API_KEY_INVALID``; its ``code`` is only the HTTP status)."""
    details = error.get("details")
    if not isinstance(details, list):
        return None
    reasons = (short(d.get("reason")) for d in details[:10] if isinstance(d, dict))
    return next((r for r in reasons if r), None)


def short(text: object) -> str | None:
    """A short name as the facts keep it, or None when it is not one."""
    if not isinstance(text, str | int) or isinstance(text, bool):
        return None
    match = _KIND.fullmatch(str(text))
    return match.group(0) if match else None


def plain(text: str | None) -> str | None:
    """A detail as the facts keep it: printable ASCII, at most 100 characters."""
    kept = "".join(c for c in (text or "") if " " <= c <= "~").strip()[:100]
    return kept or None


def account_of(headers: dict[str, str]) -> str | None:
    """An opaque digest of the account a request ran under (see the module rules)."""
    for name in ("chatgpt-account-id", "x-api-key", "x-goog-api-key", "authorization"):
        value = headers.get(name)
        if value:
            return hashlib.sha256(
                ACCOUNT_LABEL + name.encode() + b"\0" + value.encode()
            ).hexdigest()[:32]
    return None


def agent_of(headers: dict[str, str]) -> str | None:
    """The ``User-Agent``'s first product (``claude-cli/2.1.197``)."""
    match = _AGENT.match(headers.get("user-agent", ""))
    return match.group(0) if match else None


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 0 <= value < 2**62:
        return value
    if isinstance(value, float) and 0 <= value < 2**62:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 18:
        return int(value.strip())
    return None


def _seconds(value: str, now: float) -> float | None:
    """A ``retry-after`` value in seconds (a number or an HTTP date)."""
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - now
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    if math.isnan(seconds):
        return None
    return round(min(max(seconds, 0.0), MAX_WAIT_S), 3)


class Watch:
    """One exchange as it passes (see the module rules); ``request()`` is its record."""

    def __init__(self, method: str, target: str, clock: Callable[[], float]) -> None:
        self.method = method[:100] or "?"
        path = target.split("?", 1)[0].split("#", 1)[0]
        if "://" in path:
            path = "/" + path.split("://", 1)[1].partition("/")[2]
        self.path = path[:200] or "/"
        self.model = method == "POST" and MODEL_PATH.search(self.path) is not None
        self.clock = clock
        self.began = clock()
        self.first_byte: float | None = None
        self.status: int | None = None
        self.ended: WireEnd | None = None
        self.detail: str | None = None
        self.error_type: str | None = None
        self.error_code: str | None = None
        self.retry_after_s: float | None = None
        self.resets_at: int | None = None
        self.window: str | None = None
        self.phrase: str | None = None
        self.limits: list[str] = []
        self.events: list[str] = []
        self.content = False
        self.in_stream_error = False
        self.usage: dict[str, int] = {}
        self.bytes_up = 0
        self.bytes_down = 0
        self._sse = False
        self._json: bytearray | None = None
        self._tail = b""
        self._plain: list[bytes] = []
        """Whole event lines (``\\nevent: kind\\n``) of kinds seen and never parsed."""
        self._headers: dict[str, str] = {}
        self.wall = 0.0
        """Unix seconds when the response head arrived (a reset's base)."""

    # --- the response head ---------------------------------------------------------------

    def head(self, status: int, headers: dict[str, str], wall: float) -> None:
        """The response's status and headers arrived (``wall``: Unix seconds now)."""
        self.first_byte = self.clock()
        self.wall = wall
        self.status = status
        self._headers = headers
        kind = headers.get("content-type", "")
        self._sse = "text/event-stream" in kind
        if not self._sse and (status >= 400 or self.model):
            self._json = bytearray()
        if "retry-after" in headers:
            self.retry_after_s = _seconds(headers["retry-after"], wall)
        for name, value in headers.items():
            keep = name.startswith(LIMIT_PREFIXES) and len(self.limits) < LIMITS_KEPT
            if keep and find_key(value.encode("utf-8", "replace")) is None:
                self.limits.append(f"{name}={value}"[:200])
        if headers.get("anthropic-ratelimit-unified-status") == "rejected":
            claim = short(headers.get("anthropic-ratelimit-unified-representative-claim"))
            self.window = f"rejected {claim}" if claim else "rejected"
            self._reset(_int(headers.get("anthropic-ratelimit-unified-reset")), None, wall)

    def _reset(self, at: int | None, after: float | None, wall: float) -> None:
        """The usage window's reset: at a Unix time, or after some seconds."""
        if at is None and after is not None:
            at = int(wall + after)
        if at is None:
            for name in (
                "x-codex-primary-reset-after-seconds",
                "x-codex-secondary-reset-after-seconds",
            ):
                seconds = _int(self._headers.get(name))
                if seconds is not None:
                    at = int(wall + seconds)
                    break
        if at is not None:
            self.resets_at = at
            self.retry_after_s = round(min(max(at - wall, 0.0), MAX_WAIT_S), 3)

    # --- the response body ---------------------------------------------------------------

    def body(self, data: bytes, start: int = 0, end: int | None = None) -> None:
        """Bytes ``data[start:end]`` of the response body passed to the client (the buffer
        and its bounds: the scan reads it in place)."""
        stop = len(data) if end is None else end
        self.bytes_down += stop - start
        if self._sse:
            self._feed_sse(data, start, stop)
        elif self._json is not None and len(self._json) < JSON_KEPT:
            self._json += data[start : min(stop, start + JSON_KEPT - len(self._json))]

    def _feed_sse(self, data: bytes, start: int, stop: int) -> None:
        """Scan the whole events in ``data[start:stop]`` in place; an event cut by the
        buffer's end is carried (its bytes alone) and finished with the next buffer's first."""
        if self._tail:
            end = _first_end(self._tail, data, start, stop)
            if end < 0:
                self._carry(self._tail + data[start:stop])
                return
            block = self._tail + data[start:end]
            self._tail = b""
            self._scan(block, 0, len(block))
            start = end
        cut = _last_end(data, start, stop)
        if cut < 0:
            self._carry(data[start:stop])
            return
        self._scan(data, start, cut)
        self._carry(data[cut:stop])

    def _carry(self, tail: bytes) -> None:
        self._tail = tail if len(tail) <= LINE_KEPT else b""

    def _scan(self, block: bytes, start: int, end: int) -> None:
        """Kinds, usage and errors of the whole server-sent events in ``block[start:end]``
        (``start`` begins a line).

        A 50 MB stream is mostly events of kinds already seen that nobody parses: when one
        C-speed regular-expression pass finds no event line of another kind, the block is
        done; otherwise its event lines are read with regular expressions."""
        if self._only_plain(block, start, end):
            return
        events = b"\n" + block[start:end]
        names = EVENT_LINE.findall(events)
        if names:
            for whole, name in dict.fromkeys(names):
                kind = short(name.decode("utf-8", "replace").strip())
                self._saw(kind)
                plain_kind = kind is not None and kind not in PARSED_KINDS
                fresh = whole not in self._plain and len(self._plain) < KINDS_KEPT
                if plain_kind and fresh and whole[-1:] in (b"\r", b"\n"):
                    self._plain.append(whole)
            for kind, payload in PARSED_PAIR.findall(events):
                parsed = _json(payload)
                if isinstance(parsed, dict):
                    self._read_event(kind.decode(), parsed)
            return
        for line in events.split(b"\n"):  # no event lines: data lines alone (Gemini)
            if line.startswith(b"data:"):
                self._sse_data(line[5:].strip())

    def _only_plain(self, block: bytes, start: int, end: int) -> bool:
        """``block[start:end]`` has event lines, and every one names a kind seen before and
        never parsed (its line exactly as seen: ``_plain``)."""
        if not self._plain:
            return False
        first = block.startswith(b"event:", start, end)
        if first and not any(block.startswith(w[1:], start, end) for w in self._plain):
            return False
        if not first and block.find(b"\nevent:", start, end) < 0:
            return False
        return _other_lines(tuple(self._plain)).search(block, start, end) is None

    def _saw(self, kind: str | None) -> None:
        if kind is None:
            return
        if kind not in self.events and len(self.events) < EVENTS_KEPT:
            self.events.append(kind)
        if kind in CONTENT_KINDS:
            self.content = True

    def _sse_data(self, data: bytes) -> None:
        """One data line of a stream with no event lines: its own ``type`` names it."""
        markers = (b'"type"', b"usageMetadata", b'"error"', b'"parts"')
        if len(data) > LINE_KEPT or not any(m in data for m in markers):
            return
        payload = _json(data)
        if not isinstance(payload, dict):
            return
        kind = short(payload.get("type"))
        self._saw(kind)
        if kind is None or kind in PARSED_KINDS:
            self._read_event(kind, payload)

    def _read_event(self, kind: str | None, payload: dict[str, Any]) -> None:
        if kind in ERROR_KINDS:
            self.in_stream_error = True
            error = payload.get("error")
            if kind == "response.failed":
                response = payload.get("response")
                error = response.get("error") if isinstance(response, dict) else error
            self._error(error if isinstance(error, dict) else payload)
        elif kind == "message_start":
            message = payload.get("message")
            self._anthropic_usage(message.get("usage") if isinstance(message, dict) else None)
        elif kind == "message_delta":
            self._anthropic_usage(payload.get("usage"), delta=True)
        elif kind in ("response.completed", "response.incomplete"):
            response = payload.get("response")
            self._openai_usage(response.get("usage") if isinstance(response, dict) else None)
        elif kind is None:
            self._gemini(payload)

    def _error(self, error: dict[str, Any]) -> None:
        self.error_type = short(error.get("type")) or short(error.get("status")) or self.error_type
        self.error_code = _reason(error) or short(error.get("code")) or self.error_code
        message = error.get("message")
        if isinstance(message, str):
            lowered = message[:2000].lower()
            self.phrase = next((p for p in PHRASES if p in lowered), self.phrase)
        if self.error_type == "usage_limit_reached" or self.error_code == "usage_limit_reached":
            self.window = "usage_limit_reached"
            after = error.get("resets_in_seconds")
            seconds = (
                float(after)
                if isinstance(after, int | float) and not isinstance(after, bool)
                else None
            )
            self._reset(_int(error.get("resets_at")), seconds, self.wall)

    def _anthropic_usage(self, usage: object, *, delta: bool = False) -> None:
        if not isinstance(usage, dict):
            return
        if not delta:
            self._add("input_tokens", _int(usage.get("input_tokens")))
            cached = _int(usage.get("cache_read_input_tokens"))
            self._add("cached_input_tokens", cached)
            self._add("input_tokens", cached)
        out = _int(usage.get("output_tokens"))
        if out is not None:
            self.usage["output_tokens"] = out  # cumulative: the last one counts

    def _openai_usage(self, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        self._add("input_tokens", _int(usage.get("input_tokens")))
        self._add("output_tokens", _int(usage.get("output_tokens")))
        details = usage.get("input_tokens_details")
        if isinstance(details, dict):
            self._add("cached_input_tokens", _int(details.get("cached_tokens")))

    def _gemini(self, payload: dict[str, Any]) -> None:
        candidates = payload.get("candidates")
        if isinstance(candidates, list) and any(
            isinstance(c, dict) and isinstance(c.get("content"), dict) and c["content"].get("parts")
            for c in candidates
        ):
            self.content = True
        usage = payload.get("usageMetadata")
        if isinstance(usage, dict):
            self.usage["input_tokens"] = _int(usage.get("promptTokenCount")) or 0
            self.usage["output_tokens"] = _int(usage.get("candidatesTokenCount")) or 0
            cached = _int(usage.get("cachedContentTokenCount"))
            if cached is not None:
                self.usage["cached_input_tokens"] = cached
        if isinstance(payload.get("error"), dict):
            self.in_stream_error = True
            self._error(payload["error"])

    def _add(self, name: str, value: int | None) -> None:
        if value is not None:
            self.usage[name] = self.usage.get(name, 0) + value

    def _read_json(self) -> None:
        payload = _json(bytes(self._json or b""))
        if not isinstance(payload, dict):
            return
        error = payload.get("error")
        if isinstance(error, dict):
            self._error(error)
        elif isinstance(error, str):  # OpenAI's older shape puts the code beside it
            self.error_type = short(payload.get("type")) or self.error_type
        if self.status is not None and self.status < 400:
            if payload.get("content") or payload.get("output"):
                self.content = True
            usage = payload.get("usage")
            if isinstance(usage, dict) and "output_tokens" in usage:
                if "input_tokens_details" in usage or "total_tokens" in usage:
                    self._openai_usage(usage)
                else:
                    self._anthropic_usage(usage)
            self._gemini(payload)

    # --- the end ---------------------------------------------------------------------------

    def end(self, ended: WireEnd, detail: str | None = None) -> WireRequest:
        """The exchange is over: its record (a status of 400 or more makes a whole response
        ``refused``; so does an in-stream error event, however the stream then ended: the
        vendor refused, and a client that went away after reading it, or a close after it,
        tells nothing more)."""
        if self._json is not None and ended in ("answered", "broken", "abandoned"):
            self._read_json()
        if self._tail:
            self._scan(self._tail + b"\n\n", 0, len(self._tail) + 2)
            self._tail = b""
        whole = ended == "answered" and (self.status or 0) >= 400
        if whole or (self.in_stream_error and ended in ("answered", "broken", "abandoned")):
            ended = "refused"
        ttfb = self.first_byte
        return WireRequest(
            method=short(self.method) or "?",
            path=self.path,
            model=self.model,
            ended=ended,
            detail=plain(detail),
            ttfb_ms=None if ttfb is None else counted(int((ttfb - self.began) * 1000)),
            status=self.status if self.status is not None and 0 <= self.status <= 999 else None,
            error_type=self.error_type,
            error_code=self.error_code,
            retry_after_s=self.retry_after_s,
            resets_at=self.resets_at,
            phrase=self.phrase,
            window=self.window,
            limits=tuple(self.limits),
            events=tuple(self.events),
            content=self.content,
            usage=Usage(**self.usage) if self.usage else None,
            bytes_up=self.bytes_up,
            bytes_down=self.bytes_down,
        )


def _json(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


BLANK: Final = re.compile(rb"\n\r?\n")
"""The blank line that ends a server-sent event."""


def _first_end(tail: bytes, data: bytes, start: int, stop: int) -> int:
    """Where the first event ends in ``data[start:stop]`` following ``tail`` (an event's
    start, with no blank line in it): the index after its blank line, or -1."""
    joint = tail[-2:] + data[start : start + 2]
    match = BLANK.search(joint)
    if match is not None:
        return start + match.end() - len(tail[-2:])
    match = BLANK.search(data, start, stop)
    return -1 if match is None else match.end()


def _last_end(data: bytes, start: int, stop: int) -> int:
    """The index after the last blank line in ``data[start:stop]``, or -1."""
    lf = data.rfind(b"\n\n", start, stop)
    crlf = data.rfind(b"\n\r\n", max(lf, start), stop)
    return max(lf + 2 if lf >= 0 else -1, crlf + 3 if crlf >= 0 else -1)


@functools.lru_cache(maxsize=256)
def _other_lines(plain: tuple[bytes, ...]) -> re.Pattern[bytes]:
    """An event line (after a newline) that is none of ``plain`` (whole lines, each
    ``\\nevent:`` and the rest of the line with its end), for one pass over a block."""
    rests = b"|".join(re.escape(whole[len(b"\nevent:") :]) for whole in plain)
    return re.compile(rb"\nevent:(?!" + rests + rb")")
