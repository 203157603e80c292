"""What a build has: the closed vocabulary of components a declaration can select, and the set one build ships.

A declaration whose value *selects or switches on* a component (an embedder, a reranker, a retrieval tier,
the admission advisor, a remote index backend, the trace exporter, the metrics endpoint) names a
`Capability`. Whether the running program has it is one declared fact, a `Build`, which the program's
composition root fills from the components it actually wires — so `config check` and start-up read the
same fact and cannot disagree, and an issue that lands a component flips it by wiring the component.
A declaration naming a capability the build lacks refuses to start: running without what the operator
selected would silently ignore the declaration.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Build", "Capability"]


class Capability(StrEnum):
    """A component a declaration can select. The value is `<kind>/<variant>`, as messages show it."""

    EMBEDDER_HASH = "embedder/hash"
    EMBEDDER_ONNX = "embedder/onnx"
    EMBEDDER_ORT = "embedder/ort"
    EMBEDDER_HTTP = "embedder/http"
    RERANKER_ONNX = "reranker/onnx"
    RERANKER_ORT = "reranker/ort"
    RERANKER_COLBERT = "reranker/colbert"
    RERANKER_COLBERT_ORT = "reranker/colbert-ort"
    RETRIEVAL_PQ = "retrieval/pq"
    RETRIEVAL_FDE = "retrieval/fde"
    RETRIEVAL_HNSW = "retrieval/hnsw"
    ADMISSION_ADVISOR = "admission/advisor"
    INDEX_QDRANT = "index/qdrant"
    INDEX_CHROMA = "index/chroma"
    INDEX_MILVUS = "index/milvus"
    INDEX_WEAVIATE = "index/weaviate"
    INDEX_PGVECTOR = "index/pgvector"
    TELEMETRY_OTLP = "telemetry/otlp"
    TELEMETRY_METRICS = "telemetry/metrics"

    @property
    def description(self) -> str:
        """What the component is, in words, for a refusal naming it."""
        return _DESCRIPTIONS[self]


_DESCRIPTIONS: dict[Capability, str] = {
    Capability.EMBEDDER_HASH: "hash embedder",
    Capability.EMBEDDER_ONNX: "onnx (portable CPU) embedder",
    Capability.EMBEDDER_ORT: "ort (ONNX Runtime) embedder",
    Capability.EMBEDDER_HTTP: "served (http) embedder",
    Capability.RERANKER_ONNX: "onnx cross-encoder reranker",
    Capability.RERANKER_ORT: "ort cross-encoder reranker",
    Capability.RERANKER_COLBERT: "colbert late-interaction reranker",
    Capability.RERANKER_COLBERT_ORT: "colbert-ort late-interaction reranker",
    Capability.RETRIEVAL_PQ: "pq retrieval tier",
    Capability.RETRIEVAL_FDE: "fde retrieval tier",
    Capability.RETRIEVAL_HNSW: "hnsw retrieval tier",
    Capability.ADMISSION_ADVISOR: "LLM admission advisor",
    Capability.INDEX_QDRANT: "Qdrant remote index backend",
    Capability.INDEX_CHROMA: "Chroma remote index backend",
    Capability.INDEX_MILVUS: "Milvus remote index backend",
    Capability.INDEX_WEAVIATE: "Weaviate remote index backend",
    Capability.INDEX_PGVECTOR: "pgvector remote index backend",
    Capability.TELEMETRY_OTLP: "OTLP trace exporter",
    Capability.TELEMETRY_METRICS: "/metrics endpoint",
}


@dataclass(frozen=True)
class Build:
    """The capabilities one program ships; a declaration naming any other refuses to start."""

    capabilities: frozenset[Capability]

    @classmethod
    def of(cls, capabilities: Iterable[Capability]) -> Build:
        """A build from the components its composition root wires."""
        return cls(frozenset(capabilities))

    def has(self, capability: Capability) -> bool:
        """True when this build ships `capability`."""
        return capability in self.capabilities

    def lacking(self) -> tuple[Capability, ...]:
        """Every capability this build does not ship, in declaration order."""
        return tuple(capability for capability in Capability if capability not in self.capabilities)
