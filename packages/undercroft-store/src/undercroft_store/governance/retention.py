"""Retention: per wing or wing/room maximum age, HMAC-tagged and chain-audited, enforced by an explicit sweep.

`set_retention` / `clear_retention` write a ``retention_policy`` row (or delete it) and its
``retention/<scope>`` (or ``retention-clear/<scope>``) audit record in one transaction. Nothing enforces a
policy on a timer or at open: `sweep` walks EVERY drawer, verifies its tag, reads its wing, room and
``filed_at`` from the HMAC-covered meta (never the clear mirror columns, so a flipped mirror can neither
launder a deletion nor hide a drawer from its policy), and destroys what the most specific policy expires
through attested forgetting (`forgetting.forget`), returning the receipt. A policy row whose tag fails, or
that is not its scope's newest assignment (an older row written back), is named and applies nowhere; the
sweep then answers ``ok = False`` (exit 2) and still destroys everything it could decide.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from undercroft_core.errors import InvalidInput
from undercroft_core.names import validate_name
from undercroft_core.vocabulary import QUARANTINE_WING, names_quarantine_wing
from undercroft_vault import AuditRow, IntegrityFailure, SigningIdentity, compute_tag, constant_time_equal

from undercroft_store.errors import Error, ReadOnlyStore
from undercroft_store.governance.forgetting import ForgetReceipt, _context_of, forget
from undercroft_store.kernel._internal.chain_append import anchor_now, append_in_transaction
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.meta_at_rest import (
    label_name,
    open_meta,
    register_names,
    scope_label_namer,
    stored_label,
)
from undercroft_store.kernel._internal.retention_table import (
    CLEAR_PREFIX,
    LABEL_PREFIX,
    RETENTION_TABLE,
    policy_label,
    policy_tag,
    retention_findings,
)
from undercroft_store.kernel.label_guard import label_guard
from undercroft_store.store import VaultStore

__all__ = [
    "CLEAR_PREFIX",
    "LABEL_PREFIX",
    "InvalidRetention",
    "RetentionListing",
    "RetentionPolicy",
    "SweepReport",
    "clear_retention",
    "list_retention",
    "parse_max_age",
    "reseal_retention",
    "retention_findings",
    "set_retention",
    "sweep",
]

_AGE = re.compile(r"([1-9][0-9]{0,9})([smhdw]?)")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_MAX_SECONDS = 100 * 366 * 86400  # a century: beyond it a policy expresses nothing


class InvalidRetention(Error, InvalidInput):
    """A retention request was refused (a bad scope name, a bad or out-of-range age)."""


@dataclass(frozen=True)
class RetentionPolicy:
    """One declared policy: drawers in ``wing`` (and ``room``, when set) older than ``max_age_seconds`` expire."""

    wing: str
    room: str | None
    max_age_seconds: int
    at: str

    @property
    def scope(self) -> str:
        """``wing`` or ``wing/room``."""
        return self.wing if self.room is None else f"{self.wing}/{self.room}"

    def to_dict(self) -> dict[str, object]:
        """The JSON-ready form."""
        return {"wing": self.wing, "room": self.room, "max_age_seconds": self.max_age_seconds, "at": self.at}


@dataclass(frozen=True)
class RetentionListing:
    """The policies that verified, and the scopes whose row failed (named, applied nowhere)."""

    policies: tuple[RetentionPolicy, ...]
    failed: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when every row verified and is its scope's newest assignment."""
        return not self.failed


@dataclass
class SweepReport:
    """What a sweep did: the receipt of what it destroyed, and what it refused to decide."""

    examined: int = 0
    forgotten: list[str] = field(default_factory=list)
    receipt: ForgetReceipt | None = None
    failed_policies: list[str] = field(default_factory=list)
    tampered_drawers: list[str] = field(default_factory=list)
    undecided: int = 0

    @property
    def ok(self) -> bool:
        """False when a policy row or a drawer failed verification (the CLI exits 2)."""
        return not (self.failed_policies or self.tampered_drawers)


def parse_max_age(text: str) -> int:
    """``90d``, ``12h``, ``30m``, ``3600s``, ``2w`` or bare seconds → seconds; `InvalidRetention` otherwise."""
    match = _AGE.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise InvalidRetention(f"max age {text!r} is not a positive whole number with an optional s, m, h, d or w")
    return _check_seconds(int(match.group(1)) * _UNITS[match.group(2)])


def _check_seconds(seconds: object) -> int:
    if isinstance(seconds, bool) or not isinstance(seconds, int) or not 1 <= seconds <= _MAX_SECONDS:
        raise InvalidRetention(f"max age must be 1 second to 100 years, got {seconds!r}")
    return seconds


