"""The `ours` and `ours-overlap` chunkings: core's chunker over the protocol's rendering, mapped back by offsets."""

import json
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from undercroft_bench.chunking import (
    CHUNK_LIMIT,
    CHUNKERS,
    OVERLAP_CHARS,
    Chunk,
    Session,
    Turn,
    chunk_sessions,
    ours_chunks,
    ours_overlap_chunks,
    ours_spans,
    render_session,
    render_turn,
)
from undercroft_bench.errors import InvalidSetting
from undercroft_bench.locomo_data import load_locomo
from undercroft_bench.main import main

# ../shared/data beside the checkout; the first ancestor holding it wins (a worktree measures, never skips).
_DEV = pathlib.Path("shared") / "data" / "locomo" / "locomo-dev.json"
_HERE = pathlib.Path(__file__).resolve()
LOCOMO_DEV = next((root / _DEV for root in _HERE.parents if (root / _DEV).is_file()), _HERE.parents[3].parent / _DEV)

# Words, spaces, line and paragraph breaks, sentence ends, quotes and a combining mark: every cut rule fires.
_ALPHABET = st.sampled_from([*"abcdefghij", " ", " ", "\n", "\n\n", ". ", "?", '"', "\u0301", "\t"])
_TEXT = st.lists(_ALPHABET, max_size=160).map("".join)
_TOKEN_RUN = st.integers(min_value=0, max_value=120).map(lambda n: "x" * n)  # long tokens force hard cuts
_TURN_TEXT = st.one_of(_TEXT, st.tuples(_TEXT, _TOKEN_RUN, _TEXT).map("".join))
_TURNS = st.lists(
    st.builds(Turn, st.sampled_from(["A", "Bo", "Caroline"]), _TURN_TEXT, st.sampled_from(["", "D3:1", "D3:2"])),
    min_size=1,
    max_size=12,
)
_LIMITS = st.integers(min_value=32, max_value=220)


def _is_word_start(text: str, position: int) -> bool:
    return not text[position].isspace() and (position == 0 or text[position - 1].isspace())


# ---- rendering ----------------------------------------------------------------------------------------------


def test_render_session_is_the_protocol_lines_joined_with_their_spans() -> None:
    session = Session("7", (Turn("A", "hi", "D7:1"), Turn("B", "two\nlines", "D7:2")))
    rendered = render_session(session)
    assert rendered.text == 'A said, "hi"\nB said, "two\nlines"'
    assert rendered.turn_spans == ((0, 12), (13, 32))
    for turn, (start, end) in zip(session.turns, rendered.turn_spans, strict=True):
        assert rendered.text[start:end] == render_turn(turn)


# ---- ours: exact substrings covering the session in order ---------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(_TURNS, _LIMITS)
def test_ours_chunks_are_exact_substrings_covering_the_session_in_order(turns: list[Turn], limit: int) -> None:
    session = Session("3", tuple(turns))
    text = render_session(session).text
    spans = ours_spans(text, limit=limit)
    chunks = ours_chunks([session], limit=limit)
    assert [chunk.text for chunk in chunks] == [text[start:end] for start, end in spans]
    assert [chunk.chunk_id for chunk in chunks] == [f"c{i}" for i in range(len(chunks))]
    assert all(chunk.session_id == "3" for chunk in chunks)
    # In order, non-empty, stripped, never over the limit, only whitespace before, between and after them.
    cursor = 0
    for start, end in spans:
        assert cursor <= start < end and end - start <= limit
        assert text[cursor:start].strip() == ""
        assert text[start:end] == text[start:end].strip()
        cursor = end
    assert text[cursor:].strip() == ""


