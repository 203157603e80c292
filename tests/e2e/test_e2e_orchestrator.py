"""Scenario D end to end: two real engines, a real orchestrator, tenants isolated, a judged live migration.

Every process is a subprocess on loopback (engines: ``undercroft serve-http`` with their own palaces, bearers
and assertion secrets; the control plane: ``undercroft-orchestrator serve``); every call is real HTTP.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fleet import Fleet, running_fleet
from stand_in import StandIn

pytestmark = pytest.mark.loopback


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    with running_fleet(tmp_path) as running:
        yield running


def _export(fleet: Fleet, engine: str, vault: str) -> dict[str, dict[str, object]]:
    """The vault's export from the engine itself, keyed by drawer id (the manifest under ``""``)."""
    reply = fleet.engines[engine].v1("GET", f"/v1/vaults/{vault}/export", vault)
    assert reply.status_code == 200, reply.text
    lines = [json.loads(line) for line in reply.text.splitlines() if line.strip()]
    records = {"": lines[0]}
    for line in lines[1:]:
        if "drawer" in line:
            records[line["drawer"]["id"]] = line
    return records


def test_a_tenant_token_reaches_only_its_own_vault(fleet: Fleet) -> None:
    assert fleet.orchestrator is not None
    base = fleet.orchestrator.url
    one = fleet.json("tenant-create", "one", "--instance", "a")
    two = fleet.json("tenant-create", "two", "--instance", "a")
    assert one["token"] != two["token"] and one["token"].startswith("uct_")
    with fleet.tenant(base, one["token"]) as t1, fleet.tenant(base, two["token"]) as t2:
        saved = t1.post("/drawers", json={"text": "the harbour key is under the blue stone", "wing": "ops"})
        assert saved.status_code == 200, saved.text
        drawer = saved.json()["id"]
        tunnel = t1.post("/tunnels", json={"from": "ops", "to": "ops-b", "label": "l"})
        assert t2.post("/drawers", json={"text": "tenant two writes its own note"}).status_code == 200
        assert t1.post("/search", json={"query": "harbour key"}).json()["hits"][0]["id"] == drawer
        # Every allowlisted shape with the other tenant's ids: tenant two never sees tenant one's vault.
        assert t2.get(f"/drawers/{drawer}").status_code == 404
        assert t2.put(f"/drawers/{drawer}", json={"text": "overwritten"}).status_code == 404
        assert t2.delete(f"/drawers/{drawer}").status_code == 404
        hits = t2.post("/search", json={"query": "harbour key blue stone"}).json()["hits"]
        assert all(hit["id"] != drawer for hit in hits)
        if tunnel.status_code in (200, 201):
            tid = tunnel.json().get("id")
            assert t2.get(f"/tunnels/{tid}/drawers").status_code in (404, 400)
            assert t2.delete(f"/tunnels/{tid}").status_code in (404, 400)
        assert t2.get("/stats").json()["drawers"] == 1
        exported = t2.get("/export").text
        assert "harbour" not in exported and "tenant two" in exported
        assert t1.get(f"/drawers/{drawer}").json()["drawer"]["content"] == "the harbour key is under the blue stone"
        # Not allowlisted: 404; an operator route: 404 naming it as one; no token or a wrong one: 401.
        unlisted = ("/%2e%2e/%2e%2e/vaults", "/history/%2e%2e/stats", "/drawers%2f..%2fx", "/kg/authority", "/rotate")
        for path in (*unlisted, "/", "/nonsense"):
            assert t1.request("POST" if "authority" in path else "GET", path).status_code == 404, path
        verify = t1.post("/verify")
        assert verify.status_code == 404 and verify.json()["operator_route"] is True
        assert "operator route" in verify.json()["detail"]
        refused = httpx.get(f"{base}/t/stats", headers={"Authorization": "Bearer uct_not-a-token"})
        assert refused.status_code == 401 and refused.json() == {"error": "unauthorized"}
        assert refused.headers["www-authenticate"] == "Bearer"
        assert httpx.get(f"{base}/t/stats").status_code == 401
        assert (
            httpx.get(f"{base}/admin/tenants", headers={"Authorization": f"Bearer {one['token']}"}).status_code == 401
        )


