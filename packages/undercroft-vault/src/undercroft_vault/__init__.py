"""Undercroft's embeddable crypto layer: keys, sealing, tags, audit chain, manifest, export bundles."""

from undercroft_vault.errors import Error

__version__ = "0.1.0"

__all__ = ["Error", "__version__"]
