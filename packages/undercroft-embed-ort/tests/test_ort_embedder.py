"""The ort embedder: embed-onnx's contract on the tuned runtime, then what only the tuned runtime has.

embed-onnx's contract tests (generated tiny models, the offline MiniLM — which skips with its reason when
absent) are imported below and collected again here, where this directory's conftest hands them ort's
classes; the tests after them pin the session pool, the providers and int8 quantisation.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from undercroft_embed_ort import ModelUnavailable, OrtEmbedder, pool_size, quantise_dynamic, select_providers

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "undercroft-embed-onnx" / "tests"))
from model_fixtures import POISON, VOCAB, TinyModel, save
from test_onnx_embedder import *  # noqa: F403 - embed-onnx's contract, collected again with ort's classes


def test_a_pool_of_single_thread_sessions_gives_the_same_vectors(tiny: TinyModel) -> None:
    texts = [" ".join(VOCAB[4:][: 1 + n % 11]) for n in range(70)]
    batched = OrtEmbedder(tiny.model, tiny.tokenizer, name="tiny", pool=1, batch_size=8)
    pooled = OrtEmbedder(tiny.model, tiny.tokenizer, name="tiny", pool=3, batch_size=8)
    assert pooled.pool_size == 3 and batched.pool_size == 1
    np.testing.assert_allclose(pooled.embed(texts), batched.embed(texts), atol=1e-6)
    assert pooled.identity == batched.identity
    pooled.close()


def test_a_poisoned_text_in_a_pool_degrades_alone(mismatched: TinyModel) -> None:
    embedder = OrtEmbedder(mismatched.model, mismatched.tokenizer, name="tiny", pool=2, batch_size=2)
    texts = ["car", "dog", f"a {POISON}", "cat", "red", "blue"]
    vectors = embedder.embed(texts)
    assert embedder.embed_failures == 1
    assert [bool(row.any()) for row in vectors] == [True, True, False, True, True, True]
    embedder.close()


def test_the_pool_is_read_from_the_environment(tiny: TinyModel) -> None:
    env = {"UNDERCROFT_ONNX_MODEL": str(tiny.model), "UNDERCROFT_ONNX_TOKENIZER": str(tiny.tokenizer)}
    assert OrtEmbedder.from_env({**env, "UNDERCROFT_ORT_POOL": "2"}).pool_size == 2
    assert pool_size({"UNDERCROFT_ORT_POOL": "0"}) == pool_size({}) >= 1
    assert pool_size({"UNDERCROFT_ORT_POOL": "many"}) == pool_size({})


def test_the_same_files_are_the_same_space_on_both_runtimes(tiny: TinyModel) -> None:
    """Switching onnx <-> ort is one env change: same identity, same vectors, so no re-embed."""
    from undercroft_embed_onnx import OnnxEmbedder

    onnx_side = OnnxEmbedder(tiny.model, tiny.tokenizer)
    ort_side = OrtEmbedder(tiny.model, tiny.tokenizer, pool=2)
    assert onnx_side.identity == ort_side.identity
    np.testing.assert_allclose(onnx_side.embed(["the red car"]), ort_side.embed(["the red car"]), atol=1e-6)


def test_a_gpu_provider_is_preferred_only_when_reported() -> None:
    assert select_providers(["CPUExecutionProvider"]) == ["CPUExecutionProvider"]
    assert select_providers(["AzureExecutionProvider", "CPUExecutionProvider"]) == ["CPUExecutionProvider"]
    assert select_providers(["CPUExecutionProvider", "CUDAExecutionProvider"]) == [
        "CUDAExecutionProvider",
        "CPUExecutionProvider",
    ]


def test_dynamic_int8_quantisation_keeps_the_space_close(tmp_path: Path) -> None:
    from model_fixtures import cross_encoder_model

    source = save(cross_encoder_model(), tmp_path / "f32.onnx")
    quantised = quantise_dynamic(source, tmp_path / "int8.onnx")
    assert quantised.is_file() and quantised.read_bytes() != source.read_bytes()
    import onnxruntime

    ids = np.array([[2, 4, 6, 3], [2, 9, 10, 3]], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    full = onnxruntime.InferenceSession(str(source)).run(None, feed)[0]
    small = onnxruntime.InferenceSession(str(quantised)).run(None, feed)[0]
    np.testing.assert_allclose(small, full, atol=0.05 * float(np.abs(full).max()))
    with pytest.raises(ModelUnavailable, match="no such model file"):
        quantise_dynamic(tmp_path / "absent.onnx", tmp_path / "x.onnx")
