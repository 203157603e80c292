"""The sealed snapshot of a vault's derived search state, so the first search after an open does not open
every drawer again (issue 19 item 4).

What it holds: the embedding matrix as stored (int8 codes and scales, by seq) and every drawer's lexical
entry (term cells over a vocabulary of the terms they hold, length, scripts, room, language, function-word
cells) with the lexeme buckets of that vocabulary — exactly what `EmbeddingCache` and `Lexicon` hold after a
full fill. At rest it is one to many rows of ``search_snapshot`` (`kernel.snapshot_table`), each part sealed
(sealed vault: XChaCha20-Poly1305 under the vault key, AAD domain ``searchsnap/{part}/of/{parts}``, which
binds the vault id) or HMAC-tagged (hmac-only); part 0 opens with a digest of the whole payload, so parts of
two snapshots never combine. Nothing in it is readable without the vault's keys.

What it is bound to: inside the seal, the state it was taken at — a digest of every drawer's seq, HMAC tag
and stored embedding blob, in seq order — and the key generation, the embedder dimension, this format and
the language layer's version. A load re-reads those marks from the rows in clear (no decryption) and takes
the snapshot only when they are equal: a restored older snapshot, one from another vault or key generation,
one that any write, edit, repair or tamper has since overtaken, a flipped byte, a missing or reordered part —
each is refused, counted by reason in `SearchSnapshot.refusals`, and the caches fill from the drawers as
they would without it (verified reads, which then report any tampered row as before); the next full fill
stores a fresh snapshot. The marks are what the snapshot is a function of (the tag covers id, meta and
content), which is why the binding is to them and not to the audit chain's head: under
``UNDERCROFT_READ_AUDIT=chain`` every search moves the head without changing a byte of the state.

A snapshot decides only what is DRAWN: every drawer a search returns is still read and verified through the
store's hydration. It is written after a full fill on a writable handle, in a transaction that first
re-reads the marks (a write in between, a forget above all, voids it); every drawer delete empties the table
in its own transaction, and rotation's hook empties it in the rotation's.
"""

from __future__ import annotations

import hashlib
import json
import operator
import sqlite3
import struct
from collections import Counter
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import numpy as np
import undercroft_core
from numpy.typing import NDArray

from undercroft_store.kernel import snapshot_table as table
from undercroft_store.kernel._internal.transaction import readable
from undercroft_store.kernel.tier_tables import Envelope
from undercroft_store.search._internal.change_feed import change_feed
from undercroft_store.search._internal.row_marks import row_mark, row_norms, unit_rows
from undercroft_store.search.candidates import EmbeddingCache
from undercroft_store.search.lexicon import Lexicon, LexiconImage
from undercroft_store.search.postings import Postings
from undercroft_store.store import VaultStore

__all__ = ["FORMAT", "MIN_DRAWERS", "SearchSnapshot"]

T = TypeVar("T")

#: The payload layout's version (bound inside the seal: a snapshot of another layout is refused, not parsed).
FORMAT: Final = 2
#: Vaults smaller than this fill their caches from the drawers (cheap there) and store no snapshot.
MIN_DRAWERS: Final = 1024
#: Plaintext bytes per sealed part (the sealing bound is 16 MiB).
PART_BYTES: Final = 8 << 20
_DIGEST: Final = table.DIGEST_BYTES
# The binary sections, in payload order: (name, dtype).
_SECTIONS: Final = (
    ("seqs", np.int64),
    ("scales", np.float32),
    ("norms", np.float32),
    ("codes", np.int8),
    ("cells", np.int64),
    ("cell_counts", np.int64),
    ("voters", np.int64),
    ("voter_counts", np.int64),
    ("lengths", np.int64),
    ("script_rows", np.int32),
    ("room_rows", np.int32),
    ("language_rows", np.int32),
    ("bucket_sizes", np.int64),
    ("bucket_ids", np.int64),
)


