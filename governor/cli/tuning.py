"""Analysis commands over many histories: ``simulate`` and ``tune``."""

from __future__ import annotations

import argparse
import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC
from pathlib import Path
from typing import Final

from governor.analysis.corpus import corpus_of
from governor.analysis.fleet import FleetRun, FleetSettings, Mode, simulate_fleet
from governor.analysis.grid import parse_grid
from governor.analysis.model import Model
from governor.analysis.outages import savings
from governor.analysis.pool_axis import pool_axis
from governor.analysis.simulate import simulate
from governor.analysis.tune_corpus import (
    BOOTSTRAP,
    MAX_BOOTSTRAP,
    check_plot_target,
    plot,
    tune_corpus,
)
from governor.cli import pool_options
from governor.cli.exit_codes import ExitCode
from governor.cli.io import err, json_line, out
from governor.cli.live import Meter, terminal_width
from governor.cli.values import natural, number_in, wait_seconds, whole_in
from governor.core.events import Event
from governor.core.fold import project
from governor.core.policy import Policy, new_goal_policy
from governor.core.policy_input import parse_assignments, policy_from
from governor.core.rules.decide import decide
from governor.errors import InputError
from governor.render import records
from governor.render.pool_axis import (
    fleet_pool_record,
    format_fleet_pool,
    format_pool_axis,
    pool_axis_record,
)
from governor.render.table import fitted, format_report
from governor.render.text import format_fleet, format_savings
from governor.store.jsonl import write_history


@contextmanager
def _writing(path: Path | str) -> Iterator[None]:
    """Turns a file or folder that cannot be written into one line naming it."""
    try:
        yield
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _model(args: argparse.Namespace) -> Model:
    values = {
        f.name: getattr(args, f.name) for f in _model_options() if getattr(args, f.name) is not None
    }
    return dataclasses.replace(Model(), **values)


def _histories(
    args: argparse.Namespace, model: Model, policy: Policy
) -> tuple[Iterable[list[Event]], FleetRun | None]:
    """The histories to write: independent goals, or one fleet under a shared vendor."""
    if args.fleet is None:
        return simulate(model, policy, goals=args.goals, seed=args.seed), None
    pool = pool_options.fleet_limits(args)
    settings = FleetSettings(
        goals=args.goals,
        mode=args.fleet,
        spread_s=args.spread_s,
        operator_delay_s=args.operator_delay_s,
        outages=tuple(args.outage) if args.outage else None,
        pool=pool[0] if pool else None,
        pool_zone=pool[1] if pool else UTC,
    )
    run = simulate_fleet(model, policy, seed=args.seed, settings=settings)
    if args.plot:
        from governor.analysis.fleet_plot import plot as plot_fleet  # noqa: PLC0415 - matplotlib

        other: Mode = "per-goal" if args.fleet == "aware" else "aware"
        twin = simulate_fleet(
            model, policy, seed=args.seed, settings=dataclasses.replace(settings, mode=other)
        )
        aware, per_goal = (run, twin) if args.fleet == "aware" else (twin, run)
        with _writing(args.plot):
            plot_fleet(aware, per_goal, args.plot)
        err(f"wrote the plot to {args.plot}")
    return run.histories, run


def cmd_simulate(args: argparse.Namespace) -> int:
    if args.plot and args.fleet is None:
        raise InputError("--plot draws a fleet outage: give --fleet aware or --fleet per-goal")
    pool_options.fleet_limits(args)  # checked before anything is written
    unplotted = _without_plot(args, "the histories are written all the same")
    model, policy = _model(args), policy_from(parse_assignments(args.policy or ""))
    policy = new_goal_policy(policy)  # simulated goals are new goals (SPEC §12.1)
    folder = Path(args.out)
    with _writing(folder):
        folder.mkdir(parents=True, exist_ok=True)
    statuses, events = Counter[str](), 0
    histories, fleet = _histories(args, model, policy)
    with Meter("simulating") as meter:
        for index, history in enumerate(histories, start=1):
            path = folder / f"{history[0].goal_id}.jsonl"
            with _writing(path), path.open("wb") as handle:
                write_history(history, handle)
            view = project(history)
            statuses[decide(view, view.last_at or history[-1].at, with_ledger=False).status] += 1
            events += len(history)
            meter(index, args.goals)
    if args.json:
        record = records.simulated_record(
            model,
            histories=args.goals,
            events=events,
            folder=str(folder),
            seed=args.seed,
            statuses=dict(statuses),
        )
        if fleet is not None:
            record = records.simulated_fleet_record(record, fleet)
            if fleet.pool is not None:
                record["fleet"]["pool"] = fleet_pool_record(fleet.pool)
        json_line(record)
    else:
        out(
            f"wrote {args.goals} histories ({events} events) to {folder}: "
            + ", ".join(f"{n} {s}" for s, n in statuses.most_common())
        )
        if fleet is not None:
            out(format_fleet(fleet))
            if fleet.pool is not None:
                out(format_fleet_pool(fleet.pool))
    return ExitCode.OK if unplotted is None else ExitCode.UNAVAILABLE