def _scope_names(wing: str, room: str | None) -> tuple[str, str]:
    try:
        validate_name(wing, what="wing")
        if room is not None:
            validate_name(room, what="room")
    except InvalidInput as error:
        raise InvalidRetention(str(error)) from None
    if names_quarantine_wing(wing):  # any spelling: a look-alike of the queue's name is the queue's name
        raise InvalidRetention(f"the {QUARANTINE_WING!r} wing takes no retention: rule on it with admission")
    return wing, room or ""


def _scope_keys(context: VaultContext, wing: str, room: str) -> tuple[str, str]:
    """The row key of a scope: the names on hmac-only; on a sealed vault their blind values (so the row and its
    ``retention/<key>`` label carry no name) — unless a row written in the clear before the migration holds
    the scope, which keeps its key (a folded label is never rewritten)."""
    if not context.metadata_sealed:
        return wing, room
    legacy = context.connection.execute(
        f"SELECT 1 FROM {RETENTION_TABLE} WHERE wing = ? AND room = ?",  # noqa: S608
        (wing, room),
    ).fetchone()
    if legacy is not None:
        return wing, room
    return str(stored_label(context, "wing", wing)), str(stored_label(context, "room", room)) if room else ""


def set_retention(
    target: VaultStore | VaultContext, wing: str, room: str | None = None, *, max_age: int
) -> RetentionPolicy:
    """Declare (or replace) the policy of ``wing`` / ``wing/room``: ``max_age`` in seconds."""
    context = _writable(target)
    wing, stored_room = _scope_names(wing, room)
    seconds = _check_seconds(max_age)
    at = context.now()
    key_wing, key_room = _scope_keys(context, wing, stored_room)
    tag = policy_tag(context.keys, key_wing, key_room, seconds, at)
    _commit(
        context,
        f"INSERT INTO {RETENTION_TABLE} (wing, room, max_age_seconds, at, tag) VALUES (?, ?, ?, ?, ?) "  # noqa: S608
        "ON CONFLICT (wing, room) DO UPDATE SET max_age_seconds = excluded.max_age_seconds, at = excluded.at, "
        "tag = excluded.tag",
        (key_wing, key_room, seconds, at, tag),
        AuditRow(policy_label(key_wing, key_room), tag, at),
        [("wing", wing), *([("room", stored_room)] if stored_room else [])],
    )
    return RetentionPolicy(wing, room, seconds, at)


def clear_retention(target: VaultStore | VaultContext, wing: str, room: str | None = None) -> bool:
    """Remove the policy of a scope (a ``retention-clear/`` record); False when there was none."""
    context = _writable(target)
    wing, stored_room = _scope_names(wing, room)
    wing, stored_room = _scope_keys(context, wing, stored_room)
    row = context.connection.execute(
        f"SELECT tag FROM {RETENTION_TABLE} WHERE wing = ? AND room = ?",  # noqa: S608
        (wing, stored_room),
    ).fetchone()
    if row is None:
        return False
    at = context.now()
    label = CLEAR_PREFIX + policy_label(wing, stored_room)[len(LABEL_PREFIX) :]
    _commit(
        context,
        f"DELETE FROM {RETENTION_TABLE} WHERE wing = ? AND room = ?",  # noqa: S608
        (wing, stored_room),
        AuditRow(label, compute_tag(context.keys, label, at.encode("ascii"), bytes(row[0])), at),
    )
    return True


def _writable(target: VaultStore | VaultContext) -> VaultContext:
    context = _context_of(target)
    if context.read_only:
        raise ReadOnlyStore(f"vault {context.vault_id!r} is open read-only: retention changes are refused")
    label_guard(context)  # decide nothing on a chain that does not replay (the one label door)
    return context


def _commit(
    context: VaultContext,
    sql: str,
    params: tuple[object, ...],
    record: AuditRow,
    names: Sequence[tuple[str, str]] = (),
) -> None:
    connection = context.connection
    connection.execute("BEGIN IMMEDIATE")
    try:
        register_names(context, names)  # a sealed vault names the scope's blind values from its registry
        connection.execute(sql, params)
        append_in_transaction(context, [record])
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    context.generation += 1
    anchor_now(context)


