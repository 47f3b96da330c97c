"""Acting from the web view (``--allow-actions``): the checks on a POST, and running its verb.

Rules (docs/decisions/0019-acting-from-the-web-view.md):
    * A POST is refused with 403, and nothing recorded, unless (1) it names this server
      as its one ``Origin`` and the browser does not call it cross-site
      (``Sec-Fetch-Site``), (2) it carries the access token's cookie, and (3) it spends a
      form token of that goal's page. The first two fail as a short text; a spent, stale
      or foreign form token shows the goal's page again with the error and the form
      filled in as it was sent.
    * The form is ``application/x-www-form-urlencoded``, at most ``MOST_BYTES``, each
      field once. Its verb is a name of ``governor.core.commands``, run by
      ``governor.drive.goals.govern`` exactly as the CLI runs it, by the view's actor; a
      refusal is the CLI's one line (``error: …``) on the page, and nothing is recorded.
    * Like every operator verb, an action never takes the goal's lease: it appends on an
      expected seq (rebuilding on a conflict), and a runner holding the lease sees the
      new events at its next append. A goal Temporal drives gets the verb as an update
      of its workflow (its one writer), exactly as from the governor command: the
      workflow's validator refuses what the CLI refuses.
    * After an action the browser is sent to the goal's page (303), which says what was
      recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, Final, cast
from urllib.parse import parse_qsl, quote, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from governor.analysis.runnable import accepted, go_on
from governor.clock import Clock
from governor.core.commands import OperatorVerb, VerbName
from governor.core.policy import LedgerName
from governor.core.rules.decide import decide
from governor.drive import goals
from governor.errors import (
    CommandRefusedError,
    ConcurrencyConflictError,
    GovernorError,
    InputError,
    LeaseError,
    NotFoundError,
    UnavailableError,
)
from governor.store.base import EventStore
from governor.store.url import one_line
from governor.temporal.names import driving_here, workflow_id_of
from governor.ui.forms import Acting
from governor.ui.keys import NAME, same_origin

if TYPE_CHECKING:
    from governor.ui.settings import UiSettings

MOST_BYTES: Final = 64 * 1024
"""The largest form taken (an answer is at most 2,000 characters)."""
FIELDS: Final = (
    "csrf", "form", "verb", "reason", "plan", "work", "ledger", "to", "confirm",
    "usd", "attempts", "expires",
)  # fmt: skip
"""The fields a form may send; others are ignored."""
FORM_TYPE: Final = "application/x-www-form-urlencoded"

BUDGET_VERBS: Final = ("grant", "decline")
"""A person's answer to a request for more budget (``governor grant|decline``), run by
``governor.drive.grants`` as the CLI runs it: not an operator verb of the core's table (a
pool's grant is recorded on the pool too)."""
GOAL_VERBS: Final = (*goals.VERBS, *BUDGET_VERBS)
"""What a goal page's forms do: the operator verbs and the answers to a request."""

Render = Callable[[Request, "Acting | None", int], Response]
"""Renders a goal's page for a request, with its forms' state, at a status code."""


def actor_of(request: Request, settings: UiSettings) -> str | None:
    """Who acts with this request (``ui:NAME``), or None when it may not act: the name
    the trusted proxy's header gives, else the person whose token the cookie holds
    (``--users``), else — with the one token made at start — the server's ``--actor``."""
    if settings.actor is None or settings.keys is None:
        return None
    if settings.trusted_header is not None:
        values = request.headers.getlist(settings.trusted_header)
        named = len(values) == 1 and NAME.fullmatch(values[0].strip())
        return f"ui:{values[0].strip()}" if named else None
    presented = request.cookies.get(settings.cookie)
    if settings.keys.people:
        name = settings.keys.person(presented)
        return f"ui:{name}" if name is not None else None
    return settings.actor if settings.keys.admits(presented) else None


def acting(
    request: Request, settings: UiSettings, verbs: Collection[str] = GOAL_VERBS
) -> Acting | None:
    """The forms' state of a page requested with GET (None: read-only): a goal page's
    (every verb), or a pool page's (``verbs=BUDGET_VERBS``: only its grant form)."""
    if settings.actor is None or settings.keys is None:
        return None
    actor = actor_of(request, settings)
    done = request.query_params.get("done")
    return Acting(
        actor or settings.actor,
        csrf=_token(request, settings) if actor else None,
        done=done if done in verbs else None,
    )


