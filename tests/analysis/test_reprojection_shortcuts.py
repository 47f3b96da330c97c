"""Re-projection's shortcuts (issue 12) give what re-folding every event gives, exactly.

``Trace.under`` resumes from a snapshot of the recorded fold at the first check, and
``Trace.alike`` takes a censored candidate's view from another of the same key. Both are
held here to the plain re-fold (``under(policy, events=...)``: every event folded from
the first, a decision at every recorded action) on the golden histories and a generated
corpus, under policies that change limits of the goal, of an item, of a run and the
upstream back-off, and under the recorded one.
"""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from governor.analysis.divergence import WhatIf, _fold, _retarget, differing
from governor.analysis.model import Model
from governor.analysis.simulate import simulate
from governor.analysis.tune import evaluate
from governor.analysis.whatif import Trace
from governor.core.events import Event
from governor.core.policy import Policy
from governor.core.policy_input import with_overrides
from governor.core.rules.decide import decide
from governor.core.rules.decider import Decider
from governor.errors import HistoryError, PolicyError
from governor.store.jsonl import read_history

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
RECORDED = Policy(max_replans=3, max_uncharged_replans=2, max_attempts=2, max_uncharged_attempts=2)
BACKOFF = {"upstream_backoff.initial_s": 5.0}
LOOSE = Policy(max_replans=8, max_uncharged_replans=5, max_attempts=3, max_uncharged_attempts=3)


@cache
def _histories() -> tuple[tuple[str, tuple[Event, ...]], ...]:
    found: list[tuple[str, tuple[Event, ...]]] = []
    for path in sorted(GOLDEN.glob("*.jsonl")):
        try:
            history = [e for _, e in read_history(path)]
            Trace.of(history)
        except (HistoryError, ValueError):
            continue
        found.append((path.stem, tuple(history)))
    for seed, model in ((6, Model(outage_rate_per_h=2.0)), (7, Model(repeat_failed=0.3))):
        for history in simulate(model, RECORDED, goals=60, seed=seed):
            found.append((history[0].goal_id, tuple(history)))
    # hand-edited: run under looser limits, recorded as if under tighter ones, so that many
    # recorded actions were forced (the recorded policy would not have taken them)
    for history in simulate(Model(outage_rate_per_h=2.0), LOOSE, goals=60, seed=8):
        edited = history[0].model_copy(update={"policy": RECORDED})
        found.append((f"edited-{history[0].goal_id}", (edited, *history[1:])))
    return tuple(found)


def _overrides(rng: random.Random) -> list[dict[str, Any]]:
    """Grid-like candidates (goal limits), and some that change an item's limits, a run's,
    the back-off or nothing."""
    out: list[dict[str, Any]] = [
        {"max_replans": r, "max_uncharged_replans": u}
        for r in (1, 2, 3, 5, 9)
        for u in (0, 1, 2, 6)
    ]
    for _ in range(8):
        override = {
            "max_replans": rng.randint(1, 8),
            "max_uncharged_replans": rng.randint(0, 6),
            "max_attempts": rng.randint(1, 4),
            "max_total_attempts": rng.randint(2, 30),
            "max_continuations": rng.randint(0, 3),
            "max_plan_records": rng.randint(2, 12),
        }
        out.append({k: v for k, v in override.items() if rng.random() < 0.5})
    out.append(BACKOFF)
    out.append({})
    return out


def _policies(trace: Trace, overrides: list[dict[str, Any]]) -> list[Policy]:
    found = []
    for override in overrides:
        try:
            found.append(with_overrides(trace.policy, override))
        except PolicyError:  # a combination the recorded policy makes invalid
            continue
    return [trace.policy, *found]


def _same(fast: WhatIf, slow: WhatIf) -> None:
    assert fast.policy == slow.policy
    assert fast.outcome == slow.outcome
    assert fast.events == slow.events
    assert fast.divergence == slow.divergence
    assert fast.final == slow.final
    assert fast.view == slow.view
    assert fast.view.created == slow.view.created
    assert fast.view.policy == slow.view.policy


def test_a_resumed_re_fold_equals_re_folding_every_event() -> None:
    rng = random.Random(1)
    overrides = _overrides(rng)
    resumed = 0
    for name, history in _histories():
        trace = Trace.of(history)
        for policy in _policies(trace, overrides):
            skip = trace.first_check(policy)
            view, start = trace.resume(policy, skip)
            if start:
                resumed += 1
                plain = Trace.of(history).steps(policy)
                for _ in range(start):
                    _, before = next(plain)
                assert view == before, (name, policy)
                assert view.created == before.created
                assert view.policy == before.policy
            fast = trace.under(policy)
            slow = Trace.of(history, keep=False).under(policy, events=list(history))
            try:
                _same(fast, slow)
            except AssertionError as e:
                raise AssertionError(f"{name} under {policy!r}") from e
    assert resumed > 1000  # the shortcut is taken, not only fallen back from


