"""The remote-index operations every adapter shares: the status record (``index status``, MCP
``undercroft_index_status``, and ``GET /v1/vaults/{id}/index/status`` when the HTTP engine lands).

The HTTP handler opens the vault and the mirror exactly as the other two surfaces do
(``_internal.composition.open_mirror(backend, vault)``) and returns `index_status_record` as its body.
"""

from __future__ import annotations

from undercroft_store import VaultStore
from undercroft_store.governance.index_push import index_status
from undercroft_store.kernel.mirror import Mirror

__all__ = ["INDEX_STATUS_SCHEMA", "index_status_record"]

#: The JSON schema of the status record (the MCP tool's output schema).
INDEX_STATUS_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "vault": {"type": "string"},
        "backend": {"type": "string"},
        "destination": {"type": "string"},
        "collection": {"type": "string"},
        "exists": {"type": "boolean"},
        "local_records": {"type": "integer"},
        "remote_records": {"type": ["integer", "null"]},
        "space": {"type": "string"},
        "remote_space": {"type": ["string", "null"]},
        "space_matches": {"type": ["boolean", "null"]},
        "in_step": {"type": ["boolean", "null"]},
    },
    "required": ["vault", "backend", "collection", "exists", "local_records", "remote_records", "space"],
}


def index_status_record(store: VaultStore, mirror: Mirror) -> dict[str, object]:
    """The status of ``store``'s mirror: remote vs local counts; ``remote_records`` None when no mirror exists.

    A read: nothing is created on the backend (a describe, then a count when the collection exists).
    """
    return index_status(store, mirror)
