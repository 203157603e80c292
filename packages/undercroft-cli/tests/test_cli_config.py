"""``config check``: validated vs accepted apart, warnings, unknown names with suggestions, exit 1 on a refusal."""

from __future__ import annotations

import json
import os

import pytest
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli._internal.i18n import language, message
from undercroft_cli.main import cli


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("UNDERCROFT_")]:
        monkeypatch.delenv(name)


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_cli(cli, ["config", "check", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_empty_environment_starts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _check(capsys)
    assert code == 0 and "every default applies" in out and out.rstrip().endswith("This environment starts")


def test_validated_and_accepted_are_reported_apart(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv("UNDERCROFT_EMBEDDER", "hash")
    monkeypatch.setenv("UNDERCROFT_HOME", "/nowhere/that/exists")  # opaque: accepted, never opened
    code, out, _ = _check(capsys)
    assert code == 0
    assert "validated: 1\n  UNDERCROFT_EMBEDDER\n" in out
    assert "accepted (opaque: the consumer validates it): 1\n  UNDERCROFT_HOME\n" in out
    assert not os.path.exists("/nowhere/that/exists")


def test_a_refusal_exits_1_and_names_the_variable(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNDERCROFT_EMBEDDER", "word2vec")
    code, out, err = _check(capsys)
    assert code == 1
    assert "refused (this environment would not start): 1\n  UNDERCROFT_EMBEDDER: " in out
    assert "word2vec" in out and "This environment would refuse to start" in err


def test_warnings_and_unknown_names_with_suggestions(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNDERCROFT_RERANK_TOP_N", "1_000")
    monkeypatch.setenv("UNDERCROFT_EMBEDER", "hash")
    code, out, _ = _check(capsys)
    assert code == 0
    assert "warned (the default is kept): 1\n  UNDERCROFT_RERANK_TOP_N: " in out
    assert "UNDERCROFT_EMBEDER is not a known declaration; did you mean UNDERCROFT_EMBEDDER?" in out


def test_json_report(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNDERCROFT_PASSPHRASE", "trailing space ")
    code, out, _ = _check(capsys, "--json")
    body = json.loads(out)
    assert code == 1 and body["starts"] is False
    [entry] = body["entries"]
    assert (entry["name"], entry["status"]) == ("UNDERCROFT_PASSPHRASE", "refused")
    assert "trailing space" not in out  # a credential's value is never echoed


def test_result_strings_have_a_language_seam(monkeypatch: pytest.MonkeyPatch) -> None:
    assert language({"UNDERCROFT_LANG": "de"}) == "en"  # not catalogued yet: English
    assert language({"UNDERCROFT_LANG": "xx"}) == "en"
    assert message("config.starts", env={"UNDERCROFT_LANG": "fr"}) == "This environment starts"
