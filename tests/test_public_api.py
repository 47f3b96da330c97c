"""The public API is pinned, so removing a name is a deliberate act."""

from __future__ import annotations

import governor


def test_package_exports() -> None:
    assert sorted(governor.__all__) == sorted(
        ["MAX_UNCHARGED_REPLANS", "Policy", "UpstreamUnavailable", "__version__"]
    )


def test_max_uncharged_replans_is_the_default() -> None:
    assert governor.MAX_UNCHARGED_REPLANS == 3
    assert governor.Policy().max_uncharged_replans == governor.MAX_UNCHARGED_REPLANS
