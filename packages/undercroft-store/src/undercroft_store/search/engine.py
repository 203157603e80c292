"""The search pipeline over one opened vault: scope → candidates → verified hydration → fusion → gate →
selection → hits. Every candidate is HMAC-verified and decrypted (sealed vaults) before it is scored.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime
from functools import partial
from operator import attrgetter
from typing import Final, Literal

import numpy as np
import undercroft_obs as obs
from numpy.typing import NDArray
from undercroft_config import settings
from undercroft_core.drawer import Drawer
from undercroft_core.embedder import Embedder
from undercroft_core.errors import InvalidInput
from undercroft_core.language import (
    WhenWindow,
    function_words,
    parse_when,
    without_words,
)
from undercroft_obs import names

from undercroft_store.kernel._internal.read_door import InternalRead, audited_read, silent
from undercroft_store.kernel.mirror import Mirror, require_mirror
from undercroft_store.kernel.trust import trust_assignments as read_trust
from undercroft_store.search._internal.analysis import AnalysisMemo
from undercroft_store.search._internal.scope_memo import ScopeMemo
from undercroft_store.search._internal.snapshot import SearchSnapshot
from undercroft_store.search.candidates import (
    TILED_DEPTH,
    CandidateTier,
    EmbeddingCache,
    FullScanTier,
    joined,
    plan_pool,
)
from undercroft_store.search.dated import DatedIndex, dated_joiners
from undercroft_store.search.errors import InvalidSearch
from undercroft_store.search.fts import fts_joiners
from undercroft_store.search.fusion import FusionPolicy, recency_by_share, semantic_scores
from undercroft_store.search.gate import admit, resolve_gate
from undercroft_store.search.hits import SearchHit, SearchResult, elapsed_days
from undercroft_store.search.late import LateRescore
from undercroft_store.search.lexical import LexicalQuery, score_pool
from undercroft_store.search.lexicon import Lexicon
from undercroft_store.search.postings import Postings
from undercroft_store.search.request import SearchRequest
from undercroft_store.search.rescore import CrossEncoderRescore
from undercroft_store.search.scope import TrustPolicy, resolve_scope
from undercroft_store.search.selection import cap_rooms, page
from undercroft_store.search.tiers import FdeOptions, FdeTier, HnswTier, ScaledTier, TierOptions, scaled_tier
from undercroft_store.search.tiers.fde import NEEDS_COLBERT
from undercroft_store.search.tiers.remote import RemoteTier
from undercroft_store.search.trace import SearchTrace
from undercroft_store.store import VaultStore

__all__ = ["Searcher"]


_SCRIPTS: Final = attrgetter("scripts")
#: Searches restarted when a returned drawer vanished under a concurrent delete.
_ATTEMPTS: Final = 3


class _Vanished(Exception):
    """A drawer chosen for the page was deleted before it could be read: score again on the new generation."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _filed(drawer: Drawer) -> datetime:
    return datetime.fromisoformat(drawer.filed_at.replace("Z", "+00:00"))


def _rescore_stage(store: VaultStore, env: Mapping[str, str] | None) -> CrossEncoderRescore | LateRescore | None:
    """The second stage the composition root attached to ``store``: late interaction over the stored matrices
    (``UNDERCROFT_LATE_TOP_N`` deep), else a cross-encoder (``UNDERCROFT_RERANK_TOP_N``), else none."""
    declared = str(settings.reranker(env) or "")
    if store.late_encoder is not None:
        backend = "ort" if declared == "colbert-ort" else "onnx"
        return LateRescore(store, store.late_encoder, settings.late_top_n(env), backend=backend)
    if store.cross_encoder is not None:
        return CrossEncoderRescore(store.cross_encoder, settings.rerank_top_n(env), backend=declared or "onnx")
    return None


