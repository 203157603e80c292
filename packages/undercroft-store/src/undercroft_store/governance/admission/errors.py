"""Typed errors of the admission screen."""

from __future__ import annotations

from undercroft_store.errors import Error

__all__ = ["AdmissionError", "AdvisorUnavailable"]


class AdmissionError(Error):
    """Base of the admission screen's run failures."""


class AdvisorUnavailable(AdmissionError):
    """UNDERCROFT_ADMISSION_LLM=advisory was declared but no usable advisor was supplied: refuse to open."""
