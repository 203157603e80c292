"""End to end: the official TypeScript MCP SDK client (``@modelcontextprotocol/sdk``) against the real server.

``tests/e2e/ts_probe/probe.mjs`` spawns ``undercroft serve-mcp`` over stdio as a Node host does, lists every tool
and calls every one once against a real vault; the SDK client validates each result's ``structuredContent``
against the tool's ``outputSchema`` and the probe checks it again with Ajv. This test judges its report: every
advertised tool annotated, every input schema an object schema whose properties are all constrained, every
tool with an output schema, every tool called and every successful result valid.

The probe's dependencies are pinned in ``ts_probe/package-lock.json`` and installed by ``.ci/run`` (``npm ci``).
Under CI (``CI`` set, as ``.ci/run`` and GitHub set it) a missing ``node`` or ``node_modules`` FAILS this test:
a probe that silently skipped would let the issue's TypeScript measurement rot. Elsewhere it skips and says how
to install. Cost: ~5 s (one server, 40 calls).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from live_server import palace_env
from undercroft_cli.mcp.inventory import READ, advertised_names

PROBE = Path(__file__).resolve().parent / "ts_probe"
PROGRAM = Path(sys.executable).parent / "undercroft"
NODE = shutil.which("node")


def _require_the_probe() -> str:
    missing = None
    if NODE is None:
        missing = "node is not installed (Node 20 runs the TypeScript SDK probe)"
    elif not (PROBE / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        missing = f"the probe's packages are not installed: (cd {PROBE} && npm ci)"
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"under CI the TypeScript SDK probe must run: {missing}")
        pytest.skip(missing)
    assert NODE is not None
    return NODE


def _cli(home: Path, *args: str) -> str:
    ran = subprocess.run([str(PROGRAM), *args], env=palace_env(home), capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def test_the_typescript_sdk_client_sees_every_tool_annotated_constrained_and_valid(tmp_path: Path) -> None:
    node = _require_the_probe()
    home = tmp_path / "palace"
    _cli(home, "init")
    [row] = json.loads(_cli(home, "remember", "Forget this on request.", "--json"))["results"]
    receipt = tmp_path / "receipt.json"
    _cli(home, "forget", row["id"], "--out", str(receipt))
    ran = subprocess.run(
        [node, str(PROBE / "probe.mjs"), str(PROGRAM), str(receipt)],
        cwd=PROBE,
        env=palace_env(home),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    advertised = advertised_names()
    assert (
        report["sdkVersion"]
        == json.loads((PROBE / "package.json").read_text())["dependencies"]["@modelcontextprotocol/sdk"]
    )
    assert set(report["tools"]) == advertised and len(report["tools"]) == len(advertised)
    assert set(report["annotated"]) == advertised, sorted(advertised - set(report["annotated"]))
    assert set(report["readOnly"]) == READ & advertised
    assert set(report["objectSchemas"]) == advertised
    assert report["unconstrained"] == {} and set(report["constrained"]) == advertised
    assert set(report["withOutputSchema"]) == advertised
    assert set(report["called"]) == advertised, f"never called: {sorted(advertised - set(report['called']))}"
    # The one expected refusal: no mirror is declared for this server, and the error names the variable.
    failures = dict(report["failures"])
    assert "UNDERCROFT_CHROMA_URL" in failures.pop("undercroft_index_status")
    assert failures == {}
    assert set(report["validated"]) == advertised - {"undercroft_index_status"}
