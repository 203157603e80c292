"""int8 quantisation with a per-vector scale: the at-rest form of an embedding (~4x smaller than float32).

``scale = max|v| / 127``, ``code = round_half_even(v / scale)``; a zero vector has scale 0 and zero codes.
Packed layout (:func:`pack_int8`): 4-byte little-endian IEEE float32 scale, then ``dimension`` int8 codes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from undercroft_core.errors import InvalidInput

__all__ = ["QuantisedVectors", "dequantise_int8", "pack_int8", "quantise_int8", "unpack_int8"]

_SCALE_BYTES = 4


@dataclass(frozen=True, slots=True)
class QuantisedVectors:
    """Codes ``(n, d)`` int8 and scales ``(n,)`` float32: ``vector[i] ≈ codes[i] * scales[i]``."""

    codes: NDArray[np.int8]
    scales: NDArray[np.float32]


def quantise_int8(matrix: NDArray[np.floating]) -> QuantisedVectors:
    """Quantise each row of a finite ``(n, d)`` (or ``(d,)``) float matrix to int8 with its own scale."""
    values = np.asarray(matrix, dtype=np.float32)
    if values.ndim == 1:
        values = values[np.newaxis, :]
    if values.ndim != 2:
        raise InvalidInput(f"quantise_int8 takes a vector or a matrix, got {values.ndim} dimensions")
    if not np.isfinite(values).all():
        raise InvalidInput("cannot quantise a non-finite vector")
    peak = np.abs(values).max(axis=1) if values.shape[1] else np.zeros(values.shape[0], dtype=np.float32)
    scales = (peak / np.float32(127.0)).astype(np.float32)
    safe = np.where(scales > 0, scales, np.float32(1.0)).astype(np.float32)
    codes = np.clip(np.rint(values / safe[:, np.newaxis]), -127, 127).astype(np.int8)
    return QuantisedVectors(codes=codes, scales=scales)


def dequantise_int8(quantised: QuantisedVectors) -> NDArray[np.float32]:
    """The float32 matrix the codes stand for."""
    return (quantised.codes.astype(np.float32) * quantised.scales[:, np.newaxis]).astype(np.float32)


def pack_int8(vector: NDArray[np.floating]) -> bytes:
    """One vector as bytes: float32-LE scale then int8 codes."""
    quantised = quantise_int8(np.asarray(vector).reshape(1, -1))
    packed: bytes = quantised.scales.astype("<f4").tobytes() + quantised.codes[0].tobytes()
    return packed


def unpack_int8(blob: bytes, dimension: int) -> NDArray[np.float32]:
    """Inverse of :func:`pack_int8`; refuses a blob of the wrong length or a non-finite or negative scale."""
    if len(blob) != _SCALE_BYTES + dimension:
        raise InvalidInput(f"packed int8 vector is {len(blob)} bytes, expected {_SCALE_BYTES + dimension}")
    scale = np.frombuffer(blob[:_SCALE_BYTES], dtype="<f4")[0]
    if not np.isfinite(scale) or scale < 0:
        raise InvalidInput(f"packed int8 vector has an invalid scale {scale!r}")
    codes = np.frombuffer(blob[_SCALE_BYTES:], dtype=np.int8)
    return (codes.astype(np.float32) * np.float32(scale)).astype(np.float32)
