"""``governor temporal worker|start``: drive goals as Temporal workflows (the ``temporal`` extra).

Also what the other commands ask of a goal Temporal drives: ``new --temporal`` starts it,
``run`` follows it, an operator verb is sent to its workflow (``send_verb``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from governor.cli.exit_codes import ExitCode
from governor.cli.io import json_line, out, store_from
from governor.cli.values import port, seconds, whole_in
from governor.errors import InputError, UnavailableError
from governor.temporal.names import (
    ADDRESS_ENV,
    DEFAULT_NAMESPACE,
    DEFAULT_QUEUE,
    NAMESPACE_ENV,
    TEMPORAL_ADDRESS_ENV,
    TEMPORAL_NAMESPACE_ENV,
    Driver,
    Security,
    driver_of,
    driving_here,
    gone_line,
    parse_address,
    workflow_id_of,
)

if TYPE_CHECKING:
    from governor.core.commands import OperatorVerb
    from governor.store.base import EventStore, Lease

T = TypeVar("T")
EXTRA_HINT: Final = "pip install 'governor[temporal]'"

EPILOG: Final = """\
examples:
  temporal server start-dev --headless --port 7233 --db-filename temporal.db   a dev server
  governor temporal worker --address 127.0.0.1:7233        on every machine (one store)
  governor temporal start login-page --address 127.0.0.1:7233
  governor new goal.toml --temporal 127.0.0.1:7233          create and start in one step

