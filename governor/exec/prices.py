"""The price table shipped with governor, and the price that applies to a profile.

Rules (SPEC §13.5; docs/harnesses.md "What a call costs"):
    * The table is ``prices.toml`` beside this module (it ships in the wheel): its
      ``as_of`` date, its sources and one ``[models."<name>"]`` entry per model, each a
      ``governor.core.prices.Price``. It is read once per process; a table that does not
      parse or validate is a bug of the release and raises ``InputError`` naming the entry.
    * A profile's price is its own ``price`` when it sets one; else the table's entry for
      its model, looked up by the name as given (lower-cased), then by its family (the name
      without a trailing date or ``-latest``: ``claude-sonnet-4-5-20250929`` ->
      ``claude-sonnet-4-5``) — the profile's ``model``, else the one its CLI would use
      (codex: its ``config.toml``; claude: ``ANTHROPIC_MODEL``); else none — its usage
      then has no priced cost.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Final

from pydantic import ValidationError

from governor.core.event_fields import Profile
from governor.core.prices import Price
from governor.core.upstream import model_family
from governor.errors import InputError
from governor.exec.endpoints import upstream_of

TABLE: Final = Path(__file__).with_name("prices.toml")


@dataclass(frozen=True, slots=True)
class PriceTable:
    """The shipped table: its date, its sources, and a price per model name."""

    as_of: date
    sources: tuple[str, ...]
    models: dict[str, Price]

    def price(self, model: str | None) -> Price | None:
        """The entry for ``model``: by its name, then by its family; None when unlisted."""
        if not model or not model.strip():
            return None
        name = model.strip().lower()
        return self.models.get(name) or self.models.get(model_family(name))


def parse_table(text: str, origin: str = "prices.toml") -> PriceTable:
    """A price table from its TOML text.

    Raises:
        InputError: it does not parse, or an entry is not a valid price (named).
    """
    try:
        data = tomllib.loads(text)
        as_of = date.fromisoformat(str(data["as_of"]))
        sources = tuple(str(s) for s in data.get("sources", ()))
        entries = data["models"]
    except (tomllib.TOMLDecodeError, KeyError, ValueError, TypeError) as exc:
        raise InputError(f"{origin}: not a price table ({exc})") from None
    models: dict[str, Price] = {}
    for name, entry in entries.items():
        try:
            models[str(name).lower()] = Price.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            field = ".".join(str(p) for p in first["loc"])
            raise InputError(f"{origin}: models.{name}.{field}: {first['msg']}") from None
    return PriceTable(as_of, sources, models)


@functools.cache
def shipped_table() -> PriceTable:
    """The table shipped with this release (read once)."""
    return parse_table(TABLE.read_text(encoding="utf-8"), str(TABLE.name))


def price_of(
    profile: Profile, model: str | None = None, table: PriceTable | None = None
) -> Price | None:
    """The price that applies to ``profile`` (see the module rules); ``model`` is the model
    its CLI uses when the profile names none (codex's ``config.toml``, ``ANTHROPIC_MODEL``)."""
    if profile.price is not None:
        return profile.price
    return (table or shipped_table()).price(profile.model or model)


def call_price(profile: Profile, env: Mapping[str, str], base_dir: Path) -> Price | None:
    """The price of a call of ``profile`` run with the source environment ``env``: the
    model is the profile's, else the one its CLI would use (``upstream_of``)."""
    if profile.price is not None:
        return profile.price
    family = upstream_of(profile, env, base_dir).model_family
    return price_of(profile, None if family == "default" else family)
