"""The status doctrine: every failure a client can cause is a 4xx with a precise message, never a 5xx.

400 a bad request naming the field; 401 always ``{"error":"unauthorized"}`` (the reason is logged, never sent);
403 a read-only refusal; 404 an unknown route or id; 409 with ``"class":"integrity"`` for an integrity verdict
and without it for a co-resident or state refusal (so a wrong posture never pages anyone); 413 above a body cap;
501 a route whose capability has not landed. An untyped failure is a 500 with a fixed sentence: its message
could quote a path, SQL or a drawer's words, so it is logged and never echoed.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping
from typing import Any

from starlette.responses import JSONResponse
from undercroft_config import Error as DeclarationError
from undercroft_core.errors import IntegrityError, InvalidInput, UndercroftError
from undercroft_store.errors import (
    BackupMismatch,
    BackupNotFound,
    DrawerNotFound,
    ReadOnlyStore,
    StoreClosed,
    VaultNotFound,
)
from undercroft_store.memory.kg.errors import SurfaceNotFound

from undercroft_cli._internal.exit_codes import database_verdict
from undercroft_cli.mcp.errors import ToolRefused, UnknownTool
from undercroft_cli.mcp.server import MALFORMED_REPLY

__all__ = ["HttpRefusal", "error_response", "failure_response", "unauthorized"]

log = logging.getLogger("undercroft.http")

_MALFORMED = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})


class HttpRefusal(Exception):
    """A refusal decided by the HTTP layer itself (bad JSON, a cap, an unknown route): status and message."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        """Refuse with ``status`` and ``message`` (extra keys join the body)."""
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


def error_response(status: int, message: str, extra: Mapping[str, Any] | None = None) -> JSONResponse:
    """``{"error": message, ...}`` with ``status``."""
    return JSONResponse({"error": message, **(extra or {})}, status_code=status)


def unauthorized() -> JSONResponse:
    """The one 401 of both gates: no reason, no class, the Bearer challenge (RFC 9110 §11.6.1)."""
    return JSONResponse({"error": "unauthorized"}, status_code=401, headers={"WWW-Authenticate": "Bearer"})


def _status(failure: UndercroftError) -> int:
    if isinstance(failure, ReadOnlyStore | ToolRefused):
        return 403
    if isinstance(failure, DrawerNotFound | VaultNotFound | BackupNotFound | SurfaceNotFound | UnknownTool):
        return 404
    if isinstance(failure, InvalidInput | BackupMismatch):
        return 400
    if isinstance(failure, StoreClosed):
        return 409
    return 409  # a valid request this vault's state refuses (exists, in use, moved, raced, unsupported)


def failure_response(failure: BaseException) -> JSONResponse:
    """The response for anything an operation raised."""
    if isinstance(failure, HttpRefusal):
        return error_response(failure.status, failure.message, failure.extra)
    if isinstance(failure, IntegrityError):
        return error_response(409, str(failure), {"class": "integrity"})
    if isinstance(failure, UndercroftError):
        return error_response(_status(failure), str(failure))
    if isinstance(failure, DeclarationError):
        return error_response(409, str(failure))
    if isinstance(failure, sqlite3.DatabaseError):
        code = getattr(failure, "sqlite_errorname", None) or "unknown result code"
        if code in _MALFORMED:
            return error_response(
                409, f"{MALFORMED_REPLY.removeprefix('integrity: ')} ({code})", {"class": "integrity"}
            )
        verdict = database_verdict(failure)
        if verdict is not None:
            return error_response(409, str(verdict), {"class": "integrity"})
    log.error("unexpected %s in a /v1 operation", type(failure).__name__, exc_info=failure)
    return error_response(500, f"{type(failure).__name__}: an unexpected failure stopped this request (details logged)")
