"""Rotations racing writers, searchers and verifiers in separate processes (issue 15, item 1).

Runs benchmarks/bench_rotation_race.py — the instrument whose 200-rotation figures are in
benchmarks/RESULTS.md — at 20 rotations, so CI exercises the same race at a bounded cost. Before the vault
lock, the first rotation bricked the vault (every open: "keycheck marker does not match generation 1").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_rotation_race.py"


@pytest.mark.slow
def test_twenty_rotations_beside_writers_searchers_and_verifiers() -> None:
    race = subprocess.run(
        [sys.executable, str(SCRIPT), "--rotations", "20", "--deadline", "240"],
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    result = json.loads(race.stdout)
    assert result["false_alarms"] == 0, result["alarm_samples"]
    assert result["lost_writes"] == 0 and result["final_verify_ok"], result
    assert result["rotations"] == 20, result
    assert result["acknowledged_writes"] > 0 and result["workers"]["verifier"]["operations"] > 0, result
    assert race.returncode == 0, race.stderr
