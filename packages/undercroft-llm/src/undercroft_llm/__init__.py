"""Undercroft's local LLM runtimes and the HTTP-served embedder."""

from undercroft_llm.errors import Error

__version__ = "0.1.0"

__all__ = ["Error", "__version__"]
