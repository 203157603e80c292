"""End to end: the real ``undercroft`` program with an in-process model embedder (onnx and ort).

A fresh palace is mined and searched with ``UNDERCROFT_EMBEDDER=ort`` and the offline MiniLM (skips, with the
reason, when that model package is absent); the same drive runs on both runtimes over a tiny model the test
generates (always runs), including a tokenizer/model pair that does not belong together, whose failed
inference must leave the write landed, the count on MCP ``undercroft_status`` and the server answering.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from live_server import palace_env
from model_fixtures import MINILM_MISSING, POISON, TinyModel, minilm_files, mismatched_pair, tiny_pair

PROGRAM = Path(sys.executable).parent / "undercroft"
NOTES = {
    "vehicle.md": "Last spring I finally sold my old automobile to the neighbour across the street.",
    "garden.md": "The tomato seedlings need watering twice a day during the July heat.",
    "billing.md": "We chose PostgreSQL for the billing service because of row-level locking.",
}


def _run(home: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROGRAM), *args], env=palace_env(home, **extra), capture_output=True, text=True, timeout=180, check=False
    )


def _ok(home: Path, *args: str, **extra: str) -> str:
    done = _run(home, *args, **extra)
    assert done.returncode == 0, f"undercroft {' '.join(args)} -> {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _model_env(runtime: str, files: TinyModel, name: str) -> dict[str, str]:
    return {
        "UNDERCROFT_EMBEDDER": runtime,
        "UNDERCROFT_ONNX_MODEL": str(files.model),
        "UNDERCROFT_ONNX_TOKENIZER": str(files.tokenizer),
        "UNDERCROFT_ONNX_NAME": name,
        "UNDERCROFT_ORT_POOL": "2",
    }


def _notes(root: Path, notes: dict[str, str]) -> Path:
    root.mkdir()
    for name, text in notes.items():
        (root / name).write_text(text + "\n", encoding="utf-8")
    return root


def _hits(stdout: str) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = json.loads(stdout)["hits"]
    return hits


def test_ort_mines_and_searches_a_fresh_palace_with_minilm(tmp_path: Path) -> None:
    files = minilm_files()
    if files is None:
        pytest.skip(MINILM_MISSING)
    home = tmp_path / "palace"
    _ok(home, "init")
    notes = _notes(tmp_path / "notes", NOTES)
    env = _model_env("ort", files, "all-minilm-l6-v2-int8")
    mined = _ok(home, "mine", str(notes), **env)
    assert "3 drawer(s)" in mined
    hits = _hits(_ok(home, "search", "--json", "who bought the old automobile", **env))
    assert hits and hits[0]["content"] == NOTES["vehicle.md"], hits
    assert "embedder:       all-minilm-l6-v2-int8@384" in _ok(home, "stats", **env)
    # The same files on the portable runtime are the same space: no refusal, the same first hit.
    onnx_hits = _hits(
        _ok(home, "search", "--json", "who bought the old automobile", **{**env, "UNDERCROFT_EMBEDDER": "onnx"})
    )
    assert onnx_hits[0]["id"] == hits[0]["id"]
    # A silent swap back to the default is refused, naming the way out.
    swapped = _run(home, "search", "vehicle")
    assert swapped.returncode == 1 and "UNDERCROFT_FORCE_EMBEDDER=1" in swapped.stderr
    assert "all-minilm-l6-v2-int8@384" in swapped.stderr
    # The vault is sealed: no note's words are in the raw database file.
    raw = b"".join(path.read_bytes() for path in home.rglob("*") if path.is_file())
    for word in (b"automobile", b"PostgreSQL", b"tomato"):
        assert word not in raw


@pytest.mark.parametrize("runtime", ["onnx", "ort"])
def test_a_tiny_model_drives_mine_and_search_on_both_runtimes(tmp_path: Path, runtime: str) -> None:
    files = tiny_pair(tmp_path)
    home = tmp_path / "palace"
    _ok(home, "init")
    notes = _notes(tmp_path / "notes", {"cars.md": "the red car runs", "pets.md": "a cat sleeps"})
    env = _model_env(runtime, files, "tiny-e2e")
    assert "2 drawer(s)" in _ok(home, "mine", str(notes), **env)
    hits = _hits(_ok(home, "search", "--json", "red car", **env))
    assert hits[0]["content"] == "the red car runs"
    assert "embedder:       tiny-e2e@8" in _ok(home, "stats", **env)


@pytest.mark.parametrize("runtime", ["onnx", "ort"])
def test_a_missing_model_file_refuses_naming_the_variable(tmp_path: Path, runtime: str) -> None:
    files = tiny_pair(tmp_path)
    home = tmp_path / "palace"
    _ok(home, "init")
    env = _model_env(runtime, files, "tiny-e2e")
    for variable in ("UNDERCROFT_ONNX_MODEL", "UNDERCROFT_ONNX_TOKENIZER"):
        done = _run(home, "remember", "a cat sleeps", **{**env, variable: str(tmp_path / "absent")})
        assert done.returncode == 1 and f"{variable}=" in done.stderr and "no such file" in done.stderr
        assert "Traceback" not in done.stderr
    unset = _run(home, "remember", "a cat sleeps", **{k: v for k, v in env.items() if k != "UNDERCROFT_ONNX_MODEL"})
    assert unset.returncode == 1 and "UNDERCROFT_ONNX_MODEL is not set" in unset.stderr


def _session(home: Path, env: dict[str, str]) -> Callable[[Callable[[ClientSession], Awaitable[Any]]], Any]:
    params = StdioServerParameters(command=str(PROGRAM), args=["serve-mcp"], env=palace_env(home, **env))

    def run(script: Callable[[ClientSession], Awaitable[Any]]) -> Any:
        async def main() -> Any:
            with open(os.devnull, "w") as quiet:
                async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
                    await session.initialize()
                    return await script(session)

        return anyio.run(main)

    return run


def _text(result: Any) -> str:
    return "".join(part.text for part in result.content)


@pytest.mark.parametrize("runtime", ["onnx", "ort"])
def test_a_failed_inference_is_counted_and_the_server_keeps_answering(tmp_path: Path, runtime: str) -> None:
    """The tokenizer gives the poison word an id past the model's table: the runtime raises inside the save."""
    files = mismatched_pair(tmp_path)
    home = tmp_path / "palace"
    _ok(home, "init")

    async def script(session: ClientSession) -> dict[str, Any]:
        poisoned = await session.call_tool("undercroft_save", {"content": f"the {POISON} leaks", "wing": "w"})
        healthy = await session.call_tool("undercroft_save", {"content": "the red car", "wing": "w"})
        status = await session.call_tool("undercroft_status", {})
        found = await session.call_tool("undercroft_search", {"query": POISON, "limit": 5})
        return {"poisoned": poisoned, "healthy": healthy, "status": status, "found": found}

    replies = _session(home, _model_env(runtime, files, "tiny-mismatched"))(script)
    assert not replies["poisoned"].is_error and not replies["healthy"].is_error
    status = replies["status"].structured_content or json.loads(_text(replies["status"]))
    assert status["embed_failures"] == 1, status
    # The write landed verbatim and is lexically findable (semantically invisible until re-embedded).
    assert not replies["found"].is_error and f"the {POISON} leaks" in _text(replies["found"])


def test_a_hash_vault_moves_to_a_model_only_by_force_and_repair(tmp_path: Path) -> None:
    files = tiny_pair(tmp_path)
    home = tmp_path / "palace"
    _ok(home, "init")
    notes = _notes(tmp_path / "notes", {"cars.md": "the red car runs", "pets.md": "a cat sleeps"})
    _ok(home, "mine", str(notes))  # the hash default
    env = _model_env("ort", files, "tiny-e2e")
    refused = _run(home, "search", "red car", **env)
    assert refused.returncode == 1 and "undercroft-hash-v3@384" in refused.stderr
    assert "UNDERCROFT_FORCE_EMBEDDER=1" in refused.stderr
    repaired = json.loads(_ok(home, "repair", "--json", **env, UNDERCROFT_FORCE_EMBEDDER="1"))
    assert repaired["identity_recorded"] == "tiny-e2e@8" and repaired["embeddings_reembedded"] == 2, repaired
    hits = _hits(_ok(home, "search", "--json", "red car", **env))  # no force needed any more
    assert hits[0]["content"] == "the red car runs"
    back = _run(home, "search", "red car")
    assert back.returncode == 1 and "tiny-e2e@8" in back.stderr
