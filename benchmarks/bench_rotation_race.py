"""Rotations racing writers, searchers and verifiers, each in its own process (issue 15, item 1).

    python benchmarks/bench_rotation_race.py                 # 200 rotations, 2 writers, 1 searcher, 1 verifier
    python benchmarks/bench_rotation_race.py --rotations 20  # what the test suite runs
    python benchmarks/bench_rotation_race.py --smoke         # 3 rotations: checks the instrument works

The rotator process rotates the vault ``--rotations`` times and, after each one, opens it and verifies it
(a failed open or verify is a failure). Writers loop a short-lived writable open + ``remember`` + close (the
shape of a CLI command, minus the interpreter start) and log every acknowledged id; searchers loop a
read-only open + search, verifiers a read-only open + verify. A refusal with exit-1 class (`VaultInUse`,
`RotationInProgress`) is counted, not failed; ANY integrity verdict on any surface is a false alarm (no
tamperer is present). At the end every acknowledged id must be in the vault and the vault must verify.
Prints one JSON object; exits 1 when any false alarm, lost write or failed verify was seen.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from undercroft_core import HashEmbedder
from undercroft_core.errors import IntegrityError
from undercroft_store import Palace
from undercroft_store.errors import DrawerNotFound, VaultInUse
from undercroft_store.integrity.rotation import rotate_vault
from undercroft_store.search import Searcher, SearchRequest

VAULT = "default"


def _palace(home: Path, *, read_only: bool = False) -> Palace:
    return Palace(home, read_only=read_only)


def _log(path: Path, record: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _rotator(home: Path, out: Path, rotations: int, deadline_s: float) -> None:
    done = refused = 0
    seconds: list[float] = []
    deadline = time.monotonic() + deadline_s
    while done < rotations and time.monotonic() < deadline:
        started = time.perf_counter()
        try:
            with _palace(home) as palace:
                rotate_vault(palace, VAULT, HashEmbedder())
        except VaultInUse as error:  # exit-1 class: retried, counted
            refused += 1
            _log(out, {"role": "rotator", "refused": str(error)})
            continue
        except IntegrityError as error:
            _log(out, {"role": "rotator", "alarm": f"rotate: {type(error).__name__}: {error}"})
            return
        seconds.append(time.perf_counter() - started)
        done += 1
        try:
            with _palace(home, read_only=True) as palace, palace.open_vault(VAULT, HashEmbedder()) as store:
                report = store.verify()
            if not report.ok:
                _log(out, {"role": "rotator", "alarm": f"verify after rotation {done}: {report.render()}"})
        except IntegrityError as error:
            _log(out, {"role": "rotator", "alarm": f"open after rotation {done}: {type(error).__name__}: {error}"})
        except VaultInUse:
            pass  # the next rotation's own verify covers it
    _log(out, {"role": "rotator", "rotations": done, "refused": refused, "seconds": seconds})


def _worker(role: str, home: Path, out: Path, stop: Path, index: int, pause: float) -> None:
    operations = refused = 0
    jitter = random.Random(index)  # noqa: S311 - a schedule jitter, not a secret
    while not stop.exists():
        time.sleep(jitter.uniform(0, 2 * pause))  # the gap between two CLI commands (interpreter start)
        try:
            if role == "writer":
                with _palace(home) as palace, palace.open_vault(VAULT, HashEmbedder()) as store:
                    results = store.remember(
                        f"note {index}-{operations} about the rotation race", wing="race", room="notes", added_by="race"
                    )
                for result in results:
                    _log(out, {"role": role, "ack": result.id})  # acknowledged only once the handle closed
            else:
                with _palace(home, read_only=True) as palace, palace.open_vault(VAULT, HashEmbedder()) as store:
                    if role == "searcher":
                        Searcher(store, HashEmbedder()).search(SearchRequest("rotation race note", limit=5))
                    else:
                        report = store.verify()
                        if not report.ok:
                            _log(out, {"role": role, "alarm": report.render()})
            operations += 1
        except VaultInUse:
            refused += 1
        except IntegrityError as error:
            _log(out, {"role": role, "alarm": f"{type(error).__name__}: {error}"})
            operations += 1
        (stop.parent / f"race.ready-{index}").touch()  # the rotator starts once every worker is looping
    _log(out, {"role": role, "operations": operations, "refused": refused})


def _present(store: Any, drawer_id: str) -> bool:
    try:
        store.get(drawer_id)
    except DrawerNotFound:
        return False
    return True


def _spawn(
    role: str, home: Path, out: Path, stop: Path, index: int, rotations: int, deadline_s: float, pause: float
) -> subprocess.Popen[bytes]:
    command = [sys.executable, __file__, "--role", role, "--home", str(home), "--out", str(out)]
    command += ["--stop", str(stop), "--index", str(index), "--rotations", str(rotations)]
    command += ["--deadline", str(deadline_s), "--pause", str(pause)]
    return subprocess.Popen(command)


def run_race(
    home: Path,
    *,
    rotations: int,
    writers: int = 2,
    searchers: int = 1,
    verifiers: int = 1,
    deadline_s: float = 1800,
    pause: float = 0.05,
) -> dict[str, Any]:
    """Run one race in ``home`` (created here) and return its figures (see the module docstring).

    The rotator stops at ``rotations`` or after ``deadline_s`` seconds, whichever comes first; each worker
    sleeps a random 0 … 2 × ``pause`` seconds between operations (the gap between two CLI commands).
    """
    with _palace(home) as palace:
        palace.init()
        with palace.open_vault(VAULT, HashEmbedder()) as store:
            store.remember("the first note, before any rotation", wing="race", room="notes", added_by="race")
    out, stop = home / "race.jsonl", home / "race.stop"
    started = time.perf_counter()
    roles = ["writer"] * writers + ["searcher"] * searchers + ["verifier"] * verifiers
    workers = [_spawn(role, home, out, stop, i, rotations, deadline_s, pause) for i, role in enumerate(roles)]
    deadline = time.monotonic() + 120
    while not all((home / f"race.ready-{i}").exists() for i in range(len(roles))) and time.monotonic() < deadline:
        time.sleep(0.05)
    rotator = _spawn("rotator", home, out, stop, 0, rotations, deadline_s, pause)
    rotator.wait()
    stop.touch()
    for worker in workers:
        worker.wait(timeout=120)
    wall = time.perf_counter() - started
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    alarms = [r["alarm"] for r in records if "alarm" in r]
    acked = [r["ack"] for r in records if "ack" in r]
    summary: dict[str, Any] = next((r for r in records if r.get("role") == "rotator" and "rotations" in r), {})
    final_error = None
    try:
        with _palace(home, read_only=True) as palace, palace.open_vault(VAULT, HashEmbedder()) as store:
            lost = [drawer_id for drawer_id in acked if not _present(store, drawer_id)]
            final_ok = store.verify().ok
    except IntegrityError as error:  # a bricked vault: nothing acknowledged can be read back
        final_error, lost, final_ok = f"{type(error).__name__}: {error}", acked, False
    per_role: dict[str, dict[str, int]] = {}
    for record in records:
        if "operations" in record:
            tally = per_role.setdefault(record["role"], {"operations": 0, "refused": 0})
            tally["operations"] += record["operations"]
            tally["refused"] += record["refused"]
    seconds = sorted(summary.get("seconds", []))
    return {
        "rotations": summary.get("rotations", 0),
        "rotation_refusals": summary.get("refused", 0),
        "rotation_median_s": round(seconds[len(seconds) // 2], 3) if seconds else None,
        "rotation_max_s": round(seconds[-1], 3) if seconds else None,
        "acknowledged_writes": len(acked),
        "lost_writes": len(lost),
        "false_alarms": len(alarms),
        "alarm_samples": alarms[:5],
        "final_verify_ok": final_ok,
        "final_open_error": final_error,
        "workers": per_role,
        "wall_s": round(wall, 1),
    }


def main() -> int:
    """CLI entry: run a race (or one worker role, when spawned by a race)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rotations", type=int, default=200)
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--deadline", type=float, default=1800.0, help="seconds before the rotator stops early")
    parser.add_argument("--pause", type=float, default=0.05, help="mean seconds a worker waits between operations")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--role", choices=["rotator", "writer", "searcher", "verifier"])
    parser.add_argument("--home", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--stop", type=Path)
    parser.add_argument("--index", type=int, default=0)
    args = parser.parse_args()
    if args.role == "rotator":
        _rotator(args.home, args.out, args.rotations, args.deadline)
        return 0
    if args.role:
        _worker(args.role, args.home, args.out, args.stop, args.index, args.pause)
        return 0
    rotations = 3 if args.smoke else args.rotations
    with tempfile.TemporaryDirectory() as tmp:
        result = run_race(
            Path(tmp) / "palace", rotations=rotations, writers=args.writers, deadline_s=args.deadline, pause=args.pause
        )
    print(json.dumps(result, indent=2))
    clean = result["false_alarms"] == 0 and result["lost_writes"] == 0 and result["final_verify_ok"]
    return 0 if clean and result["rotations"] == rotations else 1


if __name__ == "__main__":
    sys.exit(main())
