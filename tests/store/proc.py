"""A separate process that uses a store, for the multi-process store tests.

Run as ``python -m tests.store.proc COMMAND …`` from the repository root; it prints one
JSON object per step on stdout. ``URL`` is any store URL ``open_store`` takes (a SQLite
file, ``postgresql://…``).

    append URL GOAL NAME COUNT GO      append COUNT events, retrying on conflicts
    hold URL GOAL HOLDER TTL GO        take the lease, wait for GO, then append under it
    take URL GOAL HOLDER TTL           take the lease as soon as it expires, append under it
    reserve URL POOL NAME ASK COST GO  reserve ASK dollars against POOL until it refuses,
                                       settling each call at COST dollars
    along URL POOL NAME ASK COST GO    the same, each reservation and settlement riding in
                                       an append to the goal NAME (as a runner's calls do)

``GO`` is a file the test creates to release every waiting process at once.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from governor.core.events import GoalResumed
from governor.errors import ConcurrencyConflictError, LeaseError
from governor.store import EventStore, Lease, open_store

AT = datetime(2026, 1, 2, tzinfo=UTC)


def say(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def wait_for(path: Path, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {path}")
        time.sleep(0.002)


def event(goal: str, seq: int, reason: str) -> GoalResumed:
    return GoalResumed(goal_id=goal, seq=seq, at=AT, reason=reason, actor="operator:proc")


def append(url: str, goal: str, name: str, count: str, go: str) -> None:
    store = open_store(url)
    Path(f"{go}.ready-{name}").touch()
    wait_for(Path(go))
    conflicts = 0
    for i in range(int(count)):
        while True:
            seq = store.last_seq(goal)
            time.sleep(0.0005)  # a runner decides between reading and appending
            try:
                store.append(goal, [event(goal, seq + 1, f"{name}-{i}")], expected_seq=seq)
                break
            except ConcurrencyConflictError:
                conflicts += 1
    say(name=name, conflicts=conflicts)
    store.close()


def append_under(store: EventStore, lease: Lease, reason: str) -> None:
    seq = store.last_seq(lease.goal_id)
    try:
        store.append(
            lease.goal_id, [event(lease.goal_id, seq + 1, reason)], expected_seq=seq, lease=lease
        )
    except LeaseError as exc:
        say(result="refused", holder=exc.holder, message=str(exc))
    else:
        say(result="appended", seq=seq + 1)


def hold(url: str, goal: str, holder: str, ttl: str, go: str) -> None:
    store = open_store(url)
    lease = store.acquire_lease(goal, holder, ttl_s=float(ttl))
    say(token=lease.token, holder=lease.holder)
    wait_for(Path(go))  # meanwhile the lease expires and another process takes it over
    append_under(store, lease, holder)
    store.close()


def take(url: str, goal: str, holder: str, ttl: str) -> None:
    store = open_store(url)
    start = time.monotonic()
    while True:
        try:
            lease = store.acquire_lease(goal, holder, ttl_s=float(ttl))
            break
        except LeaseError:
            if time.monotonic() - start > 30:
                raise
            time.sleep(0.02)
    say(token=lease.token, holder=lease.holder, waited_s=time.monotonic() - start)
    append_under(store, lease, holder)
    store.close()


def reserve(url: str, pool: str, name: str, ask: str, cost: str, go: str) -> None:
    from governor.core.pools import Figure
    from governor.drive import pools

    store = open_store(url)
    Path(f"{go}.ready-{name}").touch()
    wait_for(Path(go))
    calls = 0
    while True:
        call = f"{name}-{calls}"
        now = datetime.now(UTC)
        if pools.reserve(store, [pool], name, call, Figure(usd=float(ask), attempts=1), now=now):
            break
        time.sleep(0.001)  # the call runs
        pools.settle(store, [pool], name, call, Figure(usd=float(cost), attempts=1), now=now)
        calls += 1
    say(name=name, calls=calls)
    store.close()


def along(url: str, pool: str, name: str, ask: str, cost: str, go: str) -> None:
    from governor.core.pools import Figure
    from governor.drive import pools
    from tests.store.streams import story

    store = open_store(url)
    store.append(name, story(name).events[:1], expected_seq=0)
    Path(f"{go}.ready-{name}").touch()
    wait_for(Path(go))
    calls, seq = 0, 1
    while True:
        call = f"{name}-{calls}"
        now = datetime.now(UTC)
        start = pools.reservation([pool], name, call, Figure(usd=float(ask), attempts=1), now=now)
        try:
            store.append(name, [event(name, seq + 1, call)], expected_seq=seq, pools=start)
        except pools.ReservationRefused:
            break
        time.sleep(0.001)  # the call runs
        spent = Figure(usd=float(cost), attempts=1)
        finish = pools.settlement([pool], name, call, spent, now=now)
        store.append(name, [event(name, seq + 2, call)], expected_seq=seq + 1, pools=finish)
        calls, seq = calls + 1, seq + 2
    say(name=name, calls=calls, seq=store.last_seq(name))
    store.close()


COMMANDS: dict[str, Callable[..., None]] = {
    "append": append,
    "hold": hold,
    "take": take,
    "reserve": reserve,
    "along": along,
}

if __name__ == "__main__":
    COMMANDS[sys.argv[1]](*sys.argv[2:])
