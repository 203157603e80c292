"""A knowledge-graph fact: its fields, closed vocabularies, and its at-rest encoding (sealed, blind, tagged).

At rest a fact row keeps, in the clear, only keyed blind values (subject, predicate, object, canonical key),
its validity window, its source drawer id and its authority columns; the subject, predicate and canonical
key are sealed under ``kgterms/{id}`` and the object under ``kg/{id}`` in a sealed vault. ``meta_json``
(canonical JSON, clear) carries every non-content field — extractor, grounding, receipt span and keyed
source fingerprint, authority tier, supersession links — and the tag is
``HMAC(mac, "kg/<id>" ␟ meta_json ␟ lp(terms) ‖ value)``, so a flipped column or a swapped blob fails.

Sealed facts (a sealed vault whose ``meta.kg_windows`` is ``sealed-v2``: every sealed vault
created since, and every older one once `memory.kg.window_migration` ran):

* the validity window is sealed under its own domain ``kgwindow/{id}`` — as `WINDOW_BYTES` fixed binary bytes (a
  presence byte and two signed microsecond counts; below the sealer's compression floor, so an open window, a
  start only and a full window seal to the same size) — and carried base64 in ``meta_json["window"]`` (so the tag
  covers it). The clear columns then hold only what SQL needs: ``valid_from`` is NULL and ``valid_to`` is NULL
  (open) or `CLOSED` (closed), mirrored by ``meta_json["closed"]``; an as-of filter runs on the opened windows;
* the details read only after a fact is opened — `DETAIL_FIELDS`: the extractor's name and confidence, the
  grounding verdict and the source span's offsets — ride inside the sealed ``terms`` blob (``kgterms/{id}``) beside
  the subject and predicate, and are absent from ``meta_json``: opening them costs no AEAD open of its own.

``sealed-v1`` rows (windows sealed, details still in the clear meta) and clear rows (an hmac-only vault, or a
sealed one the migration has not reached) decode as they were written: the meta's own keys say which shape a row
has (`fully_sealed`).
"""

from __future__ import annotations

import binascii
import json
import re
import struct
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from undercroft_vault import BlindIndex, Domain, Sealer, compute_tag

from undercroft_store.kernel._internal.context import VaultContext, format_instant
from undercroft_store.memory.kg.errors import InvalidFact

__all__ = [
    "AUTHORITY_CLASSES",
    "CLOSED",
    "DETAIL_FIELDS",
    "GROUNDINGS",
    "MAX_TERM_CHARS",
    "REVIEW_STATES",
    "WINDOW_BYTES",
    "Fact",
    "FactRow",
    "encode_fact",
    "entity_key",
    "fully_sealed",
    "normalise_instant",
    "pack_window",
    "predicate_key",
    "sealed_window",
    "true_at",
    "unpack_window",
    "window_holds",
]

#: How a fact relates to its cited source: stated in it, background to it, or not evaluated.
GROUNDINGS: Final = ("stated", "background", "unevaluated")
#: The authority tier's classes (declared; never a score).
AUTHORITY_CLASSES: Final = ("ordinary", "reference", "golden")
#: The review states; only ``approved`` facts answer `kg canonical`.
REVIEW_STATES: Final = ("unreviewed", "pending", "approved", "rejected")
#: Longest subject, predicate, object, extractor or canonical key accepted, in characters.
MAX_TERM_CHARS: Final = 4096
#: What a sealed-window row's ``valid_to`` column holds once the window is closed (NULL while it is open).
CLOSED: Final = "closed"
#: The size of a sealed window's plaintext: a presence byte, then valid_from and valid_to as signed 64-bit
#: microseconds since 1970-01-01 UTC (0 when absent). Under the sealer's 32-byte compression floor: never
#: compressed, so every window seals to the same size.
WINDOW_BYTES: Final = 17
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
#: The meta fields a fully sealed fact carries inside its sealed ``terms`` instead (never in the clear meta).
DETAIL_FIELDS: Final = ("confidence", "extractor", "grounding", "span")


