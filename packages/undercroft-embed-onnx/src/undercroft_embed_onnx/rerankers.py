"""The two second-stage roles on the portable path: a cross-encoder and a ColBERT-style late encoder.

Both take real models by path (no trained cross-encoder or ColBERT model ships offline), read their own
variables, refuse a missing file naming it, and degrade a failed inference to a counted 0.0 score
(``rerank_failures``) or an empty matrix (``late_failures``). The cross-encoder runs the whole candidate
pool as (query, passage) pairs in length-sorted batches; its score is the single logit, or the positive
class of a two-logit head. The late encoder keeps every unpadded token state, L2-normalised per row; a
separate query-side export is used when ``UNDERCROFT_COLBERT_QUERY_MODEL`` names one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Self

import numpy as np
import onnxruntime
from numpy.typing import NDArray
from undercroft_core.model_roles import DegradingCrossEncoder, DegradingLateEncoder

from undercroft_embed_onnx.errors import ModelUnavailable
from undercroft_embed_onnx.text_model import Batch, Mapper, TextModel, model_file, run_sorted, sequential

__all__ = [
    "COLBERT_MODEL_VARIABLE",
    "COLBERT_NAME_VARIABLE",
    "COLBERT_QUERY_MODEL_VARIABLE",
    "COLBERT_TOKENIZER_VARIABLE",
    "RERANK_MODEL_VARIABLE",
    "RERANK_NAME_VARIABLE",
    "RERANK_TOKENIZER_VARIABLE",
    "OnnxCrossEncoder",
    "OnnxLateEncoder",
    "pair_scores",
]

RERANK_MODEL_VARIABLE = "UNDERCROFT_RERANK_MODEL"
RERANK_TOKENIZER_VARIABLE = "UNDERCROFT_RERANK_TOKENIZER"
RERANK_NAME_VARIABLE = "UNDERCROFT_RERANK_NAME"
COLBERT_MODEL_VARIABLE = "UNDERCROFT_COLBERT_MODEL"
COLBERT_QUERY_MODEL_VARIABLE = "UNDERCROFT_COLBERT_QUERY_MODEL"
COLBERT_TOKENIZER_VARIABLE = "UNDERCROFT_COLBERT_TOKENIZER"
COLBERT_NAME_VARIABLE = "UNDERCROFT_COLBERT_NAME"
_BATCH = 32


def pair_scores(output: NDArray[np.float32]) -> NDArray[np.float32]:
    """One score per pair from a cross-encoder head: ``(b,)``, ``(b, 1)``, or ``(b, 2)`` (the positive class)."""
    if output.ndim == 1:
        return output
    if output.ndim == 2 and output.shape[1] in (1, 2):
        return np.ascontiguousarray(output[:, -1])
    raise ValueError(f"cross-encoder output has shape {output.shape}; expected (batch,), (batch, 1) or (batch, 2)")


def _checked(path: Path | str, variable: str) -> Path:
    resolved = Path(path)
    if not resolved.is_file():
        raise ModelUnavailable(f"{variable}={resolved}: no such file (nothing is downloaded)")
    return resolved


class OnnxCrossEncoder(DegradingCrossEncoder):
    """A (query, passage) scorer on one CPU session; ``UNDERCROFT_RERANK_*`` declare it."""

    def __init__(
        self, model: Path | str, tokenizer: Path | str, *, name: str = "onnx-reranker", max_tokens: int = 512
    ) -> None:
        super().__init__(name)
        model_path = _checked(model, RERANK_MODEL_VARIABLE)
        self._model = TextModel(
            model_path,
            _checked(tokenizer, RERANK_TOKENIZER_VARIABLE),
            model_variable=RERANK_MODEL_VARIABLE,
            tokenizer_variable=RERANK_TOKENIZER_VARIABLE,
            max_tokens=max_tokens,
            session=self._first_session(model_path),
        )

    def _first_session(self, model: Path) -> onnxruntime.InferenceSession | None:
        """The session the model runs on (None: one CPU session with defaults); the tuned runtime overrides it."""
        return None

    def _mapper(self) -> Mapper:
        """How one pool's batches run: in turn on the one session; the tuned runtime fans them out."""
        return sequential(self._model.session)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        """Build from ``UNDERCROFT_RERANK_MODEL``, ``_TOKENIZER`` and ``_NAME`` (default ``onnx-reranker``)."""
        source = os.environ if env is None else env
        return cls(
            model_file(source, RERANK_MODEL_VARIABLE, "a cross-encoder .onnx"),
            model_file(source, RERANK_TOKENIZER_VARIABLE, "a tokenizer.json"),
            name=source.get(RERANK_NAME_VARIABLE, "").strip() or "onnx-reranker",
        )

    def _score_batch(self, query: str, passages: list[str]) -> NDArray[np.floating]:
        encodings = self._model.encode([(query, passage) for passage in passages])

        def job(session: onnxruntime.InferenceSession, chunk: list[int]) -> NDArray[np.float32]:
            batch = Batch([encodings[index] for index in chunk], self._model.pad_id)
            return pair_scores(self._model.forward(batch, session))

        scores = np.zeros(len(passages), dtype=np.float32)
        for chunk, values in run_sorted([len(e.ids) for e in encodings], _BATCH, job, self._mapper()):
            scores[chunk] = np.asarray(values)
        return scores


