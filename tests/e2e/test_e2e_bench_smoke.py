"""bench-smoke fails when it lost its data: a smoke that found nothing to run has checked nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_locomo_smoke_without_its_data_fails_and_names_what_is_missing(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_locomo_baseline.py"), "--smoke", "--data", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "locomo_sample.synthetic.json is not present" in done.stderr and "skip" not in done.stdout