def form_key(request: Request) -> str:
    """What a page's form tokens are made for: the goal, or ``pool:NAME`` (no goal id
    holds a ``:``, so a pool's token never spends on a goal's page, nor the reverse)."""
    if "goal_id" in request.path_params:
        return str(request.path_params["goal_id"])
    return f"pool:{request.path_params['name']}"


def _token(request: Request, settings: UiSettings) -> str:
    assert settings.keys is not None
    now_s = settings.clock().timestamp()
    return settings.keys.form_token(form_key(request), now_s)


def _refused(request: Request, settings: UiSettings) -> Response | None:
    """Why a POST may not act at all (403), or None."""
    assert settings.keys is not None
    origins = request.headers.getlist("origin")
    scheme = "https" if settings.tls else "http"
    site = request.headers.get("sec-fetch-site")
    host = request.headers.get("host", "")
    if (
        len(origins) != 1
        or not same_origin(origins[0], host, scheme)
        or site not in (None, "same-origin")
    ):
        return PlainTextResponse(
            "refused: a form is taken only from this server's own page (Origin); "
            "nothing was recorded\n",
            403,
        )
    if settings.trusted_header is not None and actor_of(request, settings) is None:
        return PlainTextResponse(
            f"refused: the proxy in front named nobody ({settings.trusted_header}); "
            "nothing was recorded\n",
            403,
        )
    if settings.trusted_header is None and actor_of(request, settings) is None:
        return PlainTextResponse(
            "refused: acting needs the access token; open the address governor ui printed "
            "at start (…/?token=…) once in this browser; nothing was recorded\n",
            403,
        )
    return None


async def _fields(request: Request) -> dict[str, str] | Response:
    """The form's fields, or the response refusing its body."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != FORM_TYPE:
        return PlainTextResponse(f"refused: a form is sent as {FORM_TYPE}\n", 415)
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MOST_BYTES:
            return PlainTextResponse(f"refused: a form is at most {MOST_BYTES} bytes\n", 413)
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=40)
    except (UnicodeDecodeError, ValueError):
        return PlainTextResponse("refused: the form is not valid UTF-8 form data\n", 400)
    fields = [(k, v.replace("\r\n", "\n")) for k, v in pairs if k in FIELDS]
    if len({k for k, _ in fields}) != len(fields):
        return PlainTextResponse("refused: a field was sent twice\n", 400)
    return dict(fields)


def verb_of(fields: Mapping[str, str], actor: str) -> OperatorVerb:
    """The operator verb a form names.

    Raises:
        InputError: an unknown verb, or a cancellation not confirmed.
    """
    name = fields.get("verb", "")
    if name not in goals.VERBS:
        raise InputError(f"unknown action {name!r}; one of {', '.join(goals.VERBS)}")
    if name == "cancel" and fields.get("confirm") != "yes":
        raise InputError("cancelling a goal needs its box ticked: it stops for good")
    ledger = cast("LedgerName | None", fields.get("ledger") or None)
    return OperatorVerb(
        cast("VerbName", name),
        actor,
        reason=fields.get("reason") or None,
        plan=fields.get("plan") or None,
        item=fields.get("work") or None,
        ledger=ledger,
        to=goals.new_limit(ledger, fields.get("to") or "") if name == "raise" else None,
        work=fields.get("work") or None,
    )


def govern(store: EventStore, goal_id: str, verb: OperatorVerb, clock: Clock) -> None:
    """Record the verb as the CLI does; a goal Temporal drives gets it through its
    workflow's update, as from the CLI (its workflow is its one writer)."""
    driver = driving_here(store, goal_id)
    if driver is None:
        goals.govern(store, goal_id, verb, clock=clock, reason_is="the reason")
        return
    goals.refuse_secrets_in(store, goal_id, verb)
    try:
        from governor.temporal import client  # noqa: PLC0415 - the temporal extra
    except ImportError as exc:
        raise UnavailableError(
            f"Temporal drives this goal ({driver.describe()}) and the temporal extra is not "
            f"installed here ({exc.name or exc}): act with the governor command",
            what="the temporal extra",
        ) from None
    workflow = workflow_id_of(store, goal_id)
    asyncio.run(client.send_verb(driver, goal_id, workflow, verb))  # a threadpool thread


