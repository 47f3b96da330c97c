"""What a person must do about a stop no retry can fix: the sentences an error ends with.

Rules (SPEC §11.8, §12.6, §12.7):
    * A run stopped by an ``environment`` failure that a person must fix ends its error
      with one sentence the goal's reason quotes: a refused credential ("the credential
      for <profile> was refused: <remedy>"), an account that cannot pay ("the account
      behind <profile> is out of credit or quota: <remedy>"), a vendor never reached
      ("never reached <endpoint>: check the profile's base URL, the network and the
      proxy"). ``governor.workflow.run`` picks one by the rule that classified the run.
"""

from __future__ import annotations

from typing import Final

CREDENTIAL_REFUSED: Final = "was refused: "
"""The words every credential line carries (``explain`` tells a credential stop by the
classification rule, ``credential``, not by these words)."""
GENERIC_REMEDY: Final = (
    "check the key or login this profile gives its agent (the variables its env passes, "
    "or the agent CLI's own login)"
)
"""The remedy when an adapter read a 401/403 but could not say more."""


BILLING_REFUSED: Final = "is out of credit or quota: "
"""The words every billing line carries (SPEC §12.6)."""
GENERIC_BILLING_REMEDY: Final = (
    "add credit or raise the quota of the vendor account whose key this profile uses, "
    "or give it another key"
)


def billing_line(profile: str, remedy: str | None) -> str:
    """The sentence an account that cannot pay ends the run's error with (SPEC §12.6):
    "the account behind <profile> is out of credit or quota: <remedy>"."""
    return f"the account behind {profile} {BILLING_REFUSED}{remedy or GENERIC_BILLING_REMEDY}"


PLAN_MISSING: Final = "has no plan that includes this product: "
"""The words every plan line carries (SPEC §13.2)."""
GENERIC_PLAN_REMEDY: Final = (
    "upgrade the vendor plan of the account this profile uses (codex: a ChatGPT plan that "
    "includes Codex, e.g. Plus), or give the profile an API key"
)


def plan_line(profile: str) -> str:
    """The sentence a plan that does not include the product ends the run's error with
    (SPEC §13.2): "the account behind <profile> has no plan that includes this product: …"."""
    return f"the account behind {profile} {PLAN_MISSING}{GENERIC_PLAN_REMEDY}"


def never_reached_line(endpoint: str | None) -> str:
    """The sentence a vendor that was never reached ends the run's error with (SPEC §12.7)."""
    where = endpoint or "the vendor"
    return f"never reached {where}: check the profile's base URL, the network and the proxy"


def credential_line(profile: str, remedy: str | None) -> str:
    """The sentence a refused credential ends the run's error with (SPEC §11.8).

    The goal's reason quotes the error's last line, so it reads "… the credential for
    <profile> was refused: <remedy>".
    """
    return f"the credential for {profile} {CREDENTIAL_REFUSED}{remedy or GENERIC_REMEDY}"
