"""Simulate: synthetic goal histories from a stated generative model, through the real core.

The model (``docs/tuning.md`` states it with its defaults):
    * The vendor alternates between up and down: outages start as a Poisson process
      (``outage_rate_per_h``) and last an exponential time (``outage_mean_s``) — or, when
      ``outage_lengths_s`` lists lengths, a length drawn from those. A call made
      while it is down is refused before anything runs: ``upstream`` with positive
      no-effect evidence; with probability ``retry_after_p`` it says how long to wait.
    * With probability ``missing_binary`` the planner's binary is missing: an
      ``environment`` stop at the first plan.
    * A planner call asks a person with probability ``plan_decision``, proposes a valid
      plan with probability ``plan_success`` (1 to ``max_items`` items, or a size drawn from
      ``plan_sizes`` for its kind: first plan, replan, milestone; after a milestone it
      says ``complete`` with probability ``complete_after_milestone``), else fails charged.
    * Each work item has its own success probability q ~ Beta(``item_a``, ``item_b``); an
      attempt asks a person with probability ``attempt_decision``, succeeds with
      probability q, else fails charged. With probability ``repeat_failed`` an item of a
      later plan is an earlier item that failed, proposed again: it keeps that item's q.
    * Calls take exponential times (``planner_s``, ``worker_s``) and cost fixed amounts.

Randomness is split into streams (outages; planner calls; each item by creation order),
so the same seed under two policies gives the same story until the policies diverge.
Everything is recorded with the core's own functions, so every history validates.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from governor.analysis.model import Model, Vendor
from governor.core import record, record_work
from governor.core.decision import Decision
from governor.core.event_fields import Profile, WorkSpec
from governor.core.events import Event
from governor.core.evidence import UNKNOWN, Evidence, nothing_happened
from governor.core.fold import project
from governor.core.headroom import milestones_left
from governor.core.policy import Policy
from governor.core.route import Plan
from governor.core.rules.decider import Decider
from governor.core.view import GoalView
from governor.drive.act import follow
from governor.drive.modelled import ModelledGoal

T0: Final = datetime(2026, 1, 1, tzinfo=UTC)
OUTAGE: Final = nothing_happened("sim:vendor", "refused before any output", rule="vendor-status")
WORKED: Final = Evidence(
    effects="observed", output="observed", source="sim:worker", ref="ran tools"
)
MISSING: Final = nothing_happened("exec:spawn-errno", "ENOENT", rule="spawn-errno")


def _stream(seed: int, goal: int, name: str) -> random.Random:
    return random.Random(f"{seed}:{goal}:{name}")


@dataclass(slots=True)
class World:
    """One goal's randomness: the vendor, the planner's calls, each item's attempts."""

    model: Model
    vendor: Vendor
    planner: random.Random
    hints: random.Random
    streams: Callable[[int], random.Random]
    binary_missing: bool
    prior: Callable[[GoalView, str, random.Random], float]
    _q: dict[str, float] = field(default_factory=dict)
    _items: dict[int, random.Random] = field(default_factory=dict)
    _runs: int = 0

    def run_id(self) -> str:
        self._runs += 1
        return f"r{self._runs}"

    def item(self, view: GoalView, work_id: str) -> random.Random:
        """The item's own stream (by creation order): its success probability, then its attempts."""
        index = list(view.work).index(work_id)
        if index not in self._items:
            rng = self._items[index] = self.streams(index)
            again = self._repeated(view, work_id, rng)
            if again is None:
                self._q[work_id] = self.prior(view, work_id, rng)
            else:  # the planner proposed a failed item again: it is as hard as it was
                if again not in self._q:
                    self._q[again] = self.prior(view, again, rng)
                self._q[work_id] = self._q[again]
        return self._items[index]

    def _repeated(self, view: GoalView, work_id: str, rng: random.Random) -> str | None:
        """The failed item of an earlier plan this one repeats, if it is a repeat."""
        if self.model.repeat_failed <= 0:  # draws nothing: the streams stay as they were
            return None
        plan_id = view.work[work_id].plan_id
        failed = [
            w.work_id
            for w in view.work.values()
            if w.plan_id != plan_id and w.charged_attempts > 0 and w.outcome != "succeeded"
        ]
        u, pick = rng.random(), rng.random()
        if not failed or u >= self.model.repeat_failed:
            return None
        return failed[int(pick * len(failed))]

    def success_of(self, view: GoalView, work_id: str) -> float:
        self.item(view, work_id)
        return self._q[work_id]


def beta_prior(model: Model) -> Callable[[GoalView, str, random.Random], float]:
    """Each new item's success probability is a fresh draw from Beta(item_a, item_b)."""
    return lambda _view, _work_id, rng: rng.betavariate(model.item_a, model.item_b)


def world(model: Model, seed: int, goal: int, *, at: float = 0.0) -> World:
    """The world of goal number ``goal`` of a corpus seeded ``seed``."""
    vendor = Vendor.steady(
        model.outage_rate_per_h / 3600,
        model.outage_mean_s,
        _stream(seed, goal, "vendor"),
        model=model,
    )
    missing = _stream(seed, goal, "binary").random() < model.missing_binary
    return World(
        model,
        vendor,
        _stream(seed, goal, "planner"),
        _stream(seed, goal, "hints"),
        lambda i: _stream(seed, goal, f"item{i}"),
        missing,
        beta_prior(model),
    )


