"""Run every benchmark script in this folder at full size.

Each `bench_*.py` accepts `--smoke`; a smoke run checks the instrument works, it measures nothing worth
reporting. Figures for RESULTS.md come from full runs (`nox -s bench`).
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent


def main() -> int:
    """Run each script with --smoke; fail on the first non-zero exit."""
    scripts = sorted(HERE.glob("bench_*.py"))
    for script in scripts:
        print(f"== {script.name}", flush=True)
        subprocess.run(
            [
                sys.executable,
                str(script),
            ],
            check=True,
        )
    print(f"bench: {len(scripts)} script(s) ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
