"""The ``command`` harness: any executable, the prompt on stdin, the reply on stdout.

Rules (SPEC §4, §7):
    * ``profile.args`` is ``[executable, *arguments]``. An executable given as a
      relative path (it contains a ``/``) resolves against the goal file's folder; a
      bare name is looked up on the scrubbed ``PATH``. Arguments are passed as given.
    * The child sees the scrubbed environment: the base allow-list plus ``profile.env``.
    * A command cannot be observed: its failure evidence is ``unknown`` (so the core's
      gate charges it whatever its class), except when the process never started,
      where the core's ``spawn-errno`` rule records positive no-effect evidence. What
      it wrote to stdout before failing survives as ``partial``.
    * Unless it says so itself (SPEC §11.9): a **failure envelope** as the last line of
      stdout, ``{"status": "failed", "class": "upstream", "vendor_status": 503,
      "retry_after_s": 30, "effects": "absent", "output": "absent"}``, makes the run a
      failure (whatever its exit status) with that structured vendor status, that
      Retry-After and that evidence, recorded with source ``command:envelope``. The class
      must agree with the status (``upstream``: 429/5xx; ``environment``: a refused
      credential, 401/403 with an optional ``remedy``, or no status and a ``remedy`` for a
      credential the command found missing; or an account that cannot pay: a ``code`` of
      ``insufficient_quota`` / ``billing_error`` or status 402, SPEC §12.6); ``refusal``
      defaults to absent when ``output`` is. An optional ``upstream`` names the vendor the
      command reached (SPEC §12.9): calls that name the same one share its health record.
      An
      envelope that does not validate is ignored, and the failure text says why. The
      claim is the command's responsibility (``docs/goals.md`` has a wrapper).
      The envelope may also say what the call cost and whose account it ran under
      (SPEC §13.2, §13.5): ``cost_usd``, ``usage`` (``input_tokens``, ``output_tokens``,
      ``cached_input_tokens``), ``account`` (an opaque name of the account, never a
      credential: calls naming the same one share its usage window) and, for a spent usage
      window, ``resets_at`` (when it reopens: an ISO-8601 time with its offset, or Unix
      seconds). A ``resets_at`` needs an ``account`` and class ``upstream``.
    * Success is exit status 0 within the timeout (and no failure envelope); the reply is
      stdout, redacted. A **reply envelope** as the last line of stdout,
      ``{"status": "ok", "cost_usd": 0.012, "usage": {"input_tokens": 900,
      "output_tokens": 40}, "account": "team-a"}``, says what the call cost (each field
      optional) and is taken off the reply. A last line with ``"status": "ok"`` and any of
      those fields that does not validate makes the run a failure that says why (a cost
      that cannot be read is never dropped silently).
    * A profile that names its CLI's base-URL variable (``base_url_env``) runs through
      governor's relay (SPEC §13.1) to that variable's value; the child sees the relay's
      URL in it. The wire then gives the class (status, code, usage window), never
      absence: a command may act without its model (``WireFacts.own_effects``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from governor.core.classify import CREDENTIAL_STATUSES, SpawnResult
from governor.core.event_fields import Profile
from governor.core.evidence import Evidence, Observation, RefusalObservation
from governor.core.numbers import Usd
from governor.core.observation import BILLING_CODES, BILLING_STATUS, Usage, WireFacts
from governor.core.upstream_text import is_upstream_status
from governor.errors import InputError
from governor.exec.environment import Redactor, scrubbed_env
from governor.exec.harness import (
    args_problem,
    decode,
    json_value,
    partial_of,
    spawn_result,
    stdout_text,
)
from governor.exec.process import ProcessResult, run_process
from governor.exec.relay import Relay
from governor.exec.relayed import through_relay

ENVELOPE_SOURCE: Final = "command:envelope"
Account = Annotated[str, Field(min_length=1, max_length=64)]
"""An account's opaque name, as an envelope gives it (SPEC §13.2)."""


