"""The real MemPalace 3.11.0 through the driver, offline; skipped unless its venv and model are present.

Point MEMPALACE_PYTHON at the interpreter made by `tools/mempalace_env.sh DIR` (DIR/bin/python).
"""

import os
import pathlib
import subprocess

import pytest
from undercroft_bench.chunking import Chunk
from undercroft_bench.vs_systems import MempalaceDriver, MempalaceRetriever, driver_command

MODEL = pathlib.Path.home() / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx" / "model.onnx"


def _python() -> pathlib.Path:
    configured = os.environ.get("MEMPALACE_PYTHON", "")
    if not configured:
        pytest.skip("MemPalace venv not configured: set MEMPALACE_PYTHON (tools/mempalace_env.sh DIR)")
    python = pathlib.Path(configured)
    if not python.exists():
        pytest.skip(f"MemPalace venv absent: {python} does not exist (create it with tools/mempalace_env.sh DIR)")
    probe = subprocess.run([str(python), "-c", "import mempalace"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"MemPalace not importable under {python} (run tools/mempalace_env.sh)")
    if not MODEL.is_file():
        pytest.skip(f"ChromaDB's offline MiniLM model is absent: {MODEL} (run tools/mempalace_env.sh)")
    return python


def test_mempalace_3_11_indexes_and_ranks_our_chunks() -> None:
    python = _python()
    chunks = [
        Chunk("c0", 'Caroline said, "I adopted a golden retriever puppy called Biscuit last week."', "1", ()),
        Chunk("c1", 'Melanie said, "We repainted the kitchen a bright shade of blue."', "2", ()),
        Chunk("c2", 'Caroline said, "My tax return is finally filed with the accountant."', "3", ()),
    ]
    with MempalaceDriver(driver_command(python)) as driver:
        assert driver.hello()["mempalace"] == "3.11.0"
        retriever = MempalaceRetriever(driver, "add")
        retriever.index(chunks)
        assert retriever.drawers == 3
        ranking = retriever.search("What dog did Caroline get?", 3)
        assert ranking[0] == "c0"
        assert sorted(ranking) == ["c0", "c1", "c2"]