def test_an_action_is_forced_where_the_recorded_policy_would_not_have_taken_it() -> None:
    """Asked lazily, on a re-fold's view (the recorded policy put in for the question) or on
    the record folded again, as analysing every action at once (``keep=False``) says; the
    view asked on is left as it was, its decisions too."""
    forced = 0
    for _, history in _histories():
        eager = Trace.of(history, keep=False).forced
        assert eager is not None
        forced += len(eager)
        for override in ({"max_replans": 9, "max_uncharged_replans": 0}, BACKOFF):
            trace = Trace.of(history)
            policy = with_overrides(trace.policy, override)
            views = [view.copy() for _, view in trace.steps(policy)]
            asked = set()
            for index in range(1, len(history)):
                view, event = views[index - 1], history[index]
                decider = Decider(view)
                if index % 2 or index < 2:  # a decider that has taken in the last event
                    decider.decide(event.at, with_ledger=False)
                else:  # or one that has not yet
                    view = views[index - 2].copy()
                    decider = Decider(view)
                    decider.decide(history[index - 1].at, with_ledger=False)
                    last = history[index - 1]
                    _fold(view, _retarget(last, policy, trace.policy, view), last)
                    assert view == views[index - 1]
                kept = view.copy()
                if trace.is_forced(index, event, decider):
                    asked.add(event.seq)
                assert view == kept
                assert view.policy is kept.policy
                assert decider.decide(event.at) == decide(kept, event.at)
            assert asked == eager
    assert forced > 50


def test_a_shared_censored_view_equals_its_own_re_fold() -> None:
    rng = random.Random(2)
    overrides = _overrides(rng)
    shared = 0
    for name, history in _histories():
        trace = Trace.of(history)
        policies = _policies(trace, overrides)
        first: dict[tuple[object, ...], WhatIf] = {}
        for policy, key in zip(policies, trace.demands.keys(policies), strict=True):
            if key not in first:
                first[key] = trace.under(policy)
                continue
            for ledger in (True, False):
                alike = trace.alike(first[key], policy, ledger=ledger)
                if alike is None:
                    continue
                shared += 1
                own = Trace.of(history).under(policy, ledger=ledger)
                try:
                    _same(alike, own)
                except AssertionError as e:
                    raise AssertionError(f"{name} under {policy!r}") from e
    assert shared > 1000


def test_keys_of_many_policies_are_each_ones_key() -> None:
    rng = random.Random(3)
    overrides = _overrides(rng)
    for _, history in _histories():
        trace = Trace.of(history)
        policies = _policies(trace, overrides)
        assert trace.demands.keys(policies) == [trace.demands.key(p) for p in policies]
        fixed = tuple(policies)  # a tuple's values are kept per field: asked twice, the same
        for _ in range(2):
            assert trace.demands.keys(fixed) == [trace.demands.key(p) for p in policies]
        for policy in policies:
            assert differing(policy, trace.policy) == [
                n for n in Policy.model_fields if getattr(policy, n) != getattr(trace.policy, n)
            ]
        names = ["max_milestones", "max_replans", "max_uncharged_replans"]
        assert trace.demands.keys(policies, names) == [
            trace.demands.key(p, names) for p in policies
        ]


def test_without_the_ledger_a_re_fold_decides_the_same() -> None:
    rng = random.Random(4)
    overrides = _overrides(rng)
    for _, history in _histories()[::3]:
        trace = Trace.of(history)
        for policy in _policies(trace, overrides):
            full, bare = trace.under(policy), trace.under(policy, ledger=False)
            assert (bare.outcome, bare.events, bare.view) == (full.outcome, full.events, full.view)
            for a, b in ((bare.final, full.final),) + (
                ((bare.divergence.decision, full.divergence.decision),)
                if bare.divergence and full.divergence
                else ()
            ):
                assert (a.status, a.next_action, a.reason) == (b.status, b.next_action, b.reason)


