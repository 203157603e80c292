"""The temporal knowledge graph of one vault: add, query (``as_of``), rel, invalidate, supersede, timeline, stats.

Windows are half-open: a fact is true at ``t`` when ``valid_from <= t`` (or no start) and ``t < valid_to``
(or still open). Every write — a new fact, a closed window, a supersession, a new entity — commits with its
audit records and the advanced chain head in one transaction; `supersede` closes the old fact and opens the
new one in that single transaction, so a crash leaves both changes or neither.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

import undercroft_obs as obs
from undercroft_core.ids import validate_drawer_id
from undercroft_obs import names
from undercroft_vault import BlindIndex

from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.read_door import audited_read
from undercroft_store.kernel._internal.reading import SELECT_BY_ID, verified_drawer
from undercroft_store.kernel._internal.transaction import audited, open_blind, readable
from undercroft_store.memory.kg._internal.rows import (
    FACT_SELECT,
    ensure_entity,
    insert_fact,
    load_fact,
    open_entity_name,
    update_fact,
    verified_fact,
    verified_fact_at,
)
from undercroft_store.memory.kg.errors import InvalidFact
from undercroft_store.memory.kg.facts import (
    GROUNDINGS,
    Fact,
    check_choice,
    check_term,
    entity_key,
    normalise_instant,
    predicate_key,
    with_changes,
)

if TYPE_CHECKING:
    from undercroft_store.store import VaultStore

__all__ = ["Direction", "FactInput", "KgEntity", "KgStats", "KnowledgeGraph", "receipt_fingerprint"]

Direction = Literal["outgoing", "incoming", "both"]
_DIRECTIONS: Final = ("outgoing", "incoming", "both")
_AS_OF: Final = " AND (valid_from IS NULL OR valid_from <= ?) AND (valid_to IS NULL OR valid_to > ?)"


@dataclass(frozen=True, slots=True)
class FactInput:
    """One fact to add (`KnowledgeGraph.add_many`); the fields mirror `KnowledgeGraph.add`'s arguments."""

    subject: str
    predicate: str
    object: str
    valid_from: str | None = None
    valid_to: str | None = None
    confidence: float = 1.0
    source_drawer: str | None = None
    source_span: tuple[int, int] | None = None
    extractor: str | None = None
    grounding: str = "unevaluated"


@dataclass(frozen=True, slots=True)
class KgEntity:
    """An entity: its keyed blind id, its (opened) name and when it was first named."""

    id: str
    name: str
    created_at: str


@dataclass(frozen=True, slots=True)
class KgStats:
    """Entity and fact counts (``active`` facts have an open window)."""

    entities: int
    facts: int
    active: int
    closed: int
    predicates: int

    def to_dict(self) -> dict[str, int]:
        """JSON-ready counts."""
        return {
            "entities": self.entities,
            "facts": self.facts,
            "active": self.active,
            "closed": self.closed,
            "predicates": self.predicates,
        }


def receipt_fingerprint(blind: BlindIndex, drawer_id: str, span_text: str) -> str:
    """The keyed receipt over a cited span (survives rotation: the blind secret is re-sealed, not redrawn)."""
    return blind.provenance_fingerprint(
        b"kg-receipt\x00" + drawer_id.encode("ascii") + b"\x00" + span_text.encode()
    ).hex()