class Searcher:
    """Hybrid search over one opened vault. Holds the vault's decrypt-once embedding cache: keep one per handle."""

    def __init__(
        self,
        store: VaultStore,
        embedder: Embedder,
        *,
        fusion: FusionPolicy | None = None,
        gate: float | Literal["off"] | None = None,
        pool_div: int | None = 64,
        fts_prefilter_min: int | None = 2048,
        trust: TrustPolicy | None = None,
        trust_reader: Callable[[], Mapping[str, str]] | None = None,
        trace: bool = False,
        clock: Callable[[], datetime] = _utc_now,
        retrieval: str | None = None,
        tier_options: TierOptions | None = None,
        fde_options: FdeOptions | None = None,
        mirror: Mirror | None = None,
        rescore: CrossEncoderRescore | LateRescore | None = None,
    ) -> None:
        """Bind the pipeline to ``store``; ``gate``/``fusion.floor`` default to the embedder's own calibration.

        ``trust_reader``, when given, supplies the wing assignments afresh for every search a floor applies to
        (the vault's own verified trust table, so an assignment made after this searcher was built counts);
        ``trust`` then contributes only its vault floor. ``fts_prefilter_min`` (None: off): on an hmac-only
        vault, an unpinned search whose population exceeds it draws its lexical joiners from the FTS5 index
        (`search.fts`) instead of the RAM postings. ``retrieval`` names the candidate tier (`search.tiers`:
        ``pq``, ``hnsw`` or ``fde``, which needs a late encoder attached to ``store``; None: the full scan);
        ``fde_options`` the FDE tier's first-build shape. ``mirror`` (injected by the composition root) makes every
        search draw its candidate ids from that remote mirror instead (`search.tiers.remote`): the mirror must
        exist and hold this vault's embedding space, or the search refuses (`MirrorUnavailable`). ``rescore``
        re-orders the top of the fused ranking with a cross-encoder (`search.rescore`) or by MaxSim over the
        stored token matrices (`search.late`).
        """
        self._store = store
        self._embedder = embedder
        self._fusion = fusion or FusionPolicy(floor=embedder.semantic_floor)
        self._gate = resolve_gate(embedder, gate)
        if pool_div is not None and (isinstance(pool_div, bool) or not isinstance(pool_div, int) or pool_div < 1):
            raise InvalidSearch(f"pool_div must be a positive integer or None; got {pool_div!r}")
        self._pool_div = pool_div
        if fts_prefilter_min is not None and (
            isinstance(fts_prefilter_min, bool) or not isinstance(fts_prefilter_min, int) or fts_prefilter_min < 0
        ):
            raise InvalidSearch(f"fts_prefilter_min must be a non-negative integer or None; got {fts_prefilter_min!r}")
        self._fts_min = fts_prefilter_min
        self._trust = trust or TrustPolicy({})
        self._trust_reader = trust_reader
        self._trace = trace
        self._clock = clock
        self.cache = EmbeddingCache()
        #: The scaled candidate tier (None: the full scan over `cache`).
        self.tier: ScaledTier | None = scaled_tier(retrieval, tier_options, fde_options)
        if isinstance(self.tier, FdeTier) and store.late_encoder is None:
            raise InvalidSearch(NEEDS_COLBERT)
        self.lexicon = Lexicon()
        self._scopes = ScopeMemo(store)
        self._analysis = AnalysisMemo()  # entities and time mentions: once per drawer, not once per hit
        self._postings: Postings | None = None
        #: The vault's sealed snapshot of this state: tried at the first search, stored after a full fill.
        self.snapshot = SearchSnapshot()
        self._dated = DatedIndex()
        self._mirror = mirror
        self._mirror_checked = False
        self.rescore = rescore

    @classmethod
    def from_settings(
        cls,
        store: VaultStore,
        embedder: Embedder,
        *,
        env: Mapping[str, str] | None = None,
        trust_assignments: Mapping[str, str] | None = None,
        clock: Callable[[], datetime] = _utc_now,
        mirror: Mirror | None = None,
    ) -> Searcher:
        """Build from the ``UNDERCROFT_*`` declarations (fusion, weight, floor, gate, pool div, trace, trust floor).

        ``trust_assignments`` None (the default) reads the vault's own trust table through the label guard
        (`undercroft_store.kernel.trust.trust_assignments`) whenever a floor applies, so the vault floor
        ``UNDERCROFT_TRUST_FLOOR`` excludes the wings the operator assigned below it; a tampered table refuses.
        A cross-encoder the composition root attached to ``store`` reranks the top ``UNDERCROFT_RERANK_TOP_N``.
        """
        floor = settings.semantic_floor(env)
        policy = FusionPolicy(
            mode="legacy" if settings.fusion(env) == "legacy" else "bm25",
            weight=settings.fusion_weight(env),
            floor=embedder.semantic_floor if floor is None else floor,
        )
        vault_floor = settings.trust_floor(env)
        reader: Callable[[], Mapping[str, str]] | None = None
        if trust_assignments is None:
            reader = partial(read_trust, store)
        return cls(
            store,
            embedder,
            fusion=policy,
            gate=settings.semantic_gate(env),
            pool_div=settings.pool_div(env),
            fts_prefilter_min=settings.fts_prefilter_min(env),
            trust=TrustPolicy(dict(trust_assignments or {}), None if vault_floor is None else str(vault_floor)),
            trust_reader=reader,
            trace=settings.search_trace(env),
            clock=clock,
            retrieval=settings.retrieval(env),
            tier_options=TierOptions(
                ivf_min=settings.ivf_min(env),
                nprobe=settings.ivf_nprobe(env),
                train_source_cap=settings.train_source_cap(env),
            ),
            fde_options=FdeOptions(**settings.fde_parameters(env), **settings.fde_compression(env)),
            mirror=mirror,
            rescore=_rescore_stage(store, env),
        )

    def _drawing_tier(self) -> tuple[NDArray[np.int64], CandidateTier | FdeTier]:
        """Every live seq and the tier that draws this search's candidates, brought to the store's generation
        (the FDE tier still to be bound to the search's query: `FdeTier.for_query`)."""
        scaled = self.tier
        if scaled is None:
            if not self.snapshot.tried and self._mirror is None:
                self._postings = self.snapshot.restore(self._store, self.cache, self.lexicon) or self._postings
            seqs, unit = self.cache.load(self._store)
            return seqs, FullScanTier(seqs, unit)
        if isinstance(scaled, HnswTier):  # built from the full matrix: the whole snapshot serves it
            if not self.snapshot.tried and self._mirror is None:
                self._postings = self.snapshot.restore(self._store, self.cache, self.lexicon) or self._postings
            return scaled.prepare(self._store, self.cache)
        if not self.snapshot.tried and self._mirror is None:  # pq, fde: the postings only, RAM stays bounded
            restored = self.snapshot.restore(self._store, self.cache, self.lexicon, embeddings=False)
            self._postings = restored or self._postings
        return scaled.prepare(self._store)

    @property
    def postings(self) -> Postings | None:
        """The RAM postings of the whole vault (None until a wide search or `warm` builds them)."""
        return self._postings

    @property
    def gate(self) -> float | None:
        """The semantic admission gate in force (None: lexical evidence only)."""
        return self._gate

    def _trust_for(self, request: SearchRequest) -> TrustPolicy:
        """The trust policy of this search: the vault's assignments read now when a floor applies."""
        if self._trust_reader is None or self._trust.floor_for(request) is None:
            return self._trust
        return TrustPolicy(dict(self._trust_reader()), self._trust.vault_floor)

    def _window(self, request: SearchRequest, today: date) -> WhenWindow | None:
        try:
            return parse_when(
                request.when,
                when_from_query=request.when_from_query,
                query=request.query,
                today=today,
                conventions=request.conventions,
                slack_days=request.slack_days,
            )
        except InvalidInput as error:
            raise InvalidSearch(str(error)) from None

    def _cut_at(self, seqs: NDArray[np.int64], ranked_at: datetime) -> NDArray[np.int64]:
        """Drop drawers filed after ``ranked_at``: binary search on write order (filed_at grows with seq)."""
        low, high = 0, len(seqs)
        while low < high:
            middle = (low + high) // 2
            probe = self._store.hydrate([int(seqs[middle])])
            if probe and _filed(probe[0]) > ranked_at:
                high = middle
            else:
                low = middle + 1
        return seqs[:low]

    def _in_window(self, drawer: Drawer, window: WhenWindow, request: SearchRequest) -> bool:
        reading = self._analysis.reading(drawer, request.conventions)
        anchor = reading.anchor
        if anchor is not None and window.overlaps(anchor):
            return True
        for mention in reading.mentions:
            first = date.fromisoformat(mention.resolved)
            if window.overlaps(first, date.fromisoformat(mention.resolved_end or mention.resolved)):
                return True
        return False

    def warm(self) -> int:
        """Fill both caches for the whole vault now (a server's first search then pays nothing); returns the
        drawers read. Every drawer is HMAC-verified and decrypted on the way in."""
        with silent(self._store, InternalRead.INDEX_MAINTENANCE):
            seqs, _ = self._drawing_tier()
            before = self.lexicon.filled
            self._postings = self._indexed(seqs)
            filled = self.lexicon.filled - before
        self._store_snapshot()
        return filled

    def _store_snapshot(self) -> None:
        """After a full fill of the caches: seal them into the vault's snapshot (`search._internal.snapshot`)."""
        if self.cache.full_fill is not None:
            with silent(self._store, InternalRead.INDEX_MAINTENANCE):
                self.snapshot.store_after_fill(self._store, self.cache, self.lexicon)

    def _indexed(self, seqs: NDArray[np.int64]) -> Postings:
        """The postings for the store's current generation: patched by the tag diff, or built once."""
        index = self._postings
        if index is None:
            return Postings.build(self.lexicon, self._store, seqs)
        return index.refresh(self.lexicon, self._store, seqs)

    def _rare_holders(
        self, query: LexicalQuery, population: NDArray[np.int64], seqs: NDArray[np.int64], budget: int
    ) -> NDArray[np.int64]:
        """The population's drawers holding the query's rarest terms (postings kept current by the tag diff)."""
        index = self._postings
        if index is None or not index.current(self.lexicon, self._store.generation):
            with silent(self._store, InternalRead.INDEX_MAINTENANCE):
                index = self._postings = self._indexed(seqs)
        # Term order, not interning order (which a rebuild may change), breaks ties between equally rare terms.
        ids = [found for term in sorted(set(query.terms)) if (found := self.lexicon.term_id(term)) is not None]
        return index.rare_holders(ids, population, budget)

    def _fts_applies(self, population: int, pinned: bool) -> bool:
        """Whether this search draws lexical joiners from the hmac-only FTS5 index. A pinned ranking keeps the
        postings: FTS5's BM25 statistics span the whole vault, so a later write would move its joiners."""
        return (
            self._fts_min is not None and not pinned and population > self._fts_min and self._store.level == "hmac-only"
        )

    def _query_vector(self, request: SearchRequest) -> NDArray[np.float32]:
        """The query's embedding: the caller's vector when given (dimension and finiteness checked), else ours."""
        if request.query_vector is None:
            embedded: NDArray[np.float32] = self._embedder.embed([request.query])[0]
            return embedded
        vector = np.asarray(request.query_vector, dtype=np.float64)
        if vector.ndim != 1 or vector.shape[0] != self._embedder.dimension:
            raise InvalidSearch(
                f"the query vector has {vector.size} components, the vault's embedder "
                f"{self._embedder.identity.label} has {self._embedder.dimension}"
            )
        if not np.isfinite(vector).all():
            raise InvalidSearch("the query vector holds a non-finite value (NaN or infinity)")
        return vector.astype(np.float32)

    def _content_cosines(
        self,
        query: str,
        language: str | None,
        tier: CandidateTier,
        seqs: NDArray[np.int64],
        cosines: NDArray[np.float32],
    ) -> NDArray[np.float32]:
        """The semantic channel's cosines: the pool against the query's content words, embedded without the
        function words of the language its lexical channel resolved (measured on LoCoMo, docs/search.md).

        Candidates are drawn, and the gate reads, with the whole query; a query that resolves no language or
        holds nothing but function words keeps its own ``cosines``."""
        if language is None or not len(seqs):
            return cosines
        content = without_words(query, function_words(language))
        if content == query:
            return cosines
        vector = self._embedder.embed([content])[0]
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            return cosines
        return tier.cosines((vector / norm).astype(np.float32), seqs)

    def _verified(self, read: Mapping[int, Drawer], seqs: list[int]) -> dict[int, Drawer]:
        """Verified drawers for ``seqs``: those this search has just read, the rest read now (absent skipped)."""
        missing = [seq for seq in seqs if seq not in read]
        fresh = self._store.hydrate_many(missing) if missing else {}
        return {seq: read[seq] if seq in read else fresh[seq] for seq in seqs if seq in read or seq in fresh}

    def _contents(
        self, read: Mapping[int, Drawer], drawn_seqs: NDArray[np.int64], window: Sequence[int]
    ) -> list[str | None]:
        """The verified content of each window position (None: deleted since it was scored)."""
        verified = self._verified(read, [int(drawn_seqs[i]) for i in window])
        return [drawer.content if (drawer := verified.get(int(drawn_seqs[i]))) is not None else None for i in window]

    @audited_read(
        "search",
        subject=lambda a: str(a["request"].query),
        scope=lambda a: {k: getattr(a["request"], k) for k in ("wing", "room", "kind", "min_trust", "offset", "limit")},
    )
    def search(self, request: SearchRequest) -> SearchResult:
        """Run one search; integrity failures of any candidate raise the store's `RecordTampered`.

        A drawer deleted by another connection between scoring and the page read restarts the search on
        the new generation (at most :data:`_ATTEMPTS` times; the last attempt returns what still exists).
        """
        if self._mirror is not None and not self._mirror_checked:
            require_mirror(self._mirror, self._embedder.identity.label, self._store.name)
            self._mirror_checked = True
        scoped = request.wing is not None or request.room is not None  # that it was scoped, never to what
        with obs.span(names.SPAN_SEARCH, vault=self._store.name, fusion=self._fusion.mode, scoped=scoped) as span:
            result = self._search_attempts(request)
            span.set("hits", len(result.hits))
            return result

    def _search_attempts(self, request: SearchRequest) -> SearchResult:
        for attempt in range(1, _ATTEMPTS + 1):
            try:
                result = self._search_once(request, final=attempt == _ATTEMPTS)
            except _Vanished:
                continue
            self._store_snapshot()
            return result
        raise AssertionError("unreachable: the final attempt never raises _Vanished")  # pragma: no cover

    def _search_once(self, request: SearchRequest, *, final: bool) -> SearchResult:
        started = time.perf_counter()
        trace = SearchTrace(self._trace)
        ranked_at = request.ranked_at
        window = self._window(request, (ranked_at or self._clock()).date())
        scope = resolve_scope(self._scopes, request, self._trust_for(request))
        population = scope.seqs if ranked_at is None else self._cut_at(scope.seqs, ranked_at)
        trace.mark("scope")
        tier: CandidateTier
        if self._mirror is None:
            seqs, drawing = self._drawing_tier()
            # The FDE tier draws by the query's token matrix: encoded once, bound to this search.
            tier = drawing.for_query(request.query) if isinstance(drawing, FdeTier) else drawing
        else:  # candidate ids from the mirror; every other step is the local pipeline's
            # The postings the lexical joiners read span every live row, as the scan's do (never one scope's).
            seqs = self._scopes.scope_seqs(include_quarantine=True)
            tier = RemoteTier(self._store, self._mirror, request.wing)
        trace.mark("cache")
        query_vector = self._query_vector(request)
        norm = float(np.linalg.norm(query_vector))
        if norm > 0.0:
            query_vector = (query_vector / norm).astype(np.float32)
        geometry = scope.geometry if scope.declared else max(scope.geometry, len(population))
        # A pinned ranking draws one pool for every page within the tiled depth, so its pages tile it.
        depth = request.depth if ranked_at is None else max(request.depth, TILED_DEPTH)
        plan = plan_pool(len(population), geometry, depth, self._pool_div)
        drawn = tier.candidates(query_vector, population, plan)
        query = LexicalQuery.parse(request.query, request.conventions.language)
        tier_name = tier.name
        if not plan.exact or self._mirror is not None:
            # A mirror replaces only the cosine channel's candidate generation: the lexical and date joiners are
            # local evidence (this vault's postings and FTS index), so they join a mirror's cut as they join the
            # scan's — a needle the backend's ANN misses, or ranks past k, is still found by its rare terms. (A
            # local exact plan holds the whole scope already; a mirror's proposals never do until checked.)
            cosines_of = partial(tier.cosines, query_vector)
            # Lexical evidence joins the cut: drawers holding the query's rarest terms, whatever their cosine
            # (on a large hmac-only scope, the FTS5 index's BM25 best: no RAM postings to build).
            if self._fts_applies(len(population), ranked_at is not None):
                held = fts_joiners(
                    self._store, request.query, population, plan.hydrate, cosines_of, pool_div=self._pool_div
                )
                tier_name = f"{tier.name}+fts"
                obs.increment(names.SEARCH_PREFILTERED_TOTAL)
            else:
                held = self._rare_holders(query, population, seqs, plan.hydrate)
            drawn = joined(drawn, held, cosines_of(held))
            if window is not None:
                # A date window is evidence too: the drawers it names join the cut (then re-read live).
                dated = dated_joiners(self._store, window, population, plan.hydrate, cosines_of, self._dated)
                drawn = joined(drawn, dated, cosines_of(dated))
        trace.mark("candidates")
        entries, read = self.lexicon.entries(self._store, drawn.seqs.tolist())
        # A concurrent delete drops the candidate, never misaligns the others.
        kept = [position for position, entry in enumerate(entries) if entry is not None]
        pool_entries = [entry for entry in entries if entry is not None]
        drawn_seqs, cosines = drawn.seqs[kept], drawn.cosines[kept]
        trace.mark("hydrate")
        lexical = score_pool(query, self.lexicon.pool(pool_entries))
        trace.mark("bm25")
        policy = self._fusion
        semantic = semantic_scores(
            cosines
            if request.query_vector is not None  # the caller's vector is the query's meaning: nothing to re-embed
            else self._content_cosines(request.query, lexical.language, tier, drawn_seqs, cosines),
            policy.floor,
        )
        lexical_channel = policy.lexical_channel(lexical.total, lexical.coverage)
        recency = recency_by_share(population, drawn_seqs)
        weights = policy.weights(query.scripts, list(map(_SCRIPTS, pool_entries)))
        scores = policy.fuse(semantic, lexical_channel, recency, weights)
        passed = admit(lexical.exact, lexical.morph, cosines, self._gate)
        positions = [int(i) for i in np.flatnonzero(passed)]
        in_window: set[int] = set()
        if window is not None:
            # The window reads dates and mentions from the content: verified reads of every admitted drawer.
            windowed = self._verified(read, [int(drawn_seqs[i]) for i in positions])
            in_window = {
                i
                for i in positions
                if int(drawn_seqs[i]) in windowed and self._in_window(windowed[int(drawn_seqs[i])], window, request)
            }
            if window.source == "declared":
                positions = [i for i in positions if i in in_window]
        promote = window is not None and window.source == "query"
        if positions:
            # (outside a promoted window, best score, write order): one lexsort, last key first
            chosen_rows = np.asarray(positions, dtype=np.intp)
            demoted = (
                np.fromiter((i not in in_window for i in positions), dtype=bool, count=len(positions))
                if promote
                else np.zeros(len(positions), dtype=bool)  # no promoted window: nothing demoted, no walk
            )
            order = np.lexsort((drawn_seqs[chosen_rows], -scores[chosen_rows], demoted))
            positions = chosen_rows[order].tolist()
        trace.mark("fuse")
        if isinstance(self.rescore, LateRescore) and request.query.strip():
            positions = self.rescore.reorder(
                request.query,
                positions,
                lambda window: self._contents(read, drawn_seqs, window),
                seqs=lambda window: [int(drawn_seqs[i]) for i in window],
                demoted=lambda i: promote and i not in in_window,
            )
            trace.mark("rescore")
        elif isinstance(self.rescore, CrossEncoderRescore) and request.query.strip():
            positions = self.rescore.reorder(
                request.query,
                positions,
                lambda window: self._contents(read, drawn_seqs, window),
                demoted=lambda i: promote and i not in in_window,
            )
            trace.mark("rescore")
        # The rooms are read only when a cap reads them.
        rooms = [] if request.room_cap is None else [pool_entries[i].room for i in positions]
        selected = cap_rooms(positions, rooms, request.room_cap, request.depth)
        chosen = page(selected, request.offset, request.limit)
        # What is returned is read verified (again, unless this very search just read it).
        returned = self._verified(read, [int(drawn_seqs[i]) for i in chosen])
        if len(returned) < len(chosen):
            if not final:
                raise _Vanished
            chosen = [i for i in chosen if int(drawn_seqs[i]) in returned]
        hits = tuple(
            self._hit(
                returned[int(drawn_seqs[i])],
                request,
                rank=request.offset + n,
                scores=(float(scores[i]), float(semantic[i]), float(lexical_channel[i])),
                channels=(float(lexical.exact[i]), float(lexical.morph[i])),
            )
            for n, i in enumerate(chosen)
        )
        trace.mark("hits")
        self._signal(request, len(hits), time.perf_counter() - started)
        trace.emit(
            scope=scope.label, searched=len(population), pool=len(pool_entries), admitted=len(positions), tier=tier_name
        )
        return SearchResult(
            hits=hits,
            scope=scope.label,
            searched=len(population),
            pool=len(pool_entries),
            admitted=len(positions),
            unlabeled_excluded=scope.unlabeled_excluded,
            trust_excluded_wings=scope.trust_excluded_wings,
            window=window,
            room_cap=request.room_cap,
            ranked_at=None if ranked_at is None else ranked_at.isoformat(),
            fusion=policy.mode,
        )

    def _hit(
        self,
        drawer: Drawer,
        request: SearchRequest,
        *,
        rank: int,
        scores: tuple[float, float, float],
        channels: tuple[float, float],
    ) -> SearchHit:
        reading = self._analysis.reading(drawer, request.conventions)
        return SearchHit(
            id=drawer.id,
            content=drawer.content,
            wing=drawer.wing,
            room=drawer.room,
            kind=drawer.kind,
            content_date=drawer.content_date,
            filed_at=drawer.filed_at,
            occurrences=drawer.occurrences,
            time_mentions=reading.mentions,
            entities=reading.entities,
            elapsed_days=elapsed_days(reading.anchor, request.as_of),
            score=scores[0],
            semantic=scores[1],
            lexical=scores[2],
            lexical_exact=channels[0],
            lexical_morph=channels[1],
            rank=rank,
        )

    def _signal(self, request: SearchRequest, hits: int, seconds: float) -> None:
        obs.increment(names.SEARCH_TOTAL, fusion=self._fusion.mode)
        obs.observe(names.SEARCH_DURATION_SECONDS, seconds)
        obs.observe(names.SEARCH_HITS, hits)
        obs.emit(names.EVENT_SEARCH, vault=self._store.name, wing=request.wing, room=request.room, hits=hits)
