"""Where an imperative match stands: addressed to the reader, or mentioned/reported about someone else.

An override phrase is an attack when the text *says it to* the assistant that will read it back; it is a
mention when the text *talks about* it — a security review naming the payload it tested, a slide listing
jailbreak strings, a person reporting what someone told them. Two structural readings decide that, and only
for the imperative-instruction signal (a tool call or an exfiltration command is operative wherever it sits):

- **A named phrase.** The match sits inside a short quotation (straight, curly or single quotes, or inline
  backticks; at most `QUOTE_WORDS` words) that the match itself mostly fills, and the sentence around the
  quotation frames it as language — "the phrase", "payloads such as", "strings like", "said", "tested" — or
  the quotation is a string literal inside a fenced code block (a test or a filter handling the phrase).
  A long quotation is a quoted *document* and stays screened: that is how indirect injection arrives.
- **Reported speech.** The match is the infinitive complement of a third-party reporting verb ("my mentor
  said to disregard…", "attackers told the bot to ignore…", "tried to get the model to reveal…"). The verb
  must be in a reported form (past, third person, gerund) and its object must not be "you": "I need you to
  ignore…" and "Tell the assistant to ignore…" remain orders.

Both are heuristics with a stated cost (docs/admission.md): an attacker who wraps a bare override phrase in
a framed short quotation, or writes it as reported speech, is read as a mention by this signal alone.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["QUOTE_WORDS", "is_mention", "is_reported", "quotations"]

#: The most words a quotation may hold and still be read as a named phrase rather than a quoted document.
QUOTE_WORDS: Final = 12
#: The share of a quotation's characters the match must cover to be the phrase the quotation names.
_FILL: Final = 0.6

_QUOTE: Final = re.compile(
    r"\"([^\"\n]{1,200})\"|“([^”\n]{1,200})”|‘([^’\n]{1,200})’|«([^»\n]{1,200})»|`([^`\n]{1,200})`"
    r"|(?<![\w'])'((?:[^'\n]|'(?=\w))+?)'(?![\w'])"
)
_WORD: Final = re.compile(r"\w+")
_SENTENCE_END: Final = re.compile(r"[.!?;\n]")
#: Words that frame a quotation as language being discussed rather than said to the reader.
_FRAME: Final = re.compile(
    r"\b(?:phrases?|strings?|payloads?|prompts?|texts?|lines?|words?|wording|messages?|examples?|e\.g\.|such\s+as"
    r"|like|including|included|includes|contain(?:s|ed|ing)?|quot(?:e|es|ed|ing)|classic|said|says|saying|wrote"
    r"|writes|typed|pasted|read|reads|called|known|jailbreaks?|injections?|attacks?|attempts?|patterns?|filters?"
    r"|tests?|tested|testing|signatures?|rules?\s+for|flags?|flagged|blocks?|blocked|catches|caught|logs?|logged"
    r"|variants?|overrides?|asked|asks|told|tells)\b",
    re.IGNORECASE,
)
_REPORTING_VERB: Final = (
    r"(?:said|says|saying|told|tells|telling|asked|asks|asking|instructed|instructs|instructing|tried|tries|trying"
    r"|attempted|attempts|attempting|convinced|convinces|convincing|persuaded|persuades|persuading|tricked|tricks"
    r"|tricking|urged|urges|urging|got|gets|getting|made|makes|making|coaxed|coaxes|coaxing|forced|forces|forcing"
    r"|warned|warns|warning|reminded|reminds|reminding|advised|advises|advising|wanted|wants|expected|expects"
    r"|meant|means|managed|manages|able|unable)"
)
#: A reporting verb, up to four words of a third-party object (never "you"/"your"), then "to" or the bare
#: infinitive, ending exactly where the match starts.
_REPORTED: Final = re.compile(
    rf"\b{_REPORTING_VERB}\s+(?:(?!you\b|your\b|yourself\b)[\w'-]+\s+){{0,4}}?(?:to\s+|into\s+)?$",
    re.IGNORECASE,
)
_LOOKBEHIND: Final = 80


def quotations(text: str) -> list[tuple[int, int]]:
    """Character spans of the *contents* of every quotation (delimiters excluded)."""
    spans = []
    for match in _QUOTE.finditer(text):
        group = next(index for index in range(1, 7) if match.group(index) is not None)
        spans.append((match.start(group), match.end(group)))
    return spans


def _sentence(text: str, start: int, end: int) -> str:
    """The text around [start, end) up to the nearest sentence boundary on each side, the span removed."""
    before = text[max(0, start - 160) : start]
    ends = list(_SENTENCE_END.finditer(before))
    if ends:
        before = before[ends[-1].end() :]
    after = text[end : end + 160]
    stop = _SENTENCE_END.search(after)
    return before + " " + (after[: stop.start()] if stop else after)


def _in_fence(text: str, index: int) -> bool:
    """Whether `index` lies inside a fenced code block (after an odd number of ``` fences)."""
    return text.count("```", 0, index) % 2 == 1


def is_mention(text: str, start: int, end: int, quoted: list[tuple[int, int]] | None = None) -> bool:
    """Whether the match [start, end) is a named phrase: filling a short, framed quotation."""
    for q_start, q_end in quoted if quoted is not None else quotations(text):
        if q_start <= start and end <= q_end + 1:  # +1: a match may end on the quotation's last character
            inner = text[q_start:q_end]
            if len(_WORD.findall(inner)) > QUOTE_WORDS or (end - start) < _FILL * len(inner.strip()):
                return False
            if _in_fence(text, q_start):
                return True  # a string literal in a code block is data the code handles, not an order
            around = _sentence(text, q_start - 1, q_end + 1)
            return _FRAME.search(around) is not None
    return False


def is_reported(text: str, start: int) -> bool:
    """Whether the match starting at `start` is the complement of a third-party reporting verb."""
    return _REPORTED.search(text[max(0, start - _LOOKBEHIND) : start]) is not None
