"""Typed errors of `undercroft_bench`."""

from undercroft_core.errors import InvalidInput, UndercroftError

__all__ = ["ArmUnavailable", "DataError", "Error", "InvalidSetting", "RetrieverFault"]


class Error(UndercroftError):
    """Base of every error raised by `undercroft_bench`."""


class DataError(Error, InvalidInput):
    """A benchmark data file is missing, is not JSON, or does not have the shape its loader expects."""


class InvalidSetting(Error, InvalidInput):
    """An instrument setting (k, pool, arm, chunking) was refused before anything ran."""


class ArmUnavailable(Error):
    """A registered arm or chunking seam cannot run yet: what it needs is not built or not installed."""


class RetrieverFault(Error):
    """A retriever broke the protocol, for example by returning a chunk id it was never given."""
