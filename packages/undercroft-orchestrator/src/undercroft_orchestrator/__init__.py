"""Undercroft's fleet control plane, a pure client of /v1: the `undercroft-orchestrator` program and its errors."""

from undercroft_orchestrator.errors import EngineFailed, Error, IntegrityVerdict, MigrationStopped, Refused, StateError

__version__ = "0.1.0"

__all__ = ["EngineFailed", "Error", "IntegrityVerdict", "MigrationStopped", "Refused", "StateError", "__version__"]
