"""The page of one goal: its decision now, the question it asks, advice, ledger, timeline.

Pure: a ``GoalPage`` in, ``Html`` out. Every text an agent wrote (errors, questions,
rationales, summaries, titles) reaches the page through ``markup.text`` only.
"""

from __future__ import annotations

from datetime import datetime

from governor.core.charges import describe_tries
from governor.core.decision import Decision
from governor.core.evidence import Evidence
from governor.core.ledger import Ledger
from governor.core.view import GoalView
from governor.ui.data import GoalPage, Pending
from governor.ui.layout import badge, bar, duration, link, relative, when
from governor.ui.markup import Html, el, join
from governor.ui.timeline import Note, Run


def _facts(rows: list[tuple[str, object]]) -> Html:
    return el("dl", join(join([el("dt", k), el("dd", v)]) for k, v in rows if v is not None))


def _status(decision: Decision, now: datetime) -> Html:
    rows: list[tuple[str, object]] = [
        (
            "status",
            join([badge(decision.status), " ", el("span", decision.next_action, class_="action")]),
        ),
        ("blocked on", decision.blocked_on),
        ("rule", el("code", decision.rule)),
        ("why", el("span", decision.reason, class_="reason")),
        ("exhausted", decision.exhausted),
        (
            "next wake-up",
            join([relative(decision.not_before, now), " (", when(decision.not_before, now), ")"])
            if decision.not_before
            else None,
        ),
    ]
    return el("section", el("h2", "Now"), _facts(rows), id="now", data_status=decision.status)


def _pending(pending: Pending) -> Html:
    commands = [
        el("li", el("span", what, class_="what"), el("code", line, class_="command"))
        for what, line in pending.commands
    ]
    return el(
        "section",
        el("h2", "Waiting for a person"),
        el("p", pending.asker, " asks:"),
        el("blockquote", pending.question, class_="question"),
        el("p", "Answer with:"),
        el("ul", commands, class_="commands"),
        id="pending",
    )


def _advice(page: GoalPage) -> Html:
    ex = page.explanation
    head = el("h2", "Advice ", el("span", "(governor explain)", class_="sub"))
    if ex is None:
        working = "working out the smallest policy change that would let the goal go on; it appears here in a moment"
        return el("section", head, el("p", working, class_="none"), id="advice", data_ready="false")
    change = (
        el(
            "p",
            "smallest change: ",
            el("code", f"{ex.change.field}: {ex.change.before} → {ex.change.after}"),
        )
        if ex.change
        else Html("")
    )
    return el(
        "section", head, el("p", ex.advice, class_="advice"), change, id="advice", data_ready="true"
    )


def _ledger(ledger: Ledger, view: GoalView) -> Html:
    policy = view.policy
    r, a = ledger.replans, ledger.attempts

    def row(name: str, graphic: Html, figures: str) -> Html:
        return el(
            "tr", el("th", name, scope="row"), el("td", graphic), el("td", figures, class_="num")
        )

    rows = [
        row("replans", bar(r.charged, r.limit, r.uncharged, label="replans: "),
            f"{r.charged} of {r.limit} charged, {r.uncharged} uncharged ({r.consecutive_uncharged} in a row)"),
        row("plan records", bar(r.used, policy.max_plan_records, label="plans: "), f"{r.used} of {policy.max_plan_records}"),
        row("total attempts", bar(a.charged, a.limit, a.used - a.charged, label="attempts: "),
            f"{a.charged} of {a.limit} charged, {a.used - a.charged} uncharged"),
        row("runtime", bar(ledger.runtime_s, policy.max_runtime_s, label="runtime: "),
            f"{duration(ledger.runtime_s)} of {duration(policy.max_runtime_s)}"),
        row("cost", bar(ledger.cost_usd, policy.max_cost_usd, label="cost: "),
            f"${ledger.cost_usd:.2f}" + (f" of ${policy.max_cost_usd:.2f}" if policy.max_cost_usd is not None else "")),
    ]  # fmt: skip
    items = [
        el(
            "tr",
            el("th", work_id, scope="row"),
            el("td", view.work[work_id].spec.title if work_id in view.work else None, class_="title"),
            el("td", badge(w.status)),
            el("td", bar(w.charged_attempts, w.limit, w.attempts_used - w.charged_attempts, label=f"{work_id}: ")),
            el("td", f"{w.charged_attempts} of {w.limit} charged, {w.attempts_used - w.charged_attempts} uncharged"
               + (f", {w.continuations} continuations" if w.continuations else ""), class_="num"),
            data_work=work_id,
        )
        for work_id, w in ledger.work.items()
    ]  # fmt: skip
    work_head = el(
        "tr", *(el("th", h, scope="col") for h in ("item", "title", "status", "attempts", ""))
    )
    work = (
        el("table", el("thead", work_head), el("tbody", items), class_="work")
        if items
        else Html("")
    )
    return el(
        "section",
        el("h2", "Budget ledger"),
        el("table", el("tbody", rows), class_="ledger"),
        work,
        id="ledger",
    )


