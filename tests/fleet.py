"""A fleet on loopback for the orchestrator's tests: real ``undercroft serve-http`` engines and a real control plane.

Every process is the installed console script, started as a subprocess (`live_server.LiveServer`). Each engine
has its own palace, bearer and assertion secret; the orchestrator has its own state database and keys.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from live_server import LiveServer, palace_env, undercroft

__all__ = ["ORCHESTRATOR", "Engine", "Fleet", "orchestrator_env", "running_fleet"]

ORCHESTRATOR = Path(sys.executable).parent / "undercroft-orchestrator"
_ORCH_BOUND = re.compile(r"serving \((?:writer|read-replica)\) on http://127\.0\.0\.1:(\d+)")
ADMIN = "fleet-admin-" + "a" * 24
KEY = "fleet-sealing-key-" + "k" * 26


@dataclass
class Engine:
    """One engine: its palace, credentials and running server."""

    name: str
    home: Path
    bearer: str
    secret: str
    server: LiveServer

    @property
    def url(self) -> str:
        """The engine's base URL."""
        return self.server.url

    def v1(self, method: str, path: str, vault: str, **kwargs: Any) -> httpx.Response:
        """A direct /v1 call, signed for ``vault`` (what the orchestrator does, done by the test itself)."""
        import time

        from undercroft_net.engine.assertion import mint_assertion

        headers = {
            "Authorization": f"Bearer {self.bearer}",
            "X-Vault-Assertion": mint_assertion(self.secret, vault, time.time()),
        }
        return httpx.request(method, f"{self.url}{path}", headers=headers, timeout=60, **kwargs)


def orchestrator_env(root: Path, **extra: str) -> dict[str, str]:
    """The control plane's environment: its own state database, sealing key and admin bearer."""
    env = palace_env(root / "orch-home", UNDERCROFT_ORCH_DB=str(root / "orch" / "state.db"))
    env.update(UNDERCROFT_ORCH_KEY=KEY, UNDERCROFT_ORCH_ADMIN_TOKEN=ADMIN)
    env.update(extra)
    return env


@dataclass
class Fleet:
    """Engines ``a`` and ``b`` and a writer orchestrator, registered with both."""

    root: Path
    engines: dict[str, Engine] = field(default_factory=dict)
    orchestrator: LiveServer | None = None

    def start_engine(self, name: str) -> Engine:
        """Init a palace and serve it with its own bearer and assertion secret."""
        home = self.root / f"engine-{name}"
        bearer, secret = f"bearer-{name}-" + "b" * 24, f"secret-{name}-" + "s" * 24
        env = palace_env(home, UNDERCROFT_MCP_HTTP_TOKEN=bearer, UNDERCROFT_ASSERTION_SECRET=secret)
        assert undercroft(env, "init").returncode == 0
        engine = Engine(name, home, bearer, secret, LiveServer(env))
        self.engines[name] = engine
        return engine

    def env(self, **extra: str) -> dict[str, str]:
        """The orchestrator's environment."""
        return orchestrator_env(self.root, **extra)

    def cli(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        """Run ``undercroft-orchestrator *args``."""
        return subprocess.run(
            [str(ORCHESTRATOR), *args], env=self.env(**extra), capture_output=True, text=True, timeout=300
        )

    def json(self, *args: str) -> Any:
        """Run a command with ``--json`` and decode what it printed (asserting exit 0)."""
        done = self.cli(*args, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def register(self, engine: Engine, name: str | None = None, url: str | None = None) -> None:
        """``instance-add`` an engine (or a stand-in URL presenting its credentials)."""
        done = self.cli(
            "instance-add",
            name or engine.name,
            url or engine.url,
            "--bearer",
            engine.bearer,
            "--assertion-secret",
            engine.secret,
        )
        assert done.returncode == 0, done.stderr

    def serve(self, *args: str, without: tuple[str, ...] = (), **extra: str) -> LiveServer:
        """Start ``undercroft-orchestrator serve`` on a free loopback port (``without`` those variables)."""
        env = {k: v for k, v in self.env(**extra).items() if k not in without}
        return LiveServer(env, *args, command=(str(ORCHESTRATOR), "serve", "--addr", "127.0.0.1:0"), bound=_ORCH_BOUND)

    def tenant(self, base: str, token: str) -> httpx.Client:
        """An HTTP client for the data plane with a tenant token."""
        return httpx.Client(base_url=f"{base}/t", headers={"Authorization": f"Bearer {token}"}, timeout=120)

    def admin(self, base: str) -> httpx.Client:
        """An HTTP client for the admin plane."""
        return httpx.Client(base_url=f"{base}/admin", headers={"Authorization": f"Bearer {ADMIN}"}, timeout=300)

    def stop(self) -> None:
        """Stop everything that still runs."""
        servers = [*(e.server for e in self.engines.values())]
        if self.orchestrator is not None:
            servers.append(self.orchestrator)
        for server in servers:
            server.stop()


@contextmanager
def running_fleet(root: Path, engines: tuple[str, ...] = ("a", "b")) -> Iterator[Fleet]:
    """Engines (each registered under its name) and a writer orchestrator, all stopped on the way out."""
    running = Fleet(root)
    try:
        for name in engines:
            running.register(running.start_engine(name))
        running.orchestrator = running.serve()
        yield running
    finally:
        running.stop()
