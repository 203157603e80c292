"""The tamper campaign's vault: a small palace that touches every table, and the readable picture of it.

`build_vault` files drawers in several wings and rooms, two KG facts, a tunnel, a quarantined write, a
forgotten drawer and a diary entry, then checkpoints the WAL so ``vault.db`` alone holds every page.
`snapshot` is everything a reader can get out of the vault through the library — the full export (every
drawer with its covered metadata and embedding, KG entities and facts, tunnels) plus the reads the surfaces
serve (drawer list per wing, scoped searches, wake-up, the diary, stats) — as canonical JSON per section,
so a tampered copy is compared with the reference byte for byte.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from undercroft_core import HashEmbedder
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_store import Palace, VaultStore
from undercroft_store.governance.admission import AdmissionPolicy, load_fixtures
from undercroft_store.governance.forgetting import forget
from undercroft_store.governance.quarantine import install_gate
from undercroft_store.governance.read_audit import InternalRead, silent
from undercroft_store.memory.diaries import diary_wing, read_diary, write_diary
from undercroft_store.memory.kg.graph import KnowledgeGraph
from undercroft_store.memory.tunnels import create_tunnel, list_tunnels
from undercroft_store.memory.wakeup import wake_up
from undercroft_store.search import Searcher, SearchRequest

__all__ = ["DIARY_AGENT", "FILED_FROM", "QUERIES", "RANKED_AT", "VAULT", "build_vault", "checkpoint", "snapshot"]

VAULT = "default"
DIARY_AGENT = "scribe"

#: (wing, room, text): several wings and rooms, so a scoped read has neighbours it must not return.
_DRAWERS: tuple[tuple[str, str, str], ...] = (
    ("work", "planning", "The quarterly roadmap puts the lighthouse migration before the saxophone launch."),
    ("work", "planning", "Alice owns the avalanche retrospective; the notes live in the shared drive."),
    ("work", "infra", "The database backups rotate nightly at two and are verified every Sunday morning."),
    ("work", "infra", "Port 8443 serves the internal dashboard behind the corporate proxy for the team."),
    ("life", "travel", "The train to Lisbon leaves at nine; book the window seat on the left side."),
    ("life", "travel", "Pack the quokka plush for the trip, the kids will ask for it at bedtime."),
    ("life", "food", "Grandmother's marmalade recipe needs bitter Seville oranges and a long simmer."),
    ("life", "food", "The zebra cake at the corner bakery is only sold on Saturday mornings."),
    ("research", "papers", "Read the paper on learned index structures before the reading group meets."),
    ("research", "papers", "The survey on retrieval augmented generation cites forty benchmark suites."),
    ("research", "ideas", "Try a Bloom filter in front of the postings to skip empty lookups entirely."),
    ("research", "ideas", "A seeded random bit flip campaign measures how often tampering goes unseen."),
)
_FORGOTTEN = ("life", "travel", "The old locker code was 4417; it has been changed since then.")
_DIARY = "Today I filed the roadmap notes and reviewed the backup schedule with the operator."

#: The first filing instant, and the instant every search ranks at (so recency never moves under a trial).
FILED_FROM = datetime(2026, 5, 1, 9, 0, 0, tzinfo=UTC)
RANKED_AT = FILED_FROM + timedelta(days=1)

#: (query, wing or None): scoped and unscoped searches whose answers the campaign compares.
QUERIES: tuple[tuple[str, str | None], ...] = (
    ("lighthouse roadmap", "work"),
    ("backups verified", None),
    ("marmalade oranges", "life"),
    ("Lisbon train", None),
    ("postings filter", "research"),
    ("tampering campaign", None),
)


class _StepClock:
    """One second per call from a fixed instant: filing dates (and so recency) are the same on every build."""

    def __init__(self) -> None:
        self.now = FILED_FROM

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def build_vault(home: Path, *, level: str = "sealed") -> None:
    """Create ``home`` with one vault at ``level`` holding one of every kind of record, closed and checkpointed."""
    embedder = HashEmbedder()
    with Palace(home, clock=_StepClock()) as palace:
        palace.create_vault(VAULT, level=level)  # type: ignore[arg-type] # the CLI validates the level
        with palace.open_vault(VAULT, embedder) as store:
            for wing, room, text in _DRAWERS:
                store.remember(text, wing=wing, room=room, added_by="bench")
            doomed = store.remember(_FORGOTTEN[2], wing=_FORGOTTEN[0], room=_FORGOTTEN[1], added_by="bench")
            forget(store, [doomed[0].id], reason="operator")
            graph = KnowledgeGraph(store)
            graph.add("Alice", "owns", "avalanche retrospective", valid_from="2026-01-05")
            graph.add("backups", "rotate", "nightly", valid_from="2025-11-01", confidence=0.9)
            create_tunnel(store, "work", "research", "ideas feed the roadmap", to_room="ideas")
            write_diary(store, DIARY_AGENT, _DIARY)
            install_gate(store, AdmissionPolicy.from_env({"UNDERCROFT_ADMISSION": "quarantine"}))
            store.remember(load_fixtures()[0].text, wing="work", room="inbox", added_by="bench")
    checkpoint(home / "vaults" / VAULT / "vault.db")


def checkpoint(database: Path) -> None:
    """Fold the WAL into ``database`` and drop the side files, so the main file alone holds every page."""
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()
    # The last connection's close removes the side files in WAL mode; a leftover is empty after TRUNCATE.
    for suffix in ("-wal", "-shm"):
        database.with_name(database.name + suffix).unlink(missing_ok=True)


def _plain(value: object) -> object:
    """JSON-ready with ``str`` keys: a damaged index can hand back a wing as bytes, which is a difference to
    report (the section differs), not a reason for the comparison itself to fail."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else repr(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value if isinstance(value, str | int | float | bool) or value is None else repr(value)


