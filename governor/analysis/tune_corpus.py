"""Tuning a corpus: fit the model, evaluate every candidate in worker processes, report.

This is the library entry point behind ``governor tune`` (notebooks call it directly)::

    report = tune_corpus(corpus_of(["histories/"]), parse_grid(["max_replans=1..10"]))
    report.recommended, report.why
"""

from __future__ import annotations

import multiprocessing
import os
import random
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from governor.analysis.checks import Check, Stats, compare, replicate
from governor.analysis.corpus import Corpus
from governor.analysis.estimate import Estimate, Result, Sums, pareto, recommend
from governor.analysis.fit import Tally
from governor.analysis.grid import Grid, split_grid
from governor.analysis.holdout import (
    DIRECTIONS,
    Cut,
    Misfit,
    completed,
    cut_of,
    fit_cut,
    misfit,
    steps_past,
)
from governor.analysis.model import Model
from governor.analysis.parallel import map_histories
from governor.analysis.tune import Job, run_chunk
from governor.core.events import Event, GoalCreated
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides
from governor.errors import InputError

Progress = Callable[[int, int], None]

_CORPUS: Corpus | None = None
_JOB: Job | None = None


BOOTSTRAP: Final = 8
"""Bootstrap replicates by default (``--bootstrap``): each refits the model on goals drawn
with replacement and completes every censored outcome with it."""
MAX_BOOTSTRAP: Final = 1000
MISFIT_WIDEN: Final = 2.0
"""How much wider the bootstrap part of an extrapolated row's interval gets when a model
check is poor."""


@dataclass(frozen=True, slots=True)
class TuneReport:
    histories: int
    events: int
    model: Model
    estimates: list[Estimate]
    recommended: Estimate
    why: str
    checks: tuple[Check, ...] = ()
    """The model checks (empty: not run)."""
    bootstrap: int = 0
    """Bootstrap replicates behind the intervals (0: Wilson intervals over the goals only)."""
    infeasible: tuple[tuple[dict[str, Any], str], ...] = ()
    """The grid points SPEC §12.1 refuses, each with why: listed, never estimated."""
    holdout: Misfit = field(default_factory=Misfit)
    """The model's error per completed goal on the record's held-out tails
    (``governor.analysis.holdout``): it widens every row's interval by its censored share
    times the success rate's error."""

    @property
    def misfit(self) -> bool:
        """Whether any model check is poor (the extrapolated intervals are widened)."""
        return any(c.poor for c in self.checks)


def _init(corpus: Corpus, job: Job) -> None:
    global _CORPUS, _JOB
    _CORPUS, _JOB = corpus, job


def _work(indices: Sequence[int]) -> Sums:
    assert _CORPUS is not None
    assert _JOB is not None
    # unchecked here: fitting the model checked every history, and ``evaluate`` checks again
    return run_chunk(_JOB, [(i, _CORPUS.read(i, checked=False)) for i in indices])


def _chunks(n: int, size: int) -> list[list[int]]:
    return [list(range(i, min(i + size, n))) for i in range(0, n, size)]


