"""The control plane's own SQLite: instances with sealed credentials, tenants with MAC'd tokens, an admin log.

One connection per operation, so a read replica sees a state file replaced underneath it (a copied snapshot)
at its next request, and the writer never shares a connection between threads. Every admin change and its
log line commit in one transaction, which also stamps ``last_write``. A tenant row carries a MAC over its
mapping: a row edited in the file (pointing a tenant at another vault or instance, or swapping token MACs) is
refused as an integrity failure, never followed.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from undercroft_orchestrator._internal.names import checked_name
from undercroft_orchestrator._internal.sealing import Keys, generate_token
from undercroft_orchestrator.errors import Refused, StateError

__all__ = ["Instance", "State", "Tenant"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS instances (
    name TEXT PRIMARY KEY, url TEXT NOT NULL, sealed BLOB NOT NULL, added_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tenants (
    id TEXT PRIMARY KEY, vault TEXT NOT NULL, instance TEXT NOT NULL REFERENCES instances(name),
    token_mac TEXT NOT NULL UNIQUE, row_mac TEXT NOT NULL, created_at TEXT NOT NULL, rotated_at TEXT,
    migrating_until REAL
);
CREATE TABLE IF NOT EXISTS admin_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, action TEXT NOT NULL, subject TEXT NOT NULL,
    detail TEXT NOT NULL
);
"""

_SELECT_TENANT = "SELECT id, vault, instance, token_mac, row_mac, created_at, rotated_at, migrating_until FROM tenants"

