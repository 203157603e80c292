"""Typed errors of the memory surfaces: bad input, absent records and integrity verdicts."""

from __future__ import annotations

from undercroft_core.errors import InvalidInput

from undercroft_store.errors import Error, StoreIntegrityError

__all__ = ["FactNotFound", "FactTampered", "InvalidFact", "InvalidSurfaceInput", "SurfaceNotFound"]


class InvalidSurfaceInput(Error, InvalidInput):
    """Bad input to a memory surface (tunnel, diary, dedup, supersession); the message names the rule."""


class InvalidFact(InvalidSurfaceInput):
    """A knowledge-graph argument was refused (empty term, bad date, unknown vocabulary value, bad span)."""


class SurfaceNotFound(Error):
    """A named tunnel, entity or supersession does not exist."""


class FactNotFound(SurfaceNotFound):
    """No fact with that id in this vault."""


class FactTampered(StoreIntegrityError):
    """A fact, entity or tunnel row fails its HMAC tag or its sealed blob does not open."""
