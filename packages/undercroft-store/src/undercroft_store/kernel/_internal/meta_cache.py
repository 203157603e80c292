"""The RAM metadata cache of one open handle: every drawer's sealed meta opened once, kept per store generation.

A sealed vault's metadata is a blob (`meta_at_rest`), so the readers that scan metadata for every drawer — the
dated candidates' interval table, a sweep's rate seed — cannot ask SQL for a date any more. They ask this
cache: ``seq → opened meta``, rebuilt when the handle's generation moved, and then only for the rows whose
tag changed (an unchanged tag is an unchanged row: the tag covers the sealed meta). Each blob opens under its
own ``{id}/meta`` AAD, so a blob moved between rows does not open; a row that does not open is left out (the
verified read and verify name it). Nothing here is evidence of integrity: what a reader draws from the cache
is hydrated through the verified path before anything is served, and the cache dies with the handle.
"""

from __future__ import annotations

from undercroft_vault import IntegrityFailure

from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.meta_at_rest import open_meta

__all__ = ["META_CACHE_ROWS", "opened_meta", "opened_metas"]


#: Opened metas one handle keeps (about 400 bytes each): past it the cache starts over.
META_CACHE_ROWS = 250_000


def opened_meta(context: VaultContext, seq: int | None, drawer_id: str, stored: bytes, tag: bytes) -> bytes:
    """One verified row's opened meta: from the cache when the row's tag is the one it was opened under (the
    tag covers the sealed meta, so an equal tag is an equal blob), else opened and remembered.

    The caller has checked `tag` over the row's bytes; `IntegrityFailure` when the blob does not open."""
    if not context.metadata_sealed or seq is None:
        return open_meta(context, drawer_id, stored)
    held = context.meta_cache.get(seq)
    if held is not None and held[0] == tag:
        return held[1]
    plain = open_meta(context, drawer_id, stored)
    if len(context.meta_cache) >= META_CACHE_ROWS:
        context.meta_cache.clear()
        context.meta_cache_generation = None
    context.meta_cache[seq] = (tag, plain)
    return plain


def opened_metas(context: VaultContext, generation: int) -> dict[int, bytes]:
    """``seq → canonical meta`` of every drawer (opened on a sealed vault), as of `generation`."""
    rows = context.connection.execute("SELECT seq, id, meta_json, tag FROM drawers").fetchall()
    if not context.metadata_sealed:
        return {int(seq): bytes(meta) for seq, _, meta, _ in rows}
    if context.meta_cache_generation == generation:
        return {seq: meta for seq, (_, meta) in context.meta_cache.items()}
    held = context.meta_cache
    fresh: dict[int, tuple[bytes, bytes]] = {}
    for seq, drawer_id, meta, tag in rows:
        key, tag = int(seq), bytes(tag)
        known = held.get(key)
        if known is not None and known[0] == tag:
            fresh[key] = known
            continue
        try:
            fresh[key] = (tag, open_meta(context, str(drawer_id), bytes(meta)))
        except IntegrityFailure:
            continue  # not served from here: the verified read refuses it, verify names it
    context.meta_cache = fresh
    context.meta_cache_generation = generation
    return {seq: meta for seq, (_, meta) in fresh.items()}
