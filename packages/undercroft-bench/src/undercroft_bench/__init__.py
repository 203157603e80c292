"""Undercroft's benchmark and instrument harnesses (undercroft-bench)."""

from undercroft_bench.arms import ARMS, build_retriever, resolve_arm
from undercroft_bench.chunking import CHUNKERS, Chunk, Session, Turn, protocol_chunks
from undercroft_bench.errors import ArmUnavailable, DataError, Error, InvalidSetting, RetrieverFault
from undercroft_bench.retriever import ArmContext, ArmFactory, Retriever

__version__ = "0.1.0"

__all__ = [
    "ARMS",
    "CHUNKERS",
    "ArmContext",
    "ArmFactory",
    "ArmUnavailable",
    "Chunk",
    "DataError",
    "Error",
    "InvalidSetting",
    "Retriever",
    "RetrieverFault",
    "Session",
    "Turn",
    "__version__",
    "build_retriever",
    "protocol_chunks",
    "resolve_arm",
]
