"""Closed-class words per language: the ones that vote in resolution, and the ones a search does not score.

*Function words* are each table's distinctive closed-class words — what `resolve_language` counts.
*Stop words* are the function words plus the table's further closed-class words that carry no topic
but are too widely shared to vote (English ``a``, ``in``, ``it``, ``is``). Search scores a query's other
words (`content_words`, or `without_words` for the text itself); a query made only of stop words keeps
them all.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from undercroft_core.language.morphology import require_language
from undercroft_core.language.tokens import tokenize

__all__ = ["content_words", "function_words", "stop_words", "without_words"]


def function_words(language: str) -> frozenset[str]:
    """The distinctive closed-class words of ``language`` (casefolded, NFC): the ones that vote in resolution."""
    return require_language(language).function_words


def stop_words(language: str) -> frozenset[str]:
    """Every closed-class word of ``language`` a search does not score: its function words and stop words."""
    return require_language(language).stop_words


def content_words(words: Sequence[str], closed: Collection[str]) -> list[str]:
    """``words`` without those in ``closed`` (compared casefolded), order and repeats kept.

    When nothing else would remain the words come back unchanged: a question made only of closed-class
    words is still a question."""
    kept = [word for word in words if word.casefold() not in closed]
    return kept or list(words)


def without_words(text: str, closed: Collection[str]) -> str:
    """``text`` with the spans of its tokens in ``closed`` cut out, every other character as written (so Han
    and Kana runs, which the tokeniser reads in overlapping bigrams, stay whole). ``text`` itself when no
    token, or every token, is closed."""
    tokens = tokenize(text)
    dropped = [token for token in tokens if token.text in closed]
    if not dropped or len(dropped) == len(tokens):
        return text
    pieces, cursor = [], 0
    for token in dropped:
        pieces.append(text[cursor : token.start])
        cursor = token.end
    pieces.append(text[cursor:])
    return " ".join(pieces)
