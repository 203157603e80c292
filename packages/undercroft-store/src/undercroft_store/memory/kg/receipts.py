"""Fact receipts: does each cited fact still match the verbatim span of the drawer it cites?

Verdicts per cited fact: ``verified`` (the span's keyed fingerprint matches), ``source_changed`` (the drawer
is there but the span differs or no longer fits), ``dangling`` (the drawer is gone), ``tampered`` (the fact
row or the source drawer fails its HMAC). ``integrity_only`` checks one HMAC per fact and reads no drawer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

from undercroft_vault import constant_time_equal

from undercroft_store.errors import RecordTampered
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.reading import SELECT_BY_ID, verified_drawer
from undercroft_store.kernel._internal.transaction import open_blind, readable
from undercroft_store.memory.kg._internal.rows import verified_fact
from undercroft_store.memory.kg.errors import FactTampered
from undercroft_store.memory.kg.facts import fact_tag
from undercroft_store.memory.kg.graph import receipt_fingerprint

if TYPE_CHECKING:
    from undercroft_store.store import VaultStore

__all__ = ["VERDICTS", "IntegrityVerdict", "Receipt", "ReceiptReport", "check_receipts", "fact_receipts"]

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
            drawer_row = connection.execute(SELECT_BY_ID, (fact.source_drawer,)).fetchone()
            verdict: Verdict
            if drawer_row is None:
                verdict = "dangling"
            else:
                try:
                    drawer = verified_drawer(
                        context, drawer_row[0], bytes(drawer_row[1]), bytes(drawer_row[2]), bytes(drawer_row[3])
                    )
                except RecordTampered:
                    verdict = "tampered"
                else:
                    start, end = fact.source_span or (0, len(drawer.content))
                    fits = end <= len(drawer.content)
                    print_ = receipt_fingerprint(blind, fact.source_drawer, drawer.content[start:end]) if fits else ""
                    verdict = "verified" if fits and print_ == fact.source_fingerprint else "source_changed"
            report.receipts.append(Receipt(fact.id, fact.source_drawer, verdict))
    return report


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
