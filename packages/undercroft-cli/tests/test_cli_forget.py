"""``undercroft forget`` / ``verify-forgetting``: a receipt verifies (0), a tampered one fails (2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli.main import cli
from undercroft_vault import generate_signing_identity


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("UNDERCROFT_HOME", str(tmp_path / "palace"))
    monkeypatch.delenv("UNDERCROFT_PASSPHRASE", raising=False)
    monkeypatch.delenv("UNDERCROFT_EMBEDDER", raising=False)
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_cli(cli, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_forget_and_verify_forgetting(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "init")[0] == 0
    drawer_id = _run(capsys, "remember", "Alice lives on Elm Street", "--wing", "people", "--room", "a")[1].split()[1]
    key = home / "signer.key"
    signer = generate_signing_identity(hybrid=False)
    key.write_text(signer.encode(), encoding="ascii")
    receipt = home / "receipt.json"
    code, out, _ = _run(capsys, "forget", drawer_id, "--sign", str(key), "--out", str(receipt))
    assert code == 0 and "forgot 1 drawer(s)" in out
    code, out, _ = _run(capsys, "verify-forgetting", str(receipt), "--sender", signer.sender().encode())
    assert code == 0 and out.rstrip().endswith("FORGETTING VERIFIED") and "legacy-ed25519" in out
    tampered = json.loads(receipt.read_text())
    tampered["forgotten"][0]["content_sha256"] = "0" * 64
    receipt.write_text(json.dumps(tampered))
    code, out, _ = _run(capsys, "verify-forgetting", str(receipt))
    assert code == 2 and out.rstrip().endswith("FORGETTING FAILED")
    assert _run(capsys, "drawer", "get", drawer_id)[0] == 1
    code, _, err = _run(capsys, "forget", drawer_id)
    assert code == 1 and "no drawer" in err
    receipt.write_text("not json")
    code, _, err = _run(capsys, "verify-forgetting", str(receipt))
    assert code == 1 and "not JSON" in err
