"""/metrics on a live ``undercroft serve-http``: off unless declared, behind the bearer, route templates only,
the tamper counter driven by a real failed read, per-vault gauges suppressed under assertions, and nothing of
what was saved, searched or presented ever in the scrape. Plus the telemetry extra's absence, in a subprocess.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from live_server import PROGRAM, LiveServer, palace_env
from undercroft_cli.http.auth import mint_assertion

pytestmark = pytest.mark.loopback

TOKEN = "metrics-bearer-" + "m" * 24
SECRET = "metrics-assertion-secret"
CONTENT = "zanzibar quokka marmalade"
QUERY = "periwinkle obelisk"


def _env(home: Path, **extra: str) -> dict[str, str]:
    return palace_env(home, UNDERCROFT_MCP_HTTP_TOKEN=TOKEN, **extra)


def _serve(home: Path, **extra: str) -> tuple[LiveServer, str]:
    server = LiveServer(_env(home, **extra))
    return server, server.url


@pytest.fixture
def home(tmp_path: Path) -> Path:
    palace = tmp_path / "palace"
    done = subprocess.run([str(PROGRAM), "init"], env=_env(palace), capture_output=True, timeout=120)
    assert done.returncode == 0
    return palace


def _client(base: str, secret: str | None = None) -> httpx.Client:
    def assertion(request: httpx.Request) -> None:
        if secret is not None and "X-Vault-Assertion" not in request.headers:
            match = re.match(r"/v1/vaults/([^/]+)", request.url.path)
            request.headers["X-Vault-Assertion"] = mint_assertion(secret, match.group(1) if match else "*", time.time())

    return httpx.Client(
        base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30, event_hooks={"request": [assertion]}
    )


def test_metrics_are_off_unless_declared(home: Path) -> None:
    process, base = _serve(home)
    try:
        with _client(base) as client:
            assert client.get("/metrics").status_code == 404
        assert httpx.get(f"{base}/metrics", timeout=30).status_code == 401
    finally:
        process.stop()


def test_the_scrape_counts_without_telling(home: Path) -> None:
    process, base = _serve(home, UNDERCROFT_METRICS="1")
    try:
        with _client(base) as client:
            assert httpx.get(f"{base}/metrics", timeout=30).status_code == 401  # behind the bearer
            client.post("/v1/vaults", json={"id": "acme"})
            drawer = client.post("/v1/vaults/acme/drawers", json={"text": CONTENT, "wing": "notes"}).json()["id"]
            client.post("/v1/vaults/acme/search", json={"query": QUERY})
            client.get(f"/v1/vaults/acme/drawers/{drawer}")
            client.get("/v1/vaults/acme/stats")
            with sqlite3.connect(home / "vaults" / "acme" / "vault.db") as connection:
                connection.execute("UPDATE drawers SET tag = zeroblob(32) WHERE id = ?", (drawer,))
            assert client.get(f"/v1/vaults/acme/drawers/{drawer}").status_code == 409  # a real failed read
            scrape = client.get("/metrics")
        assert scrape.status_code == 200 and scrape.headers["content-type"].startswith("text/plain")
        text = scrape.text
        failures = re.search(r'undercroft_hmac_verify_failures_total\{surface="drawer"\} (\S+)', text)
        assert failures is not None and float(failures.group(1)) >= 1
        assert 'route="/v1/vaults/{id}/drawers/{drawer_id}"' in text  # the template, never the raw path
        assert 'undercroft_drawers{vault="acme"}' in text  # per-vault gauges without assertions
        for secret_word in (*CONTENT.split(), *QUERY.split(), drawer, TOKEN):
            assert secret_word not in text, secret_word
    finally:
        process.stop()


def test_per_vault_gauges_are_suppressed_under_assertions(home: Path) -> None:
    process, base = _serve(home, UNDERCROFT_METRICS="1", UNDERCROFT_ASSERTION_SECRET=SECRET)
    try:
        with _client(base, SECRET) as client:
            created = mint_assertion(SECRET, "tenant-zeta", time.time())  # a create asserts for the new id
            client.post("/v1/vaults", json={"id": "tenant-zeta"}, headers={"X-Vault-Assertion": created})
            client.post("/v1/vaults/tenant-zeta/drawers", json={"text": CONTENT})
            assert client.get("/v1/vaults/tenant-zeta/stats").status_code == 200
            text = client.get("/metrics").text
        assert "tenant-zeta" not in text and 'vault="' not in text
    finally:
        process.stop()


_BLOCKED = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "prometheus_client" or name.startswith(("opentelemetry.sdk", "opentelemetry.exp")):
            raise ImportError(f"blocked for this test: {name}")
        return None
sys.meta_path.insert(0, Block())
"""


