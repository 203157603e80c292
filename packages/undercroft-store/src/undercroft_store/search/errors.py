"""Typed errors of the search pipeline (integrity verdicts come from the store's verified reads)."""

from __future__ import annotations

from undercroft_core.errors import InvalidInput

from undercroft_store.errors import Error

__all__ = ["InvalidSearch", "SearchError"]


class SearchError(Error):
    """Base of every error the search pipeline raises that is not an integrity verdict."""


class InvalidSearch(SearchError, InvalidInput):
    """A search request that cannot run: the message names the field, the value and what is legal."""