@settings(max_examples=100, deadline=None)
@given(_TURNS, _LIMITS)
def test_ours_turn_ids_are_exactly_the_turns_each_span_overlaps(turns: list[Turn], limit: int) -> None:
    session = Session("3", tuple(turns))
    rendered = render_session(session)
    spans = ours_spans(rendered.text, limit=limit)
    # An independent oracle: label every character with the turn whose line it belongs to.
    owner: list[int | None] = [None] * len(rendered.text)
    for index, (turn_start, turn_end) in enumerate(rendered.turn_spans):
        owner[turn_start:turn_end] = [index] * (turn_end - turn_start)
    for chunk, (start, end) in zip(ours_chunks([session], limit=limit), spans, strict=True):
        indices = sorted({i for i in owner[start:end] if i is not None})
        assert chunk.turn_ids == tuple(turns[i].turn_id for i in indices if turns[i].turn_id)
    # Every turn with an id is held by at least one chunk.
    held = {turn_id for chunk in ours_chunks([session], limit=limit) for turn_id in chunk.turn_ids}
    assert held == {turn.turn_id for turn in turns if turn.turn_id}


# ---- ours: turn-id mapping on a hand-built session ----------------------------------------------------------

_HAND = [
    Session(
        "7",
        (
            Turn("A", "hi", "D7:1"),  # 'A said, "hi"'                 [0, 12)
            Turn("B", "one two three four", "D7:2"),  # the cut falls inside this turn
            Turn("A", "ok", ""),  # no dataset id: held, but carries nothing
            Turn("B", "bye", "D7:4"),
        ),
    ),
    Session("8", (Turn("C", "x y", "D8:1"),)),
]


def test_hand_built_session_maps_turns_by_offsets() -> None:
    # limit 40, window [0, 40): no line break in its second half [20, 40), no sentence end, so the cut is the
    # last space before 40 (offset 35), inside D7:2, which both chunks therefore hold.
    assert ours_chunks(_HAND, limit=40) == [
        Chunk("c0", 'A said, "hi"\nB said, "one two three', "7", ("D7:1", "D7:2")),
        Chunk("c1", 'four"\nA said, "ok"\nB said, "bye"', "7", ("D7:2", "D7:4")),
        Chunk("c2", 'C said, "x y"', "8", ("D8:1",)),
    ]


def test_hand_built_session_with_overlap() -> None:
    # Overlap 10: the first word start at or after 35 - 10 = 25 is offset 26 ('two'); 9 characters shared.
    chunks = ours_overlap_chunks(_HAND, limit=40, overlap=10)
    assert [c.text for c in chunks] == [
        'A said, "hi"\nB said, "one two three',
        'two three four"\nA said, "ok"\nB said, "bye"',
        'C said, "x y"',  # a session's first chunk never reaches into the previous session
    ]
    assert [c.turn_ids for c in chunks] == [("D7:1", "D7:2"), ("D7:2", "D7:4"), ("D8:1",)]
    # Overlap 100 is capped at the previous chunk's start: the second chunk becomes the whole session.
    whole = ours_overlap_chunks(_HAND, limit=40)
    assert whole[1].text == render_session(_HAND[0]).text
    assert whole[1].turn_ids == ("D7:1", "D7:2", "D7:4")


def test_a_turn_split_on_its_own_line_break_goes_to_both_chunks() -> None:
    session = Session("2", (Turn("A", "alpha beta gamma\ndelta epsilon zeta eta", "D2:1"), Turn("B", "k", "D2:2")))
    chunks = ours_chunks([session], limit=40)
    assert [c.text for c in chunks] == ['A said, "alpha beta gamma', 'delta epsilon zeta eta"\nB said, "k"']
    assert [c.turn_ids for c in chunks] == [("D2:1",), ("D2:1", "D2:2")]


# ---- ours-overlap: at most OVERLAP characters, starting on a word -------------------------------------------


@settings(max_examples=150, deadline=None)
@given(_TURNS, _LIMITS, st.integers(min_value=0, max_value=150))
def test_overlap_spans_share_at_most_overlap_characters_from_a_word_start(
    turns: list[Turn], limit: int, overlap: int
) -> None:
    text = render_session(Session("3", tuple(turns))).text
    base = ours_spans(text, limit=limit)
    spans = ours_spans(text, limit=limit, overlap=overlap)
    assert len(spans) == len(base)
    assert [end for _, end in spans] == [end for _, end in base]
    assert spans[:1] == base[:1]
    for (prev_start, prev_end), (start, _), (base_start, _) in zip(base, spans[1:], base[1:], strict=False):
        assert prev_start <= start <= base_start
        shared = max(0, prev_end - start)
        assert shared <= overlap
        if start < base_start:  # moved: onto a word start (a start left alone may follow a hard cut)
            assert _is_word_start(text, start)
        # The earliest word start allowed is taken: no word starts in the window before it.
        floor = max(prev_start, prev_end - overlap)
        assert not any(_is_word_start(text, p) for p in range(floor, start))
    chunks = ours_overlap_chunks([Session("3", tuple(turns))], limit=limit, overlap=overlap)
    assert [c.text for c in chunks] == [text[s:e] for s, e in spans]


