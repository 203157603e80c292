"""Vault lifecycle: what ``undercroft vault create|list|delete`` and ``POST|GET /v1/vaults``, ``DELETE
/v1/vaults/{id}`` do, said once.

A vault is created with its level and its vector space. The space is ``hash`` (the default: the engine embeds
with whatever ``UNDERCROFT_EMBEDDER`` composes) or ``external:<name>@<dim>``: the caller supplies every vector,
on every save and search, and the engine never embeds. An external space is recorded in the vault before any
drawer exists, so every later open — from the CLI, MCP or /v1 — offers that space and no other
(``composition.vault_embedder``). The declaration is parsed before anything is created: a malformed one leaves
no vault behind. Deletion removes every file of the vault and is irreversible; a name the palace lacks is
`VaultNotFound` before anything is touched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from undercroft_core.external_embedder import EXTERNAL_PREFIX, ExternalEmbedder
from undercroft_store import Palace

from undercroft_cli.operations.values import ValueRefused

__all__ = ["CreatedVault", "create_vault", "delete_vault", "list_vaults", "parse_vault_embedder"]


@dataclass(frozen=True, slots=True)
class CreatedVault:
    """A vault just created: its name, level, vector space (the embedder label) and directory."""

    name: str
    level: str
    embedder: str
    path: Path


def parse_vault_embedder(declared: str | None) -> ExternalEmbedder | None:
    """``None`` for the default space (absent or ``hash``), the external space for ``external:<name>@<dim>``.

    Anything else is `ValueRefused`; a malformed external declaration is core's ``InvalidInput`` naming it.
    """
    if declared is None or declared == "hash":
        return None
    if not declared.startswith(EXTERNAL_PREFIX):
        raise ValueRefused("hash or external:<name>@<dim>", repr(declared)[:80])
    return ExternalEmbedder.parse(declared)


def create_vault(
    palace: Palace, name: str, *, level: str, embedder: str | None, default_label: Callable[[], str]
) -> CreatedVault:
    """Create vault ``name`` at ``level`` in the space ``embedder`` declares (see `parse_vault_embedder`).

    ``default_label`` gives the label of the default space (the composed embedder's identity), asked only when
    the default is chosen: building a model embedder to name it is not free. The store's
    refusals pass through: `InvalidVaultName`, `VaultExists`.
    """
    external = parse_vault_embedder(embedder)
    path = palace.create_vault(name, level=level)  # type: ignore[arg-type]  # each adapter checks the level
    if external is not None:
        # Recorded now, before any drawer, so every later open offers the same space.
        with palace.open_vault(name, external) as store:
            store.record_embedder()
    label = external.identity.label if external is not None else default_label()
    return CreatedVault(name, level, label, path)


def list_vaults(palace: Palace) -> list[str]:
    """The name of every vault of ``palace`` (each with a manifest), sorted."""
    return palace.list_vaults()


def delete_vault(palace: Palace, name: str) -> None:
    """Delete vault ``name`` and every file in it (irreversible).

    `VaultNotFound` when the palace has neither its manifest nor its database (a stray directory of that name is
    not a vault, and is left alone); a read-only palace refuses (`StoreClosed`). Whoever holds a handle on the
    vault must close it first.
    """
    palace.status(name)  # VaultNotFound before anything is removed
    palace.delete_vault(name)
