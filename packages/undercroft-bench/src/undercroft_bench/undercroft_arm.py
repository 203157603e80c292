"""The `undercroft` arm: a fresh sealed vault per scope, searched by the store's own hybrid search.

One temporary palace per scope holds one sealed vault opened with the zero-download hash embedder. Every
chunk is saved through the store's public batch write API (one transaction) as a drawer in the room named
after its session, with the session's day (when the data gives one) as the drawer's ``content_date``; the
write results' ids map each drawer back to its chunk. A question is answered by
`undercroft_store.search.Searcher` with ``limit`` = the instrument's pool, and the hits' ids are returned in
the order the store ranked them: an honest pass-through, no re-ranking here. The `undercroft-when` arm is the
same search with ``when_from_query`` set (the product's opt-in date window read from the question; off by
default there, so it is a separate arm here). The `undercroft-onnx` and `undercroft-ort` arms are the same
vault with the in-process model embedder the product's ``UNDERCROFT_ONNX_MODEL`` / ``_TOKENIZER`` / ``_NAME``
(and ``UNDERCROFT_ORT_POOL``) declare, built once per process and shared by every scope (the model load is
not an ingest cost); the distribution is imported only when such an arm runs.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import tempfile
import weakref
from collections.abc import Sequence
from pathlib import Path

from undercroft_core import CrossEncoder, Drawer, Embedder, HashEmbedder, LateEncoder
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.search import Searcher, SearchRequest

from undercroft_bench.chunking import Chunk
from undercroft_bench.errors import RetrieverFault
from undercroft_bench.retriever import ArmContext

__all__ = [
    "ARM_WING",
    "FILED_AT",
    "UndercroftRetriever",
    "make_undercroft",
    "make_undercroft_onnx",
    "make_undercroft_ort",
    "make_undercroft_when",
    "model_embedder",
]

#: The wing every chunk of a scope is filed under.
ARM_WING = "bench"
#: A fixed filing stamp: recency is write order, never wall-clock age, so the stamp changes no ranking.
FILED_AT = "2024-01-01T00:00:00Z"
_ROOM_CHARS = re.compile(r"[^a-z0-9_-]+")


def _room(session_id: str) -> str:
    return "session-" + (_ROOM_CHARS.sub("-", session_id.lower()).strip("-") or "none")


class UndercroftRetriever:
    """One scope's sealed vault in a temporary palace, removed when the retriever is collected."""

    def __init__(
        self,
        context: ArmContext,
        *,
        when_from_query: bool = False,
        embedder: Embedder | None = None,
        cross_encoder: CrossEncoder | None = None,
        late_encoder: LateEncoder | None = None,
    ) -> None:
        """Create the palace and the sealed vault (hash embedder unless given); nothing is written yet.

        ``cross_encoder`` attaches the product's rescore tier (`undercroft_store.search.rescore`) to the vault,
        exactly as the CLI's composition root does for ``UNDERCROFT_RERANKER=onnx|ort``; ``late_encoder`` the
        stored late-interaction stage (`undercroft_store.search.late`: each chunk's token matrix stored sealed
        at write time, MaxSim over them at search), as it does for ``UNDERCROFT_RERANKER=colbert|colbert-ort``."""
        self._when_from_query = when_from_query
        self._directory = tempfile.TemporaryDirectory(prefix="undercroft-arm-")
        self._palace = Palace(Path(self._directory.name))
        self._palace.create_vault("bench", level="sealed")
        self._embedder = embedder if embedder is not None else HashEmbedder()
        self._store = self._palace.open_vault("bench", self._embedder)
        if cross_encoder is not None:
            self._store.attach_cross_encoder(cross_encoder)
        if late_encoder is not None:
            self._store.attach_late_encoder(late_encoder)
        self._searcher = Searcher.from_settings(self._store, self._embedder)
        self._chunk_of: dict[str, str] = {}
        self._indexed = False
        self.scope_id = context.scope_id
        weakref.finalize(self, _close, self._store, self._palace, self._directory)

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Save every chunk as one drawer (one batch, screened like any save) and keep the id mapping."""
        if self._indexed:
            raise RetrieverFault("undercroft: index() was already called for this scope")
        self._indexed = True
        drawers = []
        for position, item in enumerate(chunks):
            room = _room(item.session_id)
            drawers.append(
                DrawerWrite(
                    Drawer(
                        id=self._store.drawer_ids.append(ARM_WING, room, position),
                        content=item.text,
                        wing=ARM_WING,
                        room=room,
                        chunk_index=position,
                        id_recipe="append",
                        added_by="bench",
                        filed_at=FILED_AT,
                        content_date=item.session_date,
                    )
                )
            )
        results = self._store.write(drawers, screening=Screen())
        for item, result in zip(chunks, results, strict=True):
            self._chunk_of[result.id] = item.chunk_id

    def search(self, question: str, k: int) -> list[str]:
        """The store's ranking for ``question`` with ``limit = k``, mapped back to chunk ids."""
        result = self._searcher.search(SearchRequest(question, limit=k, when_from_query=self._when_from_query))
        return [self._chunk_of[hit.id] for hit in result.hits]


def _close(store: object, palace: Palace, directory: tempfile.TemporaryDirectory[str]) -> None:
    close = getattr(store, "close", None)
    if close is not None:
        close()
    palace.close()
    directory.cleanup()


def make_undercroft(context: ArmContext) -> UndercroftRetriever:
    """Arm factory: one fresh sealed vault per scope."""
    return UndercroftRetriever(context)


def make_undercroft_when(context: ArmContext) -> UndercroftRetriever:
    """Arm factory: as `make_undercroft`, every question searched with ``when_from_query``."""
    return UndercroftRetriever(context, when_from_query=True)


@functools.cache
def model_embedder(runtime: str) -> Embedder:
    """The ``onnx`` or ``ort`` embedder the environment declares, built once per process."""
    distribution, factory = {
        "onnx": ("undercroft_embed_onnx", "OnnxEmbedder"),
        "ort": ("undercroft_embed_ort", "OrtEmbedder"),
    }[runtime]
    embedder: Embedder = getattr(importlib.import_module(distribution), factory).from_env(os.environ)
    return embedder


def make_undercroft_onnx(context: ArmContext) -> UndercroftRetriever:
    """Arm factory: as `make_undercroft`, embedded by the portable onnx runtime (one CPU session)."""
    return UndercroftRetriever(context, embedder=model_embedder("onnx"))


def make_undercroft_ort(context: ArmContext) -> UndercroftRetriever:
    """Arm factory: as `make_undercroft`, embedded by the tuned ort runtime (``UNDERCROFT_ORT_POOL``)."""
    return UndercroftRetriever(context, embedder=model_embedder("ort"))
