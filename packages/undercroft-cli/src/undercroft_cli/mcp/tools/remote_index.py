"""``undercroft_index_status``: a vault's remote mirror against its local counts — a read, never a push.

Counts, the collection, the destination and the embedding spaces only: no content and no id. Pushing is an
egress and stays an operator command (``undercroft index push``); an agent may only see whether a mirror
exists and is in step. ``remote_records`` is null when no mirror exists, which is not a mirror of zero.
"""

from __future__ import annotations

import json

from undercroft_cli._internal.composition import INDEX_BACKENDS, open_mirror
from undercroft_cli.mcp.arguments import Arguments
from undercroft_cli.mcp.tools.base import ToolOutput, ToolSession, ToolSpec, string
from undercroft_cli.operations import INDEX_STATUS_SCHEMA, index_status_record

__all__ = ["REMOTE_INDEX_TOOLS"]


def _index_status(session: ToolSession, args: Arguments) -> ToolOutput:
    backend = args.choice("backend")
    with open_mirror(str(backend), session.store.name) as mirror:
        record = index_status_record(session.store, mirror)
    return ToolOutput(text=json.dumps(record, indent=2), data=record)


REMOTE_INDEX_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "undercroft_index_status",
        "Whether this vault has a mirror on a remote vector index (Chroma, Milvus, Qdrant, pgvector, Weaviate) "
        "and whether it is in step: remote vs local record counts and embedding spaces. remote_records is "
        "null when no mirror exists. A read: nothing is created or sent.",
        {"backend": string("the remote index", enum=INDEX_BACKENDS)},
        _index_status,
        required=("backend",),
        output=dict(INDEX_STATUS_SCHEMA["properties"]),  # type: ignore[call-overload]
        optional_output=("destination", "remote_space", "space_matches", "in_step"),
    ),
)
