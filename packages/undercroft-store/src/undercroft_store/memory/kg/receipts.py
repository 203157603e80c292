"""Fact receipts: does each cited fact still match the verbatim span of the drawer it cites?

Verdicts per cited fact: ``verified`` (the span's keyed fingerprint matches), ``source_changed`` (the drawer
is there but the span differs or no longer fits), ``dangling`` (the drawer is gone), ``tampered`` (the fact
row or the source drawer fails its HMAC). ``integrity_only`` checks one HMAC per fact and reads no drawer.

`support_of` is what the fact-returning surfaces show as ``support``: a cited fact's receipt verdict and, when
the receipt verifies, its span as **UTF-8 byte** offsets into the drawer's verbatim content (the KG stores
character offsets: a multibyte character before the span moves the bytes, never the characters).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

from undercroft_vault import BlindIndex, constant_time_equal

from undercroft_store.errors import RecordTampered
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.reading import SELECT_BY_ID, verified_content
from undercroft_store.kernel._internal.transaction import open_blind, readable
from undercroft_store.memory.kg._internal.rows import verified_fact
from undercroft_store.memory.kg.errors import FactTampered
from undercroft_store.memory.kg.facts import Fact, fact_tag
from undercroft_store.memory.kg.graph import receipt_fingerprint

if TYPE_CHECKING:
    from undercroft_store.store import VaultStore

__all__ = [
    "VERDICTS",
    "IntegrityVerdict",
    "Receipt",
    "ReceiptReport",
    "Support",
    "check_receipts",
    "fact_receipts",
    "support_of",
]

Verdict = Literal["verified", "source_changed", "dangling", "tampered"]
#: The four receipt verdicts.
VERDICTS: Final = ("verified", "source_changed", "dangling", "tampered")


@dataclass(frozen=True, slots=True)
class Receipt:
    """One cited fact's verdict."""

    fact_id: str
    source_drawer: str | None
    verdict: Verdict


@dataclass
class ReceiptReport:
    """Every cited fact's verdict, plus how many facts cite nothing."""

    receipts: list[Receipt] = field(default_factory=list)
    uncited: int = 0

    @property
    def counts(self) -> dict[str, int]:
        """Facts per verdict (every verdict present, zero when none)."""
        tally = Counter(receipt.verdict for receipt in self.receipts)
        return {verdict: tally.get(verdict, 0) for verdict in VERDICTS}

    @property
    def ok(self) -> bool:
        """True when no cited fact is tampered (a changed or deleted source is history, not forgery)."""
        return self.counts["tampered"] == 0


@dataclass(frozen=True, slots=True)
class IntegrityVerdict:
    """The fast mode's answer: every fact's HMAC checked, no drawer read."""

    ok: bool
    checked: int


def check_receipts(context: VaultContext) -> ReceiptReport:
    """Every fact's receipt verdict over the raw rows (used by `fact_receipts` and by verify)."""
    report = ReceiptReport()
    connection = readable(context).connection
    rows = connection.execute(
        "SELECT id, meta_json, terms, value, tag, source_drawer FROM kg_facts ORDER BY seq"
    ).fetchall()
    with open_blind(context) as blind:
        for row in rows:
            fact_id, claimed_source = str(row[0]), row[5]
            try:
                fact = verified_fact(context, row[:5])
            except FactTampered:
                report.receipts.append(Receipt(fact_id, claimed_source, "tampered"))
                continue
            if fact.source_drawer is None:
                report.uncited += 1
                continue
            verdict, _ = _receipt(context, connection, blind, fact, {})
            report.receipts.append(Receipt(fact.id, fact.source_drawer, verdict))
    return report


def _receipt(
    context: VaultContext,
    connection: sqlite3.Connection,
    blind: BlindIndex,
    fact: Fact,
    drawers: dict[str, str | RecordTampered | None],
) -> tuple[Verdict, str | None]:
    """A cited fact's verdict and, when it verifies, the verbatim content it cites (``drawers`` caches each read:
    only the tag check and the content's open, the drawer is not rebuilt from its metadata)."""
    assert fact.source_drawer is not None
    if fact.source_drawer not in drawers:
        row = connection.execute(SELECT_BY_ID, (fact.source_drawer,)).fetchone()
        try:
            drawers[fact.source_drawer] = (
                None if row is None else verified_content(context, row[0], bytes(row[1]), bytes(row[2]), bytes(row[3]))
            )
        except RecordTampered as tampered:
            drawers[fact.source_drawer] = tampered
    content = drawers[fact.source_drawer]
    if content is None:
        return "dangling", None
    if isinstance(content, RecordTampered):
        return "tampered", None
    start, end = fact.source_span or (0, len(content))
    fits = end <= len(content)
    print_ = receipt_fingerprint(blind, fact.source_drawer, content[start:end]) if fits else ""
    if fits and print_ == fact.source_fingerprint:
        return "verified", content
    return "source_changed", None


@dataclass(frozen=True, slots=True)
class Support:
    """A cited fact's support: the drawer, its receipt verdict, and the UTF-8 byte ranges of the cited words.

    ``spans`` is empty unless the receipt verifies and the fact cites a span (the words are then exactly the
    drawer's bytes ``content.encode()[start:end]``).
    """

    drawer: str
    receipt: Verdict
    spans: tuple[tuple[int, int], ...] = ()

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: ``{drawer, receipt, spans: [[start, end], …]}`` (byte offsets, end exclusive)."""
        return {"drawer": self.drawer, "receipt": self.receipt, "spans": [list(span) for span in self.spans]}


def _byte_span(content: str, span: tuple[int, int]) -> tuple[int, int]:
    start = len(content[: span[0]].encode("utf-8"))
    return start, start + len(content[span[0] : span[1]].encode("utf-8"))


def support_of(store: VaultStore, facts: Sequence[Fact]) -> dict[str, Support]:
    """``fact id -> Support`` for every fact of ``facts`` that cites a drawer (each drawer read once, verified).

    A tampered cited drawer is reported (the tamper signal, as any read) and answers ``tampered`` with no span;
    the facts themselves are the caller's, already verified. Offsets only leave: never a word of the drawer.
    """
    cited = [fact for fact in facts if fact.source_drawer is not None]
    if not cited:
        return {}
    context = readable(store._context)
    drawers: dict[str, str | RecordTampered | None] = {}
    found: dict[str, Support] = {}
    with open_blind(context) as blind:
        for fact in cited:
            assert fact.source_drawer is not None
            verdict, content = _receipt(context, context.connection, blind, fact, drawers)
            spans: tuple[tuple[int, int], ...] = ()
            if content is not None and fact.source_span is not None:
                spans = (_byte_span(content, fact.source_span),)
            found[fact.id] = Support(fact.source_drawer, verdict, spans)
    return found


def fact_receipts(store: VaultStore, *, integrity_only: bool = False) -> ReceiptReport | IntegrityVerdict:
    """`kg receipts`: per-fact verdicts, or with `integrity_only` just ``{ok, checked}`` (one HMAC per fact)."""
    context = readable(store._context)
    if not integrity_only:
        return check_receipts(context)
    checked, ok = 0, True
    for fact_id, meta, terms, value, tag in context.connection.execute(
        "SELECT id, meta_json, terms, value, tag FROM kg_facts ORDER BY seq"
    ):
        checked += 1
        expected = fact_tag(context, str(fact_id), bytes(meta), bytes(terms), bytes(value))
        ok = constant_time_equal(expected, bytes(tag)) and ok
    return IntegrityVerdict(ok, checked)
