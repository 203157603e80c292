"""Normalisation changes only what is not a word, is idempotent, and is versioned."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from undercroft_core import NORMALIZE_VERSION, InvalidInput, normalise


def test_version_is_pinned() -> None:
    assert NORMALIZE_VERSION == 1


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("\ufeffhello", "hello"),
        ("a\r\nb\rc\nd", "a\nb\nc\nd"),
        ("  padded text \n\n", "padded text"),
        ("nul\x00here", "nulhere"),
        ("bell\x07 and del\x7f", "bell and del"),
        ("tabs\tstay", "tabs\tstay"),
        ("two  spaces stay", "two  spaces stay"),
        ("e\u0301 stays decomposed", "e\u0301 stays decomposed"),
        ("\ufeff \ufeffdouble", "double"),
        ("mid\ufeffword", "mid\ufeffword"),
        ("", ""),
    ],
)
def test_known_rewrites(raw: str, expected: str) -> None:
    assert normalise(raw) == expected


@given(st.text())
def test_idempotent(text: str) -> None:
    try:
        once = normalise(text)
    except InvalidInput:
        return
    assert normalise(once) == once


@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp"), blacklist_characters="\ufeff"))
)
def test_text_without_whitespace_or_controls_is_untouched(text: str) -> None:
    assert normalise(text) == text


@given(st.text())
def test_every_letter_and_digit_survives_in_order(text: str) -> None:
    try:
        result = normalise(text)
    except InvalidInput:
        return
    kept = [c for c in text if c.isalnum()]
    assert [c for c in result if c.isalnum()] == kept


def test_refusals() -> None:
    with pytest.raises(InvalidInput, match="must be a string"):
        normalise(b"bytes")
    with pytest.raises(InvalidInput, match="lone surrogate at position 1"):
        normalise("a\ud800b")
