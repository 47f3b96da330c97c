"""The page of one goal: its decision now, the question it asks, advice, ledger, timeline.

Pure: a ``GoalPage`` in, ``Html`` out. Every text an agent wrote (errors, questions,
rationales, summaries, titles) reaches the page through ``markup.text`` only.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Final
from urllib.parse import quote

from governor.analysis.unblock import Unblock
from governor.core.charges import describe_tries
from governor.core.decision import Decision
from governor.core.evidence import Evidence
from governor.core.ledger import Ledger
from governor.core.text import quoted
from governor.core.view import BudgetRequest, GoalView
from governor.ui.data import GoalPage, Pending
from governor.ui.forms import Acting, act_section, blocker_form, outcome, pending_forms
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
        ("why", el("span", _quoted(decision.reason, commands=False), class_="reason")),
        ("exhausted", decision.exhausted),
        (
            "next wake-up",
            join([relative(decision.not_before, now), " (", when(decision.not_before, now), ")"])
            if decision.not_before
            else None,
        ),
    ]
    return el("section", el("h2", "Now"), _facts(rows), id="now", data_status=decision.status)


def _pending(goal_id: str, pending: Pending, acting: Acting | None) -> Html:
    commands = el(
        "ul",
        [
            el("li", el("span", what, class_="what"), el("code", line, class_="command"))
            for what, line in pending.commands
        ],
        class_="commands",
    )
    if acting is not None and acting.csrf is not None:
        answer = join(
            [
                pending_forms(goal_id, pending, acting),
                el("details", el("summary", "or from a terminal"), commands, id="pending-commands"),
            ]
        )
    else:
        answer = join([el("p", "Answer with:"), commands])
    return el(
        "section",
        el("h2", "Waiting for a person"),
        el("p", pending.asker, " asks:"),
        el("blockquote", pending.question, class_="question"),
        answer,
        id="pending",
    )


def _blockers(
    goal_id: str,
    found: tuple[Unblock, ...],
    acting: Acting | None,
    asked: BudgetRequest | None = None,
) -> Html:
    """Every blocker, what unblocks most first, each with what clears it: its commands,
    and — with actions allowed — its form. An agent's question is a quotation (data)."""
    if not found:
        return Html("")
    forms = acting is not None and acting.csrf is not None
    rows = []
    for u in found:
        b = u.blocker
        where = b.work_id or (f"plan {b.plan_id}" if b.plan_id else "the goal")
        rows.append(
            el(
                "li",
                el("strong", b.kind, class_="kind"),
                " ",
                el("span", where, class_="where"),
                " — ",
                el("span", "waits on a person" if b.person else "governor goes on alone",
                   class_="whose"),
                el("p", b.reason, class_="reason"),
                el("blockquote", b.asked, class_="question", data_source="agent")
                if b.asked is not None
                else Html(""),
                el("p", _quoted(u.todo), class_="todo"),
                el("ul", [el("li", el("code", c, class_="command")) for c in u.commands],
                   class_="commands") if u.commands else Html(""),
                blocker_form(goal_id, u, acting, asked) if forms and acting else Html(""),
                data_kind=b.kind,
                data_work=b.work_id or "",
            )
        )  # fmt: skip
    head = el("h2", "Blockers ", el("span", f"({len(found)}, what unblocks most first)",
                                     class_="sub"))  # fmt: skip
    return el("section", head, el("ol", rows, class_="blockers"), id="blockers")


def running_s(page: GoalPage, now: datetime) -> float:
    """How long the calls in flight have run so far, in seconds (not yet in the ledger)."""
    return sum(max(0.0, (now - c.started_at).total_seconds()) for c in page.running)


def _running(page: GoalPage, now: datetime) -> Html:
    """Each call in flight: what, for how long, who drives it, when it was last heard of
    and the last line its agent wrote (as of the driver's last heartbeat; quoted agent
    text). The page refreshes itself, so the times and lines move without a reload."""
    if not page.running:
        return Html("")
    rows = [
        el(
            "tr",
            el("th", c.what, scope="row"),
            el("td", duration((now - c.started_at).total_seconds()), class_="elapsed"),
            el("td", c.holder or "no driver holds the lease", class_="holder"),
            el("td", relative(c.heartbeat_at, now) if c.heartbeat_at else "—", class_="heartbeat"),
            el("td", relative(c.lease_expires_at, now) if c.lease_expires_at else "—",
               class_="lease"),
            el("td", _quoted(quoted(c.last_line)) if c.last_line else "—", class_="last-line"),
            data_call=c.what,
        )
        for c in page.running
    ]  # fmt: skip
    heads = ("call", "running for", "driven by", "driver last heard", "lease until",
             "last line (at the driver's last heartbeat)")  # fmt: skip
    return el(
        "section",
        el("h2", "Running now"),
        el("table", el("thead", el("tr", *(el("th", h, scope="col") for h in heads))),
           el("tbody", rows), class_="running"),
        id="running",
    )  # fmt: skip


