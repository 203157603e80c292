"""Fixed binary framings shared by the AAD, tag, chain, manifest MAC and witness encodings."""

from __future__ import annotations

import struct

__all__ = ["AAD_PREFIX", "aad_prefix", "lp", "u64"]

AAD_PREFIX = b"undercroft.aad.v1"

_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")


def lp(data: bytes) -> bytes:
    """Length-prefix `data`: a 4-byte big-endian length, then the bytes (unambiguous concatenation)."""
    return _U32.pack(len(data)) + data


def u64(value: int) -> bytes:
    """Encode a non-negative integer as 8 big-endian bytes."""
    return _U64.pack(value)


def aad_prefix(vault_id: str) -> bytes:
    """The vault-bound head of every AAD: ``b"undercroft.aad.v1" ‖ lp(vault_id)`` (id already validated)."""
    return AAD_PREFIX + lp(vault_id.encode("ascii"))
