"""``external:<name>@<dim>``: the caller supplies every vector; the engine never embeds.

Its vectors come from a model this process has never seen, so it refuses semantic-only admission (gate
None) and a vector is admitted only with exactly the declared dimension and every component finite.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from undercroft_core.embedder import EmbedderIdentity, check_texts
from undercroft_core.errors import InvalidInput

__all__ = ["EXTERNAL_PREFIX", "ExternalEmbedder"]

#: Prefix of every external identity name.
EXTERNAL_PREFIX = "external:"

_SPEC = re.compile(r"external:([A-Za-z0-9][A-Za-z0-9._/+-]{0,118})@([1-9][0-9]{0,5})")


class ExternalEmbedder:
    """The embedder of a vault whose vectors are supplied by the caller on every save and search."""

    def __init__(self, name: str, dimension: int) -> None:
        self._identity = EmbedderIdentity(EXTERNAL_PREFIX + name, dimension)
        if _SPEC.fullmatch(self._identity.label) is None:
            raise InvalidInput(f"invalid external embedder name {name!r}")

    @classmethod
    def parse(cls, spec: str) -> ExternalEmbedder:
        """Build from ``external:<name>@<dim>``; anything else is refused."""
        match = _SPEC.fullmatch(spec) if isinstance(spec, str) else None
        if match is None:
            raise InvalidInput(f"external embedder must be declared as 'external:<name>@<dim>', got {spec!r}")
        return cls(match.group(1), int(match.group(2)))

    @property
    def identity(self) -> EmbedderIdentity:
        """``external:<name>`` at the declared dimension."""
        return self._identity

    @property
    def dimension(self) -> int:
        """The declared dimension, enforced exactly."""
        return self._identity.dimension

    @property
    def embed_failures(self) -> int:
        """Always 0: nothing is embedded here."""
        return 0

    @property
    def semantic_admission_gate(self) -> float | None:
        """None: semantic-only admission is refused for vectors from an unseen model."""
        return None

    @property
    def semantic_floor(self) -> float:
        """0.0 unless the operator declares one (UNDERCROFT_SEMANTIC_FLOOR)."""
        return 0.0

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Refused: an external vault takes a vector with every save and search."""
        check_texts(texts)
        raise InvalidInput(f"the vault embedder is {self._identity.label}: supply a vector with every save and search")

    def validate_vector(self, vector: object) -> NDArray[np.float32]:
        """Return ``vector`` as float32 if it has exactly the declared dimension and only finite components."""
        try:
            array = np.asarray(vector, dtype=np.float64)
        except (TypeError, ValueError):
            raise InvalidInput("vector must be a list of numbers") from None
        if array.ndim != 1 or array.shape[0] != self.dimension:
            raise InvalidInput(
                f"vector has shape {array.shape}, the vault embedder {self._identity.label} needs ({self.dimension},)"
            )
        if not np.isfinite(array).all():
            position = int(np.flatnonzero(~np.isfinite(array))[0])
            raise InvalidInput(f"vector component {position} is not finite ({array[position]!r})")
        if array.size and float(np.abs(array).max()) > float(np.finfo(np.float32).max):
            raise InvalidInput("vector overflows float32")
        return array.astype(np.float32)
