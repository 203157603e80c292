"""The mutation gate checks itself: the list is well formed and covers what issue 17 names, a stale line fails
loudly, a planted bug reaches the tests through the copy, and a mutation no test sees is reported as surviving.

The full gate (every mutation against its tests, minutes) is `nox -s mutation`; these run in seconds.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("mutation_gate", ROOT / "tools" / "mutation_gate.py")
assert _spec is not None and _spec.loader is not None
gate = importlib.util.module_from_spec(_spec)
sys.modules["mutation_gate"] = gate
_spec.loader.exec_module(gate)

#: The bugs that survived the suite before issue 17: each must stay on the list.
SURVIVED_BEFORE = {
    "fusion-weights-swapped",
    "hash-gate-halved",
    "verify-anchor-absent-disabled",
    "contract-outbound-http-socket",
    "recency-inverted",
    "mcp-save-bypasses-admission",
}


def test_the_list_has_at_least_thirty_mutations_and_every_one_applies_to_the_live_tree() -> None:
    mutations = gate.load()
    assert len(mutations) >= 30
    assert SURVIVED_BEFORE <= {m.id for m in mutations}
    for mutation in mutations:
        target = ROOT / mutation.target()
        mutated = gate.mutate_text(target.read_text(encoding="utf-8"), mutation)
        assert mutated != target.read_text(encoding="utf-8"), mutation.id
        for test in mutation.tests:
            assert (ROOT / test.split("::")[0]).is_file(), (mutation.id, test)


def test_a_line_that_does_not_occur_fails_loudly() -> None:
    stale = gate.Mutation(
        id="stale",
        module="undercroft_store.search.fusion",
        original="return weights * nothing_like_this",
        replacement="pass",
        tests=("packages/undercroft-store/tests/test_store_search_known_answers.py",),
    )
    with pytest.raises(gate.MutationError, match=r"stale: the original line .* does not occur"):
        gate.run([stale], self_check=False, echo=False)


def test_a_module_that_does_not_resolve_fails_loudly() -> None:
    moved = gate.Mutation(
        id="moved", module="undercroft_store.no_such_module", original="x", replacement="y", tests=("t.py",)
    )
    with pytest.raises(gate.MutationError, match=r"moved: module 'undercroft_store\.no_such_module'"):
        moved.target()


def test_a_line_that_occurs_twice_is_refused_and_indentation_is_kept() -> None:
    twice = gate.Mutation(id="twice", file="f", original="a = 1", replacement="a = 2", tests=("t",))
    with pytest.raises(gate.MutationError, match="occurs 2 times"):
        gate.mutate_text("a = 1\n    a = 1\n", twice)
    once = gate.Mutation(id="once", file="f", original="b = 1", replacement="b = 2", tests=("t",))
    assert gate.mutate_text("a = 1\n        b = 1\nc\n", once) == "a = 1\n        b = 2\nc\n"


def test_the_copy_is_what_imports_a_planted_bug_is_caught_and_an_unseen_one_survives(capsys) -> None:
    """One copy, two runs: the self-check (the read door made to raise) and a comment edit no test can see."""
    unseen = gate.Mutation(
        id="comment-only",
        module="undercroft_store.search.fusion",
        original="#: Share of the score the recency channel holds.",
        replacement="#: (edited by the mutation gate's own test: no behaviour changes)",
        tests=("packages/undercroft-store/tests/test_store_search_known_answers.py::test_fuse_known_answers",),
    )
    [outcome] = gate.run([unseen], self_check=True, echo=True)
    assert not outcome.caught and "1 passed" in outcome.tail
    printed = capsys.readouterr().out
    assert "self-check caught" in printed and "SURVIVED" in printed and "comment-only" in printed
    # The checkout itself is never edited.
    assert "#: Share of the score the recency channel holds." in (
        ROOT / "packages/undercroft-store/src/undercroft_store/search/fusion.py"
    ).read_text(encoding="utf-8")


def test_main_exits_1_when_a_mutation_survives(tmp_path: pathlib.Path) -> None:
    listing = tmp_path / "mutations.toml"
    listing.write_text(
        '[[mutation]]\nid = "comment-only"\nmodule = "undercroft_store.search.fusion"\n'
        'original = "#: Share of the score the recency channel holds."\nreplacement = "#: edited"\n'
        'tests = ["packages/undercroft-store/tests/test_store_search_known_answers.py::test_fuse_known_answers"]\n',
        encoding="utf-8",
    )
    assert gate.main(["--list", str(listing), "--jobs", "1", "--no-self-check"]) == 1
    listing.write_text(listing.read_text().replace("#: Share of the score", "#: Not in the file"), encoding="utf-8")
    assert gate.main(["--list", str(listing), "--jobs", "1", "--no-self-check"]) == 1


def _serve(preload: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    program = (
        "import sys; sys.path.insert(0, 'tools'); import mutation_gate as g\n"
        f"g.PRELOAD = {preload!r}\n"
        "sys.exit(g.serve())\n"
    )
    return subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
    )


def test_the_worker_refuses_to_serve_once_it_has_imported_an_undercroft_module() -> None:
    """A module the worker imports before forking is the UNmutated one in every child: that must never start."""
    clean = _serve(("numpy",))
    assert clean.returncode == 0 and json.loads(clean.stdout) == {"ready": True, "leaked": []}
    leaked = _serve(("numpy", "undercroft_store"))
    assert leaked.returncode == 1
    reply = json.loads(leaked.stdout)
    assert reply["ready"] is False and "undercroft_store" in reply["leaked"]


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's reaping is up to init, which may be slow in a container)."""
    for _ in range(50):
        try:
            state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.1)
    return True