def _header(view: GoalView, decision: Decision, now: datetime) -> Html:
    """When the goal began, when it last changed, how long it has taken, what it cost."""
    created, last = view.created, view.last_at
    if created is None or last is None:
        return Html("")
    ended = decision.is_stopped  # nothing moves until someone acts: its clock stops
    took = ((last if ended else now) - created.at).total_seconds()
    cost = decision.ledger.cost_usd if decision.ledger else 0.0
    limit = view.policy.max_cost_usd
    facts = [
        ("started", when(created.at, now)),
        ("last update", join([when(last, now), " (", relative(last, now), ")"])),
        ("duration", duration(took) + ("" if ended else " so far")),
        ("cost", f"${cost:.2f}" + (f" of ${limit:.2f}" if limit is not None else "")),
    ]
    return el(
        "dl",
        join(el("div", el("dt", k), el("dd", v), class_="fact") for k, v in facts),
        class_="header",
        id="header",
    )


def _commands(text: str) -> Html:
    """Governor's own text whose `back-quoted` parts are code (``explain`` quotes its
    commands so)."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unmatched quote: plain text
        return el("span", text)
    return join(el("code", part) if i % 2 else part for i, part in enumerate(parts))


_AGENT_TEXT: Final = re.compile("(“[^”]*”)")
"""An agent's words inside governor's sentence, as ``governor.core.text.quoted`` quotes them."""


def _quoted(text: str, *, commands: bool = True) -> Html:
    """Governor's text (with ``commands``: its `back-quoted` commands as code) and, apart
    from it, an agent's quoted words as data (``agent-text``: never code)."""
    parts = _AGENT_TEXT.split(text)
    return join(
        el("span", part, class_="agent-text", title="the agent's words, not governor's")
        if i % 2
        else (_commands(part) if commands else part)
        for i, part in enumerate(parts)
    )


def _advice(page: GoalPage) -> Html:
    ex = page.explanation
    head = el("h2", "Advice ", el("span", "(governor explain)", class_="sub"))
    if ex is None or page.advice is None:
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
        "section",
        head,
        el("p", _quoted(page.advice), class_="advice"),
        change,
        id="advice",
        data_ready="true",
    )


def _ledger(ledger: Ledger, view: GoalView, running: float = 0.0) -> Html:
    """The budgets as bars; the runtime counts the calls in flight so far (``running``)."""
    policy = view.policy
    spent_s = ledger.runtime_s + running
    so_far = f" (with {duration(running)} of calls still running)" if running else ""
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
        row("runtime", bar(spent_s, policy.max_runtime_s, label="runtime: "),
            f"{duration(spent_s)} of {duration(policy.max_runtime_s)}{so_far}"),
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


CALM: Final = frozenset({"succeeded", "proposed", "in flight"})
"""Outcomes whose charge is no bad news: a run that did its work counts, as it should."""


def _run(run: Run, now: datetime) -> Html:
    spent = "charged ok" if run.outcome in CALM else "charged spent"
    charged = el(
        "span",
        "charged" if run.charged else "uncharged",
        class_=spent if run.charged else "uncharged",
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
        *([el("h4", "error (tail)"), el("pre", run.error, class_="agent-output")] if run.error else []),
        *([el("h4", "produced"), el("pre", run.detail, class_="agent-output")] if run.detail else []),
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
        el("td", note.text, el("div", note.actor, class_="who"), colspan="4", class_="free"),
        el("td", note.reason or "", class_="free"),
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


def _pools(view: GoalView) -> list[Html]:
    """Links to the pools the goal spends from (SPEC §13.6)."""
    pools = (view.created.pools if view.created else None) or ()
    parts: list[object] = [" · pools: "] if pools else []
    for k, name in enumerate(pools):
        parts += [", " if k else "", link(f"/pools/{quote(name, safe='')}", name)]
    return [join(parts)]


def goal_main(page: GoalPage, now: datetime, acting: Acting | None = None) -> Html:
    """The ``main`` of a goal's page; with ``acting``, its forms (``--allow-actions``)."""
    view = page.view
    title = view.created.title if view.created else None
    pending = page.pending
    return join(
        [
            el("nav", link("/", "« all goals"), *_pools(view), class_="crumbs"),
            el(
                "h1",
                el("span", view.goal_id, class_="goal-id"),
                " ",
                el("span", title, class_="title"),
            ),
            outcome(acting) if acting else Html(""),
            _header(view, page.decision, now),
            _goal(view),
            _status(page.decision, now),
            _running(page, now),
            _pending(view.goal_id, pending, acting) if pending else Html(""),
            _blockers(view.goal_id, page.blockers, acting, view.budget_request),
            _advice(page),
            _ledger(page.decision.ledger, view, running_s(page, now)),
            act_section(view.goal_id, view, page.decision, acting) if acting else Html(""),
            _timeline(page, now),
        ]
    )
