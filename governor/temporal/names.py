"""The names the Temporal driver shares with everyone who asks about it — no Temporal SDK.

Rules (SPEC §12.11; decision record 0020):
    * A goal is driven by Temporal while its lease is held by a holder named
      ``temporal:<namespace>@<host:port>``: ``governor temporal start`` takes the lease
      before it starts the goal's workflow, the workflow renews it, and releases it once
      the goal ended. So ``governor run``, ``serve`` and the operator verbs can tell from
      the store alone, and ``serve`` never steps a goal Temporal drives.
    * The workflow id is the goal id behind a prefix derived from the store's record of
      the goal: the first ten hex digits of the SHA-256 of its ``goal.created`` event as
      stored (``workflow_id``), e.g. ``3f9a0c1b2d.login-page``. So two stores' goals of
      equal ids never share a workflow in one namespace. The workflow and the store
      activities share one task queue, agent calls go to that queue's ``-agents`` twin.
    * An address is ``HOST:PORT``; anything else is refused with one line naming where
      it came from.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from governor.errors import InputError, NotFoundError

if TYPE_CHECKING:
    from governor.store.base import EventStore

HOLDER_PREFIX: Final = "temporal:"
WORKFLOW: Final = "governor.goal"
"""The workflow type's name."""
VERB_UPDATE: Final = "governor.verb"
"""The update that carries an operator verb to a goal's workflow."""
STEP_UPDATE: Final = "governor.step"
"""The update that makes a waiting workflow look again now (a re-probe)."""
STATUS_QUERY: Final = "governor.status"
"""The query answering what ``governor status GOAL --json`` prints."""
READY_SIGNAL: Final = "governor.ready"
"""The signal a call sends its workflow once it has a slot and may run (its run name), from
a call scheduled before issue 34's update handshake (``READY_UPDATE``)."""
READY_UPDATE: Final = "governor.call_ready"
"""The update a call sends its workflow once it has a slot and may run (its run name); it
answers once the workflow recorded the run's start: the seq to read the store up to (0:
the run may not go on)."""
WAKE_SIGNAL: Final = "governor.wake"
"""The signal that wakes a parked workflow when its upstream's health changed."""
DEFAULT_QUEUE: Final = "governor"
DEFAULT_NAMESPACE: Final = "default"
ADDRESS_ENV: Final = "GOVERNOR_TEMPORAL"
"""The Temporal server's address when no ``--address`` is given."""
NAMESPACE_ENV: Final = "GOVERNOR_TEMPORAL_NAMESPACE"
TEMPORAL_ADDRESS_ENV: Final = "TEMPORAL_ADDRESS"
"""Temporal's own variables, honoured after governor's."""
TEMPORAL_NAMESPACE_ENV: Final = "TEMPORAL_NAMESPACE"
SEARCH_ATTRIBUTES: Final = ("GovernorStatus", "GovernorBlockedOn", "GovernorRule")
"""The custom search attributes (Keyword) the workflow keeps: status, blocked on, rule."""

_ADDRESS: Final = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):([0-9]{1,5})$")


def agents_queue(task_queue: str) -> str:
    """The task queue of agent calls beside ``task_queue``."""
    return f"{task_queue}-agents"


def parse_address(text: str, where: str = "--address") -> str:
    """``HOST:PORT`` as given, or ``InputError`` naming ``where``."""
    match = _ADDRESS.match(text.strip())
    if match is None or not 0 < int(match.group(2)) < 65536:
        raise InputError(
            f"{where}: '{text}' is not a Temporal server address; give HOST:PORT "
            "(e.g. 127.0.0.1:7233)"
        )
    return text.strip()


@dataclass(frozen=True, slots=True)
class Security:
    """How to reach a secured server (``governor.temporal.secure``); never stored or shown.

    Each field not given falls back on the Temporal profile (``profile``, else
    ``$TEMPORAL_PROFILE``, else ``default``) and Temporal's own variables
    (``TEMPORAL_API_KEY``, ``TEMPORAL_TLS``, ``TEMPORAL_TLS_CLIENT_CERT_PATH`` …).
    """

    tls: bool | None = None
    cert: str | None = None
    """A PEM client certificate file (mTLS), with ``key``."""
    key: str | None = None
    ca: str | None = None
    """A PEM file of the CA that signed the server's certificate."""
    server_name: str | None = None
    api_key: str | None = field(default=None, repr=False)
    profile: str | None = None
    identity: str | None = None
    """This client's (a worker's) identity in Temporal's histories."""
    codec: str | None = None
    """The payload codec (``zlib`` or ``MODULE:NAME``; ``governor.temporal.codec``), else
    ``$GOVERNOR_TEMPORAL_CODEC``."""


@dataclass(frozen=True, slots=True)
class Driver:
    """Where a goal's workflow lives: the server's address and the namespace (and, not part
    of its identity, how to reach it)."""

    address: str
    namespace: str = DEFAULT_NAMESPACE
    security: Security = field(default_factory=Security, compare=False, hash=False, repr=False)

    @property
    def holder(self) -> str:
        """The lease holder name of goals this server drives."""
        return f"{HOLDER_PREFIX}{self.namespace}@{self.address}"

    def describe(self) -> str:
        return f"namespace {self.namespace} at {self.address}"


def driver_of(holder: str | None) -> Driver | None:
    """The Temporal server a lease holder names, or None when the holder is not Temporal."""
    if not holder or not holder.startswith(HOLDER_PREFIX):
        return None
    namespace, _, address = holder[len(HOLDER_PREFIX) :].partition("@")
    return Driver(address, namespace or DEFAULT_NAMESPACE) if address else None


def driving(store: EventStore, goal_id: str) -> Driver | None:
    """The Temporal server whose workflow drives the goal (its lease says so), or None."""
    lease = store.current_lease(goal_id)
    return driver_of(lease.holder if lease else None)


def driving_here(store: EventStore, goal_id: str) -> Driver | None:
    """The Temporal server driving the goal, as this process reaches it: the holder's, its
    address replaced by ``$GOVERNOR_TEMPORAL`` when set (a server reached by another name
    from here); the namespace is the holder's."""
    driver = driving(store, goal_id)
    address = os.environ.get(ADDRESS_ENV)
    if driver is None or not address:
        return driver
    return Driver(parse_address(address, f"${ADDRESS_ENV}"), driver.namespace)


def gone_line(goal_id: str, why: str) -> str:
    """What ``status`` and ``list`` say of a goal whose workflow is gone (SPEC §13.9)."""
    return (
        f"{goal_id}: its Temporal workflow is gone ({why}); "
        f"governor temporal start {goal_id} picks the goal up again"
    )


def workflow_id(goal_id: str, created: bytes) -> str:
    """The goal's workflow id, from its id and its ``goal.created`` event as stored."""
    return f"{hashlib.sha256(created).hexdigest()[:10]}.{goal_id}"


def workflow_id_of(store: EventStore, goal_id: str) -> str:
    """The workflow id of the store's goal (the module rules); ``NotFoundError`` without it."""
    from governor.core.wire.codec import encode  # noqa: PLC0415 - start-up: list imports no model

    first = next(iter(store.load(goal_id)), None) if store.last_seq(goal_id) else None
    if first is None:
        raise NotFoundError(f"no goal '{goal_id}' in this store (governor list shows the goals)")
    return workflow_id(goal_id, encode(first))


def workflow_url(ui: str, namespace: str, workflow: str) -> str:
    """The page of a goal's workflow (its id) in Temporal's Web UI at ``ui``."""
    return f"{ui.rstrip('/')}/namespaces/{namespace}/workflows/{workflow}"
