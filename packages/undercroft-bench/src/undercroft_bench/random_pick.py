"""The `random` arm: a seeded random pick of chunks, the chance floor every other arm must clear."""

from __future__ import annotations

import random
from collections.abc import Sequence

from undercroft_bench.chunking import Chunk
from undercroft_bench.errors import RetrieverFault
from undercroft_bench.retriever import ArmContext

__all__ = ["RandomRetriever", "make_random"]


class RandomRetriever:
    """Answers every question with a uniform random sample of the scope's chunks, from an injected generator."""

    def __init__(self, rng: random.Random) -> None:
        """Create an empty retriever drawing from `rng` (inject a seeded generator for reproducible runs)."""
        self._rng = rng
        self._ids: list[str] = []
        self._indexed = False

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Remember the chunk ids; a second call is refused."""
        if self._indexed:
            raise RetrieverFault("random: index() was already called for this scope")
        self._indexed = True
        self._ids = [chunk.chunk_id for chunk in chunks]

    def search(self, question: str, k: int) -> list[str]:
        """`min(k, chunks)` distinct chunk ids in random order; the question is ignored by design."""
        del question
        return self._rng.sample(self._ids, min(k, len(self._ids)))


def make_random(context: ArmContext) -> RandomRetriever:
    """Arm factory: a generator seeded by the run's seed and the scope id, so each scope draws independently
    and a rerun with the same seed draws identically (string seeds hash with SHA-512, not PYTHONHASHSEED)."""
    # Not a secret: a reproducible chance floor, so a seeded PRNG is exactly right.
    return RandomRetriever(random.Random(f"{context.seed}:{context.scope_id}"))  # noqa: S311
