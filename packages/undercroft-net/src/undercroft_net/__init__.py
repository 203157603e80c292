"""Undercroft's outbound transport policy and policed HTTP client."""

from undercroft_net.errors import Error

__version__ = "0.1.0"

__all__ = ["Error", "__version__"]
