"""Typed errors of `undercroft_net`.

Every refusal names what it refused and why: a transport refusal names the declaring variable and the rule,
so the operator who typed the value can fix it without reading code.
"""

from __future__ import annotations

__all__ = [
    "Conflict",
    "EngineError",
    "EnvelopeError",
    "Error",
    "Forbidden",
    "IntegrityError",
    "NotBuilt",
    "NotFound",
    "PayloadTooLarge",
    "Quarantined",
    "RequestRejected",
    "ResponseRefused",
    "ResponseTooLarge",
    "ServerError",
    "TransportRefused",
    "Unauthorized",
]


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


class EngineError(Error):
    """Base of what an Undercroft engine's answer raises in the typed /v1 client: ``status`` and ``body``.

    The classes stay apart on purpose: `IntegrityError` (exit 2's class) is not a `RequestRejected`, so an
    ``except RequestRejected`` retry loop can never swallow an integrity verdict.
    """

    def __init__(self, status: int, message: str, body: object = None) -> None:
        self.status = status
        self.body = body
        super().__init__(f"{status}: {message}")


class RequestRejected(EngineError):
    """A 4xx the engine gave for this request (a bad field, a state refusal): fix the request, then retry."""


class Unauthorized(RequestRejected):
    """401: the bearer or the per-vault assertion was refused (the engine never says which)."""


class Forbidden(RequestRejected):
    """403: the engine runs ``--read-only`` and this route writes."""


class NotFound(RequestRejected):
    """404: an unknown route, vault, drawer, tunnel, fact or backup."""


class Conflict(RequestRejected):
    """409 without the integrity class: a state refusal (a vault in use, a destination that moved)."""


class PayloadTooLarge(RequestRejected):
    """413: the body is above the route's cap; nothing of it was used."""


class NotBuilt(RequestRejected):
    """501: the route's capability has not landed on this engine; ``body`` names what is missing."""


class ServerError(EngineError):
    """A 5xx: the engine failed (its message is withheld by design); report it."""


class IntegrityError(EngineError):
    """An integrity verdict: a 4xx with ``"class": "integrity"``, or a verify that answered ``ok: false``."""

    error_class = "integrity"


class Quarantined(EngineError):
    """202: the admission screen diverted the write; ``id`` is the queue slot it landed under, not a drawer."""

    def __init__(self, status: int, message: str, body: object = None) -> None:
        super().__init__(status, message, body)
        self.id = body.get("id") if isinstance(body, dict) else None
