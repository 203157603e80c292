"""End to end: the rescore tier (``UNDERCROFT_RERANKER=onnx|ort``) from the real ``undercroft`` program.

A tiny cross-encoder the test generates (tests/model_fixtures.py) re-orders the fused top of a hash vault's
ranking — the test computes what the graph scores each pair, so the expected order is known; a cross-encoder
one row short of its tokenizer raises on the poison word, and then the search keeps its fused order, still
answers, and the failure is counted on MCP ``undercroft_status``, ``stats --json`` and /v1 stats.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from model_fixtures import POISON, VOCAB, cross_encoder_pair, cross_encoder_score
from test_e2e_model_embedders import _ok, _run, _session
from test_e2e_serve_http import _start, _stop

DRAWERS = ("car dog", "car cat", "the car sleeps", "a blue car", "car runs", "the red car", "car automobile invoice")


def _reranker(tmp_path: Path, runtime: str, rows: int = len(VOCAB)) -> dict[str, str]:
    files = cross_encoder_pair(tmp_path, rows)
    return {
        "UNDERCROFT_RERANKER": runtime,
        "UNDERCROFT_RERANK_MODEL": str(files.model),
        "UNDERCROFT_RERANK_TOKENIZER": str(files.tokenizer),
        "UNDERCROFT_RERANK_NAME": "tiny-ce",
        "UNDERCROFT_ORT_POOL": "2",
    }


def _palace(tmp_path: Path, drawers: tuple[str, ...]) -> Path:
    home = tmp_path / "palace"
    _ok(home, "init")
    for text in drawers:
        _ok(home, "remember", text, "--wing", "w")
    return home


def _order(home: Path, query: str, **env: str) -> list[str]:
    hits = json.loads(_ok(home, "search", "--json", query, "--limit", "10", **env))["hits"]
    return [hit["content"] for hit in hits]


@pytest.mark.parametrize("runtime", ["onnx", "ort"])
def test_the_cross_encoder_reorders_the_fused_top(tmp_path: Path, runtime: str) -> None:
    home = _palace(tmp_path, DRAWERS)
    fused = _order(home, "car")
    reranked = _order(home, "car", **_reranker(tmp_path, runtime))
    assert sorted(fused) == sorted(reranked) == sorted(DRAWERS)  # order changes, never membership
    assert reranked == sorted(DRAWERS, key=lambda text: -cross_encoder_score("car", text))
    assert reranked != fused  # the stage did something the fused ranking did not
    # A window of one is the fused order: only the top position is "reranked", and it stays.
    assert _order(home, "car", **_reranker(tmp_path, runtime), UNDERCROFT_RERANK_TOP_N="1") == fused
    # The stage persists nothing: no word of a reranked drawer is anywhere in the sealed palace's raw files.
    raw = b"".join(path.read_bytes() for path in home.rglob("*") if path.is_file())
    assert b"automobile" not in raw and b"invoice" not in raw


def test_a_declared_reranker_without_its_files_refuses_naming_the_variable(tmp_path: Path) -> None:
    home = _palace(tmp_path, DRAWERS[:1])
    env = _reranker(tmp_path, "onnx")
    for variable in ("UNDERCROFT_RERANK_MODEL", "UNDERCROFT_RERANK_TOKENIZER"):
        done = _run(home, "search", "car", **{**env, variable: str(tmp_path / "absent")})
        assert done.returncode == 1 and f"{variable}=" in done.stderr and "Traceback" not in done.stderr
    unset = _run(home, "search", "car", **{k: v for k, v in env.items() if k != "UNDERCROFT_RERANK_MODEL"})
    assert unset.returncode == 1 and "UNDERCROFT_RERANK_MODEL is not set" in unset.stderr
    late = _run(home, "search", "car", UNDERCROFT_RERANKER="colbert")
    assert late.returncode == 1 and "UNDERCROFT_COLBERT_MODEL is not set" in late.stderr  # named, not a traceback


@pytest.mark.parametrize("runtime", ["onnx", "ort"])
def test_a_failing_reranker_keeps_the_fused_order_and_is_counted(tmp_path: Path, runtime: str) -> None:
    drawers = (*DRAWERS, f"car {POISON}")
    home = _palace(tmp_path, drawers)
    fused = _order(home, "car")
    broken = _reranker(tmp_path, runtime, len(VOCAB) - 1)  # the poison word's id is past the table: it raises
    assert _order(home, "car", **broken) == fused
    stats = json.loads(_ok(home, "stats", "--json", **broken))
    assert stats["rerank_failures"] == 0 and stats["late_failures"] == 0  # this process never searched

    async def script(session: ClientSession) -> dict[str, Any]:
        before = await session.call_tool("undercroft_status", {})
        found = await session.call_tool("undercroft_search", {"query": "car", "limit": 10})
        after = await session.call_tool("undercroft_status", {})
        return {"before": before, "found": found, "after": after}

    replies = _session(home, broken)(script)
    assert not replies["found"].is_error
    assert replies["before"].structured_content["rerank_failures"] == 0
    after = replies["after"].structured_content
    assert after["rerank_failures"] >= 1 and after["late_failures"] == 0, after
    texts = [hit["content"] for hit in replies["found"].structured_content["hits"]]
    assert texts == fused


def test_v1_stats_counts_the_reranker_failures_of_its_vault(tmp_path: Path) -> None:
    home = _palace(tmp_path, (*DRAWERS, f"car {POISON}"))
    server = _start(home, **_reranker(tmp_path, "ort", len(VOCAB) - 1))
    try:
        assert server.v1("GET", "/v1/vaults/default/stats").json()["rerank_failures"] == 0
        found = server.v1("POST", "/v1/vaults/default/search", json={"query": "car", "limit": 10})
        assert found.status_code == 200, found.text
        stats = server.v1("GET", "/v1/vaults/default/stats").json()
        assert stats["rerank_failures"] >= 1 and stats["late_failures"] == 0, stats
        assert server.v1("POST", "/v1/vaults/default/search", json={"query": "car"}).status_code == 200  # still serving
    finally:
        _stop(server)
