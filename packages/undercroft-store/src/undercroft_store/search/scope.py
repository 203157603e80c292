"""Scope resolution: wing, room, kind, trust floor and the quarantine fence become the searched population
BEFORE any candidate is drawn (the labeling doctrine: a label decides who competes, never how they score).

A declared narrowing (wing, room, kind) is a scope: the pool is sized by the scope's own population. An
exclusion (the quarantine wing, a wing below the trust floor) removes a handful of drawers and keeps the
unscoped geometry. Every filter discloses what it excluded: ``unlabeled_excluded`` (in-scope drawers with
no declared kind, when a kind filter is set) and ``trust_excluded_wings`` (when a floor is in force), each
``None`` when no such filter was set — "you set no floor" differs from "your floor excluded nothing".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from undercroft_config import settings
from undercroft_core.vocabulary import KIND_VOCAB, validate_trust

from undercroft_store.kernel.trust import DEFAULT_TRUST, Floor, floor_in_force, trust_assignments
from undercroft_store.kernel.trust import SeqSource as ScopeSource
from undercroft_store.search.errors import InvalidSearch
from undercroft_store.search.request import SearchRequest

__all__ = ["DEFAULT_TRUST", "Scope", "ScopeSource", "TrustPolicy", "resolve_scope", "trust_policy"]


@dataclass(frozen=True, slots=True)
class TrustPolicy:
    """Operator-assigned wing trust (unassigned means standard) and the vault-wide floor (None: no floor)."""

    assignments: Mapping[str, str]
    vault_floor: str | None = None

    def __post_init__(self) -> None:
        for wing, trust in self.assignments.items():
            validate_trust(trust)
            if not isinstance(wing, str):
                raise InvalidSearch(f"trust assignments are keyed by wing name, got {wing!r}")
        if self.vault_floor is not None:
            validate_trust(self.vault_floor)

    def floor_for(self, request: SearchRequest) -> str | None:
        """The floor in force (`trust.floor_in_force`): ``min_trust`` always; the vault floor unless a wing is named."""
        return floor_in_force(vault_floor=self.vault_floor, min_trust=request.min_trust, wing=request.wing)


def trust_policy(store: object, env: Mapping[str, str] | None = None) -> TrustPolicy:
    """The search hook: verified assignments plus the vault floor ``UNDERCROFT_TRUST_FLOOR`` (garbage refuses).

    Pass it to `search.Searcher(trust=...)`; the floor is applied by `resolve_scope` before candidates are
    drawn (an explicitly named wing bypasses the vault floor, never a request's min_trust).
    """
    floor = settings.trust_floor(env)
    return TrustPolicy(trust_assignments(store), None if floor is None else str(floor))


@dataclass(frozen=True, slots=True)
class Scope:
    """The searched population and how it was drawn."""

    seqs: NDArray[np.int64]
    declared: bool
    geometry: int
    unlabeled_excluded: int | None
    trust_excluded_wings: tuple[str, ...] | None
    label: str

    @property
    def size(self) -> int:
        """Drawers in the searched population."""
        return len(self.seqs)


def _label(request: SearchRequest) -> str:
    labels = (("wing", request.wing), ("room", request.room), ("kind", request.kind))
    parts = [f"{name}={value}" for name, value in labels if value]
    return " ".join(parts) if parts else "unscoped"


def resolve_scope(source: ScopeSource, request: SearchRequest, trust: TrustPolicy | None = None) -> Scope:
    """Resolve ``request``'s labels into the population its candidates are drawn from."""
    trust = trust or TrustPolicy({})
    named = request.wing is not None
    seqs = source.scope_seqs(wing=request.wing, room=request.room, kind=request.kind, include_quarantine=named)
    declared = request.wing is not None or request.room is not None or request.kind is not None
    geometry = len(seqs) if declared else len(source.scope_seqs(include_quarantine=False))
    unlabeled_seqs: NDArray[np.int64] | None = None
    if request.kind is not None:
        unfiltered = source.scope_seqs(wing=request.wing, room=request.room, include_quarantine=named)
        labelled = [
            source.scope_seqs(wing=request.wing, room=request.room, kind=kind, include_quarantine=named)
            for kind in KIND_VOCAB
        ]
        unlabeled_seqs = np.setdiff1d(unfiltered, np.concatenate(labelled), assume_unique=False)
    floor = trust.floor_for(request)
    excluded_wings: tuple[str, ...] | None = None
    if floor is not None:
        rule = Floor(floor, trust.assignments)  # the one floor rule every unscoped read applies (trust.Floor)
        seqs = rule.filter_seqs(source, seqs, request.wing)
        if unlabeled_seqs is not None:
            unlabeled_seqs = rule.filter_seqs(source, unlabeled_seqs, request.wing)
        excluded_wings = rule.excluded
    return Scope(
        seqs=np.asarray(seqs, dtype=np.int64),
        declared=declared,
        geometry=geometry,
        unlabeled_excluded=None if unlabeled_seqs is None else len(unlabeled_seqs),
        trust_excluded_wings=excluded_wings,
        label=_label(request),
    )
