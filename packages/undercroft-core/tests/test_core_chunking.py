"""The chunker never changes a byte: chunks are exact substrings, in order, covering the input."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from undercroft_core import CHUNK_CHARS, InvalidInput, chunk, normalise, render_transcript, render_turn


def _check_cover(text: str, target: int) -> None:
    chunks = chunk(text, target=target)
    position = 0
    for index, piece in enumerate(chunks):
        assert piece.index == index
        assert text[piece.start : piece.end] == piece.text
        assert piece.text and piece.text == piece.text.strip()
        assert len(piece.text) <= target
        assert piece.start >= position
        assert text[position : piece.start].strip() == ""
        position = piece.end
    assert text[position:].strip() == ""


words = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=3000)


@settings(max_examples=300, deadline=None)
@given(words, st.integers(min_value=32, max_value=900))
def test_chunks_are_exact_substrings_covering_the_input(text: str, target: int) -> None:
    _check_cover(text, target)


prose = st.lists(
    st.sampled_from(["alpha", "beta.", "Gamma!", "delta?", "\n", "\n\n", "«quoted.»", "x" * 50, "ünï", " "]),
    max_size=600,
).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(prose)
def test_prose_chunks_cover_normalised_input(text: str) -> None:
    _check_cover(normalise(text), CHUNK_CHARS)


def test_paragraph_boundary_preferred() -> None:
    first = "A" * 500 + "."
    second = "B" * 500 + "."
    text = first + "\n\n" + second
    chunks = chunk(text)
    assert [c.text for c in chunks] == [first, second]


def test_sentence_boundary_when_no_paragraph() -> None:
    sentence = "This is a sentence of some length. "
    text = sentence * 40
    chunks = chunk(text.strip())
    assert all(c.text.endswith(".") for c in chunks)
    assert all(len(c.text) <= CHUNK_CHARS for c in chunks)
    assert len(chunks) == 2


def test_hard_cut_keeps_combining_marks_with_their_base() -> None:
    text = "e\u0301" * 600
    for piece in chunk(text):
        assert piece.text[0] == "e"


def test_deterministic_and_short_text_is_one_chunk() -> None:
    assert chunk("  hello world  ")[0].text == "hello world"
    assert chunk("   \n ") == ()
    text = "word " * 1000
    assert chunk(text) == chunk(text)


@pytest.mark.parametrize("target", [0, 31, -5, True, 3.5])
def test_bad_target_refused(target: object) -> None:
    with pytest.raises(InvalidInput, match="chunk target must be an integer >= 32"):
        chunk("text", target=target)  # type: ignore[arg-type]


def test_conversation_rendering() -> None:
    assert render_turn("Alice", 'I said "no".') == 'Alice said, "I said "no".".'[:-1]
    assert render_transcript([("A", "hi"), ("B", "yo")]) == 'A said, "hi"\n\nB said, "yo"'
    for bad in ["", " Bob", "Bo\nb", 3]:
        with pytest.raises(InvalidInput, match="speaker"):
            render_turn(bad, "x")  # type: ignore[arg-type]
