"""Drawer operations more than one surface runs: the in-place update, the deletion and the deletion by source file.

``update_drawer`` is what MCP's ``undercroft_update_drawer``, ``PUT /v1/vaults/{id}/drawers/{drawer_id}`` (which
binds to that tool) and ``undercroft drawer update`` do, so the three cannot drift on what an update may change:
the content only, re-sealed, re-tagged and audited through the store's write choke point under the admission
screen. A drawer's id depends on where it lives, so wing and room are checks that must equal the drawer's own,
never a move.

``delete_drawer`` is what ``undercroft_delete_drawer``, ``DELETE /v1/vaults/{id}/drawers/{drawer_id}`` (bound to it)
and ``undercroft drawer delete`` do: one deletion through the store, a keyed tombstone and an audit record left.

``delete_by_source`` is what MCP's ``undercroft_delete_by_source``, ``DELETE /v1/vaults/{id}/drawers`` (bound to
it) and ``undercroft drawer delete-by-source`` do: which drawers go is a write decision, so it is taken over every
wing the source filed into, whatever the read floor would hand out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from undercroft_core.normalisation import is_blank, normalise
from undercroft_store import DrawerWrite, Screen
from undercroft_store.governance.read_audit import InternalRead, silent
from undercroft_store.store import VaultStore

__all__ = ["DrawerUpdate", "UpdateRefused", "delete_by_source", "delete_drawer", "update_drawer"]


class UpdateRefused(ValueError):
    """An update the operation refuses as asked (a move, blank words); the message is the reason. Nothing is
    written. Each adapter maps it to its refusal: MCP ``InvalidArgument``, click ``BadParameter`` (exit 1)."""


@dataclass(frozen=True, slots=True)
class DrawerUpdate:
    """What an update did: ``outcome`` is the store's (``updated``, ``quarantined``, …) or ``unchanged``."""

    outcome: str
    id: str
    wing: str
    room: str


def update_drawer(
    store: VaultStore,
    drawer_id: str,
    *,
    content: str | None,
    now: str,
    wing: str | None = None,
    room: str | None = None,
) -> DrawerUpdate:
    """Replace drawer ``drawer_id``'s content (``None``: nothing to change, reported ``unchanged``).

    Raises `UpdateRefused` for a wing or room that is not the drawer's own and for content that is blank after
    normalisation (nothing is written); the store's `DrawerNotFound` / `InvalidDrawer` / `RecordTampered`
    pass through.
    """
    with silent(store, InternalRead.WRITE_DECISION):  # the reply names the id, never the old words
        current = store.get(drawer_id)
    for key, asked, held in (("wing", wing, current.wing), ("room", room, current.room)):
        if asked is not None and asked != held:
            raise UpdateRefused(
                f"moving a drawer to another {key} is not an in-place update "
                f"(its id depends on where it lives); save it there and delete {current.id}"
            )
    if content is None:
        return DrawerUpdate("unchanged", current.id, current.wing, current.room)
    text = normalise(content)
    if is_blank(text):
        raise UpdateRefused(
            "argument 'content' is empty after normalisation (whitespace and invisible characters only)"
        )
    updated = replace(current, content=text, updated_at=now, occurrences=(), time_mentions=(), entities=())
    [result] = store.write([DrawerWrite(updated)], screening=Screen())
    return DrawerUpdate(result.outcome, result.id, current.wing, current.room)


def delete_drawer(store: VaultStore, drawer_id: str) -> str:
    """Delete drawer ``drawer_id`` (a keyed tombstone and an audit record remain); its id. An absent drawer is
    the store's ``DrawerNotFound``, a malformed id its ``InvalidInput``: nothing is written either way."""
    store.delete(drawer_id)
    return drawer_id


def delete_by_source(
    store: VaultStore, source_file: str, *, wing: str | None = None, dry_run: bool = False
) -> dict[str, Any]:
    """Delete every drawer mined from ``source_file`` (in ``wing`` when given): ``{source_file, dry_run, matched,
    deleted}``, ``deleted`` 0 on a dry run. Each deletion leaves a keyed tombstone and an audit record; the
    quarantine wing's residents are never listed (admission allow|deny are their only doors)."""
    with silent(store, InternalRead.WRITE_DECISION):  # ids and a count go back, never the words
        # A write decision, not a read: under the trust floor a low-trust wing's drawers would be left behind.
        matched = [d.id for d in store.list_drawers(wing=wing, trust_floor=False) if d.source_file == source_file]
    for drawer_id in [] if dry_run else matched:
        store.delete(drawer_id)
    return {
        "source_file": source_file,
        "dry_run": dry_run,
        "matched": matched,
        "deleted": 0 if dry_run else len(matched),
    }
