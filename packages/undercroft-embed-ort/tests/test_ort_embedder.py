"""The ort embedder (pool of 1 unless stated) on generated tiny models (always run) and the offline MiniLM.

The MiniLM test skips with its reason when the model package is absent.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from undercroft_core import EmbedderIdentity, probe_cosines
from undercroft_embed_ort import ModelUnavailable, OrtEmbedder, pool_size, quantise_dynamic, select_providers

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from model_fixtures import (
    MINILM_MISSING,
    POISON,
    VOCAB,
    TinyModel,
    embedding_table,
    minilm_files,
    save,
    token_model,
    write_tokenizer,
)


def _expected(text: str, rows: int = len(VOCAB)) -> np.ndarray:
    """Mean of the table rows of [CLS] + words + [SEP], L2-normalised: what mean-pool over the tiny model gives."""
    table = embedding_table(rows).astype(np.float64)
    ids = [2, *(VOCAB.index(word) if word in VOCAB else 1 for word in text.split()), 3]
    mean = table[ids].mean(axis=0)
    return mean / np.linalg.norm(mean)


def test_mean_pool_and_l2_match_the_arithmetic(tiny: TinyModel) -> None:
    embedder = OrtEmbedder(tiny.model, tiny.tokenizer, name="tiny")
    vectors = embedder.embed(["the red car", "a dog runs", "cat"])
    assert vectors.shape == (3, 8) and vectors.dtype == np.float32
    for row, text in zip(vectors, ["the red car", "a dog runs", "cat"], strict=True):
        np.testing.assert_allclose(row, _expected(text), atol=1e-6)
    assert embedder.embed_failures == 0


def test_the_shipped_padding_and_truncation_are_overridden(tiny: TinyModel) -> None:
    """The tokenizer ships fixed padding and truncation at 16: a 40-word text keeps all its tokens, and a
    short text embeds identically alone or beside a long one (padding never enters the mean)."""
    embedder = OrtEmbedder(tiny.model, tiny.tokenizer, name="tiny")
    long_text = " ".join(["car", "dog"] * 20)
    alone = embedder.embed(["cat sleeps"])[0]
    together = embedder.embed([long_text, "cat sleeps"])
    np.testing.assert_allclose(together[1], alone, atol=1e-6)
    np.testing.assert_allclose(together[0], _expected(long_text), atol=1e-6)
    truncated = OrtEmbedder(tiny.model, tiny.tokenizer, name="tiny", max_tokens=8).embed([long_text])[0]
    np.testing.assert_allclose(truncated, _expected(" ".join(["car", "dog"] * 3)), atol=1e-6)


def test_batches_return_in_the_callers_order(tiny: TinyModel) -> None:
    embedder = OrtEmbedder(tiny.model, tiny.tokenizer, name="tiny", batch_size=2)
    texts = ["car " * n for n in (9, 1, 5, 3, 7)]
    batched = embedder.embed(texts)
    for row, text in zip(batched, texts, strict=True):
        np.testing.assert_allclose(row, embedder.embed([text])[0], atol=1e-6)


def test_identity_is_the_declared_name_at_the_probed_dimension(tiny: TinyModel) -> None:
    assert OrtEmbedder(tiny.model, tiny.tokenizer, name="bge-m3").identity == EmbedderIdentity("bge-m3", 8)


def test_the_default_name_follows_the_bytes_not_the_path(tiny: TinyModel, tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    moved.mkdir()
    copy_model = Path(shutil.copy(tiny.model, moved / "m.onnx"))
    copy_tokenizer = Path(shutil.copy(tiny.tokenizer, moved / "t.json"))
    first = OrtEmbedder(tiny.model, tiny.tokenizer).identity
    assert first.name.startswith("onnx-sha256-")
    assert OrtEmbedder(copy_model, copy_tokenizer).identity == first
    other = save(token_model(len(VOCAB) + 1), moved / "other.onnx")
    assert OrtEmbedder(other, tiny.tokenizer).identity != first


def test_a_poisoned_text_degrades_to_a_counted_zero_and_its_batch_survives(mismatched: TinyModel) -> None:
    """The tokenizer gives the poison word an id past the model's table: the Gather raises inside onnxruntime."""
    embedder = OrtEmbedder(mismatched.model, mismatched.tokenizer, name="tiny")
    vectors = embedder.embed(["the red car", f"the {POISON}", "cat sleeps"])
    assert embedder.embed_failures == 1
    assert not vectors[1].any()
    np.testing.assert_allclose(vectors[0], _expected("the red car", len(VOCAB) - 1), atol=1e-6)
    np.testing.assert_allclose(vectors[2], _expected("cat sleeps", len(VOCAB) - 1), atol=1e-6)
    assert embedder.last_failure is not None and "out of data bounds" in embedder.last_failure
    embedder.embed([POISON, POISON])
    assert embedder.embed_failures == 3