def test_migration_is_a_judged_copy_and_the_other_tenant_keeps_writing(fleet: Fleet) -> None:
    assert fleet.orchestrator is not None
    base = fleet.orchestrator.url
    one = fleet.json("tenant-create", "one", "--instance", "a")
    two = fleet.json("tenant-create", "two", "--instance", "a")
    with fleet.tenant(base, one["token"]) as t1:
        ids = [
            t1.post("/drawers", json={"text": f"ledger entry {n} for tenant one", "wing": "books"}).json()["id"]
            for n in range(25)
        ]
    before = _export(fleet, "a", "one")
    written: list[str] = []
    stop = threading.Event()

    def keep_writing() -> None:
        with fleet.tenant(base, two["token"]) as t2:
            n = 0
            while not stop.is_set():
                reply = t2.post("/drawers", json={"text": f"tenant two keeps writing {n}"})
                assert reply.status_code == 200, reply.text
                written.append(reply.json()["id"])
                n += 1

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        judgement = fleet.json("migrate", "one", "--to", "b")
    finally:
        stop.set()
        writer.join(60)
    assert judgement["agree"] is True and judgement["flipped"] is True and judgement["source_deleted"] is True
    assert judgement["destination"]["records"] == judgement["manifest"]["drawers"] == 25
    assert written, "tenant two wrote nothing during the migration"
    after = _export(fleet, "b", "one")
    assert set(ids) <= set(before) and len(after) == len(before)
    # The copy adopted the source's id key before any write, so every drawer id the tenant holds is the same on
    # the destination (a sealed vault derives ids under that key: hmac-v1). Restore is a copy, not a re-embed:
    # the vectors are equal byte for byte.
    assert judgement["imported"]["id_key_adopted"] is True
    assert set(after) == set(before)
    for drawer in ids:
        copied = after[drawer]
        assert copied["embedding"] == before[drawer]["embedding"]
        assert copied["drawer"]["content"] == before[drawer]["drawer"]["content"]
        assert (copied["drawer"]["wing"], copied["drawer"]["room"]) == (
            before[drawer]["drawer"]["wing"],
            before[drawer]["drawer"]["room"],
        )
    assert fleet.engines["a"].v1("GET", "/v1/vaults/one/stats", "one").status_code == 404  # the source is gone
    with fleet.tenant(base, one["token"]) as t1:
        assert t1.get("/stats").json()["drawers"] == 25
        assert t1.post("/drawers", json={"text": "written after the move"}).status_code == 200
        kept = t1.get(f"/drawers/{ids[0]}")  # an id the tenant kept from before the move still resolves
        assert kept.status_code == 200 and "ledger entry 0 for tenant one" in kept.text, kept.text
    assert fleet.engines["b"].v1("GET", "/v1/vaults/one/stats", "one").json()["drawers"] == 26
    assert fleet.engines["a"].v1("GET", "/v1/vaults/two/stats", "two").json()["drawers"] == len(written)
    tenants = {t["id"]: t for t in fleet.json("tenant-list")["tenants"]}
    assert tenants["one"]["instance"] == "b" and tenants["two"]["instance"] == "a"


def test_a_destination_that_drops_a_record_stops_before_the_flip(fleet: Fleet) -> None:
    assert fleet.orchestrator is not None
    one = fleet.json("tenant-create", "one", "--instance", "a")
    with fleet.tenant(fleet.orchestrator.url, one["token"]) as t1:
        for n in range(6):
            assert t1.post("/drawers", json={"text": f"evidence {n} that must survive"}).status_code == 200
    with StandIn(fleet.engines["b"].url, drop_import_line=True) as lossy:
        fleet.register(fleet.engines["b"], name="lossy", url=lossy.url)
        stopped = fleet.cli("migrate", "one", "--to", "lossy")
    assert stopped.returncode == 1, stopped.stderr
    assert "stopped before the flip" in stopped.stderr and "destination holds 5 records" in stopped.stderr
    tenants = {t["id"]: t for t in fleet.json("tenant-list")["tenants"]}
    assert tenants["one"]["instance"] == "a" and tenants["one"]["migrating"] is False
    assert fleet.engines["b"].v1("GET", "/v1/vaults/one/stats", "one").status_code == 404  # the partial copy is gone
    with fleet.tenant(fleet.orchestrator.url, one["token"]) as t1:
        assert t1.get("/stats").json()["drawers"] == 6
        assert t1.post("/drawers", json={"text": "writes flow again"}).status_code == 200


