"""The price table shipped with governor, and the price a profile's calls get (SPEC §13.5)."""

from __future__ import annotations

import tomllib
from datetime import date
from pathlib import Path

import pytest

from governor.core.event_fields import Profile
from governor.core.prices import Price
from governor.errors import InputError
from governor.exec.prices import TABLE, call_price, parse_table, price_of, shipped_table

NAMED_TODAY = (
    "gpt-5-codex",  # codex, as the suite and docs configure it
    "claude-opus-4-8",  # claude 2.1.197's default model
    "claude-sonnet-4-5",
    "gemini-2.5-pro",
)


def test_the_table_states_its_date_and_sources_and_prices_the_models_harnesses_name() -> None:
    table = shipped_table()
    raw = tomllib.loads(TABLE.read_text(encoding="utf-8"))
    assert table.as_of == date.fromisoformat(raw["as_of"])
    assert table.sources
    assert all(s.startswith("https://") for s in table.sources)
    for model in NAMED_TODAY:
        price = table.price(model)
        assert price is not None, model
        assert price.output_per_mtok > price.input_per_mtok > 0


def test_the_table_ships_inside_the_package() -> None:
    import governor.exec

    assert TABLE.parent == Path(str(governor.exec.__file__)).parent


def test_a_dated_model_name_finds_its_family_and_an_unlisted_one_none() -> None:
    table = shipped_table()
    assert table.price("claude-sonnet-4-5-20250929") == table.price("claude-sonnet-4-5")
    assert table.price("GPT-5-Codex") == table.price("gpt-5-codex")
    assert table.price("some-model-nobody-lists") is None
    assert table.price(None) is None


def test_a_profiles_own_price_overrides_the_table() -> None:
    own = Price(input_per_mtok=0.1, output_per_mtok=0.2)
    assert price_of(Profile(harness="codex", model="gpt-5-codex", price=own)) == own
    assert price_of(Profile(harness="codex", model="gpt-5-codex")) == shipped_table().price(
        "gpt-5-codex"
    )
    assert price_of(Profile(harness="command", args=("x",))) is None


def test_codex_without_a_model_is_priced_by_the_model_its_config_selects(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('model = "gpt-5-codex"\n')
    profile = Profile(harness="codex")
    assert call_price(profile, {"CODEX_HOME": str(tmp_path)}, tmp_path) == shipped_table().price(
        "gpt-5-codex"
    )
    assert call_price(profile, {}, tmp_path) is None


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (
            'as_of = "2026-01-01"\n[models.m]\ninput_per_mtok = -1\noutput_per_mtok = 1\n',
            "models.m.input_per_mtok",
        ),
        (
            'as_of = "2026-01-01"\n[models.m]\ninput_per_mtok = nan\noutput_per_mtok = 1\n',
            "models.m.input_per_mtok",
        ),
        ("[models.m]\ninput_per_mtok = 1\noutput_per_mtok = 1\n", "not a price table"),
        ("as_of = \n", "not a price table"),
    ],
)
def test_a_broken_table_is_refused_naming_the_entry(text: str, named: str) -> None:
    with pytest.raises(InputError, match=named):
        parse_table(text)


def test_the_harness_docs_show_the_tables_date_and_every_model() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "harnesses.md").read_text()
    table = shipped_table()
    assert f"as of **{table.as_of.isoformat()}**" in docs
    for model in table.models:
        assert f"| `{model}` |" in docs, model
