"""Typed refusals of the miners: a transcript that does not parse, or a file whose format is unclear."""

from __future__ import annotations

from undercroft_core.errors import InvalidInput

from undercroft_cli.errors import Error

__all__ = ["AmbiguousFormat", "MalformedTranscript", "MiningError", "UnrecognisedFormat"]


class MiningError(Error, InvalidInput):
    """Base of every mining refusal: bad input (exit 1), never an integrity verdict."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        #: The file the refusal is about, as the caller named it.
        self.path = path


class MalformedTranscript(MiningError):
    """A file of a recognised format that breaks the format's shape at a named position."""

    def __init__(self, path: str, position: str, reason: str) -> None:
        super().__init__(path, f"{position}: {reason}")
        #: Where the problem is: ``line N``, ``line N column M`` or a JSON path such as ``$[0].mapping``.
        self.position = position
        #: What is wrong there.
        self.reason = reason


class UnrecognisedFormat(MiningError):
    """A file whose content matches no supported transcript format."""


class AmbiguousFormat(MiningError):
    """A file whose content matches more than one transcript format: refused rather than guessed."""

    def __init__(self, path: str, candidates: tuple[str, ...]) -> None:
        super().__init__(
            path, f"content matches several transcript formats ({', '.join(candidates)}); refusing to guess"
        )
        #: The formats the content matched, sorted.
        self.candidates = candidates
