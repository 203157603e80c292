"""The commands that start an adapter's server: ``undercroft serve-mcp`` and ``undercroft serve-http``.

The composition root's other half beside ``main``: the one module (with ``main``) that may import an adapter
package (``undercroft_cli.mcp``, ``undercroft_cli.http``), so the click adapters in ``undercroft_cli.commands``
never do. ``assert-header`` lives here too: it mints the header the HTTP gate checks, with the gate's code.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TYPE_CHECKING, Any

import click
from undercroft_config import settings
from undercroft_config.values import is_loopback_host
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.composition import admission_advisor, open_palace, open_store, pick_embedder
from undercroft_cli.errors import Error

if TYPE_CHECKING:
    from undercroft_cli.http.live import Live

__all__ = ["assert_header_command", "serve_http_command", "serve_mcp_command"]


class ServeRefused(Error):
    """serve-http will not start as declared (a non-loopback bind without a bearer, an unknown vault)."""


@click.command("serve-mcp")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="Vault the server is scoped to.")
@click.option(
    "--read-only",
    is_flag=True,
    help="Open the vault read-only and refuse every write tool at the call (tools/list still shows them).",
)
def serve_mcp_command(vault: str, read_only: bool) -> int:
    """Serve the vault to an agent over MCP on stdin/stdout.

    Register it with an MCP client as {"command": "undercroft", "args": ["serve-mcp"]}. The vault is opened
    before serving: a tampered or rolled-back vault stops the server with exit 2 instead of serving it.
    """
    # The MCP SDK costs about a second to import: only the server pays it, never every CLI call.
    from undercroft_cli.mcp import McpDispatcher, ToolSession, serve_stdio

    embedder = pick_embedder()
    tracer = _tracer()  # UNDERCROFT_OTLP_ENDPOINT: policed before the vault opens; stdout stays protocol-only
    try:
        with open_store(vault, read_only=read_only) as store:
            for line in store.unhealed:
                if line not in store.healed:  # open_store reported the heals as "healed: …"
                    click.echo(f"unhealed: {line}", err=True)
            serve_stdio(McpDispatcher(ToolSession(store, embedder, read_only=read_only)))
    finally:
        if tracer is not None:
            tracer.shutdown()  # the client closed stdin: flush the last calls' spans before the process ends
    return 0


@click.command("serve-http")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (non-loopback needs the bearer).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="Port (0: any free one).")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="The vault POST /mcp serves.")
@click.option("--read-only", is_flag=True, help="Open every store read-only; /v1 refuses writes, /mcp at the call.")
def serve_http_command(host: str, port: int, vault: str, read_only: bool) -> int:
    """Serve MCP over HTTP at /mcp (for --vault) and the multi-tenant REST engine at /v1 (every vault).

    Every route but /healthz and /ui takes Authorization: Bearer $UNDERCROFT_MCP_HTTP_TOKEN, mandatory on a
    non-loopback bind; with UNDERCROFT_ASSERTION_SECRET set, each request also carries X-Vault-Assertion for
    the vault it addresses (mint one with undercroft assert-header VAULT).
    """
    import anyio
    import uvicorn

    _GracefulServer = _graceful_server_class()

    from undercroft_cli.http import Gate, Service, Tenancy, build_app

    token, secret = settings.http_token(), settings.assertion_secret()
    if str(settings.retrieval()) == "hnsw":
        raise ServeRefused(
            "UNDERCROFT_RETRIEVAL=hnsw is an in-process, single-vault index (one RAM graph per open vault): "
            "serve-http refuses it; choose pq, or unset it, for a multi-tenant server"
        )
    if token is None and not is_loopback_host(host):
        raise ServeRefused(
            f"refusing to bind {host}: a non-loopback bind needs UNDERCROFT_MCP_HTTP_TOKEN (every request must "
            "present it); set it, or bind 127.0.0.1"
        )
    from undercroft_obs.logs import configure

    configure(settings.log_filter(), settings.log_format())
    embedder = pick_embedder()
    with open_palace(read_only=read_only) as palace:
        # Open --vault before binding: a tampered or rolled-back vault stops the server (exit 2), like serve-mcp.
        # A declared-but-unusable advisor refuses here, before the port is bound (exit 1).
        tenancy = Tenancy(palace, embedder, read_only=read_only, pinned=vault, advisor=admission_advisor())
        with tenancy.session(vault) as session:
            for line in session.store.healed:
                click.echo(f"healed: {line}", err=True)
            for line in session.store.unhealed:
                if line not in session.store.healed:
                    click.echo(f"unhealed: {line}", err=True)
        gate = Gate(None if token is None else token.reveal(), None if secret is None else secret.reveal())
        service = Service(tenancy, gate, vault, metrics_declared=settings.metrics())
        tracer = _tracer()
        service.metrics, service.live = _telemetry(metrics=service.metrics_declared, per_vault_gauges=secret is None)
        app = build_app(service)
        server = _GracefulServer(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
        server.on_exit = service.live.close if service.live is not None else None

        async def serve() -> None:
            async with anyio.create_task_group() as group:
                group.start_soon(server.serve)
                while not server.started and not server.should_exit:
                    await anyio.sleep(0.02)
                if server.started:
                    bound = server.servers[0].sockets[0].getsockname()
                    posture = " read-only" if read_only else ""
                    click.echo(
                        f"serving{posture} on http://{host}:{bound[1]} (/mcp: vault {vault}; /v1: every vault)",
                        err=True,
                    )

        try:
            anyio.run(serve)
        finally:
            if tracer is not None:
                tracer.shutdown()  # flush the spans of the last requests before the process ends
        tenancy.close()
    return 0


def _graceful_server_class() -> type:
    """uvicorn's server, except that SIGINT/SIGTERM end the run with exit 0: a stopped server did not fail.

    uvicorn re-raises the signal after its graceful shutdown, which turns an orderly stop into exit 1
    ("aborted") or 143; the shutdown itself (drain, lifespan, handles closed) is unchanged.
    """
    import uvicorn

    class GracefulServer(uvicorn.Server):
        on_exit: Callable[[], None] | None = None  # ends the live streams, which would hold the drain open

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if self.on_exit is not None:
                self.on_exit()
            super().handle_exit(sig, frame)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                yield
                self._captured_signals.clear()  # shut down gracefully; do not re-raise the signal

    return GracefulServer


def _telemetry(*, metrics: bool, per_vault_gauges: bool) -> tuple[object | None, Live | None]:
    """The process's sinks: the Prometheus sink (``UNDERCROFT_METRICS=1``) and the live broker, installed
    together; ``(None, None)`` without the telemetry extra (/metrics 503, the stream and history 501)."""
    import undercroft_obs

    try:
        from undercroft_obs.prometheus import PrometheusSink
    except undercroft_obs.Error as missing:  # TelemetryMissing
        if metrics:
            click.echo(f"warning: {missing}", err=True)
        return None, None
    from undercroft_obs.broker import Broker

    from undercroft_cli.http.live import Live

    live = Live(Broker(), settings.sample_interval_ms(), settings.stream_heartbeat_ms())
    # Under per-vault isolation the scrape must not enumerate tenants: the vault gauges are suppressed.
    sink = PrometheusSink(per_vault_gauges=per_vault_gauges) if metrics else None
    undercroft_obs.install_sink(undercroft_obs.FanoutSink(*(s for s in (sink, live.broker) if s is not None)))
    return sink, live


def _tracer() -> Any:
    """The OTLP tracer when ``UNDERCROFT_OTLP_ENDPOINT`` is declared (policed here, before the port is bound)."""
    endpoint = settings.otlp_endpoint()
    if endpoint is None:
        return None  # nothing leaves the process
    import undercroft_obs
    from undercroft_obs.telemetry.otlp import OtlpTracer

    pin = settings.otlp_ca()
    tracer = OtlpTracer(
        endpoint,
        pin=None if pin is None else pin.path,
        headers=settings.otlp_headers(),
        service_name=settings.service_name(),
    )
    undercroft_obs.install_tracer(tracer)
    return tracer


@click.command("assert-header")
@click.argument("vault")
def assert_header_command(vault: str) -> int:
    """Print an X-Vault-Assertion value for VAULT, valid ±120 s (reads UNDERCROFT_ASSERTION_SECRET)."""
    from undercroft_cli.http.auth import mint_assertion

    secret = settings.assertion_secret()
    if secret is None:
        raise ServeRefused("UNDERCROFT_ASSERTION_SECRET is not set: there is nothing to mint an assertion with")
    click.echo(mint_assertion(secret.reveal(), vault, time.time()))
    return 0
