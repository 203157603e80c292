"""The onnx sentence embedder: one CPU session, mean-pool + L2, batched by token length, calibrated on its own.

Reads ``UNDERCROFT_ONNX_MODEL`` / ``_TOKENIZER`` / ``_NAME`` (:meth:`OnnxEmbedder.from_env`); a missing file
refuses naming the variable. The identity is the declared name (or a digest of the two files) at the
dimension probed from the model. The admission gate and the semantic floor are measured once, lazily, from
core's probe pairs (worst + 0.06; the mean). A failed inference degrades to a counted zero vector.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import onnxruntime
from numpy.typing import NDArray
from undercroft_core.calibration import measure_admission_gate, measure_semantic_floor
from undercroft_core.embedder import DegradingEmbedder, EmbedderIdentity
from undercroft_core.model_roles import mean_pool

from undercroft_embed_onnx.errors import ModelUnavailable
from undercroft_embed_onnx.text_model import Batch, Mapper, TextModel, default_name, model_file, run_sorted, sequential

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_TOKENS",
    "MODEL_VARIABLE",
    "NAME_VARIABLE",
    "TOKENIZER_VARIABLE",
    "OnnxEmbedder",
    "pooled_rows",
]

MODEL_VARIABLE = "UNDERCROFT_ONNX_MODEL"
TOKENIZER_VARIABLE = "UNDERCROFT_ONNX_TOKENIZER"
NAME_VARIABLE = "UNDERCROFT_ONNX_NAME"
#: Truncation length (MiniLM-class models were trained at 256 word pieces).
DEFAULT_MAX_TOKENS = 256
#: Texts per forward at ingest.
DEFAULT_BATCH_SIZE = 32


def pooled_rows(output: NDArray[np.float32], mask: NDArray[np.integer]) -> NDArray[np.float32]:
    """Sentence vectors from a model output: token states are mean-pooled, a pooled output is L2-normalised."""
    if output.ndim == 3:
        return mean_pool(output, mask)
    if output.ndim == 2:
        norms = np.linalg.norm(output, axis=1, keepdims=True)
        return np.ascontiguousarray(output / np.where(norms > 0.0, norms, 1.0), dtype=np.float32)
    raise ValueError(f"model output has shape {output.shape}; expected (batch, tokens, dim) or (batch, dim)")


class OnnxEmbedder(DegradingEmbedder):
    """A sentence embedder on onnxruntime's CPU provider: one session, default options, no tuning."""

    def __init__(
        self,
        model: Path | str,
        tokenizer: Path | str,
        *,
        name: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        model_path, tokenizer_path = Path(model), Path(tokenizer)
        for path, variable in ((model_path, MODEL_VARIABLE), (tokenizer_path, TOKENIZER_VARIABLE)):
            if not path.is_file():
                raise ModelUnavailable(f"{variable}={path}: no such file (nothing is downloaded)")
        if batch_size < 1:
            raise ModelUnavailable(f"batch_size must be at least 1, got {batch_size}")
        self._model = TextModel(
            model_path,
            tokenizer_path,
            model_variable=MODEL_VARIABLE,
            tokenizer_variable=TOKENIZER_VARIABLE,
            max_tokens=max_tokens,
            session=self._first_session(model_path),
        )
        self._batch_size = batch_size
        dimension = self._probe_dimension(model_path)
        super().__init__(EmbedderIdentity(name or default_name(model_path, tokenizer_path), dimension))
        self._calibration_lock = threading.Lock()
        self._gate: tuple[float | None] | None = None
        self._floor: float | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> OnnxEmbedder:
        """Build from ``UNDERCROFT_ONNX_MODEL``, ``_TOKENIZER`` and ``_NAME`` (default ``os.environ``)."""
        source = os.environ if env is None else env
        model = model_file(source, MODEL_VARIABLE, "a model.onnx")
        tokenizer = model_file(source, TOKENIZER_VARIABLE, "a tokenizer.json")
        return cls(model, tokenizer, name=source.get(NAME_VARIABLE, "").strip() or None)

    def _first_session(self, model: Path) -> onnxruntime.InferenceSession | None:
        """The session the model runs on (None: one CPU session with defaults); the tuned runtime overrides it."""
        return None

    def _mapper(self) -> Mapper:
        """How the batches of one call run: in turn on the one session; the tuned runtime fans them out."""
        return sequential(self._model.session)

    def _probe_dimension(self, model: Path) -> int:
        outputs = {node.name: node.shape for node in self._model.session.get_outputs()}
        declared = outputs[self._model.output][-1] if outputs[self._model.output] else None
        if isinstance(declared, int) and declared > 0:
            return declared
        try:
            return int(self._forward(["dimension probe"]).shape[1])
        except Exception as error:  # noqa: BLE001 - a model that cannot embed one word is refused, not degraded
            raise ModelUnavailable(f"{MODEL_VARIABLE}={model}: probing the dimension failed ({error})") from None

    @property
    def semantic_admission_gate(self) -> float | None:
        """Measured once from the probe pairs (worst + 0.06); None when a probe embedded to zero."""
        with self._calibration_lock:
            if self._gate is None:
                self._gate = (measure_admission_gate(self),)
            return self._gate[0]

    @property
    def semantic_floor(self) -> float:
        """Measured once from the probe pairs (their mean cosine); 0.0 when a probe embedded to zero."""
        with self._calibration_lock:
            if self._floor is None:
                measured = measure_semantic_floor(self)
                self._floor = 0.0 if measured is None else measured
            return self._floor

    def _forward(self, texts: list[str]) -> NDArray[np.float32]:
        encodings = self._model.encode(texts)

        def job(session: onnxruntime.InferenceSession, chunk: list[int]) -> NDArray[np.float32]:
            batch = Batch([encodings[index] for index in chunk], self._model.pad_id)
            return pooled_rows(self._model.forward(batch, session), batch.mask)

        ran = run_sorted([len(e.ids) for e in encodings], self._batch_size, job, self._mapper())
        if not ran:
            return np.zeros((0, 0), dtype=np.float32)
        matrix = np.zeros((len(texts), np.asarray(ran[0][1]).shape[1]), dtype=np.float32)
        for chunk, rows in ran:
            matrix[chunk] = np.asarray(rows)
        return matrix

    def _embed_batch(self, texts: list[str]) -> NDArray[np.floating]:
        return self._forward(texts)
