"""The short paths of the decision rules (issue 12) take the decision the rule tables take.

``decide`` checks goal rules 1-5 in one go while the latest plan is the applied one
(``_goal_rules_pass``), and then takes the usual outcomes of rules 8 and 9 without the
rules' context; ``decide_work`` goes straight to the work rule whose guard holds. Each
must give exactly what scanning ``GOAL_RULES`` and ``WORK_RULES`` in order gives: over
every golden history, histories a random driver records (with and without the ledger,
at later and earlier times), a generated long history, and parked goals and failing
upstreams.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.history_gen import events as generated_events
from governor.core.decision import Decision
from governor.core.events import Event
from governor.core.fold import evolve
from governor.core.rules.decide import GOAL_RULES, decide
from governor.core.rules.fleet import Upstreams, fleet
from governor.core.rules.goal import Ctx
from governor.core.rules.work import decide_work, first_work_rule
from governor.core.upstream import UpstreamHealth
from governor.core.view import GoalView
from governor.core.wire.codec import LineDecoder, decode_lines
from tests.core.test_decider import GOLDEN, golden_events
from tests.core.test_parking import failing, healthy_record
from tests.core.test_properties import policies, recorded

OFFSETS = (timedelta(0), timedelta(seconds=59), timedelta(hours=3), -timedelta(minutes=5))


def by_table(
    view: GoalView, now: datetime, *, with_ledger: bool = True, upstreams: Upstreams | None = None
) -> Decision:
    """The decision by scanning every goal rule in order over the item decisions and the
    ledger ``decide`` took (the reference its short paths are held to)."""
    taken = decide(view, now, with_ledger=with_ledger)
    items = taken.items
    ctx = Ctx(
        view=view,
        now=now,
        ledger=taken.ledger,
        items=items,
        statuses=frozenset(d.status for d in items),
    )
    for rule in GOAL_RULES:  # pragma: no branch - the fallback rule always decides
        decision = rule(ctx)
        if decision is not None:
            break
    assert decision is not None
    return fleet(view, now, decision, upstreams)


def assert_short_paths_take_the_table(
    events: Sequence[Event], healths: Sequence[UpstreamHealth | None] = (None,)
) -> set[str]:
    """Fold event by event; at each step and at a few times around it, ``decide`` equals
    the scan of ``GOAL_RULES`` (with every profile's upstream in each of ``healths``), and
    every item's ``decide_work`` the scan of ``WORK_RULES``. Returns the rules that fired."""
    view, fired = GoalView(), set()
    for k, event in enumerate(events):
        evolve(view, event)
        offset = OFFSETS[k % len(OFFSETS)]
        now = event.at + offset
        profiles = list(view.created.profiles) if view.created else []
        for with_ledger in (True, False):
            for record in healths:
                health = None if record is None else dict.fromkeys(profiles, record)
                reference = by_table(view, now, with_ledger=with_ledger, upstreams=health)
                got = decide(view, now, with_ledger=with_ledger, upstreams=health)
                assert got == reference, (k, event.type, offset, with_ledger)
                fired.add(got.rule)
        for item in view.work.values():
            assert decide_work(view, item, now) == first_work_rule(view, item, now), (
                k,
                item.work_id,
            )
    return fired


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_every_golden_history_takes_the_rule_tables(path: Path) -> None:
    assert_short_paths_take_the_table(golden_events(path))


def test_the_golden_histories_reach_every_goal_rule() -> None:
    """Or the test above would hold the short paths to little."""
    fired: set[str] = set()
    for path in GOLDEN:
        fired |= assert_short_paths_take_the_table(golden_events(path))
    assert {f"goal.{n}" for n in range(1, 13)} | {"goal.same_failure"} <= fired, fired


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), policy=policies)
def test_recorded_histories_take_the_rule_tables(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    assert_short_paths_take_the_table(recorded(data, policy, max_steps=60).events)


def test_a_generated_long_history_takes_the_rule_tables() -> None:
    """The ``bench/replay.py --json-rate`` shape: ready, running and cooling items."""
    raw = [orjson.dumps(event) + b"\n" for event in generated_events(6_000, cycles=60)]
    events = [e for _, e in decode_lines(raw, decoder=LineDecoder("generated", structs=True))]
    fired = assert_short_paths_take_the_table(events)
    assert {"goal.8", "goal.9"} <= fired, fired


def test_parked_goals_and_failing_upstreams_take_the_rule_tables() -> None:
    """The fleet rules apply over the short paths as over the table."""
    parked = [p for p in GOLDEN if "park" in p.stem]
    assert parked, "golden histories with parks"
    fired: set[str] = set()
    for path in [*parked, *GOLDEN[:8]]:
        fired |= assert_short_paths_take_the_table(
            golden_events(path), healths=(None, failing(0), healthy_record())
        )
    assert len({rule for rule in fired if rule.startswith("fleet.")}) >= 2, fired
