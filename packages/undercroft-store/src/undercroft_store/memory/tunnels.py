"""Tunnels: labelled cross-wing links (create, list, follow to the far wing's drawers, delete, traverse).

A tunnel row keeps its two ends (wing, optional room) as label columns — the names on an hmac-only vault,
their blind values on a sealed one, whose meta (ends and time) is sealed under ``surface/{id}/meta`` — and its
label sealed under ``kg/{id}`` in a sealed vault. Rows are HMAC-tagged
(``tunnel/<id>``) and every create and delete appends an audit record; a delete's record
(``tunneldel/<id>``) is keyed over the deleted row's tag, so a row present after its recorded deletion is a
verify finding. The quarantine wing can be neither end.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from undercroft_core.drawer import Drawer
from undercroft_core.errors import InvalidInput
from undercroft_core.names import validate_name
from undercroft_core.vocabulary import QUARANTINE_WING, names_quarantine_wing
from undercroft_vault import AuditRow, Domain, IntegrityFailure, compute_tag, constant_time_equal

from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.meta_at_rest import open_surface_meta, seal_surface_meta, stored_label
from undercroft_store.kernel._internal.read_door import audited_read
from undercroft_store.kernel._internal.transaction import audited, open_blind, readable
from undercroft_store.memory.kg.errors import FactTampered, InvalidSurfaceInput, SurfaceNotFound

if TYPE_CHECKING:
    from undercroft_store.store import VaultStore

__all__ = [
    "MAX_DEPTH",
    "Tunnel",
    "create_tunnel",
    "delete_tunnel",
    "follow_tunnel",
    "list_tunnels",
    "traverse",
    "tunnel_columns",
    "tunnel_tag",
]

#: Deepest `traverse` accepted.
MAX_DEPTH: Final = 8
_SELECT: Final = "SELECT id, meta_json, label, tag FROM tunnels"


@dataclass(frozen=True, slots=True)
class Tunnel:
    """A labelled link from one wing (optionally a room) to another."""

    id: str
    from_wing: str
    from_room: str | None
    to_wing: str
    to_room: str | None
    label: str
    created_at: str

    def to_dict(self) -> dict[str, str | None]:
        """JSON-ready fields."""
        return {name: getattr(self, name) for name in self.__slots__}


def tunnel_tag(context: VaultContext, tunnel_id: str, meta: bytes, label: bytes) -> bytes:
    """A tunnel row's HMAC tag (also its ``tunnel/<id>`` audit record's tag)."""
    return compute_tag(context.keys, f"tunnel/{tunnel_id}", meta, label)


def tunnel_columns(
    context: VaultContext, from_wing: str, from_room: str | None, to_wing: str, to_room: str | None
) -> tuple[str | None, ...]:
    """The four end columns as stored: the names on hmac-only, their blind values on a sealed vault."""
    return (
        stored_label(context, "wing", from_wing),
        stored_label(context, "room", from_room),
        stored_label(context, "wing", to_wing),
        stored_label(context, "room", to_room),
    )


def _end(wing: object, room: object, what: str) -> tuple[str, str | None]:
    try:
        checked_wing = validate_name(wing, what=f"{what} wing")
        checked_room = validate_name(room, what=f"{what} room") if room is not None else None
    except InvalidInput as error:
        raise InvalidSurfaceInput(str(error)) from None
    if names_quarantine_wing(checked_wing):  # any spelling: a look-alike of the queue's name is the queue's name
        raise InvalidSurfaceInput(f"the {QUARANTINE_WING!r} wing cannot be a tunnel end")
    return checked_wing, checked_room


def _verified(context: VaultContext, row: tuple[object, ...]) -> Tunnel:
    tunnel_id = str(row[0])
    meta, label, tag = bytes(row[1]), bytes(row[2]), bytes(row[3])  # type: ignore[call-overload]
    if not constant_time_equal(tunnel_tag(context, tunnel_id, meta, label), tag):
        raise FactTampered(f"tunnel {tunnel_id} in vault {context.vault_id!r} fails its HMAC tag")
    try:
        plain = context.sealer.open(Domain.kg_object(tunnel_id), label) if context.sealed else label
        meta = open_surface_meta(context, tunnel_id, meta)
    except IntegrityFailure as error:
        raise FactTampered(f"tunnel {tunnel_id} in vault {context.vault_id!r} does not open: {error}") from None
    document = json.loads(meta)
    return Tunnel(
        tunnel_id,
        document["from_wing"],
        document["from_room"],
        document["to_wing"],
        document["to_room"],
        plain.decode("utf-8"),
        document["created_at"],
    )


def create_tunnel(
    store: VaultStore,
    from_wing: str,
    to_wing: str,
    label: str,
    *,
    from_room: str | None = None,
    to_room: str | None = None,
) -> Tunnel:
    """Create a labelled tunnel between two different wings (or rooms); audited."""
    context = store._context
    start, end = _end(from_wing, from_room, "from"), _end(to_wing, to_room, "to")
    if start == end:
        raise InvalidSurfaceInput(f"a tunnel joins two different places; both ends are {start[0]!r}")
    if not isinstance(label, str) or not label.strip() or len(label) > 1024:
        raise InvalidSurfaceInput("a tunnel label must be a non-empty string of at most 1024 characters")
    with open_blind(context) as blind, audited(context) as records:
        at = context.now()
        tunnel_id = "tunnel_" + blind.blind(
            "tunnel", "\x1f".join([*start[:1], start[1] or "", *end[:1], end[1] or "", label, at])
        )
        meta = json.dumps(
            {"created_at": at, "from_room": start[1], "from_wing": start[0], "to_room": end[1], "to_wing": end[0]},
            sort_keys=True,
            separators=(",", ":"),
        ).encode("utf-8")
        plain = label.strip().encode("utf-8")
        stored = context.sealer.seal(Domain.kg_object(tunnel_id), plain) if context.sealed else plain
        meta = seal_surface_meta(context, tunnel_id, meta)  # sealed vault: the ends and time sealed too
        tag = tunnel_tag(context, tunnel_id, meta, stored)
        context.connection.execute(
            "INSERT INTO tunnels (id, from_wing, from_room, to_wing, to_room, meta_json, label, tag) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (tunnel_id, *tunnel_columns(context, start[0], start[1], end[0], end[1]), meta, stored, tag),
        )
        records.append(AuditRow(f"tunnel/{tunnel_id}", tag, at))
    return Tunnel(tunnel_id, start[0], start[1], end[0], end[1], label.strip(), at)


def list_tunnels(store: VaultStore, *, wing: str | None = None) -> list[Tunnel]:
    """Verified tunnels, oldest first; with `wing`, only those with an end in it."""
    context = readable(store._context)
    if wing is None:
        rows = context.connection.execute(f"{_SELECT} ORDER BY rowid").fetchall()
    else:
        # A sealed vault's end columns hold blind values (a row written before the migration: the name).
        ends = (str(stored_label(context, "wing", wing)), wing)
        rows = context.connection.execute(
            f"{_SELECT} WHERE from_wing IN (?, ?) OR to_wing IN (?, ?) ORDER BY rowid", (*ends, *ends)
        ).fetchall()
    return [_verified(context, row) for row in rows]


def _get(context: VaultContext, tunnel_id: str) -> tuple[Tunnel, bytes]:
    row = context.connection.execute(f"{_SELECT} WHERE id = ?", (tunnel_id,)).fetchone()
    if row is None:
        raise SurfaceNotFound(f"no tunnel {tunnel_id!r} in vault {context.vault_id!r}")
    return _verified(context, row), bytes(row[3])


@audited_read("tunnel", subject=lambda a: str(a["tunnel_id"]), scope=lambda a: {"from_wing": a["from_wing"]})
def follow_tunnel(store: VaultStore, tunnel_id: str, *, from_wing: str | None = None, limit: int = 20) -> list[Drawer]:
    """The far end's drawers, newest first (the far end is ``to`` unless `from_wing` names that end)."""
    tunnel, _ = _get(readable(store._context), tunnel_id)
    far_wing, far_room = tunnel.to_wing, tunnel.to_room
    if from_wing is not None and from_wing == tunnel.to_wing:
        far_wing, far_room = tunnel.from_wing, tunnel.from_room
    return store.list_drawers(wing=far_wing, room=far_room, limit=limit)


