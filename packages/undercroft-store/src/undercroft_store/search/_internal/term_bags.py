"""A drawer's bag of normalised terms, its letter scripts and the language it reads as, with an exact fast
path for ASCII text.

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

from undercroft_core.language import LanguageResolution, resolve_counts, tokenize

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
    """Term counts of one text, its length in terms, the letter scripts it is written in and, per letter
    script, how many of its tokens (first-seen order: what language resolution reads)."""

    counts: Counter[str]
    length: int
    scripts: frozenset[str]
    script_tokens: tuple[tuple[str, int], ...] = ()

    def resolution(self) -> LanguageResolution:
        """The language this text says it is: its script, else its function words — a one-sentence text may
        lean (`undercroft_core.language.resolve_counts` with ``lean``; docs/languages.md)."""
        return resolve_counts(self.counts, dict(self.script_tokens), lean=True)


def _read(text: str) -> tuple[list[str], frozenset[str], tuple[tuple[str, int], ...]]:
    plain = text if text.isascii() else _separators_only(text)
    if plain is not None:
        found = _ASCII_RUN.findall(plain.lower())
        lettered = sum(term[0].isalpha() for term in found)
        return found, frozenset({"latin"}) if lettered else frozenset(), (("latin", lettered),) if lettered else ()
    tokens = tokenize(text)
    per_script = Counter(token.script for token in tokens)
    for unlettered in _LETTERED_SCRIPTS_EXCLUDED & per_script.keys():
        del per_script[unlettered]
    return [token.text for token in tokens], frozenset(per_script), tuple(per_script.items())


def term_list(text: str) -> tuple[list[str], frozenset[str]]:
    """The text's normalised terms in order and its letter scripts (numbers are not a letter script)."""
    found, scripts, _ = _read(text)
    return found, scripts


def term_bag(text: str) -> TermBag:
    """Count the terms of ``text``."""
    found, scripts, script_tokens = _read(text)
    return TermBag(Counter(found), len(found), scripts, script_tokens)
