"""A tokenizer and an ONNX Runtime session, glued: files by variable, our own truncation and padding.

Public because undercroft-embed-ort runs the same roles on the same runtime (only its sessions and its batch
fan-out differ), so it builds on this module rather than keeping a copy of it.

The shipped tokenizer.json may pad and truncate to a fixed length (MiniLM's pads everything to 128): both
are overridden here — truncation at ``max_tokens``, padding per batch to its own longest text — so a short
drawer costs a short forward and a long one is not cut at 128. Texts are sorted by token length and run
in batches of similar length, so padding stays small; results return in the callers' order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import onnxruntime
from numpy.typing import NDArray
from tokenizers import Encoding, Tokenizer

from undercroft_embed_onnx.errors import ModelUnavailable

__all__ = ["Batch", "Job", "TextModel", "default_name", "model_file", "open_session", "run_sorted", "sequential"]

T = TypeVar("T")
#: One forward's work: a session and the callers' indices of one length-sorted batch → its result.
Job = Callable[[onnxruntime.InferenceSession, list[int]], T]
#: How a role runs its jobs: in turn on one session (onnx) or fanned across a session pool (ort).
Mapper = Callable[[Job[object], Sequence[list[int]]], list[object]]

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_HIDDEN_OUTPUTS = ("last_hidden_state", "token_embeddings")


def model_file(env: Mapping[str, str], variable: str, what: str) -> Path:
    """The existing file ``variable`` names, or a refusal naming the variable (nothing is ever downloaded)."""
    raw = env.get(variable, "").strip()
    if not raw:
        raise ModelUnavailable(f"{variable} is not set: point it at {what} on this disk (nothing is downloaded)")
    path = Path(raw).expanduser()
    if not path.is_file():
        raise ModelUnavailable(f"{variable}={raw}: no such file ({what}; nothing is downloaded)")
    return path


def default_name(model: Path, tokenizer: Path) -> str:
    """The identity recorded when no name is declared: a digest of the model and tokenizer bytes.

    A content digest rather than a path, so moving the files keeps the identity, swapping either one changes
    it (a silent swap is refused), and the onnx and ort runtimes record the same space for the same files.
    """
    digest = hashlib.sha256()
    for path in (model, tokenizer):
        with path.open("rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    return f"onnx-sha256-{digest.hexdigest()[:16]}"


def run_sorted(lengths: Sequence[int], size: int, job: Job[T], mapper: Mapper) -> list[tuple[list[int], T]]:
    """Texts sorted by token length, cut into batches of ``size``, each run by ``job`` through ``mapper``.

    Similar lengths share a batch so padding stays small; each result comes back with the callers' indices
    of its batch, so the caller puts it back in its own order."""
    order = sorted(range(len(lengths)), key=lambda index: lengths[index])
    chunks = [order[start : start + size] for start in range(0, len(order), size)]
    results = mapper(job, chunks)
    return [(chunk, result) for chunk, result in zip(chunks, results, strict=True)]  # type: ignore[misc]


def sequential(session: onnxruntime.InferenceSession) -> Mapper:
    """The portable mapper: every job in turn on ``session``."""

    def run(
        job: Callable[[onnxruntime.InferenceSession, list[int]], object], chunks: Sequence[list[int]]
    ) -> list[object]:
        return [job(session, chunk) for chunk in chunks]

    return run


class Batch:
    """Token ids, attention mask and token types of a batch, right-padded to its longest row."""

    def __init__(self, encodings: Sequence[Encoding], pad_id: int) -> None:
        width = max((len(encoding.ids) for encoding in encodings), default=0)
        self.ids = np.full((len(encodings), width), pad_id, dtype=np.int64)
        self.mask = np.zeros((len(encodings), width), dtype=np.int64)
        self.types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            length = len(encoding.ids)
            self.ids[row, :length] = encoding.ids
            self.mask[row, :length] = 1
            self.types[row, :length] = encoding.type_ids


class TextModel:
    """One tokenizer and one session; :meth:`forward` returns the model's token (or pooled) output."""

    def __init__(
        self,
        model: Path,
        tokenizer: Path,
        *,
        model_variable: str,
        tokenizer_variable: str,
        max_tokens: int,
        session: onnxruntime.InferenceSession | None = None,
    ) -> None:
        if not 2 <= max_tokens <= 8192:
            raise ModelUnavailable(f"max_tokens must be in [2, 8192], got {max_tokens}")
        self.tokenizer, self.pad_id = _load_tokenizer(tokenizer, tokenizer_variable, max_tokens)
        self.session = session if session is not None else open_session(model, model_variable)
        self.inputs = _input_plan(self.session, model, model_variable)
        self.output = _output_name(self.session)

    def encode(self, texts: Sequence[str | tuple[str, str]]) -> list[Encoding]:
        """Tokenise (single texts or (query, passage) pairs), truncated at ``max_tokens``, unpadded."""
        return list(self.tokenizer.encode_batch(list(texts)))

    def forward(self, batch: Batch, session: onnxruntime.InferenceSession | None = None) -> NDArray[np.float32]:
        """Run ``session`` (default this model's own) on one padded batch: the token-state output, else the first."""
        feed: dict[str, NDArray[np.integer]] = {}
        for name, kind, dtype in self.inputs:
            source = batch.ids if kind == "input_ids" else batch.mask if kind == "attention_mask" else batch.types
            feed[name] = source.astype(dtype, copy=False)
        (result,) = (session or self.session).run([self.output], feed)
        return np.asarray(result, dtype=np.float32)


