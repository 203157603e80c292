"""The model-role seam: mean-pool + L2, and the counted degrades of the cross-encoder and late-encoder bases."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray
from undercroft_core import (
    CrossEncoder,
    DegradingCrossEncoder,
    DegradingLateEncoder,
    InvalidInput,
    LateEncoder,
    mean_pool,
)


def test_mean_pool_ignores_padding_and_normalises() -> None:
    hidden = np.array([[[3.0, 0.0], [0.0, 4.0], [100.0, 100.0]], [[1.0, 1.0], [9.0, 9.0], [9.0, 9.0]]])
    mask = np.array([[1, 1, 0], [1, 0, 0]])
    pooled = mean_pool(hidden, mask)
    np.testing.assert_allclose(pooled, [[0.6, 0.8], [2**-0.5, 2**-0.5]], atol=1e-6)
    assert not mean_pool(hidden, np.zeros((2, 3), dtype=np.int64)).any()  # an empty mask stays zero, never NaN
    with pytest.raises(InvalidInput, match="mean_pool needs"):
        mean_pool(hidden, mask[:, :2])


class _Scorer(DegradingCrossEncoder):
    def _score_batch(self, query: str, passages: list[str]) -> NDArray[np.floating]:
        if any("boom" in passage for passage in passages):
            raise RuntimeError("inference exploded")
        return np.array([[float("nan") if p == "nan" else len(p)] for p in passages], dtype=np.float32)


def test_a_cross_encoder_degrades_only_the_failing_pairs() -> None:
    scorer = _Scorer("tiny")
    assert isinstance(scorer, CrossEncoder)
    scores = scorer.score("q", ["ab", "boom", "abcd", "nan"])
    np.testing.assert_array_equal(scores, [2.0, 0.0, 4.0, 0.0])
    assert scorer.rerank_failures == 2 and scorer.last_failure == "1 non-finite score(s)"
    with pytest.raises(InvalidInput):
        scorer.score("q", "not a list")


class _Tokens(DegradingLateEncoder):
    def _encode_batch(self, texts: list[str], *, query: bool) -> list[NDArray[np.floating]]:
        if any(text == "boom" for text in texts):
            raise RuntimeError("inference exploded")
        return [np.full((len(text), self.dimension), 2.0 if query else 3.0, dtype=np.float32) for text in texts]


def test_a_late_encoder_degrades_to_counted_empty_matrices() -> None:
    encoder = _Tokens("tiny", 4)
    assert isinstance(encoder, LateEncoder)
    ab, boom, abc = encoder.encode_documents(["ab", "boom", "abc"])
    assert ab.shape == (2, 4) and boom.shape == (0, 4) and abc.shape == (3, 4)
    np.testing.assert_allclose(np.linalg.norm(abc, axis=1), 1.0, atol=1e-6)
    assert encoder.late_failures == 1 and "inference exploded" in (encoder.last_failure or "")
    assert encoder.encode_query("boom").shape == (0, 4) and encoder.late_failures == 2
