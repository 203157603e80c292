"""Wing trust: operator-assigned classes (quarantined | standard | trusted), HMAC-tagged and chain-audited.

`set_trust(store, wing, trust)` upserts one ``wing_trust`` row and appends a ``trust/<wing>`` audit record
carrying the row's tag, in one transaction. Every reader (`trust_assignments`, `list_trust`, the search
floor through `trust_policy`) verifies each row's tag AND that it is its wing's newest assignment on a
chain the label guard has replayed, in both directions (a ``trust/`` label whose row is gone refuses too):
a flipped class, an older row written back, a deleted row or a relabelled audit row is `TrustTampered` /
`LabelGuardRefused`, an integrity verdict naming ``undercroft verify``. A wing never assigned is standard.

The floor rule lives here, once (`floor_in_force`, `Floor`): a request's ``min_trust`` always applies; the
vault floor (``UNDERCROFT_TRUST_FLOOR``; garbage refuses) applies to every UNSCOPED content read — search,
listings, wake-up, closets, the duplicate oracle, hallways — and a read that names a wing bypasses it.
`read_floor(store, wing=…)` resolves it for a store read; search's scope resolver applies the same `Floor` to
its candidate set. Assignments are operator surface only — never MCP.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Protocol

import numpy as np
from numpy.typing import NDArray
from undercroft_config import settings
from undercroft_core.drawer import canonical_json
from undercroft_core.errors import InvalidInput
from undercroft_core.names import validate_name
from undercroft_core.vocabulary import QUARANTINE_WING, TRUST_ORDER, TRUST_VOCAB, names_quarantine_wing, validate_trust
from undercroft_vault import AuditRow, VaultKeys, compute_tag, constant_time_equal

from undercroft_store.errors import InvalidDrawer, StoreIntegrityError
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.governance import audited, context_of
from undercroft_store.kernel._internal.governance_tables import TRUST_TABLE
from undercroft_store.kernel._internal.meta_at_rest import (
    label_name,
    register_names,
    scope_label_namer,
    stored_label,
)
from undercroft_store.kernel.label_guard import label_guard
from undercroft_store.kernel.seams import Rekeying

__all__ = [
    "DEFAULT_TRUST",
    "TRUST_PREFIX",
    "TRUST_TABLE",
    "Floor",
    "SeqSource",
    "TrustAssignment",
    "TrustTampered",
    "check_trust_rows",
    "floor_in_force",
    "list_trust",
    "read_floor",
    "reseal_trust_rows",
    "set_trust",
    "trust_assignments",
]

#: The audit label prefix of a trust assignment: ``trust/<wing>``.
TRUST_PREFIX = "trust/"
#: The class of a wing the operator assigned none.
DEFAULT_TRUST: Final = "standard"


class SeqSource(Protocol):
    """What a floor reads to filter a candidate set: seq numbers by clear wing label, ascending."""

    def scope_seqs(
        self,
        *,
        wing: str | None = None,
        room: str | None = None,
        kind: str | None = None,
        include_quarantine: bool = False,
    ) -> NDArray[np.int64]:
        """The ``seq`` of every drawer in a scope, ascending."""
        ...


def floor_in_force(*, vault_floor: str | None, min_trust: str | None, wing: str | None) -> str | None:
    """The floor a read is under: its own ``min_trust`` always; the vault floor unless the read names a wing."""
    if min_trust is not None:
        return min_trust
    return None if wing is not None else vault_floor


@dataclass(frozen=True, slots=True)
class Floor:
    """A trust class in force over the verified assignments: which wings it admits (unassigned: standard).

    A floor at or below the default excludes the wings assigned below it; a floor above the default admits
    only the wings assigned at or above it. The quarantine wing takes no class (its fence is separate).
    Filters compare the clear ``wing`` column; what they let through is served only if that column equals
    the row's HMAC-covered wing (`_internal.reading.check_served`), so the decision stands on covered meta.
    """

    trust: str
    assignments: Mapping[str, str]

    @property
    def rank(self) -> int:
        """The floor's rank in `TRUST_ORDER`."""
        return TRUST_ORDER[self.trust]

    @property
    def excluded(self) -> tuple[str, ...]:
        """The assigned wings below the floor, sorted (the disclosure a search reports)."""
        return tuple(
            sorted(w for w, t in self.assignments.items() if TRUST_ORDER[t] < self.rank and w != QUARANTINE_WING)
        )

    @property
    def admitted(self) -> tuple[str, ...] | None:
        """Above the default: the only wings admitted, sorted; None when every unassigned wing is admitted."""
        if TRUST_ORDER[DEFAULT_TRUST] >= self.rank:
            return None
        return tuple(sorted(w for w, t in self.assignments.items() if TRUST_ORDER[t] >= self.rank))

    def admits(self, wing: str) -> bool:
        """Whether a drawer of `wing` may answer under this floor."""
        return TRUST_ORDER[self.assignments.get(wing, DEFAULT_TRUST)] >= self.rank

    def clause(self) -> tuple[str, tuple[str, ...]]:
        """The floor as one SQL condition on the ``wing`` column, with its bound values."""
        admitted = self.admitted
        if admitted is not None:
            return (f"wing IN ({','.join('?' * len(admitted))})", admitted) if admitted else ("0", ())
        excluded = self.excluded
        return (f"wing NOT IN ({','.join('?' * len(excluded))})", excluded) if excluded else ("1", ())

    def filter_seqs(self, source: SeqSource, seqs: NDArray[np.int64], wing: str | None) -> NDArray[np.int64]:
        """`seqs` (ascending, unique) without the drawers this floor does not admit (`wing`: the one named)."""
        admitted = self.admitted
        if admitted is None:
            for excluded in self.excluded:
                if wing is None or wing == excluded:
                    found = source.scope_seqs(wing=excluded, include_quarantine=True)
                    seqs = np.setdiff1d(seqs, found, assume_unique=True)
            return seqs
        keep = [source.scope_seqs(wing=w, include_quarantine=True) for w in admitted]
        allowed = np.unique(np.concatenate(keep)) if keep else np.zeros(0, dtype=np.int64)
        return np.intersect1d(seqs, allowed, assume_unique=True)


