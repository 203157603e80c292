"""AAD domains: what a sealed blob is, bound with the vault id into its AEAD associated data.

Each constructor names one artifact kind from the key hierarchy. The AAD is
``b"undercroft.aad.v1" ‖ lp(vault_id) ‖ kind(1 byte) ‖ lp(label)``: the kind byte keeps the labels
apart even when a record id itself contains ``/emb`` or ``/tok``, so a blob moved across vaults, records
or artifact kinds fails to open instead of decrypting as something else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

from undercroft_vault._internal.encoding import aad_prefix, lp
from undercroft_vault.errors import InvalidVaultInput
from undercroft_vault.names import validate_vault_id

__all__ = ["MAX_COMPONENT_BYTES", "Domain", "DomainKind"]

#: Longest record id, path or blind value accepted inside a domain label, in UTF-8 bytes.
MAX_COMPONENT_BYTES = 1024
# C0 controls and DEL: one compiled scan (runs twice per drawer written or read, so not a Python loop).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class DomainKind(IntEnum):
    """The artifact kinds; the value is the byte written into the AAD (never renumber one)."""

    CONTENT = 1
    EMBEDDING = 2
    TOKENS = 3
    FDE_TOKENS = 4
    PQ_ARTIFACT = 5
    KG_OBJECT = 6
    KG_TERMS = 7
    KG_NAME = 8
    VAULT_SECRET = 9
    DRAWER_META = 10
    QUEUE_META = 11
    LABEL_NAMES = 12
    SURFACE_META = 13
    SEARCH_SNAPSHOT = 14
    FDE_ARTIFACT = 20  # the gap's top: another branch's kinds count up from 15
    KG_WINDOW = 21  # a gap left on purpose: kinds another branch adds meanwhile take 15..20, never this byte


@dataclass(frozen=True)
class Domain:
    """One AAD domain: an artifact kind and its label. Build with the constructors, not directly."""

    kind: DomainKind
    label: str

    @classmethod
    def content(cls, record_id: str) -> Domain:
        """``{id}`` — a drawer's content."""
        return cls(DomainKind.CONTENT, _component(record_id, "record id"))

    @classmethod
    def embedding(cls, record_id: str) -> Domain:
        """``{id}/emb`` — a drawer's embedding vector."""
        return cls(DomainKind.EMBEDDING, _component(record_id, "record id") + "/emb")

    @classmethod
    def tokens(cls, record_id: str) -> Domain:
        """``{id}/tok`` — a drawer's ColBERT token matrix."""
        return cls(DomainKind.TOKENS, _component(record_id, "record id") + "/tok")

    @classmethod
    def fde_tokens(cls, record_id: str) -> Domain:
        """``fde/{id}/tok`` — a drawer's FDE row."""
        return cls(DomainKind.FDE_TOKENS, "fde/" + _component(record_id, "record id") + "/tok")

    @classmethod
    def pq_artifact(cls, path: str) -> Domain:
        """``pqrow/{path}/pq`` — a PQ code row, page or codebook; `path` names it within the index."""
        return cls(DomainKind.PQ_ARTIFACT, "pqrow/" + _component(path, "PQ artifact path") + "/pq")

    @classmethod
    def fde_artifact(cls, path: str) -> Domain:
        """``fdeparam/{path}/fde`` — an FDE tier artifact (the encoder's persisted parameters of one generation);
        `path` names it within the tier. The rows themselves are `fde_tokens`."""
        return cls(DomainKind.FDE_ARTIFACT, "fdeparam/" + _component(path, "FDE artifact path") + "/fde")

    @classmethod
    def kg_object(cls, fact_id: str) -> Domain:
        """``kg/{id}`` — a knowledge-graph fact's object."""
        return cls(DomainKind.KG_OBJECT, "kg/" + _component(fact_id, "fact id"))

    @classmethod
    def kg_terms(cls, fact_id: str) -> Domain:
        """``kgterms/{id}`` — a fact's subject and predicate."""
        return cls(DomainKind.KG_TERMS, "kgterms/" + _component(fact_id, "fact id"))

    @classmethod
    def kg_name(cls, blind: str) -> Domain:
        """``kgname/{blind}`` — an entity name, addressed by its blind index value."""
        return cls(DomainKind.KG_NAME, "kgname/" + _component(blind, "blind value"))

    @classmethod
    def vault_secret(cls, name: str) -> Domain:
        """``secret/{name}`` — a long-lived secret stored sealed in the vault (e.g. the blind-index key)."""
        return cls(DomainKind.VAULT_SECRET, "secret/" + _component(name, "secret name"))

    @classmethod
    def drawer_meta(cls, record_id: str) -> Domain:
        """``{id}/meta`` — a sealed vault's drawer metadata (names, dates, claims: everything but the labels'
        blind values)."""
        return cls(DomainKind.DRAWER_META, _component(record_id, "record id") + "/meta")

    @classmethod
    def queue_meta(cls, slot_id: str) -> Domain:
        """``queue/{id}`` — a sealed vault's admission-queue row detail (intended destination, signals)."""
        return cls(DomainKind.QUEUE_META, "queue/" + _component(slot_id, "queue slot id"))

    @classmethod
    def label_names(cls) -> Domain:
        """``labels`` — a sealed vault's registry of blind label values → the names they stand for."""
        return cls(DomainKind.LABEL_NAMES, "labels")

    @classmethod
    def surface_meta(cls, record_id: str) -> Domain:
        """``surface/{id}/meta`` — the sealed metadata of a memory-surface row (a tunnel's ends and time)."""
        return cls(DomainKind.SURFACE_META, "surface/" + _component(record_id, "record id") + "/meta")

    @classmethod
    def search_snapshot(cls, part: str) -> Domain:
        """``searchsnap/{part}`` — one part of the sealed snapshot of a vault's derived search state (the
        embedding matrix and the drawers' term bags: a fast open's cache, rebuilt from the drawers at will)."""
        return cls(DomainKind.SEARCH_SNAPSHOT, "searchsnap/" + _component(part, "snapshot part"))

    @classmethod
    def kg_window(cls, fact_id: str) -> Domain:
        """``kgwindow/{id}`` — a fact's validity window (valid_from, valid_to), sealed on a sealed vault."""
        return cls(DomainKind.KG_WINDOW, "kgwindow/" + _component(fact_id, "fact id"))

    def aad(self, vault_id: str) -> bytes:
        """The associated data binding this domain to `vault_id`."""
        validate_vault_id(vault_id)
        return aad_prefix(vault_id) + bytes((int(self.kind),)) + lp(self.label.encode("utf-8"))


def _component(value: str, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidVaultInput(f"{what} must be a string, got {type(value).__name__}")
    if not value:
        raise InvalidVaultInput(f"{what} must not be empty")
    encoded_length = len(value.encode("utf-8"))
    if encoded_length > MAX_COMPONENT_BYTES:
        raise InvalidVaultInput(f"{what} is {encoded_length} bytes; at most {MAX_COMPONENT_BYTES} are allowed")
    if _CONTROL.search(value) is not None:
        raise InvalidVaultInput(f"{what} {value!r} contains a control character")
    return value
