"""The forms of a goal's page when ``governor ui --allow-actions`` lets a person act on it.

Rules:
    * Pure: a goal's view, its decision and an ``Acting`` in, ``Html`` out.
    * Every form POSTs to ``/goals/GOAL/act`` with the page's one-time CSRF token and the
      name of an operator verb (``governor.drive.goals.VERBS``), or ``grant``/``decline``
      of an open request for more budget (``governor.drive.grants``): the server runs it
      as the CLI does and refuses what the CLI refuses. A form offers what the goal's
      state suggests; the rules, not the form, decide what is allowed.
    * A form that was refused comes back filled in as it was sent (``Acting.sent``), so a
      person's answer is never lost to an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from governor.analysis.unblock import Unblock
from governor.core.budgets import LEDGERS
from governor.core.decision import Decision
from governor.core.view import BudgetRequest, GoalView, WorkState
from governor.ui.data import Pending
from governor.ui.markup import Html, el, join, void


@dataclass(frozen=True, slots=True)
class Acting:
    """What a goal's page needs to offer actions."""

    actor: str
    """Who acts, as recorded: ``ui:alice``."""
    csrf: str | None
    """This page's one-time form token; None when the browser holds no access token."""
    done: str | None = None
    """The verb just recorded (the page after a successful action)."""
    error: str | None = None
    """The one-line error of a refused action."""
    sent: Mapping[str, str] = field(default_factory=dict)
    """The fields of the refused form, to fill it in again."""


def act_url(goal_id: str) -> str:
    """Where a goal's forms are sent."""
    return f"/goals/{quote(goal_id, safe='')}/act"


def _form(goal_id: str, acting: Acting, key: str, *children: object, **hidden: str) -> Html:
    """A form of the page: its token, its key (to fill it in again), hidden fields, children."""
    fields = [("csrf", acting.csrf or ""), ("form", key), *hidden.items()]
    return el(
        "form",
        *(void("input", type="hidden", name=name, value=value) for name, value in fields),
        *children,
        method="post",
        action=act_url(goal_id),
        class_="act",
        data_form=key,
    )


def _reason(acting: Acting, key: str, label: str, *, required: bool = False) -> Html:
    text = acting.sent.get("reason", "") if acting.sent.get("form") == key else ""
    name = f"{key}-reason"
    return join(
        [
            el("label", label, for_=name),
            el("textarea", text, id=name, name="reason", rows="2", required=required),
        ]
    )


def _button(verb: str, label: str, *, danger: bool = False) -> Html:
    return el(
        "button", label, type="submit", name="verb", value=verb, class_="danger" if danger else None
    )


def _buttons(*buttons: Html) -> Html:
    return el("div", *buttons, class_="buttons")


def pending_forms(goal_id: str, pending: Pending, acting: Acting) -> Html:
    """The forms that answer what a goal waits on: the answer, or the review."""
    if pending.kind == "question":
        return _form(
            goal_id,
            acting,
            "answer",
            _reason(acting, "answer", "your answer", required=True),
            _buttons(_button("answer", "answer")),
        )
    if pending.kind == "plan" and pending.plan_id:
        return _form(
            goal_id,
            acting,
            f"plan:{pending.plan_id}",
            _reason(acting, f"plan:{pending.plan_id}", "why (needed to reject)"),
            _buttons(
                _button("plan approve", "approve"), _button("plan reject", "reject", danger=True)
            ),
            plan=pending.plan_id,
        )
    return join(
        _form(
            goal_id,
            acting,
            f"review:{work_id}",
            el("strong", work_id),
            _reason(acting, f"review:{work_id}", "what to change (needed to retry)"),
            _buttons(
                _button("work accept", "accept"),
                _button("work retry", "retry with this", danger=True),
            ),
            work=work_id,
        )
        for work_id in pending.work_ids
    )


def budget_fields(acting: Acting, key: str, asked: BudgetRequest | None) -> Html:
    """A grant's amounts (``--usd``, ``--attempts``, ``--expires``; the amount asked filled
    in) and its reason, as ``governor grant`` takes them."""
    sent = acting.sent if acting.sent.get("form") == key else {}

    def number(name: str, label: str, value: float | int | None, step: str) -> Html:
        shown = sent.get(name, "" if value is None else f"{value:g}")
        field_id = f"{key}-{name}"
        return join(
            [
                el("label", label, for_=field_id),
                void("input", type="number", id=field_id, name=name, min="0", step=step,
                     value=shown),
            ]
        )  # fmt: skip

    expires_id = f"{key}-expires"
    return join(
        [
            number("usd", "US dollars", asked.usd if asked else None, "any"),
            number("attempts", "charged attempts", asked.attempts if asked else None, "1"),
            el("label", "expires after (2h, 30m; empty: never)", for_=expires_id),
            void("input", type="text", id=expires_id, name="expires",
                 value=sent.get("expires", "")),
            _reason(acting, key, "why (needed to grant or decline)", required=True),
        ]
    )  # fmt: skip


def grant_form(goal_id: str, u: Unblock, asked: BudgetRequest | None, acting: Acting) -> Html:
    """The form that answers a goal's open request for more budget: ``grant`` (the amount
    asked filled in) or ``decline`` — ``governor grant|decline GOAL`` from the page."""
    buttons = [_button("grant", "grant")]
    if any(c.startswith("governor decline ") for c in u.commands):
        buttons.append(_button("decline", "decline", danger=True))
    return _form(
        goal_id, acting, "grant", budget_fields(acting, "grant", asked), _buttons(*buttons)
    )


