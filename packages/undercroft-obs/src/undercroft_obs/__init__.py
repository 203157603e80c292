"""Undercroft's observability shim: no-op by default."""

from undercroft_obs.errors import Error

__version__ = "0.1.0"

__all__ = ["Error", "__version__"]
