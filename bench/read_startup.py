"""Benchmark: where a read command's CPU goes, as parts of ``governor status GOAL`` (issue 36).

Run: ``.venv/bin/python -m bench.read_startup [--repeat 5]``

Method (the figures go to docs/performance.md, "Governor's own cost (issue 36)"):
    A finished goal of 10 ``command`` agent items (bench/own_cost.py's), then, each round,
    a fresh process per measure, CPU from ``time.process_time`` inside it:
      python      ``python -c pass`` as a whole process (``getrusage`` of the child);
      status      ``governor status GOAL`` in a process that times, as it goes: importing
                  pydantic (and pydantic's model machinery), making the pydantic model
                  classes (``ModelMetaclass.__new__``, every model of the core), making
                  the dataclasses (``dataclasses._process_class``; pydantic's own among
                  them), deriving the compiled decoder (``wire.derive.compiled``), and
                  the rest (every other import, reading the store, folding, deciding,
                  printing).
    The first three parts are what a read command would not pay if its events and view
    were neither pydantic models nor dataclasses (the events are pydantic models, the one
    definition: see docs/performance.md).
    Medians over ``--repeat`` rounds, spreads in brackets, each part also as a multiple of
    ``python -c pass``. Bytecode is compiled first (``compileall``), as own_cost does.
    ``python -X importtime`` gives the same split by module.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.overhead_cli import setup
from bench.own_cost import WARM, own_cpu

PARTS = r"""
import json, sys, time
t0 = time.process_time()
import dataclasses
spent = {"pydantic import": 0.0, "pydantic models": 0.0, "dataclasses": 0.0, "decoder": 0.0}
made = dataclasses._process_class
def process_class(*a, **k):
    t = time.process_time()
    try:
        return made(*a, **k)
    finally:
        spent["dataclasses"] += time.process_time() - t
dataclasses._process_class = process_class
t = time.process_time()
import pydantic, pydantic.main
import pydantic._internal._model_construction as mc
spent["pydantic import"] = time.process_time() - t
new = mc.ModelMetaclass.__new__
def model_new(*a, **k):
    t = time.process_time()
    try:
        return new(*a, **k)
    finally:
        spent["pydantic models"] += time.process_time() - t
mc.ModelMetaclass.__new__ = model_new
from governor.core.wire import derive
derived = derive.compiled.__wrapped__
def compiled():
    t = time.process_time()
    try:
        return derived()
    finally:
        spent["decoder"] += time.process_time() - t
derive.compiled = __import__("functools").cache(compiled)
for name in ("decoder", "codec"):
    module = sys.modules.get("governor.core.wire." + name)
    if module is not None and hasattr(module, "compiled"):
        module.compiled = derive.compiled
sys.argv = ["governor", *sys.argv[1:]]
from governor.cli.main import main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    main(sys.argv[1:])
spent["rest"] = time.process_time() - t0 - sum(spent.values())
print(json.dumps(spent))
"""


def python_cpu(cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "pass"], cwd=cwd, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def _spread(values: list[float], fmt: str) -> str:
    v = sorted(values)
    return f"{fmt.format(statistics.median(v))} ({fmt.format(v[0])}-{fmt.format(v[-1])})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    rounds: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-read-startup-") as tmp:
        folder = Path(tmp)
        (folder / "10").mkdir()
        setup(folder / "10", 10, 0.01)
        # bytecode compiled first, as an installed package has it (and as own_cost does):
        # with PYTHONDONTWRITEBYTECODE set, every import would compile its source again
        subprocess.run([sys.executable, "-c", WARM], cwd=folder, check=True)
        own_cpu(folder, "g", 10, dict(os.environ))
        store = str(folder / "10" / "g.db")
        for _ in range(args.repeat):
            base = python_cpu(folder)
            out = subprocess.run(
                [sys.executable, "-c", PARTS, "--store", store, "status", "g"],
                cwd=folder,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            parts = json.loads(out.splitlines()[-1])
            rounds.append({"python -c pass": base, **parts, "total": sum(parts.values())})
    print(f"{args.repeat} rounds, governor status of a finished 10-item goal, CPU seconds")
    base = statistics.median(r["python -c pass"] for r in rounds)
    for name in rounds[0]:
        values = [r[name] for r in rounds]
        times = statistics.median(values) / base
        print(f"  {name:<18} {_spread(values, '{:.3f}')} s   {times:5.1f}x python -c pass")


if __name__ == "__main__":
    main()
