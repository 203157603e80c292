"""A fork server for the configuration sweep: import the real ``undercroft`` program once, start it many times.

Run as ``python start_zygote.py <workers>``; reads one JSON job per line on stdin
(``{"argv": [...], "env": {...}}``) and writes one JSON result per job on stdout, in job order
(``{"code": int, "out": str, "err": str}``). Each job is a forked child that replaces its whole environment
with the job's, points stdin at /dev/null, stdout and stderr at files, and calls ``undercroft_cli.main.main``
— the console script's own entry point — exactly as an exec'd ``undercroft`` would. The only thing a child
shares with the server is already-imported module code (the import is 0.6 s of every exec; the MCP SDK adds
about a second for serve-mcp), which is what makes a few hundred real starts affordable. The sweep's test
proves the sharing is harmless by running a sample of the same cases through exec'd processes too.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from typing import Any

import undercroft_cli.main as program
import undercroft_cli.mcp  # noqa: F401 -- serve-mcp imports the SDK lazily; pay it once, here


def _child(job: dict[str, Any], out_path: str, err_path: str) -> None:
    os.environ.clear()
    os.environ.update(job["env"])
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(out_path, os.O_WRONLY | os.O_TRUNC)
    err = os.open(err_path, os.O_WRONLY | os.O_TRUNC)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    sys.argv = ["undercroft", *job["argv"]]
    code = 1
    try:
        program.main()
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    except BaseException:  # noqa: BLE001 -- a traceback is itself a finding: report it, as exec would
        import traceback

        traceback.print_exc()
        code = 120
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main() -> int:
    """Serve jobs from stdin, `workers` children at a time."""
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    jobs = [json.loads(line) for line in sys.stdin if line.strip()]
    results: list[dict[str, Any] | None] = [None] * len(jobs)
    running: dict[int, tuple[int, str, str]] = {}
    scratch = tempfile.mkdtemp(prefix="zygote-")
    pending = list(enumerate(jobs))
    while pending or running:
        while pending and len(running) < workers:
            index, job = pending.pop(0)
            out_path, err_path = os.path.join(scratch, f"{index}.out"), os.path.join(scratch, f"{index}.err")
            for path in (out_path, err_path):
                open(path, "w").close()
            pid = os.fork()
            if pid == 0:
                _child(job, out_path, err_path)
            running[pid] = (index, out_path, err_path)
        pid, status = os.wait()
        index, out_path, err_path = running.pop(pid)
        with (
            open(out_path, encoding="utf-8", errors="replace") as out,
            open(err_path, encoding="utf-8", errors="replace") as err,
        ):
            results[index] = {"code": os.waitstatus_to_exitcode(status), "out": out.read(), "err": err.read()}
        os.unlink(out_path)
        os.unlink(err_path)
    os.rmdir(scratch)
    for result in results:
        sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
