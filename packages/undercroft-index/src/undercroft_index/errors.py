"""Typed errors of `undercroft_index`."""

__all__ = ["BackendFailed", "Error", "IndexRefused", "MirrorMismatch"]


class Error(Exception):
    """Base of every error raised by `undercroft_index` (this distribution does not depend on core)."""

    #: "run" (exit 1) or "integrity" (exit 2).
    error_class = "run"


class IndexRefused(Error):
    """Input an index cannot take: a wrong shape, a non-finite value, an artifact of the wrong geometry."""


class BackendFailed(Error):
    """A remote index failed or answered something unusable (unreachable, timed out, malformed): exit 1.

    Never an integrity verdict: nothing a backend says is believed, so it cannot produce one.
    """


class MirrorMismatch(Error):
    """A mirror exists but was pushed from another embedding space, or a collection holds another space."""
