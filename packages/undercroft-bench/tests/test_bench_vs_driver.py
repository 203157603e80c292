"""The MemPalace driver protocol, run for real against a fake `mempalace` package (no MemPalace needed).

The driver script is started as MemPalace's interpreter would start it (a subprocess speaking JSON lines),
with a stand-in `mempalace` on its path that prints noise to stdout on purpose: the protocol channel must
survive it. A second fake driver breaks the protocol in each way the client must refuse.
"""

import os
import pathlib
import sys
import textwrap

import pytest
from undercroft_bench.chunking import Chunk
from undercroft_bench.errors import ArmUnavailable, InvalidSetting, RetrieverFault
from undercroft_bench.vs_systems import (
    DRIVER_SCRIPT,
    MempalaceDriver,
    MempalaceRetriever,
    driver_command,
    resolve_system,
)

FAKE_MEMPALACE = {
    "__init__.py": """
        print("fake mempalace importing: noise on stdout")
        __version__ = "0.0-fake"
    """,
    "palace.py": """
        import json, pathlib

        class Collection:
            def __init__(self, path):
                self.file = pathlib.Path(path) / "drawers.json"

            def rows(self):
                return json.loads(self.file.read_text()) if self.file.exists() else []

            def add(self, source, text):
                rows = self.rows() + [[source, text]]
                self.file.write_text(json.dumps(rows))

            def count(self):
                return len(self.rows())

        def get_collection(path, create=True):
            pathlib.Path(path).mkdir(parents=True, exist_ok=True)
            return Collection(path)
    """,
    "miner.py": """
        import pathlib
        from mempalace.palace import get_collection

        def add_drawer(collection, wing, room, content, source_file, chunk_index, agent):
            print("filed", source_file)
            collection.add(source_file, content)

        def mine(project_dir, palace_path):
            collection = get_collection(palace_path)
            for path in sorted(pathlib.Path(project_dir).resolve().rglob("*.md")):
                print("mined", path)
                collection.add(str(path), path.read_text())
    """,
    "searcher.py": """
        from mempalace.palace import get_collection

        def search_memories(query, palace_path, n_results=5):
            if query == "boom":
                return {"error": "index is broken"}
            rows = get_collection(palace_path).rows()
            words = set(query.lower().split())
            scored = sorted(rows, key=lambda row: -len(words & set(row[1].lower().split())))
            hits = [{"source_path": source} for source, _ in scored[:n_results]]
            if query.startswith("dup"):
                hits = hits[:1] + hits[:1] + [{"source_path": "/nowhere/else.md"}]
            return {"results": hits}
    """,
}


@pytest.fixture
def fake_env(tmp_path: pathlib.Path) -> dict[str, str]:
    package = tmp_path / "site" / "mempalace"
    package.mkdir(parents=True)
    for name, source in FAKE_MEMPALACE.items():
        (package / name).write_text(textwrap.dedent(source))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tmp_path / "site")
    env["TMPDIR"] = str(tmp_path)
    return env


def _chunks() -> list[Chunk]:
    return [
        Chunk("c0", 'A said, "I adopted a dog named Rex"', "1", ("D1:1",)),
        Chunk("c1", 'B said, "The kitchen is blue now"', "2", ("D2:1",)),
        Chunk("c2", 'A said, "Rex the dog loves the park"', "3", ("D3:1",)),
    ]


def test_driver_script_is_a_file_beside_the_package() -> None:
    assert DRIVER_SCRIPT.is_file()
    assert driver_command("/venv/bin/python") == ["/venv/bin/python", str(DRIVER_SCRIPT)]
    # It runs in another interpreter, so it may import nothing of ours.
    assert "undercroft" not in DRIVER_SCRIPT.read_text().split('"""', 2)[2].split("def ")[0]


def test_hello_index_search_round_trip_in_add_mode(fake_env) -> None:
    with MempalaceDriver(driver_command(sys.executable), env=fake_env) as driver:
        hello = driver.hello()
        assert driver.version == "0.0-fake" and hello["python"] == sys.version.split()[0]
        retriever = MempalaceRetriever(driver, "add")
        retriever.index(_chunks())
        assert retriever.drawers == 3
        assert retriever.disk_bytes() > 0
        assert retriever.search("dog named Rex", 2) == ["c0", "c2"]
        assert retriever.search("kitchen blue", 1) == ["c1"]
        assert retriever.driver_search_seconds >= 0.0
        with pytest.raises(RetrieverFault, match=r"mempalace: index\(\) was already called"):
            retriever.index(_chunks())


def test_mine_mode_files_chunks_as_files_and_maps_paths_back(fake_env) -> None:
    chunks = [Chunk("health/a.md", "running the half marathon", "health/a.md", ()), Chunk("b", "tax forms", "b", ())]
    with MempalaceDriver(driver_command(sys.executable), env=fake_env) as driver:
        retriever = MempalaceRetriever(driver, "mine")
        retriever.index(chunks)
        assert retriever.drawers == 2
        # "b" has no readable suffix, so it was filed as b.md and still maps back to "b".
        assert retriever.search("tax forms", 2) == ["b", "health/a.md"]


