"""Typed errors of `undercroft_net`.

Every refusal names what it refused and why: a transport refusal names the declaring variable and the rule,
so the operator who typed the value can fix it without reading code.
"""

from __future__ import annotations

__all__ = ["EnvelopeError", "Error", "ResponseRefused", "ResponseTooLarge", "TransportRefused"]


class Error(Exception):
    """Base of every error raised by `undercroft_net` (this distribution does not depend on core)."""

    #: "run" (exit 1) or "integrity" (exit 2).
    error_class = "run"


class TransportRefused(Error):
    """The transport policy refused an outward URL, a CA pin, a proxy or a redirect.

    ``variable`` is the declaration the value came from (``UNDERCROFT_OTLP_ENDPOINT``), ``rule`` the sentence of
    the policy it broke. The URL in the message never carries userinfo (it may hold a password).
    """

    def __init__(self, variable: str, value: str, rule: str) -> None:
        self.variable = variable
        self.value = value
        self.rule = rule
        super().__init__(f"{variable}: refused {value!r}: {rule}")


class ResponseRefused(Error):
    """A policed client refused a response it cannot hand over safely (an encoding it did not ask for)."""


class ResponseTooLarge(ResponseRefused):
    """A response body exceeded the client's bound; nothing of it is returned (never a prefix)."""

    def __init__(self, url: str, bound: int, seen: int | None = None) -> None:
        self.url = url
        self.bound = bound
        self.seen = seen
        detail = f"declared {seen} bytes" if seen is not None else "more bytes"
        super().__init__(f"response from {url} refused: {detail}, above the bound of {bound} bytes")


class EnvelopeError(Error):
    """A hit handed to the envelope builder lacks a field a memory block must carry, or has the wrong type."""