def test_overlap_zero_is_ours_and_default_is_mempalaces_100() -> None:
    assert OVERLAP_CHARS == 100
    assert ours_overlap_chunks(_HAND, limit=40, overlap=0) == ours_chunks(_HAND, limit=40)
    assert ours_overlap_chunks(_HAND, limit=40) == ours_overlap_chunks(_HAND, limit=40, overlap=100)


def test_a_long_token_leaves_no_word_start_so_no_overlap() -> None:
    # 'A said, "yyy…"' cut at 40: spans (0, 7), (8, 48), (48, 88), … The second moves back to 'A' (offset 0);
    # the third's window [48 - 30, 48) is all 'y', no word starts there, so it stays at its hard cut.
    text = render_session(Session("1", (Turn("A", "y" * 120, "D1:1"),))).text
    base = ours_spans(text, limit=40)
    assert base[:3] == [(0, 7), (8, 48), (48, 88)]
    assert ours_spans(text, limit=40, overlap=30) == [base[0], (0, 48), *base[2:]]


def test_bad_limit_and_overlap_are_refused() -> None:
    with pytest.raises(InvalidSetting, match="chunk limit for core's chunker must be at least 32, got 31"):
        ours_chunks(_HAND, limit=31)
    with pytest.raises(InvalidSetting, match="chunk overlap must be at least 0 characters, got -1"):
        ours_overlap_chunks(_HAND, overlap=-1)


# ---- registry and CLI ---------------------------------------------------------------------------------------


def test_registry_offers_both_arms() -> None:
    assert sorted(CHUNKERS) == ["ours", "ours-overlap", "protocol"]
    assert chunk_sessions("ours", _HAND) == ours_chunks(_HAND, limit=CHUNK_LIMIT)
    assert chunk_sessions("ours-overlap", _HAND) == ours_overlap_chunks(_HAND)


TINY = [
    {
        "sample_id": "c1",
        "conversation": {
            "session_1": [{"speaker": "A", "text": "I adopted a dog named Rex", "dia_id": "D1:1"}],
            "session_2": [{"speaker": "B", "text": "The kitchen is blue now", "dia_id": "D2:1"}],
        },
        "qa": [{"question": "Which dog did A adopt?", "answer": "Rex", "evidence": ["D1:1"], "category": 1}],
    }
]


@pytest.mark.parametrize("chunking", ["ours", "ours-overlap"])
def test_cli_runs_each_ours_arm(tmp_path, capsys, chunking) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY), encoding="utf-8")
    out = tmp_path / "out.json"
    assert main(["locomo", str(data), "-k", "1", "--pool", "2", "--chunking", chunking, "--json", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert f"| chunking {chunking} |" in printed[0]
    assert "category 1: session R@1 1/1 (100.00 %) | turn R@1 1/1 (100.00 %)" in printed
    assert json.loads(out.read_text(encoding="utf-8"))["settings"]["chunking"] == chunking


def test_dev_split_chunk_counts_are_pinned() -> None:
    if not LOCOMO_DEV.is_file():
        pytest.skip(f"data file not present: {LOCOMO_DEV} (lay ../shared beside the checkout)")
    conversations = load_locomo(LOCOMO_DEV)
    # Pinned: 733 chunks each (the protocol packs 731); overlap adds text, never chunks.
    for name, count, turns in (("ours", 733, 3439), ("ours-overlap", 733, 4136)):
        chunks = [c for conversation in conversations for c in chunk_sessions(name, conversation.sessions)]
        assert (name, len(chunks), sum(len(c.turn_ids) for c in chunks)) == (name, count, turns)
        assert max(len(c.text) for c in chunks) <= CHUNK_LIMIT + (OVERLAP_CHARS if name == "ours-overlap" else 0)
