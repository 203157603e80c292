"""Undercroft's domain model, normalisation, chunking, ids, hash embedder, language layer and late-interaction math."""

from undercroft_core.errors import UndercroftError

__version__ = "0.1.0"

__all__ = ["UndercroftError", "__version__"]
