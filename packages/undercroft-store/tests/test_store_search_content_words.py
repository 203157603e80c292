"""The query's closed-class words: not scored by BM25, not embedded for the semantic channel."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_core.language import ReadingConventions
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.search import Searcher, SearchRequest

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()
TEXTS = [
    "Nate said he won the regional tournament and it was the best day of the year.",
    "Joanna said the screenplay is finished and she printed it at the shop.",
    "Nate said the turtles were in the tank and they ate the lettuce with him.",
    "Joanna said that she was going to the beach with the dog when it rained.",
]


def _drawer(index: int, text: str) -> Drawer:
    return Drawer(
        id=append_drawer_id("w", "r", index),
        content=text,
        wing="w",
        room="r",
        chunk_index=index,
        id_recipe="append",
        added_by="test",
        filed_at="2024-01-01T00:00:00Z",
    )


@pytest.fixture
def vault(tmp_path: Path) -> VaultStore:
    palace = Palace(tmp_path)
    palace.create_vault("v", level="sealed")
    store = palace.open_vault("v", EMBEDDER)
    store.write([DrawerWrite(_drawer(i, text)) for i, text in enumerate(TEXTS)], screening=Screen())
    yield store
    store.close()
    palace.close()


def _unit(text: str) -> np.ndarray:
    vector = EMBEDDER.embed([text])[0].astype(np.float64)
    return vector / np.linalg.norm(vector)


def _semantic(query: str, content: str) -> float:
    return (float(_unit(query) @ _unit(content)) + 1.0) / 2.0


def test_the_semantic_channel_reads_the_content_words_of_an_english_query(vault: VaultStore) -> None:
    query = "What did Nate win at the tournament?"  # the, what: English function words (it resolves by the pool)
    hits = Searcher(vault, EMBEDDER).search(SearchRequest(query, limit=4)).hits
    by_content = {hit.content: hit for hit in hits}
    for text, hit in by_content.items():
        assert hit.semantic == pytest.approx(_semantic("did nate win at tournament", text), abs=2e-3)
    # Premise: the whole question scores differently, so the test can tell the two apart.
    first = hits[0].content
    assert abs(_semantic(query, first) - _semantic("did nate win at tournament", first)) > 5e-3


def test_a_query_of_function_words_only_keeps_them(vault: VaultStore) -> None:
    query = "what was there"
    hits = Searcher(vault, EMBEDDER, gate=0.0).search(SearchRequest(query, limit=4)).hits
    assert hits and all(hit.semantic == pytest.approx(_semantic(query, hit.content), abs=2e-3) for hit in hits)


def test_stop_words_add_no_lexical_score(vault: VaultStore) -> None:
    searcher = Searcher(vault, EMBEDDER)
    plain = {h.content: h.lexical_exact for h in searcher.search(SearchRequest("turtles lettuce", limit=4)).hits}
    padded = searcher.search(SearchRequest("did the turtles in it eat lettuce", limit=4)).hits
    # "eat" is a content word that no drawer holds; did/the/in/it are stop words of English and add nothing.
    assert {h.content: h.lexical_exact for h in padded} == pytest.approx(plain)
    assert list(plain) == [TEXTS[2]]


def test_a_declared_language_without_the_word_as_a_stop_word_scores_it(vault: VaultStore) -> None:
    # "it" is an English stop word; declared Italian, the query's "it" is an ordinary term again.
    def search(language: str) -> tuple[object, ...]:
        request = SearchRequest("it rained", limit=4, conventions=ReadingConventions(language=language))
        return Searcher(vault, EMBEDDER, gate="off").search(request).hits

    english, italian = search("en"), search("it")
    assert len(italian) > len(english) == 1


def test_only_the_function_words_are_cut_from_the_query_as_written(vault: VaultStore) -> None:
    # Han is read in overlapping bigrams by the tokeniser: the semantic query keeps the characters as written.
    query = "What did Nate win at the 東京都 tournament?"
    hits = Searcher(vault, EMBEDDER).search(SearchRequest(query, limit=4)).hits
    assert hits
    for hit in hits:
        assert hit.semantic == pytest.approx(_semantic("did Nate win at 東京都 tournament", hit.content), abs=2e-3)
    # Premise: re-joining the tokeniser's bigrams would embed differently.
    assert _semantic("did nate win at 東京 京都 tournament", hits[0].content) != pytest.approx(
        _semantic("did Nate win at 東京都 tournament", hits[0].content), abs=1e-4
    )
