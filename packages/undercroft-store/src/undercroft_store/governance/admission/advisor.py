"""The tier-2 advisor seam (UNDERCROFT_ADMISSION_LLM=advisory): a one-way consultation.

The advisor is only shown a write the deterministic tier admitted, and its answer can only move that write
toward quarantine. Nothing it returns can admit a flagged write, because it is never asked about one; an
answer other than `Advice.QUARANTINE`, or a failure, is a non-event (the model is itself an injection
target, so a steered answer can only steer toward review). The implementation arrives with undercroft_llm.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol, runtime_checkable

__all__ = ["Advice", "Advisor", "AdvisorOutcome"]


class Advice(StrEnum):
    """What an advisor may answer."""

    QUARANTINE = "quarantine"
    NO_OBJECTION = "no-objection"


@runtime_checkable
class Advisor(Protocol):
    """A tier-2 classifier: `advise(content, wing=, room=)` answers an `Advice`, None (unparseable), or raises."""

    def advise(self, content: str, *, wing: str, room: str) -> Advice | None:
        """Classify one admitted candidate (None: the model answered outside its schema)."""
        ...


class AdvisorOutcome(StrEnum):
    """How one consultation ended, counted by the gate (a failure is a non-event, never silent)."""

    QUARANTINE = "quarantine"
    NO_OBJECTION = "no-objection"
    FAILED = "failed"
    UNPARSEABLE = "unparseable"
