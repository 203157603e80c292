"""Loading LoCoMo: both shapes, the dataset's quirks, and precise refusals of unusable input."""

import json
import pathlib

import pytest
from undercroft_bench.chunking import protocol_chunks
from undercroft_bench.errors import DataError
from undercroft_bench.locomo_data import load_locomo, parse_locomo, session_day


def _turn(speaker: str, text: str, dia: str) -> dict:
    return {"speaker": speaker, "text": text, "dia_id": dia}


UPSTREAM = [
    {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_10_date_time": "x",
            "session_10": [_turn("A", "ten", "D10:1")],
            "session_2": [_turn("B", "two", "D2:1")],
            "session_2_date_time": "y",
        },
        "qa": [
            {"question": "q?", "answer": 3, "evidence": ["D2:1"], "category": 1},
            {"question": "adv?", "adversarial_answer": "no", "evidence": ["D10:1"], "category": 5},
            {"question": "lone?", "evidence": "D2:1", "category": 2},
            {"question": "none?", "evidence": None},
        ],
        "event_summary": {},
    }
]


def test_upstream_shape_sessions_sorted_numerically_and_quirks() -> None:
    (conversation,) = parse_locomo(UPSTREAM)
    assert conversation.conversation_id == "conv-1"
    assert [s.session_id for s in conversation.sessions] == ["2", "10"]
    assert conversation.sessions[1].turns[0].turn_id == "D10:1"
    first, adversarial, lone, none = conversation.questions
    assert (first.category, first.answer, first.adversarial_answer) == ("1", "3", None)
    assert (adversarial.category, adversarial.answer, adversarial.adversarial_answer) == ("5", None, "no")
    assert lone.evidence == ("D2:1",)
    assert (none.evidence, none.category) == ((), "uncategorised")


def test_fixture_shape_with_string_categories() -> None:
    document = {
        "_synthetic": True,
        "conversations": [
            {
                "conversation_id": "mt-1",
                "session_1": [_turn("Mia", "hi", "D1:1")],
                "qa": [{"question": "q", "answer": "a", "category": "single-hop", "evidence": ["D1:1"]}],
            }
        ],
    }
    (conversation,) = parse_locomo(document)
    assert conversation.conversation_id == "mt-1"
    assert conversation.questions[0].category == "single-hop"


def test_missing_ids_fall_back_to_position() -> None:
    (conversation,) = parse_locomo([{"session_1": [_turn("A", "x", "D1:1")], "qa": []}])
    assert conversation.conversation_id == "conversation-0"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"x": 1}, r'LoCoMo data must be a list of conversations or \{"conversations": \[...\]\}, got dict'),
        ([], "LoCoMo data holds no conversations"),
        ([3], "LoCoMo conversation 0 is a int, not an object"),
        ([{"sample_id": "c", "qa": []}], "LoCoMo conversation 'c' has no session_<N> turn lists"),
        ([{"sample_id": "c", "session_1": "oops", "qa": []}], "LoCoMo conversation 'c': session_1 is not a list"),
        ([{"sample_id": "c", "session_1": []}], "LoCoMo conversation 'c' has no 'qa' list"),
        (
            [{"sample_id": "c", "session_1": [{"speaker": "A"}], "qa": []}],
            "LoCoMo conversation 'c' session_1 turn 0 has no 'text' string",
        ),
        (
            [{"sample_id": "c", "session_1": [{"text": "t"}], "qa": []}],
            "LoCoMo conversation 'c' session_1 turn 0 has no 'speaker' text",
        ),
        (
            [{"sample_id": "c", "session_1": [], "qa": [{"answer": "a"}]}],
            "LoCoMo conversation 'c' question 0 has no 'question' text",
        ),
        (
            [{"sample_id": "c", "session_1": [], "qa": [{"question": "q", "evidence": {"D1": 1}}]}],
            "LoCoMo conversation 'c' question 0: 'evidence' is a dict, not a list",
        ),
        (
            [{"sample_id": "c", "conversation": [], "qa": []}],
            "LoCoMo conversation 'c': 'conversation' is not an object",
        ),
    ],
)
def test_unusable_shapes_are_refused(document: object, message: str) -> None:
    with pytest.raises(DataError, match=message):
        parse_locomo(document)


def test_file_errors(tmp_path: pathlib.Path) -> None:
    with pytest.raises(DataError, match=r"LoCoMo file not found: .*absent\.json"):
        load_locomo(tmp_path / "absent.json")
    broken = tmp_path / "broken.json"
    broken.write_text("[{", encoding="utf-8")
    with pytest.raises(DataError, match=r"LoCoMo file is not valid UTF-8 JSON: .*broken\.json"):
        load_locomo(broken)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(UPSTREAM), encoding="utf-8")
    assert load_locomo(good)[0].conversation_id == "conv-1"


@pytest.mark.parametrize(
    ("stamp", "day"),
    [
        ("1:56 pm on 8 May, 2023", "2023-05-08"),
        ("10:37 am on 27 June, 2023", "2023-06-27"),
        ("8:56 pm on 20 july 2023", "2023-07-20"),
        ("on 31 February, 2023", None),  # not a day
        ("sometime in May", None),
        ("", None),
        (None, None),
        (20230508, None),
    ],
)
def test_session_day_reads_the_locomo_stamp(stamp: object, day: str | None) -> None:
    assert session_day(stamp) == day


def test_sessions_carry_their_day_and_chunks_carry_it_on() -> None:
    (conversation,) = parse_locomo(
        [
            {
                "sample_id": "c",
                "conversation": {
                    "session_1": [_turn("A", "one", "D1:1")],
                    "session_1_date_time": "1:56 pm on 8 May, 2023",
                    "session_2": [_turn("B", "two", "D2:1")],
                    "session_2_date_time": "unreadable",
                },
                "qa": [],
            }
        ]
    )
    assert [s.date for s in conversation.sessions] == ["2023-05-08", None]
    assert [c.session_date for c in protocol_chunks(conversation.sessions)] == ["2023-05-08", None]