def test_without_the_extra_nothing_of_it_is_imported_and_metrics_says_so(home: Path) -> None:
    # opentelemetry-api is not checked here: the mcp SDK itself imports it (mcp.server._otel), extra or not.
    script = (
        _BLOCKED
        + """
from starlette.testclient import TestClient
import undercroft_cli.main
from undercroft_cli.http import Gate, Service, Tenancy, build_app
from undercroft_cli.serving import _telemetry
from undercroft_core.hash_embedder import HashEmbedder
from undercroft_store import Palace
palace = Palace.from_env()
service = Service(Tenancy(palace, HashEmbedder(), read_only=False, pinned="default"), Gate(None, None), "default",
                  metrics_declared=True)
service.metrics, service.live = _telemetry(metrics=True, per_vault_gauges=True)
assert service.live is None
with TestClient(build_app(service)) as client:
    assert client.get("/v1/vaults").status_code == 200
    assert client.post("/v1/vaults/default/drawers", json={"text": "x"}).status_code == 200
    refused = client.get("/metrics")
    assert refused.status_code == 503 and "telemetry" in refused.json()["error"], refused.text
    for path in ("/v1/vaults/default/stream", "/v1/vaults/default/stats/history", "/monitor"):
        refused = client.get(path)
        assert refused.status_code == 501 and "telemetry extra" in refused.json()["error"], (path, refused.text)
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "prometheus_client" or m.startswith("opentelemetry.sdk"))
assert loaded == [], loaded
print("ok")
"""
    )
    ran = subprocess.run([sys.executable, "-c", script], env=_env(home), capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0 and ran.stdout.strip().endswith("ok"), ran.stderr


def test_json_logs_are_metadata_only(home: Path) -> None:
    process, base = _serve(home, UNDERCROFT_LOG="info", UNDERCROFT_LOG_FORMAT="json")
    with _client(base) as client:
        client.post("/v1/vaults", json={"id": "acme"})
        drawer = client.post("/v1/vaults/acme/drawers", json={"text": CONTENT}).json()["id"]
        client.post("/v1/vaults/acme/search", json={"query": QUERY})
        with sqlite3.connect(home / "vaults" / "acme" / "vault.db") as connection:
            connection.execute("UPDATE drawers SET tag = zeroblob(32) WHERE id = ?", (drawer,))
        assert client.get(f"/v1/vaults/acme/drawers/{drawer}").status_code == 409
        client.get("/v1/vaults", headers={"Authorization": "Bearer wrong"})
    assert process.stop() == 0, process.log
    lines = [line for line in process.log.splitlines() if line.startswith("{")]
    events = [json.loads(line) for line in lines]  # every structured line is one JSON object
    requests = [e for e in events if e["event"] == "http.request"]
    assert {"/v1/vaults/{id}/drawers", "/v1/vaults/{id}/search"} <= {e["route"] for e in requests}
    assert all({"time", "level", "surface", "route", "status", "duration_ms"} <= set(e) for e in requests)
    tamper = [e for e in events if e["event"] == "tamper.detected"]
    assert tamper and tamper[0]["vault"] == "acme" and tamper[0]["level"] == "warning"
    emitted = "\n".join(lines)
    for secret_word in (*CONTENT.split(), *QUERY.split(), drawer, TOKEN):
        assert secret_word not in emitted, secret_word
