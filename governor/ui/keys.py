"""The keys of a web view that allows actions: the access token, and one-time form tokens.

Rules (docs/decisions/0019-acting-from-the-web-view.md):
    * The access token is random, made at start and printed once (as Jupyter does); a
      browser shows it once in the token link and then holds it in an HttpOnly,
      SameSite=Strict cookie. It is never written to a log or put in a page.
    * Every page that offers forms carries a form token (CSRF): a random nonce, the time
      it was made and the goal it is for, signed with a key that lives only in this
      process. A token is good for one action on that goal, within ``FORM_TTL_S``: the
      first use spends it, so a replayed form is refused.
    * Only the spent nonces are kept, each until its token would have expired anyway;
      the tokens handed out are not (a page refreshing every two seconds costs nothing).
    * The time is an argument; comparisons of secrets take constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from governor.errors import InputError

FORM_TTL_S: Final = 12 * 3600.0
"""How long a page's form token stays good: a page left open over a working day."""
MOST_SPENT: Final = 100_000
"""Spent tokens kept at most (past it, actions wait until older ones expire)."""


NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
"""A person's name as recorded (``ui:NAME``): from a users file or a trusted header."""
SHORTEST_TOKEN: Final = 16
"""The shortest token a users file may give a person."""


def read_users(path: Path) -> dict[str, str]:
    """A users file (``--users``): one ``NAME TOKEN`` a line, ``#`` comments and blank lines
    ignored; each name and each token once. Returns name -> token.

    Raises:
        InputError: naming the line (never the token) and what is wrong with it.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--users {path}: cannot be read ({type(exc).__name__})") from None
    people: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        where = f"--users {path}, line {number}"
        if len(words) != 2 or not NAME.fullmatch(words[0]):
            raise InputError(f"{where}: expected NAME TOKEN (a name of letters, digits, . _ @ -)")
        name, token = words
        if len(token) < SHORTEST_TOKEN:
            raise InputError(f"{where}: {name}'s token is shorter than {SHORTEST_TOKEN} characters")
        if name in people or token in people.values():
            raise InputError(f"{where}: {name} or its token is given twice")
        people[name] = token
    if not people:
        raise InputError(f"--users {path}: names nobody")
    return people


class ActionKeys:
    """The access tokens and the form tokens of one ``governor ui --allow-actions``:
    one token made at start, or one per person (``people``, from ``--users``). Thread-safe."""

    def __init__(self, token: str | None = None, people: Mapping[str, str] | None = None) -> None:
        self.people = dict(people or {})
        """Each person's name and token (empty: one token for whoever holds it)."""
        self.token = token or secrets.token_urlsafe(32)
        self._key = secrets.token_bytes(32)
        self._spent: dict[str, float] = {}
        self._lock = threading.Lock()

    def admits(self, presented: str | None) -> bool:
        """Whether ``presented`` is an access token (a person's, with ``people``)."""
        if self.people:
            return self.person(presented) is not None
        return presented is not None and hmac.compare_digest(
            presented.encode("utf-8", "surrogatepass"), self.token.encode()
        )

    def person(self, presented: str | None) -> str | None:
        """The name of the person whose token ``presented`` is (None: nobody's)."""
        if presented is None:
            return None
        given = presented.encode("utf-8", "surrogatepass")
        found = None
        for name, token in self.people.items():  # every token compared: constant time
            if hmac.compare_digest(given, token.encode()):
                found = name
        return found

    def _mac(self, goal_id: str, nonce: str, issued: int) -> str:
        message = f"{goal_id}\n{nonce}\n{issued}".encode("utf-8", "surrogatepass")
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()[:32]

    def form_token(self, goal_id: str, now_s: float) -> str:
        """A new one-time token for the forms of ``goal_id``'s page."""
        nonce, issued = secrets.token_urlsafe(16), int(now_s)
        return f"{nonce}.{issued}.{self._mac(goal_id, nonce, issued)}"

    def spend(self, token: str | None, goal_id: str, now_s: float) -> str | None:
        """Spend a form token sent for ``goal_id``; None when it was good, else what is wrong."""
        nonce, issued, mac = (
            (token or "").split(".") if (token or "").count(".") == 2 else ("", "", "")
        )
        if not (nonce and issued.isdigit() and len(issued) < 12):
            return "the form carries no valid form token: reload the page and send it again"
        expected = self._mac(goal_id, nonce, int(issued)).encode()
        if not hmac.compare_digest(mac.encode("utf-8", "surrogatepass"), expected):
            return "the form token is not this server's, or not for this goal: reload the page"
        expires = int(issued) + FORM_TTL_S
        if expires <= now_s:
            return "the page is too old: reload it and send the form again"
        with self._lock:
            self._spent = {n: t for n, t in self._spent.items() if t > now_s}
            if nonce in self._spent:
                return (
                    "this form was already sent once; nothing more was recorded (reload the page)"
                )
            if len(self._spent) >= MOST_SPENT:
                return "too many actions in a short time; try again later"
            self._spent[nonce] = expires
        return None


def same_origin(origin: str | None, host: str, scheme: str) -> bool:
    """Whether a request's ``Origin`` is this server as the request named it (``Host``)."""
    return origin is not None and origin.lower() == f"{scheme}://{host}".lower()
