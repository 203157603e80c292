"""The progress marker of a resumable re-embed (``repair`` after ``UNDERCROFT_FORCE_EMBEDDER=1``).

A model swap re-embeds every drawer, which at a transformer's ~5-100 drawers/s is minutes to hours; an
interrupted run (a kill, a crash, a closed laptop) must not start again from the first drawer. Each batch's
new embeddings and ``meta.reembed_progress`` commit in ONE transaction, so the marker never runs ahead of the
rows it counts. The marker names the identity being embedded into and the highest seq done, and carries a
keyed MAC (the vault's fingerprint key): an edited, forged or replayed-from-another-vault marker is ignored
and the run starts over (it costs time, never a wrong vector). A marker for another identity is ignored too
(the operator swapped twice). The marker is deleted in the transaction that records the new identity.
"""

from __future__ import annotations

from typing import Final

from undercroft_vault import constant_time_equal, fingerprint

from undercroft_store.kernel._internal.context import VaultContext

__all__ = ["RESUME_KEY", "clear_marker", "marker", "resumed_seq"]

#: The meta key of the marker.
RESUME_KEY: Final = "reembed_progress"
_DOMAIN: Final = b"undercroft/reembed-progress/v1\n"


def _mac(context: VaultContext, body: bytes) -> bytes:
    return fingerprint(context.keys, _DOMAIN + context.vault_id.encode("utf-8") + b"\n" + body)


def marker(context: VaultContext, identity: str, seq: int) -> tuple[str, bytes]:
    """The (key, value) saying every drawer up to ``seq`` is embedded by ``identity``."""
    body = f"{identity}\n{seq}".encode()
    return RESUME_KEY, body + b"\n" + _mac(context, body).hex().encode("ascii")


def resumed_seq(context: VaultContext, identity: str) -> int | None:
    """The highest seq a previous run embedded into ``identity`` (None: no marker, or one that does not hold)."""
    row = context.connection.execute("SELECT value FROM meta WHERE key = ?", (RESUME_KEY,)).fetchone()
    if row is None:
        return None
    body, _, mac = bytes(row[0]).rpartition(b"\n")
    named, _, seq = body.decode("utf-8", errors="replace").rpartition("\n")
    try:
        expected = bytes.fromhex(mac.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    if named != identity or not seq.isdigit() or not constant_time_equal(_mac(context, body), expected):
        return None
    return int(seq)


def clear_marker(context: VaultContext) -> None:
    """Drop the marker inside the caller's open transaction (the one recording the new identity)."""
    context.connection.execute("DELETE FROM meta WHERE key = ?", (RESUME_KEY,))
