"""The exit-code doctrine, on every command: 0 success, 1 the run failed, 2 an integrity verdict."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable

import click
from undercroft_core.errors import IntegrityError, UndercroftError

__all__ = ["EXIT_INTEGRITY", "EXIT_OK", "EXIT_RUN_FAILED", "database_verdict", "exit_code_for", "next_step", "run_cli"]

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


# The sqlite3 module's own refusal of a stored TEXT value that is not UTF-8. Every text this engine binds is
# a Python str, which the module encodes as valid UTF-8, so such a value was written beneath the engine (a
# flipped byte in a clear label column): a verdict, like a malformed page, never a run failure.
_UNDECODABLE = "Could not decode to UTF-8 column '"


def database_verdict(error: sqlite3.DatabaseError) -> str | None:
    """The integrity verdict an untyped database error stands for (a fixed sentence), or None for a run failure.

    The sentence never quotes the error's own text: it can carry a stored value.
    """
    code = getattr(error, "sqlite_errorname", "") or ""
    if code in _MALFORMED:
        return f"{_MALFORMED_MESSAGE} ({code})"
    message = str(error)
    if isinstance(error, sqlite3.OperationalError) and message.startswith(_UNDECODABLE):
        column = message[len(_UNDECODABLE) :].partition("'")[0]
        shown = column if column.isidentifier() and len(column) <= 64 else "?"
        return (
            f"the vault database holds a text value that is not UTF-8 (column {shown!r}): it was changed "
            "beneath the engine (tampering or disk corruption); preserve the evidence, run undercroft verify "
            "and restore a backup that verifies"
        )
    return None


def next_step(error: UndercroftError) -> str:
    """What a person should run next, for the failures that have one obvious answer (else empty)."""
    if type(error).__name__ == "VaultNotFound":  # by name: importing the store here would load it at start-up
        return (
            "; run `undercroft init` first (it creates the 'default' vault), or `undercroft vault list` "
            "to see the vaults this palace holds"
        )
    return ""


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
        say(f"error: {error}{next_step(error)}")
        return EXIT_RUN_FAILED
    except sqlite3.DatabaseError as error:
        if getattr(error, "sqlite_errorname", "") in _MALFORMED:
            say(f"integrity: {_MALFORMED_MESSAGE} ({error})")
            return EXIT_INTEGRITY
        verdict = database_verdict(error)
        if verdict is not None:
            say(f"integrity: {verdict}")
            return EXIT_INTEGRITY
        say(f"error: the vault database refused the operation: {error}")
        return EXIT_RUN_FAILED
    except (OSError, ValueError) as error:
        say(f"error: {error}")
        return EXIT_RUN_FAILED
    return result if isinstance(result, int) else EXIT_OK
