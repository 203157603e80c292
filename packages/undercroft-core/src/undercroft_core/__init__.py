"""Undercroft's domain model, normalisation, chunking, ids, hash embedder and late-interaction math.

The language layer lives in :mod:`undercroft_core.language` and exports its own names.

The names load on first use (PEP 562): ``import undercroft_core`` costs nothing until a name is read, so a
program that needs only ``undercroft_core.errors`` (the CLI's ``--version``) never pays for numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from undercroft_core.lazy_exports import lazy_exports

if TYPE_CHECKING:
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
        DrawerIds,
        append_drawer_id,
        is_drawer_id,
        source_drawer_id,
        validate_drawer_id,
    )
    from undercroft_core.late_interaction import maxsim, maxsim_many
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
    "DrawerIds",
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


#: Each exported name -> the submodule that defines it (a test checks it against ``__all__``).
_EXPORTS: dict[str, str] = {
    "CrossEncoder": "undercroft_core.model_roles",
    "DegradingCrossEncoder": "undercroft_core.model_roles",
    "DegradingLateEncoder": "undercroft_core.model_roles",
    "LateEncoder": "undercroft_core.model_roles",
    "mean_pool": "undercroft_core.model_roles",
    "CHUNK_CHARS": "undercroft_core.chunking",
    "Chunk": "undercroft_core.chunking",
    "DRAWER_ID_PATTERN": "undercroft_core.ids",
    "DegradingEmbedder": "undercroft_core.embedder",
    "Drawer": "undercroft_core.drawer",
    "EXTERNAL_PREFIX": "undercroft_core.external_embedder",
    "Embedder": "undercroft_core.embedder",
    "EmbedderIdentity": "undercroft_core.embedder",
    "Entity": "undercroft_core.drawer",
    "ExternalEmbedder": "undercroft_core.external_embedder",
    "FdeEncoder": "undercroft_core.fde",
    "FdeParameters": "undercroft_core.fde",
    "GATE_MARGIN": "undercroft_core.calibration",
    "HASH_DIMENSION": "undercroft_core.hash_embedder",
    "HASH_EMBEDDER_NAME": "undercroft_core.hash_embedder",
    "HASH_FEATURE_WEIGHTS": "undercroft_core.hash_embedder",
    "HASH_SEMANTIC_FLOOR": "undercroft_core.hash_embedder",
    "HASH_SEMANTIC_GATE": "undercroft_core.hash_embedder",
    "HashEmbedder": "undercroft_core.hash_embedder",
    "DrawerIds": "undercroft_core.ids",
    "ID_RECIPES": "undercroft_core.ids",
    "ID_RECIPE_APPEND": "undercroft_core.ids",
    "ID_RECIPE_SOURCE": "undercroft_core.ids",
    "IN_MEMORY_FIELDS": "undercroft_core.drawer",
    "IntegrityError": "undercroft_core.errors",
    "InvalidInput": "undercroft_core.errors",
    "InvalidName": "undercroft_core.names",
    "KIND_VOCAB": "undercroft_core.vocabulary",
    "META_AT_REST_FIELDS": "undercroft_core.drawer",
    "META_VERSION": "undercroft_core.drawer",
    "MIN_CHUNK_CHARS": "undercroft_core.chunking",
    "NORMALIZE_VERSION": "undercroft_core.normalisation",
    "OCCURRENCE_AT_REST_FIELDS": "undercroft_core.drawer",
    "Occurrence": "undercroft_core.drawer",
    "PROBE_PAIRS": "undercroft_core.calibration",
    "QUARANTINE_WING": "undercroft_core.vocabulary",
    "QuantisedVectors": "undercroft_core.quantisation",
    "SUPPORTED_NORMALIZE_VERSIONS": "undercroft_core.normalisation",
    "TIME_MENTION_AT_REST_FIELDS": "undercroft_core.drawer",
    "TRUST_ORDER": "undercroft_core.vocabulary",
    "TRUST_VOCAB": "undercroft_core.vocabulary",
    "TimeMention": "undercroft_core.drawer",
    "UndercroftError": "undercroft_core.errors",
    "append_drawer_id": "undercroft_core.ids",
    "calibrated_semantic_score": "undercroft_core.embedder",
    "canonical_json": "undercroft_core.drawer",
    "chunk": "undercroft_core.chunking",
    "cosine": "undercroft_core.embedder",
    "dequantise_int8": "undercroft_core.quantisation",
    "is_blank": "undercroft_core.normalisation",
    "is_drawer_id": "undercroft_core.ids",
    "maxsim": "undercroft_core.late_interaction",
    "maxsim_many": "undercroft_core.late_interaction",
    "measure_admission_gate": "undercroft_core.calibration",
    "measure_semantic_floor": "undercroft_core.calibration",
    "normalise": "undercroft_core.normalisation",
    "pack_int8": "undercroft_core.quantisation",
    "probe_cosines": "undercroft_core.calibration",
    "quantise_int8": "undercroft_core.quantisation",
    "render_transcript": "undercroft_core.conversation",
    "render_turn": "undercroft_core.conversation",
    "source_drawer_id": "undercroft_core.ids",
    "unpack_int8": "undercroft_core.quantisation",
    "validate_drawer_id": "undercroft_core.ids",
    "validate_kind": "undercroft_core.vocabulary",
    "validate_name": "undercroft_core.names",
    "validate_trust": "undercroft_core.vocabulary",
}


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS, __all__)
