"""Talking to a Temporal server for governor: connect, start a goal, send it a verb.

Rules (SPEC §12.11):
    * ``start`` is idempotent: the workflow id is the goal id, a goal whose workflow runs
      is left as it is, and a goal whose workflow is gone (terminated from Temporal's
      side) is started again under a fresh lease (the gone workflow's is released). The goal's lease is taken
      (holder ``temporal:<namespace>@<address>``) before the workflow starts, so from then
      on every driver can tell from the store that Temporal drives the goal.
    * An operator verb goes to the goal's workflow as an update whose validator runs
      the same pure verb as the CLI: a refusal comes back as the governor error it is
      (its one line, its exit code), and nothing is recorded.
    * Every failure of the server is one governor error: unreachable is
      ``UnavailableError`` (exit 9), an unknown namespace or workflow ``NotFoundError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, Final

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.client import (
    Client,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.runtime import Runtime
from temporalio.service import RPCError, RPCStatusCode

from governor.core.commands import OperatorVerb
from governor.drive import goals, spans
from governor.errors import (
    CommandRefusedError,
    GovernorError,
    InputError,
    LeaseError,
    NotFoundError,
    StoreError,
    UnavailableError,
)
from governor.store.base import EventStore, Lease
from governor.temporal.codec import CODEC_VARIABLE, data_converter
from governor.temporal.names import (
    SEARCH_ATTRIBUTES,
    STEP_UPDATE,
    VERB_UPDATE,
    WORKFLOW,
    Driver,
    driver_of,
    workflow_id_of,
)
from governor.temporal.secure import connect_options
from governor.temporal.wire import DriveSettings, GoalStart

REFUSED_AS: Final[dict[str, type[GovernorError]]] = {
    "NotFoundError": NotFoundError,
    "CommandRefusedError": CommandRefusedError,
    "BudgetExhaustedError": CommandRefusedError,
    "TakenOver": LeaseError,
    "StoreBehind": StoreError,
    "StoreConflicts": StoreError,
}
"""An update's failure type -> the governor error it is (others are ``InputError``)."""


_REFUSED: Final = re.compile(r'code: (Unauthenticated|PermissionDenied), message: "([^"]*)"')
CONNECT_TIMEOUT_S: Final = 30.0
MEMO_GOAL: Final = "governor_goal"
"""The memo key naming the goal a workflow drives (``start`` checks it)."""
VERB_TIMEOUT_S: Final = 60.0
"""How long a verb waits for the goal's workflow to take it (no worker runs: it waits)."""


async def connect(driver: Driver, *, runtime: Runtime | None = None) -> Client:
    """A client of the server ``driver`` names, with the payload codec it names (or
    ``$GOVERNOR_TEMPORAL_CODEC``) and, when governor's spans are on, OpenTelemetry's
    tracing interceptor sending to the same tracer (a worker's too: it shares its
    client's interceptors) and ``runtime`` (a worker's metrics) when given;
    ``UnavailableError`` when it cannot be reached."""
    options = connect_options(driver.security)
    if runtime is not None:
        options["runtime"] = runtime
    converter = data_converter(driver.security.codec or os.environ.get(CODEC_VARIABLE))
    try:
        return await asyncio.wait_for(
            Client.connect(
                driver.address,
                namespace=driver.namespace,
                data_converter=converter,
                interceptors=_interceptors(),
                **options,
            ),
            CONNECT_TIMEOUT_S,
        )
    except RPCError as exc:  # reached, and refused (a bad API key, a missing namespace)
        raise UnavailableError(
            f"the Temporal server at {driver.address} refused the connection: {exc.message}",
            what=f"the Temporal server at {driver.address}",
        ) from None
    except (RuntimeError, TimeoutError) as exc:
        raise unreachable(driver, exc) from None


def _interceptors() -> list[Any]:
    """OpenTelemetry's tracing interceptor when governor's spans are on (the otel extra)."""
    traced = spans.tracer()
    if traced is None:
        return []
    from temporalio.contrib.opentelemetry import TracingInterceptor  # noqa: PLC0415 - otel

    return [TracingInterceptor(traced)]


