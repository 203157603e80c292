"""The `undercroft` arm: a sealed vault per scope, the store's ranking passed through unchanged."""

from __future__ import annotations

from undercroft_bench.arms import ARMS
from undercroft_bench.chunking import Chunk
from undercroft_bench.retriever import ArmContext, Retriever
from undercroft_bench.undercroft_arm import UndercroftRetriever, make_undercroft

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
