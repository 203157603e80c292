"""LongMemEval: both file shapes, abstention handling, hand-checked R@k per type, precise refusals."""

import itertools
import json
import pathlib
from collections.abc import Sequence

import pytest
from undercroft_bench.chunking import Chunk
from undercroft_bench.errors import DataError, InvalidSetting
from undercroft_bench.longmemeval import (
    format_longmemeval,
    load_longmemeval,
    longmemeval_json,
    parse_longmemeval,
    run_longmemeval,
)
from undercroft_bench.retriever import ArmContext


def _item(qid: str, qtype: str, question: str, answers: list[str]) -> dict:
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": question,
        "answer": "unused",
        "haystack_session_ids": ["s1", "s2", "s3"],
        "haystack_sessions": [
            [{"role": "user", "content": "my dog is called Baxter"}],
            [{"role": "user", "content": "kitchen paint is blue"}, {"role": "assistant", "content": "nice blue"}],
            [{"role": "user", "content": "busy at work"}],
        ],
        "answer_session_ids": answers,
    }


ITEMS = [
    _item("q1", "single-session-user", "what is my dog called", ["s1"]),
    _item("q2", "single-session-user", "paint colour", ["s3"]),
    _item("q3", "knowledge-update", "kitchen", ["s2"]),
    _item("q4_abs", "knowledge-update", "my cat?", ["s1"]),
    _item("q5", "temporal-reasoning", "nothing", []),
]


class Ranked:
    """Ranks the haystack's chunks in reverse indexing order, whatever the question."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def index(self, chunks: Sequence[Chunk]) -> None:
        self.ids = [chunk.chunk_id for chunk in chunks][::-1]

    def search(self, question: str, k: int) -> list[str]:
        return self.ids[:k]


def test_both_shapes_parse_identically() -> None:
    assert parse_longmemeval(ITEMS) == parse_longmemeval({"examples": ITEMS})
    first = parse_longmemeval(ITEMS)[0]
    assert [s.session_id for s in first.sessions] == ["s1", "s2", "s3"]
    assert first.sessions[1].turns[1].speaker == "assistant"
    assert [q.evaluable for q in parse_longmemeval(ITEMS)] == [True, True, True, False, False]


def test_hand_checked_recall_at_k() -> None:
    contexts: list[ArmContext] = []

    def factory(context: ArmContext) -> Ranked:
        contexts.append(context)
        return Ranked()

    ticks = itertools.count()
    # Reverse order ranks sessions [s3, s2, s1]; k=2 keeps s3, s2: q1 misses, q2 and q3 hit.
    report = run_longmemeval(
        parse_longmemeval(ITEMS), k=2, pool=10, seed=4, factory=factory, clock=lambda: float(next(ticks))
    )
    assert [c.scope_id for c in contexts] == ["q1", "q2", "q3"]  # one fresh retriever per evaluable question
    assert (report.total.hits, report.total.total, report.questions) == (2, 3, 5)
    assert {t: (v.hits, v.total) for t, v in report.by_type.items()} == {
        "single-session-user": (1, 2),
        "knowledge-update": (1, 1),
    }
    lines = format_longmemeval(report, "lme.json")
    assert "type single-session-user: R@2 1/2 (50.00 %)" in lines
    assert "total (3 evaluable of 5): R@2 2/3 (66.67 %)" in lines
    document = json.loads(json.dumps(longmemeval_json(report, {"file": "lme.json"})))
    assert document["session"]["by_type"]["knowledge-update"] == {"hits": 1, "total": 1}
    assert document["questions"][0] == {
        "question_id": "q1",
        "type": "single-session-user",
        "top_sessions": ["s3", "s2"],
        "hit": False,
    }
    assert document["questions"][3]["hit"] is None


def test_bm25_arm_finds_the_dog() -> None:
    report = run_longmemeval(parse_longmemeval(ITEMS[:1]), k=1)
    assert (report.total.hits, report.total.total) == (1, 1)


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("text", r'LongMemEval data must be a list of questions or \{"examples": \[...\]\}, got str'),
        ({"examples": []}, "LongMemEval data holds no questions"),
        ([1], "LongMemEval question 0 is a int, not an object"),
        ([{"question_id": "a"}], "LongMemEval question 'a' has no 'question' text"),
        (
            [{"question_id": "a", "question": "q", "haystack_sessions": []}],
            "LongMemEval question 'a' needs 'haystack_session_ids' and 'haystack_sessions' lists",
        ),
        (
            [{"question_id": "a", "question": "q", "haystack_session_ids": ["s"], "haystack_sessions": []}],
            "LongMemEval question 'a' has 1 haystack_session_ids but 0 haystack_sessions",
        ),
        (
            [{"question_id": "a", "question": "q", "haystack_session_ids": ["s"], "haystack_sessions": [[{}]]}],
            "LongMemEval question 'a' session 's' turn 0 needs 'role' and 'content' strings",
        ),
        (
            [{"question_id": "a", "question": "q", "haystack_session_ids": ["s"], "haystack_sessions": ["x"]}],
            "LongMemEval question 'a' session 's' is not a list of turns",
        ),
        (
            [
                {
                    "question_id": "a",
                    "question": "q",
                    "haystack_session_ids": [],
                    "haystack_sessions": [],
                    "answer_session_ids": "s",
                }
            ],
            "LongMemEval question 'a': 'answer_session_ids' is not a list",
        ),
    ],
)
def test_unusable_shapes_are_refused(document: object, message: str) -> None:
    with pytest.raises(DataError, match=message):
        parse_longmemeval(document)


def test_bad_settings_and_missing_file(tmp_path: pathlib.Path) -> None:
    questions = parse_longmemeval(ITEMS)
    with pytest.raises(InvalidSetting, match="-k must be at least 1, got 0"):
        run_longmemeval(questions, k=0)
    with pytest.raises(InvalidSetting, match=r"--pool must be at least -k \(5\), got 3"):
        run_longmemeval(questions, k=5, pool=3)
    with pytest.raises(DataError, match="LongMemEval file not found"):
        load_longmemeval(tmp_path / "none.json")
