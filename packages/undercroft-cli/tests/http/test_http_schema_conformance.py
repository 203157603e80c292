"""Schemathesis against a live ``undercroft serve-http``: every route and method of /v1/openapi.json.

The server is the real program on a loopback port, with a bearer; schemathesis loads the document with that
bearer and runs its examples, coverage and fuzzing phases over all 58 operations (a fixed seed, a bounded
number of cases per operation, so the run is deterministic and ~30 s). Path ids are drawn from the live
vaults and drawers most of the time, so operations reach their logic instead of a 404.

Checks: every built-in one except ``positive_data_acceptance``. That check fails any 400 to a request the
schema admits; the document states types, bounds, enums, the vault-id and drawer-id shapes and non-blank
required text, but not the name guard's Unicode rules (control, unassigned, NFC…), date grammars, or the
inside of server-issued documents (witness, forget receipt, export) — those are refused with a 400 naming the
rule, which is a documented response, not a contradiction. What stays checked: no 5xx (the three pending
routes may answer 501, and only they), every status, content type, header and body conforms to the
document, schema-violating input is never accepted, a wrong method is a 405 with an exact ``Allow``, and a
request without the bearer is refused. Afterwards the server logged no traceback and no unexpected failure,
stops cleanly, and every vault it served still verifies.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from live_server import LiveServer, palace_env, undercroft, verify_all
from undercroft_cli.http.routes import PENDING_ROUTES, ROUTES

pytestmark = pytest.mark.loopback

SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
TOKEN = "schema-test-bearer-0123456789"
VAULTS = ("default", "tenant-b")
EXAMPLES_PER_OPERATION = 10


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, dict[str, str], list[str]]]:
    home = tmp_path_factory.mktemp("schema") / "palace"
    env = palace_env(home, UNDERCROFT_MCP_HTTP_TOKEN=TOKEN)
    assert undercroft(env, "init").returncode == 0
    server = LiveServer(env)
    drawers: list[str] = []
    try:
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as client:
            assert client.post("/v1/vaults", json={"id": "tenant-b"}).status_code == 201
            for vault in VAULTS:
                for n in range(3):
                    saved = client.post(
                        f"/v1/vaults/{vault}/drawers",
                        json={"text": f"turnip ledger entry {n} for {vault}", "wing": "work", "room": "ledger"},
                    )
                    assert saved.status_code == 200, saved.text
                    drawers.append(saved.json()["id"])
        yield server, env, drawers
    finally:
        server.stop()


def _config(path: Path, drawers: list[str]) -> Path:
    pending = "|".join(re.escape(p.split("/{id}/", 1)[1]) for _m, p in PENDING_ROUTES)
    listed = ", ".join(f'"{d}"' for d in drawers)
    path.write_text(
        f"""
[dictionaries]
vaults = {{ values = [{", ".join(f'"{v}"' for v in VAULTS)}] }}
drawers = {{ values = [{listed}] }}

[parameters]
"path.id" = {{ dictionary = "vaults", probability = 0.7 }}
"path.drawer_id" = {{ dictionary = "drawers", probability = 0.5 }}

# The pending routes answer 501 by design (the status their document lists); no other 5xx is allowed.
[[operations]]
include-path-regex = "/({pending})$"
checks.not_a_server_error.expected-statuses = ["2XX", "3XX", "4XX", "501"]
""",
        encoding="utf-8",
    )
    return path


def test_every_operation_conforms_to_the_served_document(
    live: tuple[LiveServer, dict[str, str], list[str]], tmp_path: Path
) -> None:
    server, env, drawers = live
    run = subprocess.run(
        [
            str(SCHEMATHESIS),
            "--config-file",
            str(_config(tmp_path / "schemathesis.toml", drawers)),
            "run",
            f"{server.url}/v1/openapi.json",
            "--header",
            f"Authorization: Bearer {TOKEN}",
            "--checks",
            "all",
            "--exclude-checks",
            "positive_data_acceptance",
            "--phases",
            "examples,coverage,fuzzing",
            "--max-examples",
            str(EXAMPLES_PER_OPERATION),
            "--seed",
            "20",
            "--no-shrink",
            # One worker: hypothesis describes strategies with ast.parse, and CPython 3.11's parser is not safe in
            # two threads at once ("AST constructor recursion depth mismatch", an intermittent internal error).
            "--workers",
            "1",
            "--request-timeout",
            "30",
        ],
        env={
            **os.environ,
            "SCHEMATHESIS_HOOKS": "_schemathesis_hooks",
            "PYTHONPATH": str(Path(__file__).resolve().parent),
            "NO_COLOR": "1",
        },
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    report = run.stdout + run.stderr
    (tmp_path / "report.txt").write_text(report, encoding="utf-8")
    assert run.returncode == 0, report[:6000] + "\n…\n" + report[-6000:]
    selected = re.search(r"Selected: (\d+)/(\d+)", report)
    tested = re.search(r"Tested: (\d+)", report)
    assert selected is not None and tested is not None, report[-4000:]
    assert int(selected.group(1)) == int(selected.group(2)) == int(tested.group(1)) == len(ROUTES), report[-4000:]

    assert "Traceback" not in server.log, server.log[-8000:]
    assert "unexpected" not in server.log, server.log[-8000:]
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        remaining = client.get("/v1/vaults").json()["vaults"]  # the run may delete tenant-b: it is allowed to
    assert "default" in remaining
    assert server.stop() == 0  # SIGTERM is an orderly stop: every handle closed, exit 0
    assert "Traceback" not in server.log, server.log[-8000:]
    verdicts = verify_all(env, remaining)
    assert all(code == 0 for code, _output in verdicts.values()), verdicts
