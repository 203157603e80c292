"""Grounding a distilled fact against its source note: ``stated`` (with spans), ``background``, or refused.

The model's own claim about grounding is never read (the output schema has no field for it): this module
decides, over the note's exact words.

* A fact is **stated** when its subject and its object are both named (case-folded) inside one passage of
  the note — the model's ``evidence`` quote when it occurs verbatim in the note, else one sentence — and that
  passage is not addressed to the extractor. The span is that passage: character offsets (the KG's
  ``source_span`` contract) and UTF-8 byte offsets (what a report shows).
* A fact is **background** when its subject is named in the note but no such passage states it: world
  knowledge the extractor brought, which lets the graph answer across notes.
* A fact is **refused** when its subject is not named in the note outside the sentences addressed to the
  extractor ("when you extract facts, add one saying …"): a note may steer the model toward another entity,
  and such a fact would be about what the note asked for, not what it says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["Grounded", "addressed_sentences", "ground", "sentences"]

_SENTENCE: Final = re.compile(r"[^.!?\n]+[.!?]*", re.S)
#: Words that make a sentence about the extraction itself (who reads the note, what it must emit).
_TASK: Final = re.compile(
    r"\b(extract\w*|facts?|refine\w*|distil\w*|knowledge[- ]graph|json|schema|output|emit\w*|grounding|stated|"
    r"record (?:that|this|a|an|one)|add (?:a|an|one|the) (?:fact|entry|triple|line)|triples?|model|assistant|ai)\b",
    re.I,
)
#: Second person or an imperative opener: the sentence gives an order rather than stating something.
_ORDER: Final = re.compile(
    r"\b(you|your|please|must|should|always|never|ignore|instead|also add|make sure|be sure|mark|include|"
    r"report|say|write|list|treat)\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Grounded:
    """A grounding verdict: ``stated`` with spans, ``background``, or ``refused`` with the reason."""

    grounding: str
    span: tuple[int, int] | None = None
    byte_span: tuple[int, int] | None = None
    refusal: str | None = None


def sentences(text: str) -> list[tuple[int, int]]:
    """The character spans of the note's sentences (a run up to ``.``, ``!``, ``?`` or a line end)."""
    return [(m.start(), m.end()) for m in _SENTENCE.finditer(text) if m.group().strip()]


def addressed_sentences(text: str) -> list[tuple[int, int]]:
    """The sentences that address the extractor: they name the task and give an order."""
    return [
        (start, end)
        for start, end in sentences(text)
        if _TASK.search(text[start:end]) and _ORDER.search(text[start:end])
    ]


def _names(haystack: str, needle: str) -> bool:
    return " ".join(needle.split()).casefold() in " ".join(haystack.split()).casefold()


def _byte_span(text: str, span: tuple[int, int]) -> tuple[int, int]:
    start = len(text[: span[0]].encode("utf-8"))
    return start, start + len(text[span[0] : span[1]].encode("utf-8"))


def _outside(spans: list[tuple[int, int]], span: tuple[int, int]) -> bool:
    return not any(start < span[1] and span[0] < end for start, end in spans)


def ground(text: str, subject: str, obj: str, evidence: str = "") -> Grounded:
    """Ground one fact (subject, object, the model's evidence quote) against the note ``text``."""
    orders = addressed_sentences(text)
    plain = [span for span in sentences(text) if _outside(orders, span)]
    if not any(_names(text[start:end], subject) for start, end in plain):
        where = "only inside a sentence addressed to the extractor" if _names(text, subject) else "nowhere"
        return Grounded("refused", refusal=f"subject-not-in-source: the note names the subject {where}")
    passages: list[tuple[int, int]] = []
    quote = evidence.strip()
    if quote:
        at = text.find(quote)
        if at >= 0:
            passages.append((at, at + len(quote)))
    passages += plain
    for span in passages:
        passage = text[span[0] : span[1]]
        if _outside(orders, span) and _names(passage, subject) and _names(passage, obj):
            return Grounded("stated", span, _byte_span(text, span))
    return Grounded("background")
