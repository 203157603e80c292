"""Tunnels every surface creates, lists and removes the same way: what ``undercroft tunnel create|list|delete``,
the MCP tools ``undercroft_create_tunnel`` / ``undercroft_list_tunnels`` / ``undercroft_delete_tunnel`` and
``POST|GET /v1/vaults/{id}/tunnels``, ``DELETE …/tunnels/{tid}`` (bound to them) do, said once.

A tunnel's record is ``Tunnel.to_dict()``: ``{id, from_wing, from_room, to_wing, to_room, label, created_at}``;
labels and names are words from the vault (to a model, untrusted data).
"""

from __future__ import annotations

from undercroft_store.memory.tunnels import create_tunnel, delete_tunnel, list_tunnels
from undercroft_store.store import VaultStore

__all__ = ["open_tunnel", "remove_tunnel", "tunnel_records"]


def open_tunnel(
    store: VaultStore,
    from_wing: str,
    to_wing: str,
    label: str,
    *,
    from_room: str | None = None,
    to_room: str | None = None,
) -> dict[str, str | None]:
    """Link ``from_wing`` (``from_room``) to ``to_wing`` (``to_room``) with ``label`` (sealed, tagged, audited);
    the new tunnel's record. Bad names raise the store's ``InvalidInput``."""
    return create_tunnel(store, from_wing, to_wing, label, from_room=from_room, to_room=to_room).to_dict()


def tunnel_records(store: VaultStore, *, wing: str | None = None) -> list[dict[str, str | None]]:
    """Every tunnel (with an end in ``wing`` when given), each row verified, as records in the store's order."""
    return [tunnel.to_dict() for tunnel in list_tunnels(store, wing=wing)]


def remove_tunnel(store: VaultStore, tunnel_id: str) -> str:
    """Remove tunnel ``tunnel_id`` (audited); its id. An unknown id is the store's refusal, nothing written."""
    delete_tunnel(store, tunnel_id)
    return tunnel_id