class FailureEnvelope(BaseModel):
    """The structured failure a command may print as its last stdout line (SPEC §11.9)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    status: Literal["failed"]
    failure_class: Literal["upstream", "environment"] = Field(alias="class")
    vendor_status: int | None = Field(default=None, ge=100, le=599)
    retry_after_s: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    effects: Observation = "unknown"
    output: Observation = "unknown"
    refusal: RefusalObservation | None = None
    """Defaults to ``absent`` when ``output`` is (a refusal is model output), else unknown."""
    remedy: Annotated[str, Field(min_length=1, max_length=300)] | None = None
    """For a refused credential or an account that cannot pay: what a person must do
    (e.g. "set MY_API_KEY")."""
    code: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    """The vendor's error code (``insufficient_quota``, ``rate_limit_exceeded`` …)."""
    upstream: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    """The name of the upstream the command reached (SPEC §12.9)."""
    cost_usd: Usd | None = None
    """What the call cost, as the command's vendor reported it (SPEC §13.5)."""
    usage: Usage | None = None
    """The tokens the call used (priced when ``cost_usd`` is not given)."""
    account: Account | None = None
    """An opaque name of the account the call ran under (never a credential, SPEC §13.2)."""
    resets_at: AwareDatetime | None = None
    """When the account's spent usage window reopens (SPEC §13.2)."""

    @field_validator("resets_at")
    @classmethod
    def _in_utc(cls, value: datetime | None) -> datetime | None:
        try:
            return None if value is None else value.astimezone(UTC)
        except OverflowError:
            raise ValueError("resets_at is out of range") from None

    @model_validator(mode="after")
    def _window_has_account(self) -> FailureEnvelope:
        if self.resets_at is not None and (
            self.account is None or self.failure_class != "upstream"
        ):
            raise ValueError("resets_at needs an account and class 'upstream'")
        return self

    @model_validator(mode="after")
    def _class_fits_status(self) -> FailureEnvelope:
        if self.is_billing:
            if self.failure_class != "environment":
                raise ValueError("an account that cannot pay is class 'environment'")
            return self
        if self.failure_class == "upstream" and not is_upstream_status(self.vendor_status):
            raise ValueError("class 'upstream' needs a vendor_status of 429 or 5xx")
        refused = self.vendor_status in CREDENTIAL_STATUSES
        unsent = self.vendor_status is None and self.remedy is not None
        if self.failure_class == "environment" and not (refused or unsent):
            raise ValueError(
                "class 'environment' needs a vendor_status of 401 or 403, a remedy "
                "(a credential the command found missing before any request), or a "
                "billing code (insufficient_quota, billing_error) or status 402"
            )
        return self

    @property
    def is_billing(self) -> bool:
        """The envelope says the account cannot pay (SPEC §12.6)."""
        return self.code in BILLING_CODES or self.vendor_status == BILLING_STATUS

    @property
    def credential(self) -> str | None:
        """The remedy of a credential refusal (the core's ``credential`` rule), else None."""
        if self.failure_class != "environment" or self.is_billing:
            return None
        return self.remedy or "check the credential the command uses (see its env)"

    @property
    def billing(self) -> str | None:
        """The remedy of an account that cannot pay (the core's ``billing`` rule), else None."""
        return (
            (self.remedy or "check the vendor account the command uses")
            if self.is_billing
            else None
        )

    def evidence(self, partial: Evidence) -> Evidence:
        """What the command declared, with the partial output the harness saw."""
        refusal = self.refusal or ("absent" if self.output == "absent" else "unknown")
        return partial.model_copy(
            update={
                "effects": self.effects,
                "output": self.output,
                "refusal": refusal,
                "source": ENVELOPE_SOURCE,
                "ref": f"last stdout line: {self.failure_class} {self.vendor_status or 'unsent'}",
            }
        )


