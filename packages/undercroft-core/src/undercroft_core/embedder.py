"""The embedder interface: identity, dimension, batch embed, the semantic gate and floor, the counted degrade.

Every embedder the store receives implements :class:`Embedder`. ``embed`` never raises for an inference
failure: :class:`DegradingEmbedder` turns a failed, malformed or non-finite output into a zero vector for
that text and counts it (``embed_failures``), so a drawer is still written verbatim — lexically findable,
semantically invisible until re-embedded.
"""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from undercroft_core.errors import InvalidInput

__all__ = [
    "MAX_DIMENSION",
    "DegradingEmbedder",
    "Embedder",
    "EmbedderIdentity",
    "calibrated_semantic_score",
    "check_texts",
    "cosine",
]

#: Largest dimension any embedder may declare.
MAX_DIMENSION = 65536

_IDENTITY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+-]{0,127}")


@dataclass(frozen=True, slots=True)
class EmbedderIdentity:
    """The vector space a vault's embeddings live in: a name that names the algorithm or model, and a dimension.

    Recorded per vault on first write; a different identity is refused rather than ranked.
    """

    name: str
    dimension: int

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or _IDENTITY_NAME.fullmatch(self.name) is None:
            raise InvalidInput(f"invalid embedder name {self.name!r}")
        if "@" in self.name:
            raise InvalidInput(f"embedder name {self.name!r} must not contain '@' (it separates the dimension)")
        if isinstance(self.dimension, bool) or not isinstance(self.dimension, int):
            raise InvalidInput(f"embedder dimension must be an integer, got {self.dimension!r}")
        if not 1 <= self.dimension <= MAX_DIMENSION:
            raise InvalidInput(f"embedder dimension must be in [1, {MAX_DIMENSION}], got {self.dimension}")

    @property
    def label(self) -> str:
        """``name@dimension``, the form recorded and compared."""
        return f"{self.name}@{self.dimension}"

    @classmethod
    def parse(cls, label: str) -> EmbedderIdentity:
        """Parse ``name@dimension`` (the dimension in plain decimal, no sign, no leading zero)."""
        if not isinstance(label, str) or label.count("@") != 1:
            raise InvalidInput(f"embedder identity must be 'name@dimension', got {label!r}")
        name, _, digits = label.partition("@")
        if re.fullmatch(r"[1-9][0-9]{0,5}", digits) is None:
            raise InvalidInput(f"embedder identity {label!r} has an invalid dimension {digits!r}")
        return cls(name, int(digits))


