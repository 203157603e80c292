"""The mutation gate: one-line bugs planted in the lines that carry the guarantees must each be caught.

Each entry of ``tests/meta/mutations.toml`` names a target (``module``, a dotted module name resolved at run
time with ``importlib.util.find_spec``, or ``file``, a path inside the repository such as ``pyproject.toml``),
the exact text of one line (compared without its leading and trailing whitespace; it must occur exactly once),
its replacement (the original's indentation is kept) and the tests that must fail once it is applied.

The harness copies the repository (sources, tests, tool config; never ``.git``, ``.venv`` or caches) to a
temporary directory, lays ``../shared`` beside the copy when the checkout has one, and for each mutation:
applies it, removes that file's stale bytecode, runs only its tests with the copy's ``src`` directories first
on ``PYTHONPATH`` (the workspace is installed editable, so without that the checkout would be what imports),
then restores the file. A mutation whose tests still pass SURVIVED: the gate fails.

Each copy has one worker process (``--serve``) that imports pytest, its plugins and the heavy third-party
libraries once (``PRELOAD``; about 3 s of every pytest start-up) and then forks one child per mutation, which
runs ``pytest.main`` and imports every ``undercroft_*`` module fresh, from the mutated file. The worker refuses
to start if anything it preloaded pulled in an ``undercroft_*`` module: a module imported before the mutation
would be the unmutated one.

Before any mutation it proves the copy is what imports: a child interpreter must resolve every target module
inside the copy, and a planted self-check mutation (the read door's HMAC comparison made to raise) must be
caught. Exit codes: 0 every mutation caught, 1 a mutation survived or the gate could not run.

    python tools/mutation_gate.py [--list tests/meta/mutations.toml] [--only ID ...] [--jobs N]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import importlib
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
import traceback
from collections.abc import Iterable, Sequence
from typing import IO, Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_LIST = ROOT / "tests" / "meta" / "mutations.toml"
_IGNORED = shutil.ignore_patterns(
    ".git",
    ".venv",
    ".nox",
    "__pycache__",
    "*.pyc",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    "dist",
    "build",
    "*.egg-info",
    ".hypothesis",
    ".import_linter_cache",
    "node_modules",
)
#: Per mutation, a ceiling on its tests' run: a mutation that hangs its tests is caught at the ceiling. The
#: slowest honest run in CI took 28 s. Forked children occasionally stall before pytest prints a line (one CI
#: run spent 146 s, another 90 s, in runs that take 1-3 s alone), so a first run that reaches
#: `FIRST_TIMEOUT_SECONDS` is run once more, from a fresh fork, under the full ceiling: a stall costs ~30 s, a
#: real hang is still caught.
TIMEOUT_SECONDS = 90
FIRST_TIMEOUT_SECONDS = 30
#: A run slower than this prints its pytest tail, so a stall in CI explains itself in the log.
SLOW_SECONDS = 45


class MutationError(Exception):
    """The mutation list or a target cannot be applied as written (a stale line, an unknown module)."""


@dataclasses.dataclass(frozen=True)
class Mutation:
    """One planted bug: where, which line, what it becomes, and the tests that must catch it."""

    id: str
    original: str
    replacement: str
    tests: tuple[str, ...]
    module: str | None = None
    file: str | None = None
    why: str = ""

    def target(self, root: pathlib.Path = ROOT) -> pathlib.Path:
        """The file this mutation edits, relative to `root` (a module is resolved through the live import system)."""
        if self.file is not None:
            return pathlib.Path(self.file)
        assert self.module is not None
        try:
            spec = importlib.util.find_spec(self.module)
        except (ImportError, ValueError) as error:
            raise MutationError(f"{self.id}: module {self.module!r} cannot be resolved: {error}") from None
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            raise MutationError(f"{self.id}: module {self.module!r} is not a Python source module on this path")
        origin = pathlib.Path(spec.origin).resolve()
        try:
            return origin.relative_to(root.resolve())
        except ValueError:
            outside = f"{self.id}: module {self.module!r} resolves outside the repository: {origin}"
            raise MutationError(outside) from None


def load(path: pathlib.Path = DEFAULT_LIST) -> list[Mutation]:
    """The mutations of a list file, each checked for shape (ids unique, tests named)."""
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    mutations: list[Mutation] = []
    for entry in document.get("mutation", []):
        unknown = set(entry) - {"id", "module", "file", "original", "replacement", "tests", "why"}
        if unknown:
            raise MutationError(f"{entry.get('id', '?')}: unknown keys {sorted(unknown)}")
        if ("module" in entry) == ("file" in entry):
            raise MutationError(f"{entry.get('id', '?')}: name exactly one of module or file")
        if not entry.get("tests"):
            raise MutationError(f"{entry.get('id', '?')}: names no tests")
        mutations.append(
            Mutation(
                id=entry["id"],
                module=entry.get("module"),
                file=entry.get("file"),
                original=entry["original"],
                replacement=entry["replacement"],
                tests=tuple(entry["tests"]),
                why=entry.get("why", ""),
            )
        )
    ids = [m.id for m in mutations]
    if len(set(ids)) != len(ids):
        raise MutationError(f"duplicate mutation ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    return mutations


def mutate_text(text: str, mutation: Mutation) -> str:
    """`text` with the one line equal (stripped) to `mutation.original` replaced; `MutationError` otherwise."""
    wanted = mutation.original.strip()
    if not wanted:
        raise MutationError(f"{mutation.id}: the original line is empty")
    lines = text.splitlines(keepends=True)
    found = [index for index, line in enumerate(lines) if line.strip() == wanted]
    if len(found) != 1:
        where = "does not occur" if not found else f"occurs {len(found)} times"
        target = mutation.module or mutation.file
        raise MutationError(f"{mutation.id}: the original line {wanted!r} {where} in {target}")
    line = lines[found[0]]
    indent = line[: len(line) - len(line.lstrip())]
    ending = line[len(line.rstrip("\r\n")) :]
    replaced = [indent + part.strip() if part.strip() else "" for part in mutation.replacement.split("\n")]
    if replaced == [wanted]:
        raise MutationError(f"{mutation.id}: the replacement is the original")
    lines[found[0]] = "\n".join(replaced) + ending
    return "".join(lines)


@dataclasses.dataclass
class Outcome:
    """What one mutation's run gave: caught or survived, how long, the tail of pytest's output."""

    mutation: Mutation
    caught: bool
    seconds: float
    tail: str


def copy_tree(destination: pathlib.Path, source: pathlib.Path = ROOT) -> pathlib.Path:
    """A copy of the repository at ``destination/undercroft`` with ``destination/shared`` beside it when present."""
    tree = destination / "undercroft"
    shutil.copytree(source, tree, ignore=_IGNORED, symlinks=True)
    # npm's installs (the e2e probes' pinned clients; Claude Code's alone is ~360 MB) are never mutated:
    # the copy links to them instead of copying them for every run.
    for installed in source.glob("tests/e2e/*/node_modules"):
        (tree / installed.relative_to(source)).symlink_to(installed.resolve(), target_is_directory=True)
    shared = (source / ".." / "shared").resolve()
    if shared.is_dir():
        (destination / "shared").symlink_to(shared, target_is_directory=True)
    return tree


def environment(tree: pathlib.Path) -> dict[str, str]:
    """The child environment: the copy's ``src`` directories before everything (editable installs included)."""
    sources = sorted(str(src) for src in (tree / "packages").glob("*/src") if src.is_dir())
    env = dict(os.environ)
    inherited = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = os.pathsep.join([*sources, *([inherited] if inherited else [])])
    env["UNDERCROFT_MUTATION_GATE"] = "1"
    env.pop("PYTEST_ADDOPTS", None)
    return env


