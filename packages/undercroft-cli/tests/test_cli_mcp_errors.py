"""Untyped failures in a tool handler: one error reply each, no message, no traceback, the server keeps serving."""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from undercroft_cli.mcp import McpDispatcher, ToolSession
from undercroft_cli.mcp.arguments import Arguments
from undercroft_cli.mcp.server import MALFORMED_REPLY
from undercroft_cli.mcp.tools import ToolSpec, registry
from undercroft_core import HashEmbedder
from undercroft_store import Palace, VaultStore

FIXED = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
SECRET = "the launch code is 0000 and Alice's diagnosis"  # stands in for a drawer's words inside a message
UNEXPECTED = "an unexpected failure stopped this call (details withheld: they may quote stored content)"


@pytest.fixture
def palace(tmp_path: Path) -> Iterator[Palace]:
    with Palace.from_env({"UNDERCROFT_HOME": str(tmp_path / "palace")}) as opened:
        opened.init()
        yield opened


@pytest.fixture
def store(palace: Palace) -> Iterator[VaultStore]:
    with palace.open_vault("default", HashEmbedder()) as opened:
        yield opened


def _corrupt() -> sqlite3.DatabaseError:
    error = sqlite3.DatabaseError(f"database disk image is malformed near {SECRET!r}")
    error.sqlite_errorcode, error.sqlite_errorname = sqlite3.SQLITE_CORRUPT, "SQLITE_CORRUPT"
    return error


def _not_a_db() -> sqlite3.DatabaseError:
    error = sqlite3.DatabaseError(f"file is not a database: {SECRET}")
    error.sqlite_errorcode, error.sqlite_errorname = sqlite3.SQLITE_NOTADB, "SQLITE_NOTADB"
    return error


def _full() -> sqlite3.OperationalError:
    error = sqlite3.OperationalError(f"database or disk is full while writing {SECRET}")
    error.sqlite_errorcode, error.sqlite_errorname = sqlite3.SQLITE_FULL, "SQLITE_FULL"
    return error


def _dispatcher(store: VaultStore, failure: BaseException) -> McpDispatcher:
    """The real registry with undercroft_status's handler replaced by one that raises `failure`."""

    def explode(_session: ToolSession, _arguments: Arguments) -> str:
        raise failure

    tools = registry()
    status = tools["undercroft_status"]
    tools["undercroft_status"] = ToolSpec(status.name, status.summary, status.properties, explode, status.required)
    return McpDispatcher(ToolSession(store, HashEmbedder(), clock=lambda: FIXED), tools)


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (_corrupt(), f"{MALFORMED_REPLY} (SQLITE_CORRUPT)"),
        (_not_a_db(), f"{MALFORMED_REPLY} (SQLITE_NOTADB)"),
        (_full(), "error: OperationalError: the vault database refused the operation (SQLITE_FULL)"),
        (sqlite3.DatabaseError(SECRET), "error: DatabaseError: the vault database refused the operation"
         " (unknown result code)"),
        (OSError(errno.ENOSPC, "No space left on device", f"/tmp/{SECRET}"), f"error: OSError: ENOSPC: {UNEXPECTED}"),
        (PermissionError(errno.EACCES, "Permission denied", SECRET), f"error: PermissionError: EACCES: {UNEXPECTED}"),
        (OSError(SECRET), f"error: OSError: {UNEXPECTED}"),
        (ValueError(f"invalid literal: {SECRET}"), f"error: ValueError: {UNEXPECTED}"),
        (KeyError(SECRET), f"error: KeyError: {UNEXPECTED}"),
        (RuntimeError(SECRET), f"error: RuntimeError: {UNEXPECTED}"),
    ],
)  # fmt: skip
def test_an_untyped_failure_is_one_reply_without_its_message_and_the_server_keeps_serving(
    store: VaultStore, failure: Exception, expected: str
) -> None:
    mcp = _dispatcher(store, failure)
    reply = mcp.call("undercroft_status", {})
    assert reply.is_error and reply.text == expected
    assert SECRET not in reply.text and "Traceback" not in reply.text and "\n" not in reply.text
    saved = mcp.call("undercroft_save", {"content": "Still serving after the failure.", "wing": "w", "room": "r"})
    assert not saved.is_error and saved.text.startswith("created: drawer_"), saved.text
    assert mcp.call("undercroft_status", {}) == reply  # the same failure again: the same single reply


def test_an_interrupt_is_not_swallowed(store: VaultStore) -> None:
    mcp = _dispatcher(store, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        mcp.call("undercroft_status", {})


def test_a_truncated_vault_db_under_an_open_server_is_an_integrity_reply(palace: Palace, store: VaultStore) -> None:
    mcp = McpDispatcher(ToolSession(store, HashEmbedder(), clock=lambda: FIXED))
    for index in range(40):  # enough pages that the cut lands inside the drawers table
        words = f"Decision {index}: the billing service keeps PostgreSQL, ticket {index * 7919}. " * 20
        assert not mcp.call("undercroft_save", {"content": words, "wing": "work", "room": "billing"}).is_error
    store._context.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    database = palace.vault_dir("default") / "vault.db"
    with database.open("r+b") as handle:
        handle.truncate(database.stat().st_size // 3)
    reply = mcp.call("undercroft_verify", {})
    assert reply.is_error and reply.text.startswith(MALFORMED_REPLY), reply.text
    assert "PostgreSQL" not in reply.text and "Traceback" not in reply.text
    assert mcp.call("undercroft_verify", {}) == reply  # still answering, with the same verdict


def test_a_declaration_refused_inside_a_call_is_a_typed_reply_naming_the_variable(store: VaultStore) -> None:
    # Issue 15 item 9: a Refused raised past start-up used to come back as "details withheld". Start-up now
    # refuses first; this is the defence in depth for a resolver gap.
    from undercroft_config import Refused, settings

    with pytest.raises(Refused) as refused:
        settings.trust_floor({"UNDERCROFT_TRUST_FLOOR": "bogus"})
    reply = _dispatcher(store, refused.value).call("undercroft_status", {})
    assert reply.is_error and reply.text.startswith("error: UNDERCROFT_TRUST_FLOOR='bogus' refuses to start")
    assert UNEXPECTED not in reply.text
