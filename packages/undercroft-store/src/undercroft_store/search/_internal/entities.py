"""Entities read from a drawer's own words at read time: runs of capitalised words that do not open a sentence.

A rule, not a model (the labeling doctrine's cheapest tier): deterministic, free at write, and retroactive.
"""

from __future__ import annotations

import re
from typing import Final

from undercroft_core.drawer import Entity

_CAPITALISED: Final = re.compile(r"\b[A-Z][\w'’-]*[A-Za-z0-9](?:\s+[A-Z][\w'’-]*[A-Za-z0-9])*")
_OPENERS: Final = frozenset(
    "A An And As At But By For From He Her His How I If In It Its My No Not Of Oh On Or Our She So That The Their "
    "Then There These They This To We What When Where Which Who Why Yes You Your Yeah Hey Hi Thanks Wow".split()
)
_SENTENCE_END: Final = re.compile(r"[.!?\n\"“]\s*$")


def read_entities(text: str, limit: int = 32) -> tuple[Entity, ...]:
    """Capitalised runs in ``text`` (a leading opener word such as "The" is dropped), first occurrence each."""
    found: list[Entity] = []
    seen: set[str] = set()
    for match in _CAPITALISED.finditer(text):
        words = match.group().split()
        start = match.start()
        while words and words[0] in _OPENERS:
            start = text.index(words[0], start) + len(words[0])
            words = words[1:]
            while start < len(text) and text[start].isspace():
                start += 1
        if not words:
            continue
        name = " ".join(words)
        opens_sentence = start == 0 or _SENTENCE_END.search(text[:start]) is not None
        if (opens_sentence and len(words) == 1) or len(name) < 2 or name in seen:
            continue
        seen.add(name)
        found.append(Entity(name=name, start=start, end=match.end()))
        if len(found) >= limit:
            break
    return tuple(found)