def test_a_run_past_its_timeout_is_killed_with_what_it_spawned(tmp_path: pathlib.Path) -> None:
    """The worker's child runs in its own session: a hung test and the process it started both end."""
    tree = tmp_path / "undercroft"
    (tree / "tools").mkdir(parents=True)
    shutil.copy(ROOT / "tools" / "mutation_gate.py", tree / "tools" / "mutation_gate.py")
    pidfile = tmp_path / "grandchild.pid"
    (tree / "test_hang.py").write_text(
        "import subprocess, sys, time\n"
        "def test_hang():\n"
        "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        f"    open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "    time.sleep(120)\n",
        encoding="utf-8",
    )
    (tree / "test_ok.py").write_text("def test_ok():\n    assert True\n", encoding="utf-8")
    worker = gate.Worker(tree)
    try:
        started = time.monotonic()
        code, _ = worker.pytest(["-q", "-p", "no:cacheprovider", "test_hang.py"], timeout=3)
        assert code is None and time.monotonic() - started < 30
        grandchild = int(pidfile.read_text())
        assert not _running(grandchild)
        code, output = worker.pytest(["-q", "-p", "no:cacheprovider", "test_ok.py"], timeout=60)
        assert code == 0 and "1 passed" in output  # the worker serves on after a timeout
    finally:
        worker.close()


class _StallingWorker:
    """A stand-in worker whose first runs time out (a stalled fork), then answer ``code``."""

    def __init__(self, tree: pathlib.Path, stalls: int, code: int) -> None:
        self.tree, self.stalls, self.code, self.timeouts = tree, stalls, code, []

    def pytest(self, args: list[str], timeout: float) -> tuple[int | None, str]:
        self.timeouts.append(timeout)
        if len(self.timeouts) <= self.stalls:
            return None, ""
        return self.code, "1 failed"


@pytest.mark.parametrize(("stalls", "code", "caught"), [(1, 0, False), (1, 1, True), (2, 0, True)])
def test_a_first_run_that_times_out_is_run_again_under_the_full_ceiling(
    tmp_path: pathlib.Path, stalls: int, code: int, caught: bool
) -> None:
    # A stall followed by a passing run is a SURVIVOR (not a catch by timeout); two timeouts are a hang, caught.
    (tmp_path / "target.py").write_text("VALUE = 1\n", encoding="utf-8")
    mutation = gate.Mutation(
        id="m", file="target.py", original="VALUE = 1", replacement="VALUE = 2", tests=("t.py",), why="w"
    )
    worker = _StallingWorker(tmp_path, stalls, code)
    outcome = gate.run_one(worker, mutation)  # type: ignore[arg-type]
    assert outcome.caught is caught
    assert worker.timeouts == [gate.FIRST_TIMEOUT_SECONDS, gate.TIMEOUT_SECONDS][: min(stalls + 1, 2)]
    assert (tmp_path / "target.py").read_text(encoding="utf-8") == "VALUE = 1\n"  # restored either way
