"""The ort cross-encoder and late encoder: embed-onnx's contract on the tuned runtime, then the pooled path.

embed-onnx's tests are imported below and collected again here with ort's classes (this directory's conftest).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from undercroft_embed_ort import OrtCrossEncoder

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "undercroft-embed-onnx" / "tests"))
from model_fixtures import VOCAB, TinyModel
from test_onnx_rerankers import *  # noqa: F403 - embed-onnx's contract, collected again with ort's classes


def test_a_pooled_cross_encoder_gives_the_same_scores(cross: TinyModel) -> None:
    passages = [" ".join(VOCAB[4:][: 1 + n % 11]) for n in range(80)]
    single = OrtCrossEncoder(cross.model, cross.tokenizer).score("car", passages)
    pooled = OrtCrossEncoder(cross.model, cross.tokenizer, pool=3)
    assert pooled.pool_size == 3
    np.testing.assert_allclose(pooled.score("car", passages), single, atol=1e-6)
