"""Re-keying the surfaces' tables for a key rotation: one hook per table, called by `integrity.rotation`.

Each hook runs inside the rotation's one open transaction and receives its ``Rekeying`` (connection,
vault id, sealed flag, old and new keys and sealers). It checks every row's tag under the OLD keys (a row
that fails refuses the rotation with `FactTampered`, an integrity verdict), opens every sealed blob under
the old sealer, seals it again under the new one, recomputes the tag under the new MAC key, and returns
the ``(label, new tag)`` pairs the rotation appends as re-key audit records — so each row's tag stays
equal to the newest record naming it. Blind values do not move (the blind-index secret is re-sealed,
never redrawn), so no index column changes. `RESEAL_HOOKS` maps each table to its hook; the store's
composition root (`undercroft_store.wiring`) registers them with `kernel.seams`.
"""

from __future__ import annotations

import sqlite3
from typing import Final, Protocol

from undercroft_vault import Domain, IntegrityFailure, Sealer, VaultKeys, compute_tag, constant_time_equal

from undercroft_store.kernel._internal import meta_at_rest
from undercroft_store.memory.kg.errors import FactTampered
from undercroft_store.memory.kg.facts import at_rest_payload, reseal_window_meta

__all__ = ["RESEAL_HOOKS", "RekeyingLike", "reseal_entities", "reseal_facts", "reseal_supersessions", "reseal_tunnels"]

Rekeyed = list[tuple[str, bytes]]


class RekeyingLike(Protocol):
    """The fields a hook reads from the rotation's ``Rekeying``."""

    @property
    def connection(self) -> sqlite3.Connection:
        """The rotation's connection, inside its open transaction."""

    @property
    def sealed(self) -> bool:
        """True for a sealed vault."""

    @property
    def old_keys(self) -> VaultKeys:
        """The keys the rows were written under."""

    @property
    def new_keys(self) -> VaultKeys:
        """The keys the rows move to."""

    @property
    def old_sealer(self) -> Sealer:
        """Opens the current blobs."""

    @property
    def new_sealer(self) -> Sealer:
        """Seals the moved blobs."""

    @property
    def metadata_sealed(self) -> bool:
        """True when the vault's metadata is at rest sealed (`kernel._internal.meta_at_rest`)."""


def _check(r: RekeyingLike, label: str, meta: bytes, body: bytes, tag: bytes) -> None:
    if not constant_time_equal(compute_tag(r.old_keys, label, meta, body), tag):
        raise FactTampered(f"{label} fails its HMAC tag under the current keys: rotation refused, run verify")


def _move(r: RekeyingLike, blob: bytes, domain: Domain) -> bytes:
    return r.new_sealer.seal(domain, r.old_sealer.open(domain, blob)) if r.sealed else blob


def reseal_facts(r: RekeyingLike) -> Rekeyed:
    """``kg_facts``: terms under ``kgterms/{id}``, object under ``kg/{id}``, a sealed window (inside the meta)
    under ``kgwindow/{id}``, tag ``kg/<id>``."""
    out: Rekeyed = []
    rows = r.connection.execute("SELECT id, meta_json, terms, value, tag FROM kg_facts").fetchall()
    for fact_id, meta, terms, value, tag in rows:
        meta, terms, value = bytes(meta), bytes(terms), bytes(value)
        _check(r, f"kg/{fact_id}", meta, at_rest_payload(terms, value), bytes(tag))
        terms = _move(r, terms, Domain.kg_terms(fact_id))
        value = _move(r, value, Domain.kg_object(fact_id))
        meta = reseal_window_meta(r.old_sealer, r.new_sealer, fact_id, meta) if r.sealed else meta
        new_tag = compute_tag(r.new_keys, f"kg/{fact_id}", meta, at_rest_payload(terms, value))
        r.connection.execute(
            "UPDATE kg_facts SET meta_json = ?, terms = ?, value = ?, tag = ? WHERE id = ?",
            (meta, terms, value, new_tag, fact_id),
        )
        out.append((f"kg/{fact_id}", new_tag))
    return out


def reseal_entities(r: RekeyingLike) -> Rekeyed:
    """``kg_entities``: name under ``kgname/{blind}``, tag ``kgent/<id>``."""
    out: Rekeyed = []
    for entity_id, name, meta, tag in r.connection.execute("SELECT id, name, meta_json, tag FROM kg_entities"):
        _check(r, f"kgent/{entity_id}", bytes(meta), bytes(name), bytes(tag))
        moved = _move(r, bytes(name), Domain.kg_name(entity_id))
        new_tag = compute_tag(r.new_keys, f"kgent/{entity_id}", bytes(meta), moved)
        r.connection.execute("UPDATE kg_entities SET name = ?, tag = ? WHERE id = ?", (moved, new_tag, entity_id))
        out.append((f"kgent/{entity_id}", new_tag))
    return out


def reseal_tunnels(r: RekeyingLike) -> Rekeyed:
    """``tunnels``: label under ``kg/{id}``, tag ``tunnel/<id>``."""
    out: Rekeyed = []
    for tunnel_id, label, meta, tag in r.connection.execute("SELECT id, label, meta_json, tag FROM tunnels"):
        _check(r, f"tunnel/{tunnel_id}", bytes(meta), bytes(label), bytes(tag))
        moved = _move(r, bytes(label), Domain.kg_object(tunnel_id))
        stored = bytes(meta)
        if r.metadata_sealed:  # the ends and time, sealed under surface/{id}/meta
            try:
                stored = meta_at_rest.reseal_surface_meta(r.old_sealer, r.new_sealer, tunnel_id, stored)
            except IntegrityFailure as error:
                raise FactTampered(f"tunnel {tunnel_id}: its sealed meta does not open ({error})") from None
        new_tag = compute_tag(r.new_keys, f"tunnel/{tunnel_id}", stored, moved)
        r.connection.execute(
            "UPDATE tunnels SET meta_json = ?, label = ?, tag = ? WHERE id = ?", (stored, moved, new_tag, tunnel_id)
        )
        out.append((f"tunnel/{tunnel_id}", new_tag))
    return out


def reseal_supersessions(r: RekeyingLike) -> Rekeyed:
    """``supersessions``: nothing sealed (the receipt is blind-keyed and survives); tag ``supersession/<id>``."""
    out: Rekeyed = []
    for drawer_id, meta, tag in r.connection.execute("SELECT drawer_id, meta_json, tag FROM supersessions"):
        _check(r, f"supersession/{drawer_id}", bytes(meta), b"", bytes(tag))
        new_tag = compute_tag(r.new_keys, f"supersession/{drawer_id}", bytes(meta), b"")
        r.connection.execute("UPDATE supersessions SET tag = ? WHERE drawer_id = ?", (new_tag, drawer_id))
        out.append((f"supersession/{drawer_id}", new_tag))
    return out


#: Table → its reseal hook (registered with `kernel.seams` by `undercroft_store.wiring`).
RESEAL_HOOKS: Final = {
    "kg_facts": reseal_facts,
    "kg_entities": reseal_entities,
    "tunnels": reseal_tunnels,
    "supersessions": reseal_supersessions,
}
