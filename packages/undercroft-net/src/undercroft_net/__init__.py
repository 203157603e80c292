"""Undercroft's outbound transport policy, its policed HTTP clients and the safe prompt envelope.

``policy`` and ``envelope`` are imported eagerly (standard library only); the two client factories load httpx
on first use, so a caller that only renders memory blocks (the MCP server) does not pay httpx's import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from undercroft_net.envelope import (
    MEMORY_SYSTEM_NOTICE,
    escape_attribute,
    escape_content,
    hit_block,
    memory_block,
    memory_blocks,
    unescape,
)
from undercroft_net.errors import EnvelopeError, Error, ResponseRefused, ResponseTooLarge, TransportRefused
from undercroft_net.policy import CaPin, Endpoint, is_loopback_host, load_pin, police, police_redirect, ssl_context

if TYPE_CHECKING:
    from undercroft_net.client import policed_async_client, policed_client

__version__ = "0.1.0"

__all__ = [
    "MEMORY_SYSTEM_NOTICE",
    "CaPin",
    "Endpoint",
    "EnvelopeError",
    "Error",
    "ResponseRefused",
    "ResponseTooLarge",
    "TransportRefused",
    "__version__",
    "escape_attribute",
    "escape_content",
    "hit_block",
    "is_loopback_host",
    "load_pin",
    "memory_block",
    "memory_blocks",
    "police",
    "police_redirect",
    "policed_async_client",
    "policed_client",
    "ssl_context",
    "unescape",
]

_LAZY = frozenset({"policed_client", "policed_async_client"})


def __getattr__(name: str) -> Any:
    """Load the httpx-backed client factories on first access."""
    if name in _LAZY:
        from undercroft_net import client

        return getattr(client, name)
    raise AttributeError(f"module 'undercroft_net' has no attribute {name!r}")
