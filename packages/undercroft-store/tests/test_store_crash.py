"""Crash tests: kill -9 a writer at random points of a batched ingest; the vault must open, keep every
acknowledged write and never raise a false tamper alarm."""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace

TRIALS = 80
#: Trials per palace: verify's cost grows with the vault, so a fresh palace every few trials keeps each check
#: bounded (it re-verified every accumulated drawer in each of 50 trials: 41 of the test's 60 s).
TRIALS_PER_PALACE = 10


def _writer(home: Path, out: int) -> None:
    """The child: ingest forever, reporting each batch's ids only after its write returned."""
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        os.write(out, b"ready\n")
        round_ = 0
        while True:
            round_ += 1
            text = "\n\n".join(f"round {round_} paragraph {k} " + "words " * 120 for k in range(12))
            results = store.remember(text, wing="crash", room="test", added_by="writer")
            os.write(out, (" ".join(r.id for r in results) + "\n").encode())


def _run_trial(home: Path, delay: float) -> list[str]:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: forked with the modules imported, so a trial costs no interpreter start
        os.close(read_end)
        try:
            _writer(home, write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        assert reader.readline() == b"ready\n"
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        data = reader.read().decode()
    # Only complete lines are acknowledged batches.
    lines = data.split("\n")[:-1]
    return [drawer_id for line in lines for drawer_id in line.split()]


@pytest.mark.slow
def test_kill_nine_during_batched_ingest(tmp_path: Path) -> None:
    rng = random.Random(20260501)
    total = 0
    for first in range(0, TRIALS, TRIALS_PER_PALACE):
        home = tmp_path / f"palace-{first}"
        with Palace(home) as palace:
            palace.init()
        acknowledged: set[str] = set()
        for trial in range(first, min(first + TRIALS_PER_PALACE, TRIALS)):
            new = set(_run_trial(home, rng.uniform(0.0, 0.25))) - acknowledged
            # Never a false alarm: the open reconciles (a crash before the anchor heals), verify is clean; and
            # every write acknowledged by THIS trial is there (earlier ones were checked by their own trial).
            with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
                report = store.verify()
                assert report.ok, f"trial {trial}:\n{report.render()}"
                present = {drawer.id for drawer in store.hydrate(sorted(new))}
                assert present == new, f"trial {trial}: acknowledged writes lost: {sorted(new - present)[:3]}"
            acknowledged |= new
        # ... and nothing acknowledged earlier in this palace was lost by a later crash or heal.
        with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
            present = {drawer.id for drawer in store.hydrate(sorted(acknowledged))}
            assert present == acknowledged, f"palace {first}: lost {sorted(acknowledged - present)[:3]}"
        total += len(acknowledged)
    assert total > 0