def prove_copy_imports(tree: pathlib.Path, modules: Iterable[str], python: str = sys.executable) -> None:
    """Raise `MutationError` unless a child interpreter resolves every module inside the copy."""
    names = sorted(set(modules))
    probe = (
        "import importlib.util, sys\n"
        "for name in sys.argv[1:]:\n"
        "    print(name, importlib.util.find_spec(name).origin)\n"
    )
    result = subprocess.run(
        [python, "-c", probe, *names], cwd=tree, env=environment(tree), capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise MutationError(f"the copy's modules do not import: {result.stderr.strip()[-2000:]}")
    root = str(tree.resolve())
    for line in result.stdout.splitlines():
        name, _, origin = line.partition(" ")
        if not str(pathlib.Path(origin).resolve()).startswith(root):
            raise MutationError(f"{name} imports from {origin}, not from the mutated copy at {root}")


def _drop_bytecode(path: pathlib.Path) -> None:
    if path.suffix == ".py":
        for cached in (path.parent / "__pycache__").glob(path.stem + ".*.pyc"):
            cached.unlink(missing_ok=True)


#: Imported by each worker before it forks (never an undercroft module): what every pytest start-up here spends
#: its seconds on. pytest's plugins (the ``pytest11`` entry points: hypothesis, schemathesis, xdist, anyio) too.
PRELOAD = (
    "pytest",
    "numpy",
    "nacl.bindings",
    "cryptography.hazmat.primitives.ciphers.aead",
    "pydantic",
    "mcp.types",
    "starlette.applications",
    "click",
    "httpx",
    "zstandard",
    "argon2",
    "hypothesis",
)
_OURS = "undercroft"


def _pytest_args(mutation: Mutation) -> list[str]:
    # Plugins the worker imported cannot have their asserts rewritten; pytest warns so, harmlessly, once per run.
    quiet = ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
    return ["-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--durations=3", *quiet, *mutation.tests]


def _fork_pytest(args: list[str], timeout: float, output: str) -> dict[str, Any]:
    """In the worker: one child runs ``pytest.main(args)`` into `output`; its exit code, or a timeout."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: its own session (a timeout kills what it spawned), its output to the file
        code = 3
        try:
            os.setsid()
            sink = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(sink, 1)
            os.dup2(sink, 2)
            os.close(sink)
            nothing = os.open(os.devnull, os.O_RDONLY)  # the worker's stdin is the harness's pipe: never read it
            os.dup2(nothing, 0)
            os.close(nothing)
            sys.argv = ["pytest", *args]
            import pytest

            code = int(pytest.main(args))
        except BaseException:  # noqa: BLE001 - the child must always reach os._exit
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            timed_out = True
            break
        time.sleep(0.02)
    try:  # what the run left behind in its session (servers, CLI children) goes with it
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return {"code": os.waitstatus_to_exitcode(status), "timed_out": timed_out}


def serve() -> int:
    """The worker (``--serve``, cwd the copy): preload, say ready, then one forked pytest per request line."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # not installed here: the child imports what it needs
    for entry in importlib.metadata.entry_points(group="pytest11"):
        try:
            entry.load()
        except Exception:  # noqa: BLE001, S112 - a plugin that fails to load fails again, visibly, in pytest
            continue
    leaked = sorted(name for name in sys.modules if name.split(".")[0].startswith(_OURS))
    print(json.dumps({"ready": not leaked, "leaked": leaked}), flush=True)
    if leaked:
        return 1
    for line in sys.stdin:
        request = json.loads(line)
        reply = _fork_pytest(list(request["args"]), float(request["timeout"]), str(request["output"]))
        print(json.dumps(reply), flush=True)
    return 0


class Worker:
    """One ``--serve`` process over one copy of the tree; `pytest` forks a fresh child in it per call."""

    def __init__(self, tree: pathlib.Path, python: str = sys.executable) -> None:
        self.tree = tree
        self._log = tree.parent / f"{tree.name}-worker.log"
        self._output = tree.parent / f"{tree.name}-pytest.out"
        with self._log.open("wb") as log:
            self._process = subprocess.Popen(
                [python, str(tree / "tools" / "mutation_gate.py"), "--serve"],
                cwd=tree,
                env=environment(tree),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )
        hello = self._reply()
        if not hello.get("ready"):
            self.close()
            leaked = f"the mutation worker preloaded undercroft modules {hello.get('leaked')}: fix PRELOAD"
            raise MutationError(leaked)

    def _reply(self) -> dict[str, Any]:
        stdout: IO[str] | None = self._process.stdout
        line = stdout.readline() if stdout is not None else ""
        if not line:
            self._process.wait()
            log = self._log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise MutationError(f"the mutation worker for {self.tree} exited {self._process.returncode}: {log}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def pytest(self, args: list[str], timeout: float) -> tuple[int | None, str]:
        """pytest's exit code (None on a timeout) and its output, from a child forked for this run."""
        assert self._process.stdin is not None
        request = {"args": args, "timeout": timeout, "output": str(self._output)}
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        reply = self._reply()
        output = self._output.read_text(encoding="utf-8", errors="replace")
        return (None if reply["timed_out"] else int(reply["code"])), output

    def close(self) -> None:
        """End the worker and wait for it (its children's CPU time then counts in RUSAGE_CHILDREN)."""
        if self._process.stdin is not None and not self._process.stdin.closed:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def run_one(worker: Worker, mutation: Mutation) -> Outcome:
    """Apply `mutation` to the worker's copy, run its tests, restore the file; caught when pytest fails."""
    path = worker.tree / mutation.target()
    pristine = path.read_text(encoding="utf-8")
    mutated = mutate_text(pristine, mutation)
    started = time.monotonic()
    try:
        path.write_text(mutated, encoding="utf-8")
        _drop_bytecode(path)
        code, output = worker.pytest(_pytest_args(mutation), FIRST_TIMEOUT_SECONDS)
        if code is None:
            code, output = worker.pytest(_pytest_args(mutation), TIMEOUT_SECONDS)
            output = f"(the first run timed out after {FIRST_TIMEOUT_SECONDS} s; run again)\n{output}"
        if code is None:
            caught, output = True, f"timed out after {TIMEOUT_SECONDS} s (counted as caught)\n{output}"
        elif code in (4, 5):  # usage error or nothing collected: the list is wrong, not the code
            unrunnable = f"{mutation.id}: pytest could not run its tests {mutation.tests}:\n{output[-3000:]}"
            raise MutationError(unrunnable)
        else:
            caught = code != 0
    finally:
        path.write_text(pristine, encoding="utf-8")
        _drop_bytecode(path)
    return Outcome(mutation, caught, time.monotonic() - started, output[-1500:])


#: The harness's own proof that a planted bug reaches the tests (run before the list).
SELF_CHECK = Mutation(
    id="self-check-read-door-raises",
    module="undercroft_store.kernel._internal.reading",
    original="expected = compute_tag(context.keys, drawer_id, meta, content)",
    replacement='raise RuntimeError("mutation gate self-check: the mutated copy is what the tests import")',
    tests=("packages/undercroft-store/tests/test_store_tamper.py",),
    why="an obviously broken read door: if this survives, the tests are not importing the copy",
)


def run(
    mutations: Sequence[Mutation],
    *,
    jobs: int = 1,
    self_check: bool = True,
    python: str = sys.executable,
    echo: bool = True,
) -> list[Outcome]:
    """Run every mutation over fresh copies (one per worker); the self-check first when asked."""
    for mutation in mutations:  # every line must apply before anything runs: a stale list fails loudly
        mutate_text((ROOT / mutation.target()).read_text(encoding="utf-8"), mutation)
    with tempfile.TemporaryDirectory(prefix="undercroft-mutation-") as scratch:
        trees = [copy_tree(pathlib.Path(scratch) / f"w{n}") for n in range(max(1, jobs))]
        modules = {m.module for m in [*mutations, SELF_CHECK] if m.module}
        for tree in trees:
            prove_copy_imports(tree, modules, python)
        workers: list[Worker] = []
        try:
            workers.extend(Worker(tree, python) for tree in trees)
            outcomes = _run_all(mutations, workers, self_check=self_check, echo=echo)
        finally:
            for worker in workers:
                worker.close()
    return outcomes


def _run_all(mutations: Sequence[Mutation], workers: list[Worker], *, self_check: bool, echo: bool) -> list[Outcome]:
    if self_check:
        outcome = run_one(workers[0], SELF_CHECK)
        if not outcome.caught:
            not_imported = "self-check mutation survived: the copy is not what the tests import"
            raise MutationError(f"{not_imported}\n{outcome.tail}")
        if echo:
            print(f"self-check caught ({outcome.seconds:.1f} s): the mutated copy is what the tests import")
    free = list(workers)
    outcomes: list[Outcome] = []

    def work(mutation: Mutation) -> Outcome:
        worker = free.pop()
        try:
            return run_one(worker, mutation)
        finally:
            free.append(worker)

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(workers)) as pool:
        for outcome in pool.map(work, mutations):
            outcomes.append(outcome)
            if echo:
                verdict = "caught  " if outcome.caught else "SURVIVED"
                print(f"{verdict} {outcome.seconds:6.1f} s  {outcome.mutation.id}", flush=True)
                if outcome.seconds > SLOW_SECONDS:
                    print(f"  slow run, its pytest tail:\n{outcome.tail}", flush=True)
    return outcomes


def main(argv: Sequence[str] | None = None) -> int:
    if list(sys.argv[1:] if argv is None else argv) == ["--serve"]:
        return serve()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", type=pathlib.Path, default=DEFAULT_LIST)
    parser.add_argument("--only", nargs="*", default=None, help="run only these mutation ids")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("UNDERCROFT_MUTATION_JOBS", "2")))
    parser.add_argument("--no-self-check", action="store_true")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        mutations = load(args.list)
        if args.only:
            unknown = set(args.only) - {m.id for m in mutations}
            if unknown:
                raise MutationError(f"no such mutation ids: {sorted(unknown)}")
            mutations = [m for m in mutations if m.id in args.only]
        outcomes = run(mutations, jobs=args.jobs, self_check=not args.no_self_check)
    except MutationError as error:
        print(f"mutation gate: cannot run: {error}", file=sys.stderr)
        return 1
    survived = [o for o in outcomes if not o.caught]
    for outcome in survived:
        print(f"\nSURVIVED {outcome.mutation.id}: {outcome.mutation.why}\n{outcome.tail}", file=sys.stderr)
    elapsed = time.monotonic() - started
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = children.ru_utime + children.ru_stime  # load-independent: the wall time an idle machine would need x cores
    print(
        f"mutation gate: {len(outcomes) - len(survived)}/{len(outcomes)} caught in {elapsed:.0f} s wall, "
        f"{cpu:.0f} s CPU in child processes ({args.jobs} job(s))"
    )
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
