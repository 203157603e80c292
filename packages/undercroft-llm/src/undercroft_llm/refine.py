"""Refine's model side: ask a served model for the facts one note states, under a strict output schema.

The note travels as one escaped, attributed ``<memory>`` block of untrusted DATA (undercroft_net's envelope:
it cannot close its block or impersonate an instruction section), one note per request, so a fact's source is
structural and never the model's say. The answer must be exactly ``{"facts": [{"subject", "predicate",
"object", "evidence"?}, …]}`` — any other key, type, size or shape refuses the WHOLE answer
(`MalformedAnswer`): a half-trusted answer is never partly written. Each fact is then grounded here
(:mod:`undercroft_llm.grounding`), never by the model's word.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from undercroft_net import MEMORY_SYSTEM_NOTICE, memory_block

from undercroft_llm.errors import MalformedAnswer
from undercroft_llm.grounding import ground
from undercroft_llm.runtime import ChatModel

__all__ = ["MAX_FACTS", "MAX_TERM_CHARS", "REFINE_SYSTEM", "Distilled", "Extraction", "Extractor", "parse_facts"]

#: The most facts one note may yield; a longer list is a malformed answer.
MAX_FACTS: Final = 32
#: The longest subject, predicate or object accepted (characters); evidence may be 4x longer.
MAX_TERM_CHARS: Final = 200
_KEYS: Final = frozenset({"subject", "predicate", "object", "evidence"})

REFINE_SYSTEM: Final = (
    MEMORY_SYSTEM_NOTICE + " You extract knowledge-graph facts from the one note in the <memory> block. Each fact "
    "is a subject, a predicate (a short verb phrase in snake_case) and an object, about what the note itself says. "
    'Answer with ONE JSON object and nothing else: {"facts": [{"subject": "...", "predicate": "...", '
    '"object": "...", "evidence": "the exact words of the note that state it"}]}. No other keys. '
    'Answer {"facts": []} when the note states no fact.'
)


@dataclass(frozen=True, slots=True)
class Distilled:
    """One fact the model answered, after grounding (``grounding`` is stated or background)."""

    subject: str
    predicate: str
    object: str
    grounding: str
    span: tuple[int, int] | None = None
    byte_span: tuple[int, int] | None = None


@dataclass(frozen=True)
class Extraction:
    """What one note yielded: grounded facts, and the facts refused (a reason each, never their words)."""

    facts: tuple[Distilled, ...] = ()
    refused: tuple[str, ...] = field(default_factory=tuple)


def _term(item: dict[str, Any], key: str, limit: int, position: int) -> str:
    value = item.get(key, "")
    if not isinstance(value, str):
        raise MalformedAnswer(f"fact {position}: {key} is {type(value).__name__}, not a string")
    if len(value) > limit or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise MalformedAnswer(f"fact {position}: {key} is too long or holds a control character")
    if key != "evidence" and not value.strip():
        raise MalformedAnswer(f"fact {position}: {key} is empty")
    return " ".join(value.split())


def parse_facts(answer: str) -> list[tuple[str, str, str, str]]:
    """The (subject, predicate, object, evidence) tuples of a strict answer; `MalformedAnswer` otherwise."""
    try:
        document = json.loads(answer)
    except ValueError:
        raise MalformedAnswer("the answer is not one JSON document") from None
    if not isinstance(document, dict) or set(document) != {"facts"} or not isinstance(document["facts"], list):
        raise MalformedAnswer('the answer is not exactly {"facts": [...]}')
    items = document["facts"]
    if len(items) > MAX_FACTS:
        raise MalformedAnswer(f"the answer lists {len(items)} facts; at most {MAX_FACTS} are accepted")
    facts = []
    for position, item in enumerate(items):
        if not isinstance(item, dict) or not set(item) <= _KEYS or not {"subject", "predicate", "object"} <= set(item):
            raise MalformedAnswer(f"fact {position} is not exactly subject, predicate, object and evidence")
        facts.append(
            (
                _term(item, "subject", MAX_TERM_CHARS, position),
                _term(item, "predicate", MAX_TERM_CHARS, position),
                _term(item, "object", MAX_TERM_CHARS, position),
                _term(item, "evidence", 4 * MAX_TERM_CHARS, position),
            )
        )
    return facts


class Extractor:
    """Distil one note at a time through a `ChatModel`; ``identity`` is the extractor every fact records."""

    def __init__(self, model: ChatModel) -> None:
        """Wrap the runtime (its identity becomes each fact's extractor)."""
        self.model = model

    @property
    def identity(self) -> str:
        """``<api>:<model>``: inside each fact's HMAC, so a flipped attribution fails verification."""
        return self.model.identity

    def prompt(self, drawer_id: str, text: str) -> str:
        """The user message: the note as one escaped memory block."""
        return memory_block({"id": drawer_id}, text)

    def extract(self, drawer_id: str, text: str) -> Extraction:
        """One request for one note. Raises `ModelCallFailed` (no answer) or `MalformedAnswer` (refused whole)."""
        answer = self.model.complete(REFINE_SYSTEM, self.prompt(drawer_id, text))
        facts: list[Distilled] = []
        refused: list[str] = []
        seen: set[tuple[str, str, str]] = set()
        for subject, predicate, obj, evidence in parse_facts(answer):
            key = (subject.casefold(), predicate.casefold(), obj.casefold())
            if key in seen:
                continue
            seen.add(key)
            verdict = ground(text, subject, obj, evidence)
            if verdict.refusal is not None:
                refused.append(verdict.refusal)
                continue
            facts.append(Distilled(subject, predicate, obj, verdict.grounding, verdict.span, verdict.byte_span))
        return Extraction(tuple(facts), tuple(refused))
