"""The protocol's packing rule: greedy, in order, on line boundaries, never over 800 unless one line is."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from undercroft_bench.chunking import (
    CHUNK_LIMIT,
    Session,
    Turn,
    chunk_sessions,
    pack_lines,
    protocol_chunks,
    render_turn,
)
from undercroft_bench.errors import InvalidSetting


def test_render_turn_keeps_text_verbatim() -> None:
    assert render_turn(Turn("Mia", 'a "b"\nc', "D1:1")) == 'Mia said, "a "b"\nc"'


def test_exact_limit_fits_and_one_more_splits() -> None:
    # 399 + newline + 400 = 800 exactly: one chunk.
    assert pack_lines(["a" * 399, "b" * 400]) == [[0, 1]]
    # 400 + newline + 400 = 801: two chunks.
    assert pack_lines(["a" * 400, "b" * 400]) == [[0], [1]]


def test_long_line_stands_alone_and_is_not_cut() -> None:
    assert pack_lines(["x" * 10, "y" * 900, "z" * 10]) == [[0], [1], [2]]


def test_greedy_packs_following_lines_after_a_split() -> None:
    assert pack_lines(["a" * 500, "b" * 200, "c" * 200, "d" * 50], limit=800) == [[0, 1], [2, 3]]


def test_empty_input_and_bad_limit() -> None:
    assert pack_lines([]) == []
    with pytest.raises(InvalidSetting, match="chunk limit must be at least 1 character, got 0"):
        pack_lines(["a"], limit=0)


@given(st.lists(st.text(min_size=0, max_size=300), max_size=40), st.integers(min_value=1, max_value=900))
def test_packing_properties(lines: list[str], limit: int) -> None:
    groups = pack_lines(lines, limit)
    # Order preserved, every line exactly once.
    assert [index for group in groups for index in group] == list(range(len(lines)))
    for number, group in enumerate(groups):
        assert group
        size = len("\n".join(lines[i] for i in group))
        assert size <= limit or len(group) == 1
        if number + 1 < len(groups):
            # Greedy: the next line would not have fitted.
            assert size + 1 + len(lines[groups[number + 1][0]]) > limit


def test_protocol_chunks_carry_session_and_turns_and_never_mix_sessions() -> None:
    sessions = [
        Session("1", (Turn("A", "hi", "D1:1"), Turn("B", "multi\nline\ntext", "D1:2"))),
        Session("2", (Turn("A", "x" * 800, "D2:1"), Turn("B", "short", "D2:2"))),
    ]
    chunks = protocol_chunks(sessions)
    assert [(c.chunk_id, c.session_id, c.turn_ids) for c in chunks] == [
        ("c0", "1", ("D1:1", "D1:2")),
        ("c1", "2", ("D2:1",)),
        ("c2", "2", ("D2:2",)),
    ]
    assert chunks[0].text == 'A said, "hi"\nB said, "multi\nline\ntext"'
    assert len(chunks[1].text) > CHUNK_LIMIT  # a single over-long turn is kept whole


def test_chunking_registry() -> None:
    session = [Session("1", (Turn("A", "hi", "D1:1"),))]
    assert chunk_sessions("protocol", session) == protocol_chunks(session)
    with pytest.raises(InvalidSetting, match="unknown chunking 'fixed'; known: ours, ours-overlap, protocol"):
        chunk_sessions("fixed", session)
