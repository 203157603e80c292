"""The tokenizer: normalisation, offsets, scripts, splitting at script changes."""

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st
from undercroft_core.language import normalize_term, script_of, terms, tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Der Hund LÄUFT", [("der", "latin"), ("hund", "latin"), ("läuft", "latin")]),
        ("Straße", [("strasse", "latin")]),
        ("ΟΔΟΣ δρόμος", [("οδοσ", "greek"), ("δρόμοσ", "greek")]),
        ("كِتَابٌ أحمد", [("كتاب", "arabic"), ("احمد", "arabic")]),
        ("٢٠٢٣ ๒๐๒๖ 2024", [("2023", "number"), ("2026", "number"), ("2024", "number")]),
        ("бумаги", [("бумаги", "cyrillic")]),
        ("학교에서", [("학교에서", "hangul")]),
        ("სახლში", [("სახლში", "georgian")]),
        ("लड़कों", [("लड़कों", "devanagari")]),
        ("東京都", [("東京", "han"), ("京都", "han")]),
        ("猫", [("猫", "han")]),
    ],
)
def test_tokens_are_normalised_with_their_script(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(t.text, t.script) for t in tokenize(text)] == expected


def test_a_script_change_splits_a_word() -> None:
    # Latin "a" followed by Cyrillic "а": a homoglyph mix never forms one token.
    assert [(t.text, t.script) for t in tokenize("pаypal")] == [("p", "latin"), ("а", "cyrillic"), ("ypal", "latin")]


def test_offsets_point_at_the_surface_form() -> None:
    text = "Hello, Wörld — كِتَاب!"
    for token in tokenize(text):
        assert normalize_term(text[token.start : token.end], token.script) == token.text


def test_decomposed_input_reads_as_composed() -> None:
    decomposed = unicodedata.normalize("NFD", "Kinder über Häuser")
    assert terms(decomposed) == ["kinder", "über", "häuser"]


def test_punctuation_and_empty_text_yield_nothing() -> None:
    assert tokenize("") == []
    assert tokenize(" ,.;— !? ") == []


def test_script_of() -> None:
    assert script_of("Kind") == "latin"
    assert script_of("...") == "other"
    assert script_of("Ωμέγα") == "greek"


@given(st.text(max_size=200))
def test_tokens_never_overlap_outside_han_and_stay_in_bounds(text: str) -> None:
    previous_end = 0
    for token in tokenize(text):
        assert 0 <= token.start < token.end <= len(text)
        assert token.text
        if token.script != "han":
            assert token.start >= previous_end
            previous_end = token.end
