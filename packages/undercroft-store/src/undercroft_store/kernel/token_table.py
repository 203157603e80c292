"""The late-interaction stage's stored token matrices (``UNDERCROFT_RERANKER=colbert|colbert-ort``) at rest.

``drawer_tokens (seq, blob)`` — created on the first matrix a writable handle stores (a vault that never ran
the stage has no such table). One row per drawer whose matrix was computed at write time (or by
``repair --tokens``); ``seq`` is the drawer row's write-order number, a counter, the only thing in clear. The
blob is sealed (sealed vault) or tagged (hmac-only) through the tier tables' `Envelope` under the drawer's own
``{id}/tok`` domain (`undercroft_vault.Domain.tokens`), so a matrix moved to another drawer's row, another
vault, or edited by one bit fails to open and is never used.

The plaintext inside the seal (`pack_matrix` / `unpack_matrix`), in one of two versions::

    b"UCT1" | u8 name length | encoder name | 16-byte SHA-256 prefix of the drawer's content |
    u32 tokens | u16 dimension | tokens x float16 scales | tokens x dimension int8 codes
    b"UCT2" | u8 name length | encoder name | 16-byte content digest | u32 codebook generation |
    u32 tokens | u16 dimension | tokens x m uint8 PQ codes

Version 1 quantises each token row on its own (``row ≈ codes * scale``, scale = max |x| / 127): 386 bytes a
token for a 384-wide encoder instead of 1,536 in float32. Version 2 is written once the vault holds a token
codebook (`kernel.token_codebook`, past ``UNDERCROFT_TOK_PQ_MIN`` matrices): ``m`` one-byte sub-quantiser
codes a token (16 at 384 wide), decoded only against the codebook of the generation it names — a v2 matrix
with no such codebook opened is not a matrix (never scored). Version 1 is also the portable form an export
line carries (`portable`): PQ codes mean nothing outside the vault that trained them.

The content digest and the encoder name are what make a matrix *current*: a drawer whose content changed,
or a vault now served by another late encoder, holds a stale matrix (reported and rebuilt, never scored). The
digest is inside the seal: nothing derived from the content is in clear on a sealed vault.

The write choke point (`kernel.writes`) is the one writer at write time: it replaces a rewritten drawer's row
(or drops it when no encoder is attached, so an old text's matrix never outlives it) and deletes the row in
the delete's own transaction (forget, delete, retention, rulings). Rotation re-seals every row under the new
keys (`reseal_on_rotation`); verify's leg and repair live in `undercroft_store.integrity.tokens`.
"""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
from numpy.typing import NDArray
from undercroft_index.token_pq import TokenCodebook, token_subquantizers
from undercroft_vault import Domain, IntegrityFailure

from undercroft_store.kernel.tier_tables import Envelope, tag_for

if TYPE_CHECKING:
    from undercroft_store.kernel.seams import Rekeying

__all__ = [
    "TOKEN_TABLE",
    "Matrix",
    "StoredCodebook",
    "content_digest",
    "count_rows",
    "create_table",
    "delete_seqs",
    "open_for_rotation",
    "pack_matrix",
    "pack_pq",
    "portable",
    "read_blobs",
    "reseal_on_rotation",
    "supplied_current",
    "table_exists",
    "unpack_matrix",
    "write_rows",
]


@dataclass(frozen=True)
class StoredCodebook:
    """The vault's trained token codebook and its generation (trained and sealed by `kernel.token_codebook`;
    defined here so the matrix format can name it without an import cycle)."""

    generation: int
    codebook: TokenCodebook


TOKEN_TABLE: Final = "drawer_tokens"  # noqa: S105 - a table name, not a secret
_DDL: Final = f"CREATE TABLE IF NOT EXISTS {TOKEN_TABLE} (seq INTEGER PRIMARY KEY, blob BLOB NOT NULL) STRICT"
_MAGIC: Final = b"UCT1"
_MAGIC_PQ: Final = b"UCT2"
_GENERATION: Final = struct.Struct("<I")
_DIGEST_BYTES: Final = 16
_SHAPE: Final = struct.Struct("<IH")
_LOOKUP: Final = 500
_TAG_BYTES: Final = 32


def content_digest(content: str) -> bytes:
    """The 16-byte digest binding a matrix to the exact content it was encoded from (kept inside the seal)."""
    return hashlib.sha256(content.encode("utf-8")).digest()[:_DIGEST_BYTES]


class Matrix:
    """One opened stored matrix: the encoder that made it, the content digest, the dequantised tokens."""

    __slots__ = ("digest", "encoder", "tokens")

    def __init__(self, encoder: str, digest: bytes, tokens: NDArray[np.float32]) -> None:
        """Hold the parts `unpack_matrix` read."""
        self.encoder = encoder
        self.digest = digest
        self.tokens = tokens

    def current(self, encoder: str, content: str) -> bool:
        """True when this matrix was made by ``encoder`` from exactly ``content``."""
        return self.encoder == encoder and self.digest == content_digest(content)


