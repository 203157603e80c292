"""A drawer's bag of normalised terms and its letter scripts, with an exact fast path for ASCII text.

The language layer's tokenizer is the definition; for text that is pure ASCII its output is exactly the
runs of letters (case-folded) and the runs of digits, which one compiled regex finds ~15x faster. A
property test pins the two paths equal on ASCII input.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Final

from undercroft_core.language import tokenize

_ASCII_RUN: Final = re.compile(r"[a-z]+|[0-9]+")
_LETTERED_SCRIPTS_EXCLUDED: Final = frozenset({"number"})
_NON_ASCII: Final = re.compile(r"[^\x00-\x7f]")


def _separators_only(text: str) -> str | None:
    """``text`` with its non-ASCII characters blanked when none of them is a letter, mark or digit (curly
    quotes, dashes, emoji): those only ever separate tokens, so the ASCII path then reads it exactly."""
    extra = set(_NON_ASCII.findall(text))
    if any(unicodedata.category(ch)[0] in "LMN" for ch in extra):
        return None
    return _NON_ASCII.sub(" ", text)


@dataclass(frozen=True, slots=True)
class TermBag:
    """Term counts of one text, its length in terms and the letter scripts it is written in."""

    counts: Counter[str]
    length: int
    scripts: frozenset[str]


def term_list(text: str) -> tuple[list[str], frozenset[str]]:
    """The text's normalised terms in order and its letter scripts (numbers are not a letter script)."""
    plain = text if text.isascii() else _separators_only(text)
    if plain is not None:
        found = _ASCII_RUN.findall(plain.lower())
        lettered = any(term[0].isalpha() for term in found)
        return found, frozenset({"latin"}) if lettered else frozenset()
    tokens = tokenize(text)
    scripts = frozenset(token.script for token in tokens) - _LETTERED_SCRIPTS_EXCLUDED
    return [token.text for token in tokens], scripts


def term_bag(text: str) -> TermBag:
    """Count the terms of ``text``."""
    found, scripts = term_list(text)
    return TermBag(Counter(found), len(found), scripts)