def blocker_form(
    goal_id: str, u: Unblock, acting: Acting, asked: BudgetRequest | None = None
) -> Html:
    """The form that clears one blocker from the page: an answer to its question, a
    reason to let a stopped item or planner go on (``work retry`` / ``resume``), a grant
    or decline of a request for more budget; none for a review (the pending forms) or
    what only an install or a raise clears."""
    b = u.blocker
    if b.kind == "grant":
        return grant_form(goal_id, u, asked, acting) if u.commands else Html("")
    verb = "work retry" if b.work_id is not None else "resume"
    key = f"blocker:{b.work_id or 'goal'}"
    hidden = {"work": b.work_id} if b.work_id is not None else {}
    if b.kind == "question":
        label, button = "your answer", "answer"
    elif b.kind in ("stop", "retry") or (b.kind == "precondition" and not b.reprobed):
        label, button = "what changed (the reason reaches the next prompt)", "resume"
    else:
        return Html("")
    if not u.commands:  # the core would refuse it now
        return Html("")
    return _form(
        goal_id,
        acting,
        key,
        _reason(acting, key, label, required=True),
        _buttons(_button(verb, button)),
        **hidden,
    )


def _item_verbs(item: WorkState) -> list[Html]:
    buttons = []
    if item.running:
        buttons.append(_button("work abandon", "abandon the attempt", danger=True))
    elif item.outcome == "succeeded" and not item.accepted:
        buttons.append(_button("work accept", "accept"))
    if not item.running and item.outcome not in (None, "succeeded"):
        buttons.append(_button("work retry", "retry"))
    if not item.running:
        buttons.append(_button("work cancel", "give the item up", danger=True))
    return buttons


def _items(goal_id: str, view: GoalView, acting: Acting) -> Html:
    rows = [
        el(
            "li",
            _form(
                goal_id,
                acting,
                f"item:{work_id}",
                el("strong", work_id),
                " ",
                el("span", item.spec.title, class_="title"),
                _reason(acting, f"item:{work_id}", "why (needed to retry or abandon)"),
                _buttons(*_item_verbs(item)),
                work=work_id,
            ),
            data_work=work_id,
        )
        for work_id, item in view.work.items()
        if not (item.accepted or item.cancelled)
    ]
    if not rows:
        return Html("")
    said = f"Retry, abandon or give up a work item ({len(rows)} open)"
    sent = acting.sent.get("form", "").startswith("item:")
    return _fold("act-items", said, el("ul", rows, class_="items"), unfolded=sent)


def _fold(key: str, said: str, *children: object, unfolded: bool = False) -> Html:
    """A part of the Act section, folded until a person opens it (or a form of it came
    back refused)."""
    return el(
        "details",
        el("summary", el("h3", said)),
        *children,
        id=key,
        class_="act-part",
        open=unfolded,
        data_default="open" if unfolded else "closed",
    )


def _raise(goal_id: str, view: GoalView, acting: Acting) -> Html:
    sent = acting.sent if acting.sent.get("form") == "raise" else {}

    def option(value: str, label: str, chosen: str | None) -> Html:
        return el("option", label, value=value, selected=value == chosen)

    ledgers = [option(name, name.replace("_", " "), sent.get("ledger")) for name in LEDGERS]
    items = [option("", "— (a goal-wide ledger)", sent.get("work"))] + [
        option(work_id, work_id, sent.get("work")) for work_id in view.work
    ]
    limit = void(
        "input", type="number", id="raise-to", name="to", step="any", required=True,
        value=sent.get("to", ""),
    )  # fmt: skip
    form = _form(
        goal_id,
        acting,
        "raise",
        el("label", "ledger", for_="raise-ledger"),
        el("select", ledgers, id="raise-ledger", name="ledger"),
        el("label", "work item", for_="raise-work"),
        el("select", items, id="raise-work", name="work"),
        el("label", "new limit", for_="raise-to"),
        limit,
        _reason(acting, "raise", "why", required=True),
        _buttons(_button("raise", "raise")),
    )
    return _fold("act-raise", "Raise a budget", form, unfolded=bool(sent))


def _cancel(goal_id: str, acting: Acting) -> Html:
    return _fold(
        "act-cancel",
        "Cancel the goal",
        _form(
            goal_id,
            acting,
            "cancel",
            _reason(acting, "cancel", "why"),
            el(
                "label",
                void("input", type="checkbox", name="confirm", value="yes", required=True),
                " yes, stop this goal for good",
                class_="confirm",
            ),
            _buttons(_button("cancel", "cancel the goal", danger=True)),
        ),
        unfolded=acting.sent.get("form") == "cancel",
    )


def act_section(goal_id: str, view: GoalView, decision: Decision, acting: Acting) -> Html:
    """The section of actions on a goal that has not ended."""
    head = el("h2", "Act ", el("span", f"(recorded as {acting.actor})", class_="sub"))
    if acting.csrf is None:
        how = (
            "To act from this page, open the address with the access token that "
            "governor ui printed when it started (…/?token=…); this browser has none."
        )
        return el("section", head, el("p", how, class_="none"), id="act", data_ready="false")
    if decision.status in ("succeeded", "cancelled"):
        return el(
            "section",
            head,
            el("p", f"the goal {decision.status}: nothing to do", class_="none"),
            id="act",
        )
    return el(
        "section",
        head,
        _items(goal_id, view, acting),
        _raise(goal_id, view, acting),
        _cancel(goal_id, acting),
        id="act",
        data_ready="true",
    )  # fmt: skip


def outcome(acting: Acting) -> Html:
    """What became of the last action: its error, or that it was recorded."""
    if acting.error:
        return el("p", acting.error, class_="error", id="action-error", role="alert")
    if acting.done:
        said = f"recorded: {acting.done}, by {acting.actor}"
        return el("p", said, class_="done", id="action-done", role="status")
    return Html("")