def test_an_engine_killed_mid_migration_leaves_the_tenant_on_its_source(fleet: Fleet) -> None:
    assert fleet.orchestrator is not None
    one = fleet.json("tenant-create", "one", "--instance", "a")
    with fleet.tenant(fleet.orchestrator.url, one["token"]) as t1:
        for n in range(6):
            assert t1.post("/drawers", json={"text": f"record {n} of the source"}).status_code == 200
    victim = fleet.engines["b"].server.process
    with StandIn(fleet.engines["b"].url, kill_on_import=victim) as doomed:
        fleet.register(fleet.engines["b"], name="doomed", url=doomed.url)
        stopped = fleet.cli("migrate", "one", "--to", "doomed")
    assert victim.poll() is not None, "the destination engine was not killed"
    assert stopped.returncode == 1, stopped.stderr
    assert "stopped before the flip" in stopped.stderr
    tenants = {t["id"]: t for t in fleet.json("tenant-list")["tenants"]}
    assert tenants["one"]["instance"] == "a"
    with fleet.tenant(fleet.orchestrator.url, one["token"]) as t1:
        assert t1.get("/stats").json()["drawers"] == 6
    verdict = fleet.engines["a"].v1("POST", "/v1/vaults/one/verify", "one").json()
    assert verdict["ok"] is True


def test_a_read_replica_serves_the_data_plane_from_a_copied_state(fleet: Fleet, tmp_path: Path) -> None:
    assert fleet.orchestrator is not None
    one = fleet.json("tenant-create", "one", "--instance", "a")
    copy = tmp_path / "replica" / "state.db"
    copy.parent.mkdir()
    shutil.copy(tmp_path / "orch" / "state.db", copy)
    replica = fleet.serve("--read-replica", without=("UNDERCROFT_ORCH_ADMIN_TOKEN",), UNDERCROFT_ORCH_DB=str(copy))
    try:
        health = httpx.get(f"{replica.url}/healthz").json()
        writer = httpx.get(f"{fleet.orchestrator.url}/healthz").json()
        assert health["mode"] == "read-replica" and writer["mode"] == "writer"
        assert health["last_write"] == writer["last_write"]
        with fleet.tenant(replica.url, one["token"]) as t1:
            assert t1.post("/drawers", json={"text": "through the replica"}).status_code == 200
            assert t1.get("/stats").json()["drawers"] == 1
        assert fleet.admin(replica.url).get("/tenants").status_code == 403
        assert httpx.get(f"{replica.url}/ui").status_code == 403
        rotated = fleet.json("tenant-rotate", "one")["token"]
        with fleet.tenant(fleet.orchestrator.url, one["token"]) as old:
            assert old.get("/stats").status_code == 401  # dead on the writer at once
        with fleet.tenant(replica.url, one["token"]) as old:
            assert old.get("/stats").status_code == 200  # the replica lags until the state is copied again
        shutil.copy(tmp_path / "orch" / "state.db", copy)
        with fleet.tenant(replica.url, one["token"]) as old, fleet.tenant(replica.url, rotated) as new:
            assert old.get("/stats").status_code == 401
            assert new.get("/stats").status_code == 200
        assert httpx.get(f"{replica.url}/healthz").json()["last_write"] > health["last_write"]
    finally:
        assert replica.stop() == 0, replica.log


def test_an_edited_state_row_is_refused_not_followed(fleet: Fleet, tmp_path: Path) -> None:
    assert fleet.orchestrator is not None
    one = fleet.json("tenant-create", "one", "--instance", "a")
    fleet.json("tenant-create", "two", "--instance", "b")
    with sqlite3.connect(tmp_path / "orch" / "state.db") as db:  # point tenant one at tenant two's vault
        db.execute("UPDATE tenants SET vault = 'two', instance = 'b' WHERE id = 'one'")
    with fleet.tenant(fleet.orchestrator.url, one["token"]) as t1:
        refused = t1.get("/stats")
    assert refused.status_code == 500 and refused.json()["class"] == "integrity", refused.text
    assert "does not match its MAC" in refused.json()["detail"]
    with sqlite3.connect(tmp_path / "orch" / "state.db") as db:  # move engine b's sealed credentials to a
        sealed = db.execute("SELECT sealed FROM instances WHERE name = 'b'").fetchone()[0]
        db.execute("UPDATE instances SET sealed = ? WHERE name = 'a'", (sealed,))
    done = fleet.cli("ops", "two", "verify")
    assert done.returncode == 0, done.stderr  # b itself is untouched
    assert fleet.cli("instance-health", "a").returncode == 1
    moved = fleet.admin(fleet.orchestrator.url).get("/instances/a/health")
    assert moved.status_code == 500 and "do not open" in moved.json()["detail"]


