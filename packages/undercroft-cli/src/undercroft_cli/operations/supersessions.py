"""The supersession links with their verdicts: what ``GET /v1/vaults/{id}/supersessions`` and
``undercroft supersessions`` answer, said once.

Each link says drawer ``drawer_id`` replaced ``superseded_id`` at ``at``; its verdict is recomputed on every call
from the keyed receipt over the replaced words (``verified``, ``superseded_changed``, ``superseded_gone``,
``tampered``). Ids and verdicts only, never the words.
"""

from __future__ import annotations

from typing import Any, Final

from undercroft_store.memory.supersession import SUPERSESSION_VERDICTS, supersessions
from undercroft_store.store import VaultStore

__all__ = ["SUPERSESSION_SCHEMA", "supersession_records"]

SUPERSESSION_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "drawer_id": {"type": "string", "description": "the drawer that replaced the other"},
        "superseded_id": {"type": "string", "description": "the drawer it replaced"},
        "at": {"type": "string", "description": "when (ISO instant)"},
        "verdict": {"type": "string", "enum": list(SUPERSESSION_VERDICTS)},
    },
    "required": ["drawer_id", "superseded_id", "at", "verdict"],
}


def supersession_records(store: VaultStore) -> dict[str, Any]:
    """``{supersessions: [{drawer_id, superseded_id, at, verdict}]}`` in the order they were written."""
    return {
        "supersessions": [
            {"drawer_id": s.drawer_id, "superseded_id": s.superseded_id, "at": s.at, "verdict": s.verdict}
            for s in supersessions(store)
        ]
    }
