"""The exit-code doctrine, on every command: 0 success, 1 the run failed, 2 an integrity verdict."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable

import click
from undercroft_core.errors import IntegrityError, UndercroftError

__all__ = ["EXIT_INTEGRITY", "EXIT_OK", "EXIT_RUN_FAILED", "exit_code_for", "run_cli"]

EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_INTEGRITY = 2

# A database file whose pages are not a sound SQLite image was changed under the engine (tampering, or the
# disk): retrying cannot change the answer, so it is a verdict (exit 2), never a traceback with exit 1.
_MALFORMED = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})
_MALFORMED_MESSAGE = (
    "the vault database is malformed: possible tampering or disk corruption; "
    "preserve the evidence, run undercroft verify and restore a backup that verifies"
)


def exit_code_for(error: BaseException) -> int:
    """2 for an integrity verdict (whatever raised it), 1 for every other failure."""
    return EXIT_INTEGRITY if isinstance(error, IntegrityError) else EXIT_RUN_FAILED


def run_cli(group: click.Group, args: list[str] | None = None, *, echo: Callable[[str], None] | None = None) -> int:
    """Run ``group`` and map every outcome to the doctrine's exit code (click's usage errors become 1, not 2)."""
    say = echo or (lambda line: click.echo(line, err=True))
    try:
        result = group.main(args=args, prog_name="undercroft", standalone_mode=False)
    except click.exceptions.Abort:
        say("aborted")
        return EXIT_RUN_FAILED
    except click.ClickException as error:
        error.show(file=sys.stderr)
        return EXIT_RUN_FAILED
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except IntegrityError as error:
        say(f"integrity: {error}")
        return EXIT_INTEGRITY
    except UndercroftError as error:
        say(f"error: {error}")
        return EXIT_RUN_FAILED
    except sqlite3.DatabaseError as error:
        if getattr(error, "sqlite_errorname", "") in _MALFORMED:
            say(f"integrity: {_MALFORMED_MESSAGE} ({error})")
            return EXIT_INTEGRITY
        say(f"error: the vault database refused the operation: {error}")
        return EXIT_RUN_FAILED
    except (OSError, ValueError) as error:
        say(f"error: {error}")
        return EXIT_RUN_FAILED
    return result if isinstance(result, int) else EXIT_OK