def test_the_operator_plane_relays_a_closed_vocabulary_and_exit_2_means_integrity(fleet: Fleet) -> None:
    assert fleet.orchestrator is not None
    one = fleet.json("tenant-create", "one", "--instance", "a")
    with fleet.tenant(fleet.orchestrator.url, one["token"]) as t1:
        drawer = t1.post("/drawers", json={"text": "a record an attacker will edit"}).json()["id"]
        t1.post("/drawers", json={"text": "a second, untouched record"})
    clean = fleet.cli("ops", "one", "verify")
    assert clean.returncode == 0 and '"ok": true' in clean.stdout, clean.stderr
    trusted = fleet.cli("ops", "one", "trust-set", "--body", '{"wing":"legal","trust":"trusted"}')
    assert trusted.returncode == 0, trusted.stderr
    assert "legal" in fleet.cli("ops", "one", "trust").stdout
    assert fleet.cli("ops", "one", "anchor").returncode == 0
    refine = fleet.cli("ops", "one", "refine", "--body", '{"dry_run": true}')  # relayed; the engine has no model
    assert refine.returncode == 1 and "refine needs UNDERCROFT_LLM_URL" in refine.stderr, refine.stderr
    exported = fleet.cli("ops", "one", "export")
    assert exported.returncode == 0 and exported.stdout.startswith('{"undercroft_manifest"')
    admin = fleet.admin(fleet.orchestrator.url)
    assert admin.post("/tenants/one/ops/verify").json()["ok"] is True
    assert admin.get("/tenants/one/ops/drawers").status_code == 404  # drawer reads are not an operator op
    assert admin.post("/tenants/one/ops/rotate").status_code == 404  # nor is key rotation
    assert admin.get("/tenants/one/stats").json()["drawers"] == 2
    database = fleet.engines["a"].home / "vaults" / "one" / "vault.db"
    with sqlite3.connect(database) as db:  # a row edit beneath the engine
        db.execute("UPDATE drawers SET tag = zeroblob(32) WHERE id = ?", (drawer,))
    tampered = fleet.cli("ops", "one", "verify")
    assert tampered.returncode == 2, (tampered.stdout, tampered.stderr)
    assert admin.post("/tenants/one/ops/verify").json()["ok"] is False
    log = admin.get("/log").json()["log"]
    assert {"tenant-create", "instance-add"} <= {line["action"] for line in log}


def test_the_metrics_listener_counts_without_naming_tenants(tmp_path: Path) -> None:
    import socket

    running = Fleet(tmp_path)
    try:
        running.register(running.start_engine("a"))
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        running.orchestrator = running.serve(UNDERCROFT_ORCH_METRICS_ADDR=f"127.0.0.1:{port}")
        one = running.json("tenant-create", "secret-tenant-name", "--instance", "a")
        with running.tenant(running.orchestrator.url, one["token"]) as t1:
            assert t1.post("/drawers", json={"text": "quokka marmalade"}).status_code == 200
            assert t1.post("/search", json={"query": "quokka"}).status_code == 200
        assert (
            httpx.get(f"{running.orchestrator.url}/t/stats", headers={"Authorization": "Bearer x"}).status_code == 401
        )
        assert httpx.get(f"{running.orchestrator.url}/metrics").status_code == 404  # not on the tenants' port
        scrape = httpx.get(f"http://127.0.0.1:{port}/metrics").text
        # One SIGTERM stops both listeners at once: each uvicorn server installs its own signal handler, and a
        # control plane that outlived its metrics listener was killed at the test's 30 s timeout instead.
        stopped = running.orchestrator.stop(timeout=10)
        assert stopped == 0, f"exit {stopped} on SIGTERM:\n{running.orchestrator.log}"
    finally:
        running.stop()
    assert 'undercroft_orch_requests_total{route="data"} 3.0' in scrape
    assert 'undercroft_orch_refused_credentials_total{kind="tenant"} 1.0' in scrape
    assert 'undercroft_orch_engine_calls_total{outcome="ok"}' in scrape
    assert "undercroft_orch_request_duration_seconds_bucket" in scrape
    assert "undercroft_orch_rate_limited_total 0.0" in scrape
    for secret in ("secret-tenant-name", "quokka", one["token"], "vault"):
        assert secret not in scrape, secret


