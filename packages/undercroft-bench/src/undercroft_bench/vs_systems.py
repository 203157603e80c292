"""The systems `undercroft-bench vs` drives: our arms by name, and MemPalace through a subprocess driver.

`bm25` and `undercroft` are arms of `undercroft_bench.arms.ARMS`, resolved by name when the run starts (so
an arm registered after this module was written is found without a change here). MemPalace never enters our
environment: it runs in its own venv (`tools/mempalace_env.sh`), and `MempalaceDriver` starts
`_internal/mempalace_driver.py` under that interpreter and speaks JSON lines with it. `MempalaceRetriever` is
an honest pass-through: chunks in, MemPalace's ranked chunk ids out, nothing re-ranked, cached or retried.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import IO, Any

from undercroft_bench.arms import resolve_arm
from undercroft_bench.chunking import Chunk
from undercroft_bench.errors import ArmUnavailable, InvalidSetting, RetrieverFault
from undercroft_bench.retriever import ArmContext, ArmFactory

__all__ = [
    "DRIVER_SCRIPT",
    "INGEST_MODES",
    "SYSTEMS",
    "MempalaceDriver",
    "MempalaceRetriever",
    "driver_command",
    "resolve_system",
]

#: The systems `vs` knows, in the order the CLI lists them.
SYSTEMS = ("undercroft", "undercroft-when", "mempalace", "bm25")
#: How MemPalace files chunks: `add` (one drawer per chunk) or `mine` (chunks as files, MemPalace's miner).
INGEST_MODES = ("add", "mine")
#: The driver script, run as a file under MemPalace's interpreter (it must not import this package).
DRIVER_SCRIPT = pathlib.Path(__file__).resolve().parent / "_internal" / "mempalace_driver.py"


def driver_command(python: pathlib.Path | str) -> list[str]:
    """The argv that runs the MemPalace driver under `python` (the venv made by `tools/mempalace_env.sh`)."""
    return [str(python), str(DRIVER_SCRIPT)]


class MempalaceDriver:
    """A running driver process: one request line out, one answer line back, typed failure on anything else."""

    def __init__(self, command: Sequence[str], *, env: Mapping[str, str] | None = None) -> None:
        """Start `command` (see `driver_command`); the process's stderr is left to the terminal."""
        try:
            self._process = subprocess.Popen(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                bufsize=1,
                env=dict(env) if env is not None else None,
            )
        except OSError as error:
            raise ArmUnavailable(f"cannot start the MemPalace driver {list(command)!r}: {error}") from None
        self.version = ""
        self.python = ""

    def request(self, payload: Mapping[str, object]) -> dict[str, Any]:
        """Send one request and return its answer; a dead driver, bad JSON or `ok: false` raise RetrieverFault."""
        stdin, stdout = self._pipes()
        try:
            stdin.write(json.dumps(payload) + "\n")
            stdin.flush()
        except (BrokenPipeError, ValueError):
            raise RetrieverFault(f"the MemPalace driver exited (code {self._process.poll()})") from None
        try:
            line = stdout.readline()
        except (OSError, ValueError):
            raise RetrieverFault("the MemPalace driver's answer channel is closed") from None
        if not line:
            code = self._process.wait()
            raise RetrieverFault(f"the MemPalace driver exited (code {code}) before answering {payload.get('op')!r}")
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            raise RetrieverFault(f"the MemPalace driver answered a line that is not JSON: {line[:200]!r}") from None
        if not isinstance(answer, dict) or answer.get("ok") is not True:
            detail = answer.get("error") if isinstance(answer, dict) else answer
            raise RetrieverFault(f"the MemPalace driver refused {payload.get('op')!r}: {detail}")
        return answer

    def hello(self) -> dict[str, Any]:
        """Ask the driver for MemPalace's and Python's versions (recorded in the report)."""
        answer = self.request({"op": "hello"})
        self.version = str(answer.get("mempalace", ""))
        self.python = str(answer.get("python", ""))
        return answer

    def close(self, timeout: float = 60.0) -> None:
        """Ask the driver to exit, end its input, and wait; a driver still running after `timeout` s is killed."""
        if self._process.poll() is None:
            try:
                self.request({"op": "close"})
            except RetrieverFault:
                pass  # a driver that broke the protocol is still ended below
        if self._process.stdin is not None:
            try:
                self._process.stdin.close()
            except BrokenPipeError:
                pass
        try:
            self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()

    def __enter__(self) -> MempalaceDriver:
        """Use as a context manager: the driver is closed on exit."""
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        """Close the driver."""
        self.close()

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        stdin, stdout = self._process.stdin, self._process.stdout
        if stdin is None or stdout is None:  # pragma: no cover - Popen was given PIPE for both
            raise RetrieverFault("the MemPalace driver has no pipes")
        return stdin, stdout


