"""Embedding rows at rest: int8 codes with a float32 scale, sealed under ``{id}/emb`` in sealed vaults."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray
from undercroft_core.embedder import Embedder
from undercroft_core.quantisation import QuantisedVectors, quantise_int8

from undercroft_store.errors import EmbeddingRefused

__all__ = ["EXACT_SLICE_CHARS", "embed_quantised", "pack_rows", "quantise_supplied", "unpack_row"]

_SCALE_BYTES = 4
#: Characters per call of an exact (hash-family) embedder: its feature arrays stay in cache below ~32k.
EXACT_SLICE_CHARS = 16_384


def quantise_supplied(vector: object, dimension: int, what: str) -> QuantisedVectors:
    """Validate a caller-supplied vector (shape, dimension, finiteness) and quantise it."""
    try:
        array = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError):
        raise EmbeddingRefused(f"{what}: the vector is not numeric") from None
    if array.ndim != 1:
        raise EmbeddingRefused(f"{what}: the vector must be one-dimensional, got shape {array.shape}")
    if array.shape[0] != dimension:
        raise EmbeddingRefused(
            f"{what}: the vector has dimension {array.shape[0]}, the vault's embedder has {dimension}"
        )
    if not np.isfinite(array).all():
        raise EmbeddingRefused(f"{what}: the vector holds a non-finite value (NaN or infinity)")
    return quantise_int8(array.astype(np.float32)[np.newaxis, :])


def _slices(texts: Sequence[str], budget: int) -> list[list[str]]:
    """Consecutive runs of `texts`, each closed once it holds `budget` characters (a longer text runs alone)."""
    runs: list[list[str]] = []
    run: list[str] = []
    size = 0
    for text in texts:
        run.append(text)
        size += len(text)
        if size >= budget:
            runs.append(run)
            run, size = [], 0
    if run:
        runs.append(run)
    return runs


def _embed_exact(exact: Callable[[list[str]], object], texts: Sequence[str]) -> QuantisedVectors | None:
    """The exact int8 form, in cache-sized slices joined in order; None when the embedder declines."""
    parts: list[QuantisedVectors] = []
    for run in _slices(texts, EXACT_SLICE_CHARS) or [[]]:
        result = exact(run)
        if not isinstance(result, QuantisedVectors):
            return None
        parts.append(result)
    if len(parts) == 1:
        return parts[0]
    return QuantisedVectors(
        codes=np.concatenate([part.codes for part in parts]), scales=np.concatenate([part.scales for part in parts])
    )


def embed_quantised(embedder: Embedder, texts: Sequence[str]) -> QuantisedVectors:
    """Embed a batch to the at-rest int8 form (the embedder's exact form when it offers one).

    The exact form is the vectorised hash family: every text is embedded independently, so slicing the
    batch changes no byte, while one call over a whole 500-drawer batch spills its working arrays out of
    cache and costs ~2x per drawer (measured in benchmarks/bench_store.py).
    """
    exact = getattr(embedder, "embed_int8", None)
    if callable(exact):
        result = _embed_exact(exact, texts)
        if result is not None:
            return result
    matrix: NDArray[np.float32] = embedder.embed(list(texts))
    if matrix.shape != (len(texts), embedder.dimension):
        raise EmbeddingRefused(f"embedder returned shape {matrix.shape}, expected {(len(texts), embedder.dimension)}")
    if not np.isfinite(matrix).all():
        raise EmbeddingRefused("embedder returned a non-finite vector")
    return quantise_int8(matrix)


def pack_rows(quantised: QuantisedVectors) -> list[bytes]:
    """Each row as ``float32-LE scale ‖ int8 codes`` (core's pack_int8 layout)."""
    scales = quantised.scales.astype("<f4")
    return [scales[i].tobytes() + quantised.codes[i].tobytes() for i in range(quantised.codes.shape[0])]


def unpack_row(blob: bytes, dimension: int) -> tuple[float, NDArray[np.int8]]:
    """The scale and codes of one packed row (length and scale checked)."""
    if len(blob) != _SCALE_BYTES + dimension:
        raise EmbeddingRefused(f"packed embedding is {len(blob)} bytes, expected {_SCALE_BYTES + dimension}")
    scale = float(np.frombuffer(blob[:_SCALE_BYTES], dtype="<f4")[0])
    if not np.isfinite(scale) or scale < 0:
        raise EmbeddingRefused(f"packed embedding has an invalid scale {scale!r}")
    return scale, np.frombuffer(blob[_SCALE_BYTES:], dtype=np.int8)
