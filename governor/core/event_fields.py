"""The parts of an event: its ids, times, texts, and the nested values a history carries.

Rules (SPEC §3, §7):
    * Ids are safe as file names and cannot escape a folder; a work id is
      ``<plan_id>-<key>``.
    * A time is written RFC 3339 and held in UTC (``check_time_text``, ``check_utc``: the
      compiled decoder checks the same inline).
    * Nested values (``Profile``, ``WorkSpec``, ``Milestone``, ``AcceptanceReport``) are
      frozen and forbid unknown fields, like the events (``governor.core.events``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

from governor.core.numbers import Position, TimeoutS, Usd
from governor.core.prices import Price
from governor.core.signature import SIGNATURE_LIMIT

ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
"""Goal, plan and run ids: safe as file names, cannot escape a folder."""
KEY_PATTERN: Final = r"^[a-z0-9][a-z0-9-]{0,31}$"
"""Work keys inside a proposal; a work id is ``<plan_id>-<key>``."""
WORK_ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,140}$"
TEXT_LIMIT: Final = 2000


RFC3339: Final = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:?\d{2})"
)
"""An RFC 3339 date-time (``T`` or a space between date and time, seconds required, a
zone required), as the history format writes ``at``; ``+0000`` is read as ``+00:00``."""


def check_time_text(value: object) -> object:
    """A time as written: an RFC 3339 string (or a ``datetime`` given from Python), never
    a number, a date alone or a time without seconds, which pydantic would otherwise read
    (SPEC §3: ``at`` is RFC 3339 UTC). The compiled decoder reads only such strings."""
    if isinstance(value, datetime) or (isinstance(value, str) and RFC3339.fullmatch(value)):
        return value
    raise ValueError("must be an RFC 3339 time in UTC, e.g. 2026-03-01T10:00:00Z")


def check_utc(value: datetime) -> datetime:
    """A time in UTC, or ``ValueError`` (the compiled decoder checks the same inline)."""
    if value.utcoffset() != timedelta(0):
        raise ValueError("must be UTC (end in Z or +00:00)")
    return value if value.tzinfo is UTC else value.replace(tzinfo=UTC)


Id = Annotated[str, Field(pattern=ID_PATTERN)]
WorkId = Annotated[str, Field(pattern=WORK_ID_PATTERN)]
Key = Annotated[str, Field(pattern=KEY_PATTERN)]
UtcTime = Annotated[datetime, BeforeValidator(check_time_text), AfterValidator(check_utc)]
Text = Annotated[str, Field(max_length=TEXT_LIMIT)]
Name = Annotated[str, Field(min_length=1, max_length=200)]
AccountName = Annotated[str, Field(min_length=1, max_length=64)]
"""An account's name or digest, never a credential (SPEC §13.2)."""
POOL_NAME_PATTERN: Final = r"^[a-z0-9][a-z0-9._-]{0,63}$"
PoolName = Annotated[str, Field(pattern=POOL_NAME_PATTERN)]
"""A pool's name (SPEC §13.6): small letters, digits, ``.``, ``_`` and ``-``."""
Reason = Annotated[str, Field(min_length=1, max_length=TEXT_LIMIT)]
Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Signature = Annotated[str, Field(min_length=1, max_length=SIGNATURE_LIMIT)]
"""A failure's signature (``governor.core.signature``; SPEC §12.10)."""

Harness = Literal["codex", "claude", "gemini", "command", "python", "scripted"]
EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]
PlanTrigger = Literal["initial", "replan", "milestone", "retry"]
Outcome = Literal["succeeded", "failed", "timed_out", "lost", "abandoned"]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Profile(Frozen):
    """How one agent is run (SPEC §7)."""

    harness: Harness
    model: Name | None = None
    instructions: Annotated[str, Field(max_length=20000)] | None = None
    timeout_s: TimeoutS = 600.0
    """Wall-clock limit of one spawn, in seconds, at most 30 days. Default 600."""
    max_attempts: int = Field(default=2, ge=1, le=20)
    """In-agent spawn attempts (tenacity), not the work budget. Default 2."""
    env: tuple[EnvName, ...] = ()
    """Names of variables passed through the scrubbed environment."""
    args: tuple[str, ...] = ()
    """Harness arguments (for ``command``: the executable and its arguments)."""
    probe: tuple[str, ...] | None = None
    """The harness arguments of this agent's upstream health probe, used instead of ``args``
    (SPEC §11.10): for ``command`` an executable and its arguments, for ``python`` a
    ``module:function``, for ``scripted`` a scenario file. ``codex`` and ``claude`` probe
    with the profile itself; a profile that cannot probe is never parked. Default none."""
    reserve_usd: Usd | None = None
    """What one call of this agent reserves against the goal's pools before it starts, in
    US dollars (SPEC §13.6). Default: the median cost of the goal's recorded calls, else
    ``DEFAULT_RESERVE_USD``."""
    upstream: Name | None = None
    """The name of the upstream this agent's calls reach (SPEC §12.9): profiles that
    declare the same name share one health record and park together, whatever their
    harness. Default: the harness's own identity (codex and claude: harness, endpoint and
    model family; command, python, scripted: the agent itself)."""
    relay: bool | None = None
    """Whether ``codex`` and ``claude`` calls go through governor's relay, which reads what
    the vendor sent (SPEC §13.1). Default (None): on; ``false``: the CLI's text alone."""
    base_url_env: EnvName | None = None
    """For a ``command`` agent: the variable its CLI reads its vendor's base URL from
    (e.g. ``OPENAI_BASE_URL``). When set (and ``relay`` is not false), the call goes through
    governor's relay to that variable's value, and the child sees the relay's URL in it
    (SPEC §13.1). Default: none (no relay)."""
    account: AccountName | None = None
    """The name of the account this agent's calls run under (SPEC §13.2): when a call of
    any profile naming it is refused because the account's usage window is spent, every
    goal whose profiles name it waits until the window reopens. Default: the account the
    agent's calls report (a command envelope's or ``AgentReply``'s ``account``, the
    relay's digest of the credential), known once a call has reported it."""
    price: Price | None = None
    """What this agent's model costs per million tokens (SPEC §13.5): prices the usage of
    a call that reports no cost of its own. Default: the shipped price table's entry for
    ``model`` (``governor/exec/prices.toml``)."""


class WorkSpec(Frozen):
    """One work item as a planner proposes it."""

    key: Key
    title: Name
    objective: Text
    acceptance: tuple[Text, ...] = ()
    depends_on: tuple[WorkId, ...] = ()
    """Earlier keys of the same proposal, or ids of accepted work."""
    profile: Name | None = None


class Milestone(Frozen):
    title: Name
    objective: Text


class AcceptanceReport(Frozen):
    """Per-criterion results of an attempt, as the worker reported them."""

    satisfied: tuple[Text, ...] = ()
    unsatisfied: tuple[Text, ...] = ()
    unknown: tuple[Text, ...] = ()


SCHEMA_VERSION: Final = 1


class EventBase(Frozen):
    """What every event carries (SPEC §3): its goal, its place in the stream, its time, its
    actor and an optional reason."""

    schema_version: Literal[1] = SCHEMA_VERSION
    goal_id: Id
    seq: Position
    at: UtcTime
    actor: Name = "governor"
    reason: Reason | None = None


class ReasonRequired(EventBase):
    @model_validator(mode="after")
    def _has_reason(self) -> ReasonRequired:
        if not self.reason:
            raise ValueError("a reason is required")
        return self
