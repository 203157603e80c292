"""Undercroft's per-vault SQLite store: the write choke point, search, KG, governance, verify, rotation."""

from undercroft_store.errors import Error

__version__ = "0.1.0"

__all__ = ["Error", "__version__"]
