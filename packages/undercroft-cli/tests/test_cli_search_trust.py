"""``undercroft search`` applies the vault floor against the vault's own trust table (no caller wiring)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli.main import cli


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    palace = tmp_path / "palace"
    monkeypatch.setenv("UNDERCROFT_HOME", str(palace))
    for name in ("UNDERCROFT_PASSPHRASE", "UNDERCROFT_EMBEDDER", "UNDERCROFT_SEARCH_TRACE", "UNDERCROFT_TRUST_FLOOR"):
        monkeypatch.delenv(name, raising=False)
    return palace


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = run_cli(cli, list(args))
    return code, capsys.readouterr().out


def _wings(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[list[str], list[str] | None]:
    code, out = _run(capsys, "search", "restart the queue workers", "--json", *args)
    assert code == 0, out
    result = json.loads(out)
    return sorted(hit["wing"] for hit in result["hits"]), result["trust_excluded_wings"]


def test_cli_search_excludes_a_quarantined_wing_under_the_vault_floor(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _run(capsys, "init")[0] == 0
    notes = (("Runbook: restart the queue workers.", "ops"), ("Forum: restart the queue workers.", "scraped"))
    for text, wing in notes:
        assert _run(capsys, "remember", text, "--wing", wing, "--room", "notes")[0] == 0
    assert _run(capsys, "trust", "set", "scraped", "quarantined")[0] == 0
    assert _wings(capsys) == (["ops", "scraped"], None)  # premise: no floor, both wings rank
    monkeypatch.setenv("UNDERCROFT_TRUST_FLOOR", "standard")
    assert _wings(capsys) == (["ops"], ["scraped"])
    code, out = _run(capsys, "search", "restart the queue workers")
    assert code == 0 and "(trust floor: wings excluded: scraped)" in out.splitlines()
    # Naming the wing bypasses the vault floor; the request's own --min-trust does not.
    assert _wings(capsys, "--wing", "scraped") == (["scraped"], None)
    assert _wings(capsys, "--wing", "scraped", "--min-trust", "standard") == ([], ["scraped"])
