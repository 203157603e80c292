"""Loading LoCoMo conversations and questions, tolerant of the shapes and quirks the data actually has.

Accepted: the upstream top-level list of conversations (`sample_id`, turns under `conversation`), and the schema
fixture's `{"conversations": [...]}` with turns at the conversation's top level and a `conversation_id`.
Sessions are `session_<N>` lists ordered by N; a session's `session_<N>_date_time` ("1:56 pm on 8 May, 2023")
gives its day when it reads as one (else the session has no date). Categories are kept as text (ints upstream,
strings in the fixture). Category-5 items carry `adversarial_answer` and no `answer`: neither is required,
since only `question` and `evidence` are scored.
"""

from __future__ import annotations

import datetime
import pathlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

from undercroft_bench._internal.jsonfile import read_json
from undercroft_bench.chunking import Session, Turn
from undercroft_bench.errors import DataError

__all__ = ["LocomoConversation", "LocomoQuestion", "load_locomo", "parse_locomo", "session_day"]

_SESSION_KEY = re.compile(r"session_(\d+)")
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_SESSION_DAY = re.compile(r"(\d{1,2})\s+(" + "|".join(_MONTHS) + r"),?\s+(\d{4})", re.IGNORECASE)


def session_day(stamp: object) -> str | None:
    """The ISO day of a LoCoMo `session_<N>_date_time` such as ``1:56 pm on 8 May, 2023``, or None."""
    if not isinstance(stamp, str):
        return None
    found = _SESSION_DAY.search(stamp)
    if found is None:
        return None
    day, month, year = int(found.group(1)), _MONTHS.index(found.group(2).lower()) + 1, int(found.group(3))
    try:
        return datetime.date(year, month, day).isoformat()
    except ValueError:
        return None


@dataclass(frozen=True)
class LocomoQuestion:
    """One QA item: its position in the conversation, the question verbatim, its category and raw evidence."""

    index: int
    question: str
    category: str
    evidence: tuple[str, ...]
    answer: str | None
    adversarial_answer: str | None


@dataclass(frozen=True)
class LocomoConversation:
    """One conversation: its id, sessions in order, and its questions in file order."""

    conversation_id: str
    sessions: tuple[Session, ...]
    questions: tuple[LocomoQuestion, ...]


def load_locomo(path: pathlib.Path) -> list[LocomoConversation]:
    """Read and parse a LoCoMo file (see the module docstring for the accepted shapes)."""
    return parse_locomo(read_json(path, "LoCoMo"))


def parse_locomo(document: object) -> list[LocomoConversation]:
    """Parse an already-decoded LoCoMo document; refuse any shape it cannot score with a precise DataError."""
    if isinstance(document, Mapping) and "conversations" in document:
        document = document["conversations"]
    if not isinstance(document, list):
        raise DataError(
            f'LoCoMo data must be a list of conversations or {{"conversations": [...]}}, got {type(document).__name__}'
        )
    if not document:
        raise DataError("LoCoMo data holds no conversations")
    return [_conversation(position, item) for position, item in enumerate(document)]


def _conversation(position: int, item: object) -> LocomoConversation:
    if not isinstance(item, Mapping):
        raise DataError(f"LoCoMo conversation {position} is a {type(item).__name__}, not an object")
    conversation_id = str(item.get("sample_id") or item.get("conversation_id") or f"conversation-{position}")
    holder = item.get("conversation", item)
    if not isinstance(holder, Mapping):
        raise DataError(f"LoCoMo conversation {conversation_id!r}: 'conversation' is not an object")
    sessions = _sessions(conversation_id, holder)
    raw_questions = item.get("qa")
    if not isinstance(raw_questions, list):
        raise DataError(f"LoCoMo conversation {conversation_id!r} has no 'qa' list")
    questions = tuple(_question(conversation_id, index, raw) for index, raw in enumerate(raw_questions))
    return LocomoConversation(conversation_id=conversation_id, sessions=sessions, questions=questions)


def _sessions(conversation_id: str, holder: Mapping[str, object]) -> tuple[Session, ...]:
    numbered: list[tuple[int, list[object]]] = []
    for key, value in holder.items():
        match = _SESSION_KEY.fullmatch(str(key))
        if match is None:
            continue
        if not isinstance(value, list):
            raise DataError(f"LoCoMo conversation {conversation_id!r}: {key} is not a list of turns")
        numbered.append((int(match.group(1)), value))
    if not numbered:
        raise DataError(f"LoCoMo conversation {conversation_id!r} has no session_<N> turn lists")
    numbered.sort(key=lambda pair: pair[0])
    return tuple(
        Session(
            session_id=str(number),
            turns=tuple(_turn(conversation_id, number, index, raw) for index, raw in enumerate(turns)),
            date=session_day(holder.get(f"session_{number}_date_time")),
        )
        for number, turns in numbered
    )


def _turn(conversation_id: str, session: int, index: int, raw: object) -> Turn:
    where = f"LoCoMo conversation {conversation_id!r} session_{session} turn {index}"
    if not isinstance(raw, Mapping):
        raise DataError(f"{where} is a {type(raw).__name__}, not an object")
    speaker, text = raw.get("speaker"), raw.get("text")
    if not isinstance(speaker, str) or not speaker:
        raise DataError(f"{where} has no 'speaker' text")
    if not isinstance(text, str):
        raise DataError(f"{where} has no 'text' string")
    turn_id = raw.get("dia_id")
    return Turn(speaker=speaker, text=text, turn_id=str(turn_id) if turn_id is not None else "")


def _question(conversation_id: str, index: int, raw: object) -> LocomoQuestion:
    where = f"LoCoMo conversation {conversation_id!r} question {index}"
    if not isinstance(raw, Mapping):
        raise DataError(f"{where} is a {type(raw).__name__}, not an object")
    question = raw.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DataError(f"{where} has no 'question' text")
    evidence = raw.get("evidence", [])
    # A lone string is one evidence item; null is no evidence.
    if evidence is None:
        evidence = []
    elif isinstance(evidence, str):
        evidence = [evidence]
    if not isinstance(evidence, list):
        raise DataError(f"{where}: 'evidence' is a {type(evidence).__name__}, not a list")
    category = raw.get("category")
    answer, adversarial = raw.get("answer"), raw.get("adversarial_answer")
    return LocomoQuestion(
        index=index,
        question=question,
        category="uncategorised" if category is None else str(category),
        evidence=tuple(str(item) for item in evidence),
        answer=None if answer is None else str(answer),
        adversarial_answer=None if adversarial is None else str(adversarial),
    )
