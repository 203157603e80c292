"""The verdict of one verification (`VerifyReport`): kernel vocabulary, so the façade can return it.

How it is computed lives in `undercroft_store.integrity.verify`; the features' own legs fill their fields
through `kernel.seams`. A leg that reports a structured verdict of its own (the memory surfaces) gives a
`LegVerdict`: ``ok`` and the runbook lines it renders.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["LegVerdict", "VerifyReport"]


class LegVerdict(Protocol):
    """A leg's structured verdict: clean or not, and its runbook lines."""

    @property
    def ok(self) -> bool:
        """True when the leg found nothing."""
        ...

    def lines(self) -> list[str]:
        """The leg's lines in `VerifyReport.render`."""
        ...


@dataclass
class VerifyReport:
    """The verdict of one full verification; ``ok`` is True only when every leg is clean."""

    vault: str
    records_checked: int = 0
    tampered: list[str] = field(default_factory=list)
    embedding_failures: list[str] = field(default_factory=list)
    audit_chain_ok: bool = True
    chain_detail: str = ""
    chain_records: int = 0
    anchor: str = "equal"
    orphan_labels: list[str] = field(default_factory=list)
    stale_records: list[str] = field(default_factory=list)
    unlabelled_records: list[str] = field(default_factory=list)
    tombstone_failures: list[str] = field(default_factory=list)
    mirror_drift: list[str] = field(default_factory=list)
    trust_failures: list[str] = field(default_factory=list)  # wing-trust rows vs their chain records
    queue_failures: list[str] = field(default_factory=list)  # admission queue vs its records and the wing
    resurrected: list[str] = field(default_factory=list)
    retention_drift: list[str] = field(default_factory=list)
    surfaces: LegVerdict | None = None  # the memory surfaces' legs (memory.kg.verify)
    deep: bool = False  # integrity_check (every index entry against its row) instead of quick_check
    sqlite_findings: list[str] = field(default_factory=list)  # SQLite's own check, as it words them
    scope_index: list[str] = field(default_factory=list)  # drawers_scope answers that differ from the table
    fingerprint_drift: list[str] = field(default_factory=list)  # stored fingerprint != keyed fingerprint
    order_drift: list[str] = field(default_factory=list)  # seq out of the chain's creation order
    index_tier: list[str] = field(default_factory=list)  # tier artifacts failing their seal (search.tiers)
    tokens: LegVerdict | None = None  # the late stage's stored matrices (integrity.tokens; None: none stored)
    search_snapshot: list[str] = field(default_factory=list)  # the sealed search snapshot failing at rest
    append_counter: str = ""  # empty when meta.append_counter lies above every live append index

    @property
    def append_counter_behind(self) -> bool:
        """True when the next append save could be handed an index a live drawer holds."""
        return bool(self.append_counter)

    @property
    def hmac_failures(self) -> int:
        """Records whose tag (or sealed content) failed."""
        return len(self.tampered)

    @property
    def ok(self) -> bool:
        """True when every leg is clean."""
        return not (
            self.tampered
            or self.embedding_failures
            or not self.audit_chain_ok
            or self.orphan_labels
            or self.stale_records
            or self.unlabelled_records
            or self.tombstone_failures
            or self.mirror_drift
            or self.trust_failures
            or self.queue_failures
            or self.resurrected
            or self.retention_drift
            or (self.surfaces is not None and not self.surfaces.ok)
            or self.sqlite_findings
            or self.scope_index
            or self.fingerprint_drift
            or self.order_drift
            or self.append_counter
            or self.index_tier
            or (self.tokens is not None and not self.tokens.ok)
            or self.search_snapshot
        )

    def render(self) -> str:
        """The runbook's text form, ending in ``VERIFY OK`` or ``VERIFY FAILED``."""
        lines = [f"vault:            {self.vault}", f"records checked:  {self.records_checked}"]
        lines.append(f"hmac failures:    {self.hmac_failures}")
        lines += [f"  TAMPERED: {drawer_id}" for drawer_id in self.tampered]
        lines.append(f"embedding opens:  {len(self.embedding_failures)} failed")
        lines += [f"  TAMPERED EMBEDDING: {drawer_id}" for drawer_id in self.embedding_failures]
        chain = "ok" if self.audit_chain_ok else "BROKEN"
        lines.append(f"audit chain:      {chain} ({self.chain_records} records, anchor {self.anchor})")
        if self.chain_detail:
            lines.append(f"  {self.chain_detail}")
        # One count line per leg, then one marked line per finding: (label, suffix, marker, findings).
        legs: tuple[tuple[str, str, str, list[str]], ...] = (
            ("orphan labels:", "", "ORPHAN", self.orphan_labels),
            ("stale records:", "", "STALE", self.stale_records),
            ("unlabelled rows:", "", "UNLABELLED", self.unlabelled_records),
            ("tombstones:", " failed", "TOMBSTONE", self.tombstone_failures),
            ("mirror drift:", "", "DRIFT", self.mirror_drift),
            ("trust rows:", " failed", "TRUST", self.trust_failures),
            ("admission queue:", " failed", "QUEUE", self.queue_failures),
            ("resurrected:", "", "RESURRECTED", self.resurrected),
            ("retention drift:", "", "POLICY", self.retention_drift),
            ("fingerprints:", " stale", "FINGERPRINT", self.fingerprint_drift),
            ("write order:", " out of order", "SEQ", self.order_drift),
            ("scope index:", " disagree", "INDEX", self.scope_index),
            ("index tier:", " failed", "TIER", self.index_tier),
            ("search snapshot:", " failed", "SNAPSHOT", self.search_snapshot),
        )
        for label, suffix, marker, findings in legs:
            lines.append(f"{label:<18}{len(findings)}{suffix}")
            lines += [f"  {marker}: {finding}" for finding in findings]
        pragma = "integrity_check" if self.deep else "quick_check"
        lines.append(f"sqlite check:     {'FAILED' if self.sqlite_findings else 'ok'} ({pragma})")
        lines += [f"  SQLITE: {finding}" for finding in self.sqlite_findings]
        if self.sqlite_findings and " could not run: " not in self.sqlite_findings[0]:
            lines.append("  the row legs above did not run: SQLite's own check failed first (see the runbook)")
        lines.append(f"append counter:   {'BEHIND: ' + self.append_counter if self.append_counter else 'ok'}")
        if self.tokens is not None:
            lines += self.tokens.lines()
        if self.surfaces is not None:
            lines += self.surfaces.lines()
        lines.append("VERIFY OK" if self.ok else "VERIFY FAILED")
        return "\n".join(lines)
