"""The onnx embedder against generated tiny models (always run) and the offline MiniLM (skips when absent)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from undercroft_core import EmbedderIdentity, probe_cosines
from undercroft_embed_onnx import ModelUnavailable, OnnxEmbedder

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


def test_mean_pool_and_l2_match_the_arithmetic(tiny: TinyModel, embedder_class: type[OnnxEmbedder]) -> None:
    embedder = embedder_class(tiny.model, tiny.tokenizer, name="tiny")
    vectors = embedder.embed(["the red car", "a dog runs", "cat"])
    assert vectors.shape == (3, 8) and vectors.dtype == np.float32
    for row, text in zip(vectors, ["the red car", "a dog runs", "cat"], strict=True):
        np.testing.assert_allclose(row, _expected(text), atol=1e-6)
    assert embedder.embed_failures == 0


def test_the_shipped_padding_and_truncation_are_overridden(tiny: TinyModel, embedder_class: type[OnnxEmbedder]) -> None:
    """The tokenizer ships fixed padding and truncation at 16: a 40-word text keeps all its tokens, and a
    short text embeds identically alone or beside a long one (padding never enters the mean)."""
    embedder = embedder_class(tiny.model, tiny.tokenizer, name="tiny")
    long_text = " ".join(["car", "dog"] * 20)
    alone = embedder.embed(["cat sleeps"])[0]
    together = embedder.embed([long_text, "cat sleeps"])
    np.testing.assert_allclose(together[1], alone, atol=1e-6)
    np.testing.assert_allclose(together[0], _expected(long_text), atol=1e-6)
    truncated = embedder_class(tiny.model, tiny.tokenizer, name="tiny", max_tokens=8).embed([long_text])[0]
    np.testing.assert_allclose(truncated, _expected(" ".join(["car", "dog"] * 3)), atol=1e-6)


def test_batches_return_in_the_callers_order(tiny: TinyModel, embedder_class: type[OnnxEmbedder]) -> None:
    embedder = embedder_class(tiny.model, tiny.tokenizer, name="tiny", batch_size=2)
    texts = ["car " * n for n in (9, 1, 5, 3, 7)]
    batched = embedder.embed(texts)
    for row, text in zip(batched, texts, strict=True):
        np.testing.assert_allclose(row, embedder.embed([text])[0], atol=1e-6)


def test_identity_is_the_declared_name_at_the_probed_dimension(
    tiny: TinyModel, embedder_class: type[OnnxEmbedder]
) -> None:
    assert embedder_class(tiny.model, tiny.tokenizer, name="bge-m3").identity == EmbedderIdentity("bge-m3", 8)


def test_the_default_name_follows_the_bytes_not_the_path(
    tiny: TinyModel, tmp_path: Path, embedder_class: type[OnnxEmbedder]
) -> None:
    moved = tmp_path / "moved"
    moved.mkdir()
    copy_model = Path(shutil.copy(tiny.model, moved / "m.onnx"))
    copy_tokenizer = Path(shutil.copy(tiny.tokenizer, moved / "t.json"))
    first = embedder_class(tiny.model, tiny.tokenizer).identity
    assert first.name.startswith("onnx-sha256-")
    assert embedder_class(copy_model, copy_tokenizer).identity == first
    other = save(token_model(len(VOCAB) + 1), moved / "other.onnx")
    assert embedder_class(other, tiny.tokenizer).identity != first


def test_a_poisoned_text_degrades_to_a_counted_zero_and_its_batch_survives(
    mismatched: TinyModel, embedder_class: type[OnnxEmbedder]
) -> None:
    """The tokenizer gives the poison word an id past the model's table: the Gather raises inside onnxruntime."""
    embedder = embedder_class(mismatched.model, mismatched.tokenizer, name="tiny")
    vectors = embedder.embed(["the red car", f"the {POISON}", "cat sleeps"])
    assert embedder.embed_failures == 1
    assert not vectors[1].any()
    np.testing.assert_allclose(vectors[0], _expected("the red car", len(VOCAB) - 1), atol=1e-6)
    np.testing.assert_allclose(vectors[2], _expected("cat sleeps", len(VOCAB) - 1), atol=1e-6)
    assert embedder.last_failure is not None and "out of data bounds" in embedder.last_failure
    embedder.embed([POISON, POISON])
    assert embedder.embed_failures == 3