def open_session(
    model: Path, variable: str, options: onnxruntime.SessionOptions | None = None, providers: list[str] | None = None
) -> onnxruntime.InferenceSession:
    """An inference session on ``model`` (CPU provider unless told), or a refusal naming ``variable``."""
    if options is None:
        options = onnxruntime.SessionOptions()
        # A failed forward is counted and degraded by the role; the runtime's own error log would repeat it.
        options.log_severity_level = 4
    try:
        return onnxruntime.InferenceSession(
            str(model), sess_options=options, providers=providers or ["CPUExecutionProvider"]
        )
    except Exception as error:  # noqa: BLE001 - onnxruntime raises several unrelated types for a bad file
        reason = f"{type(error).__name__}: {error}"
        raise ModelUnavailable(f"{variable}={model}: onnxruntime cannot load it ({reason})") from None


def _load_tokenizer(path: Path, variable: str, max_tokens: int) -> tuple[Tokenizer, int]:
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as error:  # noqa: BLE001 - tokenizers raises a bare Exception for a malformed file
        raise ModelUnavailable(f"{variable}={path}: not a tokenizer.json ({error})") from None
    padding = tokenizer.padding
    pad_id = int(padding["pad_id"]) if padding else int(tokenizer.token_to_id("[PAD]") or 0)
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens)
    return tokenizer, pad_id


def _input_plan(
    session: onnxruntime.InferenceSession, model: Path, variable: str
) -> list[tuple[str, str, type[np.integer]]]:
    plan: list[tuple[str, str, type[np.integer]]] = []
    for node in session.get_inputs():
        kind = next((known for known in _INPUTS if known in node.name), None)
        if kind is None:
            raise ModelUnavailable(
                f"{variable}={model}: model input {node.name!r} is none of {', '.join(_INPUTS)} "
                "(export a BERT-family model with optimum)"
            )
        plan.append((node.name, kind, np.int32 if node.type == "tensor(int32)" else np.int64))
    if not any(kind == "input_ids" for _, kind, _ in plan):
        raise ModelUnavailable(f"{variable}={model}: the model takes no input_ids")
    return plan


def _output_name(session: onnxruntime.InferenceSession) -> str:
    names = [str(node.name) for node in session.get_outputs()]
    return next((name for name in names if name in _HIDDEN_OUTPUTS), names[0])
