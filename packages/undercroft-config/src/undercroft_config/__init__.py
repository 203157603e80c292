"""Undercroft's declaration resolvers: every UNDERCROFT_* variable, refuse-or-warn doctrine."""

from undercroft_config.errors import Error

__version__ = "0.1.0"

__all__ = ["Error", "__version__"]
