"""Per-payload zstd frames (no shared dictionary) with a hard decode bound; one codec pair per thread."""

from __future__ import annotations

import threading

import zstandard

__all__ = ["compress", "decompress_bounded", "frame_size"]

_LEVEL = 3
_local = threading.local()


def _compressor() -> zstandard.ZstdCompressor:
    codec: zstandard.ZstdCompressor | None = getattr(_local, "compressor", None)
    if codec is None:
        # content size in the frame header lets the decoder size its buffer exactly
        codec = zstandard.ZstdCompressor(level=_LEVEL, write_content_size=True, write_checksum=False)
        _local.compressor = codec
    return codec


def _decompressor() -> zstandard.ZstdDecompressor:
    codec: zstandard.ZstdDecompressor | None = getattr(_local, "decompressor", None)
    if codec is None:
        codec = zstandard.ZstdDecompressor()
        _local.decompressor = codec
    return codec


def compress(data: bytes) -> bytes:
    """One self-contained zstd frame for `data`."""
    return _compressor().compress(data)


def frame_size(frame: bytes) -> int:
    """The content size the frame header declares; -1 when absent. Raises ValueError on a bad header."""
    try:
        return int(zstandard.frame_content_size(frame))
    except zstandard.ZstdError as exc:
        raise ValueError(f"not a zstd frame: {exc}") from exc


def decompress_bounded(frame: bytes, declared: int) -> bytes:
    """Decode `frame` into exactly `declared` bytes (already checked against the bound by the caller)."""
    try:
        out = _decompressor().decompress(frame, max_output_size=declared)
    except zstandard.ZstdError as exc:
        raise ValueError(f"zstd frame does not decode: {exc}") from exc
    if len(out) != declared:
        raise ValueError(f"zstd frame decoded to {len(out)} bytes, header declared {declared}")
    return out