class ReplyEnvelope(BaseModel):
    """What a command that succeeded may say about its call on its last stdout line
    (SPEC §13.5): what it cost and whose account it ran under."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: Literal["ok"]
    cost_usd: Usd | None = None
    usage: Usage | None = None
    account: Account | None = None


REPLY_ENVELOPE_KEYS: Final = frozenset({"cost_usd", "usage", "account"})
"""A last line ``"status": "ok"`` with one of these is meant as a reply envelope."""


def read_reply_envelope(stdout: str) -> tuple[ReplyEnvelope | None, str, str | None]:
    """The reply envelope on the last non-blank line of ``stdout``: ``(envelope, the reply
    without it, None)``; ``(None, stdout, problem)`` for a line meant as one that does not
    validate; ``(None, stdout, None)`` when there is none."""
    lines = stdout.rstrip().rpartition("\n")
    value = json_value(lines[2]) if lines[2].strip() else None
    meant = isinstance(value, dict) and value.get("status") == "ok"
    if not (meant and REPLY_ENVELOPE_KEYS & set(value)):  # type: ignore[arg-type]
        return None, stdout, None
    try:
        return ReplyEnvelope.model_validate(value), lines[0], None
    except ValidationError as exc:
        return None, stdout, f"governor could not read the reply envelope: {_problems(exc)}"


def _problems(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'envelope'}: {e['msg']}"
        for e in exc.errors(include_url=False)
    )


def read_envelope(stdout: str) -> tuple[FailureEnvelope | None, str | None]:
    """The failure envelope on the last non-blank line of ``stdout``, or why it was ignored.

    Returns:
        ``(envelope, None)``; ``(None, problem)`` for a line that is meant as an envelope
        (``"status": "failed"`` and a ``"class"``) but does not validate; ``(None, None)``
        when there is no envelope.
    """
    lines = [line for line in stdout.splitlines() if line.strip()]
    value = json_value(lines[-1]) if lines else None
    if not (isinstance(value, dict) and value.get("status") == "failed" and "class" in value):
        return None, None
    try:
        return FailureEnvelope.model_validate(value), None
    except ValidationError as exc:
        return None, f"governor ignored the failure envelope: {_problems(exc)}"


class CommandHarness:
    """Runs ``profile.args`` as a child process: prompt on stdin, reply on stdout."""

    name: Final = "command"

    def __init__(self, base_dir: Path) -> None:
        """Serve profiles whose relative executables live under ``base_dir`` (the goal's folder)."""
        self.base_dir = base_dir

    def argv(self, profile: Profile) -> tuple[str, ...]:
        """The argument list for ``profile``, its executable resolved.

        Raises:
            InputError: the profile names no executable.
        """
        problem = args_problem("command", profile.args)
        if problem:
            raise InputError(problem)
        executable, *rest = profile.args
        return (self.binary(profile) or executable, *rest)

    def binary(self, profile: Profile) -> str | None:
        """The executable: a relative path resolved against ``base_dir``, or a bare name."""
        if not profile.args:
            return None
        executable = profile.args[0]
        if "/" in executable and not Path(executable).is_absolute():
            return str(self.base_dir / executable)
        return executable

    def run(
        self, prompt: str, profile: Profile, *, cwd: Path, env: Mapping[str, str]
    ) -> SpawnResult:
        """Run the command once (through the relay when the profile names its base-URL
        variable); see the module rules for what it reports."""
        variable = profile.base_url_env
        return through_relay(
            lambda relay: self._run(prompt, profile, cwd=cwd, env=env, relay=relay),
            profile=profile,
            base_url=env.get(variable) if variable else None,
            env=env,
            wanted=variable is not None,
            unnamed=f"{variable} (the profile's base_url_env) is not set",
        )

    def _run(
        self,
        prompt: str,
        profile: Profile,
        *,
        cwd: Path,
        env: Mapping[str, str],
        relay: Relay | None = None,
    ) -> SpawnResult:
        child_env = scrubbed_env(env, profile.env)
        if relay is not None and profile.base_url_env:
            child_env[profile.base_url_env] = relay.url
        result = run_process(
            self.argv(profile),
            stdin=prompt.encode("utf-8"),
            env=child_env,
            cwd=cwd,
            timeout_s=profile.timeout_s,
        )
        if relay is None:
            return command_result(result, Redactor(env))
        wire = relay.facts().model_copy(update={"own_effects": True})
        return command_result(result, Redactor(env), wire=wire, account=relay.account)


def command_result(
    result: ProcessResult,
    redact: Redactor,
    *,
    wire: WireFacts | None = None,
    account: str | None = None,
) -> SpawnResult:
    """Turn a finished command (and what its relay saw) into a classified result (see the
    module rules)."""
    stdout = stdout_text(result)
    envelope, problem = read_envelope(stdout) if result.started else (None, None)
    ok = result.started and result.exit_code == 0 and not result.timed_out and envelope is None
    partial = Evidence(partial=partial_of(result))
    if envelope is None:
        said, reply, unread = read_reply_envelope(stdout) if ok else (None, stdout, None)
        problem = problem or unread
        ok = ok and unread is None
        text = None if problem is None else f"{decode(result.stdout_tail)}\n{problem}"
        return spawn_result(
            result,
            redact,
            ok=ok,
            reply=reply if ok else None,
            evidence=partial,
            stdout=text,
            cost_usd=said.cost_usd if said else None,
            usage=said.usage if said else None,
            wire=wire,
            account=said.account if said and said.account else account,
        )
    return spawn_result(
        result,
        redact,
        ok=False,
        evidence=envelope.evidence(partial),
        stdout=stdout.rstrip().rpartition("\n")[0],
        vendor_status=envelope.vendor_status,
        credential=envelope.credential,
        retry_after_s=envelope.retry_after_s,
        vendor_code=envelope.code,
        billing=envelope.billing,
        cost_usd=envelope.cost_usd,
        usage=envelope.usage,
        wire=wire,
        account=envelope.account or account,
    ).model_copy(update={"upstream": envelope.upstream, "resets_at": envelope.resets_at})
