"""Duplicates: exact ones by keyed fingerprint (`find_duplicates`, `dedup`), `check_duplicate`, and
semantic dedup-refresh on save (`save_with_dedup`).

An exact duplicate is a drawer in the same wing and room whose content has the same keyed fingerprint as
an older one. `dedup(apply=True)` keeps the oldest, folds every removed copy's dates into its
``occurrences`` (an audited update through the write choke point) and deletes the copies (each leaving a
tombstone): no date is lost. `save_with_dedup` refreshes, in place, the nearest drawer of the same wing and
room whose embedding cosine reaches the threshold — new words, ``updated_at`` now, the displaced
``filed_at``/``content_date`` kept in ``occurrences`` — as an ordinary audited update, never a silent
overwrite. The quarantine wing is excluded everywhere.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import undercroft_obs as obs
from undercroft_core.chunking import chunk
from undercroft_core.drawer import Drawer, Occurrence
from undercroft_core.normalisation import is_blank, normalise
from undercroft_core.vocabulary import QUARANTINE_WING, names_quarantine_wing, reserved_wing_refusal
from undercroft_obs import names
from undercroft_vault import fingerprint

from undercroft_store.kernel._internal.meta_at_rest import label_name, stored_label
from undercroft_store.kernel._internal.read_door import InternalRead, silent
from undercroft_store.kernel._internal.structure import guard_scope_index
from undercroft_store.kernel._internal.transaction import check_writable, readable
from undercroft_store.kernel.screening import Screen
from undercroft_store.kernel.trust import Floor, read_floor
from undercroft_store.kernel.writes import DrawerWrite, WriteResult, delete_drawers, write_drawers
from undercroft_store.memory.kg.errors import InvalidSurfaceInput

if TYPE_CHECKING:
    from undercroft_store.store import VaultStore

__all__ = [
    "DedupReport",
    "DuplicateCheck",
    "DuplicateGroup",
    "SaveOutcome",
    "check_duplicate",
    "dedup",
    "find_duplicates",
    "save_with_dedup",
]


@dataclass(frozen=True, slots=True)
class DuplicateGroup:
    """Drawers of one wing and room with identical content: `keep` is the oldest."""

    wing: str
    room: str
    keep: str
    duplicates: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DedupReport:
    """What `dedup` found (and, with ``applied``, removed)."""

    groups: tuple[DuplicateGroup, ...]
    applied: bool
    removed: int

    def render(self) -> str:
        """Human-readable lines; a dry run says so."""
        lines = [f"{len(self.groups)} duplicate group(s), {sum(len(g.duplicates) for g in self.groups)} copies"]
        for group in self.groups:
            lines.append(f"  {group.wing}/{group.room}: keep {group.keep}, copies {', '.join(group.duplicates)}")
        lines.append(f"removed {self.removed} (dates kept)" if self.applied else "dry run: nothing changed (--apply)")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class DuplicateCheck:
    """`check_duplicate`'s answer: the matching drawer, whether exact, and the cosine when semantic."""

    duplicate: bool
    id: str | None = None
    exact: bool = False
    similarity: float | None = None


@dataclass(frozen=True, slots=True)
class SaveOutcome:
    """`save_with_dedup`'s answer: ``deduped`` when an existing drawer was refreshed in place."""

    deduped: bool
    id: str
    similarity: float | None
    results: tuple[WriteResult, ...]


def find_duplicates(store: VaultStore, *, wing: str | None = None) -> list[DuplicateGroup]:
    """Exact duplicates by keyed fingerprint, grouped per wing and room (oldest kept), quarantine excluded."""
    connection = readable(store._context).connection
    context = store._context
    sql = "SELECT id, wing, room, fingerprint FROM drawers WHERE wing != ?"
    params: list[str] = [str(stored_label(context, "wing", QUARANTINE_WING))]
    if wing is not None:
        guard_scope_index(context)  # a damaged index would hide duplicates, silently
        sql += " AND wing = ?"
        params.append(str(stored_label(context, "wing", wing)))
    groups: dict[tuple[str, str, bytes], list[str]] = defaultdict(list)
    for drawer_id, drawer_wing, room, print_ in connection.execute(sql + " ORDER BY seq", params):
        groups[(drawer_wing, room, bytes(print_))].append(drawer_id)
    return [
        DuplicateGroup(label_name(context, "wing", key[0]), label_name(context, "room", key[1]), ids[0], tuple(ids[1:]))
        for key, ids in groups.items()
        if len(ids) > 1
    ]


