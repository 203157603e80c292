"""`undercroft_index.token_pq`: the token codebook codes like faiss, decodes by gather, and refuses bad bytes."""

from __future__ import annotations

import numpy as np
import pytest
from undercroft_index import IndexRefused
from undercroft_index.pq import load_faiss
from undercroft_index.token_pq import TokenCodebook, token_subquantizers, train_token_codebook


def _rows(count: int, dimension: int = 64) -> np.ndarray:
    rows = np.random.default_rng(3).normal(size=(count, dimension)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_sixteen_bytes_a_token_at_384_wide_and_a_divisor_otherwise() -> None:
    assert token_subquantizers(384) == 16
    assert token_subquantizers(8) == 8
    assert token_subquantizers(30) == 15


def test_codes_match_faiss_and_decode_reconstructs_within_the_quantisation_error() -> None:
    rows = _rows(2000)
    codebook = train_token_codebook(rows)
    codes = codebook.encode(rows)
    faiss = load_faiss()
    reference = faiss.ProductQuantizer(64, codebook.subquantizers, 8)
    faiss.copy_array_to_vector(codebook.centroids.ravel(), reference.centroids)
    assert np.array_equal(codes, reference.compute_codes(rows))
    decoded = codebook.decode(codes)
    assert decoded.shape == rows.shape
    assert np.array_equal(decoded, reference.decode(codes))
    assert float(((decoded - rows) ** 2).sum(axis=1).mean()) < float((rows**2).sum(axis=1).mean())


def test_the_serialised_codebook_round_trips_and_bad_bytes_are_refused() -> None:
    codebook = train_token_codebook(_rows(400))
    data = codebook.to_bytes()
    assert np.array_equal(TokenCodebook.from_bytes(64, data).centroids, codebook.centroids)
    with pytest.raises(IndexRefused, match="bytes"):
        TokenCodebook.from_bytes(64, data[:-4])
    poisoned = bytearray(data)
    poisoned[0:4] = np.array([np.nan], dtype="<f4").tobytes()
    with pytest.raises(IndexRefused, match="non-finite"):
        TokenCodebook.from_bytes(64, bytes(poisoned))
    with pytest.raises(IndexRefused, match="at least 256"):
        train_token_codebook(_rows(100))
