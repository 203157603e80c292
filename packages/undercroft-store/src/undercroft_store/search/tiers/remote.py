"""The remote tier: candidate ids from an untrusted mirror, everything else from the local vault.

A search through a mirror (``search --backend``) runs the SAME pipeline as a local one — `resolve_scope`
decides the population first (trust floor, quarantine fence, closed vocabularies), then every candidate is
HMAC-verified, decrypted and re-scored locally — with this tier drawing the candidates instead of the scan:

* the mirror is asked for ``plan.hydrate`` ids (optionally within the request's one wing: the only filter a
  backend is trusted to apply, and only to save it work — nothing it returns is believed; on a vault whose
  metadata is sealed the wing is asked by its blind value, as the push labelled the records);
* its answer is shape-checked by `undercroft_index.candidate_ids` (strings only, repeats dropped, capped at
  the distinct ids asked for); an id this vault does not hold is dropped (another vault's, a forged one);
  an id outside the scope is dropped (quarantined, floored, another wing or kind) — the scope's population
  is the one `resolve_scope` computed off the store, whose served-row rule refuses any row whose clear
  labels disagree with its HMAC-covered meta;
* the cosine of each survivor is computed from its OWN stored embedding, decrypted here, never from
  anything the backend holds; and the pipeline hydrates each through the verified read.

Remotely the floor bounds what came back rather than what was generated: an excluded wing's rows still
spend part of the candidate budget (an availability cost, never an integrity one).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from undercroft_index import Error as IndexError_

from undercroft_store.errors import MirrorUnavailable
from undercroft_store.kernel._internal.meta_at_rest import stored_label
from undercroft_store.kernel._internal.transaction import readable
from undercroft_store.kernel.mirror import Mirror
from undercroft_store.search._internal.row_marks import EmbeddingRows, decode_rows
from undercroft_store.search.candidates import Candidates, PoolPlan
from undercroft_store.store import VaultStore

__all__ = ["RemoteTier"]

_LOOKUP = 500


class RemoteTier:
    """Candidates proposed by a mirror, kept only when this vault holds them inside the searched scope."""

    def __init__(self, store: VaultStore, mirror: Mirror, wing: str | None) -> None:
        """Bind one search: the store, the mirror, and the request's wing (None: unscoped)."""
        self._store = store
        self._mirror = mirror
        self._wing = None if wing is None else stored_label(readable(store._context), "wing", wing)
        self._unit: dict[int, NDArray[np.float32]] = {}
        #: What the last draw saw: ids proposed, kept; for the trace and the tests.
        self.proposed = 0
        self.kept = 0

    @property
    def name(self) -> str:
        """``remote:<backend>``."""
        return f"remote:{self._mirror.backend.name}"

    def _seqs_of(self, ids: list[str]) -> dict[str, int]:
        connection = readable(self._store._context).connection
        found: dict[str, int] = {}
        for first in range(0, len(ids), _LOOKUP):
            batch = ids[first : first + _LOOKUP]
            marks = ",".join("?" * len(batch))
            sql = f"SELECT id, seq FROM drawers WHERE id IN ({marks})"  # noqa: S608 - marks only
            found.update({str(i): int(s) for i, s in connection.execute(sql, batch)})
        return found

    def _load(self, seqs: list[int]) -> None:
        """Decrypt the stored embeddings of ``seqs`` not yet held (sealed blobs open under ``{id}/emb``)."""
        wanted = [s for s in seqs if s not in self._unit]
        if not wanted:
            return
        connection = readable(self._store._context).connection
        rows = []
        for first in range(0, len(wanted), _LOOKUP):
            batch = wanted[first : first + _LOOKUP]
            marks = ",".join("?" * len(batch))
            sql = f"SELECT seq, id, embedding, meta_json FROM drawers WHERE seq IN ({marks})"  # noqa: S608
            rows += connection.execute(sql, batch).fetchall()
        table = EmbeddingRows(
            seqs=np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
            marks=[b""] * len(rows),
            ids=[str(r[1]) for r in rows],
            blobs=[bytes(r[2]) for r in rows],
            metas=[bytes(r[3]) for r in rows],
        )
        unit = decode_rows(self._store, table, list(range(len(rows))))
        for position, seq in enumerate(table.seqs.tolist()):
            self._unit[int(seq)] = unit[position]

    def candidates(self, query: NDArray[np.float32], scope_seqs: NDArray[np.int64], plan: PoolPlan) -> Candidates:
        """The mirror's proposals that this vault holds inside the scope, best local cosine first."""
        k = max(1, min(plan.hydrate, len(scope_seqs)))
        if not len(scope_seqs):
            return Candidates(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32), 0)
        try:
            ids = self._mirror.backend.query(self._mirror.collection, query.tolist(), k, wing=self._wing)
        except IndexError_ as error:
            raise MirrorUnavailable(str(error)) from None
        self.proposed = len(ids)
        held = self._seqs_of(list(dict.fromkeys(ids))[:k])
        proposed = np.fromiter(held.values(), dtype=np.int64, count=len(held))
        inside = np.sort(proposed[np.isin(proposed, scope_seqs)])
        self.kept = len(inside)
        cosines = self.cosines(query, inside)
        order = np.lexsort((inside, -cosines))
        return Candidates(seqs=inside[order], cosines=cosines[order].astype(np.float32), stage_one=len(ids))

    def cosines(self, query: NDArray[np.float32], seqs: NDArray[np.int64]) -> NDArray[np.float32]:
        """Exact cosines of ``seqs`` from their own stored embeddings."""
        wanted = [int(s) for s in seqs]
        self._load(wanted)
        if not wanted:
            return np.empty(0, dtype=np.float32)
        matrix = np.stack([self._unit[s] for s in wanted])
        found: NDArray[np.float32] = (matrix @ query).astype(np.float32)
        return found