def _confidence(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise InvalidFact(f"confidence must be a number between 0 and 1, got {value!r}")
    return float(value)


class KnowledgeGraph:
    """The knowledge graph inside one open `VaultStore` (sealed, blind-indexed, tagged, chain-audited)."""

    def __init__(self, store: VaultStore) -> None:
        """Bind to an open store (the graph shares its connection, keys and clock)."""
        self._context: VaultContext = store._context

    # --- writes ---------------------------------------------------------------------------------------
    def add(
        self,
        subject: str,
        predicate: str,
        obj: str,
        *,
        valid_from: str | None = None,
        valid_to: str | None = None,
        confidence: float = 1.0,
        source_drawer: str | None = None,
        source_span: tuple[int, int] | None = None,
        extractor: str | None = None,
        grounding: str = "unevaluated",
    ) -> Fact:
        """Add one fact (an identical active fact is returned as is, nothing written)."""
        return self.add_many(
            [
                FactInput(
                    subject,
                    predicate,
                    obj,
                    valid_from,
                    valid_to,
                    confidence,
                    source_drawer,
                    source_span,
                    extractor,
                    grounding,
                )
            ]
        )[0]

    def add_many(self, items: Sequence[FactInput]) -> list[Fact]:
        """Add facts in one audited transaction (a batch import); returns each stored (or existing) fact."""
        context = self._context
        checked = [self._check(item, position) for position, item in enumerate(items)]
        results: list[Fact] = []
        written = 0
        with obs.span(names.SPAN_KG_WRITE, kind="add"), open_blind(context) as blind, audited(context) as records:
            at = context.now()
            height = int(context.connection.execute("SELECT height FROM chain_meta WHERE id = 1").fetchone()[0])
            cache: set[str] = set()
            for offset, item in enumerate(checked):
                existing = self._existing(blind, item)
                if existing is not None:
                    results.append(existing)
                    continue
                fact = self._new_fact(blind, item, at, f"{height}.{offset}")
                ensure_entity(context, blind, item.subject, at, records, cache)
                ensure_entity(context, blind, item.object, at, records, cache)
                insert_fact(context, blind, fact, at, records)
                results.append(fact)
                written += 1
        _signal_kg(context, "add", written)
        return results

    def invalidate(self, fact_id: str, *, ended: str | None = None) -> Fact:
        """Close an open fact's window at `ended` (default now); audited."""
        context = self._context
        with (
            obs.span(names.SPAN_KG_WRITE, kind="invalidate"),
            open_blind(context) as blind,
            audited(context) as records,
        ):
            at = context.now()
            fact = self._open_fact(fact_id)
            closed = with_changes(fact, valid_to=self._end(fact, ended, at))
            update_fact(context, blind, closed, at, records)
        _signal_kg(context, "invalidate", 1)
        return closed

    def supersede(
        self, fact_id: str, new_object: str, *, at: str | None = None, extractor: str | None = None
    ) -> tuple[Fact, Fact]:
        """Close `fact_id` and open its successor (same subject and predicate) at one instant, atomically."""
        context = self._context
        obj = check_term(new_object, "object")
        with obs.span(names.SPAN_KG_WRITE, kind="supersede"), open_blind(context) as blind, audited(context) as records:
            now = context.now()
            old = self._open_fact(fact_id)
            moment = self._end(old, at, now)
            height = int(context.connection.execute("SELECT height FROM chain_meta WHERE id = 1").fetchone()[0])
            item = FactInput(old.subject, old.predicate, obj, moment, None, old.confidence, extractor=extractor)
            successor = with_changes(self._new_fact(blind, item, now, f"{height}.s"), supersedes=old.id)
            closed = with_changes(old, valid_to=moment, superseded_by=successor.id)
            update_fact(context, blind, closed, now, records)
            ensure_entity(context, blind, obj, now, records, set())
            insert_fact(context, blind, successor, now, records)
        _signal_kg(context, "supersede", 1)
        return closed, successor

    # --- reads ----------------------------------------------------------------------------------------
    @audited_read("kg-query", subject=lambda a: str(a["fact_id"]))
    def get(self, fact_id: str) -> Fact:
        """The verified fact `fact_id` (`FactNotFound`, `FactTampered`)."""
        return load_fact(readable(self._context), fact_id)

    @audited_read(
        "kg-query",
        subject=lambda a: str(a["entity"]),
        scope=lambda a: {k: a[k] for k in ("direction", "as_of", "grounding")},
    )
    def query(
        self, entity: str, *, direction: Direction = "both", as_of: str | None = None, grounding: str | None = None
    ) -> list[Fact]:
        """Facts about `entity` (as subject, object or both), optionally only those true at `as_of`."""
        name = check_term(entity, "entity")
        check_choice(direction, _DIRECTIONS, "direction")
        columns = {"outgoing": ("subject",), "incoming": ("object",), "both": ("subject", "object")}[direction]
        with open_blind(readable(self._context)) as blind:
            key = entity_key(blind, name)
        facts: dict[str, Fact] = {}
        for column in columns:
            for fact in self._select(f"{column} = ?", (key,), as_of, grounding):
                facts.setdefault(fact.id, fact)
        return sorted(facts.values(), key=_order)

    @audited_read(
        "kg-query", subject=lambda a: str(a["predicate"]), scope=lambda a: {k: a[k] for k in ("as_of", "grounding")}
    )
    def rel(self, predicate: str, *, as_of: str | None = None, grounding: str | None = None) -> list[Fact]:
        """Facts with `predicate` (case folded), optionally only those true at `as_of`."""
        word = check_term(predicate, "predicate")
        with open_blind(readable(self._context)) as blind:
            key = predicate_key(blind, word)
        return sorted(self._select("predicate = ?", (key,), as_of, grounding), key=_order)

    @audited_read("kg-timeline", subject=lambda a: str(a["entity"] or ""))
    def timeline(self, entity: str | None = None) -> list[Fact]:
        """Every fact (about `entity` when given), closed ones included, in validity order."""
        if entity is not None:
            return self.query(entity)
        return sorted(self._select("1 = 1", (), None, None), key=_order)

    @audited_read("kg-entities", subject=lambda a: "", scope=lambda a: {"limit": a["limit"], "offset": a["offset"]})
    def entities(self, *, limit: int = 100, offset: int = 0) -> list[KgEntity]:
        """Entities in first-named order, paged; names are opened and verified."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidFact(f"limit must be a positive integer, got {limit!r}")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise InvalidFact(f"offset must be a non-negative integer, got {offset!r}")
        context = readable(self._context)
        rows = context.connection.execute(
            "SELECT id, name, meta_json, tag FROM kg_entities ORDER BY rowid LIMIT ? OFFSET ?", (limit, offset)
        ).fetchall()
        return [
            KgEntity(
                str(r[0]),
                open_entity_name(context, str(r[0]), bytes(r[2]), bytes(r[1]), bytes(r[3])),
                json.loads(bytes(r[2]))["created_at"],
            )
            for r in rows
        ]

    def stats(self) -> KgStats:
        """Entity, fact, active, closed and distinct-predicate counts."""
        connection = readable(self._context).connection
        entities = int(connection.execute("SELECT count(*) FROM kg_entities").fetchone()[0])
        facts, active, predicates = connection.execute(
            "SELECT count(*), count(*) FILTER (WHERE valid_to IS NULL), count(DISTINCT predicate) FROM kg_facts"
        ).fetchone()
        return KgStats(entities, int(facts), int(active), int(facts) - int(active), int(predicates))

    # --- helpers --------------------------------------------------------------------------------------
    def _select(self, where: str, params: tuple[Any, ...], as_of: str | None, grounding: str | None) -> list[Fact]:
        context = readable(self._context)
        sql = f"{FACT_SELECT} WHERE {where}"
        values: list[Any] = list(params)
        moment = normalise_instant(as_of, "as_of") if as_of is not None else None
        if moment is not None and not context.kg_windows_sealed:  # clear windows: SQL narrows the rows first
            sql += _AS_OF
            values += [moment, moment]
        if grounding is not None:
            check_choice(grounding, GROUNDINGS, "grounding")
        rows = context.connection.execute(sql, values)
        if moment is None:
            facts = [verified_fact(context, row) for row in rows]
        else:  # the window test on the opened windows: the only one a sealed window allows, exact on clear ones
            facts = [f for f in (verified_fact_at(context, row, moment) for row in rows) if f is not None]
        return [fact for fact in facts if grounding is None or fact.grounding == grounding]

    def _check(self, item: FactInput, position: int) -> FactInput:
        if not isinstance(item, FactInput):
            raise InvalidFact(f"fact {position}: expected a FactInput, got {type(item).__name__}")
        start = normalise_instant(item.valid_from, "valid_from") if item.valid_from is not None else None
        end = normalise_instant(item.valid_to, "valid_to") if item.valid_to is not None else None
        if start is not None and end is not None and end <= start:
            raise InvalidFact(f"valid_to {end} must be later than valid_from {start}")
        span = item.source_span
        if span is not None:
            if item.source_drawer is None:
                raise InvalidFact("a source span needs a source drawer")
            if len(span) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in span):
                raise InvalidFact(f"source span must be two integers (start, end), got {span!r}")
            if not 0 <= span[0] < span[1]:
                raise InvalidFact(f"source span {tuple(span)} must satisfy 0 <= start < end")
        if item.source_drawer is not None:
            try:
                validate_drawer_id(item.source_drawer)
            except ValueError as error:
                raise InvalidFact(f"source drawer: {error}") from None
        return FactInput(
            check_term(item.subject, "subject"),
            check_term(item.predicate, "predicate"),
            check_term(item.object, "object"),
            start,
            end,
            _confidence(item.confidence),
            item.source_drawer,
            (span[0], span[1]) if span is not None else None,
            check_term(item.extractor, "extractor") if item.extractor is not None else None,
            check_choice(item.grounding, GROUNDINGS, "grounding"),
        )

    def _new_fact(self, blind: BlindIndex, item: FactInput, at: str, salt: str) -> Fact:
        fingerprint = None
        span = item.source_span
        if item.source_drawer is not None:
            fingerprint = self._receipt(blind, item.source_drawer, span)
        digest = blind.blind("fact", "\x1f".join([item.subject, item.predicate, item.object, at, salt]))
        return Fact(
            id=f"fact_{digest}",
            subject=item.subject,
            predicate=item.predicate,
            object=item.object,
            valid_from=item.valid_from,
            valid_to=item.valid_to,
            created_at=at,
            confidence=item.confidence,
            source_drawer=item.source_drawer,
            source_span=span,
            source_fingerprint=fingerprint,
            extractor=item.extractor,
            grounding=item.grounding,
        )

    def _receipt(self, blind: BlindIndex, drawer_id: str, span: tuple[int, int] | None) -> str:
        context = self._context
        row = context.connection.execute(SELECT_BY_ID, (drawer_id,)).fetchone()
        if row is None:
            raise InvalidFact(f"source drawer {drawer_id} does not exist in vault {context.vault_id!r}")
        content = verified_drawer(context, row[0], bytes(row[1]), bytes(row[2]), bytes(row[3])).content
        start, end = span if span is not None else (0, len(content))
        if end > len(content):
            raise InvalidFact(f"source span ({start}, {end}) runs past the drawer's {len(content)} characters")
        return receipt_fingerprint(blind, drawer_id, content[start:end])

    def _existing(self, blind: BlindIndex, item: FactInput) -> Fact | None:
        key = (entity_key(blind, item.subject), predicate_key(blind, item.predicate), entity_key(blind, item.object))
        row = self._context.connection.execute(
            f"{FACT_SELECT} WHERE subject = ? AND predicate = ? AND object = ? AND valid_to IS NULL",
            key,
        ).fetchone()
        if row is None or item.valid_to is not None:
            return None
        return verified_fact(self._context, row)

    def _open_fact(self, fact_id: str) -> Fact:
        fact = load_fact(self._context, check_term(fact_id, "fact id"))
        if not fact.active:
            raise InvalidFact(f"fact {fact_id} is already closed (valid_to {fact.valid_to})")
        return fact

    @staticmethod
    def _end(fact: Fact, ended: str | None, now: str) -> str:
        end = normalise_instant(ended, "ended") if ended is not None else now
        if fact.valid_from is not None and end <= fact.valid_from:
            raise InvalidFact(f"the window cannot close at {end}: fact {fact.id} is valid from {fact.valid_from}")
        return end


def _order(fact: Fact) -> tuple[str, str, str]:
    return (fact.valid_from or "", fact.created_at, fact.id)


def _signal_kg(context: VaultContext, kind: str, written: int) -> None:
    """After the commit: the counter by write kind and one ``kg-triple`` frame per committed write call."""
    if written:
        obs.increment(names.KG_WRITES_TOTAL, written, kind=kind)
        obs.emit(names.EVENT_KG_TRIPLE, vault=context.vault_id)