def test_health_tells_an_outage_from_a_refusal_and_tls_is_pinned(tmp_path: Path) -> None:
    from tls_material import make_authority, server_context

    running = Fleet(tmp_path)
    trusted, stranger = make_authority("fleet-ca"), make_authority("stranger-ca")
    (tmp_path / "ca.pem").write_bytes(trusted.pem())
    (tmp_path / "stranger.pem").write_bytes(stranger.pem())
    try:
        engine = running.start_engine("a")
        running.register(engine)
        with socket_port() as dead:
            running.register(engine, name="gone", url=f"http://127.0.0.1:{dead}")
        done = running.cli("instance-add", "wrong", engine.url, "--bearer", "not-the-bearer-" + "x" * 12)
        assert done.returncode == 0, done.stderr
        with StandIn(engine.url, tls=server_context(trusted, tmp_path)) as front:
            running.register(engine, name="tls", url=front.url)
            verdicts = {name: running.cli("instance-health", name, "--json") for name in ("a", "gone", "wrong", "tls")}
            states = {name: json.loads(done.stdout)["state"] for name, done in verdicts.items()}
            pinned = running.cli("instance-health", "tls", "--json", UNDERCROFT_ORCH_ENGINE_CA=str(tmp_path / "ca.pem"))
            other = running.cli(
                "instance-health", "tls", "--json", UNDERCROFT_ORCH_ENGINE_CA=str(tmp_path / "stranger.pem")
            )
            cleartext = running.cli(
                "instance-health", "a", "--json", UNDERCROFT_ORCH_ENGINE_CA=str(tmp_path / "ca.pem")
            )
        assert states == {"a": "healthy", "gone": "unreachable", "wrong": "unhealthy", "tls": "refused"}, verdicts
        assert verdicts["a"].returncode == 0 and verdicts["gone"].returncode == 1
        assert "credentials" in json.loads(verdicts["wrong"].stdout)["reason"]
        assert json.loads(pinned.stdout)["state"] == "healthy", pinned.stdout + pinned.stderr
        refused = json.loads(other.stdout)
        assert refused["state"] == "refused" and "pinned UNDERCROFT_ORCH_ENGINE_CA" in refused["reason"]
        assert json.loads(cleartext.stdout)["state"] == "refused"
        assert "cleartext" in json.loads(cleartext.stdout)["reason"]
    finally:
        running.stop()


def test_the_rate_screen_and_an_import_through_the_data_plane(tmp_path: Path) -> None:
    running = Fleet(tmp_path)
    try:
        running.register(running.start_engine("a"))
        running.orchestrator = running.serve(UNDERCROFT_ORCH_RATE_LIMIT="4")
        one = running.json("tenant-create", "one", "--instance", "a")
        two = running.json("tenant-create", "two", "--instance", "a")
        with running.tenant(running.orchestrator.url, one["token"]) as t1:
            for n in range(3):
                assert t1.post("/drawers", json={"text": f"portable record {n}"}).status_code == 200
            exported = t1.get("/export")
            limited = t1.get("/stats")
        assert exported.status_code == 200
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        with running.tenant(running.orchestrator.url, two["token"]) as t2:  # the other tenant has its own window
            imported = t2.post("/import", content=exported.content, headers={"Content-Type": "application/x-ndjson"})
            assert imported.status_code == 200, imported.text
            assert t2.get("/stats").json()["drawers"] == 3
    finally:
        running.stop()


@contextlib.contextmanager
def socket_port() -> Iterator[int]:
    """A loopback port nothing listens on."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield port
