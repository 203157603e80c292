"""The pluggable retrieval system every instrument drives: the `Retriever` protocol and what builds one.

An instrument creates one fresh retriever per isolation scope (a LoCoMo conversation, a LongMemEval
question), hands it every chunk once with `index`, then asks each question verbatim with `search`. The
retriever answers with chunk ids, best first; the instrument alone maps them to sessions and scores them,
so no arm can score itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from undercroft_bench.chunking import Chunk

__all__ = ["ArmContext", "ArmFactory", "Retriever"]


@runtime_checkable
class Retriever(Protocol):
    """A retrieval system under test, scoped to one conversation (or one question's haystack)."""

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Ingest every chunk of the scope; called exactly once, before any search."""

    def search(self, question: str, k: int) -> list[str]:
        """Return at most `k` chunk ids, best first, each one of the ids given to `index`."""


@dataclass(frozen=True)
class ArmContext:
    """What a factory knows when it builds one retriever: the scope it serves, a seed, free-form options."""

    scope_id: str
    seed: int = 0
    options: Mapping[str, str] = field(default_factory=dict)


#: Builds one fresh retriever for one scope.
ArmFactory = Callable[[ArmContext], Retriever]