class OnnxLateEncoder(DegradingLateEncoder):
    """A ColBERT-style token encoder on CPU sessions; ``UNDERCROFT_COLBERT_*`` declare it."""

    def __init__(
        self,
        model: Path | str,
        tokenizer: Path | str,
        *,
        query_model: Path | str | None = None,
        name: str = "colbert",
        max_tokens: int = 256,
    ) -> None:
        tokenizer_path = _checked(tokenizer, COLBERT_TOKENIZER_VARIABLE)
        self._document = TextModel(
            _checked(model, COLBERT_MODEL_VARIABLE),
            tokenizer_path,
            model_variable=COLBERT_MODEL_VARIABLE,
            tokenizer_variable=COLBERT_TOKENIZER_VARIABLE,
            max_tokens=max_tokens,
        )
        self._query = (
            self._document
            if query_model is None
            else TextModel(
                _checked(query_model, COLBERT_QUERY_MODEL_VARIABLE),
                tokenizer_path,
                model_variable=COLBERT_QUERY_MODEL_VARIABLE,
                tokenizer_variable=COLBERT_TOKENIZER_VARIABLE,
                max_tokens=max_tokens,
            )
        )
        probe = self._document.encode(["dimension probe"])
        try:
            width = int(self._document.forward(Batch(probe, self._document.pad_id)).shape[-1])
        except Exception as error:  # noqa: BLE001 - a model that cannot encode one word is refused, not degraded
            raise ModelUnavailable(
                f"{COLBERT_MODEL_VARIABLE}={model}: probing the dimension failed ({error})"
            ) from None
        super().__init__(name, width)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        """Build from ``UNDERCROFT_COLBERT_MODEL``, ``_QUERY_MODEL`` (optional), ``_TOKENIZER`` and ``_NAME``."""
        source = os.environ if env is None else env
        query = source.get(COLBERT_QUERY_MODEL_VARIABLE, "").strip()
        return cls(
            model_file(source, COLBERT_MODEL_VARIABLE, "a ColBERT document-encoder .onnx"),
            model_file(source, COLBERT_TOKENIZER_VARIABLE, "a tokenizer.json"),
            query_model=model_file(source, COLBERT_QUERY_MODEL_VARIABLE, "a query-encoder .onnx") if query else None,
            name=source.get(COLBERT_NAME_VARIABLE, "").strip() or "colbert",
        )

    def _encode_batch(self, texts: list[str], *, query: bool) -> list[NDArray[np.floating]]:
        side = self._query if query else self._document
        encodings = side.encode(texts)

        def job(session: onnxruntime.InferenceSession, chunk: list[int]) -> list[NDArray[np.float32]]:
            batch = Batch([encodings[index] for index in chunk], side.pad_id)
            states = side.forward(batch, session)
            if states.ndim != 3:
                raise ValueError(f"late encoder output has shape {states.shape}; expected (batch, tokens, dim)")
            return [states[row, batch.mask[row] == 1] for row in range(len(chunk))]

        matrices: list[NDArray[np.floating]] = [np.zeros((0, self.dimension), dtype=np.float32)] * len(texts)
        for chunk, rows in run_sorted([len(e.ids) for e in encodings], _BATCH, job, sequential(side.session)):
            for index, matrix in zip(chunk, rows, strict=True):
                matrices[index] = matrix
        return matrices
