"""pgvector through ``psycopg`` (the ``pgvector`` extra): one table per mirror plus a table of mirror spaces.

The DSN's host is checked like an outward URL: a non-loopback host must say ``sslmode=require`` or stricter,
and ``UNDERCROFT_INDEX_CA`` turns it into ``verify-full`` against the pin (the pin's file is libpq's
``sslrootcert``). Table names are `collection_name` output, checked against ``[a-z0-9_]`` before they are
formatted into SQL; every value is a bound parameter. Tested against a real PostgreSQL with pgvector (the
PyPI ``pgserver`` wheel, a dev dependency). No ANN index is created: the server answers with an exact scan.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

from undercroft_net import CaPin, TransportRefused, is_loopback_host, police

from undercroft_index.errors import BackendFailed, IndexRefused
from undercroft_index.remote import MirrorInfo, MirrorRecord, candidate_ids, check_k

__all__ = ["SPACES_TABLE", "PgvectorIndex", "dsn_host"]

#: Where each mirror's embedding space is recorded (pgvector tables carry no free metadata).
SPACES_TABLE = "undercroft_mirrors"
_TABLE = re.compile(r"[a-z][a-z0-9_]{0,62}")
_STRICT = ("require", "verify-ca", "verify-full")


def _table(collection: str) -> str:
    if _TABLE.fullmatch(collection) is None:
        raise IndexRefused(f"pgvector: {collection!r} is not a safe table name")
    return collection


def _vector(values: Sequence[float]) -> str:
    return "[" + ",".join(repr(float(v)) for v in values) + "]"


def dsn_host(dsn: str) -> tuple[str, str]:
    """``(host, sslmode)`` of a libpq DSN, URL or key=value form (an empty host is the local socket)."""
    if dsn.startswith(("postgres://", "postgresql://")):
        parts = urlsplit(dsn)
        return parts.hostname or "", (parse_qs(parts.query).get("sslmode") or [""])[-1]
    fields = dict(item.split("=", 1) for item in dsn.split() if "=" in item)
    return fields.get("host", ""), fields.get("sslmode", "")


class PgvectorIndex:
    """A PostgreSQL database with the ``vector`` extension (use `connect`; tests hand a connection in)."""

    name = "pgvector"

    def __init__(self, connection: Any, destination: str) -> None:
        """Wrap an open DB-API connection (``psycopg`` style ``%s`` parameters)."""
        self._connection = connection
        self._destination = destination

    @classmethod
    def connect(cls, dsn: str, *, variable: str = "UNDERCROFT_PGVECTOR_DSN", pin: CaPin | None = None) -> PgvectorIndex:
        """Connect to ``dsn``: off loopback, TLS is required (and verified against ``pin`` when declared)."""
        host, sslmode = dsn_host(dsn)
        local = host == "" or host.startswith("/")
        if not local:
            try:
                police(f"https://{host if ':' not in host else f'[{host}]'}/", variable=variable, pin=pin)
            except TransportRefused as error:
                raise BackendFailed(f"pgvector: {error}") from None
            if not is_loopback_host(host) and sslmode not in _STRICT:
                raise BackendFailed(f"pgvector: {variable}: the non-loopback host {host!r} needs sslmode=require")
        options: dict[str, Any] = {}
        if pin is not None:
            options = {"sslmode": "verify-full", "sslrootcert": str(pin.path)}
        try:
            import psycopg
        except ImportError:
            raise BackendFailed(
                "pgvector: psycopg is not installed (pip install 'undercroft-index[pgvector]')"
            ) from None
        try:
            connection = psycopg.connect(dsn, connect_timeout=10, **options)
        except psycopg.Error as error:
            raise BackendFailed(f"pgvector: cannot connect to {host or 'the local socket'}: {error}") from None
        return cls(connection, f"postgres:{host or 'local'}")

    @property
    def destination(self) -> str:
        """``postgres:<host>`` (never the DSN: it may hold a password)."""
        return self._destination

    def _run(self, step: str, sql: str, params: Sequence[object] = (), *, fetch: str = "none") -> Any:
        try:
            with self._connection.cursor() as cursor:
                cursor.execute(sql, tuple(params))
                result = cursor.fetchall() if fetch == "all" else cursor.fetchone() if fetch == "one" else None
            self._connection.commit()
            return result
        except Exception as error:  # noqa: BLE001 - any driver error is one run failure, rolled back
            try:
                self._connection.rollback()
            except Exception:  # noqa: BLE001, S110 - the connection may be gone; the first error is the one to report
                pass
            raise BackendFailed(f"pgvector: {step}: {type(error).__name__}: {str(error)[:200]}") from None

    def _space(self, collection: str) -> tuple[bool, str | None]:
        exists = self._run("describe", "SELECT to_regclass(%s) IS NOT NULL", (collection,), fetch="one")
        if not exists or not exists[0]:
            return False, None
        row = self._run(
            "describe",
            f"SELECT space FROM {SPACES_TABLE} WHERE collection = %s",  # noqa: S608 - a constant name
            (collection,),
            fetch="one",
        )
        return True, (row[0] if row and isinstance(row[0], str) else None)

    def describe(self, collection: str) -> MirrorInfo | None:
        """The table's row count and recorded space, or None when the table does not exist."""
        exists, space = self._space(_table(collection))
        if not exists:
            return None
        return MirrorInfo(collection, self.count(collection), space)

    def ensure(self, collection: str, *, space: str, dimension: int) -> None:
        """Create the extension, the spaces table and the mirror's table unless they exist; refuse another space."""
        table = _table(collection)
        self._run("create extension", "CREATE EXTENSION IF NOT EXISTS vector")
        self._run(
            "create spaces table",
            f"CREATE TABLE IF NOT EXISTS {SPACES_TABLE} (collection text PRIMARY KEY, space text NOT NULL)",
        )
        exists, held = self._space(table)
        if exists and held is not None and held != space:
            from undercroft_index._internal.shapes import check_space

            check_space("pgvector", collection, held, space)
        self._run(
            "create table",
            f"CREATE TABLE IF NOT EXISTS {table} (id text PRIMARY KEY, content bytea NOT NULL, "
            "sealed boolean NOT NULL, wing text NOT NULL, room text NOT NULL, space text NOT NULL, "
            f"embedding vector({int(dimension)}) NOT NULL)",
        )
        self._run(
            "record space",
            f"INSERT INTO {SPACES_TABLE} (collection, space) VALUES (%s, %s) "  # noqa: S608 - a constant name
            "ON CONFLICT (collection) DO NOTHING",
            (collection, space),
        )

    def push(self, collection: str, records: Sequence[MirrorRecord], *, space: str) -> None:
        """Upsert one batch in one transaction."""
        table = _table(collection)
        sql = (
            f"INSERT INTO {table} (id, content, sealed, wing, room, space, embedding) "  # noqa: S608 - checked name
            "VALUES (%s, %s, %s, %s, %s, %s, %s::vector) ON CONFLICT (id) DO UPDATE SET content = EXCLUDED.content, "
            "sealed = EXCLUDED.sealed, wing = EXCLUDED.wing, room = EXCLUDED.room, space = EXCLUDED.space, "
            "embedding = EXCLUDED.embedding"
        )
        try:
            with self._connection.cursor() as cursor:
                cursor.executemany(
                    sql, [(r.id, r.content, r.sealed, r.wing, r.room, space, _vector(r.embedding)) for r in records]
                )
            self._connection.commit()
        except Exception as error:  # noqa: BLE001 - one run failure; the batch is rolled back whole
            self._connection.rollback()
            raise BackendFailed(f"pgvector: upsert: {type(error).__name__}: {str(error)[:200]}") from None

    def query(self, collection: str, vector: Sequence[float], k: int, *, wing: str | None = None) -> list[str]:
        """``ORDER BY embedding <=> %s::vector`` (cosine distance), optionally ``WHERE wing = %s``."""
        table = _table(collection)
        where, params = ("WHERE wing = %s ", (wing,)) if wing is not None else ("", ())
        rows = self._run(
            "query",
            f"SELECT id FROM {table} {where}ORDER BY embedding <=> %s::vector LIMIT %s",  # noqa: S608 - checked name
            (*params, _vector(vector), check_k(k)),
            fetch="all",
        )
        if not isinstance(rows, list):
            raise BackendFailed("pgvector: query: no rows came back")
        return candidate_ids(
            [row[0] if isinstance(row, tuple | list) and row else None for row in rows], k, backend="pgvector"
        )

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """``DELETE … WHERE id = ANY(%s)``."""
        if ids:
            self._run("delete", f"DELETE FROM {_table(collection)} WHERE id = ANY(%s)", (list(ids),))  # noqa: S608

    def count(self, collection: str) -> int:
        """``SELECT count(*)``."""
        row = self._run("count", f"SELECT count(*) FROM {_table(collection)}", fetch="one")  # noqa: S608
        value = row[0] if row else None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise BackendFailed(f"pgvector: count: not a non-negative integer ({value!r})")
        return value

    def drop(self, collection: str) -> None:
        """Drop the table and forget its space."""
        table = _table(collection)
        self._run("drop", f"DROP TABLE IF EXISTS {table}")
        exists = self._run("drop", "SELECT to_regclass(%s) IS NOT NULL", (SPACES_TABLE,), fetch="one")
        if exists and exists[0]:
            self._run("drop", f"DELETE FROM {SPACES_TABLE} WHERE collection = %s", (collection,))  # noqa: S608

    def settle(self, collection: str) -> None:
        """Nothing to do: each batch committed in its own transaction."""
        del collection

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()
