"""The main job, end to end, in a throw-away palace: the README's first command runs this.

It drives the real `undercroft` program as a user would and exits non-zero on the first failure. The palace
always lives in its own temporary directory, removed at the end, pass or fail (it holds a master key: a
throw-away palace must not outlive its run); a declared UNDERCROFT_HOME is never touched, so trying the
quickstart cannot write into a palace you keep.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

WORDS = "We chose GraphQL over REST for the mobile API"

STEPS: list[list[str]] = [
    ["undercroft", "--version"],
    ["undercroft", "init"],
    ["undercroft", "remember", WORDS, "--wing", "backend", "--room", "decisions"],
    ["undercroft", "search", "why graphql"],
    ["undercroft", "verify"],
]


def main() -> int:
    """Run the steps in a temporary palace, removed afterwards (whatever UNDERCROFT_HOME says)."""
    home = tempfile.mkdtemp(prefix="undercroft-quickstart-")
    try:
        return run(home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def run(home: str) -> int:
    """Run each step in the palace at ``home``, echoing the command and its output."""
    env = dict(os.environ, UNDERCROFT_HOME=home)
    # The program installed beside this interpreter first (uv run puts it on PATH too).
    exe = shutil.which("undercroft", path=os.path.dirname(sys.executable)) or shutil.which("undercroft")
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
        if step[1] == "search" and WORDS not in result.stdout:
            print("search did not return the exact words that were remembered", file=sys.stderr)
            return 1
    print("quickstart: ok (the search returned the exact words)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
