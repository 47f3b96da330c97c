"""Benchmark: governor's own CPU per attempt, and the CPU of its read commands (issue 36).

Run: ``.venv/bin/python -m bench.own_cost [--repeat 5] [--against TREE] [--large 50]``

Method (the figures go to docs/performance.md, "Governor's own cost (issue 36)"):
    In a fresh folder, two goals of ``command`` agents (shell scripts that read the prompt,
    sleep ``--delay`` seconds and print their reply: bench/overhead_cli.py's): one of 10
    work items and one of 50 (``--small``, ``--large``; a plan of every item, then
    "complete": 12 and 52 calls).
    Each round runs ``governor run GOAL --quiet`` of a fresh copy of each as a real process
    and reads the process's **own** CPU (``getrusage(RUSAGE_SELF)`` at its exit, every
    thread, none of the agents' processes). Start-up and the fixed cost of a run are the
    same in both, so ``(own CPU of 50 - own CPU of 10) / 40`` is governor's own CPU per
    attempt without them: the marginal cost of one more agent call. The runs' own noise
    (start-up alone is ~1 s of CPU) is divided by the difference: on a busy machine,
    ``--large 90`` (at most: the goal's policy allows 100 attempts) gives a steadier figure.
    The small goal's ``governor new`` (reading the goal file, one ``goal.created``
    written) is reported too: a write command's start-up. Each round also times, as
    whole processes (the child's CPU from ``getrusage``), in turn: ``python -c pass``,
    ``governor status GOAL`` of the 10-item goal (finished: 36 events) and ``governor replay FILE`` of a 100-event history (the first 100 lines of
    one from bench/history_gen.py, as ``bench.replay_shapes`` takes them),
    each as a multiple of ``python -c pass``'s CPU.
    ``--reads-only``: each round times only ``python -c pass``, ``status`` and ``replay``
    (the status of the first round's small goal): cheap rounds, so many can be run on a
    busy machine.
    ``--against TREE`` (a source tree holding ``governor/`` and ``prompts/``, e.g. ``git
    archive COMMIT governor prompts`` unpacked): each round runs every measure from TREE too (first on
    ``PYTHONPATH``), in turn with this tree's, and prints both side by side.
    Medians over ``--repeat`` rounds, spreads in brackets. Bytecode is compiled first
    (``compileall``) for both trees, as an installed package has it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.history_gen import write
from bench.overhead_cli import GOAL, setup

OWN = (
    "import resource, sys\n"
    "sys.argv[0] = 'governor'\n"
    "from governor.cli.main import main\n"
    "try:\n"
    "    code = main()\n"
    "finally:\n"
    "    r = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    with open(sys.argv[sys.argv.index('--store') + 1] + '.cpu', 'a') as f:\n"
    "        f.write(f'{r.ru_utime + r.ru_stime}\\n')\n"
    "sys.exit(code)\n"
)
"""``governor`` run in a process that, at its exit, appends its own CPU seconds (all its
threads, none of its children) beside the store."""

WARM = "import compileall, os, governor; compileall.compile_dir(os.path.dirname(governor.__file__), quiet=1)"
SMALL, LARGE = 10, 50


def child_cpu(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """CPU seconds of one run of ``argv`` as a whole process (it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def own_cpu(root: Path, goal: str, items: int, env: dict[str, str]) -> float:
    """Own CPU seconds of ``governor run`` of a fresh goal of ``items`` items."""
    return own_cpus(root, goal, items, env)[1]


def own_cpus(root: Path, goal: str, items: int, env: dict[str, str]) -> tuple[float, float]:
    """Own CPU seconds of ``governor new`` and of ``governor run`` of a fresh goal of
    ``items`` items."""
    folder = root / str(items)
    store = folder / f"{goal}.db"
    (folder / "goal.toml").write_text(GOAL.format(goal=goal, items=items))
    (folder / "planner.state").unlink(missing_ok=True)
    exe = [sys.executable, "-c", OWN, "--store", str(store)]
    subprocess.run(
        [*exe, "new", "goal.toml"], cwd=folder, check=True, env=env, stdout=subprocess.DEVNULL
    )
    subprocess.run(
        [*exe, "run", goal, "--quiet"], cwd=folder, check=True, env=env, stdout=subprocess.DEVNULL
    )
    new, run = Path(f"{store}.cpu").read_text().split()
    return float(new), float(run)


def _spread(values: list[float], unit: str, fmt: str = "{:.2f}") -> str:
    v = sorted(values)
    mid, low, high = (fmt.format(x) for x in (statistics.median(v), v[0], v[-1]))
    return f"{mid}{unit} ({low}-{high})"


def measure(
    folder: Path,
    tag: str,
    r: int,
    env: dict[str, str],
    sizes: tuple[int, int] = (SMALL, LARGE),
    *,
    reads_only: bool = False,
) -> dict[str, float]:
    """One round of every measure from one tree (``sizes``: the two goals' items);
    ``reads_only``: the read commands alone, on the small goal of the first round."""
    small_items, large_items = sizes
    goal = f"{tag}-small{0 if reads_only else r}"
    governor = [sys.executable, "-c", OWN, "--store", str(folder / str(small_items) / f"{goal}.db")]
    if reads_only and r == 0:
        own_cpus(folder, goal, small_items, env)
    if not reads_only:
        new, small = own_cpus(folder, goal, small_items, env)
        large = own_cpu(folder, f"{tag}-large{r}", large_items, env)
    base = child_cpu([sys.executable, "-c", "pass"], folder, env)
    status = child_cpu([*governor, "status", goal], folder, env)
    replay = child_cpu([*governor, "replay", str(folder / "h100.jsonl")], folder, env)
    reads = {
        "python -c pass CPU s": base,
        "status CPU s": status,
        "replay 100 CPU s": replay,
        "status x python -c pass": status / base,
        "replay 100 x python -c pass": replay / base,
    }
    if reads_only:
        return reads
    return {
        "per attempt ms": (large - small) / (large_items - small_items) * 1000,
        f"run of {small_items} items, own CPU s": small,
        f"run of {large_items} items, own CPU s": large,
        "python -c pass CPU s": base,
        "new (one write) CPU s": new,
        "status CPU s": status,
        "replay 100 CPU s": replay,
        "status x python -c pass": status / base,
        "replay 100 x python -c pass": replay / base,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--against", type=Path, help="another source tree, run in turn")
    parser.add_argument("--small", type=int, default=SMALL, help="items of the small goal")
    parser.add_argument(
        "--large", type=int, default=LARGE, help="items of the large goal (more: less noise)"
    )
    parser.add_argument(
        "--reads-only",
        action="store_true",
        help="only python -c pass, status and replay each round (more rounds, less noise)",
    )
    args = parser.parse_args(argv)
    trees = {"this": dict(os.environ)}
    if args.against is not None:
        trees["against"] = {**os.environ, "PYTHONPATH": str(args.against.resolve())}
    rounds: dict[str, list[dict[str, float]]] = {tag: [] for tag in trees}
    with tempfile.TemporaryDirectory(prefix="bench-own-cost-") as tmp:
        folder = Path(tmp)
        sizes = (args.small, args.large)
        for items in sizes:
            (folder / str(items)).mkdir()
            setup(folder / str(items), items, args.delay)
        write(folder / "head.jsonl", 1000, cycles=25)
        with (folder / "head.jsonl").open("rb") as f, (folder / "h100.jsonl").open("wb") as out:
            out.writelines(line for _, line in zip(range(100), f, strict=False))
        for env in trees.values():
            subprocess.run([sys.executable, "-c", WARM], cwd=folder, check=True, env=env)
        for r in range(args.repeat):
            order = list(trees) if r % 2 == 0 else list(reversed(trees))
            for tag in order:
                rounds[tag].append(
                    measure(folder, tag, r, trees[tag], sizes, reads_only=args.reads_only)
                )
            print(f"  round {r + 1} of {args.repeat} done", flush=True)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"{args.repeat} rounds, goals of {args.small} and {args.large} items, "
        f"{args.delay} s command agents, load average {load}"
    )
    print(
        f"  {'':32}"
        + "".join(
            f"{tag + (' (' + str(args.against) + ')' if tag == 'against' else ''):>30}"
            for tag in trees
        )
    )
    for name in rounds["this"][0]:
        fmt = "{:.3f}" if name.endswith(" s") else "{:.1f}"
        row = "".join(f"{_spread([m[name] for m in rounds[tag]], '', fmt):>30}" for tag in trees)
        print(f"  {name:<32}{row}")
    if args.against is not None:
        for name in ("per attempt ms", "status x python -c pass", "replay 100 x python -c pass"):
            if name not in rounds["this"][0]:
                continue
            pairs = [
                a[name] / b[name] for a, b in zip(rounds["this"], rounds["against"], strict=True)
            ]
            print(f"  this / against, {name}, per round: {_spread(pairs, 'x')}")
    print("  targets: per attempt <= 2 ms; status and replay of 100 events <= 8x python -c pass")


if __name__ == "__main__":
    main()
