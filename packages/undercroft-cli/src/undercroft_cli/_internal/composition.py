"""The composition root: the palace from the environment, the embedder the CLI injects, and what this build has.

`BUILD` is the one declared fact of which components this program ships, derived from the factories wired
here (the hash embedder always; the onnx and ort embedders when their distributions are installed; the served
http embedder and the tier-2 admission advisor through undercroft_llm, ``_internal/served.py``; the pq, hnsw and
fde candidate tiers), so a later issue that wires a reranker or a remote index flips it by adding the
factory. A model distribution is found with ``find_spec`` (nothing of it runs) and imported only
inside its factory, when the declaration asks for it: ``import undercroft_cli.main`` never loads
onnxruntime, and the store never imports a model distribution — it receives the object built here. `start_up` runs
the start-up resolver over it: every entry point (each command, serve-mcp) and `config check` read the
same `BUILD` through the same `undercroft_config.check`, so they cannot disagree.

The remote indexes (`open_mirror`) are built here too: the backend ``UNDERCROFT_<NAME>_URL`` (pgvector:
``UNDERCROFT_PGVECTOR_DSN``) locates, through `undercroft_index.open_backend` — every URL policed by
undercroft_net, ``UNDERCROFT_INDEX_CA`` the only roots when declared — handed to the store as a `Mirror`.
The store never reads a backend declaration.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Final

import click
from undercroft_config import Build, Capability, CheckReport, check, settings, start
from undercroft_core.embedder import Embedder
from undercroft_core.external_embedder import EXTERNAL_PREFIX, ExternalEmbedder
from undercroft_core.hash_embedder import HashEmbedder
from undercroft_core.model_roles import CrossEncoder, LateEncoder
from undercroft_store import Palace, VaultNotFound, VaultStore
from undercroft_store.kernel.mirror import Mirror

from undercroft_cli.errors import Error

if TYPE_CHECKING:  # the admission screen (pattern tables, detector) loads only when an advisor is installed
    from undercroft_store.governance.admission import Advisor

__all__ = [
    "BUILD",
    "INDEX_BACKENDS",
    "EmbedderUnavailable",
    "MirrorNotDeclared",
    "admission_advisor",
    "attach_reranker",
    "check_environment",
    "install_advisor",
    "open_mirror",
    "open_palace",
    "open_reader",
    "open_store",
    "pick_embedder",
    "pick_reranker",
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


def _served(env: Mapping[str, str]) -> Embedder:
    """UNDERCROFT_EMBEDDER=http: undercroft_llm's served embedder, policed and probed (imported only here)."""
    from undercroft_cli._internal.served import build_http_embedder

    return build_http_embedder(env)


#: The embedders this build wires, by the capability UNDERCROFT_EMBEDDER selects.
_EMBEDDERS: Final[Mapping[Capability, EmbedderFactory]] = {
    Capability.EMBEDDER_HASH: lambda env: HashEmbedder(),
    Capability.EMBEDDER_HTTP: _served,
    **{
        capability: _in_process(distribution, factory)
        for capability, distribution, factory in _MODEL_EMBEDDERS
        if _installed(distribution)
    },
}

#: The in-process cross-encoders (the rescore tier, `undercroft_store.search.rescore`), by UNDERCROFT_RERANKER.
_MODEL_RERANKERS: Final = (
    (Capability.RERANKER_ONNX, "undercroft_embed_onnx", "OnnxCrossEncoder"),
    (Capability.RERANKER_ORT, "undercroft_embed_ort", "OrtCrossEncoder"),
    # The late-interaction stage (`undercroft_store.search.late`): token matrices stored at write time.
    (Capability.RERANKER_COLBERT, "undercroft_embed_onnx", "OnnxLateEncoder"),
    (Capability.RERANKER_COLBERT_ORT, "undercroft_embed_ort", "OrtLateEncoder"),
)
_RERANKERS: Final[Mapping[Capability, tuple[str, str]]] = {
    capability: (distribution, factory)
    for capability, distribution, factory in _MODEL_RERANKERS
    if _installed(distribution)
}

