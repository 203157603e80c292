"""Undercroft's remote vector backends, used as untrusted accelerators."""

from undercroft_index.errors import Error

__version__ = "0.1.0"

__all__ = ["Error", "__version__"]
