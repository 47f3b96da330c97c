"""The agent calls of one goal's runner: a planner's or a worker's run, made.

Each call gets its profile's harness wrapped by the upstream monitor (the call observed,
a refusal parks the goal), the prompt built on the runner's view, the scrubbed
environment (with the scripted harness's state per goal), a watch through which the
lease's heartbeat can end the agent, and a row in the calls in flight (the live view).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path

from governor.core.event_fields import Profile
from governor.core.view import GoalView, WorkState
from governor.drive.agents import Agents
from governor.drive.calls import Calls
from governor.drive.cost_gate import cost_gate
from governor.drive.health import UpstreamMonitor
from governor.drive.spans import record_run, span
from governor.exec.call import CallInfo
from governor.exec.harness import Harness
from governor.exec.prices import call_price
from governor.exec.process import watching
from governor.exec.relay import Gated
from governor.workflow.agent import AgentCall
from governor.workflow.briefs import planner_prompt, worker_prompt
from governor.workflow.run import PlannerRun, Runtime, WorkerRun, run_planner, run_worker


def agent_env(env: Mapping[str, str], state_dir: Path | None, goal_id: str) -> dict[str, str]:
    """The environment agents start from (each harness scrubs it for its children)."""
    agents = dict(env)
    if state_dir is not None:
        agents["GOVERNOR_SCRIPTED_STATE"] = str(state_dir / goal_id)
    return agents


class AgentCaller:
    """Makes one goal's planner and worker runs (the module rules); records nothing."""

    def __init__(
        self,
        goal_id: str,
        view: Callable[[], GoalView],
        workdir: Path,
        env: dict[str, str],
        *,
        lock: threading.RLock,
        monitor: UpstreamMonitor,
        harnesses: Callable[[Profile, Path], Harness],
        agents: Agents,
        calls: Calls,
        runtime: Runtime,
        clock: Callable[[], datetime],
    ) -> None:
        self.goal_id, self._view, self.workdir, self.env = goal_id, view, workdir, env
        self._lock, self.monitor, self.harnesses = lock, monitor, harnesses
        self.agents, self.calls, self.runtime, self.clock = agents, calls, runtime, clock

    def _call(self, agent: str, profile_name: str, prompt: str, info: CallInfo) -> AgentCall:
        view = self._view()
        assert view.created is not None
        profile = view.created.profiles[profile_name]
        backoff = view.policy.upstream_backoff
        made = self.harnesses(profile, self.workdir)
        if isinstance(made, Gated):  # the goal's cost budget bites mid-run (cost_gate)
            made.gate = cost_gate(self._view, call_price(profile, self.env, self.workdir))
        harness = self.monitor.wrap(made, profile, backoff)
        return AgentCall(
            agent,
            harness,
            profile,
            prompt,
            self.workdir,
            dict(self.env),
            profile_name,
            info,
            parked=lambda: self.monitor.is_failing(profile),
        )

    def planner(self, plan_id: str, trigger: str, info: CallInfo) -> PlannerRun:
        """Run the planner of the plan in flight; what it came to."""
        view = self._view()
        assert view.created is not None
        prompt = planner_prompt(view, trigger, self.clock())
        call = self._call("planner", view.created.planner, prompt, info)
        with (
            watching(self.agents.watch(plan_id)),
            self.calls.running(plan_id, f"plan {plan_id}"),
        ):
            return run_planner(call, view, runtime=self.runtime)

    def worker(self, work_id: str, run_id: str) -> WorkerRun:
        """Run the worker of the item's attempt in flight under ``run_id``; what it came to."""
        with self._lock:
            view = self._view()
            item: WorkState = view.work[work_id]
            prompt = worker_prompt(view, item)
            profile = item.spec.profile
            info = CallInfo.of_worker(self.goal_id, item, run_id)
        with (
            span("agent", info.metadata()) as current,
            watching(self.agents.watch(run_id)),
            self.calls.running(run_id, work_id, info.attempt),
        ):
            run = run_worker(
                self._call(f"worker:{work_id}", profile, prompt, info),
                item.spec.acceptance,
                runtime=self.runtime,
            )
            record_run(current, run.outcome, run.failure_class, run.outcome_evidence, run.error)
        return run
