"""The keys of a web view that allows actions: the access token and one-time form tokens."""

from __future__ import annotations

from governor.ui.keys import FORM_TTL_S, ActionKeys, same_origin


def test_the_access_token_is_random_and_only_itself_is_admitted() -> None:
    keys, other = ActionKeys(), ActionKeys()
    assert keys.token != other.token
    assert len(keys.token) >= 40
    assert keys.admits(keys.token)
    assert not keys.admits(other.token)
    assert not keys.admits(None)
    assert not keys.admits("")
    assert not keys.admits(keys.token + "x")
    assert not keys.admits("\udc80")  # a lone surrogate from a hostile cookie is no crash


def test_a_form_token_is_good_once_for_its_goal_within_its_time() -> None:
    keys = ActionKeys()
    token = keys.form_token("g-1", 1000.0)
    assert keys.spend(token, "g-2", 1001.0) is not None  # another goal's page
    assert keys.spend(token, "g-1", 1001.0) is None
    again = keys.spend(token, "g-1", 1002.0)
    assert again is not None
    assert again.startswith("this form was already sent once")
    old = keys.form_token("g-1", 1000.0)
    late = keys.spend(old, "g-1", 1000.0 + FORM_TTL_S)
    assert late is not None
    assert late.startswith("the page is too old")
    assert ActionKeys().spend(keys.form_token("g-1", 0), "g-1", 1.0) is not None  # a restart


def test_tokens_that_are_no_tokens_are_refused() -> None:
    keys = ActionKeys()
    for token in (
        None,
        "",
        "a.b",
        "a.b.c.d",
        "a.x.c",
        "a.99999999999999.c",
        "\udc80.1.x",
        "a.1.é\udc80",
    ):
        problem = keys.spend(token, "g", 0.0)
        assert problem is not None, token


def test_spent_tokens_are_forgotten_once_they_would_have_expired() -> None:
    keys = ActionKeys()
    for n in range(5):
        assert keys.spend(keys.form_token("g", n), "g", n + 1.0) is None
    keys.spend(keys.form_token("g", 10 * FORM_TTL_S), "g", 10 * FORM_TTL_S + 1)
    assert len(keys._spent) == 1


def test_the_origin_must_be_this_server_as_the_request_named_it() -> None:
    assert same_origin("http://127.0.0.1:8765", "127.0.0.1:8765", "http")
    assert same_origin("HTTP://LOCALHOST:8765", "localhost:8765", "http")
    assert not same_origin("http://127.0.0.1:8765", "127.0.0.1:8765", "https")
    assert not same_origin("http://127.0.0.1:9999", "127.0.0.1:8765", "http")
    assert not same_origin("null", "127.0.0.1:8765", "http")
    assert not same_origin(None, "127.0.0.1:8765", "http")