def test_calibration_is_measured_from_the_probe_pairs(tiny: TinyModel, embedder_class: type[OnnxEmbedder]) -> None:
    embedder = embedder_class(tiny.model, tiny.tokenizer, name="tiny")
    cosines = probe_cosines(embedder)
    assert cosines is not None
    assert embedder.semantic_admission_gate == pytest.approx(min(1.0, max(cosines) + 0.06))
    assert embedder.semantic_floor == pytest.approx(min(0.98, max(0.0, sum(cosines) / len(cosines))))


def test_a_model_whose_probes_fail_refuses_semantic_only_admission(
    tmp_path: Path, embedder_class: type[OnnxEmbedder]
) -> None:
    """A one-row table ([PAD] only): every probe's [CLS] id is past it, so every probe embeds to zero."""
    tokenizer = write_tokenizer(tmp_path / "tokenizer.json")
    model = save(token_model(1), tmp_path / "one-row.onnx")
    embedder = embedder_class(model, tokenizer, name="tiny")
    assert embedder.semantic_admission_gate is None and embedder.semantic_floor == 0.0
    assert embedder.embed_failures > 0


@pytest.mark.parametrize("variable", ["UNDERCROFT_ONNX_MODEL", "UNDERCROFT_ONNX_TOKENIZER"])
def test_a_missing_file_refuses_naming_the_variable(
    tiny: TinyModel, tmp_path: Path, variable: str, embedder_class: type[OnnxEmbedder]
) -> None:
    env = {"UNDERCROFT_ONNX_MODEL": str(tiny.model), "UNDERCROFT_ONNX_TOKENIZER": str(tiny.tokenizer)}
    with pytest.raises(ModelUnavailable, match=f"^{variable} is not set"):
        embedder_class.from_env({k: v for k, v in env.items() if k != variable})
    with pytest.raises(ModelUnavailable, match=f"^{variable}=.*absent.onnx: no such file"):
        embedder_class.from_env({**env, variable: str(tmp_path / "absent.onnx")})


def test_unloadable_files_refuse_naming_the_variable(
    tiny: TinyModel, tmp_path: Path, embedder_class: type[OnnxEmbedder]
) -> None:
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07not a model at all")
    with pytest.raises(ModelUnavailable, match=r"^UNDERCROFT_ONNX_MODEL=.*onnxruntime cannot load it"):
        embedder_class(garbage, tiny.tokenizer)
    broken = tmp_path / "tokenizer-broken.json"
    broken.write_text("{ not json")
    with pytest.raises(ModelUnavailable, match=r"^UNDERCROFT_ONNX_TOKENIZER=.*not a tokenizer\.json"):
        embedder_class(tiny.model, broken)


def test_from_env_reads_the_three_variables(tiny: TinyModel, embedder_class: type[OnnxEmbedder]) -> None:
    env = {
        "UNDERCROFT_ONNX_MODEL": str(tiny.model),
        "UNDERCROFT_ONNX_TOKENIZER": str(tiny.tokenizer),
        "UNDERCROFT_ONNX_NAME": " my-model ",
    }
    assert embedder_class.from_env(env).identity.label == "my-model@8"


def test_minilm_embeds_meaning_the_hash_embedder_cannot(embedder_class: type[OnnxEmbedder]) -> None:
    files = minilm_files()
    if files is None:
        pytest.skip(MINILM_MISSING)
    embedder = embedder_class(files.model, files.tokenizer, name="all-minilm-l6-v2-int8")
    car, automobile, cat = embedder.embed(["I bought a new car", "She purchased an automobile", "The cat sleeps"])
    assert embedder.identity.dimension == 384
    assert float(car @ automobile) > float(car @ cat) + 0.3
    assert np.linalg.norm(car) == pytest.approx(1.0, abs=1e-5)
    assert embedder.semantic_admission_gate is not None and 0.0 < embedder.semantic_floor < 0.5