_OPENED_BOUND = 1024
"""How many opened credential sets a state keeps (one per registered instance in practice)."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Instance:
    """A registered engine: its name, its policed URL and the credentials the control plane presents to it."""

    name: str
    url: str
    bearer: str | None
    assertion_secret: str | None
    added_at: str


@dataclass(frozen=True)
class Tenant:
    """A tenant: its vault, the instance holding it, and whether a migration holds its writes."""

    id: str
    vault: str
    instance: str
    created_at: str
    rotated_at: str | None
    migrating_until: float | None

    @property
    def migrating(self) -> bool:
        """True while a migration's lease holds this tenant's writes (the lease lapses if the migrator dies)."""
        return self.migrating_until is not None and self.migrating_until > time.time()


class State:
    """The state database at ``path``, opened as the writer or (``read_only``) as a replica."""

    def __init__(self, path: Path, keys: Keys, *, read_only: bool = False) -> None:
        """Open (the writer creates) the database and check that ``keys`` are the ones it was made with."""
        self.path = path
        self.keys = keys
        self.read_only = read_only
        self._opened: dict[tuple[str, str, bytes], Instance] = {}
        if read_only:
            if not path.is_file():
                raise StateError(f"the state database {str(path)!r} does not exist: a replica serves a copy of it")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._connection() as db:
                db.executescript(_SCHEMA)
                db.execute("INSERT OR IGNORE INTO meta VALUES ('key_check', ?)", (keys.check,))
                db.execute("INSERT OR IGNORE INTO meta VALUES ('last_write', ?)", (_now(),))
        with self._connection() as db:
            row = db.execute("SELECT v FROM meta WHERE k = 'key_check'").fetchone()
        if row is None or row[0] != keys.check:
            raise StateError(
                f"UNDERCROFT_ORCH_KEY does not open the state database {str(path)!r}: it was created under another key"
            )

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        try:
            if self.read_only:
                db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
            else:
                db = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        except sqlite3.Error as error:
            raise StateError(f"the state database {str(self.path)!r} cannot be opened: {error}") from None
        try:
            yield db
        except sqlite3.DatabaseError as error:
            raise StateError(f"the state database {str(self.path)!r} failed: {error}") from None
        finally:
            db.close()

    @contextmanager
    def _change(self, action: str, subject: str, detail: dict[str, object]) -> Iterator[sqlite3.Connection]:
        """One admin change: its statements, its log line and ``last_write`` commit together or not at all."""
        if self.read_only:
            raise StateError("a read replica opens the state database read-only: admin changes go to the writer")
        with self._connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                at = _now()
                db.execute(
                    "INSERT INTO admin_log (at, action, subject, detail) VALUES (?, ?, ?, ?)",
                    (at, action, subject, json.dumps(detail, sort_keys=True)),
                )
                db.execute("UPDATE meta SET v = ? WHERE k = 'last_write'", (at,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    # --- reads ------------------------------------------------------------------------------------------

    def last_write(self) -> str:
        """When the last admin change committed (replication lag shows as this lagging on a replica)."""
        with self._connection() as db:
            row = db.execute("SELECT v FROM meta WHERE k = 'last_write'").fetchone()
        return str(row[0]) if row else ""

    def instances(self) -> list[dict[str, str]]:
        """Every instance's name, URL and registration time (never its credentials)."""
        with self._connection() as db:
            rows = db.execute("SELECT name, url, added_at FROM instances ORDER BY name").fetchall()
        return [{"name": n, "url": u, "added_at": a} for n, u, a in rows]

    def instance(self, name: str) -> Instance:
        """The instance ``name`` with its credentials opened; `Refused` when none is registered."""
        with self._connection() as db:
            return self._instance(db, name)

    def _instance(self, db: sqlite3.Connection, name: str) -> Instance:
        row = db.execute("SELECT url, sealed, added_at FROM instances WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise Refused(f"no instance named {name!r} is registered (instance-list shows them)")
        url, sealed, added_at = str(row[0]), bytes(row[1]), str(row[2])
        # The row is read every time; only the opening of the very same sealed bytes is remembered (a changed
        # row, URL or blob is opened afresh, so an edit is never served from memory).
        key = (name, url, sealed)
        opened = self._opened.get(key)
        if opened is None:
            credentials = self.keys.open(sealed, name=name, url=url)
            opened = Instance(name, url, credentials.get("bearer"), credentials.get("assertion_secret"), added_at)
            if len(self._opened) >= _OPENED_BOUND:
                self._opened.clear()
            self._opened[key] = opened
        return opened

    def route(self, token: str) -> tuple[Tenant, Instance] | None:
        """The data plane's one lookup: the tenant ``token`` resolves to and its instance, in one connection."""
        mac = self.keys.token_mac(token)
        with self._connection() as db:
            tenant = self._tenant(db.execute(_SELECT_TENANT + " WHERE token_mac = ?", (mac,)).fetchone())
            if tenant is None:
                return None
            return tenant, self._instance(db, tenant.instance)

    def _tenant(self, row: tuple[object, ...] | None) -> Tenant | None:
        if row is None:
            return None
        tenant_id, vault, instance, token_mac, row_mac, created, rotated, migrating = row
        expected = self.keys.row_mac(str(tenant_id), str(vault), str(instance), str(token_mac))
        if expected != row_mac:
            raise StateError(f"tenant {tenant_id!r}: its row does not match its MAC (edited in the state file)")
        return Tenant(
            str(tenant_id),
            str(vault),
            str(instance),
            str(created),
            None if rotated is None else str(rotated),
            None if migrating is None else float(str(migrating)),
        )

    def tenant(self, tenant_id: str) -> Tenant:
        """The tenant ``tenant_id``; `Refused` when there is none."""
        with self._connection() as db:
            row = db.execute(_SELECT_TENANT + " WHERE id = ?", (tenant_id,)).fetchone()
        tenant = self._tenant(row)
        if tenant is None:
            raise Refused(f"no tenant {tenant_id!r} exists")
        return tenant

    def tenant_by_token(self, token: str) -> Tenant | None:
        """The tenant whose token is ``token`` (looked up by its MAC), or ``None``."""
        mac = self.keys.token_mac(token)
        with self._connection() as db:
            row = db.execute(_SELECT_TENANT + " WHERE token_mac = ?", (mac,)).fetchone()
        return self._tenant(row)

    def tenants(self) -> list[Tenant]:
        """Every tenant, by id."""
        with self._connection() as db:
            rows = db.execute(_SELECT_TENANT + " ORDER BY id").fetchall()
        return [t for t in (self._tenant(row) for row in rows) if t is not None]

    # --- admin changes ----------------------------------------------------------------------------------

    def add_instance(self, name: str, url: str, bearer: str | None, assertion_secret: str | None) -> None:
        """Register an engine whose URL the transport policy already accepted."""
        checked_name("instance name", name)
        sealed = self.keys.seal({"bearer": bearer, "assertion_secret": assertion_secret}, name=name, url=url)
        with self._change("instance-add", name, {"url": url}) as db:
            if db.execute("SELECT 1 FROM instances WHERE name = ?", (name,)).fetchone():
                raise Refused(f"an instance named {name!r} is already registered (instance-remove it first)")
            db.execute("INSERT INTO instances VALUES (?, ?, ?, ?)", (name, url, sealed, _now()))

    def remove_instance(self, name: str) -> None:
        """Forget an engine; refused while any tenant lives on it."""
        with self._change("instance-remove", name, {}) as db:
            if not db.execute("SELECT 1 FROM instances WHERE name = ?", (name,)).fetchone():
                raise Refused(f"no instance named {name!r} is registered")
            held = [r[0] for r in db.execute("SELECT id FROM tenants WHERE instance = ? ORDER BY id", (name,))]
            if held:
                raise Refused(f"instance {name!r} still holds tenants {', '.join(held)}: migrate them first")
            db.execute("DELETE FROM instances WHERE name = ?", (name,))

    def create_tenant(self, tenant_id: str, instance: str) -> str:
        """Map a new tenant to its vault (named after it) on ``instance``; the token, returned once."""
        checked_name("tenant id", tenant_id)
        token = generate_token()
        mac = self.keys.token_mac(token)
        row_mac = self.keys.row_mac(tenant_id, tenant_id, instance, mac)
        with self._change("tenant-create", tenant_id, {"instance": instance}) as db:
            if not db.execute("SELECT 1 FROM instances WHERE name = ?", (instance,)).fetchone():
                raise Refused(f"no instance named {instance!r} is registered")
            if db.execute("SELECT 1 FROM tenants WHERE id = ?", (tenant_id,)).fetchone():
                raise Refused(f"tenant {tenant_id!r} already exists (tenant-rotate gives it a new token)")
            db.execute(
                "INSERT INTO tenants (id, vault, instance, token_mac, row_mac, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (tenant_id, tenant_id, instance, mac, row_mac, _now()),
            )
        return token

    def rotate_tenant(self, tenant_id: str) -> str:
        """A new token for ``tenant_id``; the old one stops resolving in the same statement."""
        tenant = self.tenant(tenant_id)
        token = generate_token()
        mac = self.keys.token_mac(token)
        row_mac = self.keys.row_mac(tenant.id, tenant.vault, tenant.instance, mac)
        with self._change("tenant-rotate", tenant_id, {}) as db:
            db.execute(
                "UPDATE tenants SET token_mac = ?, row_mac = ?, rotated_at = ? WHERE id = ? AND instance = ?",
                (mac, row_mac, _now(), tenant_id, tenant.instance),
            )
        return token

    def repoint_tenant(self, tenant_id: str, instance: str, *, action: str = "tenant-repoint") -> Tenant:
        """Move ``tenant_id``'s mapping to ``instance`` (the caller has checked that it holds the vault)."""
        tenant = self.tenant(tenant_id)
        with self._connection() as db:
            row = db.execute("SELECT token_mac FROM tenants WHERE id = ?", (tenant_id,)).fetchone()
        token_mac = str(row[0])
        row_mac = self.keys.row_mac(tenant.id, tenant.vault, instance, token_mac)
        with self._change(action, tenant_id, {"from": tenant.instance, "to": instance}) as db:
            if not db.execute("SELECT 1 FROM instances WHERE name = ?", (instance,)).fetchone():
                raise Refused(f"no instance named {instance!r} is registered")
            changed = db.execute(
                "UPDATE tenants SET instance = ?, row_mac = ?, migrating_until = NULL "
                "WHERE id = ? AND instance = ? AND token_mac = ?",
                (instance, row_mac, tenant_id, tenant.instance, token_mac),
            ).rowcount
            if changed != 1:
                raise Refused(f"tenant {tenant_id!r} changed while it was being re-pointed; nothing was moved")
        return self.tenant(tenant_id)

    def hold_writes(self, tenant_id: str, seconds: float | None) -> None:
        """Hold (for ``seconds``, a lease) or release (``None``) the tenant's writes on the data plane."""
        until = None if seconds is None else time.time() + seconds
        action = "migration-hold" if seconds is not None else "migration-release"
        with self._change(action, tenant_id, {}) as db:
            db.execute("UPDATE tenants SET migrating_until = ? WHERE id = ?", (until, tenant_id))

    def record(self, action: str, subject: str, detail: dict[str, object]) -> None:
        """Log an admin act that changes no row (a migration's judgement, a relayed operator call)."""
        with self._change(action, subject, detail):
            pass

    def log(self, limit: int = 100) -> list[dict[str, object]]:
        """The most recent admin log lines, newest first."""
        with self._connection() as db:
            rows = db.execute(
                "SELECT seq, at, action, subject, detail FROM admin_log ORDER BY seq DESC LIMIT ?", (limit,)
            ).fetchall()
        return [{"seq": s, "at": a, "action": c, "subject": j, "detail": json.loads(d)} for s, a, c, j, d in rows]
