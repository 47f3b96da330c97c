"""Who acts when nobody says: the one default actor of operator commands.

Its own module, importing nothing of governor, so that every command can name its
actor without importing the driver (start-up, issue 12).
"""

from __future__ import annotations

import getpass


def default_actor() -> str:
    """Who an operator is when nobody says: ``operator:<login name>``."""
    try:
        return f"operator:{getpass.getuser()}"
    except (KeyError, OSError):
        return "operator:unknown"