#: The candidate tiers the store's searcher builds (`undercroft_store.search.tiers`); fde also needs a ColBERT
#: encoder declared (UNDERCROFT_RERANKER=colbert|colbert-ort): start-up refuses it alone (`undercroft_config.check`).
_RETRIEVAL_TIERS: Final = (Capability.RETRIEVAL_PQ, Capability.RETRIEVAL_HNSW, Capability.RETRIEVAL_FDE)

#: The remote-index backends `open_mirror` builds (undercroft_index). Milvus and pgvector need their
#: client (the undercroft-index ``milvus`` / ``pgvector`` extras): wired only when it is installed.
INDEX_BACKENDS: Final = ("chroma", "milvus", "qdrant", "pgvector", "weaviate")
_INDEX_CLIENTS: Final = {"milvus": "pymilvus", "pgvector": "psycopg"}
_INDEXES: Final = tuple(
    Capability(f"index/{name}")
    for name in INDEX_BACKENDS
    if name not in _INDEX_CLIENTS or _installed(_INDEX_CLIENTS[name])
)

#: /metrics and the OTLP exporter, when the telemetry extra is installed; nothing of it is imported here.
_TELEMETRY: Final = (
    *((Capability.TELEMETRY_METRICS,) if _installed("prometheus_client") else ()),
    *((Capability.TELEMETRY_OTLP,) if _installed("opentelemetry.sdk") else ()),
)

#: The served-model roles beside the embedders: the tier-2 admission advisor (`served.build_advisor`).
_SERVED_ROLES: Final = (Capability.ADMISSION_ADVISOR,)

#: What this build has: every component wired above.
BUILD: Final = Build.of([*_EMBEDDERS, *_RERANKERS, *_RETRIEVAL_TIERS, *_INDEXES, *_SERVED_ROLES, *_TELEMETRY])


class EmbedderUnavailable(Error):
    """The declared embedder is not built into this increment of the CLI."""


class MirrorNotDeclared(Error):
    """A remote-index command names a backend this environment does not locate (or cannot reach)."""


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


#: One cross-encoder per process and declaration: serve-http's vaults share one model (the documents' "one
#: shared model across vaults"), and each handle counts its own failures from the moment it is attached.
_BUILT_RERANKERS: dict[tuple[str, ...], CrossEncoder | LateEncoder] = {}
_RERANK_VARIABLES: Final = (
    "UNDERCROFT_RERANKER",
    "UNDERCROFT_RERANK_MODEL",
    "UNDERCROFT_RERANK_TOKENIZER",
    "UNDERCROFT_RERANK_NAME",
    "UNDERCROFT_COLBERT_MODEL",
    "UNDERCROFT_COLBERT_QUERY_MODEL",
    "UNDERCROFT_COLBERT_TOKENIZER",
    "UNDERCROFT_COLBERT_NAME",
    "UNDERCROFT_ORT_POOL",
)


def pick_reranker(env: Mapping[str, str] | None = None) -> CrossEncoder | LateEncoder | None:
    """The second stage ``UNDERCROFT_RERANKER`` declares (None: none), built once per process.

    ``onnx|ort``: a cross-encoder that ``UNDERCROFT_RERANK_MODEL`` / ``_TOKENIZER`` / ``_NAME`` locate;
    ``colbert|colbert-ort``: a late encoder that ``UNDERCROFT_COLBERT_MODEL`` / ``_QUERY_MODEL`` /
    ``_TOKENIZER`` / ``_NAME`` locate. A missing file refuses naming its variable (exit 1). Its distribution
    is imported here, only when declared.
    """
    source = os.environ if env is None else env
    declared = settings.reranker(source)
    if declared is None:
        return None
    located = _RERANKERS.get(Capability(f"reranker/{declared}"))
    if located is None:
        # Start-up refuses this first (colbert, or a distribution not installed); kept for library callers.
        raise EmbedderUnavailable(f"UNDERCROFT_RERANKER={declared} is not wired into this build; unset it")
    key = tuple(source.get(variable, "") for variable in _RERANK_VARIABLES)
    encoder = _BUILT_RERANKERS.get(key)
    if encoder is None:
        distribution, factory = located
        encoder = getattr(importlib.import_module(distribution), factory).from_env(source)
        _BUILT_RERANKERS[key] = encoder
    return encoder