def test_calibration_is_measured_from_the_probe_pairs(tiny: TinyModel) -> None:
    embedder = OrtEmbedder(tiny.model, tiny.tokenizer, name="tiny")
    cosines = probe_cosines(embedder)
    assert cosines is not None
    assert embedder.semantic_admission_gate == pytest.approx(min(1.0, max(cosines) + 0.06))
    assert embedder.semantic_floor == pytest.approx(min(0.98, max(0.0, sum(cosines) / len(cosines))))


def test_a_model_whose_probes_fail_refuses_semantic_only_admission(tmp_path: Path) -> None:
    """A one-row table ([PAD] only): every probe's [CLS] id is past it, so every probe embeds to zero."""
    tokenizer = write_tokenizer(tmp_path / "tokenizer.json")
    model = save(token_model(1), tmp_path / "one-row.onnx")
    embedder = OrtEmbedder(model, tokenizer, name="tiny")
    assert embedder.semantic_admission_gate is None and embedder.semantic_floor == 0.0
    assert embedder.embed_failures > 0


@pytest.mark.parametrize("variable", ["UNDERCROFT_ONNX_MODEL", "UNDERCROFT_ONNX_TOKENIZER"])
def test_a_missing_file_refuses_naming_the_variable(tiny: TinyModel, tmp_path: Path, variable: str) -> None:
    env = {"UNDERCROFT_ONNX_MODEL": str(tiny.model), "UNDERCROFT_ONNX_TOKENIZER": str(tiny.tokenizer)}
    with pytest.raises(ModelUnavailable, match=f"^{variable} is not set"):
        OrtEmbedder.from_env({k: v for k, v in env.items() if k != variable})
    with pytest.raises(ModelUnavailable, match=f"^{variable}=.*absent.onnx: no such file"):
        OrtEmbedder.from_env({**env, variable: str(tmp_path / "absent.onnx")})


def test_unloadable_files_refuse_naming_the_variable(tiny: TinyModel, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07not a model at all")
    with pytest.raises(ModelUnavailable, match=r"^UNDERCROFT_ONNX_MODEL=.*onnxruntime cannot load it"):
        OrtEmbedder(garbage, tiny.tokenizer)
    broken = tmp_path / "tokenizer-broken.json"
    broken.write_text("{ not json")
    with pytest.raises(ModelUnavailable, match=r"^UNDERCROFT_ONNX_TOKENIZER=.*not a tokenizer\.json"):
        OrtEmbedder(tiny.model, broken)


def test_from_env_reads_the_three_variables(tiny: TinyModel) -> None:
    env = {
        "UNDERCROFT_ONNX_MODEL": str(tiny.model),
        "UNDERCROFT_ONNX_TOKENIZER": str(tiny.tokenizer),
        "UNDERCROFT_ONNX_NAME": " my-model ",
    }
    assert OrtEmbedder.from_env(env).identity.label == "my-model@8"


def test_minilm_embeds_meaning_the_hash_embedder_cannot() -> None:
    files = minilm_files()
    if files is None:
        pytest.skip(MINILM_MISSING)
    embedder = OrtEmbedder(files.model, files.tokenizer, name="all-minilm-l6-v2-int8")
    car, automobile, cat = embedder.embed(["I bought a new car", "She purchased an automobile", "The cat sleeps"])
    assert embedder.identity.dimension == 384
    assert float(car @ automobile) > float(car @ cat) + 0.3
    assert np.linalg.norm(car) == pytest.approx(1.0, abs=1e-5)
    assert embedder.semantic_admission_gate is not None and 0.0 < embedder.semantic_floor < 0.5


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