@runtime_checkable
class Embedder(Protocol):
    """What the store needs from an embedder (hash, onnx, ort, http or external)."""

    @property
    def identity(self) -> EmbedderIdentity:
        """The vector space this embedder produces."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector (equal to ``identity.dimension``)."""
        ...

    @property
    def embed_failures(self) -> int:
        """How many vectors degraded to zero over this object's life."""
        ...

    @property
    def semantic_admission_gate(self) -> float | None:
        """Cosine below which a hit with no lexical evidence is dropped; None refuses semantic-only admission."""
        ...

    @property
    def semantic_floor(self) -> float:
        """Cosine where unrelated text sits in this space: the neutral point of the cosine→score map."""
        ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed a batch: a C-contiguous float32 matrix ``(len(texts), dimension)``, L2-normalised or zero rows."""
        ...


def check_texts(texts: object) -> list[str]:
    """Refuse a batch that is not a sequence of strings (a caller bug, not an inference failure)."""
    if isinstance(texts, str | bytes) or not isinstance(texts, Sequence):
        raise InvalidInput(f"embed takes a sequence of strings, got {type(texts).__name__}")
    batch = list(texts)
    for position, text in enumerate(batch):
        if not isinstance(text, str):
            raise InvalidInput(f"embed input {position} is {type(text).__name__}, not a string")
    return batch


class DegradingEmbedder(ABC):
    """Base of an embedder whose failures degrade to counted zero vectors instead of failing a write.

    Subclasses implement :meth:`_embed_batch`. If it raises or returns the wrong shape for a batch, each
    text is retried alone so only the texts that fail degrade; a row that is non-finite or not a vector
    degrades alone. ``last_failure`` keeps the reason of the latest degrade (never the text).
    """

    def __init__(self, identity: EmbedderIdentity) -> None:
        self._identity = identity
        self._failures = 0
        self._lock = threading.Lock()
        self.last_failure: str | None = None

    @property
    def identity(self) -> EmbedderIdentity:
        """The vector space this embedder produces."""
        return self._identity

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self._identity.dimension

    @property
    def embed_failures(self) -> int:
        """How many vectors degraded to zero over this object's life."""
        return self._failures

    @property
    @abstractmethod
    def semantic_admission_gate(self) -> float | None:
        """Cosine below which a hit with no lexical evidence is dropped; None refuses semantic-only admission."""

    @property
    @abstractmethod
    def semantic_floor(self) -> float:
        """Cosine where unrelated text sits in this space."""

    @abstractmethod
    def _embed_batch(self, texts: list[str]) -> NDArray[np.floating]:
        """Embed a batch (may raise; the caller degrades)."""

    def _record(self, count: int, reason: str) -> None:
        with self._lock:
            self._failures += count
            self.last_failure = reason

    def _attempt(self, texts: list[str]) -> NDArray[np.float32] | str:
        try:
            raw = self._embed_batch(texts)
        except Exception as error:  # noqa: BLE001 - any inference failure degrades; it must not fail a write
            return f"{type(error).__name__}: {error}"
        matrix = np.asarray(raw)
        if matrix.shape != (len(texts), self.dimension) or matrix.dtype.kind != "f":
            expected = (len(texts), self.dimension)
            return f"embedder returned shape {matrix.shape} dtype {matrix.dtype}, expected {expected}"
        return np.ascontiguousarray(matrix, dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed a batch; failures become counted zero rows, never an exception."""
        batch = check_texts(texts)
        result = self._attempt(batch) if batch else np.zeros((0, self.dimension), dtype=np.float32)
        if isinstance(result, str):
            rows = []
            for text in batch:
                single = self._attempt([text])
                if isinstance(single, str):
                    self._record(1, single)
                    rows.append(np.zeros(self.dimension, dtype=np.float32))
                else:
                    rows.append(single[0])
            result = np.stack(rows) if rows else np.zeros((0, self.dimension), dtype=np.float32)
        finite = np.isfinite(result).all(axis=1)
        if not finite.all():
            bad = int((~finite).sum())
            result = result.copy()
            result[~finite] = 0.0
            self._record(bad, f"{bad} non-finite vector(s)")
        return result


def cosine(a: NDArray[np.floating], b: NDArray[np.floating]) -> float:
    """Cosine similarity of two vectors; 0.0 when either is the zero vector."""
    norm = float(np.linalg.norm(a)) * float(np.linalg.norm(b))
    if norm == 0.0:
        return 0.0
    return float(np.dot(a.astype(np.float64), b.astype(np.float64)) / norm)


def calibrated_semantic_score(cosine_value: float, floor: float) -> float:
    """Map a cosine into [0, 1] with the space's ``floor`` as the neutral 0.5.

    With floor 0 this is exactly ``(cos + 1) / 2`` (the hash embedder's map, bit for bit); otherwise
    ``[floor, 1]`` maps linearly onto ``[0.5, 1]`` and ``[-1, floor]`` onto ``[0, 0.5]``.
    """
    if not 0.0 <= floor <= 0.98:
        raise InvalidInput(f"semantic floor must be in [0.0, 0.98], got {floor!r}")
    value = min(1.0, max(-1.0, cosine_value))
    if floor == 0.0:
        return (value + 1.0) / 2.0
    if value >= floor:
        return 0.5 + 0.5 * (value - floor) / (1.0 - floor)
    return 0.5 * (value + 1.0) / (floor + 1.0)