@dataclass(frozen=True, slots=True)
class Fact:
    """One subject–predicate–object fact with its validity window and provenance (all times UTC ISO)."""

    id: str
    subject: str
    predicate: str
    object: str
    valid_from: str | None
    valid_to: str | None
    created_at: str
    confidence: float = 1.0
    source_drawer: str | None = None
    source_span: tuple[int, int] | None = None
    source_fingerprint: str | None = None
    extractor: str | None = None
    grounding: str = "unevaluated"
    authority_class: str = "ordinary"
    review_state: str = "unreviewed"
    canonical_key: str | None = None
    supersedes: str | None = None
    superseded_by: str | None = None

    @property
    def active(self) -> bool:
        """True while the fact's window is open (no ``valid_to``)."""
        return self.valid_to is None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (CLI ``--json`` and docs)."""
        document = {name: getattr(self, name) for name in self.__slots__}
        document["source_span"] = list(self.source_span) if self.source_span else None
        document["active"] = self.active
        return document


@dataclass(frozen=True, slots=True)
class FactRow:
    """A fact's at-rest columns, ready to INSERT or compare (`encode_fact`)."""

    id: str
    subject: str
    predicate: str
    object: str
    valid_from: str | None
    valid_to: str | None
    source_drawer: str | None
    authority_class: str
    review_state: str
    canonical: str | None
    meta_json: bytes
    terms: bytes
    value: bytes
    tag: bytes

    def params(self) -> tuple[Any, ...]:
        """Values in the column order of `INSERT_COLUMNS`."""
        return (
            self.id,
            self.subject,
            self.predicate,
            self.object,
            self.valid_from,
            self.valid_to,
            self.source_drawer,
            self.authority_class,
            self.review_state,
            self.canonical,
            self.meta_json,
            self.terms,
            self.value,
            self.tag,
        )


#: The columns `FactRow.params` fills, in order.
INSERT_COLUMNS: Final = (
    "id, subject, predicate, object, valid_from, valid_to, source_drawer, authority_class, review_state, "
    "canonical, meta_json, terms, value, tag"
)