def delete_tunnel(store: VaultStore, tunnel_id: str) -> None:
    """Delete a tunnel; its ``tunneldel/<id>`` record is keyed over the deleted row's tag."""
    context = store._context
    with audited(context) as records:
        at = context.now()
        _, old_tag = _get(context, tunnel_id)
        context.connection.execute("DELETE FROM tunnels WHERE id = ?", (tunnel_id,))
        label = f"tunneldel/{tunnel_id}"
        records.append(AuditRow(label, compute_tag(context.keys, label, at.encode("ascii"), old_tag), at))


def traverse(store: VaultStore, wing: str, *, depth: int = 2) -> list[tuple[str, int, str]]:
    """Wings reachable from `wing` through tunnels (either direction): ``(wing, hops, via tunnel id)``."""
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise InvalidSurfaceInput(f"depth must be an integer from 1 to {MAX_DEPTH}, got {depth!r}")
    start, _ = _end(wing, None, "start")
    edges: dict[str, list[tuple[str, str]]] = {}
    for tunnel in list_tunnels(store):
        edges.setdefault(tunnel.from_wing, []).append((tunnel.to_wing, tunnel.id))
        edges.setdefault(tunnel.to_wing, []).append((tunnel.from_wing, tunnel.id))
    seen = {start}
    found: list[tuple[str, int, str]] = []
    queue: deque[tuple[str, int]] = deque([(start, 0)])
    while queue:
        here, hops = queue.popleft()
        if hops == depth:
            continue
        for there, via in edges.get(here, []):
            if there not in seen:
                seen.add(there)
                found.append((there, hops + 1, via))
                queue.append((there, hops + 1))
    return found