def _dates(drawer: Drawer) -> list[Occurrence]:
    return [Occurrence(drawer.filed_at, drawer.content_date), *drawer.occurrences]


def dedup(store: VaultStore, *, apply: bool = False, wing: str | None = None) -> DedupReport:
    """Report exact duplicates; with `apply`, fold their dates into the survivor and delete the copies."""
    groups = tuple(find_duplicates(store, wing=wing))
    if not apply or not groups:
        return DedupReport(groups, applied=apply, removed=0)
    context = store._context
    check_writable(context)
    removed = 0
    for group in groups:
        with silent(store, InternalRead.WRITE_DECISION):
            survivor = store.get(group.keep)
            copies = store.hydrate(group.duplicates)
        seen = {(o.filed_at, o.content_date) for o in _dates(survivor)}
        extra = [o for copy in copies for o in _dates(copy) if (o.filed_at, o.content_date) not in seen]
        merged = replace(survivor, occurrences=(*survivor.occurrences, *_unique(extra)), updated_at=context.now())
        write_drawers(context, [DrawerWrite(merged)], screening=Screen())
        removed += delete_drawers(context, [copy.id for copy in copies])
    return DedupReport(groups, applied=True, removed=removed)


def _unique(occurrences: list[Occurrence]) -> list[Occurrence]:
    kept: dict[tuple[str, str | None], Occurrence] = {}
    for occurrence in occurrences:
        kept.setdefault((occurrence.filed_at, occurrence.content_date), occurrence)
    return list(kept.values())


def _check_threshold(threshold: object) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0.0 < float(threshold) <= 1.0:
        raise InvalidSurfaceInput(f"dedup threshold must be a number in (0, 1], got {threshold!r}")
    return float(threshold)


def _nearest(
    store: VaultStore, text: str, wing: str | None, room: str | None, floor: Floor | None = None
) -> tuple[int | None, str | None, float]:
    """The (seq, id, cosine) of the scope's drawer nearest `text` (None, None, 0.0 for an empty scope)."""
    scope = store.scope_seqs(wing=wing, room=room)
    if floor is not None:
        scope = floor.filter_seqs(store, scope, wing)
    if scope.size == 0:
        return None, None, 0.0
    matrix = store.iter_embeddings()
    mask = np.isin(matrix.seqs, scope)
    if not mask.any():
        return None, None, 0.0
    codes = matrix.codes[mask].astype(np.float32)
    query = store._context.embedder.embed([text])[0].astype(np.float32)
    norms = np.linalg.norm(codes, axis=1) * (float(np.linalg.norm(query)) or 1.0)
    scores = (codes @ query) / np.where(norms == 0, 1.0, norms)
    best = int(np.argmax(scores))
    positions = np.flatnonzero(mask)
    return int(matrix.seqs[positions[best]]), matrix.ids[positions[best]], float(scores[best])


def _served(store: VaultStore, seq: int) -> str | None:
    """The id of the drawer at `seq` read under the served-row rule (its mirrors, which the scope and floor
    filters compared, equal its covered meta, or `RecordTampered`); None when it vanished meanwhile."""
    with silent(store, InternalRead.POLICY_FENCE):  # the oracle answers an id and a verdict, never words
        found = store.hydrate([seq])
    return found[0].id if found else None