def _window(text: str) -> tuple[float, float]:
    """``START:END`` in seconds from the start: finite, at most 30 days, START before END."""
    start, sep, end = text.partition(":")
    window = (wait_seconds(start), wait_seconds(end)) if sep else (0.0, 0.0)
    if window[0] >= window[1]:
        raise argparse.ArgumentTypeError(f"'{text}' is not START:END in seconds, START < END")
    return window


PLOT_EXTRA = "pip install 'governor[plot]'"


def _can_plot() -> bool:
    """Whether matplotlib (the ``plot`` extra) imports, asked before any work is done."""
    try:
        import matplotlib  # noqa: F401, PLC0415 - optional, and slow to import
    except ImportError:
        return False
    return True


def _without_plot(args: argparse.Namespace, rest: str) -> str | None:
    """The ``--plot`` file that cannot be drawn for want of the extra (None: it can, or
    none was asked), said in one line before any work; the command does the rest."""
    if not args.plot or _can_plot():
        return None
    unplotted, args.plot = args.plot, None
    err(
        f"error: --plot needs the plot extra ({PLOT_EXTRA}): {unplotted} will not be written; {rest}"
    )
    return str(unplotted)


def cmd_tune(args: argparse.Namespace) -> int:
    pools = pool_options.tune_limits(args)  # checked before any work (SPEC §13.6 bad input)
    if args.plot:
        check_plot_target(args.plot)
    unplotted = _without_plot(args, "the table follows")
    corpus = corpus_of(args.corpus, store_url=args.store)
    grid = parse_grid(args.grid)
    with Meter("evaluating", quiet=args.quiet) as meter:
        report = tune_corpus(
            corpus,
            grid,
            samples=args.samples,
            bootstrap=args.bootstrap,
            workers=args.workers,
            seed=args.seed,
            progress=meter,
        )
    if args.plot:
        with _writing(args.plot):
            plot(report, args.plot)
        err(f"wrote the plot to {args.plot}")
    spared = savings(corpus.events(i) for i in range(len(corpus)))
    axis = pool_axis(corpus, pools[0], pools[1]) if pools is not None else None
    if args.json:
        record = records.tuned_record(report, spared)
        json_line(record if axis is None else {**record, "pools": pool_axis_record(axis)})
    else:
        width = terminal_width()
        out(format_report(report, every=args.all, width=width))
        out("\n".join(fitted(format_savings(spared), width)))
        if axis is not None:
            out(format_pool_axis(axis))
    return ExitCode.OK if unplotted is None else ExitCode.UNAVAILABLE


MAX_GOALS: Final = 1_000_000
"""The most goals one ``simulate`` writes."""
MAX_SAMPLES: Final = 1_000
"""The most Monte Carlo tails per censored outcome."""
MAX_WORKERS: Final = 256
"""The most worker processes of a tune."""
PROBABILITIES: Final = frozenset(
    {
        "retry_after_p",
        "missing_binary",
        "plan_success",
        "plan_decision",
        "complete_after_milestone",
        "attempt_decision",
        "repeat_failed",
    }
)
"""Model parameters that are probabilities (0 to 1); rates and times are 0 to 10^6, and
the shapes and lengths of the draws above 0."""
POSITIVE: Final = frozenset(
    {"item_a", "item_b", "outage_mean_s", "planner_s", "worker_s", "refusal_s"}
)