def _read_policies(context: VaultContext) -> tuple[dict[tuple[str, str], RetentionPolicy | None], list[str]]:
    """Scope → policy, or None for a row that failed (it then decides nothing)."""
    # The newest set/clear record of each scope, in chain order: all the policy leg compares.
    newest = label_guard(context).ordered(LABEL_PREFIX, CLEAR_PREFIX)
    named = scope_label_namer(context)
    failed = retention_findings(context.connection, context.keys, newest, named)
    bad = {finding.split(":", 1)[0] for finding in failed}
    scopes: dict[tuple[str, str], RetentionPolicy | None] = {}
    query = f"SELECT wing, room, max_age_seconds, at FROM {RETENTION_TABLE}"  # noqa: S608
    for key_wing, key_room, max_age, at in context.connection.execute(query):
        good = named(policy_label(key_wing, key_room)) not in bad
        wing = label_name(context, "wing", key_wing, legacy=True)
        room = label_name(context, "room", key_room, legacy=True) if key_room else ""
        scopes[(wing, room)] = RetentionPolicy(wing, room or None, int(max_age), at) if good else None
    return scopes, failed


def list_retention(target: VaultStore | VaultContext) -> RetentionListing:
    """Every verified policy, and every failing scope named (the listing decides from labels: guarded)."""
    context = _context_of(target)
    scopes, failed = _read_policies(context)
    policies = tuple(sorted((p for p in scopes.values() if p is not None), key=lambda p: (p.wing, p.room or "")))
    return RetentionListing(policies, tuple(failed))


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def sweep(
    target: VaultStore | VaultContext,
    *,
    now: datetime | None = None,
    signer: SigningIdentity | None = None,
) -> SweepReport:
    """Destroy every drawer its most specific verified policy expires, through attested forgetting."""
    context = _context_of(target)
    if context.read_only:
        raise ReadOnlyStore(f"vault {context.vault_id!r} is open read-only: a sweep is refused")
    scopes, failed = _read_policies(context)
    report = SweepReport(failed_policies=failed)
    moment = now if now is not None else context.clock()
    query = "SELECT id, meta_json, content, tag FROM drawers ORDER BY seq"
    expired: list[str] = []
    for drawer_id, meta, content, tag in context.connection.execute(query).fetchall():
        report.examined += 1
        meta = bytes(meta)
        if not constant_time_equal(compute_tag(context.keys, drawer_id, meta, bytes(content)), bytes(tag)):
            report.tampered_drawers.append(drawer_id)
            continue
        try:
            opened = open_meta(context, drawer_id, meta)
        except IntegrityFailure:
            report.tampered_drawers.append(drawer_id)
            continue
        document = json.loads(opened)  # the HMAC-covered scope and clock, never the label columns
        wing, room = document.get("wing"), document.get("room")
        if wing == QUARANTINE_WING:
            continue
        key = (wing, room) if (wing, room) in scopes else (wing, "")
        if key not in scopes:
            continue
        policy = scopes[key]
        if policy is None:
            report.undecided += 1
            continue
        if (moment - _instant(document["filed_at"])).total_seconds() > policy.max_age_seconds:
            expired.append(drawer_id)
    if expired:
        report.receipt = forget(context, expired, signer=signer, reason="retention sweep")
        report.forgotten = expired
    return report


def reseal_retention(rekeying: object) -> list[tuple[str, bytes]]:
    """Rotation's hook for ``retention_policy`` (``"undercroft_store.governance.retention:reseal_retention"``).

    Verifies every row under the old key (a failure raises `InvalidRetention`'s integrity sibling via the
    rotation's own verify first), re-tags it under the new key inside the rotation's transaction, and
    returns ``(label, new_tag)`` so rotation appends a record carrying each row's current tag.
    """
    from undercroft_store.errors import RotationRefused

    connection = rekeying.connection  # type: ignore[attr-defined]
    old_keys, new_keys = rekeying.old_keys, rekeying.new_keys  # type: ignore[attr-defined]
    echoed: list[tuple[str, bytes]] = []
    query = f"SELECT wing, room, max_age_seconds, at, tag FROM {RETENTION_TABLE} ORDER BY wing, room"  # noqa: S608
    for wing, room, max_age, at, tag in connection.execute(query).fetchall():
        if not constant_time_equal(policy_tag(old_keys, wing, room, int(max_age), at), bytes(tag)):
            raise RotationRefused(f"retention row {policy_label(wing, room)} fails its HMAC tag; rotation refused")
        fresh = policy_tag(new_keys, wing, room, int(max_age), at)
        connection.execute(
            f"UPDATE {RETENTION_TABLE} SET tag = ? WHERE wing = ? AND room = ?",  # noqa: S608
            (fresh, wing, room),
        )
        echoed.append((policy_label(wing, room), fresh))
    return echoed
