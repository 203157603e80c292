"""Run every benchmark script in this folder on its tiny `--smoke` corpus (seconds each).

Each `bench_*.py` accepts `--smoke`; a smoke run checks the instrument works, it measures nothing worth
reporting. Figures for RESULTS.md come from full runs (`nox -s bench`). The scripts run two at a time
(`--jobs N` to change; the machines have two cores and a smoke run is mostly start-up and a tiny corpus), each
one's output printed whole when it ends. Any non-zero exit fails the run, once every script has had its turn.
"""

from __future__ import annotations

import concurrent.futures
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).parent


def _smoke(script: pathlib.Path) -> tuple[pathlib.Path, int, float, str]:
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, str(script), "--smoke"], capture_output=True, text=True, check=False
    )  # fmt: skip
    return script, result.returncode, time.monotonic() - started, result.stdout + result.stderr


def main() -> int:
    """Run each script with --smoke; exit 1 naming every script that failed."""
    scripts = sorted(HERE.glob("bench_*.py"))
    jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else 2
    failed: list[str] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for script, code, seconds, output in pool.map(_smoke, scripts):
            print(f"== {script.name} --smoke ({seconds:.1f} s, exit {code})\n{output}", flush=True)
            if code != 0:
                failed.append(script.name)
    if failed:
        print(f"bench-smoke: {len(failed)} of {len(scripts)} script(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"bench-smoke: {len(scripts)} script(s) ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
