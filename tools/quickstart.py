"""The main job, end to end, in a throw-away palace: the README's first command runs this.

It drives the real `undercroft` program as a user would and exits non-zero on the first failure.
Set UNDERCROFT_HOME to keep the palace; by default it lives in a temporary directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

STEPS: list[list[str]] = [
    ["undercroft", "--version"],
]


def main() -> int:
    """Run each step, echoing the command and its output."""
    home = os.environ.get("UNDERCROFT_HOME") or tempfile.mkdtemp(prefix="undercroft-quickstart-")
    env = dict(os.environ, UNDERCROFT_HOME=home)
    exe = shutil.which("undercroft")
    if exe is None:
        print("undercroft is not installed in this environment: run `python3 -m uv sync --locked`", file=sys.stderr)
        return 1
    print(f"palace: {home}")
    for step in STEPS:
        print("$ " + " ".join(step), flush=True)
        result = subprocess.run([exe, *step[1:]], env=env, text=True, capture_output=True)
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        if result.returncode != 0:
            print(f"step failed with exit {result.returncode}", file=sys.stderr)
            return result.returncode
    print("quickstart: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
