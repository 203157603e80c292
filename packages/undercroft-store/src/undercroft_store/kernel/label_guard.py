"""The label guard: the ONE door every reader that decides from an audit label goes through.

The trust floor, the admission queue listing and rulings, the retention sweep and listings, the forgetting
path (forget and verify-forgetting) and the witness decide from ``audit.record_id`` labels (``trust/<wing>``,
``retention/<scope>``, ``delete/<id>`` …). A label is evidence only if the chain that folds it replays, so
`label_guard(store)` replays the whole chain under this handle's keys on its first use, and afterwards folds
only the rows appended since (its own commits and other connections'), holding a per-key append-only
invariant: the rows it has seen are still there, in number, the continuation reproduces the committed
head, and the row holding each label a reader looks at is still that row (not edited, relabelled or
removed). A chain that does not replay refuses with `LabelGuardRefused`, an integrity verdict (also the
vault's `ChainBroken`) naming ``undercroft verify``. Readers that need every row (a receipt's interval, a
witness digest) take them from `LabelGuard.replayed_rows`, which checks them against the replayed head.

Residual, stated: an APPEND is legitimate, so a forged row written beneath SQLite while this handle is open
is seen only by a handle that replays from genesis (a re-open); a rotation swaps the keys, which forces a
full replay.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import undercroft_obs as obs
from undercroft_obs import names
from undercroft_vault import GENESIS, AuditRow, ChainBroken, VaultKeys, chain_step, constant_time_equal, replay

from undercroft_store.errors import StoreIntegrityError
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.governance import context_of, per_handle
from undercroft_store.kernel._internal.opening import read_audit_rows

__all__ = ["LabelGuard", "LabelGuardRefused", "label_guard", "label_guard_replays"]


class LabelGuardRefused(StoreIntegrityError, ChainBroken):
    """The audit chain does not replay under this handle: no decision is taken from its labels (exit 2)."""


@dataclass
class _State:
    keys: VaultKeys | None = None
    head: bytes = GENESIS
    count: int = 0
    last_seq: int = 0
    newest: dict[str, tuple[int, AuditRow]] = field(default_factory=dict)  # label -> (seq, row)
    replays: int = 0


class LabelGuard:
    """A replayed, append-only view of the audit labels of one handle (build it with `label_guard`)."""

    def __init__(self, context: VaultContext) -> None:
        """Bind to an open context; nothing is read until `sync`."""
        self._context = context
        self._state = _State()

    @property
    def full_replays(self) -> int:
        """How many times this handle replayed the chain from genesis (1 in steady state)."""
        return self._state.replays

    def _refuse(self, detail: str) -> LabelGuardRefused:
        obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, surface="label")
        return LabelGuardRefused(
            f"vault {self._context.vault_id!r}: {detail}; no decision is taken from its audit labels "
            "(run undercroft verify)"
        )

    def sync(self) -> LabelGuard:
        """Fold the rows appended since the last sync (all of them the first time); refuse on a mismatch."""
        context, state = self._context, self._state
        connection = context.connection
        stored = connection.execute("SELECT head, height FROM chain_meta WHERE id = 1").fetchone()
        if stored is None:
            raise self._refuse("no committed chain head")
        head, height = bytes(stored[0]), int(stored[1])
        if state.keys is not context.keys:  # first use, or a rotation swapped the keys: replay from genesis
            self._state = state = _State(keys=context.keys, replays=state.replays + 1)
        elif state.count == height and constant_time_equal(state.head, head):
            return self
        seen = int(connection.execute("SELECT count(*) FROM audit WHERE seq <= ?", (state.last_seq,)).fetchone()[0])
        if seen != state.count:
            raise self._refuse(f"{state.count - seen} audit row(s) this handle replayed are gone")
        rows = connection.execute(
            "SELECT seq, record_id, tag, at FROM audit WHERE seq > ? ORDER BY seq", (state.last_seq,)
        ).fetchall()
        running, newest = state.head, dict(state.newest)
        for seq, record_id, tag, at in rows:
            row = AuditRow(record_id, bytes(tag), at)
            running = chain_step(context.keys, running, row)
            newest[record_id] = (int(seq), row)
        if state.count + len(rows) != height or not constant_time_equal(running, head):
            raise self._refuse(
                "the audit chain does not replay to its committed head (edited, relabelled or removed): "
                "it does not authenticate its own labels"
            )
        state.head, state.count, state.newest = running, height, newest
        if rows:
            state.last_seq = int(rows[-1][0])
        return self

    def _held(self, labels: Iterable[str]) -> dict[str, tuple[int, AuditRow]]:
        """The rows holding `labels`, after checking each is still at its seq, unedited (the per-key invariant)."""
        held = {label: self._state.newest[label] for label in labels if label in self._state.newest}
        by_seq = {seq: (label, row) for label, (seq, row) in held.items()}
        seqs = sorted(by_seq)
        connection = self._context.connection
        for first in range(0, len(seqs), 500):
            batch = seqs[first : first + 500]
            marks = ", ".join("?" * len(batch))
            sql = f"SELECT seq, record_id, tag, at FROM audit WHERE seq IN ({marks})"  # noqa: S608 - placeholders
            found = {int(r[0]): AuditRow(str(r[1]), bytes(r[2]), str(r[3])) for r in connection.execute(sql, batch)}
            for seq in batch:
                label, row = by_seq[seq]
                now = found.get(seq)
                if (
                    now is None
                    or now.record_id != label
                    or now.at != row.at
                    or not constant_time_equal(now.tag, row.tag)
                ):
                    raise self._refuse(f"the audit row holding {label!r} was edited, relabelled or removed")
        return held

    def newest(self, label: str) -> AuditRow | None:
        """The newest audit record carrying exactly `label`, or None."""
        held = self._held([label])
        return held[label][1] if label in held else None

    def placed(self, labels: Iterable[str]) -> dict[str, tuple[int, AuditRow]]:
        """The newest record of each of `labels` that has one, with its audit ``seq`` (its place in the chain)."""
        return self._held(labels)

    def labels(self, prefix: str) -> dict[str, AuditRow]:
        """Every label starting with `prefix`, with its newest record."""
        wanted = [label for label in self._state.newest if label.startswith(prefix)]
        return {label: row for label, (_, row) in self._held(wanted).items()}

    def ordered(self, *prefixes: str) -> list[AuditRow]:
        """The newest record of every label under `prefixes`, in chain order (relative order is what counts)."""
        wanted = [label for label in self._state.newest if label.startswith(prefixes)]
        return [row for _, row in sorted(self._held(wanted).values(), key=lambda item: item[0])]

    def replayed_rows(self) -> list[AuditRow]:
        """Every audit row, read now and checked to replay to the head this guard holds (a full replay).

        For the readers that need the whole trail (a forget receipt's interval and heads, a witness digest);
        read them inside the caller's snapshot. A mismatch refuses like the guard itself.
        """
        connection = self._context.connection
        own = not connection.in_transaction  # one snapshot for the sync and the read
        if own:
            connection.execute("BEGIN")
        try:
            self.sync()
            rows = read_audit_rows(connection)
        finally:
            if own:
                connection.execute("COMMIT")
        state = self._state
        if len(rows) != state.count or not constant_time_equal(replay(self._context.keys, rows), state.head):
            raise self._refuse(
                "the audit rows do not replay to the committed head (edited, relabelled or removed): "
                "it does not authenticate its own labels"
            )
        return rows


def label_guard(store: object) -> LabelGuard:
    """This handle's guard (a `VaultStore` or its context), synced: the one door for label-deciding readers."""
    context = context_of(store)
    guard = per_handle(context, "label-guard", lambda: LabelGuard(context))
    return guard.sync()


def label_guard_replays(store: object) -> int:
    """How many full replays this handle's guard has run (0 before its first guarded read); never syncs."""
    context = context_of(store)
    return per_handle(context, "label-guard", lambda: LabelGuard(context)).full_replays
