"""Specific doctrines: fallbacks, clamps, presence, rates, pins, transport, the check report, accessors."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
import undercroft_config as config
from hypothesis import given
from hypothesis import strategies as st
from undercroft_config import Status, settings
from undercroft_config.values import Address, CaPin, Fusion, Rate, Secret, TrustClass

HASH_ONLY = config.Build.of([config.Capability.EMBEDDER_HASH])


def test_home_defaults_to_dot_undercroft_and_expands_user(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert settings.home({}) == tmp_path / ".undercroft"
    assert settings.home({"UNDERCROFT_HOME": "~/palace"}) == tmp_path / "palace"
    assert settings.home({"UNDERCROFT_HOME": "/data"}) == Path("/data")


def test_passphrase_is_a_secret_and_refuses_a_trailing_newline() -> None:
    secret = settings.passphrase({"UNDERCROFT_PASSPHRASE": "pass phrase"})
    assert isinstance(secret, Secret) and secret.reveal() == "pass phrase"
    assert "pass phrase" not in repr(secret) and "pass phrase" not in str(secret)
    assert settings.passphrase({}) is None
    with pytest.raises(config.Refused, match=r"UNDERCROFT_PASSPHRASE=<0 characters> refuses to start: empty"):
        settings.passphrase({"UNDERCROFT_PASSPHRASE": ""})


@pytest.mark.parametrize(("raw", "expected"), [("1", True), ("true", True), ("0", False), ("no", False), ("2", False)])
def test_force_embedder_allows_the_swap_only_on_an_explicit_yes(raw: str, expected: bool) -> None:
    assert settings.force_embedder({"UNDERCROFT_FORCE_EMBEDDER": raw}) is expected
    assert settings.force_embedder({}) is False


@pytest.mark.parametrize("raw", ["1", "0", "off", "", "anything"])
def test_search_trace_is_presence_triggered(raw: str) -> None:
    assert settings.search_trace({"UNDERCROFT_SEARCH_TRACE": raw}) is True
    assert settings.search_trace({}) is False


@pytest.mark.parametrize(("raw", "expected"), [("0.55", 0.55), ("0.2", 0.2), ("0.05", 0.20), ("0.95", 0.70)])
def test_fusion_weight_is_clamped_to_its_band(raw: str, expected: float) -> None:
    assert settings.fusion_weight({"UNDERCROFT_FUSION_WEIGHT": raw}) == pytest.approx(expected)


def test_fusion_weight_clamp_warns_naming_the_band() -> None:
    outcome = config.resolve("UNDERCROFT_FUSION_WEIGHT", {"UNDERCROFT_FUSION_WEIGHT": "0.9"})
    assert outcome.status is Status.WARNED
    assert outcome.message == "UNDERCROFT_FUSION_WEIGHT='0.9': 0.9 is outside 0.20–0.70; clamped to 0.70"


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6))
def test_fusion_weight_never_leaves_its_band(weight: float) -> None:
    assert 0.20 <= settings.fusion_weight({"UNDERCROFT_FUSION_WEIGHT": repr(weight)}) <= 0.70


@pytest.mark.parametrize("raw", ["nan", "inf", "-inf", "0x1", "1_0", ""])
def test_fusion_weight_garbage_keeps_the_default(raw: str) -> None:
    assert settings.fusion_weight({"UNDERCROFT_FUSION_WEIGHT": raw}) == 0.55


def test_rrf_is_refused_with_a_warning_and_falls_back_to_bm25() -> None:
    outcome = config.resolve("UNDERCROFT_FUSION", {"UNDERCROFT_FUSION": "rrf"})
    assert outcome.value is Fusion.BM25
    assert outcome.status is Status.WARNED
    assert "rrf was removed (measured 7.3pp worse than bm25)" in (outcome.message or "")


def test_late_top_n_follows_rerank_top_n_whenever_that_is_set() -> None:
    assert settings.late_top_n({}) == 200
    assert settings.late_top_n({"UNDERCROFT_RERANK_TOP_N": "80"}) == 80
    # Set to garbage still counts as pinned: the old single knob's default, not 4x deeper.
    assert settings.late_top_n({"UNDERCROFT_RERANK_TOP_N": "lots"}) == 50
    assert settings.late_top_n({"UNDERCROFT_RERANK_TOP_N": "80", "UNDERCROFT_LATE_TOP_N": "300"}) == 300
    assert settings.late_top_n({"UNDERCROFT_RERANK_TOP_N": "80", "UNDERCROFT_LATE_TOP_N": "x"}) == 80


def test_search_knobs_defaults_and_off() -> None:
    assert settings.fts_prefilter_min({}) == 2048
    assert settings.fts_prefilter_min({"UNDERCROFT_FTS_PREFILTER_MIN": "off"}) is None
    assert settings.pool_div({}) == 64
    assert settings.pool_div({"UNDERCROFT_POOL_DIV": "off"}) is None
    assert settings.ivf_min({}) == 8192
    assert settings.wing_pq_min({"UNDERCROFT_WING_PQ_MIN": "off"}) is None
    assert settings.train_source_cap({}) == 4
    assert settings.rerank_top_n({}) == 50
    assert settings.retrieval({}) is None
    assert settings.reranker({"UNDERCROFT_RERANKER": "colbert"}) is not None


def test_semantic_gate_three_states() -> None:
    assert settings.semantic_gate({}) is None
    assert settings.semantic_gate({"UNDERCROFT_SEMANTIC_GATE": "off"}) == "off"
    assert settings.semantic_gate({"UNDERCROFT_SEMANTIC_GATE": "0.35"}) == 0.35
    with pytest.raises(config.Refused, match=r"UNDERCROFT_SEMANTIC_GATE='gate' refuses to start: not a decimal"):
        settings.semantic_gate({"UNDERCROFT_SEMANTIC_GATE": "gate"})


def test_semantic_floor_warns_and_defers() -> None:
    assert settings.semantic_floor({"UNDERCROFT_SEMANTIC_FLOOR": "off"}) == 0.0
    assert settings.semantic_floor({"UNDERCROFT_SEMANTIC_FLOOR": "garbage"}) is None


def test_trust_floor_refuses_garbage_and_declines_with_off() -> None:
    assert settings.trust_floor({"UNDERCROFT_TRUST_FLOOR": "Trusted"}) is TrustClass.TRUSTED
    assert settings.trust_floor({"UNDERCROFT_TRUST_FLOOR": "off"}) is None
    with pytest.raises(config.Refused) as caught:
        settings.trust_floor({"UNDERCROFT_TRUST_FLOOR": "high"})
    assert str(caught.value) == (
        "UNDERCROFT_TRUST_FLOOR='high' refuses to start: not one of the legal values; "
        "legal: one of quarantined, standard, trusted, or off"
    )
    assert TrustClass.QUARANTINED.rank < TrustClass.STANDARD.rank < TrustClass.TRUSTED.rank


@pytest.mark.parametrize(("raw", "expected"), [("20/60", Rate(20, 60)), (" 1/1 ", Rate(1, 1)), ("off", None)])
def test_admission_rate_parses(raw: str, expected: Rate | None) -> None:
    assert settings.admission_rate({"UNDERCROFT_ADMISSION_RATE": raw}) == expected


@pytest.mark.parametrize("raw", ["20", "0/60", "20/0", "20/1m", "1_0/60", "-1/60", "20/60/2", ""])
def test_admission_rate_refuses_what_it_cannot_read(raw: str) -> None:
    with pytest.raises(config.Refused, match=r"UNDERCROFT_ADMISSION_RATE=.* refuses to start"):
        settings.admission_rate({"UNDERCROFT_ADMISSION_RATE": raw})


@pytest.mark.parametrize(("raw", "expected"), [("100", 100), ("0", None), ("off", None)])
def test_orchestrator_rate_limit(raw: str, expected: int | None) -> None:
    assert config.value("UNDERCROFT_ORCH_RATE_LIMIT", {"UNDERCROFT_ORCH_RATE_LIMIT": raw}) == expected


@pytest.mark.parametrize("raw", ["100/min", "1_000", "1e3", "ten"])
def test_orchestrator_rate_limit_refuses_what_used_to_parse_as_off(raw: str) -> None:
    with pytest.raises(config.Refused, match="UNDERCROFT_ORCH_RATE_LIMIT"):
        config.resolve("UNDERCROFT_ORCH_RATE_LIMIT", {"UNDERCROFT_ORCH_RATE_LIMIT": raw})


def test_ca_pin_counts_certificates(ca_file: Path) -> None:
    pin = config.value("UNDERCROFT_EMBED_CA", {"UNDERCROFT_EMBED_CA": str(ca_file)})
    assert pin == CaPin(ca_file, 2)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("not a pem at all", "holds no PEM CERTIFICATE block"),
        ("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "holds no PEM CERTIFICATE block"),
        ("-----BEGIN CERTIFICATE-----\n!!!notbase64!!!\n-----END CERTIFICATE-----\n", "not valid base64"),
        ("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "does not hold a DER certificate"),
        ("MISMATCHED", "closes as"),
    ],
)
def test_ca_pin_refuses_a_file_that_pins_nothing(
    tmp_path: Path, one_certificate: str, content: str, reason: str
) -> None:
    path = tmp_path / "bad.crt"
    if content == "MISMATCHED":
        content = one_certificate.replace("END CERTIFICATE", "END X509 CRL")
    path.write_text(content)
    with pytest.raises(config.Refused, match=reason) as caught:
        config.resolve("UNDERCROFT_LLM_CA", {"UNDERCROFT_LLM_CA": str(path)})
    assert str(caught.value).startswith(f"UNDERCROFT_LLM_CA='{path}' refuses to start")


def test_ca_pin_refuses_binary_and_missing_files(tmp_path: Path) -> None:
    der = tmp_path / "root.der"
    der.write_bytes(b"\x30\x82\xff\xfe" * 40)
    with pytest.raises(config.Refused, match="DER is not accepted"):
        config.resolve("UNDERCROFT_INDEX_CA", {"UNDERCROFT_INDEX_CA": str(der)})
    with pytest.raises(config.Refused, match="is not a readable file"):
        config.resolve("UNDERCROFT_INDEX_CA", {"UNDERCROFT_INDEX_CA": str(tmp_path)})


@pytest.mark.parametrize(
    "url", ["https://x.example", "http://localhost:11434", "http://127.0.0.5:1", "http://[::1]:8080/v1"]
)
def test_outward_urls_tls_or_loopback(url: str) -> None:
    assert config.value("UNDERCROFT_LLM_URL", {"UNDERCROFT_LLM_URL": url}) == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://192.168.1.4:11434", "cleartext http to the non-loopback host '192.168.1.4'"),
        ("http://localhost.evil.com", "cleartext http to the non-loopback host"),
        ("https://", "not an http(s) URL with a host"),
        ("https://x:99999", "not a URL"),
        ("file:///etc/passwd", "not an http(s) URL"),
    ],
)
def test_outward_urls_refuse_cleartext_beyond_loopback(url: str, reason: str) -> None:
    with pytest.raises(config.Refused, match=re.escape(reason)):
        config.resolve("UNDERCROFT_OTLP_ENDPOINT", {"UNDERCROFT_OTLP_ENDPOINT": url})


def test_pgvector_dsn_forms() -> None:
    ok = [
        "host=db.internal sslmode=require dbname=v",
        "postgresql:///v",
        "host=/var/run/postgresql dbname=v",
        "postgres://u@127.0.0.1/v",
    ]
    for dsn in ok:
        assert config.resolve("UNDERCROFT_PGVECTOR_DSN", {"UNDERCROFT_PGVECTOR_DSN": dsn}).status is Status.VALIDATED
    with pytest.raises(config.Refused) as caught:
        config.resolve("UNDERCROFT_PGVECTOR_DSN", {"UNDERCROFT_PGVECTOR_DSN": "host=db password=hunter2 dbname=v"})
    assert "hunter2" not in str(caught.value) and "password=***" in str(caught.value)


def test_admin_token_floor_and_whitespace() -> None:
    with pytest.raises(config.Refused, match="15 characters, shorter than the 16-character floor"):
        config.resolve("UNDERCROFT_ORCH_ADMIN_TOKEN", {"UNDERCROFT_ORCH_ADMIN_TOKEN": "a" * 15})
    # Leading and internal whitespace are presentable.
    ok = config.resolve("UNDERCROFT_MCP_HTTP_TOKEN", {"UNDERCROFT_MCP_HTTP_TOKEN": " a b"})
    assert ok.status is Status.VALIDATED


def test_address_forms() -> None:
    assert config.value("UNDERCROFT_ORCH_ADDR", {}) == Address("127.0.0.1", 8900)
    assert config.value("UNDERCROFT_ORCH_ADDR", {"UNDERCROFT_ORCH_ADDR": "[::]:9000"}) == Address("::", 9000)
    assert str(Address("::1", 1)) == "[::1]:1" and Address("::1", 1).is_loopback


def test_check_reports_each_class_apart_and_opens_nothing(ca_file: Path) -> None:
    env = {
        "PATH": "/usr/bin",
        "UNDERCROFT_HOME": "/srv/palace",
        "UNDERCROFT_FUSION_WEIGHT": "0.6",
        "UNDERCROFT_FUSION": "rrf",
        "UNDERCROFT_TRUST_FLOOR": "trustd",
        "UNDERCROFT_TRUST_FLOR": "standard",
        "UNDERCROFT_EMBED_CA": str(ca_file),
    }
    report = config.check(env, build=HASH_ONLY)
    statuses = {entry.name: entry.status for entry in report.entries}
    assert statuses == {
        "UNDERCROFT_EMBED_CA": Status.VALIDATED,
        "UNDERCROFT_FUSION": Status.WARNED,
        "UNDERCROFT_FUSION_WEIGHT": Status.VALIDATED,
        "UNDERCROFT_HOME": Status.ACCEPTED,
        "UNDERCROFT_TRUST_FLOOR": Status.REFUSED,
        "UNDERCROFT_TRUST_FLOR": Status.UNKNOWN,
    }
    assert report.refuses and not report.starts
    (unknown,) = report.with_status(Status.UNKNOWN)
    assert unknown.message == "UNDERCROFT_TRUST_FLOR is not a known declaration; did you mean UNDERCROFT_TRUST_FLOOR?"
    assert config.check({"UNDERCROFT_HOME": "/x"}, build=HASH_ONLY).starts


def test_check_preflights_a_non_loopback_metrics_listener() -> None:
    env = {"UNDERCROFT_ORCH_METRICS_ADDR": "0.0.0.0:9100"}
    (entry,) = config.check(env, build=HASH_ONLY).entries
    assert entry.status is Status.REFUSED
    assert "needs UNDERCROFT_ORCH_METRICS_TOKEN" in (entry.message or "")
    assert config.check(build=HASH_ONLY, env={**env, "UNDERCROFT_ORCH_METRICS_TOKEN": "t" * 20}).starts
    assert config.check({"UNDERCROFT_ORCH_METRICS_ADDR": "127.0.0.1:9100"}, build=HASH_ONLY).starts


def test_check_defaults_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNDERCROFT_ADMISSION", "maybe")
    assert not config.check(build=HASH_ONLY).starts


def test_warnings_are_data_and_never_printed(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="undercroft_config"):
        outcome = config.resolve("UNDERCROFT_POOL_DIV", {"UNDERCROFT_POOL_DIV": "wide"})
    assert outcome.status is Status.WARNED and outcome.value == 64
    assert caplog.records[-1].getMessage() == outcome.message
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_unknown_names_raise_with_a_suggestion() -> None:
    with pytest.raises(config.UnknownDeclaration, match="did you mean UNDERCROFT_POOL_DIV"):
        config.resolve("UNDERCROFT_POOL_DIVV")


UNBUILT = {"UNDERCROFT_WING_PQ_MIN": "the per-wing PQ tier", "UNDERCROFT_PQ_PAGE_MIN": "the sealed page tier"}


def test_the_unbuilt_declarations_are_exactly_the_ones_no_code_reads() -> None:
    """Counted both ways: a declaration marked unbuilt is read by no package's code, and the marks are these."""
    marked = {entry.name: entry.unbuilt for entry in config.REGISTRY.values() if entry.unbuilt is not None}
    assert marked == UNBUILT
    root = Path(__file__).resolve().parents[3] / "packages"
    for name in marked:
        accessor = name.removeprefix("UNDERCROFT_").lower()
        for source in root.glob("*/src/**/*.py"):
            if source.relative_to(root).parts[0] == "undercroft-config":
                continue  # where it is declared and resolved
            text = source.read_text("utf-8")
            assert f"settings.{accessor}(" not in text and name not in text, (
                f"{source} reads {name}: its tier is built, so drop `unbuilt` from the declaration"
            )


def test_a_clean_value_of_an_unbuilt_declaration_warns_that_it_changes_nothing() -> None:
    report = config.check({"UNDERCROFT_PQ_PAGE_MIN": "65536", "UNDERCROFT_WING_PQ_MIN": "2048"}, build=HASH_ONLY)
    assert report.starts
    by_name = {entry.name: entry for entry in report.entries}
    for name, tier in UNBUILT.items():
        assert by_name[name].status is Status.WARNED
        note = f"{name} is declared but changes nothing: {tier} is not built yet (docs/scaling.md)"
        assert by_name[name].message == note
    bad = config.check({"UNDERCROFT_PQ_PAGE_MIN": "yes"}, build=HASH_ONLY).entries[0]
    assert bad.status is Status.WARNED and "legal" in (bad.message or "")  # the parse warning, not the note
    assert config.check({}, build=HASH_ONLY).entries == ()
