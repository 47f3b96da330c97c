"""The rival world: an independent generative model of goals, driven through the real core.

It exists to check the tuner (``bench.tune_validity``) on histories from a model the tuner
does not fit. Like any driver, it performs the core's routed actions
(``governor.drive.act.follow``) and records every outcome with the core's own functions,
so every history validates; only the agents and the vendor are invented. What differs from
``governor.analysis.simulate`` on purpose:

    * **Goals differ in difficulty.** A goal's latent difficulty z comes from a mixture of
      easy and hard goals; each task's success probability is sigmoid(skill + noise - z),
      so the tasks of one goal are alike (simulate draws every item independently).
    * **Planners repeat failing plans.** A replan proposes the tasks still open; a task
      that exhausted its attempts is proposed again verbatim - same title, same success
      probability - with the goal's planner's stubbornness (a per-goal Beta draw), else it
      is reworked into a fresh task (simulate: every plan is fresh work). Some tasks
      depend on the one before; a proposal holds 1 + Poisson tasks and may break the
      policy's bounds (the core fails it, charged).
    * **A goal needs a hidden number of milestones** (1 + Poisson); the planner says
      ``complete`` once that many are done (simulate: a coin after every milestone).
    * **Outages are heavy-tailed.** The vendor alternates between up (log-normal) and down
      (Pareto, capped) periods, started well before the goal (so a goal meets the
      length-biased outage of the steady state). Some refusals reach a worker after it
      streamed output: charged. Retry-After hints are noisy.
    * **Environment failures** happen at a small rate: the planner's binary is missing for
      some goals, and a task that needs a missing tool fails with ENOENT mid-goal.
    * Workers sometimes time out (charged); run times are log-normal, slower on hard
      goals; cost grows with run time.

Randomness is split into streams per goal (the goal's traits, the vendor, the planner,
refusal details, each task by index), so the same ``(seed, goal)`` under two policies
tells the same story until the policies diverge.
"""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from governor.core import record, record_work
from governor.core.decision import Decision
from governor.core.event_fields import Profile, WorkSpec
from governor.core.events import Event
from governor.core.evidence import UNKNOWN, Evidence, nothing_happened
from governor.core.fold import project
from governor.core.headroom import milestones_left
from governor.core.policy import Policy
from governor.core.route import Plan
from governor.core.rules.decide import decide
from governor.core.view import GoalView
from governor.drive.act import follow
from governor.drive.modelled import ModelledGoal

T0: Final = datetime(2026, 3, 2, 8, tzinfo=UTC)
GOAL_SPACING_S: Final = 420.0
"""Goals of a corpus start seven minutes apart (a queue, as a service would run them)."""
MAX_STEPS: Final = 5000

REFUSED: Final = nothing_happened("rival:vendor", "503 before any output", rule="vendor-status")
CUT: Final = Evidence(
    effects="unknown", output="observed", source="rival:worker", ref="stream cut by a 503"
)
RAN: Final = Evidence(effects="observed", output="observed", source="rival:worker", ref="tools ran")
NO_PLANNER: Final = nothing_happened("exec:spawn-errno", "ENOENT", rule="spawn-errno")
NO_TOOL: Final = nothing_happened("exec:spawn-errno", "ENOENT", rule="spawn-errno")


@dataclass(frozen=True, slots=True)
class RivalModel:
    """The rival world's parameters (see the module docstring)."""

    hard_share: float = 0.3
    easy_mean: float = -0.6
    easy_sd: float = 0.5
    """An easy goal's difficulty ~ N(easy_mean, easy_sd)."""
    hard_mean: float = 1.4
    hard_sd: float = 0.6
    task_skill: float = 1.2
    task_spread: float = 1.0
    rework_bonus: float = 0.3
    """A reworked task is a little easier (the planner learned from the failure)."""
    stubborn_a: float = 1.5
    stubborn_b: float = 2.5
    """A goal's planner repeats an exhausted task verbatim with a chance ~ Beta(a, b)."""
    tasks_per_plan: float = 1.3
    chain_p: float = 0.4
    extra_milestones: float = 0.5
    plan_valid: float = 2.2
    plan_valid_per_difficulty: float = 0.6
    """A planner reply is a usable proposal with probability sigmoid(valid - per * z)."""
    plan_decision: float = 0.005
    attempt_decision: float = 0.004
    timeout_p: float = 0.015
    timeout_s: float = 1800.0
    planner_missing: float = 0.012
    tool_missing: float = 0.006
    up_mean_s: float = 7200.0
    up_sigma: float = 1.0
    down_alpha: float = 1.4
    down_min_s: float = 240.0
    down_cap_s: float = 6 * 3600.0
    burn_in_s: float = 48 * 3600.0
    dirty_refusal_p: float = 0.2
    hint_p: float = 0.5
    hint_sigma: float = 0.5
    planner_median_s: float = 40.0
    worker_median_s: float = 200.0
    duration_sigma: float = 0.8
    slow_per_difficulty: float = 0.25
    refusal_s: float = 3.0
    cost_per_s: float = 0.0009
    cost_base_usd: float = 0.02


