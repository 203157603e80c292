"""Is a vault database in use? An exclusive SQLite lock probe (no lock file).

Every SQLite connection to a WAL database — writable or ``mode=ro`` — holds a shared lock on the file
for as long as it is open, idle or not. A connection in ``locking_mode=EXCLUSIVE`` that begins an
exclusive transaction therefore fails at once (``timeout=0``) while any other connection, in this
process or another, holds the vault open. What it cannot see: an ``immutable=1`` reader, which takes
no locks at all (the write-protected-directory escalation), and a process that opens the vault after
the probe returned.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

__all__ = ["database_in_use"]


def database_in_use(db_path: Path) -> bool:
    """True when another connection holds ``db_path`` open; False when it is free or does not exist."""
    if not db_path.is_file():
        return False
    try:
        connection = sqlite3.connect(f"file:{quote(str(db_path))}?mode=rw", uri=True, isolation_level=None, timeout=0)
    except sqlite3.OperationalError:
        return False
    try:
        connection.execute("PRAGMA locking_mode = EXCLUSIVE")
        connection.execute("BEGIN EXCLUSIVE")
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        connection.execute("ROLLBACK")
        return False
    except sqlite3.DatabaseError as error:
        # Locked or busy: someone holds it. Anything else (not a database at all) is nobody's open handle.
        return "locked" in str(error) or "busy" in str(error)
    finally:
        connection.close()