def evaluate_corpus(
    corpus: Corpus, job: Job, *, workers: int, progress: Progress | None = None
) -> Sums:
    """Every history under every candidate, in ``workers`` processes (1: in this process)."""
    total, sums, done = len(corpus), Sums(), 0
    chunks = _chunks(total, max(1, min(200, total // (workers * 8) or 1)))
    if workers <= 1:
        _init(corpus, job)
        for chunk in chunks:
            sums.merge(_work(chunk))
            done += len(chunk)
            if progress:
                progress(done, total)
        return sums
    context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    with ProcessPoolExecutor(
        workers, mp_context=context, initializer=_init, initargs=(corpus, job)
    ) as pool:
        futures = {pool.submit(_work, chunk): len(chunk) for chunk in chunks}
        for future in as_completed(futures):
            sums.merge(future.result())
            done += futures[future]
            if progress:
                progress(done, total)
    return sums


@dataclass(slots=True)
class _Scan:
    """What one pass over the corpus gathers: per history, its counts for the fit, and
    the statistics and recorded policy for the model checks."""

    tallies: list[Tally]
    stats: Stats
    policies: list[Policy]
    cuts: list[Cut]


_Scanned = tuple[Tally, Stats, Policy, Cut]


def _scan_one(events: list[Event]) -> _Scanned:
    tally, stats = Tally(), Stats()
    tally.add(events)
    stats.add(events)
    created = events[0]
    assert isinstance(created, GoalCreated)
    return tally, stats, created.policy, cut_of(events)


def _scan(indices: Sequence[int]) -> list[_Scanned]:
    assert _CORPUS is not None
    return [_scan_one(_CORPUS.read(i)) for i in indices]


def _complete_held(
    held: tuple[str, Model, tuple[Cut, ...]], index: int, events: list[Event]
) -> list[Result]:
    direction, model, cuts = held
    rng = random.Random(f"holdout:{direction}:{index}")
    return completed(events, cuts[index], direction, model, rng)


def holdout(corpus: Corpus, cuts: Sequence[Cut], *, workers: int) -> Misfit:
    """The model's error on the record's held-out tails (``governor.analysis.holdout``)."""
    outcomes = {}
    for direction in DIRECTIONS:
        if any(c.at.get(direction) is not None for c in cuts):
            held = (direction, fit_cut(cuts, direction), tuple(cuts))
            outcomes[direction] = map_histories(corpus, _complete_held, held, workers=workers)
    return misfit(cuts, outcomes)


def scan_corpus(corpus: Corpus, *, workers: int) -> _Scan:
    """Read every history once (checked), in ``workers`` processes."""
    chunks = _chunks(len(corpus), max(1, min(200, len(corpus) // (workers * 4) or 1)))
    parts: dict[int, list[_Scanned]] = {}
    if workers <= 1:
        _init(corpus, Job((), (), 1, 0))
        parts = {i: _scan(chunk) for i, chunk in enumerate(chunks)}
    else:
        context = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        with ProcessPoolExecutor(
            workers, mp_context=context, initializer=_init, initargs=(corpus, Job((), (), 1, 0))
        ) as pool:
            futures = {pool.submit(_scan, chunk): i for i, chunk in enumerate(chunks)}
            for future in as_completed(futures):
                parts[futures[future]] = future.result()
    scan = _Scan([], Stats(), [], [])
    for i in range(len(chunks)):
        for tally, stats, policy, cut in parts[i]:
            scan.tallies.append(tally)
            scan.stats.merge(stats)
            scan.policies.append(policy)
            scan.cuts.append(cut)
    return scan


def bootstrap_models(
    tallies: Sequence[Tally], replicates: int, seed: int
) -> tuple[tuple[Model, ...], tuple[tuple[int, ...], ...]]:
    """``replicates`` models, each fitted to the corpus's goals drawn with replacement, and
    how often each draw took each goal."""
    rng = random.Random(f"bootstrap:{seed}")
    n, models, weights = len(tallies), [], []
    for _ in range(replicates):
        counts = [0] * n
        for _ in range(n):
            counts[rng.randrange(n)] += 1
        tally = Tally()
        for t, k in zip(tallies, counts, strict=True):
            if k:
                tally.merge(t, k)
        models.append(tally.model())
        weights.append(tuple(counts))
    return tuple(models), tuple(weights)


def tune_corpus(
    corpus: Corpus,
    grid: Grid,
    *,
    samples: int = 1,
    bootstrap: int = BOOTSTRAP,
    workers: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    checks: bool = True,
) -> TuneReport:
    """Estimate every candidate policy of ``grid`` on ``corpus`` (see ``governor.analysis.tune``, ``estimate``).

    ``bootstrap``: replicates (0: one model fitted to the whole corpus, Wilson intervals);
    ``checks``: run the model checks (a poor one widens the extrapolated intervals).
    Every row's interval is also widened by the model's error on the record's held-out
    tails times the row's censored share (``holdout``).
    """
    if len(corpus) == 0:
        raise InputError("the corpus holds no history")
    if bootstrap == 1 or not 0 <= bootstrap <= MAX_BOOTSTRAP:
        raise InputError(
            f"--bootstrap: 0 (off) or 2 to {MAX_BOOTSTRAP} replicates, not {bootstrap}"
        )
    overrides, infeasible = split_grid(grid)
    processes = workers or os.cpu_count() or 1
    scan = scan_corpus(corpus, workers=processes)
    total = Tally()
    for tally in scan.tallies:
        total.merge(tally)
    model, events = total.model(), total.events
    found = tuple(compare(scan.stats, replicate(model, scan.policies, seed=seed))) if checks else ()
    if bootstrap:
        models, weights = bootstrap_models(scan.tallies, bootstrap, seed)
    else:
        models, weights = (model,), ()
    job = Job(tuple(overrides), models, samples, seed, weights)
    sums = evaluate_corpus(corpus, job, workers=processes, progress=progress)
    held = holdout(corpus, scan.cuts, workers=processes)
    widen = MISFIT_WIDEN if any(c.poor for c in found) else 1.0
    recorded = Counter(scan.policies).most_common(1)[0][0]
    per_row = [
        held.widen("success", 1.0, steps_past(with_overrides(recorded, o), recorded))
        for o in overrides
    ]
    estimates = pareto(sums.estimates(overrides, widen=widen, misfit=per_row))
    best, why = recommend(estimates)
    return TuneReport(
        len(corpus),
        events,
        model,
        estimates,
        best,
        why,
        found,
        bootstrap,
        tuple(infeasible),
        held,
    )


def plot(report: TuneReport, path: str) -> None:
    """Success against cost per goal, the Pareto frontier joined, the recommendation starred."""
    try:
        import matplotlib  # noqa: PLC0415 - optional, and slow to import

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError as exc:
        raise InputError("--plot needs matplotlib: pip install 'governor[plot]'") from exc
    fig, ax = plt.subplots(figsize=(8, 5.5))
    es = report.estimates
    ax.scatter(
        [e.cost_usd for e in es],
        [e.success_rate for e in es],
        s=18,
        color="#9aa5b1",
        label="candidates",
    )
    front = sorted((e for e in es if e.pareto), key=lambda e: e.cost_usd)
    ax.plot(
        [e.cost_usd for e in front],
        [e.success_rate for e in front],
        "-o",
        color="#1f6feb",
        ms=5,
        label="Pareto frontier",
    )
    r = report.recommended
    ax.errorbar(
        [r.cost_usd],
        [r.success_rate],
        yerr=[[r.success_rate - r.success_ci[0]], [r.success_ci[1] - r.success_rate]],
        fmt="*",
        ms=16,
        color="#d1242f",
        label="recommended: " + ", ".join(f"{k}={v}" for k, v in r.overrides.items()),
    )
    ax.set_xlabel("cost per goal (USD)")
    ax.set_ylabel("estimated success rate")
    ax.set_title(f"governor tune: {report.histories} histories, {len(es)} policies")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)


PLOT_FORMATS: Final = frozenset({".png", ".svg", ".pdf"})
"""What ``--plot`` writes, by the file's suffix."""


def check_plot_target(path: str) -> None:
    """Refuse a ``--plot`` file of an unknown format before the tune runs."""
    if Path(path).suffix.lower() not in PLOT_FORMATS:
        raise InputError(f"--plot {path}: name a .png, .svg or .pdf file")
