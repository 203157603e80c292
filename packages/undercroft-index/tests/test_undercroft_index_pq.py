"""The PQ/IVF and HNSW indexes: artifacts round-trip byte for byte, codes are self-contained, search proposes."""

import numpy as np
import pytest
from undercroft_index import Codebook, HnswIndex, IndexRefused, ivf_lists, subquantizers, train_codebook


def _unit(n: int, d: int = 96, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_geometry() -> None:
    assert subquantizers(384) == 48
    assert subquantizers(96) == 48
    assert subquantizers(100) == 25
    assert ivf_lists(8191, 8192) == 1
    assert ivf_lists(10_000, 8192) == 100
    assert ivf_lists(10_001, 8192) == 101


@pytest.fixture(scope="module")
def trained() -> tuple[Codebook, np.ndarray]:
    vectors = _unit(1200)
    return train_codebook(vectors, nlist=8), vectors


def test_artifacts_round_trip_and_codes_match(trained: tuple[Codebook, np.ndarray]) -> None:
    book, vectors = trained
    again = Codebook.from_bytes(book.dimension, book.nlist, book.centroid_bytes(), book.codebook_bytes())
    assert again.centroid_bytes() == book.centroid_bytes() and again.codebook_bytes() == book.codebook_bytes()
    assert np.array_equal(again.encode(vectors[:50]), book.encode(vectors[:50]))
    assert book.code_size == 1 + 48  # one byte of list number, 48 of PQ code


def test_wrong_lengths_are_refused(trained: tuple[Codebook, np.ndarray]) -> None:
    book, _ = trained
    with pytest.raises(IndexRefused, match="codebook is"):
        Codebook.from_bytes(book.dimension, book.nlist, book.centroid_bytes(), book.codebook_bytes()[:-4])
    with pytest.raises(IndexRefused, match="centroid set"):
        Codebook.from_bytes(book.dimension, book.nlist + 1, book.centroid_bytes(), book.codebook_bytes())
    with pytest.raises(IndexRefused, match="shape"):
        book.encode(np.zeros((2, 7), dtype=np.float32))
    with pytest.raises(IndexRefused, match="at least"):
        train_codebook(_unit(100), nlist=1)


def test_search_finds_itself_and_respects_within_and_remove(trained: tuple[Codebook, np.ndarray]) -> None:
    book, vectors = trained
    ids = np.arange(len(vectors), dtype=np.int64) * 10 + 3
    index = book.index(book.encode(vectors), ids)
    assert index.size == len(vectors)
    hits = sum(int(ids[i]) in index.search(vectors[i], 20, nprobe=8).tolist() for i in range(100))
    assert hits >= 95
    within = ids[::2]
    found = index.search(vectors[1], 50, nprobe=8, within=within)
    assert len(found) and set(found.tolist()) <= set(within.tolist())
    assert index.remove(ids[:10]) == 10 and index.size == len(vectors) - 10
    assert int(ids[0]) not in index.search(vectors[0], 50, nprobe=8).tolist()


def test_hnsw_proposes_nearest() -> None:
    vectors = _unit(500, seed=1)
    ids = np.arange(500, dtype=np.int64) + 1000
    graph = HnswIndex(vectors, ids)
    assert all(int(ids[i]) in graph.search(vectors[i], 5).tolist() for i in range(50))
    assert graph.search(vectors[0], 0).size == 0
