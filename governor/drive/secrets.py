"""What an operator gives governor never carries a secret of its environment (SPEC §10).

Rules:
    * The values of the variables named ``*_KEY``, ``*_TOKEN``, ``*_SECRET`` or
      ``*_PASSWORD`` in governor's own environment (``governor.exec.environment``) never
      go into a goal's history: an agent's output is redacted by the runner; a goal file
      or an operator's text that holds one is refused, one line naming the variable (not
      its value), and nothing is stored. Known key shapes are refused by the store itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import orjson

from governor.core.events import Event
from governor.core.wire.codec import encode
from governor.errors import InputError
from governor.exec.environment import is_secret_name, secret_values


def refuse_secrets(
    events: Sequence[Event], where: str, env: Mapping[str, str] | None = None
) -> list[Event]:
    """``events``, unless one holds the value of a secret variable of ``env``.

    Raises:
        InputError: naming ``where`` and the variable.
    """
    env = os.environ if env is None else env
    values = secret_values(env)
    if not values:
        return list(events)
    bodies = [encode(event) for event in events]
    for value in values:
        spelled = (value.encode(), orjson.dumps(value)[1:-1])
        if any(form in body for body in bodies for form in spelled):
            name = min(n for n, v in env.items() if v == value and is_secret_name(n))
            raise InputError(
                f"{where} holds the value of ${name}, and secrets never go into a goal's "
                f'history: remove it (an agent gets it with env = ["{name}"])'
            )
    return list(events)