def _evidence(evidence: Evidence | None) -> Html:
    if evidence is None:
        return el("span", "no evidence (reads as unknown)", class_="none")
    rows: list[tuple[str, object]] = [
        ("effects", evidence.effects),
        ("output", evidence.output),
        ("refusal", evidence.refusal),
        ("source", evidence.source),
        ("ref", evidence.ref),
        ("rule", el("code", evidence.rule) if evidence.rule else None),
    ]
    return _facts(rows)


def _run(run: Run, now: datetime) -> Html:
    charged = el(
        "span",
        "charged" if run.charged else "uncharged",
        class_="charged" if run.charged else "uncharged",
    )
    outcome = join(
        [
            el(
                "span",
                run.outcome.replace("_", " "),
                class_=f"outcome o-{run.outcome.replace(' ', '-')}",
            ),
            el("span", f" ({run.failure_class})", class_="class")
            if run.failure_class
            else Html(""),
        ]
    )
    took = duration(run.duration_s) + (
        f" ({run.continuations} continued)" if run.continuations else ""
    )
    tries = describe_tries(run.evidence.tries if run.evidence else None)
    more = [
        el("h4", "why"), el("p", run.why),
        *([el("h4", "evidence"), _evidence(run.evidence)] if run.outcome not in ("in flight", "proposed", "succeeded") else []),
        *([el("h4", "in-agent tries"), el("p", tries, class_="tries")] if tries else []),
        *([el("h4", "error (tail)"), el("pre", run.error)] if run.error else []),
        *([el("h4", "produced"), el("pre", run.detail)] if run.detail else []),
        *([el("p", f"cost ${run.cost_usd:.4f}")] if run.cost_usd is not None else []),
    ]  # fmt: skip
    return el(
        "tr",
        el("td", run.seq, class_="num"),
        el("td", when(run.started_at, now)),
        el("td", el("strong", run.what), el("div", run.who, class_="who")),
        el("td", took, class_="num"),
        el("td", outcome),
        el("td", charged),
        el("td", el("details", el("summary", run.why), join(more), id=f"run-{run.seq}")),
        class_=f"run {run.kind}",
        data_seq=run.seq,
    )  # fmt: skip


def _note(note: Note, now: datetime) -> Html:
    return el(
        "tr",
        el("td", note.seq, class_="num"),
        el("td", when(note.at, now)),
        el("td", note.text, el("div", note.actor, class_="who"), colspan="4"),
        el("td", note.reason or ""),
        class_="note",
        data_seq=note.seq,
    )


def _timeline(page: GoalPage, now: datetime) -> Html:
    head = el(
        "tr",
        *(
            el("th", h, scope="col")
            for h in ("seq", "started", "run", "took", "outcome", "budget", "why")
        ),
    )
    rows = [_run(e, now) if isinstance(e, Run) else _note(e, now) for e in page.entries]
    return el(
        "section",
        el("h2", "Timeline ", el("span", f"{page.events} events", class_="sub")),
        el("table", el("thead", head), el("tbody", rows), class_="timeline"),
        id="timeline",
    )


def _goal(view: GoalView) -> Html:
    created = view.created
    if created is None:
        return Html("")
    acceptance = (
        el("ul", (el("li", c) for c in created.acceptance)) if created.acceptance else Html("")
    )
    return el(
        "details",
        el("summary", "objective and acceptance criteria"),
        el("p", created.objective, class_="objective"),
        acceptance,
        el("p", "planner: ", el("code", created.planner), ", worker: ", el("code", created.worker)),
        id="objective",
    )


def goal_main(page: GoalPage, now: datetime) -> Html:
    """The ``main`` of a goal's page."""
    view = page.view
    title = view.created.title if view.created else None
    return join(
        [
            el("nav", link("/", "« all goals"), class_="crumbs"),
            el(
                "h1",
                el("span", view.goal_id, class_="goal-id"),
                " ",
                el("span", title, class_="title"),
            ),
            _goal(view),
            _status(page.decision, now),
            _pending(page.pending) if page.pending else Html(""),
            _advice(page),
            _ledger(page.decision.ledger, view),
            _timeline(page, now),
        ]
    )
