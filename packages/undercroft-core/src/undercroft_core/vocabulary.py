"""Closed vocabularies: drawer kinds, wing trust classes and the reserved quarantine wing.

Each is a label stored in the clear on a sealed vault, so it is a deliberate, inventoried, low-entropy
leak: unknown values are rejected, never coerced (the labeling doctrine's rule 1).
"""

from __future__ import annotations

import re

from undercroft_core.errors import InvalidInput

__all__ = [
    "KIND_VOCAB",
    "QUARANTINE_WING",
    "TRUST_ORDER",
    "TRUST_VOCAB",
    "names_quarantine_wing",
    "reserved_wing_refusal",
    "validate_kind",
    "validate_trust",
]

#: The kinds a drawer may declare (``--kind``), sorted. A declared kind is ergonomics, never a trust boundary.
KIND_VOCAB: tuple[str, ...] = (
    "advice",
    "decision",
    "discovery",
    "event",
    "fact",
    "milestone",
    "note",
    "preference",
    "problem",
)

#: Operator-assigned wing trust classes, lowest first. Unassigned means "standard".
TRUST_VOCAB: tuple[str, ...] = ("quarantined", "standard", "trusted")

#: Rank of each trust class, for a floor comparison (``rank >= floor``).
TRUST_ORDER: dict[str, int] = {name: rank for rank, name in enumerate(TRUST_VOCAB)}

#: The reserved wing flagged writes are diverted into; excluded from every content read unless named.
QUARANTINE_WING = "quarantine-pending"

# Case and separators do not make another wing: ``Quarantine_Pending`` reads as the review queue to a human
# and to an agent, so every surface treats every such spelling as the reserved name (one rule, here).
_SEPARATORS = re.compile(r"[\s_\-.]+")
_FENCED = _SEPARATORS.sub("-", QUARANTINE_WING)


def names_quarantine_wing(value: str) -> bool:
    """True when ``value`` is the quarantine wing's name in any case or separator spelling."""
    return _SEPARATORS.sub("-", value.strip().casefold()) == _FENCED


def reserved_wing_refusal(wing: str) -> str:
    """The one sentence every surface refuses a write into ``wing`` (a spelling of the quarantine wing) with."""
    spelled = "" if wing == QUARANTINE_WING else f" ({wing!r} is a spelling of it)"
    return f"the {QUARANTINE_WING!r} wing is reserved{spelled}; only a diverted write lands there"


def validate_kind(kind: object) -> str:
    """Return ``kind`` if it is in :data:`KIND_VOCAB`, else raise :class:`InvalidInput` (no case folding)."""
    if not isinstance(kind, str) or kind not in KIND_VOCAB:
        raise InvalidInput(f"unknown kind {kind!r}: expected one of {', '.join(KIND_VOCAB)}")
    return kind


def validate_trust(trust: object) -> str:
    """Return ``trust`` if it is in :data:`TRUST_VOCAB`, else raise :class:`InvalidInput` (no case folding)."""
    if not isinstance(trust, str) or trust not in TRUST_VOCAB:
        raise InvalidInput(f"unknown trust class {trust!r}: expected one of {', '.join(TRUST_VOCAB)}")
    return trust
