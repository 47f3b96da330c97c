"""Drive the real ``governor`` command in a temporary project folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

GOVERNOR = shutil.which("governor", path=str(Path(sys.executable).parent)) or "governor"


class Project:
    """A folder with its own store, goal files, scenarios and agent scripts."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = {
            **os.environ,
            "GOVERNOR_STORE": str(root / "governor.db"),
            "PYTHONWARNINGS": "ignore",
        }

    def gov(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [GOVERNOR, *args],
            capture_output=True,
            text=True,
            cwd=self.root,
            env=self.env,
            timeout=timeout,
        )

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [GOVERNOR, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=self.root,
            env=self.env,
        )

    def scenario(self, name: str, scripts: list[dict[str, Any]]) -> str:
        (self.root / name).write_text(json.dumps({"scripts": scripts}))
        return name

    def script(self, name: str, body: str) -> str:
        path = self.root / "bin" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)
        return f"bin/{name}"

    def goal(
        self, goal_id: str, planner: dict[str, Any], worker: dict[str, Any], **policy: Any
    ) -> str:
        path = self.goal_file(goal_id, planner, worker, **policy)
        result = self.gov("new", path.name)
        assert result.returncode == 0, result.stderr
        return goal_id

    def goal_file(
        self, goal_id: str, planner: dict[str, Any], worker: dict[str, Any], **policy: Any
    ) -> Path:
        """Write the goal file of ``goal`` without creating the goal."""
        spec = {
            "id": goal_id,
            "title": f"Goal {goal_id}",
            "objective": "Do it.",
            "acceptance": ["it is done"],
            "planner": "planner",
            "worker": "worker",
            "policy": policy,
            "profiles": {
                "planner": {"max_attempts": 1, "timeout_s": 60, **planner},
                "worker": {"max_attempts": 1, "timeout_s": 60, **worker},
            },
        }
        path = self.root / f"{goal_id}.json"
        path.write_text(json.dumps(spec))
        return path

    def status(self, goal_id: str) -> dict[str, Any]:
        result = self.gov("status", goal_id, "--json")
        assert result.returncode == 0, result.stderr
        return orjson.loads(result.stdout)  # type: ignore[no-any-return]

    def events(self, goal_id: str) -> list[dict[str, Any]]:
        result = self.gov("events", goal_id, "--json")
        assert result.returncode == 0, result.stderr
        return [orjson.loads(line) for line in result.stdout.splitlines()]

    def types(self, goal_id: str) -> list[str]:
        return [e["type"] for e in self.events(goal_id)]


def plan(*keys: str, deps: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """A planner reply proposing one item per key (criterion '<key> works')."""
    return {
        "decision": "apply",
        "rationale": "r",
        "work": [
            {
                "key": k,
                "title": k,
                "objective": f"do {k}",
                "acceptance": [f"{k} works"],
                "depends_on": (deps or {}).get(k, []),
            }
            for k in keys
        ],
    }


COMPLETE = {"decision": "complete", "rationale": "done"}


def done(key: str) -> dict[str, Any]:
    return {
        "status": "done",
        "summary": f"did {key}",
        "acceptance": [{"criterion": f"{key} works", "status": "satisfied"}],
    }


def worker_script(key: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": key, "match": ["role: worker", f"work_key: {key}"], "steps": steps}


def planner_script(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": "planner", "match": "role: planner", "steps": steps}


MILESTONE_COMPLETE: dict[str, Any] = {
    "name": "planner-milestone",
    "match": ["role: planner", "asked now: milestone"],
    "steps": [{"reply": COMPLETE}],
}
"""A planner that says ``complete`` only when asked after a milestone. Put it before
``planner_script`` in a scenario whose runner may be killed mid-plan: the continued plan
then gets a plan again, never a first ``complete`` (refused since SPEC §11.3)."""
