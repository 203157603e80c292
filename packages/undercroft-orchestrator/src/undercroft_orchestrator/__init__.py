"""Undercroft's fleet control plane, a pure client of /v1."""

from undercroft_orchestrator.errors import Error

__version__ = "0.1.0"

__all__ = ["Error", "__version__"]