def pack_matrix(encoder: str, content: str, tokens: NDArray[np.floating]) -> bytes:
    """The plaintext of one stored matrix (int8 codes, one float16 scale per token row)."""
    return _pack_v1(encoder, content_digest(content), tokens)


def _name_bytes(encoder: str) -> bytes:
    name = encoder.encode("utf-8")
    if len(name) > 255:
        raise ValueError("a late encoder name is at most 255 UTF-8 bytes")
    return bytes((len(name),)) + name


def _pack_v1(encoder: str, digest: bytes, tokens: NDArray[np.floating]) -> bytes:
    matrix = np.asarray(tokens, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] == 0 or not np.isfinite(matrix).all():
        raise ValueError(f"a stored token matrix is a non-empty finite (tokens, dim) array, got {matrix.shape}")
    peak = np.abs(matrix).max(axis=1)
    scales = np.where(peak > 0.0, peak / 127.0, 1.0).astype(np.float16)
    codes = np.clip(np.rint(matrix / scales.astype(np.float32)[:, None]), -127, 127).astype(np.int8)
    return b"".join(
        (
            _MAGIC,
            _name_bytes(encoder),
            digest,
            _SHAPE.pack(*matrix.shape),
            scales.astype("<f2").tobytes(),
            codes.tobytes(),
        )
    )


def pack_pq(plain: bytes, stored: StoredCodebook) -> bytes:
    """A version-1 plaintext re-coded against the vault's codebook (version 2, ~16 B/token); any other
    plaintext, or one of another width than the codebook's, is returned unchanged."""
    matrix = unpack_matrix(plain)
    if plain[: len(_MAGIC)] != _MAGIC or matrix is None or matrix.tokens.shape[1] != stored.codebook.dimension:
        return plain
    codes = stored.codebook.encode(matrix.tokens)
    return b"".join(
        (
            _MAGIC_PQ,
            _name_bytes(matrix.encoder),
            matrix.digest,
            _GENERATION.pack(stored.generation),
            _SHAPE.pack(*matrix.tokens.shape),
            codes.tobytes(),
        )
    )


def portable(plain: bytes, stored: StoredCodebook | None) -> bytes | None:
    """The version-1 form of a stored plaintext (what an export line carries; None: not a matrix here)."""
    matrix = unpack_matrix(plain, stored)
    if matrix is None:
        return None
    return plain if plain[: len(_MAGIC)] == _MAGIC else _pack_v1(matrix.encoder, matrix.digest, matrix.tokens)


def unpack_matrix(plain: bytes, stored: StoredCodebook | None = None) -> Matrix | None:
    """The matrix a plaintext holds (None: not this format — never trusted, like a failed seal).

    A version-2 (PQ) plaintext decodes only against ``stored``, the vault's opened codebook, of the
    generation it names and of its width."""
    magic = plain[: len(_MAGIC)]
    if len(plain) < len(_MAGIC) + 1 or magic not in (_MAGIC, _MAGIC_PQ):
        return None
    at = len(_MAGIC)
    length = plain[at]
    at += 1
    extra = _GENERATION.size if magic == _MAGIC_PQ else 0
    fixed = at + length + _DIGEST_BYTES + extra + _SHAPE.size
    if len(plain) < fixed:
        return None
    try:
        encoder = plain[at : at + length].decode("utf-8")
    except UnicodeDecodeError:
        return None
    at += length
    digest = plain[at : at + _DIGEST_BYTES]
    tokens, dimension = _SHAPE.unpack_from(plain, at + _DIGEST_BYTES + extra)
    if tokens == 0 or dimension == 0:
        return None
    if magic == _MAGIC_PQ:
        (generation,) = _GENERATION.unpack_from(plain, at + _DIGEST_BYTES)
        return _unpack_pq(plain[fixed:], encoder, digest, (generation, tokens, dimension), stored)
    if len(plain) != fixed + tokens * 2 + tokens * dimension:
        return None
    scales = np.frombuffer(plain, dtype="<f2", count=tokens, offset=fixed).astype(np.float32)
    codes = np.frombuffer(plain, dtype=np.int8, count=tokens * dimension, offset=fixed + tokens * 2)
    if not np.isfinite(scales).all():
        return None  # a forged scale (inf, NaN) would poison every MaxSim it enters
    matrix = codes.reshape(tokens, dimension).astype(np.float32) * scales[:, None]
    return Matrix(encoder, digest, np.ascontiguousarray(matrix))


def supplied_current(plain: object, encoder: str, dimension: int, content: str) -> bool:
    """Whether a matrix supplied from outside (an import's line) may be stored by copy: it is this format, was
    made by ``encoder`` (``dimension`` wide) from exactly ``content``. Anything else is never trusted — the
    write path encodes that drawer instead."""
    if not isinstance(plain, bytes):
        return False
    matrix = unpack_matrix(plain)
    return matrix is not None and matrix.tokens.shape[1] == dimension and matrix.current(encoder, content)


