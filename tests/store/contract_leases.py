"""The store contract, part 2: leases, takeovers and the fencing of appends (SPEC §8)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from governor.errors import LeaseError
from tests.store.streams import Backend, resumed, story


class LeaseCases(Backend):
    # --- leases ------------------------------------------------------------------------

    def test_a_free_lease_is_granted_with_token_one(self, store, clock):
        lease = store.acquire_lease("g1", "runner-a", ttl_s=30)
        assert (lease.goal_id, lease.holder, lease.token) == ("g1", "runner-a", 1)
        assert lease.expires_at == clock() + timedelta(seconds=30)
        assert store.current_lease("g1") == lease
        assert store.current_lease("g2") is None

    def test_a_held_lease_is_refused_naming_the_holder_and_expiry(self, store):
        store.acquire_lease("g1", "runner-a", ttl_s=30)
        for holder in ("runner-b", "runner-a"):
            with pytest.raises(
                LeaseError, match=r"held by runner-a until 2026-01-01T00:00:30Z"
            ) as caught:
                store.acquire_lease("g1", holder, ttl_s=30)
            assert caught.value.holder == "runner-a"

    def test_renewal_extends_the_lease(self, store, clock):
        lease = store.acquire_lease("g1", "runner-a", ttl_s=30)
        clock.advance(20)
        renewed = store.renew_lease(lease, ttl_s=30)
        assert renewed.token == lease.token
        assert renewed.expires_at == clock() + timedelta(seconds=30)
        clock.advance(20)
        with pytest.raises(LeaseError):
            store.acquire_lease("g1", "runner-b", ttl_s=30)

    def test_an_expired_lease_is_taken_over_with_a_higher_token(self, store, clock):
        old = store.acquire_lease("g1", "runner-a", ttl_s=30)
        clock.advance(30)
        new = store.acquire_lease("g1", "runner-b", ttl_s=30)
        assert new.token > old.token
        assert store.current_lease("g1") == new
        with pytest.raises(LeaseError, match="runner-b took it over") as caught:
            store.renew_lease(old, ttl_s=30)
        assert caught.value.holder == "runner-b"
        store.release_lease(old)  # a no-op: it is no longer the current lease
        assert store.current_lease("g1") == new

    def test_an_expired_lease_not_taken_over_still_fences_and_renews(self, store, clock):
        events = self.seed(store)
        lease = store.acquire_lease("g1", "runner-a", ttl_s=30)
        clock.advance(60)
        n = len(events)
        assert store.append("g1", [resumed("g1", n + 1)], expected_seq=n, lease=lease) == n + 1
        assert store.renew_lease(lease, ttl_s=30).expires_at == clock() + timedelta(seconds=30)

    def test_release_frees_the_lease_and_tokens_keep_rising(self, store):
        tokens = []
        for holder in ("a", "b", "a", "c"):
            lease = store.acquire_lease("g1", holder, ttl_s=30)
            tokens.append(lease.token)
            store.release_lease(lease)
            assert store.current_lease("g1") is None
        assert tokens == [1, 2, 3, 4]
        with pytest.raises(LeaseError, match="released"):
            store.renew_lease(lease, ttl_s=30)

    def test_leases_need_a_positive_ttl_and_a_holder(self, store):
        with pytest.raises(ValueError, match="ttl_s"):
            store.acquire_lease("g1", "a", ttl_s=0)
        with pytest.raises(ValueError, match="holder"):
            store.acquire_lease("g1", "", ttl_s=1)

    # --- fencing -------------------------------------------------------------------------

    def test_an_append_under_the_current_lease_is_accepted(self, store):
        lease = store.acquire_lease("g1", "runner-a", ttl_s=30)
        assert store.append("g1", story().events, expected_seq=0, lease=lease) == 9

    def test_a_fenced_append_after_takeover_is_refused_and_writes_nothing(self, store, clock):
        events = self.seed(store)
        n = len(events)
        zombie = store.acquire_lease("g1", "runner-a", ttl_s=30)
        clock.advance(31)
        successor = store.acquire_lease("g1", "runner-b", ttl_s=30)
        before = store.goals()
        with pytest.raises(
            LeaseError,
            match=r"runner-a \(token 1\) is no longer current: runner-b took it over with token 2; nothing was written",
        ) as caught:
            store.append("g1", [resumed("g1", n + 1)], expected_seq=n, lease=zombie)
        assert caught.value.goal_id == "g1"
        assert caught.value.holder == "runner-b"
        assert store.last_seq("g1") == n
        assert store.goals() == before
        assert store.append("g1", [resumed("g1", n + 1)], expected_seq=n, lease=successor) == n + 1

    def test_an_append_under_a_released_lease_is_refused(self, store):
        events = self.seed(store)
        lease = store.acquire_lease("g1", "runner-a", ttl_s=30)
        store.release_lease(lease)
        with pytest.raises(LeaseError, match="released"):
            store.append(
                "g1", [resumed("g1", len(events) + 1)], expected_seq=len(events), lease=lease
            )
        assert store.last_seq("g1") == len(events)

    def test_a_lease_less_append_works_while_someone_holds_the_lease(self, store):
        events = self.seed(store)
        store.acquire_lease("g1", "runner-a", ttl_s=30)
        n = len(events)
        assert store.append("g1", [resumed("g1", n + 1, "operator")], expected_seq=n) == n + 1

    def test_a_lease_of_another_goal_is_refused(self, store):
        lease = store.acquire_lease("g2", "runner-a", ttl_s=30)
        with pytest.raises(ValueError, match="lease"):
            store.append("g1", story().events, expected_seq=0, lease=lease)