def answer_budget(
    store: EventStore,
    target: str,
    fields: Mapping[str, str],
    actor: str,
    clock: Clock,
    *,
    pool: bool = False,
) -> list[str]:
    """``grant`` or ``decline`` from a form, of a goal's open request (or of a pool: every
    goal waiting on it), as ``governor grant|decline`` records it; the goals answered.

    Raises:
        InputError: no reason, or an amount the CLI would refuse.
        CommandRefusedError, NotFoundError: as the command refuses.
    """
    from governor.drive import grants  # noqa: PLC0415 - only a budget answer needs it

    reason = fields.get("reason", "").strip()
    if not reason:
        raise InputError("a grant or a decline needs its reason (--reason)")

    def governed(goal_id: str, verb: OperatorVerb) -> None:  # through Temporal, if it drives
        govern(store, goal_id, verb, clock)

    if fields.get("verb") == "decline":
        decline = grants.decline_pool if pool else grants.decline_goal
        return decline(store, target, grants.Answer(reason, actor), clock=clock, govern=governed)
    usd, attempts, expires_s = grants.amounts(
        fields.get("usd", ""), fields.get("attempts", ""), fields.get("expires", "")
    )
    grant = grants.grant_to_pool if pool else grants.grant_goal
    answer = grants.Answer(reason, actor, usd=usd, attempts=attempts, expires_s=expires_s)
    return grant(store, target, answer, clock=clock, govern=governed)


def _status(exc: GovernorError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, CommandRefusedError | ConcurrencyConflictError | LeaseError):
        return 409
    return 400 if isinstance(exc, InputError) else 503


def endpoint(store: EventStore, settings: UiSettings, render: Render) -> Callable[[Request], Any]:
    """The POST endpoint of ``/goals/GOAL/act``."""
    keys, actor = settings.keys, settings.actor
    assert keys is not None
    assert actor is not None

    async def again(
        request: Request, fields: Mapping[str, str], error: str, status: int
    ) -> Response:
        who = actor_of(request, settings) or actor
        shown = Acting(who, _token(request, settings), error=error, sent=dict(fields))
        return await run_in_threadpool(render, request, shown, status)

    async def act(request: Request) -> Response:
        refused = _refused(request, settings)
        if refused is not None:
            return refused
        fields = await _fields(request)
        if isinstance(fields, Response):
            return fields
        goal_id = request.path_params["goal_id"]
        problem = keys.spend(fields.get("csrf"), goal_id, settings.clock().timestamp())
        if problem is not None:
            return await again(request, fields, f"error: {problem}", 403)
        who = actor_of(request, settings) or actor
        name = fields.get("verb", "")
        try:
            if name in BUDGET_VERBS:
                await run_in_threadpool(answer_budget, store, goal_id, fields, who, settings.clock)
            else:
                verb = verb_of(fields, who)
                await run_in_threadpool(govern, store, goal_id, verb, settings.clock)
        except GovernorError as exc:
            return await again(request, fields, one_line(f"error: {exc}"), _status(exc))
        done = f"/goals/{quote(goal_id, safe='')}?done={quote(name)}"
        return RedirectResponse(done, status_code=303)

    return act


def pool_endpoint(
    store: EventStore, settings: UiSettings, render: Render
) -> Callable[[Request], Any]:
    """The POST endpoint of ``/pools/NAME/act``: ``grant`` to the pool or ``decline``
    every request waiting on it, as ``governor grant|decline POOL`` does; the same checks
    as a goal's form (origin, access token, a form token of that pool's page)."""
    keys, actor = settings.keys, settings.actor
    assert keys is not None
    assert actor is not None

    async def act(request: Request) -> Response:
        refused = _refused(request, settings)
        if refused is not None:
            return refused
        fields = await _fields(request)
        if isinstance(fields, Response):
            return fields
        name = request.path_params["name"]
        who = actor_of(request, settings) or actor
        problem = keys.spend(fields.get("csrf"), form_key(request), settings.clock().timestamp())
        error, status = (f"error: {problem}", 403) if problem is not None else ("", 200)
        verb = fields.get("verb", "")
        if not error and verb not in BUDGET_VERBS:
            error, status = f"error: unknown action {verb!r}; one of grant, decline", 400
        if not error:
            try:
                moved = await run_in_threadpool(
                    answer_budget, store, name, fields, who, settings.clock, pool=True
                )
            except GovernorError as exc:
                error, status = one_line(f"error: {exc}"), _status(exc)
        if error:
            shown = Acting(who, _token(request, settings), error=error, sent=dict(fields))
            return await run_in_threadpool(render, request, shown, status)
        done = f"/pools/{quote(name, safe='')}?" + urlencode({"done": verb, "n": len(moved)})
        return RedirectResponse(done, status_code=303)

    return act


