"""Small shape checks shared by the backends: the answers are untrusted, so each field is checked before use."""

from __future__ import annotations

import base64
import json
from typing import Any

from undercroft_index.errors import BackendFailed, MirrorMismatch
from undercroft_index.remote import MirrorRecord

__all__ = ["check_space", "content_text", "count_of", "field", "space_document", "vector_list"]


def field(document: object, key: str, backend: str, step: str) -> Any:
    """``document[key]`` of a JSON object answer, or `BackendFailed` naming what was missing."""
    if not isinstance(document, dict) or key not in document:
        raise BackendFailed(f"{backend}: {step}: the answer has no {key!r}")
    return document[key]


def count_of(value: object, backend: str) -> int:
    """A record count from an answer: a non-negative integer, or `BackendFailed`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BackendFailed(f"{backend}: count: the answer is not a non-negative integer ({value!r})")
    return value


def check_space(backend: str, collection: str, held: str | None, space: str) -> None:
    """Refuse to write into a collection that holds another embedding space."""
    if held is not None and held != space:
        raise MirrorMismatch(
            f"{backend}: collection {collection} holds embeddings of {held}, not {space}: "
            "drop it (index push --drop) before pushing another space"
        )


def content_text(record: MirrorRecord) -> str:
    """The at-rest content as ASCII (base64), the form every backend can hold in a text field."""
    return base64.b64encode(record.content).decode("ascii")


def vector_list(record: MirrorRecord) -> list[float]:
    """The embedding as a JSON list of floats."""
    return [float(v) for v in record.embedding]


def space_document(space: str) -> str:
    """The collection-level description that records the embedding space (Weaviate, Milvus)."""
    return json.dumps({"undercroft_space": space}, separators=(",", ":"))
