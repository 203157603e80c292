"""Typed errors of `undercroft_llm`."""

from undercroft_core.errors import UndercroftError

__all__ = ["EndpointUnusable", "Error", "MalformedAnswer", "ModelCallFailed"]


class Error(UndercroftError):
    """Base of every error raised by `undercroft_llm`."""


class EndpointUnusable(Error):
    """A declared served model cannot be used (probe failed, shape unknown, dimension disagrees): refuse to open.

    A run failure (exit 1), never an integrity verdict. The message names the variable to fix and never
    carries drawer text or a credential.
    """


class ModelCallFailed(Error):
    """One request to a served model failed (transport, timeout, an error status, a body of the wrong shape).

    ``transport`` is True when no answer arrived at all (refused connection, timeout, TLS failure).
    """

    def __init__(self, message: str, *, transport: bool = False) -> None:
        super().__init__(message)
        self.transport = transport


class MalformedAnswer(Error):
    """A model's answer broke the strict output schema: the whole answer is refused, nothing of it is used."""