BULK: Final = "*bulk*"
"""The form tokens of the list's bulk form are made for this name (no goal can have it)."""
BULK_VERBS: Final = ("cancel", "resume", "retry")
"""The verbs the list's bulk form may apply to every goal ticked."""
MOST_GOALS: Final = 200
"""The most goals one bulk action takes."""


def retry_all(
    store: EventStore, goal_id: str, fields: Mapping[str, str], actor: str, clock: Clock
) -> None:
    """``work retry`` of every blocked item of the goal that the core would let go on (as
    the advice offers it: ``governor.analysis.runnable.go_on``), with the form's reason,
    each recorded as the CLI's would be. A question needs its own answer and a review
    its verdict: those are left to the goal's page.

    Raises:
        CommandRefusedError: no item of the goal waits for a retry.
    """
    view = goals.load(store, goal_id)
    at = clock()
    found = [
        d.work_id
        for d in decide(view, at).items
        if d.status == "blocked"
        and d.blocked_on != "decision"  # a question: its answer is its own
        and accepted(go_on(goal_id, d.work_id), view, at)
    ]
    if not found:
        raise CommandRefusedError(
            "no item of it waits for a retry (answer or review it on its page)"
        )
    for work_id in found:
        verb = verb_of({**fields, "verb": "work retry", "work": work_id}, actor)
        govern(store, goal_id, verb, clock)


def bulk_token(request: Request, settings: UiSettings) -> str | None:
    """A form token for the list's bulk form, when this request may act (None: not)."""
    if settings.keys is None or actor_of(request, settings) is None:
        return None
    return settings.keys.form_token(BULK, settings.clock().timestamp())


async def _bulk_fields(request: Request) -> tuple[dict[str, str], list[str]] | Response:
    """The bulk form's fields (each once) and the goals ticked, or the refusal."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != FORM_TYPE:
        return PlainTextResponse(f"refused: a form is sent as {FORM_TYPE}\n", 415)
    body = await request.body()
    if len(body) > MOST_BYTES:
        return PlainTextResponse(f"refused: a form is at most {MOST_BYTES} bytes\n", 413)
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=250)
    except (UnicodeDecodeError, ValueError):
        return PlainTextResponse("refused: the form is not valid UTF-8 form data\n", 400)
    goal_ids = [v for k, v in pairs if k == "goal"]
    fields = [(k, v.replace("\r\n", "\n")) for k, v in pairs if k in FIELDS]
    if len({k for k, _ in fields}) != len(fields) or len(set(goal_ids)) != len(goal_ids):
        return PlainTextResponse("refused: a field was sent twice\n", 400)
    return dict(fields), goal_ids


def bulk_endpoint(store: EventStore, settings: UiSettings) -> Callable[[Request], Any]:
    """The POST endpoint of ``/bulk``: one verb on every goal ticked, after one
    confirmation; each goal's verb is the CLI's, refused for that goal alone."""
    keys = settings.keys
    assert keys is not None

    async def bulk(request: Request) -> Response:
        refused = _refused(request, settings)
        if refused is not None:
            return refused
        got = await _bulk_fields(request)
        if isinstance(got, Response):
            return got
        fields, goal_ids = got
        problem = keys.spend(fields.get("csrf"), BULK, settings.clock().timestamp())
        name = fields.get("verb", "")
        if problem is None and name not in BULK_VERBS:
            problem = f"unknown action {name!r}; one of {', '.join(BULK_VERBS)}"
        if problem is None and fields.get("confirm") != "yes":
            problem = "an action on many goals needs its box ticked"
        if problem is None and not 0 < len(goal_ids) <= MOST_GOALS:
            problem = f"tick from 1 to {MOST_GOALS} goals"
        if problem is not None:
            return RedirectResponse("/?" + urlencode({"error": problem}), status_code=303)
        who = actor_of(request, settings) or ""
        failed: list[str] = []
        for goal_id in goal_ids:
            try:
                if name == "retry":
                    await run_in_threadpool(retry_all, store, goal_id, fields, who, settings.clock)
                else:
                    verb = verb_of(fields, who)
                    await run_in_threadpool(govern, store, goal_id, verb, settings.clock)
            except GovernorError as exc:
                failed.append(one_line(f"{goal_id}: {exc}"))
        done = {"done": name, "n": str(len(goal_ids) - len(failed))}
        if failed:
            done["error"] = "; ".join(failed)[:500]
        return RedirectResponse("/?" + urlencode(done), status_code=303)

    return bulk