@pytest.mark.parametrize("seed", [0, 1])
def test_tune_evaluates_every_candidate_as_its_own_re_fold_would(seed: int) -> None:
    """``evaluate`` shares re-folds among candidates of a key; its known results are those
    of each candidate's own re-fold, and it completes exactly the censored ones."""
    overrides = _overrides(random.Random(seed))[:20]
    model = Model()
    for _, history in _histories()[seed::7]:
        events = list(history)
        trace = Trace.of(events)
        try:
            policies = [with_overrides(trace.policy, o) for o in overrides]
        except PolicyError:  # a grid the recorded policy makes invalid
            continue
        results = evaluate(events, overrides, model, samples=1, rng=random.Random(seed))
        for policy, result in zip(policies, results, strict=True):
            own = trace.under(policy, events=events)
            assert result.censored == (not own.known)
            if own.known:
                assert result.success == float(own.final.status == "succeeded")


def test_policies_re_folded_together_each_get_their_own_re_fold() -> None:
    rng = random.Random(5)
    overrides = _overrides(rng)
    together = 0
    for name, history in _histories():
        trace = Trace.of(history)
        policies = _policies(trace, overrides)
        for ledger in (True, False):
            shared = Trace.of(history).under_all(policies, ledger=ledger)
            for policy, fast in zip(policies, shared, strict=True):
                slow = Trace.of(history, keep=False).under(
                    policy, events=list(history), ledger=ledger
                )
                if not ledger:  # the same decisions, without the ledger
                    assert (fast.final.status, fast.final.next_action) == (
                        slow.final.status,
                        slow.final.next_action,
                    )
                    slow = Trace.of(history).under(policy, ledger=False)
                try:
                    _same(fast, slow)
                except AssertionError as e:
                    raise AssertionError(f"{name} under {policy!r}") from e
        together += trace.raised_at is None
    assert together > 100


def test_riders_that_cannot_yet_be_told_apart_share_a_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``under_all`` asks one of the policies alike at a check (every limit they differ in
    unreached, or reached and equal) and lets the others take the event with it; each
    result is still its own re-fold, also where limits are missing (no cost limit) or
    kept over time (runtime, cost)."""
    import governor.analysis.whatif as whatif

    overrides: list[dict[str, Any]] = [
        {"max_replans": r, "max_uncharged_replans": u} for r in (1, 2, 4, 9) for u in (0, 1, 5)
    ]
    overrides += [
        {"max_cost_usd": c, "max_runtime_s": t, "max_replans": r}
        for c in (None, 0.05, 1000.0)
        for t in (30.0, 14400.0)
        for r in (2, 6)
    ]
    calls = 0

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return decide(*args, **kwargs)

    shared = own = 0
    for name, history in _histories():
        trace = Trace.of(history)
        policies = _policies(trace, overrides)
        with monkeypatch.context() as patched:
            patched.setattr(whatif, "decide", counted)
            calls = 0
            together = Trace.of(history).under_all(policies, ledger=False)
            shared += calls
            calls = 0
            alone = [Trace.of(history).under(p, ledger=False) for p in policies]
            own += calls
        for policy, fast, slow in zip(policies, together, alone, strict=True):
            try:
                _same(fast, slow)
                _same(
                    fast,
                    Trace.of(history, keep=False).under(policy, events=list(history), ledger=False),
                )
            except AssertionError as e:
                raise AssertionError(f"{name} under {policy!r}") from e
    # re-folded together, each deciding at every check from its first, they take ~75 % of
    # the decisions their own re-folds take; sharing them takes ~55 %
    assert shared < own * 0.65, (shared, own)


def test_demands_are_the_most_each_counter_took() -> None:
    """``Demands.note`` (one-attribute counters read by their getters) against every
    budget's counter read after every event: on the goal, and on the item an event names."""
    from governor.analysis.demands import Demands
    from governor.core.budgets import BUDGETS
    from governor.core.fold import evolve
    from governor.core.view import GoalView

    grew = 0
    for _, history in _histories():
        view, demands = GoalView(), Demands()
        most = dict.fromkeys((b.name for b in BUDGETS), 0.0)
        for event in history:
            evolve(view, event)
            before = dict(demands.most)
            grown = demands.note(view, event)
            work_id = getattr(event, "work_id", None)
            item = view.work.get(work_id) if work_id is not None else None
            for budget in BUDGETS:
                values = [] if budget.scope == "item" else [budget.used(view, None)]
                if item is not None and budget.scope != "goal":
                    values.append(budget.used(view, item))
                most[budget.name] = max([most[budget.name], *values])
            assert demands.most == most
            assert sorted(grown) == sorted(n for n in most if most[n] > before[n])
            grew += len(grown)
    assert grew > 1000
