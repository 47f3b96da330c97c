"""Escaping: whatever an agent writes reaches the page as inert, visible, valid text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from governor.ui.markup import TEXT_LIMIT, Html, el, join, text, void


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("<script>window.__pwned=1</script>", "&lt;script&gt;window.__pwned=1&lt;/script&gt;"),
        ('<img src=x onerror="x()">', "&lt;img src=x onerror=&quot;x()&quot;&gt;"),
        ("it's & done", "it&#x27;s &amp; done"),
        ("\x1b[31mRED\x1b[0m", "\\x1b[31mRED\\x1b[0m"),
        ("bell\x07 nul\x00 del\x7f csi\x9b", "bell\\x07 nul\\x00 del\\x7f csi\\x9b"),
        ("tab\tline\nnext", "tab\tline\nnext"),
        ("windows\r\nline", "windows\nline"),
        ("lone \ud800 surrogate \udfff", "lone \ufffd surrogate \ufffd"),
        ("abc\u202etxt.exe", "abc&lt;U+202E&gt;txt.exe"),
        (None, "—"),
        (42, "42"),
    ],
    ids=[
        "a script tag is text",
        "an event handler is text",
        "quotes and ampersands are escaped",
        "ANSI colour escapes are spelled out",
        "every control character is spelled out",
        "tabs and newlines stay",
        "CRLF becomes a newline",
        "lone surrogates become U+FFFD",
        "a bidi override is named, not obeyed",
        "None is a dash",
        "numbers are text",
    ],
)
def test_text_is_escaped_and_visible(raw: object, shown: str) -> None:
    assert text(raw) == shown


def test_a_huge_string_is_cut_and_says_how_much_is_left_out() -> None:
    shown = text("x" * (TEXT_LIMIT + 1234))
    assert shown == "x" * TEXT_LIMIT + "… (1234 more characters not shown)"
    assert len(text("y" * 10, limit=4)) == len("yyyy… (6 more characters not shown)")


def test_elements_escape_text_children_and_attribute_values_but_keep_markup() -> None:
    page = el(
        "p",
        "<b>bold?</b>",
        el("code", "x<y"),
        ["a", Html("<br>")],
        None,
        title='say "hi" <now>',
        class_="note",
        data_goal="g&1",
        hidden=True,
        open=False,
    )
    assert page == (
        '<p title="say &quot;hi&quot; &lt;now&gt;" class="note" data-goal="g&amp;1" hidden>'
        "&lt;b&gt;bold?&lt;/b&gt;<code>x&lt;y</code>a<br>—</p>"
    )
    assert void("meta", charset="utf-8") == '<meta charset="utf-8">'
    assert join(["<", Html("<i>")]) == "&lt;<i>"


def test_only_known_values_can_become_children() -> None:
    with pytest.raises(TypeError, match="cannot put a dict into a page"):
        el("p", {"a": 1})


TAG = re.compile(r"</?p>")


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_no_string_can_open_a_tag_break_utf8_or_keep_a_control_character(raw: str) -> None:
    page = el("p", raw, title=raw)
    inner = TAG.sub("", page.split(">", 1)[1])
    assert "<" not in inner
    assert ">" not in inner
    page.encode("utf-8")  # strict: a lone surrogate would raise here
    assert not any(ord(c) < 0x20 and c not in "\t\n" for c in page)
    assert not any(0x7F <= ord(c) < 0xA0 for c in page)
