"""Drawer supersession: a drawer replaces another, with a keyed receipt over the superseded words and a time.

`supersede_drawer` files the new drawer through the write choke point (its HMAC-covered ``supersedes``
names the old one) and, in that same ``BEGIN IMMEDIATE`` transaction (the choke point's ``within`` hook),
records the link row: the superseded id, a provenance fingerprint of the superseded content (keyed with the
blind-index secret, so it survives rotation) and the supersession time, tagged ``supersession/<new id>``
and audited. `live_at` uses the times to answer what was live at an
instant; `supersessions` lists each link with a verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from undercroft_core.drawer import Drawer
from undercroft_core.ids import ID_RECIPE_APPEND
from undercroft_core.normalisation import is_blank
from undercroft_vault import AuditRow, compute_tag, constant_time_equal

from undercroft_store.errors import DrawerNotFound, RecordTampered
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.read_door import InternalRead, audited_read, silent
from undercroft_store.kernel._internal.reading import SELECT_BY_ID, verified_drawer
from undercroft_store.kernel._internal.transaction import open_blind, readable
from undercroft_store.kernel.screening import Screen
from undercroft_store.kernel.writes import DrawerWrite, write_drawers
from undercroft_store.memory.kg.errors import InvalidSurfaceInput
from undercroft_store.memory.kg.facts import normalise_instant

if TYPE_CHECKING:
    from undercroft_store.store import VaultStore

__all__ = ["SUPERSESSION_VERDICTS", "Supersession", "live_at", "supersede_drawer", "supersession_tag", "supersessions"]

SupersessionVerdict = Literal["verified", "superseded_changed", "superseded_gone", "tampered"]
#: The verdicts `supersessions` gives each link.
SUPERSESSION_VERDICTS: Final = ("verified", "superseded_changed", "superseded_gone", "tampered")


@dataclass(frozen=True, slots=True)
class Supersession:
    """One link: `drawer_id` superseded `superseded_id` at `at`, and the receipt's verdict now."""

    drawer_id: str
    superseded_id: str
    at: str
    verdict: SupersessionVerdict


def supersession_tag(context: VaultContext, drawer_id: str, meta: bytes) -> bytes:
    """A link row's HMAC tag (also its ``supersession/<id>`` audit record's tag)."""
    return compute_tag(context.keys, f"supersession/{drawer_id}", meta, b"")


def _receipt(context: VaultContext, drawer_id: str, content: str) -> str:
    with open_blind(context) as blind:
        return blind.provenance_fingerprint(b"supersession\x00" + drawer_id.encode() + b"\x00" + content.encode()).hex()


def supersede_drawer(store: VaultStore, old_id: str, text: str, *, added_by: str) -> Supersession:
    """File `text` as a new drawer in the old one's wing and room that supersedes it, and record the link.

    ONE write transaction holds the new drawer, its ``drawer/<id>`` record, the link row and its
    ``supersession/<id>`` record (the link rides the choke point's ``within`` hook): a crash leaves both or
    neither. The receipt is taken over the superseded words as read inside that transaction.
    """
    with silent(store, InternalRead.WRITE_DECISION):
        old = store.get(old_id)
    if not isinstance(text, str) or is_blank(text):  # the one rule: zero-width characters are empty too
        raise InvalidSurfaceInput("the superseding text must not be empty")
    context = store._context
    index = store.allocate_append_indices(1)
    drawer = Drawer(
        id=context.drawer_ids.append(old.wing, old.room, index),
        content=text.strip(),
        wing=old.wing,
        room=old.room,
        chunk_index=index,
        id_recipe=ID_RECIPE_APPEND,
        added_by=added_by,
        filed_at=context.now(),
        kind=old.kind,
        supersedes=old.id,
    )
    linked: list[str] = []

    def link(at: str) -> list[AuditRow]:
        # Re-read inside the transaction: the receipt covers the words superseded at the commit.
        row = context.connection.execute(SELECT_BY_ID, (old.id,)).fetchone()
        if row is None:
            raise DrawerNotFound(f"drawer {old.id} was deleted before the supersession committed")
        current = verified_drawer(context, row[0], bytes(row[1]), bytes(row[2]), bytes(row[3]))
        receipt = _receipt(context, current.id, current.content)
        meta = json.dumps(
            {"at": at, "receipt": receipt, "superseded": old.id}, sort_keys=True, separators=(",", ":")
        ).encode("ascii")
        tag = supersession_tag(context, drawer.id, meta)
        context.connection.execute(
            "INSERT INTO supersessions (drawer_id, superseded_id, meta_json, tag) VALUES (?, ?, ?, ?)",
            (drawer.id, old.id, meta, tag),
        )
        linked.append(at)
        return [AuditRow(f"supersession/{drawer.id}", tag, at)]

    # A write the admission screen diverts still links under the id it aims at: allow lands it there.
    write_drawers(context, [DrawerWrite(drawer)], screening=Screen(), within=link)
    return Supersession(drawer.id, old.id, linked[0], "verified")


def supersessions(store: VaultStore) -> list[Supersession]:
    """Every link with its verdict (the superseded drawer's words checked against the keyed receipt)."""
    context = readable(store._context)
    found: list[Supersession] = []
    rows = context.connection.execute(
        "SELECT drawer_id, superseded_id, meta_json, tag FROM supersessions ORDER BY rowid"
    )
    for drawer_id, superseded_id, meta, tag in rows.fetchall():
        document = json.loads(bytes(meta))
        verdict: SupersessionVerdict
        if not constant_time_equal(supersession_tag(context, drawer_id, bytes(meta)), bytes(tag)):
            verdict = "tampered"
        else:
            try:
                with silent(store, InternalRead.VERIFICATION):
                    old = store.get(superseded_id)
            except DrawerNotFound:
                verdict = "superseded_gone"
            except RecordTampered:
                verdict = "tampered"
            else:
                same = _receipt(context, old.id, old.content) == document["receipt"]
                verdict = "verified" if same else "superseded_changed"
        found.append(Supersession(drawer_id, superseded_id, document["at"], verdict))
    return found


@audited_read("list", subject=lambda a: str(a["until"]), scope=lambda a: {"wing": a["wing"], "room": a["room"]})
def live_at(store: VaultStore, until: str, *, wing: str | None = None, room: str | None = None) -> list[Drawer]:
    """Drawers filed by `until` and not yet superseded then (a superseded drawer still present counts live
    before its supersession time), newest first."""
    moment = normalise_instant(until, "until")
    context = readable(store._context)
    closed = {
        str(superseded): json.loads(bytes(meta))["at"]
        for superseded, meta in context.connection.execute("SELECT superseded_id, meta_json FROM supersessions")
    }
    return [
        drawer
        for drawer in store.list_drawers(wing=wing, room=room)
        if drawer.filed_at <= moment and not (drawer.id in closed and closed[drawer.id] <= moment)
    ]
