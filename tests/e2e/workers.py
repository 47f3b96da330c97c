"""Real command agents that leave traces: who worked on what, and whether two did at once.

Each agent is a shell script run by the ``command`` harness. It reads its prompt, takes
the item's lock (``flock`` on a file per goal and work key, held by its whole process
group: a grandchild that sleeps inherits it) and appends to a shared log:

    start <key> <pid> <start ticks> <grandchild pid> <start ticks>
    overlap <key> <pid>      when the lock was held by another agent's group
    tick <key> <pid>         while it works
    done <key> <pid>

A lock is released only when every process of the group holding it is gone, so an
``overlap`` line proves two agents (or their leftovers) worked one item at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from governor.store import open_store
from tests.e2e.cli import COMPLETE, Project, done, plan

AGENT = """#!/bin/sh
log={log}
prompt=$(cat)
field() {{ printf '%s\\n' "$prompt" | sed -n "s/^$1: *//p" | head -n 1; }}
case "$prompt" in
  *"role: planner"*) key=plan ;;
  *) key=$(field work_key) ;;
esac
exec 9>>"{locks}/$(field goal).$key.lock"
flock -n 9 || echo "overlap $key $$" >> "$log"
(trap '' TERM HUP INT; exec sleep 600) &
ticks() {{ cut -d' ' -f22 "/proc/$1/stat"; }}
echo "start $key $$ $(ticks $$) $! $(ticks $!)" >> "$log"
i=0
while [ $i -lt {ticks} ]; do
  echo "tick $key $$" >> "$log"
  sleep {tick_s}
  i=$((i + 1))
done
echo "done $key $$" >> "$log"
if [ "$key" != plan ]; then
  printf '%s' '{done}' | sed "s/KEY/$key/g"
else
  case "$prompt" in
    *"asked now: milestone"*) printf '%s' '{complete}' ;;
    *) printf '%s' '{plan}' ;;
  esac
fi
"""


@dataclass(frozen=True)
class Entry:
    kind: str
    key: str
    pids: tuple[int, ...]


def install(project: Project, *, ticks: int = 10, tick_s: float = 0.05) -> dict[str, Any]:
    """Write the agent script into ``project``; the profile that runs it."""
    locks = project.root / "locks"
    locks.mkdir(exist_ok=True)
    body = AGENT.format(
        log=project.root / "agents.log",
        locks=locks,
        ticks=ticks,
        tick_s=tick_s,
        done=json.dumps(done("KEY")),
        complete=json.dumps(COMPLETE),
        plan=json.dumps(plan("a", "b", "c", deps={"c": ["a"]})),
    )
    path = project.root / "agent.sh"
    path.write_text(body)
    path.chmod(0o755)
    return {"harness": "command", "args": [str(path)]}


def entries(project: Project) -> list[Entry]:
    path = project.root / "agents.log"
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        kind, key, *pids = line.split()
        out.append(Entry(kind, key, tuple(int(p) for p in pids)))
    return out


Process = tuple[int, int]
"""A pid and its start time (clock ticks since boot): pids are reused, the pair is not."""


def processes(project: Project, key: str | None = None) -> list[Process]:
    """Every process an agent started (the agents and their grandchildren)."""
    found = []
    for e in entries(project):
        if e.kind == "start" and key in (None, e.key):
            found += [(e.pids[0], e.pids[1]), (e.pids[2], e.pids[3])]
    return found


def overlaps(project: Project) -> list[Entry]:
    return [e for e in entries(project) if e.kind == "overlap"]


def alive(process: Process) -> bool:
    pid, ticks = process
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0] != "Z" and int(fields[19]) == ticks


def all_dead(found: list[Process], *, within_s: float = 60.0) -> list[Process]:
    """Wait until every process is dead (a SIGKILL lands asynchronously); those left."""
    deadline = time.monotonic() + within_s
    while (left := [p for p in found if alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def kill_all(found: list[Process]) -> None:
    for process in found:
        if alive(process):
            with contextlib.suppress(ProcessLookupError):
                os.kill(process[0], signal.SIGKILL)


def lease_free(project: Project, goal_id: str) -> bool:
    """Whether the goal's lease is released or expired (another runner may take it)."""
    with closing(open_store(project.env["GOVERNOR_STORE"])) as store:
        lease = store.current_lease(goal_id)
    return lease is None or lease.expires_at <= datetime.now(UTC)


def wait_for_ticks(project: Project, count: int, *, within_s: float = 120.0) -> None:
    """Wait until the agents wrote ``count`` tick lines in all."""
    deadline = time.monotonic() + within_s
    while sum(e.kind == "tick" for e in entries(project)) < count:
        assert time.monotonic() < deadline, f"fewer than {count} ticks: {entries(project)}"
        time.sleep(0.01)
