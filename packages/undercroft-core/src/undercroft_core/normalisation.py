"""Verbatim-preserving normalisation, versioned so an id can name the recipe that produced its content.

It changes only what is not a word: a leading byte-order mark, line endings (CRLF and lone CR become LF),
C0 control characters other than tab and newline, DEL, and surrounding whitespace of the whole text. It
never changes a letter, a digit, a punctuation mark, spacing inside the text, or Unicode composition (NFC
is a tokeniser's business: the stored words are the code points the writer sent).
"""

from __future__ import annotations

import re
import unicodedata

from undercroft_core.errors import InvalidInput

__all__ = ["NORMALIZE_VERSION", "SUPPORTED_NORMALIZE_VERSIONS", "is_blank", "normalise"]

#: The version of :func:`normalise` this build applies; recorded on every drawer as ``normalize_version``.
NORMALIZE_VERSION = 1
#: Versions a stored drawer may carry (this build can read them back; only the current one is produced).
SUPPORTED_NORMALIZE_VERSIONS: frozenset[int] = frozenset({1})

_BYTE_ORDER_MARK = "\ufeff"
_LINE_ENDINGS = re.compile(r"\r\n?")
# Tab (\x09) and newline (\x0a) are kept; every other C0 control and DEL is dropped.
_CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def normalise(text: object) -> str:
    """Return ``text`` normalised by recipe :data:`NORMALIZE_VERSION` (pure; idempotent).

    Raises :class:`InvalidInput` for a non-string or text carrying lone surrogates (not encodable as UTF-8).
    An empty result is returned as ``""``; refusing empty content is the caller's decision.
    """
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a string, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidInput(f"text is not valid Unicode: lone surrogate at position {error.start}") from None
    text = _LINE_ENDINGS.sub("\n", text)
    text = _CONTROL_CHARACTERS.sub("", text)
    # Byte-order marks and whitespace interleaved at the start all go, so the recipe is idempotent.
    text = text.lstrip()
    while text.startswith(_BYTE_ORDER_MARK):
        text = text[1:].lstrip()
    return text.rstrip()


# Invisible characters that are not category Cf: the combining grapheme joiner, the Hangul and Khmer
# fillers and inherent vowels, the Mongolian variation selectors and the variation selectors.
_INVISIBLE = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0"
    + "".join(chr(c) for c in range(0xFE00, 0xFE10))
    + "".join(chr(c) for c in range(0xE0100, 0xE01F0))
)


def is_blank(text: str) -> bool:
    """True when ``text`` holds no visible character: only whitespace and invisible code points.

    Invisible means a format character (category Cf: zero-width space and joiners, word joiner, byte-order
    mark, bidi controls, soft hyphen, tags) or a filler/variation selector. A save of ``"\u200b\u200d"`` is
    as empty as a save of ``"   "``, so every surface refuses both with the same rule.
    """
    return all(ch.isspace() or ch in _INVISIBLE or unicodedata.category(ch) == "Cf" for ch in text)
