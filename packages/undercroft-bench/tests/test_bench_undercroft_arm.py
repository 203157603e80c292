"""The `undercroft` arm: a sealed vault per scope, the store's ranking passed through unchanged."""

from __future__ import annotations

from undercroft_bench.arms import ARMS
from undercroft_bench.chunking import Chunk
from undercroft_bench.retriever import ArmContext, Retriever
from undercroft_bench.undercroft_arm import UndercroftRetriever, make_undercroft
from undercroft_store.search import SearchRequest

CHUNKS = [
    Chunk("c0", 'Caroline said, "I went to the LGBTQ support group yesterday."', "1", ("D1:1",)),
    Chunk("c1", 'Melanie said, "I painted a sunrise over the lake."', "1", ("D1:2",)),
    Chunk("c2", 'Caroline said, "The adoption agency called me back."', "2", ("D2:1",)),
]


def test_registered_and_a_retriever() -> None:
    assert ARMS["undercroft"] is make_undercroft
    assert isinstance(make_undercroft(ArmContext("conv-1")), Retriever)


def test_answers_with_chunk_ids_in_store_order() -> None:
    retriever = UndercroftRetriever(ArmContext("conv-1"))
    retriever.index(CHUNKS)
    ranking = retriever.search("When did Caroline go to the LGBTQ support group?", 50)
    assert ranking[0] == "c0" and set(ranking) <= {"c0", "c1", "c2"}
    assert retriever.search("adoption agency", 1) == ["c2"]


def test_index_twice_is_refused() -> None:
    retriever = UndercroftRetriever(ArmContext("conv-1"))
    retriever.index(CHUNKS[:1])
    try:
        retriever.index(CHUNKS[:1])
    except Exception as error:  # noqa: BLE001 - the harness's own fault type
        assert "already called" in str(error)
    else:
        raise AssertionError("a second index() must be refused")


def test_the_when_arm_is_registered_and_reads_the_window_from_the_question() -> None:
    from undercroft_bench.undercroft_arm import make_undercroft_when

    assert ARMS["undercroft-when"] is make_undercroft_when
    dated = [
        Chunk("c0", 'Nate said, "I won the regional tournament!"', "1", ("D1:1",), session_date="2022-01-21"),
        Chunk("c1", 'Nate said, "I won another tournament!"', "2", ("D2:1",), session_date="2022-06-03"),
    ]
    plain, windowed = make_undercroft(ArmContext("conv-1")), make_undercroft_when(ArmContext("conv-1"))
    plain.index(dated)
    windowed.index(dated)
    question = "What did Nate win in January 2022?"
    # Premise: without the window the later drawer (recency, more exact words) ranks first.
    assert plain.search(question, 2)[0] == "c1"
    assert windowed.search(question, 2)[0] == "c0"


def test_the_session_day_is_filed_as_the_content_date() -> None:
    retriever = UndercroftRetriever(ArmContext("conv-1"))
    retriever.index([Chunk("c0", 'Nate said, "Turtles!"', "1", ("D1:1",), session_date="2022-01-21"), CHUNKS[1]])
    hits = retriever._searcher.search(SearchRequest("turtles painted sunrise", limit=5)).hits
    assert {hit.content_date for hit in hits} == {"2022-01-21", None}