def check_term(value: object, what: str) -> str:
    """A non-empty, bounded string with no control character (refused with a precise message)."""
    if not isinstance(value, str):
        raise InvalidFact(f"{what} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InvalidFact(f"{what} must not be empty")
    if len(value) > MAX_TERM_CHARS:
        raise InvalidFact(f"{what} is {len(value)} characters; at most {MAX_TERM_CHARS} are allowed")
    bad = next((index for index, char in enumerate(value) if ord(char) < 0x20 or ord(char) == 0x7F), None)
    if bad is not None:  # the position and code point only: a refusal never echoes the sealed words back
        raise InvalidFact(f"{what} contains a control character (U+{ord(value[bad]):04X} at position {bad})")
    return value.strip()


def check_choice(value: object, allowed: tuple[str, ...], what: str) -> str:
    """A value of a closed vocabulary (no case folding)."""
    if not isinstance(value, str) or value not in allowed:
        raise InvalidFact(f"unknown {what} {value!r}: expected one of {', '.join(allowed)}")
    return value


# A year or a year and month: the coarse precisions ``fromisoformat`` refuses.
_COARSE_DATE: Final = re.compile(r"(\d{4})(?:-(\d{2}))?")


def normalise_instant(value: object, what: str) -> str:
    """An ISO date or timestamp as ``YYYY-MM-DDTHH:MM:SS.ffffffZ``.

    Every precision the documents write is accepted: ``YYYY`` and ``YYYY-MM`` (their first instant, so
    "alice works_at acme since 2024-01" opens on 2024-01-01), ``YYYY-MM-DD`` (midnight UTC) and a timestamp.
    """
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        coarse = _COARSE_DATE.fullmatch(value.strip())
        try:
            if coarse is not None:
                moment = datetime(int(coarse.group(1)), int(coarse.group(2) or 1), 1, tzinfo=UTC)
            else:
                moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidFact(
                f"{what} {value!r} is not an ISO date (YYYY, YYYY-MM or YYYY-MM-DD) or timestamp"
            ) from None
    else:
        raise InvalidFact(f"{what} must be an ISO date string, got {type(value).__name__}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return format_instant(moment)


def entity_key(blind: BlindIndex, name: str) -> str:
    """The keyed blind value of an entity name (case and spacing folded): the SQL equality key."""
    return blind.blind("entity", " ".join(name.split()).casefold())


def predicate_key(blind: BlindIndex, predicate: str) -> str:
    """The keyed blind value of a predicate (case folded, spaces as underscores)."""
    return blind.blind("predicate", "_".join(predicate.split()).casefold())


def canonical_blind(blind: BlindIndex, key: str) -> str:
    """The keyed blind value of a canonical key (exact, no folding)."""
    return blind.blind("canonical", key)


def _details(fact: Fact) -> dict[str, Any]:
    """The `DETAIL_FIELDS` of `fact`, as stored (clear in the meta, or sealed in the terms)."""
    return {
        "confidence": fact.confidence,
        "extractor": fact.extractor,
        "grounding": fact.grounding,
        "span": list(fact.source_span) if fact.source_span else None,
    }


def _meta(fact: Fact, s: str, p: str, o: str, canonical: str | None, window: str | None) -> bytes:
    document: dict[str, Any] = {
        "authority_class": fact.authority_class,
        "canonical": canonical,
        "created_at": fact.created_at,
        "o": o,
        "p": p,
        "review_state": fact.review_state,
        "s": s,
        "source_drawer": fact.source_drawer,
        "source_fp": fact.source_fingerprint,
        "superseded_by": fact.superseded_by,
        "supersedes": fact.supersedes,
    }
    if window is None:  # the clear shape: the window and the details in the (tagged) meta
        document |= {"valid_from": fact.valid_from, "valid_to": fact.valid_to, **_details(fact)}
    else:  # the sealed shape: the window sealed here, the details sealed in the terms
        document |= {"closed": fact.valid_to is not None, "window": window}
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def fully_sealed(meta: bytes) -> bool:
    """True when a fact row's meta has the ``sealed-v2`` shape: a sealed window and no detail field in the clear
    (what the window migration leaves; it rewrites every other row)."""
    document = json.loads(meta)
    return "window" in document and not any(name in document for name in DETAIL_FIELDS)


def at_rest_payload(terms: bytes, value: bytes) -> bytes:
    """The tagged body: ``lp(terms) ‖ value``."""
    return len(terms).to_bytes(4, "big") + terms + value


def fact_tag(context: VaultContext, fact_id: str, meta: bytes, terms: bytes, value: bytes) -> bytes:
    """The fact row's HMAC tag (also the tag of its ``kg/<id>`` audit record)."""
    return compute_tag(context.keys, f"kg/{fact_id}", meta, at_rest_payload(terms, value))


def _micros(instant: str | None) -> int:
    if instant is None:
        return 0
    return (datetime.fromisoformat(instant.replace("Z", "+00:00")) - _EPOCH) // timedelta(microseconds=1)


def _instant(present: bool, micros: int) -> str | None:
    return format_instant(_EPOCH + timedelta(microseconds=micros)) if present else None


def pack_window(valid_from: str | None, valid_to: str | None) -> bytes:
    """A window as its fixed `WINDOW_BYTES` plaintext (instants as `normalise_instant` writes them)."""
    presence = (valid_from is not None) | (valid_to is not None) << 1
    return struct.pack(">Bqq", presence, _micros(valid_from), _micros(valid_to))


def unpack_window(plain: bytes) -> tuple[str | None, str | None]:
    """The (valid_from, valid_to) of a window plaintext; `ValueError` for any other shape."""
    if len(plain) != WINDOW_BYTES:
        raise ValueError(f"a window is {WINDOW_BYTES} bytes, got {len(plain)}")
    presence, start, end = struct.unpack(">Bqq", plain)
    if presence > 3:
        raise ValueError("a window's presence byte is not 0-3")
    return _instant(bool(presence & 1), start), _instant(bool(presence & 2), end)


def _seal_window(context: VaultContext, fact: Fact) -> str:
    sealed = context.sealer.seal(Domain.kg_window(fact.id), pack_window(fact.valid_from, fact.valid_to))
    return binascii.b2a_base64(sealed, newline=False).decode("ascii")


def _open_window(context: VaultContext, fact_id: str, document: dict[str, Any]) -> tuple[str | None, str | None]:
    """A sealed window opened (`IntegrityFailure` when it does not; `ValueError` when it disagrees with the
    row's covered ``closed`` flag, which the clear ``valid_to`` column mirrors)."""
    blob = binascii.a2b_base64(str(document["window"]), strict_mode=True)
    start, end = unpack_window(context.sealer.open(Domain.kg_window(fact_id), blob))
    if (end is not None) is not bool(document["closed"]):
        raise ValueError("the sealed window disagrees with the row's closed flag")
    return start, end


def encode_fact(context: VaultContext, blind: BlindIndex, fact: Fact) -> FactRow:
    """Seal (sealed vaults), blind and tag `fact` into its row."""
    s, o = entity_key(blind, fact.subject), entity_key(blind, fact.object)
    p = predicate_key(blind, fact.predicate)
    canonical = canonical_blind(blind, fact.canonical_key) if fact.canonical_key is not None else None
    sealed_window = context.sealed and context.kg_windows_sealed
    meta = _meta(fact, s, p, o, canonical, _seal_window(context, fact) if sealed_window else None)
    words: dict[str, Any] = {"canonical_key": fact.canonical_key, "predicate": fact.predicate, "subject": fact.subject}
    if sealed_window:
        words |= _details(fact)
    terms_plain = json.dumps(
        words,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode("utf-8")
    value_plain = fact.object.encode("utf-8")
    if context.sealed:
        terms = context.sealer.seal(Domain.kg_terms(fact.id), terms_plain)
        value = context.sealer.seal(Domain.kg_object(fact.id), value_plain)
    else:
        terms, value = terms_plain, value_plain
    tag = fact_tag(context, fact.id, meta, terms, value)
    return FactRow(
        fact.id,
        s,
        p,
        o,
        None if sealed_window else fact.valid_from,
        (CLOSED if fact.valid_to is not None else None) if sealed_window else fact.valid_to,
        fact.source_drawer,
        fact.authority_class,
        fact.review_state,
        canonical,
        meta,
        terms,
        value,
        tag,
    )


def decode_fact(context: VaultContext, fact_id: str, meta: bytes, terms: bytes, value: bytes) -> Fact:
    """Rebuild a fact from verified columns (the caller has checked the tag)."""
    if context.sealed:
        terms = context.sealer.open(Domain.kg_terms(fact_id), terms)
        value = context.sealer.open(Domain.kg_object(fact_id), value)
    words = json.loads(terms)
    document = json.loads(meta)
    # Where the details live: the clear meta (clear and sealed-v1 rows), else the sealed terms (sealed-v2). Never
    # both: a sealed-v2 row's meta has no detail key, so a forged one cannot be added without breaking the tag.
    details = document if "grounding" in document else words
    span = details["span"]
    if "window" in document:
        valid_from, valid_to = _open_window(context, fact_id, document)
    else:  # a clear window: an hmac-only vault, or a row the window migration has not reached yet
        valid_from, valid_to = document["valid_from"], document["valid_to"]
    return Fact(
        id=fact_id,
        subject=words["subject"],
        predicate=words["predicate"],
        object=value.decode("utf-8"),
        valid_from=valid_from,
        valid_to=valid_to,
        created_at=document["created_at"],
        confidence=float(details["confidence"]),
        source_drawer=document["source_drawer"],
        source_span=(int(span[0]), int(span[1])) if span else None,
        source_fingerprint=document["source_fp"],
        extractor=details["extractor"],
        grounding=details["grounding"],
        authority_class=document["authority_class"],
        review_state=document["review_state"],
        canonical_key=words["canonical_key"],
        supersedes=document["supersedes"],
        superseded_by=document["superseded_by"],
    )


def mirrors_of(meta: bytes) -> tuple[object, ...]:
    """The clear mirror columns a fact's meta implies, in `MIRROR_COLUMNS` order (verify compares them)."""
    document = json.loads(meta)
    sealed_window = "window" in document
    return (
        document["s"],
        document["p"],
        document["o"],
        None if sealed_window else document["valid_from"],
        (CLOSED if document["closed"] else None) if sealed_window else document["valid_to"],
        document["source_drawer"],
        document["authority_class"],
        document["review_state"],
        document["canonical"],
    )


#: The clear columns mirrored from ``meta_json``.
MIRROR_COLUMNS: Final = (
    "subject, predicate, object, valid_from, valid_to, source_drawer, authority_class, review_state, canonical"
)


def true_at(fact: Fact, moment: str) -> bool:
    """The half-open window test on an opened fact: ``valid_from <= moment < valid_to`` (an absent end is open)."""
    return window_holds((fact.valid_from, fact.valid_to), moment)


def sealed_window(context: VaultContext, fact_id: str, meta: bytes) -> tuple[str | None, str | None] | None:
    """The opened window of a tag-checked row whose window is sealed; None for a clear-window row."""
    document = json.loads(meta)
    return _open_window(context, fact_id, document) if "window" in document else None


def window_holds(window: tuple[str | None, str | None], moment: str) -> bool:
    """The half-open window test on an opened (valid_from, valid_to) pair."""
    start, end = window
    return (start is None or start <= moment) and (end is None or end > moment)


def reseal_window_meta(old: Sealer, new: Sealer, fact_id: str, meta: bytes) -> bytes:
    """Rotation: a fact's meta with its sealed window opened under `old` and sealed again under `new` (a clear
    window's meta is returned unchanged)."""
    document = json.loads(meta)
    if "window" not in document:
        return meta
    domain = Domain.kg_window(fact_id)
    blob = new.seal(domain, old.open(domain, binascii.a2b_base64(str(document["window"]), strict_mode=True)))
    document["window"] = binascii.b2a_base64(blob, newline=False).decode("ascii")
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def with_changes(fact: Fact, **changes: Any) -> Fact:
    """A copy of `fact` with fields replaced (close a window, set the tier, link a supersession)."""
    return replace(fact, **changes)
