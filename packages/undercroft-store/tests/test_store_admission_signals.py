"""The closed signal vocabulary, content-free findings and the Decision's invariants."""

from __future__ import annotations

import pytest
from undercroft_core.errors import InvalidInput
from undercroft_store.governance.admission import (
    SIGNAL_VOCAB,
    AdmitReason,
    AdvisorOutcome,
    Decision,
    Finding,
    Signal,
    Subject,
    Verdict,
)


def test_vocabulary_is_closed_and_named_as_the_documents_name_it() -> None:
    assert SIGNAL_VOCAB == (
        "imperative-instruction",
        "tool-call-syntax",
        "exfiltration-marker",
        "encoded-blob",
        "attack-fixture-similarity",
        "destination-anomaly",
        "rate-anomaly",
        "llm-advisory",
    )


def test_finding_metadata_round_trips_and_carries_only_codes_and_offsets() -> None:
    finding = Finding(Subject.CONTENT, 3, 9, Signal.ENCODED_BLOB)
    record = finding.to_metadata()
    assert record == {"signal": "encoded-blob", "subject": "content", "start": 3, "end": 9}
    assert Finding.from_metadata(record) == finding


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((Subject.CONTENT, -1, 2, Signal.ENCODED_BLOB), "finding start must be a non-negative integer, got -1"),
        ((Subject.CONTENT, 5, 2, Signal.ENCODED_BLOB), "finding span 5..2 ends before it starts"),
        ((Subject.CONTENT, 2, 2, Signal.ENCODED_BLOB), "finding span 2..2 is empty"),
        ((Subject.CONTENT, 0, 0, Signal.RATE_ANOMALY), "signal rate-anomaly cannot point into subject content"),
        ((Subject.WRITE, 0, 4, Signal.RATE_ANOMALY), "a whole-write finding has no span, got 0..4"),
        ((Subject.WING, 0, 1, "evil"), "finding signal 'evil' is not in the closed vocabulary"),
        ((Subject.CONTENT, 1.0, 2, Signal.ENCODED_BLOB), "finding start must be a non-negative integer, got 1.0"),
    ],
)
def test_bad_findings_are_refused(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(InvalidInput, match="^" + message.replace(".", r"\.") + "$"):
        Finding(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"signal": "x", "subject": "content", "start": 0, "end": 1}, "unknown signal code 'x'"),
        ({"signal": "encoded-blob", "subject": "disk", "start": 0, "end": 1}, "unknown finding subject 'disk'"),
        ({"signal": "encoded-blob", "subject": "content", "start": 0}, "exactly the keys"),
        ({"signal": "encoded-blob", "subject": "content", "start": 0, "end": 1, "text": "x"}, "exactly the keys"),
    ],
)
def test_bad_finding_records_are_refused(record: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        Finding.from_metadata(record)


def test_decision_constructors_and_invariants() -> None:
    assert Decision.screen_off().reason is AdmitReason.SCREEN_OFF
    trusted = Decision.trusted("cli")
    assert (trusted.verdict, trusted.reason, trusted.trusted_source) == (
        Verdict.ADMIT,
        AdmitReason.TRUSTED_SOURCE,
        "cli",
    )
    a = Finding(Subject.ROOM, 0, 3, Signal.DESTINATION_ANOMALY)
    b = Finding(Subject.CONTENT, 4, 9, Signal.IMPERATIVE_INSTRUCTION)
    flagged = Decision.flag([a, b, a])
    assert flagged.flagged and flagged.findings == (b, a)
    assert flagged.signals == (Signal.IMPERATIVE_INSTRUCTION, Signal.DESTINATION_ANOMALY)
    assert flagged.to_metadata() == {
        "verdict": "flag",
        "reason": None,
        "trusted_source": None,
        "signals": ["imperative-instruction", "destination-anomaly"],
        "findings": [b.to_metadata(), a.to_metadata()],
        "advice": None,
    }
    with pytest.raises(InvalidInput, match="a flag carries at least one finding"):
        Decision.flag([])
    with pytest.raises(InvalidInput, match="an admission carries a reason and no finding"):
        Decision(Verdict.ADMIT, (b,), AdmitReason.CLEAN)
    with pytest.raises(InvalidInput, match="trusted_source is set exactly when"):
        Decision(Verdict.ADMIT, reason=AdmitReason.CLEAN, trusted_source="cli")
    with pytest.raises(InvalidInput, match="a flag's findings are sorted and unique"):
        Decision(Verdict.FLAG, (a, b))
    with pytest.raises(InvalidInput, match="llm-advisory is a finding exactly when"):
        Decision.flag([b], advice=AdvisorOutcome.QUARANTINE)
    with pytest.raises(InvalidInput, match="only a screened write can have been shown"):
        Decision(Verdict.ADMIT, reason=AdmitReason.TRUSTED_SOURCE, trusted_source="x", advice=AdvisorOutcome.FAILED)
