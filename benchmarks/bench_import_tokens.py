"""Import with the late stage on: token matrices copied from the export lines vs re-encoded (issue 24 §1).

    UNDERCROFT_ONNX_MODEL=… UNDERCROFT_ONNX_TOKENIZER=… python benchmarks/bench_import_tokens.py [--drawers N --data F]
    python benchmarks/bench_import_tokens.py --smoke      # 200 synthetic drawers, a word-hash late encoder

One sealed vault is filed with ``--drawers`` LoCoMo dev-split turns (the corpus of `bench_model_search`) with
the late encoder attached (MiniLM int8's own token states through `OrtLateEncoder`, the honest arm: no trained
ColBERT model exists offline), so every drawer's matrix is stored at write time; it is exported once. The same
export is then imported into fresh sealed vaults, alternating two arms ``--rounds`` times so the machine's
noise lands on both: ``copy`` (the export as written: each matrix is checked against its content and stored
by copy) and ``re-encode`` (the same file with every ``tokens`` value removed — an export from before matrices
rode the lines: each drawer costs a document forward). Prints seconds per arm, drawers/s, the ratio and the
document forwards each arm ran.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

import bench_model_search
import numpy as np
from bench_model_search import _corpus, _fill
from numpy.typing import NDArray
from undercroft_cli._internal.transfer_io import collect_export, import_export_bytes
from undercroft_core import HashEmbedder, LateEncoder
from undercroft_core.model_roles import DegradingLateEncoder
from undercroft_store import Palace


class _WordTokens(DegradingLateEncoder):
    """The smoke run's encoder: one hashed vector per word (no model file needed)."""

    def __init__(self) -> None:
        super().__init__("word-tokens", 64)

    def _encode_batch(self, texts: list[str], *, query: bool) -> list[NDArray[np.floating]]:
        def word(token: str) -> NDArray[np.float32]:
            seed = int.from_bytes(hashlib.sha256(token.encode()).digest()[:8], "little")
            return np.random.default_rng(seed).normal(size=64).astype(np.float32)

        return [np.stack([word(token) for token in text.split()]) for text in texts]


def _counted(encoder: LateEncoder) -> tuple[LateEncoder, list[int]]:
    """``encoder`` with its document forwards counted (a wrapper would not be a LateEncoder subclass)."""
    calls = [0]
    original = encoder.encode_documents

    def encode_documents(texts: list[str]) -> list[NDArray[np.float32]]:
        calls[0] += len(texts)
        return list(original(texts))

    encoder.encode_documents = encode_documents  # type: ignore[method-assign]
    return encoder, calls


def _encoder(smoke: bool) -> LateEncoder:
    if smoke:
        return _WordTokens()
    from undercroft_embed_ort import OrtLateEncoder

    return OrtLateEncoder(
        os.environ["UNDERCROFT_ONNX_MODEL"], os.environ["UNDERCROFT_ONNX_TOKENIZER"], name="minilm-tokens"
    )


def _strip(data: bytes) -> bytes:
    out = []
    for line in data.splitlines():
        record = json.loads(line)
        record.pop("tokens", None)
        counts = record.get("undercroft_manifest", {}).get("counts")
        if isinstance(counts, dict):
            counts.pop("token_matrices", None)
        out.append(json.dumps(record, sort_keys=True).encode() + b"\n")
    return b"".join(out)


def run(drawers: int, rounds: int, *, smoke: bool) -> int:
    encoder, forwards = _counted(_encoder(smoke))
    texts, _ = _corpus(drawers, synthetic=smoke)
    with tempfile.TemporaryDirectory(prefix="uc-bench-import-tokens-") as root:
        with Palace(pathlib.Path(root) / "source") as palace:
            palace.init()
            with palace.open_vault("default", HashEmbedder()) as store:
                store.attach_late_encoder(encoder)
                fill = _fill(store, texts)
                exported, counts = collect_export(store)
        print(
            f"fill: {drawers} drawers in {fill:.1f}s ({drawers / fill:.1f}/s); export carries "
            f"{counts.get('token_matrices', 0)} matrices, {len(exported) / 1e6:.1f} MB",
            flush=True,
        )
        files = {"copy": exported, "re-encode": _strip(exported)}
        timings: dict[str, list[float]] = {arm: [] for arm in files}
        ran: dict[str, list[int]] = {arm: [] for arm in files}
        for number in range(rounds):
            for arm, data in files.items():
                with Palace(pathlib.Path(root) / f"{arm}-{number}") as palace:
                    palace.init()
                    with palace.open_vault("default", HashEmbedder()) as store:
                        store.attach_late_encoder(encoder)
                        before = forwards[0]
                        started = time.perf_counter()
                        report = import_export_bytes(store, data, arm, added_by="cli")
                        timings[arm].append(time.perf_counter() - started)
                        ran[arm].append(forwards[0] - before)
                        assert store.stats().token_matrices == drawers, arm
                        assert report.tokens_copied == (drawers if arm == "copy" else 0), arm
                print(
                    f"round {number + 1} {arm}: {timings[arm][-1]:.2f}s, {ran[arm][-1]} document forwards", flush=True
                )
    for arm, values in timings.items():
        median = statistics.median(values)
        print(f"{arm}: median {median:.2f}s ({drawers / median:.1f} drawers/s), forwards {ran[arm]}", flush=True)
    ratio = statistics.median(timings["re-encode"]) / statistics.median(timings["copy"])
    print(f"re-encode / copy = {ratio:.2f}x", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drawers", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--smoke", action="store_true", help="200 synthetic drawers, no model needed")
    parser.add_argument("--data", type=pathlib.Path, default=bench_model_search.DATA, help="locomo-dev.json")
    args = parser.parse_args()
    bench_model_search.DATA = args.data
    if args.smoke:
        return run(200, 1, smoke=True)
    if not os.environ.get("UNDERCROFT_ONNX_MODEL"):
        print("bench_import_tokens: declare UNDERCROFT_ONNX_MODEL / _TOKENIZER (MiniLM), or --smoke", file=sys.stderr)
        return 1
    return run(args.drawers, args.rounds, smoke=False)


if __name__ == "__main__":
    sys.exit(main())
