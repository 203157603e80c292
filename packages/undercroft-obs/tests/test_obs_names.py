"""The name registry: the series the Observability document lists, no duplicates, all prefixed."""

from __future__ import annotations

from undercroft_obs import names

DOCUMENTED_COUNTERS = {
    "search_total",
    "search_prefiltered_total",
    "search_wings_probed_total",
    "drawer_writes_total",
    "drawer_deletes_total",
    "embed_failures_total",
    "rerank_failures_total",
    "late_failures_total",
    "kg_writes_total",
    "chain_commits_total",
    "chain_replays_total",
    "hmac_verify_failures_total",
    "vault_opens_total",
    "http_requests_total",
    "auth_rejections_total",
}
DOCUMENTED_HISTOGRAMS = {"search_duration_seconds", "search_hits", "http_request_duration_seconds"}
DOCUMENTED_EVENTS = {
    "sample",
    "drawer-saved",
    "drawer-quarantined",
    "drawer-deleted",
    "search",
    "kg-triple",
    "chain-commit",
    "hmac-fail",
}


def test_every_documented_engine_series_is_registered() -> None:
    engine_counters = {n.removeprefix("undercroft_") for n in names.COUNTER_NAMES if "_orch_" not in n}
    assert engine_counters == DOCUMENTED_COUNTERS
    engine_histograms = {n.removeprefix("undercroft_") for n in names.HISTOGRAM_NAMES if "_orch_" not in n}
    assert engine_histograms == DOCUMENTED_HISTOGRAMS
    assert names.EVENT_NAMES == DOCUMENTED_EVENTS


def test_control_plane_has_four_counters_and_one_histogram_without_tenant_labels() -> None:
    orch_counters = {n for n in names.COUNTER_NAMES if n.startswith("undercroft_orch_")}
    assert len(orch_counters) == 4
    assert {n for n in names.HISTOGRAM_NAMES if n.startswith("undercroft_orch_")} == {
        names.ORCH_REQUEST_DURATION_SECONDS
    }
    for name in orch_counters | {names.ORCH_REQUEST_DURATION_SECONDS}:
        labels = {**names.COUNTER_LABELS, **names.HISTOGRAM_LABELS}[name]
        assert not labels & {"tenant", "vault", "tenant_name"}


def test_every_metric_name_is_prefixed_and_distinct() -> None:
    all_names = [*names.COUNTER_NAMES, *names.HISTOGRAM_NAMES, *names.GAUGE_NAMES]
    assert len(all_names) == len(set(all_names))
    assert all(n.startswith("undercroft_") for n in all_names)
    assert all(n.endswith("_total") for n in names.COUNTER_NAMES)


def test_five_codebook_generation_gauges() -> None:
    assert len({n for n in names.GAUGE_NAMES if "codebook_generation" in n}) == 5


def test_closed_vocabularies_only_name_labels_their_metric_carries() -> None:
    for metric, vocabularies in names.LABEL_VOCABULARIES.items():
        declared = {**names.COUNTER_LABELS, **names.HISTOGRAM_LABELS}[metric]
        assert set(vocabularies) <= declared, metric
    assert names.DRAWER_WRITE_OUTCOMES == {"created", "deduped", "quarantined"}
    assert names.EMBED_BACKENDS == {"http", "onnx", "ort"}
