"""The ``gemini`` harness: ``gemini -p "" --output-format stream-json``, run once per agent call.

Rules (SPEC §4, §12.7, §12.12; issue 32; observations in ``docs/harnesses.md``):
    * Invocation: ``gemini -p "" --output-format stream-json --skip-trust [--model M]
      *profile.args``, the prompt on stdin (gemini appends ``-p``'s empty text to it).
      ``--skip-trust`` trusts the working directory for this call only (headless gemini
      refuses an untrusted folder). In headless mode gemini never prompts: a tool that
      needs approval is refused unless ``profile.args`` allow it (``--approval-mode``).
    * The child sees the scrubbed environment plus ``GEMINI_PASS`` and ``profile.env``,
      and two variables of governor's: ``GEMINI_CLI_SYSTEM_SETTINGS_PATH``, a settings
      file written for the call, and ``TMPDIR``, the call's own folder (gemini writes its
      error reports there, and they hold the request: the folder is removed after the
      call). The base URL is ``BASE_URL_VAR`` (``GOOGLE_GEMINI_BASE_URL``).
    * Through governor's relay (SPEC §13.1, unless the profile sets ``relay = false``):
      ``BASE_URL_VAR`` points the child at the relay, which forwards to the configured
      base URL (else Google's); what the relay saw is the result's ``wire``, read first by
      the core's rules (``governor.exec.relayed.through_relay``).
    * **One retry layer** (SPEC §12.12): gemini retries 429, 5xx and network failures by
      itself, silently, for over a minute. The call's settings file sets
      ``general.maxAttempts`` to 1 (and ``retryFetchErrors`` off) over the machine's
      own system settings, so governor's back-off is the only retry. gemini ignores a
      system settings file in a folder others can write (any ancestor): the call folder
      lives under ``GOVERNOR_GEMINI_DIR``, else ``$XDG_CACHE_HOME/governor/gemini``,
      else ``~/.cache/governor/gemini``, and ``governor doctor`` says when that folder
      is not safe. Without ``--model`` gemini routes ``auto`` with attempt counts of its
      own (3, then 10 on a fallback model) that the setting does not bound: give the
      profile a ``model``; ``timeout_s`` bounds the rest.
    * Success: exit 0 and a last ``result`` line with ``status: success``; the reply is
      the assistant ``message`` contents joined. Usage: the result's ``stats``
      (gemini reports no cost).
    * A failure's vendor status: the vendor's JSON error inside the result's
      ``[API Error: …]`` message (``code``, and ``details[].reason``), else the
      ``status: NNN`` gemini prints on stderr after "Error when talking to Gemini API".
      ``API_KEY_INVALID``, 401 and 403 are a refused credential. "fetch failed sending
      request" is no HTTP response: gemini does not say whether the connection was
      refused or reset, so it reads as a vendor never reached (SPEC §12.7).
    * The stream is folded by ``GeminiEvents``; ``governor.core.absence.gemini_absence``
      judges it (source ``gemini:stream-json``). Verified with ``GEMINI_VERIFIED_VERSION``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from governor.core.absence import GeminiFacts, gemini_absence
from governor.core.classify import CREDENTIAL_STATUSES, SpawnResult
from governor.core.event_fields import Profile
from governor.core.observation import Connection, Usage, WireFacts
from governor.exec.endpoints import GOOGLE_URL, public_url
from governor.exec.environment import Redactor, scrubbed_env
from governor.exec.harness import json_event, partial_of, spawn_result
from governor.exec.process import ProcessResult, run_process
from governor.exec.relay import Gate, Relay
from governor.exec.relayed import through_relay

GEMINI_BINARY: Final = "gemini"
GEMINI_VERIFIED_VERSION: Final = "0.61.0"
"""The gemini-cli version the rules were verified on (``cli_pins.json`` pins it)."""
BASE_URL_VAR: Final = "GOOGLE_GEMINI_BASE_URL"
"""The variable gemini reads its vendor base URL from (a relay points it elsewhere)."""
STREAM_FLAGS: Final = ("--output-format", "stream-json")
GEMINI_PASS: Final = (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    BASE_URL_VAR,
    "GEMINI_MODEL",
    "GEMINI_CLI_HOME",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
)
"""gemini's own configuration variables, passed through when the parent has them."""
SETTINGS: Final = {"general": {"maxAttempts": 1, "retryFetchErrors": False}}
"""What the call's system settings set over the machine's (one retry layer)."""
SYSTEM_SETTINGS: Final = Path("/etc/gemini-cli/settings.json")
DIR_VAR: Final = "GOVERNOR_GEMINI_DIR"
API_ERROR: Final = re.compile(r"^\[API Error: (?P<body>.*)\]", re.DOTALL)
STDERR_STATUS: Final = re.compile(r"^  status: (?P<status>\d{3})$", re.MULTILINE)
TALKING: Final = "Error when talking to Gemini API"
NO_RESPONSE: Final = "fetch failed sending request"
CREDENTIAL_REASONS: Final = frozenset({"API_KEY_INVALID", "API_KEY_EXPIRED"})


