"""The console's static files: the tamper runbook page names only commands and options this CLI has, every page
is served under the console's CSP before the bearer, and every receipt verdict has its plain words in the JS."""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

import click
import pytest
from starlette.testclient import TestClient
from undercroft_cli.http import Gate, Service, Tenancy, build_app
from undercroft_cli.http.console import ASSETS, CONTENT_SECURITY_POLICY
from undercroft_cli.main import cli
from undercroft_core.hash_embedder import HashEmbedder
from undercroft_store import Palace
from undercroft_store.memory.kg.receipts import VERDICTS

CONSOLE = files("undercroft_cli.http.console")


def _command(words: list[str]) -> click.Command:
    command: click.Command = cli
    for word in words:
        found = command.get_command(click.Context(command), word) if isinstance(command, click.Group) else None
        if found is None:
            break
        command = found
    return command


def test_the_runbook_names_only_real_commands_and_options() -> None:
    text = CONSOLE.joinpath("runbook.html").read_text(encoding="utf-8")
    invocations = re.findall(r"undercroft ((?:[a-z][a-z-]+ ?)+)((?:[^<\n]*?))(?:<|\n|$)", text)
    assert len(invocations) >= 6
    for words, rest in invocations:
        command = _command(words.split())
        assert command is not cli, words
        declared = {opt for param in command.params for opt in getattr(param, "opts", ())}
        for option in re.findall(r"(--[a-z-]+)", rest):
            assert option in declared, (words, option)


def test_every_console_page_is_served_under_the_csp_without_the_bearer(fresh_home: Path) -> None:
    palace = Palace(fresh_home)
    palace.init()
    tenancy = Tenancy(palace, HashEmbedder(), read_only=False, pinned="default")
    with TestClient(build_app(Service(tenancy, Gate("b" * 32, None), "default"))) as client:
        for name in ASSETS:
            response = client.get("/ui" if name == "index.html" else f"/ui/{name}")
            assert response.status_code == 200, name
            assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert client.get("/ui/nothing.html").status_code == 401  # anything else under /ui is behind the bearer
    palace.close()


@pytest.mark.parametrize("verdict", VERDICTS)
def test_every_receipt_verdict_has_plain_words(verdict: str) -> None:
    script = CONSOLE.joinpath("console.js").read_text(encoding="utf-8")
    assert re.search(rf"^\s+{verdict}: \"", script, re.M), verdict
