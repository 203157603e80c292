"""32 clients over HTTP against one live ``undercroft serve-http``, writing to 4 vaults at once, with searches
and verifies in between: no acknowledged write is lost, nothing answers 5xx, and every vault verifies.

Each client has its own connection pool and its own vault (client ``i`` writes to vault ``i % 4``, so eight
clients race on every vault's write choke point while the other three vaults are written beside them); it
saves distinct texts, searches its vault, and asks for a verify, all interleaved. Afterwards every
acknowledged id is read back by ``GET …/drawers/{id}`` with its exact text, each vault's ``POST …/verify`` is
ok, each vault holds exactly its acknowledged drawers, and once the server has stopped ``undercroft verify
--vault X`` (the real program, a fresh open of the files) exits 0 for every vault.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path

import httpx
import pytest
from live_server import LiveServer, palace_env, undercroft, verify_all

pytestmark = pytest.mark.loopback

TOKEN = "load-test-bearer-0123456789"
VAULTS = ("default", "tenant-1", "tenant-2", "tenant-3")
CLIENTS = 32
SAVES_PER_CLIENT = 8


async def _client(url: str, index: int) -> tuple[str, list[tuple[str, str]], list[tuple[str, int, str]]]:
    """One client's run: ``(vault, acknowledged (id, text) pairs, every 5xx seen as (route, status, body))``."""
    vault = VAULTS[index % len(VAULTS)]
    acknowledged: list[tuple[str, str]] = []
    failures: list[tuple[str, int, str]] = []
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as client:
        for n in range(SAVES_PER_CLIENT):
            text = f"client {index} note {n}: the cellar ledger counts {index * 100 + n} turnips"
            saved = await client.post(
                f"/v1/vaults/{vault}/drawers", json={"text": text, "wing": "load", "room": f"client-{index}"}
            )
            if saved.status_code >= 500:
                failures.append(("save", saved.status_code, saved.text))
            elif saved.status_code in (200, 202):
                acknowledged.append((saved.json()["id"], text))
            if n % 2 == 1:
                found = await client.post(f"/v1/vaults/{vault}/search", json={"query": f"ledger turnips {index}"})
                if found.status_code != 200:
                    failures.append(("search", found.status_code, found.text))
            if n == SAVES_PER_CLIENT // 2:
                verified = await client.post(f"/v1/vaults/{vault}/verify")
                if verified.status_code != 200 or verified.json().get("ok") is not True:
                    failures.append(("verify", verified.status_code, verified.text))
    return vault, acknowledged, failures


async def _load(url: str) -> list[tuple[str, list[tuple[str, str]], list[tuple[str, int, str]]]]:
    return list(await asyncio.gather(*(_client(url, i) for i in range(CLIENTS))))


def test_thirty_two_clients_four_vaults_lose_nothing(tmp_path: Path) -> None:
    env = palace_env(tmp_path / "palace", UNDERCROFT_MCP_HTTP_TOKEN=TOKEN)
    assert undercroft(env, "init").returncode == 0
    server = LiveServer(env)
    try:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=120) as client:
            for vault in VAULTS[1:]:
                assert client.post("/v1/vaults", json={"id": vault}).status_code == 201

            results = asyncio.run(_load(server.url))

            failures = [failure for _vault, _acks, fails in results for failure in fails]
            assert failures == [], failures[:5]
            by_vault: dict[str, dict[str, str]] = defaultdict(dict)
            for vault, acknowledged, _fails in results:
                for drawer_id, text in acknowledged:
                    assert drawer_id not in by_vault[vault], f"two acknowledged saves share the id {drawer_id}"
                    by_vault[vault][drawer_id] = text
            assert sum(len(ids) for ids in by_vault.values()) == CLIENTS * SAVES_PER_CLIENT  # none screened away

            for vault, saved in by_vault.items():
                for drawer_id, text in saved.items():
                    got = client.get(f"/v1/vaults/{vault}/drawers/{drawer_id}")
                    assert got.status_code == 200, (vault, drawer_id, got.text)
                    assert got.json()["drawer"]["content"] == text
                verified = client.post(f"/v1/vaults/{vault}/verify")
                assert verified.status_code == 200 and verified.json()["ok"] is True, verified.text
                stats = client.get(f"/v1/vaults/{vault}/stats").json()
                assert stats["drawers"] == len(saved), stats  # and nothing else landed
    finally:
        code = server.stop()
    assert code == 0, server.log[-8000:]
    assert "Traceback" not in server.log, server.log[-8000:]
    assert "unexpected" not in server.log, server.log[-8000:]
    verdicts = verify_all(env, VAULTS)
    assert all(code == 0 for code, _output in verdicts.values()), verdicts