def _rng(seed: int, goal: int, name: str) -> random.Random:
    return random.Random(f"rival:{seed}:{goal}:{name}")


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _poisson(rng: random.Random, mean: float) -> int:
    """Knuth's multiplication method (the means here are small)."""
    limit, k, p = math.exp(-mean), 0, rng.random()
    while p > limit:
        k += 1
        p *= rng.random()
    return k


@dataclass(slots=True)
class Vendor:
    """Up and down periods alternating along the clock, drawn lazily; started ``burn_in_s``
    before the goal, so the goal meets the process near its steady state."""

    model: RivalModel
    rng: random.Random
    clock: float
    starts: list[float] = field(default_factory=list)
    ends: list[float] = field(default_factory=list)

    def _up_s(self) -> float:
        sigma = self.model.up_sigma
        return self.rng.lognormvariate(math.log(self.model.up_mean_s) - sigma * sigma / 2, sigma)

    def _down_s(self) -> float:
        m = self.model
        return min(m.down_cap_s, m.down_min_s * self.rng.paretovariate(m.down_alpha))

    def down_until(self, t: float) -> float | None:
        """When the outage under way at ``t`` ends, or None when the vendor is up."""
        while self.clock <= t:
            start = self.clock + self._up_s()
            self.starts.append(start)
            self.clock = start + self._down_s()
            self.ends.append(self.clock)
        i = bisect.bisect_right(self.starts, t) - 1
        return self.ends[i] if i >= 0 and t < self.ends[i] else None

    def outages_s(self) -> list[float]:
        """The lengths of the outages drawn so far."""
        return [end - start for start, end in zip(self.starts, self.ends, strict=True)]


@dataclass(slots=True)
class Task:
    """A piece of work as the world knows it (the history sees only its title)."""

    index: int
    title: str
    success_p: float
    tool_missing: bool
    rng: random.Random


@dataclass(slots=True)
class Goal:
    """One goal's hidden traits and the tasks its planner has drawn."""

    model: RivalModel
    seed: int
    number: int
    difficulty: float
    stubbornness: float
    milestones_needed: int
    planner_missing: bool
    tasks: list[Task] = field(default_factory=list)
    milestone_tasks: dict[int, list[Task]] = field(default_factory=dict)
    by_work: dict[str, Task] = field(default_factory=dict)
    repeats: int = 0
    """Exhausted tasks proposed again verbatim."""

    @classmethod
    def draw(cls, model: RivalModel, seed: int, number: int) -> Goal:
        rng = _rng(seed, number, "goal")
        hard = rng.random() < model.hard_share
        mean, sd = (model.hard_mean, model.hard_sd) if hard else (model.easy_mean, model.easy_sd)
        return cls(
            model,
            seed,
            number,
            difficulty=rng.gauss(mean, sd),
            stubbornness=rng.betavariate(model.stubborn_a, model.stubborn_b),
            milestones_needed=1 + _poisson(rng, model.extra_milestones),
            planner_missing=rng.random() < model.planner_missing,
        )

    def new_task(self, *, bonus: float = 0.0, title: str | None = None) -> Task:
        index = len(self.tasks)
        rng = _rng(self.seed, self.number, f"task{index}")
        m = self.model
        logit = m.task_skill + rng.gauss(0.0, m.task_spread) - self.difficulty + bonus
        task = Task(
            index,
            title or f"task {index}",
            _sigmoid(logit),
            rng.random() < m.tool_missing,
            rng,
        )
        self.tasks.append(task)
        return task

    def milestone(self, done: int, planner: random.Random) -> list[Task]:
        """The tasks of the milestone after ``done`` completed ones (drawn once)."""
        if done not in self.milestone_tasks:
            n = 1 + _poisson(planner, self.model.tasks_per_plan)
            self.milestone_tasks[done] = [self.new_task() for _ in range(n)]
        return self.milestone_tasks[done]

    def replan(self, view: GoalView, open_ids: list[str], planner: random.Random) -> list[Task]:
        """The open tasks again; an exhausted one verbatim (stubborn) or reworked."""
        out = []
        for work_id in open_ids:
            task, item = self.by_work[work_id], view.work[work_id]
            if item.charged_attempts < item.max_attempts:
                out.append(task)
            elif planner.random() < self.stubbornness:
                self.repeats += 1
                out.append(task)
            else:
                out.append(self.new_task(bonus=self.model.rework_bonus))
        return out


