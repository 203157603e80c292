"""The memory surfaces' verify legs: facts, entities, tunnels and drawer supersessions, and fact receipts.

For every row: its HMAC tag (and sealed blobs opening under their domains), its clear mirror columns
against the HMAC-covered meta, and its tag against the newest audit record naming it (an older version
written back is ``stale``; a row no record names is ``unlabelled``; a record naming no row is an
``orphan``; a tunnel present after its recorded deletion is ``resurrected``). Receipts: a cited fact whose
source drawer fails its HMAC is a failure; changed or deleted sources are reported, not failed.
Supersession gaps: a filed drawer whose covered meta names ``supersedes`` with no link row keyed by its id
(or a link naming another drawer) is reported, not failed — an older build committed the link apart from the
drawer, and a save naming ``supersedes`` outside `supersede_drawer` records no link.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_vault import AuditRow, IntegrityFailure, constant_time_equal

from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.meta_at_rest import open_meta, stored_label
from undercroft_store.memory.kg._internal.rows import open_entity_name, verified_fact
from undercroft_store.memory.kg.errors import FactTampered
from undercroft_store.memory.kg.facts import MIRROR_COLUMNS, mirrors_of
from undercroft_store.memory.kg.receipts import check_receipts
from undercroft_store.memory.supersession import supersession_tag
from undercroft_store.memory.tunnels import _verified as verified_tunnel
from undercroft_store.memory.tunnels import tunnel_columns

__all__ = ["SurfaceVerdict", "check_surfaces"]


@dataclass
class SurfaceVerdict:
    """The surfaces' findings, each ``"<kind> <id>"``; ``ok`` only when every list is empty."""

    checked: int = 0
    tampered: list[str] = field(default_factory=list)
    mirror_drift: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    unlabelled: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    resurrected: list[str] = field(default_factory=list)
    receipts: dict[str, int] = field(default_factory=dict)
    #: ``"drawer <id> supersedes <old>: …"`` — reported, not failed (see the module docstring).
    supersession_gaps: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no leg found anything (a tampered receipt counts as tampered)."""
        return (
            not (
                self.tampered or self.mirror_drift or self.stale or self.unlabelled or self.orphans or self.resurrected
            )
            and self.receipts.get("tampered", 0) == 0
        )

    def lines(self) -> list[str]:
        """The runbook lines verify renders for these legs."""
        out = [f"graph records:    {self.checked} (facts, entities, tunnels, supersessions)"]
        for title, items in (
            ("graph hmac fails", self.tampered),
            ("graph drift", self.mirror_drift),
            ("graph stale", self.stale),
            ("graph unlabelled", self.unlabelled),
            ("graph orphans", self.orphans),
            ("graph resurrected", self.resurrected),
        ):
            out.append(f"{title + ':':<18}{len(items)}")
            out += [f"  {title.split()[1].upper()}: {item}" for item in items]
        counts = ", ".join(f"{count} {verdict}" for verdict, count in self.receipts.items())
        out.append(f"fact receipts:    {counts or 'none cited'}")
        out.append(f"supersede gaps:   {len(self.supersession_gaps)} (reported, not failed)")
        out += [f"  GAP: {gap}" for gap in self.supersession_gaps]
        return out


def _newest(rows: list[AuditRow]) -> dict[str, tuple[str, bytes]]:
    newest: dict[str, tuple[str, bytes]] = {}
    for row in rows:
        prefix, _, record_id = row.record_id.partition("/")
        if prefix in ("kg", "kgent", "tunnel", "tunneldel", "supersession"):
            newest[f"{'tunnel' if prefix == 'tunneldel' else prefix}/{record_id}"] = (prefix, row.tag)
    return newest


def _label(verdict: SurfaceVerdict, newest: dict[str, tuple[str, bytes]], label: str, tag: bytes, bad: bool) -> None:
    kind, _, record_id = label.partition("/")
    name = f"{kind} {record_id}"
    record = newest.pop(label, None)
    if record is None:
        verdict.unlabelled.append(name)
    elif record[0] == "tunneldel":
        verdict.resurrected.append(name)
    elif not bad and not constant_time_equal(record[1], tag):
        verdict.stale.append(name)


# The mirror selects (a mirror that disagrees with its covered meta is the drift leg's failure); the covered
# meta decides. Quarantine residents are not filed: their supersedes is pending review.
_SUPERSEDING = """SELECT d.id, d.meta_json, s.superseded_id FROM drawers d
    LEFT JOIN supersessions s ON s.drawer_id = d.id WHERE d.supersedes IS NOT NULL AND d.wing != ?"""


def _supersession_gaps(context: VaultContext) -> list[str]:
    gaps: list[str] = []
    quarantine = stored_label(context, "wing", QUARANTINE_WING)
    for drawer_id, meta, linked in context.connection.execute(_SUPERSEDING, (quarantine,)):
        try:
            document = json.loads(open_meta(context, str(drawer_id), bytes(meta)))
        except (ValueError, IntegrityFailure):
            continue  # not a drawer record: its HMAC leg fails it
        named = document.get("supersedes") if isinstance(document, dict) else None
        if named is None or linked == named:
            continue
        found = "no link row" if linked is None else f"its link names {linked}"
        gaps.append(f"drawer {drawer_id} supersedes {named}: {found}")
    return gaps


def check_surfaces(context: VaultContext, rows: list[AuditRow]) -> SurfaceVerdict:
    """Run every surface leg over the raw rows, given the audit rows in chain order."""
    verdict = SurfaceVerdict()
    newest = _newest(rows)
    connection = context.connection
    for fact_row in connection.execute(f"SELECT id, meta_json, terms, value, tag, {MIRROR_COLUMNS} FROM kg_facts"):  # noqa: S608
        verdict.checked += 1
        fact_id, bad = str(fact_row[0]), False
        try:
            verified_fact(context, fact_row[:5])
            if tuple(fact_row[5:]) != mirrors_of(bytes(fact_row[1])):
                verdict.mirror_drift.append(f"fact {fact_id}")
        except FactTampered:
            verdict.tampered.append(f"fact {fact_id}")
            bad = True
        _label(verdict, newest, f"kg/{fact_id}", bytes(fact_row[4]), bad)
    for entity_id, name, meta, tag in connection.execute("SELECT id, name, meta_json, tag FROM kg_entities"):
        verdict.checked += 1
        bad = False
        try:
            open_entity_name(context, entity_id, bytes(meta), bytes(name), bytes(tag))
        except FactTampered:
            verdict.tampered.append(f"entity {entity_id}")
            bad = True
        _label(verdict, newest, f"kgent/{entity_id}", bytes(tag), bad)
    for tunnel_row in connection.execute(
        "SELECT id, meta_json, label, tag, from_wing, from_room, to_wing, to_room FROM tunnels"
    ):
        verdict.checked += 1
        bad = False
        try:
            tunnel = verified_tunnel(context, tunnel_row[:4])
            ends = (tunnel.from_wing, tunnel.from_room, tunnel.to_wing, tunnel.to_room)
            legacy = bytes(tunnel_row[1]).startswith(b"{")  # written in the clear, before the migration
            if tuple(tunnel_row[4:]) != (ends if legacy else tunnel_columns(context, *ends)):
                verdict.mirror_drift.append(f"tunnel {tunnel.id}")
        except (FactTampered, IntegrityFailure):
            verdict.tampered.append(f"tunnel {tunnel_row[0]}")
            bad = True
        _label(verdict, newest, f"tunnel/{tunnel_row[0]}", bytes(tunnel_row[3]), bad)
    for drawer_id, superseded_id, meta, tag in connection.execute(
        "SELECT drawer_id, superseded_id, meta_json, tag FROM supersessions"
    ):
        verdict.checked += 1
        good = constant_time_equal(supersession_tag(context, drawer_id, bytes(meta)), bytes(tag))
        if not good:
            verdict.tampered.append(f"supersession {drawer_id}")
        elif json.loads(bytes(meta)).get("superseded") != superseded_id:
            verdict.mirror_drift.append(f"supersession {drawer_id}")
        _label(verdict, newest, f"supersession/{drawer_id}", bytes(tag), not good)
    verdict.supersession_gaps = _supersession_gaps(context)
    verdict.orphans += [label.replace("/", " ", 1) for label, (prefix, _) in newest.items() if prefix != "tunneldel"]
    verdict.receipts = check_receipts(context).counts
    return verdict
