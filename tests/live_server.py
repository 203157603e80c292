"""A real ``undercroft serve-http`` subprocess on a loopback port, for the tests (and the benchmark) that need one.

The one harness every serve-http test and benchmark uses (tests/e2e, packages/undercroft-cli/tests/http,
benchmarks/bench_http.py). The program is the installed console script, started with ``--port 0``; the port is
read from the line it prints on stderr once bound. Its stderr is drained by a thread for the whole run (a full
pipe would stall the server), so a test can assert afterwards that no traceback and no unexpected failure was
logged. ``stop`` sends SIGTERM — an orderly stop: drained, closed, exit 0 — and returns the exit code;
``serving`` is the context manager that also asserts that exit and a log free of tracebacks.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["PROGRAM", "LiveServer", "palace_env", "serving", "undercroft", "verify_all"]

PROGRAM = Path(sys.executable).parent / "undercroft"

_BOUND = re.compile(r"serving(?: read-only)? on http://127\.0\.0\.1:(\d+)")


def palace_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without any ``UNDERCROFT_*`` variable, with ``UNDERCROFT_HOME=home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env["UNDERCROFT_HOME"] = str(home)
    env.update(extra)
    return env


def undercroft(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real program once (``init``, ``vault create``, ``verify``…)."""
    return subprocess.run([str(PROGRAM), *args], env=env, capture_output=True, text=True, timeout=timeout)


def verify_all(env: dict[str, str], vaults: list[str] | tuple[str, ...]) -> dict[str, tuple[int, str]]:
    """``undercroft verify --vault X`` for every vault, the programs run side by side: ``{vault: (code, output)}``."""
    running = {
        vault: subprocess.Popen(
            [str(PROGRAM), "verify", "--vault", vault],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for vault in vaults
    }
    return {vault: (process.wait(120), process.communicate()[0]) for vault, process in running.items()}


class LiveServer:
    """One serve-http process: ``url`` once started, ``log`` its stderr so far."""

    def __init__(
        self,
        env: dict[str, str],
        *args: str,
        command: tuple[str, ...] = (str(PROGRAM), "serve-http", "--port", "0"),
        bound: re.Pattern[str] = _BOUND,
    ) -> None:
        """Start ``undercroft serve-http --port 0 *args`` (or ``command``, bound when ``bound`` matches a line of
        its stderr) and wait (≤ 60 s) until it says it is bound."""
        self._bound_line = bound
        self.process = subprocess.Popen(
            [*command, *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._lines: list[str] = []
        self._bound = threading.Event()
        self.port = 0
        threading.Thread(target=self._drain, daemon=True).start()
        deadline = time.monotonic() + 60
        while not self._bound.wait(0.05):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                raise RuntimeError(f"{' '.join(command)} did not start:\n{self.log}")
        self.url = f"http://127.0.0.1:{self.port}"

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._lines.append(line)
            bound = self._bound_line.search(line)
            if bound is not None and not self._bound.is_set():
                self.port = int(bound.group(1))
                self._bound.set()

    @property
    def log(self) -> str:
        """Everything the server wrote on stderr so far."""
        return "".join(self._lines)

    def stop(self, timeout: float = 30, *, sig: signal.Signals = signal.SIGTERM) -> int:
        """``sig`` (an orderly stop: the lifespan closes every handle), then the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        return self.process.returncode


@contextmanager
def serving(env: dict[str, str], *args: str) -> Iterator[LiveServer]:
    """A started server for the ``with`` block; on the way out, SIGTERM must exit 0 with no traceback logged."""
    server = LiveServer(env, *args)
    try:
        yield server
    finally:
        code = server.stop()
    assert code == 0, f"serve-http exited {code} on SIGTERM:\n{server.log}"
    assert "Traceback" not in server.log, server.log