def settings_root(env: Mapping[str, str]) -> Path | None:
    """The folder the call folders go under (see the module rules), or None without HOME."""
    if env.get(DIR_VAR):
        return Path(env[DIR_VAR])
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "governor" / "gemini"
    return Path(env["HOME"]) / ".cache" / "governor" / "gemini" if env.get("HOME") else None


def insecure_ancestor(folder: Path) -> Path | None:
    """The first of ``folder`` and its ancestors that others may write (gemini then skips
    a system settings file in it), or None."""
    for place in (folder, *folder.parents):
        try:
            mode = place.stat().st_mode
        except OSError:
            continue
        if mode & 0o022:
            return place
    return None


def call_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The machine's system settings with ``SETTINGS`` over them."""
    source = Path(env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or SYSTEM_SETTINGS)
    try:
        loaded = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        loaded = {}
    merged: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
    general = merged.get("general")
    merged["general"] = {**(general if isinstance(general, dict) else {}), **SETTINGS["general"]}
    return merged


class GeminiEvents:
    """An incremental fold of the JSONL stream, fed one stdout line at a time."""

    def __init__(self) -> None:
        self.lines = self.malformed = self.inits = self.prompts = 0
        self.results = self.after_result = 0
        self.effects = self.output = False
        self.others: list[str] = []
        self.reply: list[str] = []
        self.result: dict[str, Any] | None = None

    def feed(self, line: bytes | str) -> None:
        """Fold one stdout line (blank lines are ignored)."""
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        if not text.strip():
            return
        self.lines += 1
        self.after_result += 1 if self.results else 0
        event = json_event(text)
        if event is None:
            self.malformed += 1
            return
        kind = event["type"]
        if kind == "result":
            self.results += 1
            self.after_result = 0
            self.result = event
        elif kind == "init":
            self.inits += 1
        elif kind == "message" and event.get("role") == "user":
            self.prompts += 1
        else:
            self._other(kind, event)

    def _other(self, kind: str, event: dict[str, Any]) -> None:
        if kind == "message":
            kind = f"message/{str(event.get('role'))[:40]}"
            content = event.get("content")
            if isinstance(content, str):
                self.output = True
                self.reply.append(content)
        elif kind in ("tool_use", "tool_result"):
            self.effects = True
        if kind not in self.others and len(self.others) < 10:
            self.others.append(kind[:100])


def _stats(result: dict[str, Any] | None) -> dict[str, Any]:
    stats = result.get("stats") if result else None
    return stats if isinstance(stats, dict) else {}


def _count(value: object) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**62
    return value if ok else None  # type: ignore[return-value]


def error_message(events: GeminiEvents) -> str | None:
    """The failed result's ``error.message``, if it has one."""
    error = (events.result or {}).get("error")
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else None


def vendor_error(message: str | None) -> tuple[int | None, str | None]:
    """The status and ``ErrorInfo`` reason of the vendor's JSON error inside gemini's
    ``[API Error: …]`` message, when it carries one."""
    found = API_ERROR.match(message or "")
    body = found["body"] if found else ""
    try:
        parsed = json.loads(body) if body.startswith("{") else None
    except ValueError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict):
        return None, None
    details = error.get("details")
    reasons = (
        [
            d.get("reason")
            for d in details
            if isinstance(d, dict) and isinstance(d.get("reason"), str)
        ]
        if isinstance(details, list)
        else []
    )
    code = _count(error.get("code"))
    return (code if code is not None and code <= 999 else None), (reasons[0] if reasons else None)


def stderr_status(stderr: str) -> int | None:
    """The ``status: NNN`` of the error gemini printed after "Error when talking to Gemini
    API" (the last one), if any."""
    _, said, rest = stderr.rpartition(TALKING)
    found = STDERR_STATUS.findall(rest) if said else []
    return int(found[-1]) if found else None