class TrustTampered(StoreIntegrityError):
    """A wing-trust row fails its tag, is not its newest assignment, or its row is gone (exit 2)."""


@dataclass(frozen=True, slots=True)
class TrustAssignment:
    """One verified assignment: the wing, its class and when it was assigned."""

    wing: str
    trust: str
    at: str

    def to_dict(self) -> dict[str, str]:
        """The JSON form."""
        return {"wing": self.wing, "trust": self.trust, "at": self.at}


def _tag(keys: VaultKeys, wing: str, trust: str, at: str) -> bytes:
    return compute_tag(keys, TRUST_PREFIX + wing, canonical_json({"at": at, "trust": trust}), b"")


def _check_wing(wing: object) -> str:
    if not isinstance(wing, str):
        raise InvalidDrawer(f"a wing name is a string, got {type(wing).__name__}")
    try:
        validate_name(wing, what="wing")
    except InvalidInput as error:
        raise InvalidDrawer(str(error)) from None
    if names_quarantine_wing(wing):  # any spelling: a look-alike of the queue's name is the queue's name
        raise InvalidDrawer(f"the {QUARANTINE_WING!r} wing is the review queue: it takes no trust class")
    return wing


def set_trust(store: object, wing: str, trust: str) -> TrustAssignment:
    """Assign `trust` to `wing` (row + ``trust/<wing>`` audit record in one transaction)."""
    context = context_of(store)
    _check_wing(wing)
    try:
        validate_trust(trust)
    except InvalidInput as error:
        raise InvalidDrawer(str(error)) from None
    label_guard(context)  # never write beside a chain that does not replay
    at = context.now()
    with audited(context) as records:
        key = _wing_key(context, wing)
        register_names(context, [("wing", wing)])
        tag = _tag(context.keys, key, trust, at)
        context.connection.execute(
            f"INSERT INTO {TRUST_TABLE} (wing, trust, at, tag) VALUES (?, ?, ?, ?) "  # noqa: S608 - constant
            "ON CONFLICT (wing) DO UPDATE SET trust = excluded.trust, at = excluded.at, tag = excluded.tag",
            (key, trust, at, tag),
        )
        records.append(AuditRow(TRUST_PREFIX + key, tag, at))
    return TrustAssignment(wing, trust, at)


def _wing_key(context: VaultContext, wing: str) -> str:
    """The row key (and label tail) of `wing`'s assignment: the name on hmac-only; on a sealed vault its blind
    value, unless a row written in the clear before the migration holds the wing (a folded label stays)."""
    if not context.metadata_sealed:
        return wing
    legacy = context.connection.execute(f"SELECT 1 FROM {TRUST_TABLE} WHERE wing = ?", (wing,)).fetchone()  # noqa: S608
    return wing if legacy is not None else str(stored_label(context, "wing", wing))