def test_each_index_is_a_fresh_palace(fake_env) -> None:
    with MempalaceDriver(driver_command(sys.executable), env=fake_env) as driver:
        first = MempalaceRetriever(driver)
        first.index(_chunks())
        second = MempalaceRetriever(driver)
        second.index(_chunks()[:1])
        assert second.drawers == 1
        assert second.search("kitchen", 5) == ["c0"]


def test_duplicates_are_dropped_in_order_and_unmapped_sources_are_marked(fake_env) -> None:
    with MempalaceDriver(driver_command(sys.executable), env=fake_env) as driver:
        retriever = MempalaceRetriever(driver)
        retriever.index(_chunks())
        assert retriever.search("dup dog", 3) == ["c0", "?unmapped:/nowhere/else.md"]


def test_a_mempalace_error_is_a_typed_refusal_and_the_channel_survives(fake_env) -> None:
    with MempalaceDriver(driver_command(sys.executable), env=fake_env) as driver:
        retriever = MempalaceRetriever(driver)
        with pytest.raises(RetrieverFault, match="refused 'search': search before index"):
            retriever.search("dog", 1)
        retriever.index(_chunks())
        with pytest.raises(RetrieverFault, match="refused 'search': mempalace search failed: index is broken"):
            retriever.search("boom", 1)
        assert retriever.search("kitchen", 1) == ["c1"]
        with pytest.raises(RetrieverFault, match="unknown index mode 'bulk'"):
            driver.request({"op": "index", "mode": "bulk", "chunks": []})
        with pytest.raises(RetrieverFault, match="unknown op 'dance'"):
            driver.request({"op": "dance"})


def test_unknown_ingest_mode_is_refused_before_any_request(fake_env) -> None:
    with MempalaceDriver(driver_command(sys.executable), env=fake_env) as driver:
        with pytest.raises(InvalidSetting, match="ingest mode must be one of add, mine, got 'bulk'"):
            MempalaceRetriever(driver, "bulk")


BROKEN = """
import sys
mode = sys.argv[1]
for line in sys.stdin:
    if mode == "garbage":
        print("this is not json", flush=True)
    elif mode == "die":
        sys.exit(3)
    elif mode == "ids":
        print('{"ok": true, "ids": [1, 2]}', flush=True)
"""


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("garbage", "answered a line that is not JSON: 'this is not json"),
        ("die", r"exited \(code 3\) before answering 'search'"),
        ("ids", r"answered ids that are not a list of strings: \[1, 2\]"),
    ],
)
def test_a_broken_driver_is_refused_precisely(tmp_path, mode, message) -> None:
    script = tmp_path / "broken.py"
    script.write_text(BROKEN)
    with MempalaceDriver([sys.executable, str(script), mode]) as driver:
        with pytest.raises(RetrieverFault, match=message):
            MempalaceRetriever(driver).search("q", 1)


def test_a_driver_that_cannot_start_is_unavailable(tmp_path) -> None:
    with pytest.raises(ArmUnavailable, match="cannot start the MemPalace driver"):
        MempalaceDriver([str(tmp_path / "no-such-python")])


def test_resolve_mempalace_needs_an_existing_python(tmp_path) -> None:
    with pytest.raises(InvalidSetting, match=r"--system mempalace needs --python PATH"):
        resolve_system("mempalace")
    with pytest.raises(InvalidSetting, match=r"--python .*absent does not exist"):
        resolve_system("mempalace", python=tmp_path / "absent")
    with pytest.raises(InvalidSetting, match="--mempalace-ingest must be one of add, mine, got 'x'"):
        resolve_system("mempalace", python=tmp_path, ingest="x")
    with pytest.raises(InvalidSetting, match="unknown system 'mem0'"):
        resolve_system("mem0")


def test_resolve_mempalace_greets_the_driver_and_builds_fresh_retrievers(fake_env, monkeypatch) -> None:
    monkeypatch.setenv("PYTHONPATH", fake_env["PYTHONPATH"])
    monkeypatch.setenv("TMPDIR", fake_env["TMPDIR"])
    system = resolve_system("mempalace", driver_argv=driver_command(sys.executable), ingest="mine")
    try:
        assert system.driver is not None and system.driver.version == "0.0-fake"
        assert "mempalace 0.0-fake" in system.configuration and "miner.mine" in system.configuration
        from undercroft_bench.retriever import ArmContext

        first = system.factory(ArmContext("a"))
        assert first is not system.factory(ArmContext("b"))
    finally:
        assert system.driver is not None
        system.driver.close()


def test_a_driver_that_will_not_exit_is_killed_after_the_timeout(tmp_path) -> None:
    script = tmp_path / "stubborn.py"
    script.write_text("import time\nwhile True:\n    time.sleep(1)\n")
    driver = MempalaceDriver([sys.executable, str(script)])
    driver._process.stdout.close()  # the close request then fails at once instead of waiting for an answer
    driver.close(timeout=0.5)
    assert driver._process.returncode is not None and driver._process.returncode < 0
