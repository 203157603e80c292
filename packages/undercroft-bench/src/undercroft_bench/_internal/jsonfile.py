"""Reading a JSON data file with typed, precise refusals."""

from __future__ import annotations

import hashlib
import json
import pathlib

from undercroft_bench.errors import DataError

__all__ = ["read_json", "sha256_of"]


def read_json(path: pathlib.Path, what: str) -> object:
    """Parse `path` as UTF-8 JSON; a missing file or invalid JSON raises DataError naming `what` and the path."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{what} file not found: {path}") from None
    except IsADirectoryError:
        raise DataError(f"{what} path is a directory, not a file: {path}") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DataError(f"{what} file is not valid UTF-8 JSON: {path}: {error}") from None


def sha256_of(path: pathlib.Path) -> str:
    """Hex SHA-256 of the file's bytes, recorded in JSON reports so a run names exactly what it read."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
