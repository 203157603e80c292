"""The deterministic tier-1 detector: pure functions over the candidate's bytes and its hash embedding.

`detect` returns the findings of the content and destination signals; `screen` adds the trusted-source
bypass, the optional rate screen and the one-way tier-2 advisor, and answers a `Decision`. No model, no
network, no clock of its own: the same input always gives the same answer.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import Final

from undercroft_core.errors import InvalidInput

from undercroft_store.governance.admission._internal.blobs import decodes_to_text
from undercroft_store.governance.admission._internal.context import is_mention, is_reported, quotations
from undercroft_store.governance.admission._internal.destination import name_anomalies
from undercroft_store.governance.admission._internal.patterns import (
    ENCODED_RUNS,
    EXFILTRATION,
    EXFILTRATION_GATES,
    IMPERATIVE,
    IMPERATIVE_GATES,
    TOOL_CALL,
    TOOL_CALL_GATES,
)
from undercroft_store.governance.admission._internal.views import fold
from undercroft_store.governance.admission.advisor import Advice, Advisor, AdvisorOutcome
from undercroft_store.governance.admission.decision import Decision
from undercroft_store.governance.admission.rate import RateScreen
from undercroft_store.governance.admission.signals import Finding, Signal, Subject
from undercroft_store.governance.admission.similarity import FixtureIndex, default_fixture_index

__all__ = ["MARKER_SIGNALS", "consult", "detect", "screen"]

Marker = tuple[tuple[str, ...], re.Pattern[str]]


def _pair(gates: tuple[tuple[str, ...], ...], patterns: tuple[re.Pattern[str], ...]) -> tuple[Marker, ...]:
    if len(gates) != len(patterns):
        raise AssertionError("every marker pattern has exactly one literal gate")  # a table edit gone wrong
    return tuple(zip(gates, patterns, strict=True))


#: The (literal gate, pattern) tables behind each marker signal.
MARKER_SIGNALS: Final[dict[Signal, tuple[Marker, ...]]] = {
    Signal.IMPERATIVE_INSTRUCTION: _pair(IMPERATIVE_GATES, IMPERATIVE),
    Signal.TOOL_CALL_SYNTAX: _pair(TOOL_CALL_GATES, TOOL_CALL),
    Signal.EXFILTRATION_MARKER: _pair(EXFILTRATION_GATES, EXFILTRATION),
}


_GATES: Final = tuple(sorted({gate for markers in MARKER_SIGNALS.values() for gates, _ in markers for gate in gates}))


class _View:
    """One text to scan: its case-folded gate set computed once, and a map back to the stored offsets."""

    __slots__ = ("origin", "present", "text")

    def __init__(self, text: str, origin: list[int] | None = None) -> None:
        lowered = text.casefold()
        self.text = text
        self.origin = origin
        self.present = frozenset(gate for gate in _GATES if gate in lowered)

    def spans(self, markers: Iterable[Marker], *, addressed_only: bool = False) -> list[tuple[int, int]]:
        """Stored-text spans of every match; with `addressed_only`, mentions and reported speech are dropped."""
        found = [
            (match.start(), match.end())
            for gates, pattern in markers
            if not self.present.isdisjoint(gates)
            for match in pattern.finditer(self.text)
            if match.end() > match.start()
        ]
        if addressed_only and found:
            quoted = quotations(self.text)
            found = [
                (start, end)
                for start, end in found
                if not is_reported(self.text, start) and not is_mention(self.text, start, end, quoted)
            ]
        origin = self.origin
        return found if origin is None else [(origin[start], origin[end - 1] + 1) for start, end in found]


def _views(text: str) -> list[_View]:
    """The stored text, plus its folded view when folding changes anything."""
    folded = fold(text)
    return [_View(text)] if folded is None else [_View(text), _View(*folded)]


#: Signals whose matches count only when addressed to the reader (docs/admission.md, "Mentions and
#: reported speech"): an override phrase quoted or reported is talk about an attack. A tool call or a
#: transfer command is operative wherever it sits, so those signals are never read this way.
_ADDRESSED_ONLY: Final = frozenset({Signal.IMPERATIVE_INSTRUCTION})


def _marker_spans(
    views: list[_View], markers: tuple[Marker, ...], *, addressed_only: bool = False
) -> list[tuple[int, int]]:
    """Character spans of every pattern match over every view."""
    return [span for view in views for span in view.spans(markers, addressed_only=addressed_only)]


def _encoded_spans(text: str) -> list[tuple[int, int]]:
    return [
        (match.start(), match.end())
        for kind, pattern in ENCODED_RUNS.items()
        for match in pattern.finditer(text)
        if decodes_to_text(kind, match.group())
    ]


def _merge(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _findings(text: str, subject: Subject, signal: Signal, spans: Iterable[tuple[int, int]]) -> list[Finding]:
    """Character spans → findings with UTF-8 byte offsets (overlapping spans of one signal merged)."""
    findings = []
    for start, end in _merge(spans):
        byte_start = len(text[:start].encode("utf-8", "surrogatepass"))
        byte_end = byte_start + len(text[start:end].encode("utf-8", "surrogatepass"))
        findings.append(Finding(subject, byte_start, byte_end, signal))
    return findings


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"the screened {what} must be a string, got {type(value).__name__}")
    return value


def detect(content: str, *, wing: str, room: str, fixtures: FixtureIndex | None = None) -> tuple[Finding, ...]:
    """Every content and destination finding of one candidate write, sorted.

    Content: imperative-instruction, tool-call-syntax, exfiltration-marker, encoded-blob and
    attack-fixture-similarity (against `fixtures`, default the committed corpus). Wing and room:
    destination-anomaly, for a system-looking or reserved name, control or lookalike characters, or a
    name that itself carries a marker.
    """
    content = _text(content, "content")
    found: list[Finding] = []
    views = _views(content)
    for signal, markers in MARKER_SIGNALS.items():
        spans = _marker_spans(views, markers, addressed_only=signal in _ADDRESSED_ONLY)
        found += _findings(content, Subject.CONTENT, signal, spans)
    found += _findings(content, Subject.CONTENT, Signal.ENCODED_BLOB, _encoded_spans(content))
    index = fixtures if fixtures is not None else default_fixture_index()
    hit = index.hit(content)
    if hit is not None:
        found += _findings(content, Subject.CONTENT, Signal.ATTACK_FIXTURE_SIMILARITY, [(hit.start, hit.end)])
    for subject, name in ((Subject.WING, _text(wing, "wing")), (Subject.ROOM, _text(room, "room"))):
        spans = name_anomalies(name)
        name_views = _views(name)
        for markers in MARKER_SIGNALS.values():
            spans += _marker_spans(name_views, markers)
        found += _findings(name, subject, Signal.DESTINATION_ANOMALY, spans)
    return tuple(sorted(found))


def consult(advisor: Advisor, content: str, *, wing: str, room: str) -> AdvisorOutcome:
    """Ask `advisor` about an admitted candidate; a failure or an unknown answer is a non-event."""
    try:
        answer = advisor.advise(content, wing=wing, room=room)
    except Exception:  # noqa: BLE001 — the doctrine: a failed advisor is a non-event, counted, never fatal
        return AdvisorOutcome.FAILED
    if answer is Advice.QUARANTINE:
        return AdvisorOutcome.QUARANTINE
    if answer is Advice.NO_OBJECTION:
        return AdvisorOutcome.NO_OBJECTION
    return AdvisorOutcome.UNPARSEABLE


def screen(
    content: str,
    *,
    wing: str,
    room: str,
    added_by: str,
    trusted_sources: Collection[str] = (),
    fixtures: FixtureIndex | None = None,
    rate: RateScreen | None = None,
    advisor: Advisor | None = None,
) -> Decision:
    """Screen one write: trusted bypass, then tier 1 (content, destination, rate), then the advisor.

    `added_by` is the handler-stamped surface, never a writer's claim; it alone is matched against
    `trusted_sources` and keys `rate`. The advisor is consulted only when tier 1 admitted, and can only
    turn that admission into a flag.
    """
    added_by = _text(added_by, "added_by")
    if not added_by:
        raise InvalidInput("the screened added_by is the handler's non-empty surface stamp")
    if added_by in trusted_sources:
        return Decision.trusted(added_by)
    findings = list(detect(content, wing=wing, room=room, fixtures=fixtures))
    if rate is not None:
        limited = rate.check(added_by)
        if limited is not None:
            findings.append(limited)
    if findings:
        return Decision.flag(findings)
    if advisor is None:
        return Decision.admit_clean()
    outcome = consult(advisor, content, wing=wing, room=room)
    if outcome is AdvisorOutcome.QUARANTINE:
        return Decision.flag([Finding(Subject.WRITE, 0, 0, Signal.LLM_ADVISORY)], advice=outcome)
    return Decision.admit_clean(advice=outcome)
