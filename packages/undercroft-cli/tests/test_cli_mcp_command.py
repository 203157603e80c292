"""``undercroft serve-mcp``: registered, documented, and refusing to start on an integrity verdict (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli.main import cli


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in [n for n in __import__("os").environ if n.startswith("UNDERCROFT_")]:
        monkeypatch.delenv(name)
    palace = tmp_path / "palace"
    monkeypatch.setenv("UNDERCROFT_HOME", str(palace))
    assert run_cli(cli, ["init"], echo=lambda line: None) == 0
    return palace


def test_serve_mcp_is_a_command_with_vault_and_read_only_flags() -> None:
    result = CliRunner().invoke(cli, ["serve-mcp", "--help"])
    assert result.exit_code == 0
    assert "--vault" in result.output and "--read-only" in result.output and "MCP" in result.output
    assert "serve-mcp" in CliRunner().invoke(cli, ["--help"]).output


def test_a_missing_vault_is_a_run_failure(home: Path) -> None:
    said: list[str] = []
    assert run_cli(cli, ["serve-mcp", "--vault", "nope"], echo=said.append) == 1
    assert said and said[0].startswith("error: ")


def test_a_tampered_manifest_stops_the_server_before_it_serves_with_exit_2(home: Path) -> None:
    manifest = home / "vaults" / "default" / "vault.json"
    document = json.loads(manifest.read_text())
    document["level"] = "hmac-only" if document.get("level") == "sealed" else "sealed"
    manifest.write_text(json.dumps(document))
    said: list[str] = []
    assert run_cli(cli, ["serve-mcp"], echo=said.append) == 2
    assert said and said[0].startswith("integrity: ")


def test_a_missing_database_stops_the_read_only_server_with_exit_2(home: Path) -> None:
    (home / "vaults" / "default" / "vault.db").unlink()
    assert run_cli(cli, ["serve-mcp", "--read-only"], echo=lambda line: None) == 2
