"""The cross-encoder and late-encoder roles on generated tiny graphs, including a pair that raises."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from undercroft_core import CrossEncoder, LateEncoder, maxsim
from undercroft_embed_onnx import ModelUnavailable, OnnxCrossEncoder, OnnxLateEncoder

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from model_fixtures import (
    DIMENSION,
    POISON,
    VOCAB,
    TinyModel,
    cross_encoder_model,
    embedding_table,
    save,
    token_model,
    write_tokenizer,
)


def _ids(*texts: str) -> list[int]:
    ids = [2]
    for text in texts:
        ids += [VOCAB.index(word) if word in VOCAB else 1 for word in text.split()] + [3]
    return ids


def _expected_score(query: str, passage: str, rows: int = len(VOCAB)) -> float:
    weight = np.linspace(-1.0, 1.0, DIMENSION)
    return float(embedding_table(rows).astype(np.float64)[_ids(query, passage)].mean(axis=0) @ weight)


@pytest.fixture
def cross(tmp_path: Path) -> TinyModel:
    return TinyModel(save(cross_encoder_model(), tmp_path / "ce.onnx"), write_tokenizer(tmp_path / "tok.json"))


def test_the_cross_encoder_scores_every_pair_jointly(cross: TinyModel, cross_class: type[OnnxCrossEncoder]) -> None:
    reranker = cross_class(cross.model, cross.tokenizer)
    passages = ["the red car", "a cat sleeps", " ".join(["dog"] * 30)]
    scores = reranker.score("car", passages)
    assert isinstance(reranker, CrossEncoder) and reranker.name == "onnx-reranker"
    np.testing.assert_allclose(scores, [_expected_score("car", p) for p in passages], atol=1e-5)
    assert reranker.rerank_failures == 0 and reranker.score("car", []).shape == (0,)


def test_a_raising_pair_scores_a_counted_zero_and_the_pool_survives(
    tmp_path: Path, cross_class: type[OnnxCrossEncoder]
) -> None:
    short = save(cross_encoder_model(len(VOCAB) - 1), tmp_path / "short.onnx")
    reranker = cross_class(short, write_tokenizer(tmp_path / "tok.json"), name="tiny-ce")
    passages = ["the red car", f"a {POISON}", "cat"]
    scores = reranker.score("car", passages)
    assert reranker.rerank_failures == 1 and scores[1] == 0.0
    assert scores[0] == pytest.approx(_expected_score("car", "the red car", len(VOCAB) - 1), abs=1e-5)
    assert reranker.last_failure is not None and "out of data bounds" in reranker.last_failure
    reranker.score(POISON, ["car", "dog"])  # a poisoned query fails every pair
    assert reranker.rerank_failures == 3


def test_the_late_encoder_keeps_every_unpadded_token(tmp_path: Path, late_class: type[OnnxLateEncoder]) -> None:
    files = TinyModel(save(token_model(), tmp_path / "colbert.onnx"), write_tokenizer(tmp_path / "tok.json"))
    encoder = late_class(files.model, files.tokenizer, name="tiny-colbert")
    assert isinstance(encoder, LateEncoder) and encoder.dimension == DIMENSION
    short, long = encoder.encode_documents(["cat", " ".join(["car"] * 30)])
    assert short.shape == (3, DIMENSION) and long.shape == (32, DIMENSION)
    table = embedding_table(len(VOCAB))
    expected = table[_ids("cat")] / np.linalg.norm(table[_ids("cat")], axis=1, keepdims=True)
    np.testing.assert_allclose(short, expected, atol=1e-6)
    query = encoder.encode_query("cat")
    assert maxsim(query, short) == pytest.approx(3.0, abs=1e-5)  # every query token finds itself


def test_a_raising_text_gives_a_counted_empty_matrix(tmp_path: Path, late_class: type[OnnxLateEncoder]) -> None:
    short = save(token_model(len(VOCAB) - 1), tmp_path / "short.onnx")
    encoder = late_class(short, write_tokenizer(tmp_path / "tok.json"))
    matrices = encoder.encode_documents(["car", f"the {POISON}", "dog"])
    assert [m.shape[0] for m in matrices] == [3, 0, 3] and encoder.late_failures == 1
    assert encoder.encode_query(POISON).shape == (0, DIMENSION) and encoder.late_failures == 2


def test_a_separate_query_side_is_used_when_declared(tmp_path: Path, late_class: type[OnnxLateEncoder]) -> None:
    tokenizer = write_tokenizer(tmp_path / "tok.json")
    document = save(token_model(), tmp_path / "doc.onnx")
    query_side = save(token_model(len(VOCAB) - 1), tmp_path / "query.onnx")
    env = {
        "UNDERCROFT_COLBERT_MODEL": str(document),
        "UNDERCROFT_COLBERT_QUERY_MODEL": str(query_side),
        "UNDERCROFT_COLBERT_TOKENIZER": str(tokenizer),
        "UNDERCROFT_COLBERT_NAME": "colbertv2",
    }
    encoder = late_class.from_env(env)
    assert encoder.name == "colbertv2"
    assert encoder.encode_documents([POISON])[0].shape[0] == 3  # the document side has the row
    assert encoder.encode_query(POISON).shape[0] == 0 and encoder.late_failures == 1  # the query side does not


def test_missing_role_files_refuse_naming_their_variables(
    cross: TinyModel, tmp_path: Path, cross_class: type[OnnxCrossEncoder], late_class: type[OnnxLateEncoder]
) -> None:
    with pytest.raises(ModelUnavailable, match=r"^UNDERCROFT_RERANK_MODEL is not set"):
        cross_class.from_env({"UNDERCROFT_RERANK_TOKENIZER": str(cross.tokenizer)})
    with pytest.raises(ModelUnavailable, match=r"^UNDERCROFT_RERANK_TOKENIZER="):
        cross_class(cross.model, tmp_path / "absent.json")
    with pytest.raises(ModelUnavailable, match=r"^UNDERCROFT_COLBERT_QUERY_MODEL="):
        late_class.from_env(
            {
                "UNDERCROFT_COLBERT_MODEL": str(cross.model),
                "UNDERCROFT_COLBERT_TOKENIZER": str(cross.tokenizer),
                "UNDERCROFT_COLBERT_QUERY_MODEL": str(tmp_path / "absent.onnx"),
            }
        )
    reranker = cross_class.from_env(
        {"UNDERCROFT_RERANK_MODEL": str(cross.model), "UNDERCROFT_RERANK_TOKENIZER": str(cross.tokenizer)}
    )
    assert reranker.name == "onnx-reranker"
