"""The composition root: the palace from the environment, the embedder the CLI injects, and what this build has.

`BUILD` is the one declared fact of which components this program ships, derived from the factories wired
here (the hash embedder always; the onnx and ort embedders when their distributions are installed; the pq
and hnsw candidate tiers), so a
later issue that wires a reranker, the fde tier, the admission advisor or a remote index flips it by
adding the factory. A model distribution is found with ``find_spec`` (nothing of it runs) and imported only
inside its factory, when the declaration asks for it: ``import undercroft_cli.main`` never loads
onnxruntime, and the store never imports a model distribution — it receives the object built here. `start_up` runs
the start-up resolver over it: every entry point (each command, serve-mcp) and `config check` read the
same `BUILD` through the same `undercroft_config.check`, so they cannot disagree.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Final

import click
from undercroft_config import Build, Capability, CheckReport, check, settings, start
from undercroft_core.embedder import Embedder
from undercroft_core.external_embedder import EXTERNAL_PREFIX, ExternalEmbedder
from undercroft_core.hash_embedder import HashEmbedder
from undercroft_store import Palace, VaultNotFound, VaultStore

from undercroft_cli.errors import Error

__all__ = [
    "BUILD",
    "EmbedderUnavailable",
    "check_environment",
    "open_palace",
    "open_reader",
    "open_store",
    "pick_embedder",
    "start_up",
    "vault_embedder",
]

EmbedderFactory = Callable[[Mapping[str, str]], Embedder]


def _in_process(distribution: str, factory: str) -> EmbedderFactory:
    """A factory that imports ``distribution`` only when called and builds its embedder from ``env``."""

    def build(env: Mapping[str, str]) -> Embedder:
        module = importlib.import_module(distribution)
        embedder: Embedder = getattr(module, factory).from_env(env)
        return embedder

    return build


def _installed(distribution: str) -> bool:
    try:
        return importlib.util.find_spec(distribution) is not None
    except (ImportError, ValueError):  # a finder that refuses the name: as good as not installed
        return False


#: The in-process model embedders, wired when their distribution is installed.
_MODEL_EMBEDDERS: Final = (
    (Capability.EMBEDDER_ONNX, "undercroft_embed_onnx", "OnnxEmbedder"),
    (Capability.EMBEDDER_ORT, "undercroft_embed_ort", "OrtEmbedder"),
)

#: The embedders this build wires, by the capability UNDERCROFT_EMBEDDER selects.
_EMBEDDERS: Final[Mapping[Capability, EmbedderFactory]] = {
    Capability.EMBEDDER_HASH: lambda env: HashEmbedder(),
    **{
        capability: _in_process(distribution, factory)
        for capability, distribution, factory in _MODEL_EMBEDDERS
        if _installed(distribution)
    },
}

#: The candidate tiers the store's searcher builds (`undercroft_store.search.tiers`); fde is not built yet.
_RETRIEVAL_TIERS: Final = (Capability.RETRIEVAL_PQ, Capability.RETRIEVAL_HNSW)

#: What this build has: every component wired above. Rerankers, the fde tier, the admission advisor,
#: remote indexes and the OTLP exporter are not wired yet, so declaring one refuses at start.
#: /metrics, when the telemetry extra (prometheus-client) is installed; nothing of it is imported here.
_TELEMETRY: Final = (Capability.TELEMETRY_METRICS,) if _installed("prometheus_client") else ()

BUILD: Final = Build.of([*_EMBEDDERS, *_RETRIEVAL_TIERS, *_TELEMETRY])


class EmbedderUnavailable(Error):
    """The declared embedder is not built into this increment of the CLI."""


def check_environment(env: Mapping[str, str] | None = None) -> CheckReport:
    """The `config check` report of `env` (default ``os.environ``) for this build: start-up's own resolver."""
    return check(os.environ if env is None else env, build=BUILD)


def start_up(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Run the start-up resolver over this build, opening nothing.

    Raises `undercroft_config.StartRefused` naming every refusing variable; otherwise returns the warning
    and unknown-name lines the entry point prints once on stderr.
    """
    return start(os.environ if env is None else env, build=BUILD)


def pick_embedder(env: Mapping[str, str] | None = None) -> Embedder:
    """The embedder ``UNDERCROFT_EMBEDDER`` names; the hash embedder by default (zero downloads).

    ``onnx`` / ``ort`` read ``UNDERCROFT_ONNX_MODEL`` / ``_TOKENIZER`` / ``_NAME`` (and ``UNDERCROFT_ORT_POOL``);
    a missing file refuses naming its variable (a run failure, exit 1).
    """
    declared = settings.embedder(env)
    factory = _EMBEDDERS.get(Capability(f"embedder/{declared}"))
    if factory is None:
        # Start-up refuses this first; kept for library callers that skip start-up.
        raise EmbedderUnavailable(f"UNDERCROFT_EMBEDDER={declared} is not wired into this build; unset it to use hash")
    return factory(os.environ if env is None else env)


def vault_embedder(palace: Palace, vault: str, default: Embedder | None = None) -> Embedder:
    """The embedder to open ``vault`` with: its own ``external:<name>@<dim>`` space when it recorded one (the
    caller supplies every vector), else ``default`` (the one ``UNDERCROFT_EMBEDDER`` names when not given)."""
    try:
        recorded = palace.recorded_embedder(vault)
    except VaultNotFound:
        recorded = None  # the open itself reports the missing vault, in its own words
    if recorded is not None and recorded.startswith(EXTERNAL_PREFIX):
        return ExternalEmbedder.parse(recorded)
    return pick_embedder() if default is None else default


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
    with (
        open_palace(read_only=read_only) as palace,
        palace.open_vault(vault, vault_embedder(palace, vault), read_only=read_only) as store,
    ):
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
