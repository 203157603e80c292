"""The closed signal vocabulary of the admission screen, and the content-free `Finding` it reports.

A finding is stored in clear metadata on a quarantine row, so it carries a signal code, the part of the
write it points at and UTF-8 byte offsets into that part — never the matched words.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from undercroft_core.errors import InvalidInput

__all__ = ["SIGNAL_VOCAB", "SUBJECT_VOCAB", "Finding", "Signal", "Subject"]


class Signal(StrEnum):
    """One code of the closed vocabulary. The values are the wire and at-rest spelling."""

    #: "ignore previous instructions" and its paraphrases, prompt extraction, persistence orders (a safeguard
    #: turned off "for future sessions"), system-prompt overrides, role-play jailbreaks, orders to an
    #: assistant — addressed ones only: a framed short quotation or reported speech is a mention.
    IMPERATIVE_INSTRUCTION = "imperative-instruction"
    #: JSON function-call shapes, XML tool tags, MCP-style call blocks, chat-template tool tokens.
    TOOL_CALL_SYNTAX = "tool-call-syntax"
    #: Data-bearing URLs, "send … to", webhook/curl/wget shapes, markdown image beacons.
    EXFILTRATION_MARKER = "exfiltration-marker"
    #: Long base64, hex or percent-encoded runs that decode to text.
    ENCODED_BLOB = "encoded-blob"
    #: A window of the content close (hash-embedder cosine) to a committed attack fixture.
    ATTACK_FIXTURE_SIMILARITY = "attack-fixture-similarity"
    #: A wing or room that looks like a system area, the reserved wing, control or lookalike characters.
    DESTINATION_ANOMALY = "destination-anomaly"
    #: The writer already has its declared count of committed writes inside the trailing window.
    RATE_ANOMALY = "rate-anomaly"
    #: The tier-2 advisor asked for quarantine (only ever consulted on a write tier 1 passed).
    LLM_ADVISORY = "llm-advisory"


class Subject(StrEnum):
    """Which part of the write a finding's offsets index."""

    CONTENT = "content"
    WING = "wing"
    ROOM = "room"
    #: The write as a whole (rate, advisor): no span, offsets are 0..0.
    WRITE = "write"


#: Every signal code, in declaration order.
SIGNAL_VOCAB: Final[tuple[str, ...]] = tuple(signal.value for signal in Signal)
#: Every subject, in declaration order.
SUBJECT_VOCAB: Final[tuple[str, ...]] = tuple(subject.value for subject in Subject)

_WHOLE_WRITE: Final = frozenset({Signal.RATE_ANOMALY, Signal.LLM_ADVISORY})


@dataclass(frozen=True, order=True)
class Finding:
    """One tripped signal: its code, the subject it points into and a half-open UTF-8 byte span.

    Content-free by construction: no field can hold a matched word. Ordered by (subject, start, end,
    signal) so a decision's findings have one canonical order.
    """

    subject: Subject
    start: int
    end: int
    signal: Signal

    def __post_init__(self) -> None:
        if not isinstance(self.signal, Signal):
            raise InvalidInput(f"finding signal {self.signal!r} is not in the closed vocabulary")
        if not isinstance(self.subject, Subject):
            raise InvalidInput(f"finding subject {self.subject!r} is not one of {', '.join(SUBJECT_VOCAB)}")
        for name in ("start", "end"):
            offset = getattr(self, name)
            if type(offset) is not int or offset < 0:
                raise InvalidInput(f"finding {name} must be a non-negative integer, got {offset!r}")
        if self.end < self.start:
            raise InvalidInput(f"finding span {self.start}..{self.end} ends before it starts")
        whole = self.subject is Subject.WRITE
        if whole != (self.signal in _WHOLE_WRITE):
            raise InvalidInput(f"signal {self.signal.value} cannot point into subject {self.subject.value}")
        if whole and (self.start, self.end) != (0, 0):
            raise InvalidInput(f"a whole-write finding has no span, got {self.start}..{self.end}")
        if not whole and self.end == self.start:
            raise InvalidInput(f"finding span {self.start}..{self.end} is empty")

    def to_metadata(self) -> dict[str, str | int]:
        """The clear-metadata form: signal code, subject and byte offsets only."""
        return {"signal": self.signal.value, "subject": self.subject.value, "start": self.start, "end": self.end}

    @classmethod
    def from_metadata(cls, record: object) -> Finding:
        """Rebuild a finding from `to_metadata()` output; refuses extra or missing keys and unknown codes."""
        if not isinstance(record, dict) or set(record) != {"signal", "subject", "start", "end"}:
            raise InvalidInput("a finding record has exactly the keys signal, subject, start, end")
        signal, subject = record["signal"], record["subject"]
        if signal not in SIGNAL_VOCAB:
            raise InvalidInput(f"unknown signal code {signal!r}: expected one of {', '.join(SIGNAL_VOCAB)}")
        if subject not in SUBJECT_VOCAB:
            raise InvalidInput(f"unknown finding subject {subject!r}: expected one of {', '.join(SUBJECT_VOCAB)}")
        return cls(Subject(subject), record["start"], record["end"], Signal(signal))
