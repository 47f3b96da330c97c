"""The plot of a simulated fleet outage (``simulate --fleet --plot``; docs/fleet-outages.md).

Top: the goals parked over time under the fleet rule, the outage shaded, each probe marked
(refused or answered) and the goals resumed. Bottom: the calls the vendor refused, summed
over time, with the fleet rule and without it (per goal), on the same outage.
"""

from __future__ import annotations

from itertools import accumulate

from governor.analysis.fleet import FleetRun, parked_over_time
from governor.errors import InputError


def _minutes(seconds: float) -> float:
    return seconds / 60.0


def plot(aware: FleetRun, per_goal: FleetRun, path: str) -> None:
    """Draw the outage as the fleet rule met it, against per-goal refusals."""
    try:
        import matplotlib  # noqa: PLC0415 - optional, and slow to import

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError as exc:
        raise InputError("--plot needs matplotlib: pip install 'governor[plot]'") from exc
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    for ax in (top, bottom):
        for start, end in aware.outages:
            ax.axvspan(_minutes(start), _minutes(end), color="#ffd8d8", label="vendor down")
        ax.grid(alpha=0.3)
    parked = parked_over_time(aware, 10.0)
    top.step([_minutes(t) for t, _ in parked], [n for _, n in parked], where="post",
             color="#1f6feb", label="goals parked")  # fmt: skip
    timeline = aware.tally.timeline
    for what, marker, color, label in (
        ("probe_refused", "x", "#d1242f", "probe refused"),
        ("probe", "o", "#1a7f37", "probe answered"),
    ):
        times = [_minutes(t) for t, w, _ in timeline if w == what]
        top.plot(times, [0] * len(times), marker, color=color, ms=9, mew=2, ls="", label=label)
    resumes = sorted(t for t, w, _ in timeline if w == "resume")
    end = max((t for t, _, _ in timeline), default=0.0)
    top.step([_minutes(t) for t in [*resumes, end]], [*range(1, len(resumes) + 1), len(resumes)],
             where="post", color="#8250df", ls="--", label="goals resumed (cumulative)")  # fmt: skip
    top.set_ylabel("goals")
    top.set_title(f"a fleet of {len(aware.histories)} goals meets one outage (fleet rule)")
    _dedupe_legend(top)
    for run, color, label in ((per_goal, "#bc4c00", "per goal"), (aware, "#1f6feb", "fleet rule")):
        refused = sorted(t for t, w, _ in run.tally.timeline if w in ("refused", "probe_refused"))
        total = list(accumulate(1 for _ in refused))
        bottom.step([_minutes(t) for t in refused], total, where="post", color=color,
                    label=f"{label}: {len(refused)} refused calls")  # fmt: skip
    bottom.set_yscale("symlog")
    bottom.set_ylabel("calls refused (cumulative)")
    bottom.set_xlabel("minutes")
    _dedupe_legend(bottom)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _dedupe_legend(ax: object) -> None:
    handles, labels = ax.get_legend_handles_labels()  # type: ignore[attr-defined]
    seen: dict[str, object] = {}
    for handle, label in zip(handles, labels, strict=True):
        seen.setdefault(label, handle)
    ax.legend(list(seen.values()), list(seen), loc="upper right", fontsize=8)  # type: ignore[attr-defined]