def _model_options() -> list[dataclasses.Field[object]]:
    """The model's parameters a ``simulate`` option sets (numbers; not the fitted lengths)."""
    return [f for f in dataclasses.fields(Model) if isinstance(f.default, int | float)]


def _replicates(text: str) -> int:
    """``--bootstrap``: 0 (off) or 2 to ``MAX_BOOTSTRAP`` replicates."""
    value = whole_in(0, MAX_BOOTSTRAP)(text)
    if value == 1:
        raise argparse.ArgumentTypeError(
            f"must be 0 (off) or 2 to {MAX_BOOTSTRAP} replicates, not 1"
        )
    return value


def _model_type(name: str, default: object) -> Callable[[str], object]:
    """The type of a model option: a bounded, finite value (the model is not validated)."""
    if isinstance(default, int):
        return whole_in(1, 100)
    if name in PROBABILITIES:
        return number_in(0, 1)
    return number_in(0, 1e6, above=name in POSITIVE, seconds=name.endswith("_s"))


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "simulate", help="write synthetic goal histories from a stated generative model"
    )
    p.add_argument("--goals", type=whole_in(1, MAX_GOALS), required=True, metavar="N")
    p.add_argument("--seed", type=natural, default=0)
    p.add_argument(
        "--out", required=True, metavar="DIR", help="the folder to write <goal>.jsonl files into"
    )
    p.add_argument(
        "--policy",
        metavar="K=V,…",
        help="the policy the simulated runner uses (default: SPEC defaults)",
    )
    for f in _model_options():
        p.add_argument(
            f"--{f.name.replace('_', '-')}",
            dest=f.name,
            type=_model_type(f.name, f.default),
            default=None,
            metavar=type(f.default).__name__.upper(),
            help=f"model: {f.name} (default {f.default})",
        )
    p.add_argument(
        "--fleet",
        choices=("aware", "per-goal"),
        help="one vendor shared by every goal: with the fleet rule (aware) or without it",
    )
    p.add_argument(
        "--spread-s",
        type=wait_seconds,
        default=1.0,
        help="fleet: seconds between goal starts (default 1)",
    )
    p.add_argument(
        "--outage",
        type=_window,
        action="append",
        metavar="START:END",
        help="fleet: a fixed outage, in seconds from the start (repeatable; default: the model's)",
    )
    p.add_argument(
        "--plot",
        metavar="PNG",
        help="fleet: draw the outage (parked goals, probes, resumes; refusals against the other mode)",
    )
    p.add_argument(
        "--operator-delay-s",
        type=wait_seconds,
        default=900.0,
        help="fleet per-goal: how long after an outage a person resumes its stopped goals (900)",
    )
    pool_options.add_fleet_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser(
        "tune", help="estimate candidate policies on a corpus of histories; recommend one"
    )
    p.add_argument(
        "corpus",
        nargs="*",
        metavar="CORPUS",
        help="history files or folders (none: every goal of the store)",
    )
    p.add_argument(
        "--grid",
        action="append",
        required=True,
        metavar="FIELD=A..B",
        help="a policy field and its candidate values: a..b, a..b:step or a,b,c (repeatable)",
    )
    p.add_argument(
        "--samples",
        type=whole_in(1, MAX_SAMPLES),
        default=1,
        help="Monte Carlo tails per censored outcome and model (default 1)",
    )
    p.add_argument(
        "--bootstrap",
        type=_replicates,
        default=BOOTSTRAP,
        metavar="N",
        help=f"bootstrap replicates, each refitting the model on goals drawn with replacement "
        f"(0: off; default {BOOTSTRAP})",
    )
    p.add_argument(
        "--workers",
        type=whole_in(1, MAX_WORKERS),
        default=None,
        help="processes (default: every core)",
    )
    p.add_argument("--seed", type=natural, default=0)
    p.add_argument("--plot", metavar="PNG", help="write success against cost as a PNG")
    p.add_argument(
        "--all", action="store_true", help="print every candidate, not only the frontier"
    )
    p.add_argument("--quiet", action="store_true", help="no progress meter")
    pool_options.add_tune_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_tune)