needs the temporal extra: pip install 'governor[temporal]'
"""


client_used = False
"""Whether this process used the Temporal client (``main`` then ends it at once)."""


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    global client_used  # noqa: PLW0603 - one flag per process, read by governor.cli.main
    client_used = True
    return asyncio.run(coroutine)


def driver_from(
    address: str | None,
    namespace: str | None,
    where: str = "--address",
    security: Security | None = None,
) -> Driver:
    """The server named on the command line, by ``$GOVERNOR_TEMPORAL``, by Temporal's own
    ``$TEMPORAL_ADDRESS``, or by the Temporal profile (the extra's ``envconfig``)."""
    security = security or Security()
    given, source = address, where
    for variable in (ADDRESS_ENV, TEMPORAL_ADDRESS_ENV):
        if not given and os.environ.get(variable):
            given, source = os.environ[variable], f"${variable}"
    profile: dict[str, Any] = {}
    if not given or not (namespace or os.environ.get(NAMESPACE_ENV)):
        profile = _profile(security)
    if not given and profile.get("target_host"):
        given, source = str(profile["target_host"]), "the Temporal profile"
    if not given:
        raise InputError(f"name the Temporal server: {where} HOST:PORT (or set {ADDRESS_ENV})")
    ns = (
        namespace
        or os.environ.get(NAMESPACE_ENV)
        or os.environ.get(TEMPORAL_NAMESPACE_ENV)
        or profile.get("namespace")
        or DEFAULT_NAMESPACE
    )
    return Driver(parse_address(given, source), str(ns), security)


def _profile(security: Security) -> dict[str, Any]:
    """The Temporal profile's settings, or nothing without the extra."""
    try:
        from governor.temporal.secure import profile_config  # noqa: PLC0415 - the extra
    except ImportError:
        return {}
    return profile_config(security.profile)


def security_from(args: argparse.Namespace) -> Security:
    """The secured-cluster flags (``server``'s) as a value."""
    return Security(
        tls=getattr(args, "tls", None),
        cert=getattr(args, "tls_cert", None),
        key=getattr(args, "tls_key", None),
        ca=getattr(args, "tls_ca", None),
        server_name=getattr(args, "tls_server_name", None),
        api_key=getattr(args, "api_key", None),
        profile=getattr(args, "profile", None),
        identity=getattr(args, "identity", None),
        codec=getattr(args, "codec", None),
    )


def client_module() -> Any:
    """``governor.temporal.client``, or ``UnavailableError`` without the extra."""
    try:
        from governor.temporal import client  # noqa: PLC0415 - the temporal extra
    except ImportError as exc:
        raise UnavailableError(
            f"the temporal extra is not installed ({exc.name or exc}): {EXTRA_HINT}",
            what="the temporal extra",
        ) from None
    return client


def temporal_driver(store: EventStore, goal_id: str) -> Driver | None:
    """The Temporal server driving the goal (its lease says so), or None
    (``names.driving_here``)."""
    return driving_here(store, goal_id)


WORKFLOW_CHECK_S: Final = 15.0
"""How long ``status`` and ``list`` ask Temporal whether goals' workflows run."""


def workflow_of(store: EventStore, goal_id: str) -> str:
    """The goal's workflow id (``names.workflow_id_of``)."""
    return workflow_id_of(store, goal_id)


def workflow_states(store: EventStore, leases: Mapping[str, Lease]) -> dict[str, str]:
    """For each goal whose lease a Temporal server holds: ``running``, ``gone (why)`` or
    ``unknown (why)`` (the server could not be asked). Nothing without the extra."""
    by_driver: dict[Driver, list[str]] = {}
    for goal_id, lease in leases.items():
        held = driver_of(lease.holder)
        if held is not None:
            address = os.environ.get(ADDRESS_ENV)
            driver = Driver(address, held.namespace) if address else held
            by_driver.setdefault(driver, []).append(goal_id)
    workflows = {g: workflow_id_of(store, g) for goal_ids in by_driver.values() for g in goal_ids}
    if not by_driver:
        return {}
    try:
        client = client_module()
        from governor.temporal.reconcile import gone  # noqa: PLC0415 - the temporal extra
    except UnavailableError:
        return {}

    async def ask(driver: Driver, goal_ids: list[str]) -> dict[str, str]:
        try:
            connected = await asyncio.wait_for(client.connect(driver), WORKFLOW_CHECK_S)
            found = await asyncio.wait_for(
                asyncio.gather(*(gone(connected, workflows[g]) for g in goal_ids)),
                WORKFLOW_CHECK_S,
            )
        except Exception as exc:  # any failure: the state is unknown
            why = str(exc) or f"the Temporal server at {driver.address} did not answer"
            return dict.fromkeys(goal_ids, f"unknown ({why})")
        return {
            g: "running" if w is None else f"gone ({w})"
            for g, w in zip(goal_ids, found, strict=True)
        }

    async def ask_all() -> dict[str, str]:
        answers = await asyncio.gather(*(ask(d, g) for d, g in by_driver.items()))
        return {k: v for answer in answers for k, v in answer.items()}

    return run_async(ask_all())


def workflow_note(goal_id: str, state: str) -> str | None:
    """The line ``status``/``list`` print for a goal's workflow state (None: it runs)."""
    if state.startswith("gone ("):
        return gone_line(goal_id, state[len("gone (") : -1])
    if state.startswith("unknown ("):
        return f"{goal_id}: cannot tell whether its Temporal workflow runs: {state[9:-1]}"
    return None


def send_verb(driver: Driver, goal_id: str, workflow: str, verb: OperatorVerb) -> None:
    """Give the goal's workflow an operator verb (its refusal raised as governor's error)."""
    run_async(client_module().send_verb(driver, goal_id, workflow, verb))


def start_goal(args: argparse.Namespace, store: EventStore, goal_id: str, driver: Driver) -> bool:
    from governor.temporal.wire import DriveSettings  # noqa: PLC0415 - the temporal extra

    settings = DriveSettings(
        lease_ttl_s=getattr(args, "lease_ttl", 300.0),
        call_heartbeat_s=getattr(args, "call_heartbeat", 30.0),
        kill_grace_s=getattr(args, "kill_grace", 10.0),
        reprobe_s=getattr(args, "reprobe", 60.0),
        max_history=getattr(args, "max_history", 4000),
        store_timeout_s=getattr(args, "store_timeout", 60.0),
    )
    queue = getattr(args, "task_queue", None) or DEFAULT_QUEUE
    return bool(run_async(client_module().start(store, goal_id, driver, queue, settings)))


def cmd_start(args: argparse.Namespace) -> int:
    driver = driver_from(args.address, args.namespace, security=security_from(args))
    client_module()
    with store_from(args.store) as store:
        started = start_goal(args, store, args.goal, driver)
        workflow = workflow_id_of(store, args.goal)
    what = "started" if started else "already running"
    out(f"{args.goal}: {what} on Temporal ({driver.describe()}, workflow id {workflow})")
    return ExitCode.OK


def cmd_worker(args: argparse.Namespace) -> int:
    driver = driver_from(args.address, args.namespace, security=security_from(args))
    client_module()
    from governor.temporal.activities import WorkerConfig  # noqa: PLC0415 - the temporal extra
    from governor.temporal.worker import WorkerSettings, serve  # noqa: PLC0415

    with store_from(args.store):  # the store opens (and migrates) before any work is taken
        pass
    config = WorkerConfig(
        driver=driver,
        workdir=Path.cwd(),
        env=dict(os.environ),
        store_url=args.store,
        log_file=Path(args.log_file) if args.log_file else None,
    )
    metrics = None if args.metrics_port is None else f"{args.metrics_host}:{args.metrics_port}"
    settings = WorkerSettings(
        config,
        args.task_queue,
        args.max_concurrent_calls,
        args.graceful,
        args.check_workflows,
        metrics=metrics,
    )
    run_async(serve(settings))
    return ExitCode.OK


def cmd_doctor(args: argparse.Namespace) -> int:
    """What became of a goal's workflow, and how to restart it from the store."""
    from governor.drive import goals  # noqa: PLC0415 - start-up

    driver = driver_from(args.address, args.namespace, security=security_from(args))
    client = client_module()
    with store_from(args.store, read_only=True) as store:
        goals.exists(store, args.goal)
        view, decision = goals.status(store, args.goal)
        lease = store.current_lease(args.goal)
        workflow = workflow_id_of(store, args.goal)
    state, failed = run_async(_workflow_of(client, driver, args.goal, workflow))
    lines = doctor_lines(
        args.goal, view.seq, decision.status, lease, state=state, failed=failed, workflow=workflow
    )
    if args.json:
        json_line(
            {
                "goal_id": args.goal,
                "seq": view.seq,
                "status": decision.status,
                "lease": lease.holder if lease else None,
                "workflow": state,
                "failure": failed,
                "advice": lines[-1],
            }
        )
    else:
        for line in lines:
            out(line)
    return ExitCode.OK


async def _workflow_of(
    client: Any, driver: Driver, goal_id: str, workflow: str
) -> tuple[str, str | None]:
    from governor.temporal.reconcile import failure, gone  # noqa: PLC0415 - the temporal extra

    connected = await client.connect(driver)
    with client.translated(driver, goal_id):
        why = await gone(connected, workflow)
        failed = await failure(connected, workflow) if why == "failed" else None
    return ("running" if why is None else why), failed


def doctor_lines(
    goal_id: str,
    seq: int,
    status: str,
    lease: Lease | None,
    *,
    state: str,
    failed: str | None,
    workflow: str,
) -> list[str]:
    """``temporal doctor``'s lines: the store, the workflow, what to do (the last line)."""
    held = f"lease held by {lease.holder}" if lease else "no lease"
    lines = [f"{goal_id}: the store holds {seq} events; status {status}; {held}"]
    lines.append(f"its Temporal workflow: {state}" + (f": {failed}" if failed else ""))
    ended = status in ("succeeded", "cancelled")
    if state == "running":
        lines.append("nothing to do: the workflow drives the goal")
    elif ended:
        lines.append("nothing to do: the goal has ended")
    else:
        lines.append(
            "the store is the truth: governor temporal start "
            f"{goal_id} starts a new workflow that loads the goal from the store (seq {seq}); "
            "anything a failed workflow recorded after that is not in the store (see its "
            f"history: temporal workflow show -w {workflow})"
        )
    return lines


def to_follow(goal_id: str, driver: Driver, workflow: str, *, quiet: bool) -> None:
    """``governor run`` on a goal Temporal drives: say so, and make its workflow look again
    now (a missing binary is re-probed, as ``run`` would); ``run --watch`` then follows."""
    if not quiet:
        out(
            f"{goal_id} is driven by Temporal ({driver.describe()}); following it "
            "(Ctrl-C stops following, not the goal)"
        )
    try:
        run_async(client_module().step(driver, goal_id, workflow))
    except UnavailableError as exc:
        if not quiet:
            out(f"note: {exc}; following the store only")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = sub.add_parser(
        "temporal",
        help="drive goals as Temporal workflows: worker, start (the temporal extra)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    ).add_subparsers(dest="temporal_verb", required=True, metavar="VERB")

    def server(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--address", metavar="HOST:PORT", help=f"the Temporal server (default ${ADDRESS_ENV})"
        )
        p.add_argument(
            "--namespace", metavar="NS", help=f"the namespace (default ${NAMESPACE_ENV} or default)"
        )
        p.add_argument(
            "--task-queue", default=DEFAULT_QUEUE, metavar="QUEUE", help="default: governor"
        )
        secured(p)

    p = group.add_parser("worker", help="host goal workflows and their agent calls until stopped")
    server(p)
    p.add_argument(
        "--max-concurrent-calls",
        type=whole_in(1, 1000),
        default=8,
        metavar="N",
        help="agent calls this process runs at once (default 8)",
    )
    p.add_argument(
        "--graceful",
        type=seconds,
        default=600.0,
        metavar="SECONDS",
        help="on SIGTERM, how long calls in hand may finish before they are cancelled (default 600)",
    )
    p.add_argument(
        "--check-workflows",
        type=seconds,
        default=60.0,
        metavar="SECONDS",
        help="how often to release the leases of goals whose workflow is gone (default 60)",
    )
    p.add_argument(
        "--identity", metavar="NAME", help="this worker's identity in Temporal (default pid@host)"
    )
    p.add_argument("--log-file", metavar="FILE", help="JSON log lines here (default: stderr)")
    p.add_argument(
        "--metrics-port",
        type=port,
        metavar="PORT",
        help="serve the Temporal SDK's metrics at http://HOST:PORT/metrics (Prometheus)",
    )
    p.add_argument(
        "--metrics-host",
        default="127.0.0.1",
        metavar="HOST",
        help="the address the metrics endpoint binds (default 127.0.0.1)",
    )
    p.set_defaults(func=cmd_worker)

    p = group.add_parser(
        "start", help="start a goal's workflow (idempotent: workflow id = goal id)"
    )
    p.add_argument("goal", metavar="GOAL")
    server(p)
    add_drive_options(p)
    p.set_defaults(func=cmd_start)

    p = group.add_parser(
        "doctor", help="what became of a goal's workflow, and how to restart it from the store"
    )
    p.add_argument("goal", metavar="GOAL")
    server(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)


def secured(p: argparse.ArgumentParser) -> None:
    """The flags of a secured cluster (``names.Security``; Temporal's variables and profile
    fill in what they leave out)."""
    p.add_argument(
        "--tls",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="TLS on (or --no-tls: off) whatever the profile says",
    )
    p.add_argument("--tls-cert", metavar="PEM", help="client certificate (mTLS), with --tls-key")
    p.add_argument("--tls-key", metavar="PEM", help="the client certificate's private key")
    p.add_argument("--tls-ca", metavar="PEM", help="the CA that signed the server's certificate")
    p.add_argument("--tls-server-name", metavar="NAME", help="the name the server's cert carries")
    p.add_argument(
        "--api-key",
        metavar="KEY",
        help="API key (Temporal Cloud); prefer $TEMPORAL_API_KEY (argv is visible to ps)",
    )
    p.add_argument(
        "--profile",
        metavar="NAME",
        help="Temporal profile (temporal.toml; default $TEMPORAL_PROFILE)",
    )
    p.add_argument(
        "--codec",
        metavar="CODEC",
        help="payload codec: zlib, or MODULE:NAME of a temporalio PayloadCodec "
        "(default $GOVERNOR_TEMPORAL_CODEC); every client of the namespace names the same",
    )


def add_drive_options(p: argparse.ArgumentParser) -> None:
    """How a started goal's workflow drives it (``DriveSettings``)."""
    p.add_argument(
        "--lease-ttl",
        type=seconds,
        default=300.0,
        metavar="SECONDS",
        help="the goal's lease outlives a workflow nobody runs by this much (default 300)",
    )
    p.add_argument(
        "--call-heartbeat",
        type=seconds,
        default=30.0,
        metavar="SECONDS",
        help="an agent call silent this long is lost, then continued (default 30)",
    )
    p.add_argument(
        "--kill-grace",
        type=seconds,
        default=10.0,
        metavar="SECONDS",
        help="a continuation waits this long for a lost call's agent on another machine (default 10)",
    )
    p.add_argument(
        "--reprobe",
        type=seconds,
        default=60.0,
        metavar="SECONDS",
        help="how often a goal stopped on a missing binary looks again (default 60)",
    )
    p.add_argument(
        "--store-timeout",
        type=seconds,
        default=60.0,
        metavar="SECONDS",
        help="a store activity not done in this long is tried again, e.g. on another worker (default 60)",
    )
    p.add_argument(
        "--max-history",
        type=whole_in(200, 50_000),
        default=4000,
        metavar="N",
        help="Temporal history events before the workflow continues as new (default 4000)",
    )