def _findings(context: VaultContext, newest: Mapping[str, AuditRow]) -> tuple[list[TrustAssignment], list[str]]:
    """Verified rows and the failures (each a sentence naming the wing), against the newest records."""
    rows = context.connection.execute(f"SELECT wing, trust, at, tag FROM {TRUST_TABLE} ORDER BY wing").fetchall()  # noqa: S608
    good: list[TrustAssignment] = []
    failures: list[str] = []
    present: set[str] = set()
    named = scope_label_namer(context)
    for key, trust, at, tag in rows:
        present.add(key)
        tag = bytes(tag)
        if trust not in TRUST_VOCAB or not constant_time_equal(_tag(context.keys, key, trust, at), tag):
            failures.append(f"trust row for wing {named(TRUST_PREFIX + key)[len(TRUST_PREFIX) :]!r} fails its HMAC tag")
            continue
        wing = label_name(context, "wing", key, legacy=True)  # a sealed vault's key is the wing's blind value
        record = newest.get(TRUST_PREFIX + key)
        if record is None or not constant_time_equal(record.tag, tag):
            failures.append(f"trust row for wing {wing!r} is not its newest assignment on the chain")
            continue
        good.append(TrustAssignment(wing, trust, at))
    for label in sorted(newest):
        if label.startswith(TRUST_PREFIX) and label[len(TRUST_PREFIX) :] not in present:
            failures.append(f"trust record {named(label)!r} has no row (the assignment was removed)")
    return good, failures


def list_trust(store: object) -> list[TrustAssignment]:
    """Every verified assignment, by wing; `TrustTampered` (or `LabelGuardRefused`) on any finding."""
    context = context_of(store)
    guard = label_guard(context)
    good, failures = _findings(context, guard.labels(TRUST_PREFIX))
    if failures:
        raise TrustTampered(
            f"vault {context.vault_id!r}: {failures[0]}"
            + (f" (and {len(failures) - 1} more)" if len(failures) > 1 else "")
            + "; the trust floor refuses to decide (run undercroft verify)"
        )
    # By wing name: on a sealed vault the rows are keyed by blind values, whose order is the key's, not the name's.
    return sorted(good, key=lambda assignment: assignment.wing)


def trust_assignments(store: object) -> dict[str, str]:
    """wing → class for every assigned wing (verified through the label guard); unassigned wings are standard."""
    return {assignment.wing: assignment.trust for assignment in list_trust(store)}


def read_floor(
    store: object, *, wing: str | None = None, min_trust: str | None = None, env: Mapping[str, str] | None = None
) -> Floor | None:
    """The floor a store read naming `wing` is under (None: no floor), over the verified assignments.

    `floor_in_force` decides the class (``min_trust``; else ``UNDERCROFT_TRUST_FLOOR`` — garbage refuses — for
    an unscoped read); the assignments are read through the label guard only when a floor applies.
    """
    vault_floor = settings.trust_floor(env) if min_trust is None and wing is None else None
    trust = floor_in_force(
        vault_floor=None if vault_floor is None else str(vault_floor), min_trust=min_trust, wing=wing
    )
    if trust is None:
        return None
    validate_trust(trust)
    return Floor(trust, trust_assignments(store))


def check_trust_rows(context: VaultContext, newest: Mapping[str, AuditRow]) -> list[str]:
    """The verify leg: every trust row against its newest chain record, both directions (failures)."""
    return _findings(context, newest)[1]


def reseal_trust_rows(rekeying: Rekeying) -> list[tuple[str, bytes]]:
    """Rotation's reseal hook for ``wing_trust`` (``"undercroft_store.kernel.trust:reseal_trust_rows"``).

    Inside the rotation's transaction: each row verified under the old keys (`TrustTampered` refuses the
    rotation: re-keying would launder a flip), re-tagged under the new ones; returns ``(trust/<wing>, new
    tag)`` for rotation to append, so each row stays its wing's newest assignment.
    """
    connection = rekeying.connection
    echoed: list[tuple[str, bytes]] = []
    rows = connection.execute(f"SELECT wing, trust, at, tag FROM {TRUST_TABLE} ORDER BY wing").fetchall()  # noqa: S608
    for wing, trust, assigned, tag in rows:
        if not constant_time_equal(_tag(rekeying.old_keys, wing, trust, assigned), bytes(tag)):
            raise TrustTampered(
                f"trust row for wing {wing!r} fails its HMAC tag; rotation refused (run undercroft verify)"
            )
        new_tag = _tag(rekeying.new_keys, wing, trust, assigned)
        connection.execute(f"UPDATE {TRUST_TABLE} SET tag = ? WHERE wing = ?", (new_tag, wing))  # noqa: S608
        echoed.append((TRUST_PREFIX + wing, new_tag))
    return echoed