class GeminiHarness:
    """Runs ``gemini -p "" --output-format stream-json`` once per agent call."""

    name: Final = "gemini"

    def __init__(self, base_dir: Path, *, gate: Gate | None = None) -> None:
        """Args:
        base_dir: the goal file's folder (gemini resolves nothing against it).
        gate: asked by the relay before each model request after the first.
        """
        self.base_dir = base_dir
        self.gate = gate

    def binary(self, profile: Profile) -> str | None:
        """The executable looked up on the child's ``PATH``."""
        return GEMINI_BINARY

    def argv(self, profile: Profile) -> tuple[str, ...]:
        """The argument list; the prompt goes on stdin."""
        model = ("--model", profile.model) if profile.model else ()
        return (GEMINI_BINARY, "-p", "", *STREAM_FLAGS, "--skip-trust", *model, *profile.args)

    def environment(
        self, profile: Profile, env: Mapping[str, str], call_dir: Path
    ) -> dict[str, str]:
        """The child's environment: the scrubbed pass-through, then the call's own."""
        own = {
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(call_dir / "settings.json"),
            "TMPDIR": str(call_dir / "tmp"),
        }
        return {**scrubbed_env(env, (*GEMINI_PASS, *profile.env)), **own}

    def run(
        self, prompt: str, profile: Profile, *, cwd: Path, env: Mapping[str, str]
    ) -> SpawnResult:
        """Run gemini once (through the relay unless the profile turns it off); see the
        module rules for what it reports."""
        base = env.get(BASE_URL_VAR) or None
        return through_relay(
            lambda relay: self._run(prompt, profile, cwd=cwd, env=env, endpoint=base, relay=relay),
            profile=profile,
            base_url=base or GOOGLE_URL,
            env=env,
            gate=self.gate,
        )

    def _run(
        self,
        prompt: str,
        profile: Profile,
        *,
        cwd: Path,
        env: Mapping[str, str],
        endpoint: str | None,
        relay: Relay | None,
    ) -> SpawnResult:
        root = settings_root(env) or Path(tempfile.gettempdir())
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        call_dir = Path(tempfile.mkdtemp(prefix="call-", dir=root))
        try:
            (call_dir / "tmp").mkdir(mode=0o700)
            settings = call_dir / "settings.json"
            settings.write_text(json.dumps(call_settings(env)), encoding="utf-8")
            os.chmod(settings, 0o600)
            events = GeminiEvents()
            child_env = self.environment(profile, env, call_dir)
            if relay is not None:
                child_env[BASE_URL_VAR] = relay.url
            result = run_process(
                self.argv(profile),
                stdin=prompt.encode("utf-8"),
                env=child_env,
                cwd=cwd,
                timeout_s=profile.timeout_s,
                on_stdout_line=events.feed,
            )
        finally:
            shutil.rmtree(call_dir, ignore_errors=True)
        return gemini_result(
            result,
            events,
            Redactor(env),
            endpoint=endpoint,
            wire=relay.facts() if relay else None,
            account=relay.account if relay else None,
        )


def gemini_result(
    result: ProcessResult,
    events: GeminiEvents,
    redact: Redactor,
    *,
    endpoint: str | None = None,
    wire: WireFacts | None = None,
    account: str | None = None,
) -> SpawnResult:
    """Turn a finished gemini process and its folded stream into a classified result."""
    r = events.result or {}
    ok = (
        result.started
        and not result.timed_out
        and result.exit_code == 0
        and r.get("status") == "success"
    )
    message = None if ok else error_message(events)
    status, reason = vendor_error(message)
    if status is None and not ok:
        status = stderr_status(result.stderr_tail.decode("utf-8", "replace"))
    credential = None
    if not ok and (reason in CREDENTIAL_REASONS or status in CREDENTIAL_STATUSES):
        credential = (
            f"the vendor refused gemini's key ({reason or f'HTTP {status}'}): set a valid "
            "GEMINI_API_KEY (or GOOGLE_API_KEY), or log in again with `gemini` as the user "
            "governor runs as"
        )
    connection: Connection | None = (
        "unreachable" if not ok and status is None and NO_RESPONSE in (message or "") else None
    )
    refused = (
        "credential"
        if credential
        else "no HTTP response"
        if connection
        else f"HTTP {status}"
        if status is not None and (status == 429 or 500 <= status <= 599)
        else None
    )
    stats = _stats(events.result)
    facts = GeminiFacts(
        lines=events.lines,
        malformed=events.malformed,
        inits=events.inits,
        prompts=events.prompts,
        others=tuple(events.others),
        results=events.results,
        after_result=events.after_result,
        status=str(r.get("status"))[:20] if r else None,
        output_tokens=_count(stats.get("output_tokens")),
        tool_calls=_count(stats.get("tool_calls")),
        effects=events.effects,
        output=events.output,
        refused=refused,
    )
    usage = (
        Usage(
            input_tokens=_count(stats.get("input_tokens")),
            output_tokens=_count(stats.get("output_tokens")),
            cached_input_tokens=_count(stats.get("cached")),
        )
        if stats
        else None
    )
    return spawn_result(
        result,
        redact,
        ok=ok,
        reply="".join(events.reply) if ok else None,
        evidence=gemini_absence(facts).model_copy(update={"partial": partial_of(result)}),
        stdout=message or "",
        vendor_status=status,
        credential=credential,
        usage=usage,
        vendor_code=reason,
        connection=connection,
        connection_detail=NO_RESPONSE if connection else None,
        endpoint=public_url(endpoint) if endpoint else GOOGLE_URL,
        wire=wire,
        account=account,
    )
