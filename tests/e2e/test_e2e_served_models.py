"""End to end: the real ``undercroft`` program with its three served-model roles over TLS with a pinned CA.

One palace, one loopback Ollama-shaped server (tests/llm_servers.py) serving real MiniLM embeddings (skips with
the reason when the offline model is absent) and a deterministic chat "model": ``UNDERCROFT_EMBEDDER=http``
remember, ``refine`` into the graph, the advisor diverting a write and an unusable one refusing — each a
subprocess (search over the served vectors is driven in process by the CLI tests, to keep this one short).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from llm_servers import model_server, simple_extractor
from model_fixtures import MINILM_MISSING, minilm_embedder
from tls_material import make_authority, server_context

PROGRAM = Path(sys.executable).parent / "undercroft"
pytestmark = pytest.mark.loopback


def _run(home: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    clean.update(env, UNDERCROFT_HOME=str(home))
    return subprocess.run([str(PROGRAM), *args], env=clean, capture_output=True, text=True, timeout=120, check=False)


def test_the_three_roles_from_the_real_program(tmp_path: Path) -> None:
    embedder: Any = minilm_embedder()
    if embedder is None:
        pytest.skip(MINILM_MISSING)
    authority = make_authority("undercroft e2e CA")
    pin = tmp_path / "root.crt"
    pin.write_bytes(authority.pem())

    def brain(system: str, user: str) -> str:
        if "security screen" in system:
            return json.dumps({"verdict": "quarantine" if "lunch" in user else "safe"})
        return simple_extractor(system, user)

    with model_server(
        "ollama", model="minilm", embed=embedder.embed, brain=brain, tls=server_context(authority, tmp_path)
    ) as server:
        env = {
            "UNDERCROFT_EMBEDDER": "http",
            "UNDERCROFT_EMBED_URL": server.url,
            "UNDERCROFT_EMBED_CA": str(pin),
            "UNDERCROFT_EMBED_MODEL": "minilm",
            "UNDERCROFT_LLM_URL": server.url,
            "UNDERCROFT_LLM_CA": str(pin),
            "UNDERCROFT_LLM_MODEL": "minilm",
        }
        home = tmp_path / "palace"
        assert _run(home, env, "init").returncode == 0
        done = _run(home, env, "remember", "Alice works at Acme Corp. She fixed the heating.", "--wing", "people")
        assert done.returncode == 0 and "reads every text it embeds in plaintext" in done.stderr

        refined = _run(home, env, "refine", "--json")
        assert refined.returncode == 0, refined.stderr
        report = json.loads(refined.stdout)
        assert (report["sent"], report["facts_written"], report["egress_recorded"]) == (1, 1, True)
        facts = json.loads(_run(home, env, "kg", "query", "Alice", "--json").stdout)["facts"]
        assert [(f["object"], f["grounding"], f["extractor"]) for f in facts] == [
            ("Acme Corp", "stated", "ollama:minilm")
        ]
        assert facts[0]["support"]["receipt"] == "verified" and facts[0]["support"]["spans"] == [[0, 24]]  # bytes

        screened = {**env, "UNDERCROFT_ADMISSION": "quarantine", "UNDERCROFT_ADMISSION_LLM": "advisory"}
        diverted = _run(home, screened, "remember", "Notes from lunch with the team.", "--wing", "people")
        assert diverted.returncode == 0 and diverted.stdout.startswith("quarantined:")
        unusable = {**screened, "UNDERCROFT_LLM_URL": "https://127.0.0.1:9"}
        refused = _run(home, unusable, "remember", "never written", "--wing", "people")
        assert refused.returncode == 1 and "UNDERCROFT_ADMISSION_LLM=advisory" in refused.stderr
