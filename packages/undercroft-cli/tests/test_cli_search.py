"""``undercroft search``: rendering, JSON, refusals (exit 1) and integrity verdicts (exit 2)."""

from __future__ import annotations

import json
import sqlite3
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


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_cli(cli, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _seed(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "init")[0] == 0
    assert (
        _run(capsys, "remember", "We chose GraphQL for the API gateway", "--wing", "backend", "--room", "api")[0] == 0
    )
    assert _run(capsys, "remember", "The cat sleeps on the warm windowsill", "--wing", "home", "--room", "pets")[0] == 0


def test_search_renders_each_hit_with_its_evidence(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _seed(capsys)
    code, out, _ = _run(capsys, "search", "GraphQL gateway")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("[1] backend/api  ") and "drawer_" in lines[0]
    assert "semantic" in lines[1] and "exact" in lines[1] and "morph" in lines[1]
    assert "    | We chose GraphQL for the API gateway" in lines


def test_search_json_and_scope(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _seed(capsys)
    code, out, _ = _run(capsys, "search", "cat windowsill", "--wing", "home", "--json", "--as-of", "2100-01-01")
    result = json.loads(out)
    assert code == 0 and [h["room"] for h in result["hits"]] == ["pets"]
    assert result["scope"] == "wing=home" and result["trust_excluded_wings"] is None
    assert result["hits"][0]["elapsed_days"] > 0 and "added_by" not in result["hits"][0]
    code, out, _ = _run(capsys, "search", "GraphQL", "--wing", "home")
    assert code == 0 and out.startswith("no hits")


def test_window_note_is_announced(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _seed(capsys)
    code, out, _ = _run(capsys, "search", "GraphQL on 2023-10-03", "--when-from-query")
    assert code == 0 and out.splitlines()[0] == "(date window 2023-10-03 read from the query)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("search", "x", "-n", "0"), "limit must be an integer from 1 to 1000; got 0"),
        (("search", "x", "--ranked-at", "2024-01-01T00:00:00"), "has no timezone"),
        (("search", "x", "--as-of", "soon"), "is not an ISO date"),
        (("search", "x", "--vault", "missing"), "missing"),
    ],
)
def test_bad_arguments_exit_1(
    home: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    _seed(capsys)
    code, out, err = _run(capsys, *args)
    assert code == 1 and message in out + err


def test_tampered_hit_exits_2(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _seed(capsys)
    database = home / "vaults" / "default" / "vault.db"
    with sqlite3.connect(database) as raw:
        # Every row flipped (a sealed vault's wing column holds blind values, so no row is picked by name).
        for seq, content in raw.execute("SELECT seq, content FROM drawers").fetchall():
            blob = bytearray(content)
            blob[-1] ^= 0x01
            raw.execute("UPDATE drawers SET content = ? WHERE seq = ?", (bytes(blob), seq))
    code, _out, _err = _run(capsys, "search", "GraphQL gateway")
    assert code == 2


def test_exact_and_morph_are_shown_as_shares_of_the_pages_strongest_and_json_keeps_them_raw(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(capsys)
    again = "GraphQL GraphQL GraphQL gateway notes"
    assert _run(capsys, "remember", again, "--wing", "backend", "--room", "api")[0] == 0
    code, out, _ = _run(capsys, "search", "GraphQL gateway", "--json")
    raw = [hit["lexical_exact"] for hit in json.loads(out)["hits"]]
    assert code == 0 and max(raw) > 1.0  # raw BM25 is unbounded: the reason the text output normalises it
    code, out, _ = _run(capsys, "search", "GraphQL gateway")
    shown = [float(line.split("exact ")[1].split()[0]) for line in out.splitlines() if line.startswith("    score ")]
    assert len(shown) == len(raw) and max(shown) == 1.0 and all(0.0 <= value <= 1.0 for value in shown)
    assert shown == pytest.approx([value / max(raw) for value in raw], abs=1e-3)
    assert "share of the strongest on this page" in out


def test_the_header_names_the_content_date_beside_the_filing_date(home: Path) -> None:
    from dataclasses import replace

    from undercroft_cli.commands.search import render_hit
    from undercroft_core import HashEmbedder
    from undercroft_store import Palace
    from undercroft_store.search import Searcher, SearchRequest

    with Palace.open(home, create=True, embedder=HashEmbedder()) as store:
        store.remember("Quarterly numbers were final", added_by="test")
        [hit] = Searcher.from_settings(store.vault, store.vault.embedder).search(SearchRequest("quarterly")).hits
    undated = render_hit(hit)[0]
    assert f"filed {hit.filed_at}" in undated and "content date" not in undated
    dated = render_hit(replace(hit, content_date="2024-03-01"))[0]
    assert f"2024-03-01 (content date; filed {hit.filed_at})" in dated
