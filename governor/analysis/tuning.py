"""Tuning a corpus: fit the model, evaluate every candidate in worker processes, report.

This is the library entry point behind ``governor tune`` (notebooks call it directly)::

    report = tune_corpus(corpus_of(["histories/"]), parse_grid(["max_replans=1..10"]))
    report.recommended, report.why
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from governor.analysis.corpus import Corpus
from governor.analysis.fit import Tally
from governor.analysis.simulate import Model
from governor.analysis.tune import (
    Estimate,
    Grid,
    Job,
    Sums,
    candidates,
    pareto,
    recommend,
    run_chunk,
)
from governor.errors import InputError

Progress = Callable[[int, int], None]

_CORPUS: Corpus | None = None
_JOB: Job | None = None


@dataclass(frozen=True, slots=True)
class TuneReport:
    histories: int
    events: int
    model: Model
    estimates: list[Estimate]
    recommended: Estimate
    why: str


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


def tune_corpus(
    corpus: Corpus,
    grid: Grid,
    *,
    samples: int = 2,
    workers: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> TuneReport:
    """Estimate every candidate policy of ``grid`` on ``corpus`` (see ``governor.analysis.tune``)."""
    if len(corpus) == 0:
        raise InputError("the corpus holds no history")
    overrides = candidates(grid)
    tally = Tally.of(corpus)
    model, events = tally.model(), tally.events
    job = Job(tuple(overrides), model, samples, seed)
    sums = evaluate_corpus(corpus, job, workers=workers or os.cpu_count() or 1, progress=progress)
    estimates = pareto(sums.estimates(overrides))
    best, why = recommend(estimates)
    return TuneReport(len(corpus), events, model, estimates, best, why)


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