@dataclass(frozen=True, slots=True)
class _State:
    """The vault as its rows say in clear: what a snapshot must match, read without opening anything."""

    generation: int
    position: int | None
    seqs: NDArray[np.int64]
    tags: dict[int, bytes]
    marks: dict[int, bytes]
    digest: str


def _binding(store: VaultStore) -> dict[str, object]:
    context = readable(store._context)
    return {
        "format": FORMAT,
        "core": undercroft_core.__version__,
        "dimension": context.embedder.dimension,
        "keys": context.manifest.generation,
    }


def _state(store: VaultStore) -> _State:
    """The marks of every row now, with the generation and change-feed position they are current at."""
    feed = change_feed(store)  # installed before the read: a later write by this handle is logged
    position = feed.since(None)[1] if feed is not None else None
    generation = store.generation
    connection = readable(store._context).connection
    rows = connection.execute("SELECT seq, tag, embedding FROM drawers ORDER BY seq").fetchall()
    seq_list = [seq for seq, _, _ in rows]
    tag_list = [bytes(tag) for _, tag, _ in rows]
    mark_list = [row_mark(tag, bytes(blob)) for tag, (_, _, blob) in zip(tag_list, rows, strict=True)]
    seqs = np.array(seq_list, dtype=np.int64)
    digest = hashlib.blake2b(json.dumps(_binding(store), sort_keys=True).encode(), digest_size=_DIGEST)
    digest.update(seqs.astype(">i8").tobytes())  # every seq, then every mark (each 16 bytes), in seq order
    digest.update(b"".join(mark_list))
    tags = dict(zip(seq_list, tag_list, strict=True))
    marks = dict(zip(seq_list, mark_list, strict=True))
    return _State(generation, position, seqs, tags, marks, digest.hexdigest())


def _payload(
    binding: dict[str, object],
    state: _State,
    codes: NDArray[np.int8],
    scales: NDArray[np.float32],
    image: LexiconImage,
) -> bytes:
    script_sets = sorted({tuple(sorted(s)) for s in image.scripts})
    rooms = sorted(set(image.rooms))
    languages = sorted({code for code in image.languages if code is not None})
    keys = list(image.buckets)
    arrays: dict[str, NDArray[np.generic]] = {
        "seqs": state.seqs,
        "scales": scales,
        "norms": row_norms(codes, scales),
        "codes": codes.reshape(-1),
        "cells": image.cells,
        "cell_counts": image.cell_counts,
        "voters": image.voters,
        "voter_counts": image.voter_counts,
        "lengths": image.lengths,
        "script_rows": np.array([script_sets.index(tuple(sorted(s))) for s in image.scripts], dtype=np.int32),
        "room_rows": np.array([rooms.index(room) for room in image.rooms], dtype=np.int32),
        "language_rows": np.array([-1 if c is None else languages.index(c) for c in image.languages], dtype=np.int32),
        "bucket_sizes": np.array([len(image.buckets[key]) for key in keys], dtype=np.int64),
        "bucket_ids": np.array([i for key in keys for i in image.buckets[key]], dtype=np.int64),
    }
    header = {
        "binding": binding,
        "state": state.digest,
        "rows": len(state.seqs),
        "terms": image.terms,
        "keys": keys,
        "scripts": script_sets,
        "rooms": rooms,
        "languages": languages,
        "sizes": [int(arrays[name].size) for name, _ in _SECTIONS],
    }
    encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
    body = b"".join(np.ascontiguousarray(arrays[name], dtype=dtype).tobytes() for name, dtype in _SECTIONS)
    return struct.pack(">I", len(encoded)) + encoded + body


def _pick(table: list[T], rows: NDArray[np.generic]) -> list[T]:
    """``[table[i] for i in rows]`` in one C-level call (rows index a small table: scripts, rooms, languages)."""
    found = rows.tolist()
    if not found:
        return []
    picked = operator.itemgetter(*found)(table)
    return [picked] if len(found) == 1 else list(picked)


class _Refused(Exception):
    """A stored snapshot that may not be taken; the message is the reason counted."""


