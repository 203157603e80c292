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
    assert language({"UNDERCROFT_LANG": "de"}) == "de"
    assert language({"UNDERCROFT_LANG": "xx"}) == "en"
    assert message("config.starts", env={"UNDERCROFT_LANG": "fr"}) == "Cet environnement démarre"
    assert message("config.starts", env={}) == "This environment starts"


def test_the_configuration_reference_is_rendered_for_this_build() -> None:
    from pathlib import Path

    from undercroft_cli._internal.reference import page

    doc = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"
    assert doc.read_text(encoding="utf-8") == page(), (
        "docs/configuration.md is stale: python -m undercroft_cli._internal.reference > docs/configuration.md"
    )
    assert "| `embedder/hash` | hash embedder | `UNDERCROFT_EMBEDDER=hash` | yes |" in page()


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        (
            "UNDERCROFT_RETRIEVAL",
            "fde",
            "the fde tier draws candidates from ColBERT token matrices and no ColBERT encoder is configured",
        ),
        ("UNDERCROFT_OTLP_ENDPOINT", "http://otel.example:4318", "cleartext http to the non-loopback host"),
        ("UNDERCROFT_QDRANT_URL", "http://evil.example:6333", "cleartext http to the non-loopback host"),
        ("UNDERCROFT_EMBED_DIM", "0", "0 is out of range"),
        ("UNDERCROFT_ADMISSION_LLM", "garbage", "not one of the legal values"),
    ],
)
def test_check_and_start_up_refuse_alike_naming_the_variable(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: object,
    name: str,
    value: str,
    says: str,
) -> None:
    monkeypatch.setenv("UNDERCROFT_HOME", str(tmp_path))
    monkeypatch.setenv(name, value)
    code, out, _ = _check(capsys)
    assert code == 1 and f"  {name}: {name}='{value}' refuses to start: " in out and says in out
    code = run_cli(cli, ["init"])
    err = capsys.readouterr().err
    assert code == 1 and f"{name}='{value}' refuses to start: " in err and says in err
    assert list(os.scandir(str(tmp_path))) == []  # a refused start opens (and creates) nothing


def test_a_tuning_value_warns_once_at_start_and_keeps_the_default(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv("UNDERCROFT_HOME", str(tmp_path))
    assert run_cli(cli, ["init"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("UNDERCROFT_FUSION", "rrf")
    monkeypatch.setenv("UNDERCROFT_FTS_PREFILTER_MIN", "xyz")
    monkeypatch.setenv("UNDERCROFT_TRUST_FLOR", "standard")
    assert run_cli(cli, ["remember", "the billing freeze holds", "--wing", "work"]) == 0
    assert run_cli(cli, ["search", "billing freeze"]) == 0
    captured = capsys.readouterr()
    assert "the billing freeze holds" in captured.out
    for line in (
        "warning: UNDERCROFT_FUSION='rrf': rrf was removed",
        "warning: UNDERCROFT_FTS_PREFILTER_MIN='xyz' does not parse",
        "warning: UNDERCROFT_TRUST_FLOR is not a known declaration; did you mean UNDERCROFT_TRUST_FLOOR?",
    ):
        assert captured.err.count(line) == 2, line  # once per run, two runs