def _unpack_pq(
    codes: bytes, encoder: str, digest: bytes, shape: tuple[int, int, int], stored: StoredCodebook | None
) -> Matrix | None:
    generation, tokens, dimension = shape
    if stored is None or stored.generation != generation or stored.codebook.dimension != dimension:
        return None  # coded against a codebook this vault does not hold (opened): undecodable, never scored
    if len(codes) != tokens * token_subquantizers(dimension):
        return None
    array = np.frombuffer(codes, dtype=np.uint8).reshape(tokens, -1)
    return Matrix(encoder, digest, stored.codebook.decode(array))


def table_exists(connection: sqlite3.Connection) -> bool:
    """Whether this vault holds the token table."""
    row = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TOKEN_TABLE,))
    return row.fetchone() is not None


def create_table(connection: sqlite3.Connection) -> None:
    """Create the table if absent (inside the caller's transaction)."""
    connection.execute(_DDL)


def count_rows(connection: sqlite3.Connection) -> int:
    """How many matrices are stored (0: none, or no table)."""
    if not table_exists(connection):
        return 0
    return int(connection.execute(f"SELECT count(*) FROM {TOKEN_TABLE}").fetchone()[0])  # noqa: S608


def write_rows(connection: sqlite3.Connection, envelope: Envelope, rows: Iterable[tuple[int, str, bytes]]) -> None:
    """Upsert ``(seq, drawer id, plaintext)`` sealed under ``{id}/tok`` (inside the caller's transaction)."""
    values = [(seq, envelope.close(Domain.tokens(drawer_id), plain)) for seq, drawer_id, plain in rows]
    if not values:
        return
    create_table(connection)
    connection.executemany(f"INSERT OR REPLACE INTO {TOKEN_TABLE} (seq, blob) VALUES (?, ?)", values)  # noqa: S608


def delete_seqs(connection: sqlite3.Connection, seqs: Iterable[int]) -> None:
    """Drop the matrices of ``seqs`` (inside the caller's transaction; nothing when the table is absent)."""
    wanted = [(int(seq),) for seq in seqs]
    if wanted and table_exists(connection):
        connection.executemany(f"DELETE FROM {TOKEN_TABLE} WHERE seq = ?", wanted)  # noqa: S608


def read_blobs(connection: sqlite3.Connection, seqs: Sequence[int]) -> dict[int, tuple[str, bytes]]:
    """``seq -> (drawer id, stored blob)`` for the live drawers among ``seqs`` that hold a matrix."""
    if not seqs or not table_exists(connection):
        return {}
    found: dict[int, tuple[str, bytes]] = {}
    for first in range(0, len(seqs), _LOOKUP):
        chunk = [int(seq) for seq in seqs[first : first + _LOOKUP]]
        query = (
            f"SELECT t.seq, d.id, t.blob FROM {TOKEN_TABLE} t JOIN drawers d ON d.seq = t.seq "  # noqa: S608
            f"WHERE t.seq IN ({','.join('?' * len(chunk))})"
        )
        for seq, drawer_id, blob in connection.execute(query, chunk):
            found[int(seq)] = (str(drawer_id), bytes(blob))
    return found


def reseal_on_rotation(rekeying: Rekeying) -> list[tuple[str, bytes]]:
    """Rotation's hook: every matrix re-sealed (or re-tagged) under the new keys in the rotation's transaction.

    A row that fails under the old keys, or whose drawer is gone, is dropped (derived data: ``repair --tokens``
    rebuilds it) rather than refusing the rotation or carrying an unverifiable blob under the new keys."""
    connection = rekeying.connection
    if not table_exists(connection):
        return []
    query = f"SELECT t.seq, d.id, t.blob FROM {TOKEN_TABLE} t LEFT JOIN drawers d ON d.seq = t.seq"  # noqa: S608
    updates: list[tuple[bytes, int]] = []
    dropped: list[int] = []
    for seq, drawer_id, blob in connection.execute(query).fetchall():
        domain = Domain.tokens(str(drawer_id)) if drawer_id is not None else None
        plain = None if domain is None else open_for_rotation(rekeying, domain, bytes(blob))
        if plain is None:
            dropped.append(int(seq))
            continue
        assert domain is not None
        if rekeying.sealed:
            fresh = rekeying.new_sealer.seal(domain, plain)
        else:
            fresh = plain + tag_for(rekeying.new_keys, rekeying.vault_id, domain, plain)
        updates.append((fresh, int(seq)))
    connection.executemany(f"UPDATE {TOKEN_TABLE} SET blob = ? WHERE seq = ?", updates)  # noqa: S608
    delete_seqs(connection, dropped)
    return []  # no audit record echoes a matrix


def open_for_rotation(rekeying: Rekeying, domain: Domain, blob: bytes) -> bytes | None:
    """A derived blob opened (or its tag checked) under the OLD keys of a rotation (None: it fails)."""
    if rekeying.sealed:
        try:
            return rekeying.old_sealer.open(domain, blob)
        except IntegrityFailure:
            return None
    if len(blob) < _TAG_BYTES:
        return None
    plain, tag = blob[:-_TAG_BYTES], blob[-_TAG_BYTES:]
    expected = tag_for(rekeying.old_keys, rekeying.vault_id, domain, plain)
    return plain if hmac.compare_digest(expected, tag) else None