class MempalaceRetriever:
    """One scope in a fresh palace of a running driver: `index` files every chunk, `search` passes MemPalace's
    ranking through; driver-side seconds (MemPalace alone, without the pipe) are kept beside ours."""

    def __init__(self, driver: MempalaceDriver, mode: str = "add") -> None:
        """Bind to `driver`; `mode` is how chunks are filed (see `INGEST_MODES`)."""
        if mode not in INGEST_MODES:
            raise InvalidSetting(f"MemPalace ingest mode must be one of {', '.join(INGEST_MODES)}, got {mode!r}")
        self._driver = driver
        self._mode = mode
        self._indexed = False
        self.driver_index_seconds = 0.0
        self.driver_search_seconds = 0.0
        self.drawers = 0
        self._disk_bytes = 0

    def index(self, chunks: Sequence[Chunk]) -> None:
        """File every chunk into a fresh palace; a second call is refused."""
        if self._indexed:
            raise RetrieverFault("mempalace: index() was already called for this scope")
        self._indexed = True
        answer = self._driver.request(
            {
                "op": "index",
                "mode": self._mode,
                "chunks": [{"id": c.chunk_id, "text": c.text, "session": c.session_id} for c in chunks],
            }
        )
        self.driver_index_seconds = float(answer.get("seconds", 0.0))
        self.drawers = int(answer.get("drawers", 0))
        self._disk_bytes = int(answer.get("disk_bytes", 0))

    def search(self, question: str, k: int) -> list[str]:
        """MemPalace's `search_memories(question, n_results=k)` as chunk ids, in its order."""
        answer = self._driver.request({"op": "search", "query": question, "k": k})
        self.driver_search_seconds += float(answer.get("seconds", 0.0))
        ids = answer.get("ids")
        if not isinstance(ids, list) or not all(isinstance(item, str) for item in ids):
            raise RetrieverFault(f"the MemPalace driver answered ids that are not a list of strings: {ids!r}")
        return list(ids)

    def disk_bytes(self) -> int:
        """Bytes of the palace directory after `index`."""
        return self._disk_bytes


@dataclass(frozen=True)
class ResolvedSystem:
    """A system ready to run: its factory, a one-line description of its configuration, and its driver if any."""

    name: str
    factory: ArmFactory
    configuration: str
    driver: MempalaceDriver | None = None


def resolve_system(
    name: str,
    *,
    python: pathlib.Path | None = None,
    ingest: str = "add",
    driver_argv: Sequence[str] | None = None,
) -> ResolvedSystem:
    """Resolve `name` to a factory; for `mempalace` start (and greet) its driver under `python`.

    `driver_argv` replaces the driver command (tests run a fake driver with this interpreter).
    """
    if name not in SYSTEMS:
        raise InvalidSetting(f"unknown system {name!r}; known: {', '.join(SYSTEMS)}")
    if name != "mempalace":
        # Looked up at run time: the `undercroft` arm is registered in ARMS by its own module.
        try:
            factory = resolve_arm(name)
        except InvalidSetting:
            raise ArmUnavailable(
                f"system {name!r} needs the {name!r} arm in undercroft_bench.arms.ARMS, which is not registered yet"
            ) from None
        return ResolvedSystem(name, factory, f"arm {name!r} of undercroft_bench.arms.ARMS")
    if ingest not in INGEST_MODES:
        raise InvalidSetting(f"--mempalace-ingest must be one of {', '.join(INGEST_MODES)}, got {ingest!r}")
    if driver_argv is None:
        if python is None:
            raise InvalidSetting("--system mempalace needs --python PATH (the venv made by tools/mempalace_env.sh)")
        if not python.exists():
            raise InvalidSetting(f"--python {python} does not exist (create it with tools/mempalace_env.sh DIR)")
        driver_argv = driver_command(python)
    driver = MempalaceDriver(driver_argv)
    try:
        driver.hello()
    except RetrieverFault:
        driver.close()
        raise

    def build(context: ArmContext) -> MempalaceRetriever:
        del context  # each retriever gets a fresh palace from the one driver
        return MempalaceRetriever(driver, ingest)

    configuration = (
        f"mempalace {driver.version} (python {driver.python}), default configuration, "
        f"ingest {'miner.add_drawer per chunk' if ingest == 'add' else 'miner.mine of the chunks as files'}, "
        "search_memories(n_results=pool) defaults, all-MiniLM-L6-v2 via ChromaDB, offline"
    )
    return ResolvedSystem(name, build, configuration, driver)
