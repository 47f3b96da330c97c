"""The lower bounds in pyproject.toml are real: the LangGraph and LangChain tests pass in a
virtual environment holding the oldest versions governor accepts.

The environment is built once per set of pins (a folder of ``.cache/`` named by their
digest) and reused; building it needs the package index, as ``./dev`` does. The tests
run from this checkout (``PYTHONPATH``), so a code change needs no rebuild.

Why these versions: ``langgraph`` 0.6.0 is the first with the ``input_schema`` /
``output_schema`` / ``context_schema`` graph and ``langgraph.runtime`` (0.5.4 fails to
import the graph); it needs ``langgraph-checkpoint`` 2.1, ``langgraph-prebuilt`` 0.6,
``langchain-core`` 0.3.67 and ``orjson`` 3.10.1 (through ``langgraph-sdk``). ``pydantic``
2.9.0 and ``typing-extensions`` 4.10.0 are the oldest that import beside the current
``langsmith``, which every ``langchain-core`` pulls in (pydantic 2.8.2 fails, and so does
typing-extensions 4.7.1: no ``TypeIs``).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Final

ROOT = Path(__file__).resolve().parents[2]

MINIMUM: Final = (
    "langgraph==0.6.0",
    "langgraph-checkpoint==2.1.0",
    "langgraph-prebuilt==0.6.0",
    "langchain-core==0.3.67",
    "pydantic==2.9.0",
    "tenacity==8.2.0",
    "orjson==3.10.1",
    "typing-extensions==4.10.0",
    "msgspec==0.18.0",
)
"""The oldest versions of what governor and its LangGraph/LangChain code import."""

FOR_THE_TESTS: Final = ("pytest", "langgraph-checkpoint-sqlite", "langchain-anthropic")
TESTS: Final = (
    "tests/graph/test_deploy.py",
    "tests/graph/test_topology.py",
    "tests/exec/test_python.py",
)


def test_the_declared_lower_bounds_are_the_pinned_ones() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    for name in ("langgraph", "pydantic", "tenacity", "orjson", "typing-extensions", "msgspec"):
        pinned = next(p for p in MINIMUM if p.startswith(f"{name}=="))
        assert f'"{name}>={pinned.split("==")[1]}' in pyproject, f"pyproject.toml: {name}"


def normal(requirement: str) -> str:
    """``typing_extensions==4.7.1`` and ``typing-extensions==4.7.1`` alike (PEP 503 names)."""
    return re.sub(r"[-_.]+(?=.*==)", "-", requirement.lower())


def environment() -> Path:
    """The cached virtual environment with the minimum versions (built on first use)."""
    pins = "\n".join((*MINIMUM, *FOR_THE_TESTS, sys.version))
    venv = ROOT / ".cache" / f"min-versions-{hashlib.sha256(pins.encode()).hexdigest()[:12]}"
    python = venv / "bin" / "python"
    venv.parent.mkdir(exist_ok=True)
    with open(f"{venv}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test runs at once build it once
        if (venv / "ready").exists():
            return python
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, *MINIMUM, *FOR_THE_TESTS], check=True, timeout=900)
        subprocess.run([*pip, "--no-deps", str(ROOT)], check=True, timeout=900)  # the command
        (venv / "ready").write_text(pins)
    return python


def test_the_graph_and_the_python_harness_pass_on_the_minimum_versions() -> None:
    python = environment()
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True
    )
    held = {normal(line) for line in listed.stdout.splitlines()}
    for pin in MINIMUM:
        assert normal(pin) in held, f"{pin} is not what the environment holds"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{python.parent}:{os.environ['PATH']}"}
    ran = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
