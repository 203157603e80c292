"""BM25 on a tiny corpus whose scores and order were computed by hand."""

import math

import pytest
from undercroft_bench.arms import ARMS, build_retriever, resolve_arm
from undercroft_bench.bm25 import Bm25Retriever, tokenize
from undercroft_bench.chunking import Chunk
from undercroft_bench.errors import InvalidSetting, RetrieverFault
from undercroft_bench.random_pick import make_random
from undercroft_bench.retriever import ArmContext, Retriever


def _chunks(*texts: str) -> list[Chunk]:
    return [Chunk(f"c{i}", text, "1", ()) for i, text in enumerate(texts)]


CORPUS = _chunks("cat cat cat", "dog", "Dog, dog! cat cat.", "fish")


def test_tokenize_lowercases_words() -> None:
    assert tokenize("Hello, WORLD! it's 2023 snake_case") == ["hello", "world", "it", "s", "2023", "snake_case"]


def test_hand_checked_scores_and_order() -> None:
    # N=4, lengths 3,1,4,1 (avg 2.25); "dog" and "cat" each in 2 chunks: idf = ln(1 + 2.5/2.5) = ln 2.
    # c1 dog tf1 len1: norm = 1.2*(0.25+0.75/2.25) = 0.7 -> ln2 * 2.2/1.7
    # c2 dog tf2 len4: norm = 1.2*(0.25+3/2.25) = 1.9 -> ln2 * 4.4/3.9 ; cat tf2 the same
    # c0 cat tf3 len3: norm = 1.2*(0.25+2.25/2.25) = 1.5 -> ln2 * 6.6/4.5
    retriever = Bm25Retriever()
    retriever.index(CORPUS)
    ln2 = math.log(2)
    assert retriever.idf("dog") == pytest.approx(ln2)
    assert retriever.idf("absent") == 0.0
    scores = retriever.scores("dog")
    assert scores == {1: pytest.approx(ln2 * 2.2 / 1.7), 2: pytest.approx(ln2 * 4.4 / 3.9)}
    assert retriever.search("dog", 10) == ["c1", "c2"]  # the short chunk wins despite lower tf
    both = retriever.scores("dog cat")
    assert both[2] == pytest.approx(2 * ln2 * 4.4 / 3.9)
    assert both[0] == pytest.approx(ln2 * 6.6 / 4.5)
    assert retriever.search("Dog? CAT", 10) == ["c2", "c0", "c1"]  # "fish" shares nothing: not returned
    assert retriever.search("dog cat", 2) == ["c2", "c0"]
    assert retriever.search("unicorn", 10) == []


def test_ties_keep_indexing_order_and_reindex_is_refused() -> None:
    retriever = Bm25Retriever()
    retriever.index(_chunks("same words", "other", "same words"))
    assert retriever.search("same", 5) == ["c0", "c2"]
    with pytest.raises(RetrieverFault, match=r"bm25: index\(\) was already called"):
        retriever.index(CORPUS)


def test_random_arm_is_seeded_per_scope() -> None:
    first = make_random(ArmContext(scope_id="conv-1", seed=7))
    again = make_random(ArmContext(scope_id="conv-1", seed=7))
    other = make_random(ArmContext(scope_id="conv-2", seed=7))
    corpus = _chunks(*[f"t{i}" for i in range(30)])
    for retriever in (first, again, other):
        retriever.index(corpus)
    a, b, c = (r.search("q", 10) for r in (first, again, other))
    assert a == b and a != c
    assert len(set(a)) == 10 and set(a) <= {chunk.chunk_id for chunk in corpus}
    assert len(first.search("q", 100)) == 30
    with pytest.raises(RetrieverFault, match=r"random: index\(\) was already called"):
        first.index(corpus)


def test_arm_registry() -> None:
    assert set(ARMS) >= {"bm25", "random"}
    assert isinstance(build_retriever("bm25", ArmContext("x")), Retriever)
    with pytest.raises(InvalidSetting, match="unknown arm 'nope'; known: bm25, random"):
        resolve_arm("nope")