def check_duplicate(
    store: VaultStore,
    text: str,
    *,
    wing: str | None = None,
    room: str | None = None,
    threshold: float | None = None,
) -> DuplicateCheck:
    """Is `text` already stored? Exact by keyed fingerprint; with `threshold`, also by embedding cosine.

    Unscoped (no `wing`), the oracle is under the vault's trust floor like every unscoped read
    (`trust.read_floor`): a drawer its floor excludes is never named. The drawer named is read under the
    served-row rule, so a label edited beneath the engine is an integrity verdict, never an answer.
    """
    context = readable(store._context)
    normalised = normalise(text) if isinstance(text, str) else ""
    pieces = () if is_blank(normalised) else chunk(normalised)
    if not pieces:
        raise InvalidSurfaceInput("nothing to check: the text is empty or whitespace (invisible characters count)")
    floor = read_floor(store, wing=wing)
    prints = [fingerprint(context.keys, piece.text.encode("utf-8")) for piece in pieces]
    sql = "SELECT seq FROM drawers WHERE fingerprint = ? AND wing != ?"
    params: list[str] = [str(stored_label(context, "wing", QUARANTINE_WING))]
    for column, value in (("wing", wing), ("room", room)):
        if value is not None:
            sql += f" AND {column} = ?"
            params.append(str(stored_label(context, column, value)))
    if floor is not None:
        condition, values = floor.clause()
        sql += f" AND {condition}"
        params.extend(str(stored_label(context, "wing", value)) for value in values)
    for print_ in prints:
        row = context.connection.execute(sql + " ORDER BY seq LIMIT 1", (print_, *params)).fetchone()
        if row is not None and (drawer_id := _served(store, int(row[0]))) is not None:
            return DuplicateCheck(True, drawer_id, exact=True, similarity=1.0)
    if threshold is None:
        return DuplicateCheck(False)
    limit = _check_threshold(threshold)
    seq, nearest, score = _nearest(store, " ".join(p.text for p in pieces), wing, room, floor)
    if seq is not None and score >= limit and (drawer_id := _served(store, seq)) is not None:
        return DuplicateCheck(True, drawer_id, exact=False, similarity=score)
    return DuplicateCheck(False, similarity=score if nearest is not None else None)


def save_with_dedup(
    store: VaultStore,
    text: str,
    *,
    wing: str,
    room: str,
    added_by: str,
    threshold: float,
    kind: str | None = None,
) -> SaveOutcome:
    """Save `text`, or refresh in place the same wing+room drawer whose cosine reaches `threshold`."""
    limit = _check_threshold(threshold)
    context = store._context
    check_writable(context)
    if isinstance(wing, str) and names_quarantine_wing(wing):
        raise InvalidSurfaceInput(reserved_wing_refusal(wing))
    pieces = chunk(normalise(text)) if isinstance(text, str) else ()
    if len(pieces) != 1:
        raise InvalidSurfaceInput(
            f"dedup-refresh takes one drawer's worth of text (one chunk), this text makes {len(pieces)}"
        )
    with obs.span(names.SPAN_DEDUP, vault=context.vault_id) as span:
        outcome = _save_or_refresh(store, pieces[0].text, text, wing, room, added_by, limit, kind)
        span.set("deduped", outcome.deduped)
        return outcome


def _save_or_refresh(
    store: VaultStore, piece: str, text: str, wing: str, room: str, added_by: str, limit: float, kind: str | None
) -> SaveOutcome:
    context = store._context
    _, nearest, score = _nearest(store, piece, wing, room)
    if nearest is None or score < limit:
        results = store.remember(text, wing=wing, room=room, added_by=added_by, kind=kind)
        return SaveOutcome(False, results[0].id, score if nearest is not None else None, tuple(results))
    with silent(store, InternalRead.WRITE_DECISION):
        old = store.get(nearest)
    now = context.now()
    occurrences = _unique([*old.occurrences, Occurrence(old.filed_at, old.content_date)])
    refreshed = replace(
        old, content=piece, filed_at=now, updated_at=now, content_date=None, occurrences=tuple(occurrences)
    )
    results = write_drawers(context, [DrawerWrite(refreshed)], screening=Screen())
    return SaveOutcome(True, old.id, score, tuple(results))