class Episode(ModelledGoal):
    """A rival goal being driven: its view, its events, its clock (seconds since ``T0``).

    An ``Actor`` of ``governor.drive.act``: it performs the core's actions with the world
    in place of agents.
    """

    epoch = T0

    def __init__(self, model: RivalModel, policy: Policy, seed: int, number: int) -> None:
        self.model, self.t = model, number * GOAL_SPACING_S
        self.goal = Goal.draw(model, seed, number)
        self.vendor = Vendor(model, _rng(seed, number, "vendor"), self.t - model.burn_in_s)
        self.planner = _rng(seed, number, "planner")
        self.refusals = _rng(seed, number, "refusals")
        self.runs = 0
        profiles = {
            "planner": Profile(harness="codex", model="planner-large"),
            "worker": Profile(harness="claude", model="worker-fast"),
        }
        self.events: list[Event] = record.create_goal(
            f"rival-{number:06d}",
            title=f"Rival goal {number}",
            objective="o",
            acceptance=["done"],
            profiles=profiles,
            planner="planner",
            worker="worker",
            at=self.now,
            policy=policy,
        )
        self.view = project(self.events)

    def run_s(self, median_s: float) -> float:
        return self.planner.lognormvariate(math.log(median_s), self.model.duration_sigma)

    def hint(self, end: float) -> float | None:
        """A noisy Retry-After, sometimes."""
        if self.refusals.random() >= self.model.hint_p:
            return None
        noise = self.refusals.lognormvariate(0.0, self.model.hint_sigma)
        return min(3600.0, max(1.0, (end - self.t) * noise))

    # --- planner -------------------------------------------------------------------------

    def plan(self, action: Plan) -> None:
        if action.plan_id is not None:
            plan_id = action.plan_id
        else:
            plan_id = f"p{self.view.plans_used + 1}"
            trigger = action.trigger or "initial"
            self.add(record.request_plan(self.view, plan_id=plan_id, trigger=trigger, at=self.now))
        m = self.model
        if self.goal.planner_missing:
            error = "could not start 'codex': No such file or directory"
            self.plan_failed(plan_id, "environment", NO_PLANNER, error)
            return
        end = self.vendor.down_until(self.t)
        if end is not None:
            self.t += m.refusal_s
            error = "HTTP/1.1 503 Service Unavailable"
            self.plan_failed(plan_id, "upstream", REFUSED, error, self.hint(end))
            return
        u, usable = self.planner.random(), self.planner.random()
        self.t += self.run_s(m.planner_median_s)
        if u < m.plan_decision:
            self.plan_failed(plan_id, "decision", UNKNOWN, "Which stack should we use?")
        elif usable < _sigmoid(m.plan_valid - m.plan_valid_per_difficulty * self.goal.difficulty):
            self.propose(plan_id)
        else:
            error = "the reply could not be used: no JSON object"
            self.plan_failed(plan_id, None, UNKNOWN, error)

    def tasks_to_propose(self) -> list[Task] | None:
        """What the planner proposes now, read from the graph; None to say ``complete``."""
        view, goal = self.view, self.goal
        active = view.active_plan
        if active is None:
            return goal.milestone(0, self.planner)
        ids = view.items_by_plan[active.plan_id]
        open_ids = [w for w in ids if not view.work[w].accepted]
        if open_ids:
            return goal.replan(view, open_ids, self.planner)
        if view.milestones >= goal.milestones_needed or not milestones_left(view):
            return None
        return goal.milestone(view.milestones, self.planner)

    def propose(self, plan_id: str) -> None:
        tasks = self.tasks_to_propose()
        work = []
        for j, task in enumerate(tasks or []):
            chained = j > 0 and self.planner.random() < self.model.chain_p
            work.append(
                WorkSpec(
                    key=f"t{task.index}",
                    title=task.title,
                    objective="o",
                    acceptance=("ok",),
                    depends_on=(f"t{tasks[j - 1].index}",) if tasks and chained else (),
                )
            )
            self.goal.by_work[f"{plan_id}-t{task.index}"] = task
        decision = "apply" if tasks else "complete"
        self.add(
            record.plan_proposed(
                self.view,
                plan_id=plan_id,
                at=self.now,
                decision=decision,
                rationale="rival",
                work=work,
            )
        )

    # --- worker --------------------------------------------------------------------------

    def attempt(self, work_id: str) -> None:
        item = self.view.work[work_id]
        if item.running and item.run_id is not None:
            run_id = item.run_id
        else:
            self.runs += 1
            run_id = f"run-{self.runs}"
            self.add(
                record_work.start_attempt(self.view, work_id=work_id, run_id=run_id, at=self.now)
            )
        task, m = self.goal.by_work[work_id], self.model
        if task.tool_missing:
            self.t += 0.5
            error = "could not start 'cargo': No such file or directory"
            self.finish(
                work_id,
                run_id,
                "failed",
                failure_class="environment",
                evidence=NO_TOOL,
                error=error,
            )
            return
        end = self.vendor.down_until(self.t)
        if end is not None:
            self.refused(work_id, run_id, end)
            return
        u = task.rng.random()
        median = m.worker_median_s * math.exp(m.slow_per_difficulty * self.goal.difficulty)
        run_s = task.rng.lognormvariate(math.log(median), m.duration_sigma)
        if u < m.attempt_decision:
            self.t += run_s
            self.finish(work_id, run_id, "failed", failure_class="decision", error="Which way?")
        elif u < m.attempt_decision + m.timeout_p:
            self.t += m.timeout_s
            error = f"timed out after {m.timeout_s:.0f} s"
            self.finish(work_id, run_id, "timed_out", error=error, cost_usd=self.cost(m.timeout_s))
        elif task.rng.random() < task.success_p:
            self.t += run_s
            self.finish(work_id, run_id, "succeeded", cost_usd=self.cost(run_s), summary="done")
        else:
            self.t += run_s
            error = "tests failed"
            self.finish(
                work_id, run_id, "failed", evidence=RAN, error=error, cost_usd=self.cost(run_s)
            )

    def refused(self, work_id: str, run_id: str, end: float) -> None:
        """The vendor is down: a clean refusal (uncharged), or a stream cut after output (charged)."""
        m = self.model
        if self.refusals.random() < m.dirty_refusal_p:
            run_s = self.refusals.uniform(5.0, 60.0)
            self.t += run_s
            self.finish(
                work_id,
                run_id,
                "failed",
                failure_class="upstream",
                evidence=CUT,
                error="stream error: HTTP/1.1 503 Service Unavailable",
                cost_usd=self.cost(run_s),
            )
            return
        self.t += m.refusal_s
        self.finish(
            work_id,
            run_id,
            "failed",
            failure_class="upstream",
            evidence=REFUSED,
            error="HTTP/1.1 503 Service Unavailable",
            retry_after_s=self.hint(end),
        )

    def cost(self, run_s: float) -> float:
        return self.model.cost_base_usd + self.model.cost_per_s * run_s

    def run(self) -> Decision:
        """Follow the core's decisions until the drive ends."""
        decision, _ = follow(
            self, lambda: decide(self.view, self.now, with_ledger=False), max_steps=MAX_STEPS
        )
        return decision


def play(model: RivalModel, policy: Policy, seed: int, goal: int) -> Episode:
    """Goal number ``goal`` of a corpus seeded ``seed``, driven to its end under ``policy``."""
    episode = Episode(model, policy, seed, goal)
    episode.run()
    return episode


def rival_goal(model: RivalModel, policy: Policy, seed: int, goal: int) -> list[Event]:
    """One goal's full history under ``policy``."""
    return play(model, policy, seed, goal).events
