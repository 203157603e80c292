"""The LoCoMo scorer on a hand-built conversation whose hits were worked out by hand."""

import itertools
import json
from collections.abc import Sequence

import pytest
from undercroft_bench.chunking import Chunk, Session, Turn
from undercroft_bench.errors import InvalidSetting, RetrieverFault
from undercroft_bench.locomo_data import LocomoConversation, LocomoQuestion
from undercroft_bench.locomo_eval import LocomoSettings, format_locomo, locomo_json, run_locomo
from undercroft_bench.retriever import ArmContext


class Scripted:
    """A retriever answering each question with a fixed ranking; it fails the test if asked anything else."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.indexed: list[Chunk] = []
        self.asked: list[tuple[str, int]] = []

    def index(self, chunks: Sequence[Chunk]) -> None:
        self.indexed = list(chunks)

    def search(self, question: str, k: int) -> list[str]:
        self.asked.append((question, k))
        return self.answers[question]


def _question(index: int, text: str, category: str, evidence: list[str]) -> LocomoQuestion:
    return LocomoQuestion(index, text, category, tuple(evidence), None, None)


# Chunks under the protocol: c0 = session 1 (D1:1, D1:2); session 2's two 460-character turns cannot share
# 800 characters, so c1 = (D2:1) and c2 = (D2:2); c3 = session 3 (D3:1).
CONVERSATION = LocomoConversation(
    conversation_id="conv-hand",
    sessions=(
        Session("1", (Turn("A", "one", "D1:1"), Turn("B", "two", "D1:2"))),
        Session("2", (Turn("B", "x" * 450, "D2:1"), Turn("A", "y" * 450, "D2:2"))),
        Session("3", (Turn("A", "three", "D3:1"),)),
    ),
    questions=(
        # Sessions in rank order [2, 1]: 3 is the third distinct session, beyond k=2 -> miss; turn miss.
        _question(0, "q0", "1", ["D3:1"]),
        # Sessions [2, 1] -> hit; first two chunks hold D2:1, D1:1, D1:2, not D2:2 -> turn miss.
        _question(1, "q1", "1", ["D2:2"]),
        # Gold sessions {8, 1}; sessions [3, 1] -> hit; D1:2 is in c0 -> turn hit.
        _question(2, "q2", "5", ["D8:6; D1:2"]),
        # Not evaluable: never searched.
        _question(3, "q3", "3", []),
        _question(4, "q4", "3", ["D"]),
        # The retriever finds nothing -> miss on both units.
        _question(5, "q5", "2", ["D:3:1"]),
    ),
)
ANSWERS = {"q0": ["c1", "c2", "c0", "c3"], "q1": ["c1", "c0"], "q2": ["c3", "c0"], "q5": []}


def _run(settings: LocomoSettings, answers: dict[str, list[str]] = ANSWERS) -> tuple:
    built: list[Scripted] = []
    contexts: list[ArmContext] = []

    def factory(context: ArmContext) -> Scripted:
        contexts.append(context)
        built.append(Scripted(answers))
        return built[-1]

    ticks = itertools.count()
    report = run_locomo([CONVERSATION], settings, factory=factory, clock=lambda: float(next(ticks)))
    return report, built, contexts


def test_hand_computed_hits() -> None:
    report, built, contexts = _run(LocomoSettings(k=2, pool=4, seed=3))
    assert [c.chunk_id for c in built[0].indexed] == ["c0", "c1", "c2", "c3"]
    assert [c.session_id for c in built[0].indexed] == ["1", "2", "2", "3"]
    assert contexts == [ArmContext(scope_id="conv-hand", seed=3, options={})]
    assert built[0].asked == [("q0", 4), ("q1", 4), ("q2", 4), ("q5", 4)]
    assert (report.session_total.hits, report.session_total.total) == (2, 4)
    assert (report.turn_total.hits, report.turn_total.total) == (1, 4)
    assert {c: (t.hits, t.total) for c, t in report.session_by_category.items()} == {
        "1": (1, 2),
        "5": (1, 1),
        "2": (0, 1),
    }
    assert {c: (t.hits, t.total) for c, t in report.turn_by_category.items()} == {"1": (0, 2), "5": (1, 1), "2": (0, 1)}
    assert (report.questions, report.evaluable, report.unparsed_tokens, report.chunks) == (6, 4, 1, 4)
    hits = [(r.index, r.top_sessions, r.session_hit, r.turn_hit) for r in report.results]
    assert hits == [
        (0, ("2", "1"), False, False),
        (1, ("2", "1"), True, False),
        (2, ("3", "1"), True, True),
        (3, (), None, None),
        (4, (), None, None),
        (5, (), False, False),
    ]
    # The fake clock ticks once per reading: one tick of ingest, one per search.
    assert (report.ingest_seconds, report.search_seconds) == (1.0, 4.0)


def test_printed_lines_and_unit_choice() -> None:
    report, _, _ = _run(LocomoSettings(k=2, pool=4))
    lines = format_locomo(report, "hand.json")
    assert "category 1: session R@2 1/2 (50.00 %) | turn R@2 0/2 (0.00 %)" in lines
    assert "category 2: session R@2 0/1 (0.00 %) | turn R@2 0/1 (0.00 %)" in lines
    assert lines[1].startswith("category 1:") and lines[3].startswith("category 5:")
    assert "total (4 evaluable of 6): session R@2 2/4 (50.00 %) | turn R@2 1/4 (25.00 %)" in lines
    assert any(
        line.startswith("evaluable: 4 of 6 questions (2 without a parseable evidence session;") for line in lines
    )
    assert "search: 4.000 s total | 1000.000 ms per query | 4 queries" in lines
    turn_first = format_locomo(_run(LocomoSettings(k=2, pool=4, unit="turn"))[0], "hand.json")
    assert "total (4 evaluable of 6): turn R@2 1/4 (25.00 %) | session R@2 2/4 (50.00 %)" in turn_first


def test_json_report_carries_raw_counts_and_each_question() -> None:
    report, _, _ = _run(LocomoSettings(k=2, pool=4))
    document = json.loads(json.dumps(locomo_json(report, {"file": "hand.json"})))
    assert document["session"]["hits"] == 2 and document["session"]["total"] == 4
    assert document["session"]["by_category"]["1"] == {"hits": 1, "total": 2}
    assert document["turn"]["hits"] == 1
    assert document["counts"] == {
        "conversations": 1,
        "chunks": 4,
        "questions": 6,
        "evaluable": 4,
        "unparsed_tokens": 1,
    }
    assert document["questions"][2]["gold_sessions"] == ["8", "1"]
    assert document["questions"][2]["gold_turns"] == [[8, 6], [1, 2]]
    assert document["questions"][0]["top_chunks"] == ["c1", "c2"]
    assert document["questions"][4]["unparsed"] == ["D"]


def test_retriever_faults_are_typed() -> None:
    with pytest.raises(RetrieverFault, match="arm 'bm25' returned chunk id 'c9', which it was never given"):
        _run(LocomoSettings(k=2, pool=4), {**ANSWERS, "q0": ["c9"]})
    with pytest.raises(RetrieverFault, match="arm 'bm25' returned 5 chunk ids when asked for at most 4"):
        _run(LocomoSettings(k=2, pool=4), {**ANSWERS, "q0": ["c0", "c1", "c2", "c3", "c0"]})


def test_duplicate_ids_keep_first_rank() -> None:
    report, _, _ = _run(LocomoSettings(k=2, pool=4), {**ANSWERS, "q0": ["c3", "c3", "c1"]})
    assert report.results[0].top_sessions == ("3", "2")
    assert report.results[0].session_hit is True


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (LocomoSettings(k=0), "-k must be at least 1, got 0"),
        (LocomoSettings(k=10, pool=5), r"--pool must be at least -k \(10\), got 5"),
        (LocomoSettings(unit="chunk"), "--unit must be one of session, turn, got 'chunk'"),
        (LocomoSettings(limit_conversations=0), "--limit-conversations must be at least 1, got 0"),
    ],
)
def test_bad_settings_are_refused(settings: LocomoSettings, message: str) -> None:
    with pytest.raises(InvalidSetting, match=message):
        run_locomo([CONVERSATION], settings)


def test_limit_conversations() -> None:
    second = LocomoConversation("conv-b", CONVERSATION.sessions, CONVERSATION.questions)
    report = run_locomo([CONVERSATION, second], LocomoSettings(limit_conversations=1))
    assert report.conversations == 1
    assert {r.conversation_id for r in report.results} == {"conv-hand"}