def unreachable(driver: Driver, exc: BaseException) -> UnavailableError:
    text = str(exc)
    refused = _REFUSED.search(text)
    if refused is not None:  # reached, and turned away: a bad API key or certificate
        return UnavailableError(
            f"the Temporal server at {driver.address} refused the connection "
            f"({refused.group(1)}: {refused.group(2)}); check the API key or certificate",
            what=f"the Temporal server at {driver.address}",
        )
    detail = text.split("tonic::transport::Error", 1)[0].rstrip(" :(")
    return UnavailableError(
        f"cannot reach the Temporal server at {driver.address} ({detail}); is it running? "
        "(a dev server: temporal server start-dev)",
        what=f"the Temporal server at {driver.address}",
    )


@contextlib.contextmanager
def translated(driver: Driver, goal_id: str | None = None) -> Iterator[None]:
    """Temporal's errors as governor's (see the module rules)."""
    try:
        yield
    except WorkflowUpdateFailedError as exc:
        cause = exc.cause
        if isinstance(cause, ApplicationError):
            error = REFUSED_AS.get(cause.type or "", InputError)
            if error is LeaseError:
                raise LeaseError(goal_id or "", cause.message) from None
            raise error(cause.message) from None
        raise CommandRefusedError(f"{goal_id}: the workflow refused it: {cause}") from None
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND and "namespace" in exc.message.lower():
            raise NotFoundError(
                f"the Temporal server at {driver.address} has no namespace {driver.namespace} "
                f"(temporal operator namespace create {driver.namespace})"
            ) from None
        if exc.status == RPCStatusCode.NOT_FOUND:
            raise NotFoundError(
                f"the Temporal server at {driver.address} has no workflow for goal {goal_id} "
                f"in namespace {driver.namespace}; start it: governor temporal start {goal_id}"
            ) from None
        if exc.status in (RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED):
            raise unreachable(driver, exc) from None
        raise UnavailableError(
            f"the Temporal server at {driver.address} refused: {exc.message}",
            what=f"the Temporal server at {driver.address}",
        ) from None


async def reachable(driver: Driver) -> None:
    """Check that the server answers and has the namespace (before anything is stored)."""
    client = await connect(driver)
    with translated(driver):
        await client.workflow_service.describe_namespace(
            DescribeNamespaceRequest(namespace=driver.namespace)
        )


async def ensure_search_attributes(client: Client, driver: Driver) -> bool:
    """Register governor's search attributes in the namespace; False when they cannot be."""
    with translated(driver):
        listed = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=driver.namespace)
        )
    missing = [n for n in SEARCH_ATTRIBUTES if n not in listed.custom_attributes]
    if not missing:
        return True
    keyword = IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
    try:
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(
                namespace=driver.namespace, search_attributes=dict.fromkeys(missing, keyword)
            )
        )
    except RPCError as exc:
        return exc.status == RPCStatusCode.ALREADY_EXISTS
    return True


def lease_for(store: EventStore, goal_id: str, driver: Driver, ttl_s: float) -> Lease:
    """A fresh lease of the goal for ``driver`` (its workflow is not running).

    Raises:
        NotFoundError: no such goal.
        CommandRefusedError: the goal has ended.
        LeaseError: another driver (a runner, a service, another Temporal server) holds it.
    """
    view = goals.load(store, goal_id) if store.last_seq(goal_id) else None
    if view is None:
        raise NotFoundError(f"no goal '{goal_id}' in this store (governor list shows the goals)")
    if view.ended:
        raise CommandRefusedError(f"{goal_id}: the goal has ended ({view.ended}); nothing to drive")
    current = store.current_lease(goal_id)
    if current is not None and driver_of(current.holder) == driver:
        # its workflow held it and is gone: a fresh token, so a worker releasing the
        # gone workflow's lease (``reconcile``) cannot release this one
        store.release_lease(current)
    try:
        return store.acquire_lease(goal_id, driver.holder, ttl_s=ttl_s)
    except LeaseError as exc:
        holder = driver_of(exc.holder)
        who = f"Temporal ({holder.describe()})" if holder else exc.holder
        raise LeaseError(
            goal_id,
            f"the goal is driven by {who}: {exc}; stop that driver first",
            holder=exc.holder,
        ) from None