def _canonical(value: object) -> bytes:
    return json.dumps(_plain(value), ensure_ascii=False, sort_keys=True, allow_nan=False).encode("utf-8")


def _drawer(drawer: Any) -> dict[str, Any]:
    return asdict(drawer)


def snapshot(store: VaultStore) -> dict[str, bytes]:
    """Every readable section of ``store`` as canonical JSON bytes (raises whatever the reads raise)."""
    sections: dict[str, Any] = {}
    with silent(store, InternalRead.EXPORT):
        seqs = [int(s) for s in store.scope_seqs(include_quarantine=True)]
        sections["drawers"] = [_drawer(d) for d in store.hydrate(seqs)]
        matrix = store.iter_embeddings()
        sections["embeddings"] = {
            "ids": list(matrix.ids),
            "codes": matrix.codes.tolist(),
            "scales": [float(s) for s in matrix.scales],
        }
        graph = KnowledgeGraph(store)
        sections["kg_entities"] = [asdict(e) for e in graph.entities(limit=1000, offset=0)]
        sections["kg_facts"] = [fact.to_dict() for fact in graph.timeline()]
        sections["tunnels"] = [tunnel.to_dict() for tunnel in list_tunnels(store)]
        wings = sorted({w for w, _, _ in _DRAWERS} | {QUARANTINE_WING, diary_wing(DIARY_AGENT), "general"})
        sections["lists"] = {
            "*": [_drawer(d) for d in store.list_drawers()],
            **{wing: [_drawer(d) for d in store.list_drawers(wing=wing)] for wing in wings},
            **{
                f"{wing}/{room}": [_drawer(d) for d in store.list_drawers(wing=wing, room=room)]
                for wing, room in sorted({(w, r) for w, r, _ in _DRAWERS})
            },
        }
        searcher = Searcher(store, HashEmbedder())
        sections["searches"] = [
            searcher.search(SearchRequest(query=query, wing=wing, limit=20, ranked_at=RANKED_AT)).to_dict()
            for query, wing in QUERIES
        ]
        sections["wake_up"] = asdict(wake_up(store))
        sections["diary"] = [_drawer(d) for d in read_diary(store, DIARY_AGENT)]
        stats = store.stats().to_dict()
        stats.pop("read_only", None)
        sections["stats"] = stats
    return {name: _canonical(value) for name, value in sections.items()}
