"""The typed values resolvers produce: closed vocabularies, rates, CA pins, addresses and secrets."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Final, Literal

__all__ = [
    "OFF",
    "Address",
    "Admission",
    "AdmissionAdvisor",
    "CaPin",
    "EmbedApi",
    "Embedder",
    "Fusion",
    "LlmApi",
    "Off",
    "Rate",
    "ReadAudit",
    "Reranker",
    "Retrieval",
    "Secret",
    "TrustClass",
    "is_loopback_host",
]

#: The value of a declaration explicitly declined with `off` where that differs from leaving it unset.
OFF: Final = "off"
Off = Literal["off"]


class Embedder(StrEnum):
    """UNDERCROFT_EMBEDDER: which embedder (and so which vector space) a vault is in."""

    HASH = "hash"
    ONNX = "onnx"
    ORT = "ort"
    HTTP = "http"


class Reranker(StrEnum):
    """UNDERCROFT_RERANKER: the optional second retrieval stage."""

    ONNX = "onnx"
    ORT = "ort"
    COLBERT = "colbert"
    COLBERT_ORT = "colbert-ort"


class Retrieval(StrEnum):
    """UNDERCROFT_RETRIEVAL: the candidate tier (unset means full scan with the FTS prefilter)."""

    PQ = "pq"
    FDE = "fde"
    HNSW = "hnsw"


class Fusion(StrEnum):
    """UNDERCROFT_FUSION: the lexical/semantic blend (rrf was removed: it measured 7.3pp worse)."""

    BM25 = "bm25"
    LEGACY = "legacy"


class TrustClass(StrEnum):
    """A wing's deployment-assigned trust class, lowest first."""

    QUARANTINED = "quarantined"
    STANDARD = "standard"
    TRUSTED = "trusted"

    @property
    def rank(self) -> int:
        """0 for quarantined, 1 for standard, 2 for trusted: a floor admits wings of rank ≥ its own."""
        return list(TrustClass).index(self)


class Admission(StrEnum):
    """UNDERCROFT_ADMISSION: off leaves the write contract byte-identical; quarantine screens every save."""

    OFF = "off"
    QUARANTINE = "quarantine"


class AdmissionAdvisor(StrEnum):
    """UNDERCROFT_ADMISSION_LLM: the tier-2 advisor, only ever toward quarantine."""

    OFF = "off"
    ADVISORY = "advisory"


class ReadAudit(StrEnum):
    """UNDERCROFT_READ_AUDIT: chain appends one audit record per content-returning read."""

    OFF = "off"
    CHAIN = "chain"


class LlmApi(StrEnum):
    """UNDERCROFT_LLM_API: the request shape of the LLM runtime."""

    OLLAMA = "ollama"
    OPENAI = "openai"


class EmbedApi(StrEnum):
    """UNDERCROFT_EMBED_API: the endpoint shape of a served embedder when probing cannot tell."""

    OLLAMA = "ollama"
    OPENAI = "openai"
    TEI = "tei"


@dataclass(frozen=True)
class Rate:
    """`<count>/<seconds>`: at most `count` committed writes per writer inside a trailing `seconds` window."""

    count: int
    seconds: int

    def __str__(self) -> str:
        """The declaration form, e.g. `20/60`."""
        return f"{self.count}/{self.seconds}"


@dataclass(frozen=True)
class CaPin:
    """A readable PEM file whose certificates become the ONLY trust roots of one outbound client."""

    path: Path
    certificates: int


@dataclass(frozen=True)
class Address:
    """A `host:port` listen address."""

    host: str
    port: int

    @property
    def is_loopback(self) -> bool:
        """True when the host is localhost or a loopback IP (a listener no other machine can reach)."""
        return is_loopback_host(self.host)

    def __str__(self) -> str:
        """The declaration form, brackets around an IPv6 host."""
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


@dataclass(frozen=True)
class Secret:
    """A credential: its repr and str never show the value, so it cannot leak through a log line."""

    _value: str = field(repr=False)

    def reveal(self) -> str:
        """The secret itself, for the one place that presents it."""
        return self._value

    def __str__(self) -> str:
        """A redacted description."""
        return f"<secret, {len(self._value)} characters>"

    def __repr__(self) -> str:
        """A redacted description."""
        return f"Secret({self})"


def is_loopback_host(host: str) -> bool:
    """True for `localhost` (and its subdomains) and for loopback IPv4/IPv6 literals."""
    bare = host.strip("[]").lower()
    if bare == "localhost" or bare.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False