class Episode(ModelledGoal):
    """A goal being simulated: its view, its events and its clock (seconds since T0).

    It performs the core's actions with the model in place of agents, through the same
    driver as real runs (``governor.drive.act.follow``).
    """

    epoch = T0

    def __init__(self, w: World, view: GoalView, events: list[Event], t: float) -> None:
        self.w, self.view, self.events, self.t = w, view, events, t
        self.decider = Decider(view)
        """Decides ``view`` (the episode folds into it), taking again only what changed."""

    def refusal(self) -> tuple[float | None, float | None]:
        """(duration, retry_after) of a refused call, or (None, None) when the vendor is up."""
        end = self.w.vendor.down_until(self.t)
        if end is None:
            return None, None
        hint = self.w.hints.random() < self.w.model.retry_after_p
        return self.w.model.refusal_s, min(end - self.t, 3600.0) if hint else None

    # --- the actions (an ``Actor`` of ``governor.drive.act``) ---------------------------

    def plan(self, action: Plan) -> None:
        """Ask the model's planner (for the plan in flight, when a tail starts mid-run)."""
        if action.plan_id is not None:
            plan_id, trigger = action.plan_id, self.view.plans[action.plan_id].trigger
        else:
            plan_id, trigger = f"p{self.view.plans_used + 1}", action.trigger or "initial"
            self.add(record.request_plan(self.view, plan_id=plan_id, trigger=trigger, at=self.now))
        m = self.w.model
        if self.w.binary_missing:
            self.plan_failed(
                plan_id,
                "environment",
                MISSING,
                "could not start 'planner': No such file or directory",
            )
            return
        refused, retry_after = self.refusal()
        if refused is not None:
            self.t += refused
            self.plan_failed(
                plan_id, "upstream", OUTAGE, "HTTP/1.1 503 Service Unavailable", retry_after
            )
            return
        rng = self.w.planner
        u, n, v = rng.random(), m.plan_size(rng, trigger), rng.random()
        self.t += rng.expovariate(1 / m.planner_s)
        if u < m.plan_decision:
            self.plan_failed(plan_id, "decision", UNKNOWN, "Which approach should the goal take?")
        elif u < m.plan_decision + m.plan_success:
            # the planner says complete after a milestone, or when it may only say that
            done = trigger == "milestone" and (
                v < m.complete_after_milestone or not milestones_left(self.view)
            )
            work = (
                []
                if done
                else [
                    WorkSpec(key=f"k{i}", title=f"item {i}", objective="o", acceptance=("ok",))
                    for i in range(n)
                ]
            )
            self.add(
                record.plan_proposed(
                    self.view,
                    plan_id=plan_id,
                    at=self.now,
                    decision="complete" if done else "apply",
                    rationale="sim",
                    work=work,
                )
            )
        else:
            self.plan_failed(plan_id, None, UNKNOWN, "the reply could not be used: no JSON object")

    def attempt(self, work_id: str) -> None:
        """One attempt of the model's worker (the one in flight, when a tail starts mid-run)."""
        item = self.view.work[work_id]
        if item.running and item.run_id is not None:
            run_id = item.run_id
        else:
            run_id = self.w.run_id()
            self.add(
                record_work.start_attempt(self.view, work_id=work_id, run_id=run_id, at=self.now)
            )
        m = self.w.model
        refused, retry_after = self.refusal()
        if refused is not None:
            self.t += refused
            self.finish(
                work_id,
                run_id,
                "failed",
                failure_class="upstream",
                evidence=OUTAGE,
                error="HTTP/1.1 503 Service Unavailable",
                retry_after_s=retry_after,
            )
            return
        q = self.w.success_of(self.view, work_id)
        rng = self.w.item(self.view, work_id)
        u = rng.random()
        self.t += rng.expovariate(1 / m.worker_s)
        if u < m.attempt_decision:
            self.finish(
                work_id,
                run_id,
                "failed",
                failure_class="decision",
                error="Which way should this go?",
            )
        elif u < m.attempt_decision + (1 - m.attempt_decision) * q:
            self.finish(work_id, run_id, "succeeded", cost_usd=m.worker_cost_usd, summary="done")
        else:
            self.finish(
                work_id,
                run_id,
                "failed",
                evidence=WORKED,
                error="tests failed",
                cost_usd=m.worker_cost_usd,
            )

    def run(self, *, max_steps: int = 500) -> Decision:
        """Follow the decisions until the goal stops (or ``max_steps``)."""
        decision, _ = follow(
            self, lambda: self.decider.decide(self.now, with_ledger=False), max_steps=max_steps
        )
        return decision


def new_goal(goal: int, policy: Policy, pools: tuple[str, ...] = ()) -> list[Event]:
    profiles = {"agent": Profile(harness="scripted", args=("sim.json",))}
    return record.create_goal(
        f"sim-{goal:06d}",
        title=f"Simulated goal {goal}",
        objective="o",
        acceptance=["done"],
        profiles=profiles,
        planner="agent",
        worker="agent",
        at=T0,
        policy=policy,
        pools=pools,
    )


def simulate_goal(model: Model, policy: Policy, seed: int, goal: int) -> list[Event]:
    """One goal's full history under ``policy``."""
    events = new_goal(goal, policy)
    episode = Episode(world(model, seed, goal), project(events), events, 0.0)
    episode.run()
    return episode.events


def simulate(model: Model, policy: Policy, *, goals: int, seed: int) -> Iterator[list[Event]]:
    """A corpus: ``goals`` histories, deterministic for ``seed``."""
    for goal in range(goals):
        yield simulate_goal(model, policy, seed, goal)
