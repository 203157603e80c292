"""The small Python facade for downstream applications: ``Palace.open()``, then ``search`` and ``remember``.

``undercroft_store.Palace`` is this module's `Palace`, the full `palace.Palace` plus one class method,
`Palace.open`, which binds a home, opens one vault with the hash embedder unless told otherwise, and — only
when asked (``create=True``) — initialises the home and the vault on first use. It returns a `Memory`: the
opened vault with two everyday methods (`Memory.search`, `Memory.remember`) beside the full `VaultStore`
(`Memory.vault`). Closing the `Memory` closes the vault and wipes both the vault keys and the master key.

It stands above every feature (it reaches the search engine), so it sits in the store's top layer beside
`wiring`; nothing inside the store imports it. See docs/python-api.md.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from undercroft_core.embedder import Embedder
from undercroft_core.hash_embedder import HashEmbedder

from undercroft_store import palace as _palace
from undercroft_store.errors import CallerRequired, VaultNotFound
from undercroft_store.kernel.writes import WriteResult
from undercroft_store.store import VaultStore

if TYPE_CHECKING:  # the search engine loads at the first `Memory.search`: `import undercroft_store` stays light
    from undercroft_store.search import SearchResult

__all__ = ["DEFAULT_ROOM", "DEFAULT_WING", "Memory", "Palace"]

#: Where `Memory.remember` files text when no wing/room is named (the same defaults as `undercroft remember`).
DEFAULT_WING = "general"
DEFAULT_ROOM = "notes"


class Memory:
    """One opened vault for an application: `search`, `remember`, and the full `VaultStore` as `vault`."""

    def __init__(self, palace: _palace.Palace, vault: VaultStore) -> None:
        """Own ``palace`` and ``vault``: `close` closes both."""
        self._palace = palace
        self.vault = vault

    @property
    def name(self) -> str:
        """The vault's name."""
        return self.vault.name

    def search(
        self, query: str, *, wing: str | None = None, room: str | None = None, kind: str | None = None, limit: int = 10
    ) -> SearchResult:
        """Hybrid search (every hit HMAC-verified) under the ``UNDERCROFT_*`` search settings; ``.hits`` is the page.

        Bad arguments (an empty query, a limit outside 1–1000, an unsafe wing name) raise `InvalidSearch`."""
        from undercroft_store.search import Searcher, SearchRequest

        request = SearchRequest(query, limit=limit, wing=wing, room=room, kind=kind)
        return Searcher.from_settings(self.vault, self.vault.embedder).search(request)

    def remember(
        self,
        text: str,
        *,
        added_by: str | None = None,
        wing: str = DEFAULT_WING,
        room: str = DEFAULT_ROOM,
        kind: str | None = None,
    ) -> list[WriteResult]:
        """Save ``text`` verbatim (normalised, chunked, screened); one `WriteResult` per drawer.

        ``added_by`` — who is writing — has no default, by design: it is recorded on every drawer and in the
        audit chain, and a library cannot know its caller. Leaving it out raises `CallerRequired`."""
        if not isinstance(added_by, str) or not added_by.strip():
            raise CallerRequired(
                "remember() needs added_by='<who is writing>': the caller is a required argument, by design "
                "(it is recorded on every drawer and in the audit chain, so there is no default to fall back on)"
            )
        return self.vault.remember(text, wing=wing, room=room, kind=kind, added_by=added_by)

    def close(self) -> None:
        """Close the vault (wiping its keys), then the palace (wiping the master key); idempotent."""
        try:
            self.vault.close()
        finally:
            self._palace.close()

    def __enter__(self) -> Memory:
        """Use as a context manager."""
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Close on leaving the ``with`` block."""
        self.close()


class Palace(_palace.Palace):
    """A palace home directory (see `undercroft_store.palace.Palace`), plus `Palace.open` for applications."""

    @classmethod
    def open(
        cls,
        home: str | Path | None = None,
        *,
        vault: str = _palace.DEFAULT_VAULT,
        create: bool = False,
        embedder: Embedder | None = None,
        read_only: bool = False,
    ) -> Memory:
        """Open vault ``vault`` in ``home`` (None: ``UNDERCROFT_HOME``, default ``~/.undercroft``) as a `Memory`.

        ``create=True`` initialises on first use: the master key and the vault are created when absent (the
        ``default`` vault exactly as `undercroft init` creates it). Without it a missing vault raises
        `VaultNotFound`, naming both remedies. The embedder defaults to the hash embedder; a vault that
        recorded another refuses it with `EmbedderMismatch` rather than mixing vector spaces. The passphrase,
        when the installation uses one, is read from ``UNDERCROFT_PASSPHRASE``."""
        opened = cls.from_env(read_only=read_only)
        if home is not None:  # nothing is read until first need, so rebinding the home here is safe
            opened.home = Path(home).expanduser()
        try:
            if vault not in opened.list_vaults():
                if not create or read_only:
                    raise VaultNotFound(
                        f"no vault named {vault!r} in {opened.home}: run `undercroft init` first "
                        "(or `undercroft vault create` for another name), or pass create=True"
                    )
                if vault == _palace.DEFAULT_VAULT:
                    opened.init()
                else:
                    opened.create_vault(vault)
            store = opened.open_vault(vault, embedder or HashEmbedder(), read_only=read_only)
        except BaseException:
            opened.close()
            raise
        return Memory(opened, store)
