"""Binding the control plane: uvicorn on the declared address, and the separate metrics listener when declared."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import anyio
import uvicorn
from undercroft_config.values import Address

from undercroft_orchestrator._internal.app import ControlPlane, build_app
from undercroft_orchestrator._internal.console import console
from undercroft_orchestrator._internal.engines import Engines
from undercroft_orchestrator._internal.environment import Environment
from undercroft_orchestrator._internal.meter import Meter
from undercroft_orchestrator._internal.ratelimit import RateLimit
from undercroft_orchestrator._internal.state import State
from undercroft_orchestrator.errors import Refused

__all__ = ["run"]


class _GracefulServer(uvicorn.Server):
    """uvicorn's server, except that SIGINT/SIGTERM end the run with exit 0: a stopped server did not fail."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        with super().capture_signals():
            yield
            self._captured_signals.clear()


def _address(declared: str | None, default: Address) -> Address:
    if declared is None:
        return default
    host, colon, port = declared.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise Refused(f"--addr {declared!r} is not host:port (port 0..65535; 0 picks a free one)")
    return Address(host.strip("[]"), int(port))


def run(environment: Environment, state: State, *, address: str | None, replica: bool) -> int:
    """Serve until SIGINT/SIGTERM; 0 after an orderly stop."""
    bind = _address(address, environment.address)
    meter: Meter = Meter()
    metrics = None
    if environment.metrics_address is not None:
        from undercroft_orchestrator._internal.metrics import PrometheusMeter, metrics_app

        meter = PrometheusMeter()
        metrics = metrics_app(meter, environment.metrics_token)
    engines = Engines(environment.pin, meter=meter)
    plane = ControlPlane(
        state,
        engines,
        admin_token=environment.admin_token,
        rate=RateLimit(environment.rate_limit),
        replica=replica,
        meter=meter,
    )
    app = build_app(plane, console=None if replica else console)
    servers = [_GracefulServer(uvicorn.Config(app, host=bind.host, port=bind.port, log_level="warning"))]
    if metrics is not None and environment.metrics_address is not None:
        listen = environment.metrics_address
        servers.append(
            _GracefulServer(uvicorn.Config(metrics, host=listen.host, port=listen.port, log_level="warning"))
        )

    async def serve() -> None:
        async with anyio.create_task_group() as group:
            for server in servers:
                group.start_soon(server.serve)
            while not all(s.started for s in servers) and not any(s.should_exit for s in servers):
                await anyio.sleep(0.02)
            if all(s.started for s in servers):
                port = servers[0].servers[0].sockets[0].getsockname()[1]
                mode = "read-replica" if replica else "writer"
                print(f"undercroft-orchestrator serving ({mode}) on http://{bind.host}:{port}", file=sys.stderr)
                if len(servers) > 1:
                    metrics_port = servers[1].servers[0].sockets[0].getsockname()[1]
                    print(f"metrics on http://{servers[1].config.host}:{metrics_port}/metrics", file=sys.stderr)
                sys.stderr.flush()
            # Each uvicorn server installs its own SIGINT/SIGTERM handler and the last one installed wins: a
            # stop seen by any server must stop them all, or the control plane outlives its metrics listener.
            while not any(s.should_exit for s in servers):
                await anyio.sleep(0.05)
            for server in servers:
                server.should_exit = True
        await engines.aclose()

    anyio.run(serve)
    return 0 if all(s.started for s in servers) else 1
