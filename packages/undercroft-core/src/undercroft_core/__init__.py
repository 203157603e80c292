"""Undercroft's domain model, normalisation, chunking, ids, hash embedder and late-interaction math.

The language layer lives in :mod:`undercroft_core.language` and exports its own names.
"""

from undercroft_core.calibration import (
    GATE_MARGIN,
    PROBE_PAIRS,
    measure_admission_gate,
    measure_semantic_floor,
    probe_cosines,
)
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
from undercroft_core.embedder import (
    DegradingEmbedder,
    Embedder,
    EmbedderIdentity,
    calibrated_semantic_score,
    cosine,
)
from undercroft_core.errors import IntegrityError, InvalidInput, UndercroftError
from undercroft_core.external_embedder import EXTERNAL_PREFIX, ExternalEmbedder
from undercroft_core.fde import FdeEncoder, FdeParameters
from undercroft_core.hash_embedder import (
    HASH_DIMENSION,
    HASH_EMBEDDER_NAME,
    HASH_FEATURE_WEIGHTS,
    HASH_SEMANTIC_FLOOR,
    HASH_SEMANTIC_GATE,
    HashEmbedder,
)
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
from undercroft_core.maxsim import maxsim, maxsim_many
from undercroft_core.model_roles import (
    CrossEncoder,
    DegradingCrossEncoder,
    DegradingLateEncoder,
    LateEncoder,
    mean_pool,
)
from undercroft_core.names import InvalidName, validate_name
from undercroft_core.normalisation import NORMALIZE_VERSION, SUPPORTED_NORMALIZE_VERSIONS, is_blank, normalise
from undercroft_core.quantisation import QuantisedVectors, dequantise_int8, pack_int8, quantise_int8, unpack_int8
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
    "EXTERNAL_PREFIX",
    "GATE_MARGIN",
    "HASH_DIMENSION",
    "HASH_EMBEDDER_NAME",
    "HASH_FEATURE_WEIGHTS",
    "HASH_SEMANTIC_FLOOR",
    "HASH_SEMANTIC_GATE",
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
    "PROBE_PAIRS",
    "QUARANTINE_WING",
    "SUPPORTED_NORMALIZE_VERSIONS",
    "TIME_MENTION_AT_REST_FIELDS",
    "TRUST_ORDER",
    "TRUST_VOCAB",
    "Chunk",
    "CrossEncoder",
    "DegradingCrossEncoder",
    "DegradingEmbedder",
    "DegradingLateEncoder",
    "Drawer",
    "Embedder",
    "EmbedderIdentity",
    "Entity",
    "ExternalEmbedder",
    "FdeEncoder",
    "FdeParameters",
    "HashEmbedder",
    "IntegrityError",
    "InvalidInput",
    "InvalidName",
    "LateEncoder",
    "Occurrence",
    "QuantisedVectors",
    "TimeMention",
    "UndercroftError",
    "__version__",
    "append_drawer_id",
    "calibrated_semantic_score",
    "canonical_json",
    "chunk",
    "cosine",
    "dequantise_int8",
    "is_blank",
    "is_drawer_id",
    "maxsim",
    "maxsim_many",
    "mean_pool",
    "measure_admission_gate",
    "measure_semantic_floor",
    "normalise",
    "pack_int8",
    "probe_cosines",
    "quantise_int8",
    "render_transcript",
    "render_turn",
    "source_drawer_id",
    "unpack_int8",
    "validate_drawer_id",
    "validate_kind",
    "validate_name",
    "validate_trust",
]