async def start(
    store: EventStore,
    goal_id: str,
    driver: Driver,
    task_queue: str,
    settings: DriveSettings | None = None,
) -> bool:
    """Start the goal's workflow unless it runs; True when this call started it.

    Raises:
        CommandRefusedError: a workflow runs under the goal's workflow id that is not this
            store's goal's (another type, another goal, or no lease of this server on it).
    """
    settings = settings or DriveSettings()
    client = await connect(driver)
    workflow = workflow_id_of(store, goal_id)
    with translated(driver, goal_id):
        try:
            described = await client.get_workflow_handle(workflow).describe()
            if described.status == WorkflowExecutionStatus.RUNNING:
                await check_ours(store, goal_id, driver, described)
                return False
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise
        visible = await ensure_search_attributes(client, driver)
    lease = lease_for(store, goal_id, driver, settings.lease_ttl_s)
    settings = replace(settings, visibility=settings.visibility and visible)
    try:
        with translated(driver, goal_id):
            await client.start_workflow(
                WORKFLOW,
                GoalStart(goal_id, settings, lease),
                id=workflow,
                task_queue=task_queue,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                memo={MEMO_GOAL: goal_id},
                static_summary=static_summary(store, goal_id),
                static_details=static_details(store, goal_id),
            )
    except BaseException:
        store.release_lease(lease)
        raise
    return True


def static_summary(store: EventStore, goal_id: str) -> str:
    """The workflow's summary in Temporal's UI: the goal's id and title."""
    created = goals.load(store, goal_id).created
    return f"{goal_id}: {created.title}" if created else goal_id


def static_details(store: EventStore, goal_id: str) -> str:
    """The workflow's details in Temporal's UI (Markdown): objective and acceptance."""
    created = goals.load(store, goal_id).created
    if created is None:
        return ""
    acceptance = "\n".join(f"- {line}" for line in created.acceptance)
    return f"**Objective**\n\n{created.objective}\n\n**Acceptance**\n\n{acceptance}"


async def check_ours(
    store: EventStore, goal_id: str, driver: Driver, described: WorkflowExecutionDescription
) -> None:
    """Refuse a running workflow under the goal's id that is not this store's goal's."""
    memo = await described.memo()
    lease = store.current_lease(goal_id)
    why = None
    if described.workflow_type != WORKFLOW:
        why = f"a {described.workflow_type} workflow, not governor's"
    elif memo.get(MEMO_GOAL, goal_id) != goal_id:
        why = f"the workflow of goal {memo.get(MEMO_GOAL)}"
    elif lease is None or lease.holder != driver.holder:
        why = "a goal workflow that does not hold this store's lease (another store's copy?)"
    if why is not None:
        raise CommandRefusedError(
            f"{goal_id}: workflow {described.id} in {driver.describe()} is {why}; "
            "it was not started"
        )


async def send_verb(
    driver: Driver,
    goal_id: str,
    workflow: str,
    verb: OperatorVerb,
    *,
    timeout_s: float = VERB_TIMEOUT_S,
) -> None:
    """Give the goal's workflow an operator verb; raises the governor error of a refusal,
    ``UnavailableError`` when the workflow does not answer within ``timeout_s``."""
    client = await connect(driver)
    update = client.get_workflow_handle(workflow).execute_update(VERB_UPDATE, verb)
    with translated(driver, goal_id):
        try:
            await asyncio.wait_for(update, timeout_s)
        except TimeoutError:
            raise UnavailableError(
                f"goal {goal_id}: its Temporal workflow did not answer within {timeout_s:g} s "
                f"(is a governor temporal worker running for {driver.describe()}?); the verb "
                "may still be applied once one takes it: governor status shows whether it was",
                what="a Temporal worker",
            ) from None


async def step(driver: Driver, goal_id: str, workflow: str) -> None:
    """Make the goal's waiting workflow look again now (re-probe a missing binary)."""
    client = await connect(driver)
    with translated(driver, goal_id):
        try:
            await asyncio.wait_for(
                client.get_workflow_handle(workflow).execute_update(STEP_UPDATE), VERB_TIMEOUT_S
            )
        except TimeoutError:
            raise UnavailableError(
                f"goal {goal_id}: its Temporal workflow did not answer within "
                f"{VERB_TIMEOUT_S:g} s (is a governor temporal worker running?)",
                what="a Temporal worker",
            ) from None
