"""The egress record every export leaves on the audit chain, through the store's egress API.

Governance part B owns ``undercroft_store.governance.read_audit`` and its ``record_egress``. It is looked up when an
export runs (not imported at start-up), so this module also works in a tree where it has not landed: the
export then says on stderr that no record was written — an export never claims an audit it did not make.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from undercroft_core.embedder import Embedder
from undercroft_store import VaultStore

__all__ = ["advised_egress", "record_export", "served_egress"]


def record_export(
    store: VaultStore, *, surface: str, recipient: str | None, counts: Mapping[str, int], digest: str
) -> str | None:
    """Append the ``egress/export`` record (before any byte leaves); None when written, else why not."""
    try:
        module = importlib.import_module("undercroft_store.governance.read_audit")
    except ImportError:
        return (
            "egress audit record NOT written: the store's egress API (undercroft_store.governance.read_audit) is absent"
        )
    module.record_egress(
        store, "export", surface=surface, recipient=recipient, counts=dict(counts), manifest_digest=digest
    )
    return None


def served_egress(embedder: Embedder, *, surface: str = "cli") -> Callable[[VaultStore], None] | None:
    """For a served embedder: the hook that appends one ``egress/embed/repair`` record after a repair.

    It binds the surface, the endpoint's origin (a policed URL never carries credentials), the model and how
    many drawers the repair sent — counted by the embedder from the requests it put on the wire, so an
    aborted repair records what actually left. None for an in-process embedder (nothing leaves).
    """
    from undercroft_store.governance.read_audit import record_egress

    sent_before = getattr(embedder, "texts_sent", None)
    destination = getattr(embedder, "destination", None)
    if not isinstance(sent_before, int) or not isinstance(destination, str):
        return None

    def record(store: VaultStore) -> None:
        sent = int(getattr(embedder, "texts_sent", 0)) - sent_before
        if sent:
            record_egress(
                store,
                "embed/repair",
                surface=surface,
                recipient=destination,
                counts={"drawers_sent": sent},
                manifest_digest="",
                details={"model": embedder.identity.name},
            )

    return record


@contextmanager
def advised_egress(store: VaultStore, *, applied: bool, surface: str = "cli") -> Iterator[None]:
    """Around a dedup run: one ``egress/advise/dedup`` record when its screen showed stored survivors to the advisor.

    Counted from the gate's own advisor outcomes (every consultation, failed ones included — the text left
    either way), appended after the run whether it finished or not. Nothing when no advisor is installed.
    """
    from undercroft_store.governance.quarantine import gate_for
    from undercroft_store.governance.read_audit import record_egress

    gate = gate_for(store)
    advisor = gate.advisor
    destination = getattr(advisor, "destination", None)
    before = sum(gate.advisor_outcomes.values())
    try:
        yield
    finally:
        shown = sum(gate.advisor_outcomes.values()) - before
        if shown and isinstance(destination, str):
            record_egress(
                store,
                "advise/dedup",
                surface=surface,
                recipient=destination,
                counts={"survivors_shown": shown},
                manifest_digest="",
                details={"model": getattr(advisor, "identity", None), "applied": applied},
            )