def attach_reranker(store: VaultStore, env: Mapping[str, str] | None = None) -> None:
    """Attach the declared second stage to ``store`` (nothing when ``UNDERCROFT_RERANKER`` is unset).

    A late encoder (``colbert|colbert-ort``) makes every write through ``store`` store its drawers' token
    matrices and every search rescore by MaxSim over them (`undercroft_store.search.late`)."""
    encoder = pick_reranker(env)
    if isinstance(encoder, LateEncoder):
        declared = settings.reranker(os.environ if env is None else env)
        store.attach_late_encoder(encoder, backend="ort" if declared == "colbert-ort" else "onnx")
    elif encoder is not None:
        store.attach_cross_encoder(encoder)


def install_advisor(store: VaultStore, advisor: Advisor | None) -> None:
    """Put the tier-2 advisor in front of ``store``'s writes (nothing when none is declared)."""
    if advisor is not None:
        from undercroft_store.governance.admission import AdmissionPolicy
        from undercroft_store.governance.quarantine import install_gate

        install_gate(store, AdmissionPolicy.from_env(), advisor=advisor)


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
    advisor = admission_advisor()
    pick_reranker()  # a declared-but-unusable reranker refuses before the vault opens
    with (
        open_palace(read_only=read_only) as palace,
        palace.open_vault(vault, vault_embedder(palace, vault), read_only=read_only) as store,
    ):
        for line in store.healed:
            click.echo(f"healed: {line}", err=True)
        install_advisor(store, advisor)
        attach_reranker(store)
        yield store


def admission_advisor() -> Advisor | None:
    """The tier-2 advisor when ``UNDERCROFT_ADMISSION_LLM=advisory`` screens writes; an unusable one refuses here.

    Built (and probed) before the vault opens, so a declared-but-unusable advisor refuses to open anything.
    Only a screening posture (``UNDERCROFT_ADMISSION=quarantine``) consults it; otherwise nothing is built.
    """
    if not settings.admission_advisor() or str(settings.admission()) != "quarantine":
        return None
    from undercroft_cli._internal.served import build_advisor

    return build_advisor()


def open_reader(vault: str) -> AbstractContextManager[VaultStore]:
    """Open ``vault`` for a command that prints drawer or fact content: read-only, unless reads are audited.

    Under ``UNDERCROFT_READ_AUDIT=chain`` the command's one ``read/<op>`` record must land, and a read-only
    handle cannot append (it warns and serves unaudited — the replica posture, not an operator's read), so
    the handle is writable then. Garbage in the declaration refuses here, before anything is opened.
    """
    return open_store(vault, read_only=str(settings.read_audit()) != "chain")


@contextmanager
def open_mirror(backend: str, vault: str, env: Mapping[str, str] | None = None) -> Iterator[Mirror]:
    """The mirror of ``vault`` on ``backend``, located by its declaration; the connection closes on exit.

    An undeclared backend, a client that is not installed or a URL the transport policy refuses is
    `MirrorNotDeclared` (exit 1), before anything is sent.
    """
    if backend not in INDEX_BACKENDS:
        raise MirrorNotDeclared(f"unknown backend {backend!r}: one of {', '.join(INDEX_BACKENDS)}")
    environment = os.environ if env is None else env
    variable, location = settings.index_location(backend, environment)
    if location is None:
        raise MirrorNotDeclared(f"{variable} is not set: declare where the {backend} server is (TLS, or loopback http)")
    import undercroft_index  # the backends (and httpx) load only for a remote-index command
    from undercroft_net import Error as TransportError
    from undercroft_net import load_pin

    declared = settings.index_ca(environment)
    try:
        pin = None if declared is None else load_pin(declared.path, variable="UNDERCROFT_INDEX_CA")
        index = undercroft_index.open_backend(backend, location, variable=variable, pin=pin)
    except (undercroft_index.Error, TransportError) as error:
        raise MirrorNotDeclared(str(error)) from None
    try:
        yield Mirror.of(index, vault)
    finally:
        index.close()
