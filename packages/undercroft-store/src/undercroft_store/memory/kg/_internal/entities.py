"""Capitalised-run entity candidates from a drawer's words (hallways, closets): a rule, not a model."""

from __future__ import annotations

import re
from collections import Counter
from typing import Final

__all__ = ["entity_counts"]

_RUN: Final = re.compile(r"\b[A-Z][\w'’-]*[A-Za-z0-9](?:\s+[A-Z][\w'’-]*[A-Za-z0-9])*")
_STOP: Final = frozenset(
    "A An And As At But By For From He Her His How I If In It Its My No Not Of Oh On Or Our She So That The "
    "Their Then There These They This Those To We What When Where Which Who Why Yes You Your Yeah Hey Hi Okay "
    "Maybe After Before Now Here User Assistant System Tool Monday Tuesday Wednesday Thursday Friday Saturday "
    "Sunday January February March April May June July August September October November December".split()
)


def entity_counts(text: str) -> Counter[str]:
    """Capitalised runs (a leading stop word dropped), counted; single stop words never count."""
    counts: Counter[str] = Counter()
    for match in _RUN.finditer(text):
        words = match.group().split()
        while words and words[0] in _STOP:
            words = words[1:]
        if words and len(" ".join(words)) >= 2:
            counts[" ".join(words)] += 1
    return counts
