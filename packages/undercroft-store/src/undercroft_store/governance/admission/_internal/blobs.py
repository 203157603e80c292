"""Decoding candidate encoded runs: a run trips `encoded-blob` only when it decodes to readable text.

Random tokens, digests and key material decode to binary and pass; a sentence hidden in base64, hex or
percent-encoding decodes to text and does not.
"""

from __future__ import annotations

import base64
import binascii
import re
import urllib.parse
from typing import Final

__all__ = ["decodes_to_text", "readable"]

_MIN_DECODED: Final = 16
_PRINTABLE_SHARE: Final = 0.95
_LETTER_SHARE: Final = 0.6


def readable(data: bytes) -> bool:
    """True for at least 16 bytes of strict UTF-8 that is ≥ 95 % printable and ≥ 60 % letters or spaces."""
    if len(data) < _MIN_DECODED:
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    printable = sum(1 for character in text if character.isprintable() or character in "\t\n\r")
    letters = sum(1 for character in text if character.isalpha() or character == " ")
    return printable >= _PRINTABLE_SHARE * len(text) and letters >= _LETTER_SHARE * len(text)


def _base64(run: str) -> bytes | None:
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    alphabet = padded.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(alphabet, validate=True)
    except binascii.Error:
        return None


def _hex(run: str) -> bytes | None:
    digits = run.replace("\\x", "")
    try:
        return bytes.fromhex(digits)
    except ValueError:
        return None


def _percent(run: str) -> bytes:
    return urllib.parse.unquote_to_bytes(run)


_DECODERS: Final = {"base64": _base64, "hex": _hex, "percent": _percent}
_HEX_ONLY: Final = re.compile(r"[0-9A-Fa-f]+")


def decodes_to_text(kind: str, run: str) -> bool:
    """Whether the `kind` run ("base64", "hex" or "percent") decodes to readable text."""
    if kind == "base64" and _HEX_ONLY.fullmatch(run):
        return False  # a pure hex run is scanned as hex, where it means what it says
    decoded = _DECODERS[kind](run)
    return decoded is not None and readable(decoded)
