"""SPEC §5: the policy's defaults, ranges and overrides."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from governor import MAX_UNCHARGED_REPLANS
from governor.core.policy import Policy
from governor.core.policy_input import policy_from, with_overrides
from governor.errors import PolicyError


def test_every_default_is_the_spec_default() -> None:
    p = Policy()
    assert (p.max_replans, p.max_uncharged_replans, p.max_plan_records) == (
        5,
        MAX_UNCHARGED_REPLANS,
        100,
    )
    assert (
        p.max_attempts,
        p.max_uncharged_attempts,
        p.max_continuations,
        p.max_total_attempts,
    ) == (3, 3, 3, 100)
    assert (
        p.max_work_items_per_plan,
        p.max_total_work_items,
        p.max_milestones,
        p.max_parallel_work,
    ) == (8, 25, 4, 1)  # SPEC §11.5: the default max_milestones is 4
    assert (p.upstream_backoff.initial_s, p.upstream_backoff.factor, p.upstream_backoff.max_s) == (
        30,
        2,
        900,
    )
    assert (p.auto_apply, p.accept_passing, p.retry_blocked) == (True, True, True)
    assert (p.max_runtime_s, p.max_cost_usd) == (14400, None)


BAD = {
    "an unknown field": ({"max_replan": 3}, "unknown policy field 'max_replan'"),
    "a negative budget": (
        {"max_replans": -1},
        "policy field 'max_replans': Input should be greater than or equal to 0",
    ),
    "zero attempts per item": ({"max_attempts": 0}, "policy field 'max_attempts'"),
    "a shrinking back-off": (
        {"upstream_backoff": {"factor": 0.5}},
        "policy field 'upstream_backoff.factor'",
    ),
    "a cap below the first wait": (
        {"upstream_backoff": {"initial_s": 60, "max_s": 10}},
        "max_s (10.0) must be at least initial_s (60.0)",
    ),
    "an unknown back-off field": (
        {"upstream_backoff": {"jitter": 1}},
        "unknown policy field 'upstream_backoff.jitter'",
    ),
    "a non-number": ({"max_total_attempts": "many"}, "policy field 'max_total_attempts'"),
    "an empty list": ([], "policy: a policy is a mapping of its fields, not list"),
    "false": (False, "policy: a policy is a mapping of its fields, not bool"),
    "zero": (0, "policy: a policy is a mapping of its fields, not int"),
}


@pytest.mark.parametrize(("values", "message"), BAD.values(), ids=BAD.keys())
def test_bad_policy_values_are_one_clear_error(values: object, message: str) -> None:
    """SPEC §5: a policy is its fields; anything else is refused, never read as the defaults."""
    with pytest.raises(PolicyError) as info:
        policy_from(values)  # type: ignore[arg-type]  # a goal file may hold anything
    assert message in str(info.value)


def test_no_policy_given_is_the_defaults() -> None:
    assert policy_from(None) == policy_from({}) == Policy()


def test_any_mapping_is_a_policy_and_its_milestones_follow_its_replans() -> None:
    """SPEC §11.5 and §12.1 through the API: a read-only mapping reads as a dict does."""
    assert policy_from(MappingProxyType({"max_replans": 3})).max_milestones == 2
    assert policy_from(Policy(max_replans=2)) == Policy(max_replans=2)


def test_overrides_replace_fields_and_validate_the_whole() -> None:
    p = with_overrides(Policy(), {"max_replans": 8, "upstream_backoff.max_s": 60})
    assert (p.max_replans, p.upstream_backoff.max_s) == (8, 60)
    with pytest.raises(PolicyError, match=r"unknown policy field 'auto\.apply'"):
        with_overrides(Policy(), {"auto.apply": False})


def test_the_defaults_made_at_import_are_the_validated_defaults() -> None:
    """``model_construct()`` builds the import-time defaults without building a validator
    (start-up, issue 12): each must equal the model validated from nothing."""
    from governor.core.events import GoalCreated
    from governor.core.evidence import UNKNOWN, Evidence
    from governor.core.policy import UpstreamBackoff
    from governor.core.upstream import DEFAULT_BACKOFF
    from governor.core.view import GoalView

    assert GoalCreated.model_fields["policy"].default == Policy.model_validate({})
    assert Policy.model_fields["upstream_backoff"].default == UpstreamBackoff.model_validate({})
    assert UpstreamBackoff.model_validate({}) == DEFAULT_BACKOFF
    assert Evidence.model_validate({}) == UNKNOWN
    assert GoalView().policy == Policy.model_validate({})
    assert Policy.model_validate({}).max_milestones == 4  # the before validator ran
