"""Closed-class words per language: the ones that vote in resolution, and the ones a search does not score.

*Function words* are each table's distinctive closed-class words — what `resolve_language` counts.
*Stop words* are the function words plus the table's further closed-class words that carry no topic
but are too widely shared to vote (English ``a``, ``in``, ``it``, ``is``). Search scores a query's other
words (`content_words`); a query made only of stop words keeps them all.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from undercroft_core.language.morphology import require_language

__all__ = ["content_words", "function_words", "stop_words"]


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
