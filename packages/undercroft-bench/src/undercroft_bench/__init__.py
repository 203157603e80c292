"""Undercroft's benchmark and instrument harnesses (undercroft-bench)."""

from undercroft_bench.errors import Error

__version__ = "0.1.0"

__all__ = ["Error", "__version__"]
