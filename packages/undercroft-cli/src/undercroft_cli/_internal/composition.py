"""The composition root: the palace from the environment and the embedder the CLI injects into the store."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager

import click
from undercroft_config import settings
from undercroft_core.embedder import Embedder
from undercroft_core.hash_embedder import HashEmbedder
from undercroft_store import Palace, VaultStore

from undercroft_cli.errors import Error

__all__ = ["EmbedderUnavailable", "open_palace", "open_reader", "open_store", "pick_embedder"]


class EmbedderUnavailable(Error):
    """The declared embedder is not built into this increment of the CLI."""


def pick_embedder(env: Mapping[str, str] | None = None) -> Embedder:
    """The embedder ``UNDERCROFT_EMBEDDER`` names; the hash embedder by default (zero downloads)."""
    declared = settings.embedder(env)
    name = getattr(declared, "value", str(declared))
    if name == "hash":
        return HashEmbedder()
    raise EmbedderUnavailable(f"UNDERCROFT_EMBEDDER={name} is not wired into this CLI yet; unset it to use hash")


def open_palace(*, read_only: bool = False, env: Mapping[str, str] | None = None) -> Palace:
    """The palace ``UNDERCROFT_HOME`` names, keyed as ``UNDERCROFT_PASSPHRASE`` declares."""
    return Palace.from_env(os.environ if env is None else env, read_only=read_only)


@contextmanager
def open_store(vault: str, *, read_only: bool = False) -> Iterator[VaultStore]:
    """Open ``vault`` with the composed embedder; palace and store keys are wiped on exit.

    Every heal the open performed (an anchor fast-forwarded: how far behind; a staged rotation promoted) is
    reported on stderr as ``healed: …`` before the command runs — the heal erases the evidence it acted on,
    so it is never silent (it is also logged where ``stats`` shows it).
    """
    embedder = pick_embedder()
    with open_palace(read_only=read_only) as palace, palace.open_vault(vault, embedder, read_only=read_only) as store:
        for line in store.healed:
            click.echo(f"healed: {line}", err=True)
        yield store


def open_reader(vault: str) -> AbstractContextManager[VaultStore]:
    """Open ``vault`` for a command that prints drawer or fact content: read-only, unless reads are audited.

    Under ``UNDERCROFT_READ_AUDIT=chain`` the command's one ``read/<op>`` record must land, and a read-only
    handle cannot append (it warns and serves unaudited — the replica posture, not an operator's read), so
    the handle is writable then. Garbage in the declaration refuses here, before anything is opened.
    """
    return open_store(vault, read_only=str(settings.read_audit()) != "chain")
