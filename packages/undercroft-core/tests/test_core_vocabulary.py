"""Closed vocabularies reject unknown values and never coerce (no case folding, no trimming)."""

import pytest
from undercroft_core import (
    KIND_VOCAB,
    QUARANTINE_WING,
    TRUST_ORDER,
    TRUST_VOCAB,
    InvalidInput,
    validate_kind,
    validate_trust,
)


def test_vocabularies_are_pinned() -> None:
    assert TRUST_VOCAB == ("quarantined", "standard", "trusted")
    assert TRUST_ORDER["quarantined"] < TRUST_ORDER["standard"] < TRUST_ORDER["trusted"]
    assert QUARANTINE_WING == "quarantine-pending"
    assert KIND_VOCAB == tuple(sorted(KIND_VOCAB))
    assert "decision" in KIND_VOCAB


@pytest.mark.parametrize("kind", KIND_VOCAB)
def test_every_kind_is_accepted(kind: str) -> None:
    assert validate_kind(kind) == kind


@pytest.mark.parametrize("kind", ["Decision", " decision", "decisions", "", None, 1, "secret-plan"])
def test_unknown_kinds_are_rejected(kind: object) -> None:
    with pytest.raises(InvalidInput, match="unknown kind"):
        validate_kind(kind)


@pytest.mark.parametrize("trust", ["Trusted", "high", "", None, "standard "])
def test_unknown_trust_classes_are_rejected(trust: object) -> None:
    with pytest.raises(InvalidInput, match=r"unknown trust class .*quarantined, standard, trusted"):
        validate_trust(trust)


@pytest.mark.parametrize("trust", TRUST_VOCAB)
def test_trust_classes_are_accepted(trust: str) -> None:
    assert validate_trust(trust) == trust
