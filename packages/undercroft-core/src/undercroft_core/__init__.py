"""Undercroft's domain model, normalisation, chunking, ids, hash embedder and late-interaction math.

The language layer lives in :mod:`undercroft_core.language` and exports its own names.
"""

from undercroft_core.chunking import CHUNK_CHARS, MIN_CHUNK_CHARS, Chunk, chunk
from undercroft_core.conversation import render_transcript, render_turn
from undercroft_core.drawer import (
    IN_MEMORY_FIELDS,
    META_AT_REST_FIELDS,
    META_VERSION,
    OCCURRENCE_AT_REST_FIELDS,
    TIME_MENTION_AT_REST_FIELDS,
    Drawer,
    Entity,
    Occurrence,
    TimeMention,
    canonical_json,
)
from undercroft_core.errors import IntegrityError, InvalidInput, UndercroftError
from undercroft_core.ids import (
    DRAWER_ID_PATTERN,
    ID_RECIPE_APPEND,
    ID_RECIPE_SOURCE,
    ID_RECIPES,
    append_drawer_id,
    is_drawer_id,
    source_drawer_id,
    validate_drawer_id,
)
from undercroft_core.names import InvalidName, validate_name
from undercroft_core.normalisation import NORMALIZE_VERSION, SUPPORTED_NORMALIZE_VERSIONS, normalise
from undercroft_core.vocabulary import (
    KIND_VOCAB,
    QUARANTINE_WING,
    TRUST_ORDER,
    TRUST_VOCAB,
    validate_kind,
    validate_trust,
)

__version__ = "0.1.0"

__all__ = [
    "CHUNK_CHARS",
    "DRAWER_ID_PATTERN",
    "ID_RECIPES",
    "ID_RECIPE_APPEND",
    "ID_RECIPE_SOURCE",
    "IN_MEMORY_FIELDS",
    "KIND_VOCAB",
    "META_AT_REST_FIELDS",
    "META_VERSION",
    "MIN_CHUNK_CHARS",
    "NORMALIZE_VERSION",
    "OCCURRENCE_AT_REST_FIELDS",
    "QUARANTINE_WING",
    "SUPPORTED_NORMALIZE_VERSIONS",
    "TIME_MENTION_AT_REST_FIELDS",
    "TRUST_ORDER",
    "TRUST_VOCAB",
    "Chunk",
    "Drawer",
    "Entity",
    "IntegrityError",
    "InvalidInput",
    "InvalidName",
    "Occurrence",
    "TimeMention",
    "UndercroftError",
    "__version__",
    "append_drawer_id",
    "canonical_json",
    "chunk",
    "is_drawer_id",
    "normalise",
    "render_transcript",
    "render_turn",
    "source_drawer_id",
    "validate_drawer_id",
    "validate_kind",
    "validate_name",
    "validate_trust",
]