def _header(payload: bytes) -> dict[str, Any]:
    (length,) = struct.unpack(">I", payload[:4])
    header: dict[str, Any] = json.loads(payload[4 : 4 + length])
    header["_offset"] = 4 + length
    return header


def _parse(payload: bytes, header: dict[str, Any]) -> dict[str, NDArray[np.generic]]:
    arrays: dict[str, NDArray[np.generic]] = {}
    offset = int(header["_offset"])
    for (name, dtype), size in zip(_SECTIONS, header["sizes"], strict=True):
        width = np.dtype(dtype).itemsize * int(size)
        arrays[name] = np.frombuffer(payload, dtype=dtype, count=int(size), offset=offset)
        offset += width
    if offset != len(payload):
        raise _Refused("layout")
    return arrays


class SearchSnapshot:
    """One searcher's use of its vault's snapshot: tried once at the first search, stored after a full fill."""

    def __init__(self) -> None:
        """Nothing tried yet."""
        self.tried = False
        #: Snapshots taken (the caches filled from one) and stored.
        self.loaded = 0
        self.stored = 0
        #: Stored snapshots refused, by reason: seal, torn, layout, bound (another key generation, embedder,
        #: format or language layer), stale (the rows moved since it was taken).
        self.refusals: Counter[str] = Counter()

    def restore(
        self, store: object, cache: EmbeddingCache, lexicon: Lexicon, *, embeddings: bool = True
    ) -> Postings | None:
        """Fill ``cache`` and ``lexicon`` from the stored snapshot when it matches the vault now (once per
        searcher) and return the postings of that state; otherwise (None) leave them empty and ask ``cache``
        to keep the codes of its full fill. ``embeddings`` False fills the lexicon only: a candidate tier that
        bounds its RAM (pq, fde) never holds the vault's embedding matrix, yet its lexical joiners need the
        postings, which are the expensive part to build (every drawer opened)."""
        if self.tried or not isinstance(store, VaultStore):
            return None
        self.tried = True
        cache.keep_codes = embeddings
        context = readable(store._context)
        parts = table.read_parts(context.connection)
        if not parts:
            return None
        try:
            postings = self._take(store, parts, cache if embeddings else None, lexicon)
        except _Refused as refusal:
            self.refusals[str(refusal)] += 1
            return None
        except (ValueError, KeyError, TypeError, IndexError, struct.error):
            self.refusals["layout"] += 1  # a payload that passed its seal yet does not parse: never ours
            return None
        self.loaded += 1
        cache.keep_codes = False
        return postings

    def _take(
        self, store: VaultStore, parts: list[tuple[int, bytes]], cache: EmbeddingCache | None, lexicon: Lexicon
    ) -> Postings:
        payload, reason = table.open_payload(Envelope(readable(store._context)), parts)
        if payload is None:
            raise _Refused(reason)
        header = _header(payload)
        if header.get("binding") != _binding(store):
            raise _Refused("bound")  # another key generation, embedder, format or language layer: not parsed
        arrays = _parse(payload, header)
        state = _state(store)
        if header["state"] != state.digest:
            raise _Refused("stale")
        rows = len(state.seqs)
        if header["rows"] != rows or not np.array_equal(arrays["seqs"], state.seqs):
            raise _Refused("layout")
        dimension = readable(store._context).embedder.dimension
        codes = np.asarray(arrays["codes"], dtype=np.int8).reshape(rows, dimension)
        unit = None
        if cache is not None:
            unit = unit_rows(codes, np.asarray(arrays["scales"], dtype=np.float32), np.asarray(arrays["norms"]))
        scripts = [frozenset(found) for found in header["scripts"]]
        rooms, languages = header["rooms"], header["languages"]
        sizes = np.asarray(arrays["bucket_sizes"]).tolist()
        ids = np.asarray(arrays["bucket_ids"]).tolist()
        ends = np.cumsum([0, *sizes]).tolist()
        keys: list[str] = header["keys"]
        image = LexiconImage(
            terms=list(header["terms"]),
            cells=np.asarray(arrays["cells"], dtype=np.int64),
            cell_counts=np.asarray(arrays["cell_counts"], dtype=np.int64),
            voters=np.asarray(arrays["voters"], dtype=np.int64),
            voter_counts=np.asarray(arrays["voter_counts"], dtype=np.int64),
            lengths=np.asarray(arrays["lengths"], dtype=np.int64),
            scripts=_pick(scripts, arrays["script_rows"]),
            rooms=_pick(rooms, arrays["room_rows"]),
            languages=_pick([*languages, None], arrays["language_rows"]),  # -1 (no language) picks the None
            buckets={key: ids[ends[k] : ends[k + 1]] for k, key in enumerate(keys)},
        )
        seqs = state.seqs.tolist()
        if cache is not None and unit is not None:
            cache.adopt(state.generation, state.seqs, unit, state.marks, state.position)
        lexicon.adopt(image, seqs, state.generation, state.tags, state.position)
        # The postings of `Postings.build` over these entries, inverted from the flat cells directly: each
        # term's holders ascend because the rows do and the sort is stable.
        term_ids = image.cells >> 32
        owners = np.repeat(state.seqs, image.cell_counts)
        # A stable sort is one order whatever the algorithm: ids that fit 16 bits take numpy's radix sort.
        order = np.argsort(term_ids.astype(np.uint16) if len(image.terms) <= 1 << 16 else term_ids, kind="stable")
        starts = np.concatenate(([0], np.cumsum(np.bincount(term_ids, minlength=len(image.terms))))).astype(np.intp)
        return Postings(
            state.generation,
            lexicon.epoch,
            starts,
            np.ascontiguousarray(owners[order]),
            lexicon.marks,
            state.position,
        )

    def store_after_fill(self, store: object, cache: EmbeddingCache, lexicon: Lexicon) -> bool:
        """Seal and store the state the caches hold after a full fill, when it is whole and still current;
        the kept codes are released either way (True: a snapshot was stored)."""
        fill, cache.full_fill, cache.keep_codes = cache.full_fill, None, False
        if fill is None or not isinstance(store, VaultStore) or len(fill.seqs) < MIN_DRAWERS:
            return False
        context = readable(store._context)
        connection = context.connection
        if context.read_only or connection.in_transaction or store.generation != fill.generation:
            return False
        image = lexicon.export(fill.seqs.tolist())
        if image is None or lexicon.generation != fill.generation:
            return False  # the lexicon does not hold every drawer (a search that never needed them all)
        envelope = Envelope(context)
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return False  # another writer holds the vault past the busy timeout: the snapshot is optional
        try:
            # Under the write lock: the rows as they are now must be the rows the caches were filled from.
            state = _state(store)
            if state.marks != fill.marks or list(state.tags) != fill.seqs.tolist():
                connection.execute("ROLLBACK")
                return False
            payload = _payload(_binding(store), state, fill.codes, fill.scales, image)
            view = memoryview(payload)
            # Part 0 opens with the payload's digest; each part is sliced and sealed in turn (no whole copy).
            head = PART_BYTES - _DIGEST
            starts = [0, *range(head, len(payload), PART_BYTES)]
            sealed = []
            for index, first in enumerate(starts):
                chunk = view[first : head if index == 0 else first + PART_BYTES].tobytes()
                if index == 0:
                    chunk = hashlib.blake2b(payload, digest_size=_DIGEST).digest() + chunk
                sealed.append(envelope.close(table.part_domain(index, len(starts)), chunk))
            view.release()
            table.create_table(connection)
            table.drop_rows(connection)
            connection.executemany(
                f"INSERT INTO {table.SNAPSHOT_TABLE} (part, blob) VALUES (?, ?)",  # noqa: S608 - a constant name
                list(enumerate(sealed)),
            )
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        # Our own commit: the handle's data_version does not move for it, so no cache is disturbed.
        self.stored += 1
        return True
