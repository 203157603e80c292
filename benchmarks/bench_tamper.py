"""Raw-file tamper campaign: random single-bit flips in vault.db and vault.json, classified by the product.

    python benchmarks/bench_tamper.py            # 1,000 flips on a sealed vault, then 1,000 on hmac-only
    python benchmarks/bench_tamper.py --smoke    # 20 flips on a sealed vault (CI, seconds)
    python benchmarks/bench_tamper.py --trials 5000 --seed 1 --json out.json   # any other run

A thin wrapper over `undercroft-bench tamper`: every option after the wrapper's own is passed through. Each
trial copies a closed reference vault, flips one bit, and classifies what open, verify, a full export and
the surfaces' reads make of it: refused / detected / harmless (byte-identical to the reference) / derived
(hmac-only: only a clear embedding changed, outside the HMAC by design) / silent / exit1 / crash. The
same-run baseline is the reference vault's own verify and export. Exit 1 when any trial is a defect.
"""

from __future__ import annotations

import sys

from undercroft_bench.main import main as bench_main

SMOKE = ["--trials", "20", "--cli-every", "10"]
FULL = (["--trials", "1000"], ["--trials", "1000", "--level", "hmac-only"])


def main(argv: list[str]) -> int:
    """Run the smoke or the full set; any other arguments go to `undercroft-bench tamper` unchanged."""
    if argv[:1] == ["--smoke"]:
        return bench_main(["tamper", *SMOKE, *argv[1:]])
    if argv:
        return bench_main(["tamper", *argv])
    return max(bench_main(["tamper", *args]) for args in FULL)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
