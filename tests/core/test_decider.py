"""The incremental decider equals the rules decided from scratch (issue 26), and the fold
over compiled structs (SPEC §11.1).

``decide(view, now)`` defines the rules: every item decided afresh, every ledger row laid
out. A ``Decider`` keeps the item decisions and ledger rows (``governor.core.rules.memo``) and
takes again only what an event may have changed. After every event its decision must be
exactly the one ``decide`` takes from scratch on the same view: same status, action,
reason, rule, items and the whole ledger — at the event's time, later (a cooldown
crossed), earlier, with and without the ledger, after a policy swap, on a copy. Checked
over every golden history, the histories old main recorded with the real CLIs, a
generated many-item history, and histories a random driver records.

The hot read paths fold an event's compiled struct in place of the event
(``governor.core.wire.decoder.decode_struct``): the same fold, checks and decisions must come
out of it.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.history_gen import events as generated_events
from governor.core.events import Event
from governor.core.fold import evolve, project
from governor.core.history import check_history
from governor.core.ledger import NO_LEDGER
from governor.core.policy import Policy
from governor.core.rules.decide import decide
from governor.core.rules.decider import Decider
from governor.core.view import GoalView
from governor.core.wire.codec import LineDecoder, decode_lines, encode
from governor.core.wire.decoder import decode_struct, event_of
from governor.errors import GovernorError, HistoryError
from tests.core.test_properties import policies, recorded
from tests.story import Story

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = sorted((ROOT / "tests" / "golden").glob("*.jsonl"))
OLD_MAIN = sorted((ROOT / "tests" / "fixtures" / "old_main").glob("**/*.jsonl"))
OFFSETS = (timedelta(0), timedelta(seconds=59), timedelta(minutes=10), timedelta(hours=3))


def golden_events(path: Path) -> list[Event]:
    """The events of a golden history up to its first fault (corrupt ones included)."""
    events: list[Event] = []
    try:
        for _, event, _ in check_history(decode_lines(path.open("rb"), source=path.name)):
            events.append(event)
    except HistoryError:
        pass
    return events


def assert_incremental_is_fresh(
    events: Sequence[Event], times: Iterable[tuple[timedelta, bool]]
) -> None:
    """Fold one decider event by event and decide after each at the given offsets from
    the event's time (with or without the ledger); each decision must equal ``decide``'s
    from scratch on the same view, which it leaves as it was."""
    decider, plan = Decider(), list(times)
    for k, event in enumerate(events, start=1):
        view = decider.fold(event)
        for offset, with_ledger in plan[(k - 1) % len(plan) :] + plan[: (k - 1) % len(plan)]:
            now = event.at + offset
            before = view.copy()
            scratch = decide(view, now, with_ledger=with_ledger)
            assert view == before, "decide only reads the view"
            assert view.touched == before.touched, "decide leaves the fold's notes"
            taken = decider.decide(now, with_ledger=with_ledger)
            assert taken == scratch, (k, event.type, now)
            if not with_ledger:  # the same decision as with the ledger, but the ledger
                whole = decide(view, now)._replace(ledger=NO_LEDGER)
                assert taken == whole, (k, event.type, now)


def as_structs(events: Sequence[Event]) -> list[Event]:
    reads = [decode_struct(encode(event)) for event in events]
    assert None not in reads, "canonical lines take the compiled path"
    return [r for r in reads if r is not None]


def assert_structs_fold_alike(events: Sequence[Event], now: datetime | None = None) -> None:
    """Folding the structs gives the decisions folding the events gives, step by step."""
    by_event, by_struct = GoalView(), GoalView()
    for event, read in zip(events, as_structs(events), strict=True):
        assert type(read) is not type(event)
        assert event_of(read) == event
        evolve(by_event, event)
        evolve(by_struct, read)
        at = now or event.at
        assert decide(by_struct, at) == decide(by_event, at), event.type
    assert by_struct.seq == by_event.seq
    assert by_struct.work.keys() == by_event.work.keys()


EVERY_TIME: Final = [
    *[(offset, with_ledger) for offset in OFFSETS for with_ledger in (True, False)],
    (-timedelta(minutes=5), True),
]
"""Each event is decided at each offset, with and without the ledger (and once earlier)."""


@pytest.mark.parametrize("path", GOLDEN + OLD_MAIN, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_recorded_history_decides_incrementally_as_afresh(path: Path) -> None:
    assert_incremental_is_fresh(golden_events(path), EVERY_TIME)


def test_a_generated_many_item_history_decides_incrementally_as_afresh() -> None:
    """Hundreds of items over many plans, retries and cooldowns (``bench.history_gen``):
    the shapes a long goal takes, not only the small ones the goldens pin."""
    raw = b"".join(orjson.dumps(e) + b"\n" for e in generated_events(3_000, cycles=3))
    events = [event for _, event in decode_lines(io.BytesIO(raw).readlines(), source="gen")]
    assert len({e.work_id for e in events if e.type == "work.created"}) > 100
    assert_incremental_is_fresh(events, [(timedelta(0), True), (timedelta(minutes=10), False)])


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_every_golden_history_folds_alike_from_its_structs(path: Path) -> None:
    assert_structs_fold_alike(golden_events(path))


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_the_history_checks_say_the_same_of_structs(path: Path) -> None:
    """``replay`` and ``validate`` check structs: the same verdict, on the same line."""
    verdicts: list[tuple[str, object, list[str]]] = []
    for structs in (False, True):
        decoder = LineDecoder(path.name, structs=structs)
        lines = path.open("rb")
        try:
            count = sum(1 for _ in check_history(decode_lines(lines, decoder=decoder)))
            verdicts.append(("ok", count, decoder.notes))
        except HistoryError as exc:
            verdicts.append(("refused", str(exc), decoder.notes))
        finally:
            lines.close()
    assert verdicts[0] == verdicts[1]


SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
times = st.lists(
    st.tuples(
        st.sampled_from([*OFFSETS, timedelta(seconds=1), -timedelta(seconds=30)]), st.booleans()
    ),
    min_size=1,
    max_size=4,
)


@SETTINGS
@given(data=st.data(), policy=policies, plan=times)
def test_recorded_histories_decide_incrementally_as_afresh(
    data: st.DataObject, policy: dict[str, Any], plan: list[tuple[timedelta, bool]]
) -> None:
    assert_incremental_is_fresh(recorded(data, policy, max_steps=60).events, plan)


@SETTINGS
@given(data=st.data(), policy=policies, other=policies)
def test_a_view_whose_policy_is_swapped_decides_as_afresh(
    data: st.DataObject, policy: dict[str, Any], other: dict[str, Any]
) -> None:
    """What-if swaps a view's policy between decisions (``Trace.under_all``): the memo keeps
    the item decisions when no field they read changed (``work.POLICY_READ``), and the
    decisions still equal deciding afresh under the new policy."""
    events = recorded(data, policy, max_steps=60).events
    cut = data.draw(st.integers(1, len(events)))
    decider = Decider(project(events[:cut]))
    view = decider.view
    now = events[cut - 1].at + data.draw(st.sampled_from(OFFSETS))
    decider.decide(now)
    recorded_policy = view.policy
    merged = {**recorded_policy.model_dump(), **other}
    merged["max_milestones"] = min(merged["max_milestones"], merged["max_replans"])
    swapped = Policy.model_validate(merged)
    for with_ledger in (False, True):
        view.policy = swapped
        fresh = project(events[:cut])
        fresh.policy = swapped
        assert decider.decide(now, with_ledger=with_ledger) == decide(
            fresh, now, with_ledger=with_ledger
        )
        view.policy = recorded_policy  # and back: the decisions taken before still hold
        assert decider.decide(now, with_ledger=with_ledger) == decide(
            project(events[:cut]), now, with_ledger=with_ledger
        )


@SETTINGS
@given(data=st.data(), policy=policies)
def test_a_copied_decider_decides_incrementally_as_afresh(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    """A copy carries the decisions taken so far; each side then goes its own way."""
    events = recorded(data, policy, max_steps=60).events
    cut = data.draw(st.integers(0, len(events)))
    decider = Decider(project(events[:cut]))
    decider.decide(events[cut - 1].at if cut else events[0].at)
    copy = decider.copy()
    for k in range(cut, len(events)):
        copy.fold(events[k])
        assert copy.decide(events[k].at) == decide(project(events[: k + 1]), events[k].at)
    if cut:
        assert decider.decide(events[cut - 1].at) == decide(
            project(events[:cut]), events[cut - 1].at
        )


@SETTINGS
@given(data=st.data(), policy=policies)
def test_recorded_histories_fold_alike_from_their_structs(
    data: st.DataObject, policy: dict[str, Any]
) -> None:
    assert_structs_fold_alike(recorded(data, policy, max_steps=60).events)


def test_the_driver_stories_exercise_what_the_memo_must_follow() -> None:
    """The random stories reach cooldowns, dependencies, raises and reopened items, or
    the properties above would say little."""
    seen: set[str] = set()

    @settings(max_examples=200, deadline=None, database=None, derandomize=True)
    @given(data=st.data(), policy=policies)
    def collect(data: st.DataObject, policy: dict[str, Any]) -> None:
        story = recorded(data, policy, max_steps=60)
        seen.update(e.type for e in story.events)
        seen.update(
            "cooldown"
            for e in story.events
            if e.type == "attempt.finished" and e.failure_class == "upstream"
        )
        seen.update("dependency" for e in story.events if e.type == "work.created" and e.depends_on)

    collect()
    wanted = {"cooldown", "dependency", "work.reopened", "work.retried", "budget.raised"}
    assert wanted <= seen, wanted - seen


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_plan_of_many_items_decides_incrementally_as_afresh(data: st.DataObject) -> None:
    """One applied plan of 60 items, some depending on an earlier one, worked on in a
    random order (charged and upstream failures with cooldowns, successes left in review
    or accepted, retries): the goal rules read the active plan's items after every event,
    and the decider's equal ``decide``'s throughout."""
    size = 60
    keys = [f"k{n}" for n in range(size)]
    deps: dict[str, tuple[str, ...]] = {
        key: (keys[n - 1],) for n, key in enumerate(keys) if n and n % 3 == 0
    }
    story = Story(
        max_work_items_per_plan=size,
        max_total_work_items=size,
        max_parallel_work=4,
        max_attempts=3,
        accept_passing=False,
    )
    plan = story.plan(*keys, deps=deps)
    for _ in range(data.draw(st.integers(20, 80))):
        open_ids = [w for w in story.view.items_by_plan[plan] if _workable(story, w)]
        if not open_ids:
            break
        work_id = data.draw(st.sampled_from(open_ids))
        move = data.draw(st.sampled_from(["charged", "upstream", "succeeded", "retry"]))
        accept = data.draw(st.booleans())
        with contextlib.suppress(GovernorError):  # a move the core refuses is not made
            if move == "retry":
                story.op("retry_work", work_id=work_id, reason="try again")
            elif move == "succeeded":
                story.attempt(work_id, "succeeded")
                if accept:
                    story.accept(work_id)
            elif move == "upstream":
                story.attempt(work_id, failure_class="upstream", retry_after_s=30.0)
            else:
                story.attempt(work_id)
    assert len(story.view.items_by_plan[plan]) == size
    moves = sum(e.type == "attempt.finished" for e in story.events)
    assert moves >= 10, "the core took most moves (else this says little)"
    assert_incremental_is_fresh(
        story.events, [(timedelta(0), True), (timedelta(seconds=31), False)]
    )


def _workable(story: Story, work_id: str) -> bool:
    """An item of the story's plan that may still be started: open, not in review, with
    attempts left and its dependencies accepted."""
    work = story.view.work
    item = work[work_id]
    settled = item.accepted or item.cancelled or item.running or item.outcome == "succeeded"
    ready = all(work[d].accepted for d in item.spec.depends_on)
    return not settled and ready and item.charged_attempts < item.max_attempts


def test_the_golden_histories_reach_every_goal_rule() -> None:
    """Or the property above would hold the decider to little: every goal rule (and the
    same failure again) fires somewhere in the golden histories."""
    fired: set[str] = set()
    for path in GOLDEN:
        view = GoalView()
        for event in golden_events(path):
            evolve(view, event)
            fired.add(decide(view, event.at).rule)
    assert {f"goal.{n}" for n in range(1, 13)} | {"goal.same_failure"} <= fired, fired
