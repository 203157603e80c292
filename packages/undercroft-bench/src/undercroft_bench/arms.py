"""The arms an instrument can run, by name: the one registration point for retrieval systems under test."""

from __future__ import annotations

from undercroft_bench.bm25 import make_bm25
from undercroft_bench.errors import InvalidSetting
from undercroft_bench.random_pick import make_random
from undercroft_bench.retriever import ArmContext, ArmFactory, Retriever
from undercroft_bench.undercroft_arm import (
    make_undercroft,
    make_undercroft_onnx,
    make_undercroft_ort,
    make_undercroft_when,
)

__all__ = ["ARMS", "build_retriever", "resolve_arm"]

# ---- ARM REGISTRATION POINT ---------------------------------------------------------------------------------
# name -> factory building one fresh Retriever per scope (one LoCoMo conversation, one LongMemEval question).
# The `undercroft` arm (a sealed vault with the hash embedder, driven through undercroft_store's public API:
# one fresh vault per scope, each chunk added with its session as metadata, search mapped back to chunk ids)
# is added here by the lead once the store exists: ARMS["undercroft"] = make_undercroft.
ARMS: dict[str, ArmFactory] = {
    "bm25": make_bm25,
    "random": make_random,
    "undercroft": make_undercroft,
    "undercroft-when": make_undercroft_when,
    # The in-process model embedders (issue 24): UNDERCROFT_ONNX_MODEL / _TOKENIZER / _NAME declare the model.
    "undercroft-onnx": make_undercroft_onnx,
    "undercroft-ort": make_undercroft_ort,
}


def resolve_arm(name: str) -> ArmFactory:
    """The factory registered as `name`; an unknown name is refused with the list of known arms."""
    try:
        return ARMS[name]
    except KeyError:
        raise InvalidSetting(f"unknown arm {name!r}; known: {', '.join(sorted(ARMS))}") from None


def build_retriever(name: str, context: ArmContext) -> Retriever:
    """Build one fresh retriever of arm `name` for the scope described by `context`."""
    return resolve_arm(name)(context)
