"""The served-model roles' costs (issue 26): embed throughput over loopback beside in-process MiniLM, refine facts/s.

    python benchmarks/bench_llm.py [--texts N] [--drawers N] [--rounds R]
    python benchmarks/bench_llm.py --smoke        # bench-smoke: seconds, the hash embedder if MiniLM is absent

``embed``: the same texts embedded by the in-process MiniLM (undercroft-embed-onnx) and by ``HttpEmbedder``
against a loopback Ollama-, OpenAI- and TEI-shaped server (tests/llm_servers.py) computing with that SAME
MiniLM object — so the difference is the served path's own cost (JSON encoding, HTTP, the policed client,
TLS when ``--tls``), not a different model. Arms are interleaved over ``--rounds`` and the median reported.

``refine``: ``operations.refine.refine`` over a sealed vault of ``--drawers`` notes against a loopback Ollama
server whose "model" is the deterministic extractor of tests/llm_servers.py: facts/s of the pipeline around the
model (select, screen, send, strict parse, ground, screen, audited KG write, egress record). A real model's
generation time adds to this and dominates it; this figure is the ceiling the engine imposes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from llm_servers import model_server, simple_extractor  # noqa: E402
from model_fixtures import minilm_embedder  # noqa: E402
from undercroft_core import HashEmbedder  # noqa: E402
from undercroft_llm import ChatModel, Extractor, HttpEmbedder  # noqa: E402
from undercroft_net import load_pin, police  # noqa: E402

NAMES = ["Alice", "Bruno", "Chen", "Dara", "Emeka", "Farah", "Goran", "Hana"]
ORGS = ["Acme Corp", "Initech", "Globex", "Hooli", "Umbrella", "Vandelay"]


def _texts(count: int) -> list[str]:
    return [
        f"{NAMES[i % len(NAMES)]} met the team on day {i} and talked about the garden, the budget and the roadmap."
        for i in range(count)
    ]


def _org(i: int) -> str:
    """A distinct capitalised organisation name per note (so every fact is new, none deduplicated)."""
    letters = ""
    while True:
        letters += "abcdefghijklmnopqrstuvwxyz"[i % 26]
        i //= 26
        if not i:
            return "Org" + letters


def _notes(count: int) -> list[str]:
    return [
        f"{NAMES[i % len(NAMES)]} works at {_org(i)}. Note {i}: the meeting ran long and tea was served."
        for i in range(count)
    ]


def _in_process(smoke: bool) -> Any:
    embedder = minilm_embedder()
    if embedder is None:
        if not smoke:
            print("the offline MiniLM is not installed (see tests/model_fixtures.py): the full run needs it")
            raise SystemExit(1)
        return HashEmbedder()
    return embedder


def _rate(count: int, run: Any) -> float:
    started = time.perf_counter()
    run()
    return count / (time.perf_counter() - started)


def bench_embed(local: Any, texts: list[str], rounds: int, tls: Any) -> dict[str, float]:
    """Median texts/s per arm, arms interleaved per round."""
    context, pin = tls if tls else (None, None)
    rates: dict[str, list[float]] = {"in-process": []}
    servers = [
        model_server(shape, model="minilm", embed=local.embed, tls=context) for shape in ("ollama", "openai", "tei")
    ]
    live = [server.__enter__() for server in servers]
    try:
        embedders = {}
        for server in live:
            endpoint = police(
                server.url,
                variable="UNDERCROFT_EMBED_URL",
                pin=load_pin(pin, variable="UNDERCROFT_EMBED_CA") if pin else None,
            )
            embedders[f"http:{server.shape}"] = HttpEmbedder(endpoint, model="minilm", api=server.shape)
            rates[f"http:{server.shape}"] = []
        for _ in range(rounds):
            rates["in-process"].append(_rate(len(texts), lambda: local.embed(texts)))
            for name, embedder in embedders.items():
                rates[name].append(_rate(len(texts), lambda e=embedder: e.embed(texts)))
        for embedder in embedders.values():
            assert embedder.embed_failures == 0, "a served embed failed during the benchmark"
            embedder.close()
    finally:
        for server in servers:
            server.__exit__(None, None, None)
    return {name: statistics.median(values) for name, values in rates.items()}


def bench_refine(drawers: int) -> tuple[float, int, float, float]:
    """(facts/s, facts written, seconds, baseline facts/s) of one refine run over ``drawers`` notes.

    The baseline, same sitting: the same facts written straight through ``KnowledgeGraph.add_many`` (one
    transaction per drawer, as refine writes them) — no model, no screening, no grounding.
    """
    from undercroft_cli.operations.refine import refine
    from undercroft_store import Palace
    from undercroft_store.memory.kg.graph import FactInput, KnowledgeGraph

    with tempfile.TemporaryDirectory() as home, model_server("ollama", model="m", brain=simple_extractor) as server:
        palace = Palace(Path(home), passphrase="bench-llm")  # noqa: S106 - a throw-away vault
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            for note in _notes(drawers):
                store.remember(note, wing="people", room="notes", added_by="bench")
            model = ChatModel(police(server.url, variable="UNDERCROFT_LLM_URL"), api="ollama", model="m")
            started = time.perf_counter()
            report = refine(store, Extractor(model), surface="bench")
            elapsed = time.perf_counter() - started
            model.close()
        with palace.open_vault("default", HashEmbedder()) as store:
            graph = KnowledgeGraph(store)
            started = time.perf_counter()
            for i in range(drawers):
                graph.add_many([FactInput(NAMES[i % len(NAMES)], "works_with", _org(i))])
            baseline = drawers / (time.perf_counter() - started)
        palace.close()
    assert report.sent == drawers and report.malformed == 0 and report.facts_written == drawers, report.to_dict()
    return report.facts_written / elapsed, report.facts_written, elapsed, baseline


def main(argv: list[str] | None = None) -> int:
    """Run both benchmarks and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--drawers", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tls", action="store_true", help="serve over TLS with a throw-away CA pinned")
    parser.add_argument("--part", choices=("all", "embed", "refine"), default="all")
    args = parser.parse_args(argv)
    texts, drawers, rounds = (32, 8, 1) if args.smoke else (args.texts, args.drawers, args.rounds)
    if args.part != "refine":
        _embed_part(args, texts, rounds)
    if args.part != "embed":
        per_second, written, elapsed, baseline = bench_refine(drawers)
        print(f"\nrefine: {drawers} drawers, {written} facts written in {elapsed:.2f} s = {per_second:,.1f} facts/s")
        print(f"baseline (same facts straight into KnowledgeGraph.add_many): {baseline:,.1f} facts/s")
    return 0


def _embed_part(args: argparse.Namespace, texts: int, rounds: int) -> None:
    local = _in_process(args.smoke)
    tls = None
    if args.tls:
        from tls_material import make_authority, server_context

        authority = make_authority("bench CA")
        directory = Path(tempfile.mkdtemp())
        (directory / "root.crt").write_bytes(authority.pem())
        tls = (server_context(authority, directory), directory / "root.crt")
    rates = bench_embed(local, _texts(texts), rounds, tls)
    base = rates["in-process"]
    print(f"embed ({local.identity.label}, {texts} texts, median of {rounds}, {'TLS' if tls else 'http'} loopback)")
    print("| arm | texts/s | vs in-process |")
    print("| --- | ---: | ---: |")
    for name, rate in rates.items():
        print(f"| {name} | {rate:,.0f} | {rate / base:.2f}× |")


if __name__ == "__main__":
    sys.exit(main())
