"""Goal commands: ``new``, ``run``, ``tick``, ``status``, ``list``, ``events``, ``export``, ``import``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, get_args

from governor.cli.exit_codes import STATUS_CODES, ExitCode
from governor.cli.io import err, json_line, out, progress, store_from
from governor.cli.terminate import Terminated, terminable
from governor.cli.values import natural, seconds, wait_seconds
from governor.clock import utc_now
from governor.core.decision import Status
from governor.core.text import count, stamp
from governor.errors import InputError
from governor.render import records
from governor.render.text import format_event, format_status, format_summaries
from governor.store.checks import StoreChecks

if TYPE_CHECKING:
    from governor.analysis.unblock import Unblock
    from governor.core.events import Event
    from governor.drive.goals import RunReport
    from governor.drive.runner import RunnerSettings
    from governor.store.base import EventStore, Lease
    from governor.temporal.names import Driver

# Start-up (issue 12): the driver, the codec and the event models are imported by the
# commands that use them (the renderers and ``decision`` import none of them), so that
# ``list`` (which reads the store's summaries) imports no pydantic model;
# ``tests/test_cli_startup.py`` checks it.


GOAL_STATUSES = tuple(s for s in get_args(Status) if s != "in_review")
"""What ``list --status`` accepts: a goal's statuses (``in_review`` is a work item's)."""
ENDED: frozenset[str] = frozenset({"succeeded", "cancelled"})
"""Statuses no driver holds a goal in (``list`` asks Temporal about the others' workflows)."""


def cmd_new(args: argparse.Namespace) -> int:
    # the file first: a goal file that cannot be read never opens (nor creates) a store
    from governor.drive import goals  # noqa: PLC0415 - start-up
    from governor.drive.goalfile import goal_from_file  # noqa: PLC0415 - start-up
    from governor.drive.secrets import refuse_secrets  # noqa: PLC0415 - start-up

    events = goal_from_file(Path(args.goal_file), at=utc_now(), actor=args.actor)
    refuse_secrets(events, args.goal_file)
    driver = _temporal_driver(args, events)
    with store_from(args.store) as store:
        view = goals.create_from(store, events)
        if driver is not None:  # created, then started: a failed start leaves the goal stored
            from governor.cli.temporal import start_goal  # noqa: PLC0415 - the temporal extra

            start_goal(args, store, view.goal_id, driver)
    if args.json:
        json_line(records.created_record(view))
    else:
        out(view.goal_id)
        from governor.cli.forecasting import forecast_line  # noqa: PLC0415 - start-up
        from governor.core.events import GoalCreated  # noqa: PLC0415 - start-up

        if isinstance(events[0], GoalCreated):  # a line of forecast on stderr, when there is data
            forecast_line(events[0].model_copy(update={"goal_id": view.goal_id}), args.store)
    return ExitCode.OK


def _temporal_driver(args: argparse.Namespace, events: list[Event]) -> Driver | None:
    """The server ``new --temporal`` names (checked, with the extra, before anything is
    stored)."""
    if not args.temporal:
        return None
    from governor.cli.temporal import client_module, driver_from, run_async  # noqa: PLC0415

    driver = driver_from(args.temporal, None, "--temporal")
    run_async(client_module().reachable(driver))
    return driver


def _settings(args: argparse.Namespace) -> RunnerSettings:
    from governor.analysis.asking import need_in  # noqa: PLC0415 - read commands start fast
    from governor.drive.runner import RunnerSettings  # noqa: PLC0415 - read commands start fast

    state = (
        Path(args.store_dir) if getattr(args, "store_dir", None) else Path(".governor") / "scripted"
    )
    return RunnerSettings(
        workdir=Path.cwd(),
        env=dict(os.environ),
        state_dir=state.resolve(),
        lease_ttl_s=args.lease_ttl,
        max_wait_s=getattr(args, "max_wait", 900.0),
        asking=need_in,
    )


def _report(args: argparse.Namespace, goal_id: str, report: RunReport) -> int:
    decision = report.decision
    if args.json:
        json_line(records.run_record(goal_id, report.outcome, decision))
    else:
        out(format_status(goal_id, report.title, decision), colour=True)
    if report.outcome == "waiting" and decision.status not in ("blocked", "budget_exhausted"):
        return ExitCode.WAITING
    return STATUS_CODES.get(decision.status, ExitCode.OK)


def cmd_run(args: argparse.Namespace) -> int:
    from governor.cli.watch import live_run, watch  # noqa: PLC0415 - start-up

    if args.watch:
        return watch(args, as_run=True)
    from governor.cli.temporal import temporal_driver, to_follow, workflow_of  # noqa: PLC0415
    from governor.drive import goals  # noqa: PLC0415 - start-up

    with store_from(args.store) as store:
        goals.exists(store, args.goal)
        driver = temporal_driver(store, args.goal)
        workflow = workflow_of(store, args.goal) if driver is not None else ""
    if driver is not None:  # Temporal drives it: say so, let it look again, follow it
        to_follow(args.goal, driver, workflow, quiet=args.quiet)
        return watch(args, as_run=True)
    try:
        with (
            terminable(),
            store_from(args.store) as store,
            live_run(args.quiet) as (shown, calls),
        ):
            runner = goals.runner(store, args.goal, _settings(args), progress=shown, calls=calls)
            report = goals.stopped(runner)  # a stopped goal's run never loads LangGraph
            if report is None:
                from governor.graph.build import run  # noqa: PLC0415 - langgraph: 0.3 s

                report = run(runner)
    except Terminated:  # the runner's ``finally`` released the lease on the way out
        err(
            f"terminated (SIGTERM): the lease on {args.goal} is released; "
            f"`governor run {args.goal}` goes on from here"
        )
        return ExitCode.TERMINATED
    return _report(args, args.goal, report)


def cmd_tick(args: argparse.Namespace) -> int:
    from governor.drive import goals  # noqa: PLC0415 - start-up

    with store_from(args.store) as store:
        runner = goals.runner(
            store, args.goal, _settings(args), progress=None if args.quiet else progress
        )
        report = goals.tick(runner)
    return _report(args, args.goal, report)


def cmd_status(args: argparse.Namespace) -> int:
    if args.goal is None:
        if args.watch:
            raise InputError(
                "status --watch follows one goal: give its id (governor status GOAL --watch)"
            )
        return cmd_list(args)
    if args.watch:
        from governor.cli.watch import watch  # noqa: PLC0415 - start-up

        return watch(args, as_run=False)
    from governor.analysis.unblock import unblocking  # noqa: PLC0415 - start-up
    from governor.core.charges import describe, last_runs  # noqa: PLC0415 - start-up
    from governor.drive import reads  # noqa: PLC0415 - start-up: nothing that drives

    with store_from(args.store, read_only=True) as store:
        reads.exists(store, args.goal)
        view, decision = reads.status(store, args.goal)
        lease = store.current_lease(args.goal)
        states = _workflow_states(store, {args.goal: lease} if lease is not None else {})
    found = unblocking(view, decision, utc_now(), args.store)
    if args.json:
        record = records.status_record(view, decision, lease, found)
        if args.goal in states:
            record["temporal_workflow"] = states[args.goal]
        json_line(record)
    else:
        runs = [(what, describe(event)) for what, event in last_runs(view)]
        title = view.created.title if view.created else ""
        out(format_status(view.goal_id, title, decision, runs, found), colour=True)
        if lease is not None:
            out(f"lease: held by {lease.holder} until {stamp(lease.expires_at)}")
        _workflow_notes(states)
    return ExitCode.OK


def _workflow_states(store: EventStore, leases: dict[str, Lease]) -> dict[str, str]:
    """Whether the Temporal workflows holding these leases run (SPEC §13.9)."""
    if not leases:
        return {}
    from governor.cli.temporal import workflow_states  # noqa: PLC0415 - start-up

    return workflow_states(store, leases)


def _workflow_notes(states: dict[str, str]) -> None:
    if not states:
        return  # no Temporal workflow to tell of: no asyncio to import (start-up)
    from governor.cli.temporal import workflow_note  # noqa: PLC0415 - start-up

    for goal_id, state in states.items():
        if (note := workflow_note(goal_id, state)) is not None:
            out(note)


def _blockers(
    store: EventStore, goal_ids: list[str], store_arg: str | None
) -> dict[str, tuple[Unblock, ...]]:
    """Every blocker of each goal named (those that wait: only they are folded)."""
    if not goal_ids:
        return {}  # a list of goals that all move or ended imports no analysis (start-up)
    from governor.analysis.unblock import unblocking  # noqa: PLC0415 - start-up
    from governor.drive import reads  # noqa: PLC0415 - start-up: nothing that drives

    now = utc_now()
    return {g: unblocking(*reads.status(store, g), now, store_arg) for g in goal_ids}


def cmd_list(args: argparse.Namespace) -> int:
    statuses = getattr(args, "status", None) or ()
    with store_from(args.store, read_only=True) as store:
        rows = store.goals(
            statuses=statuses or None, needs_person=getattr(args, "needs_person", False)
        )
        hidden = store.unsummarised() if isinstance(store, StoreChecks) and not statuses else 0
        leases = {r.goal_id: store.current_lease(r.goal_id) for r in rows if r.status not in ENDED}
        held = {g: lease for g, lease in leases.items() if lease is not None}
        states = _workflow_states(store, held)
        found = _blockers(store, [r.goal_id for r in rows if r.attention <= 1], args.store)
    if hidden:  # a summary row deleted behind the store's back (issue 35): say so
        err(
            f"note: {count(hidden, 'goal')} in the store {'has' if hidden == 1 else 'have'} "
            "events but no summary row, so list cannot show them; "
            "`governor store check --repair` rebuilds them"
        )
    if args.json:
        for row in rows:
            record = records.summary_record(row, found.get(row.goal_id, ()))
            if row.goal_id in states:
                record["temporal_workflow"] = states[row.goal_id]
            json_line(record)
    else:
        from governor.store.url import describe_store  # noqa: PLC0415 - start-up

        out(format_summaries(describe_store(args.store), rows, statuses, found), colour=True)
        _workflow_notes(states)
    return ExitCode.OK


def cmd_events(args: argparse.Namespace) -> int:
    from governor.core.wire.codec import to_dict  # noqa: PLC0415 - start-up
    from governor.drive import reads  # noqa: PLC0415 - start-up: nothing that drives

    with store_from(args.store, read_only=True) as store:
        reads.exists(store, args.goal)
        for event in store.load(args.goal, after_seq=args.after):
            if args.json:
                json_line(to_dict(event))
            else:
                out(format_event(event))
    return ExitCode.OK


def cmd_export(args: argparse.Namespace) -> int:
    from governor.drive import reads  # noqa: PLC0415 - start-up: nothing that drives
    from governor.store.files import write_atomically  # noqa: PLC0415 - start-up
    from governor.store.transfer import export_history  # noqa: PLC0415 - start-up

    with store_from(args.store, read_only=True) as store:
        reads.exists(store, args.goal)
        if args.output:  # whole or not at all: a full disk never leaves a torn file
            with write_atomically(args.output) as handle:
                export_history(store, args.goal, handle)
        else:
            export_history(store, args.goal, sys.stdout.buffer)
            sys.stdout.buffer.flush()
    return ExitCode.OK


def cmd_import(args: argparse.Namespace) -> int:
    """Import each history (a folder's ``*.jsonl``) in its own transaction, with progress;
    a file that fails is one line on stderr and the others go on."""
    from governor.cli.exit_codes import exit_code_for  # noqa: PLC0415 - start-up
    from governor.cli.live import Meter  # noqa: PLC0415 - start-up
    from governor.errors import GovernorError  # noqa: PLC0415 - start-up
    from governor.store.jsonl import history_files  # noqa: PLC0415 - start-up
    from governor.store.transfer import import_history  # noqa: PLC0415 - start-up

    if len(args.files) == 1 and not Path(args.files[0]).is_dir():  # one file: errors as ever
        paths = [Path(args.files[0])]
    else:
        paths = [f for given in args.files for f in history_files(given)]
    first_failure: int | None = None
    with store_from(args.store) as store, Meter("importing", quiet=len(paths) == 1) as meter:
        for done, path in enumerate(paths, start=1):
            try:
                result = import_history(store, path)
            except GovernorError as exc:
                if len(paths) == 1:
                    raise
                err(f"error: {path}: {exc}")
                first_failure = first_failure or int(exit_code_for(exc))
            else:
                _imported(args, result.goal_id, result.events, result.notes)
            meter(done, len(paths))
    return first_failure or ExitCode.OK


def _imported(args: argparse.Namespace, goal_id: str, events: int, notes: tuple[str, ...]) -> None:
    if args.json:
        json_line(records.imported_record(goal_id, events, notes))
        return
    out(f"imported {goal_id}: {events} events")
    for note in notes:
        out(f"note: {note}")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "new", help="create a goal from a goal file (TOML, JSON or YAML); prints its id"
    )
    p.add_argument("goal_file", metavar="GOAL_FILE")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--temporal",
        metavar="HOST:PORT",
        help="and start it on this Temporal server (governor temporal start; the temporal extra)",
    )
    p.set_defaults(func=cmd_new)

    for name, func, text in (
        ("run", cmd_run, "drive a goal until it stops (or must wait longer than --max-wait)"),
        ("tick", cmd_tick, "drive a goal one step"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("goal", metavar="GOAL")
        if name == "run":
            p.add_argument(
                "--max-wait",
                type=wait_seconds,
                default=900.0,
                metavar="SECONDS",
                help="longest cooldown to sleep through before returning 'waiting' (default 900)",
            )
        p.add_argument(
            "--lease-ttl",
            type=seconds,
            default=60.0,
            metavar="SECONDS",
            help="how long the lease outlives a runner that died (renewed every third of it; default 60)",
        )
        p.add_argument("--quiet", action="store_true", help="no progress lines")
        if name == "run":
            p.add_argument(
                "--watch",
                action="store_true",
                help="follow the goal another driver runs (serve, the graph) until it stops; "
                "drive nothing",
            )
        p.add_argument("--json", action="store_true", help="print the final decision as JSON")
        p.set_defaults(func=func)

    p = sub.add_parser("status", help="a goal's decision and ledger (every goal without GOAL)")
    p.add_argument("goal", metavar="GOAL", nargs="?")
    p.add_argument(
        "--watch",
        action="store_true",
        help="follow the goal until it stops (its runs as they happen; Ctrl-C stops watching)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("list", help="every goal in the store, one line each")
    p.add_argument(
        "--status",
        action="append",
        choices=GOAL_STATUSES,
        metavar="STATUS",
        help=f"only goals with this status (repeatable): {', '.join(GOAL_STATUSES)}",
    )
    p.add_argument(
        "--needs-person",
        action="store_true",
        help="only goals that wait on a person: a review, a question, a budget grant",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("events", help="a goal's events, in order")
    p.add_argument("goal", metavar="GOAL")
    p.add_argument(
        "--after", type=natural, default=0, metavar="SEQ", help="only events after this seq"
    )
    p.add_argument("--json", action="store_true", help="print the events as JSON Lines")
    p.set_defaults(func=cmd_events)

    p = sub.add_parser("export", help="write a goal's history as JSON Lines (stdout, or -o FILE)")
    p.add_argument("goal", metavar="GOAL")
    p.add_argument("-o", "--output", metavar="FILE")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "import", help="validate history files (or folders of them) and store each as a new goal"
    )
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="history files or folders of *.jsonl, each a goal"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_import)
