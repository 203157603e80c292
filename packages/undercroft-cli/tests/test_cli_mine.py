"""``mine``, ``sweep``, ``transcript render`` and ``drawer delete-by-source`` through the real command group."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from undercroft_cli._internal.filing import file_plans
from undercroft_cli._internal.progress import progress
from undercroft_cli.mining import plan_mine

from .conftest import init_home, run_in_process

FIXTURES = Path(__file__).parent / "fixtures" / "mining" / "convos"
SESSION = FIXTURES / "claude-code" / "session.jsonl"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_undercroft_env: None) -> Path:
    return init_home(monkeypatch, tmp_path / "palace")


def _drawers(capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict[str, str]]:
    code, out, _ = run_in_process(capsys, "drawer", "list", "--json", "--limit", "1000", *extra)
    assert code == 0
    return list(json.loads(out))


def _docs(tmp_path: Path) -> Path:
    root = tmp_path / "My Notes"
    root.mkdir()
    (root / "decisions.md").write_text("We chose GraphQL over REST.\n\nTyped schemas won the argument.\n")
    (root / ".gitignore").write_text("*.log\n")
    (root / "debug.log").write_text("noise\n")
    (root / "image.bin").write_bytes(b"\x00\x01")
    return root


def test_mine_files_is_idempotent_and_verbatim(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _docs(tmp_path)
    code, out, _ = run_in_process(capsys, "mine", str(root))
    assert code == 0
    assert "skipped: debug.log: excluded ('*.log' (.gitignore:1))" in out
    assert "skipped: image.bin: unsupported type" in out
    assert out.rstrip().endswith("created 1, updated 0, unchanged 0, quarantined 0, skipped 3")
    [drawer] = _drawers(capsys)
    assert (drawer["wing"], drawer["room"]) == ("my_notes", "general")
    assert drawer["content"] == "We chose GraphQL over REST.\n\nTyped schemas won the argument."
    code, out, _ = run_in_process(capsys, "mine", str(root), "--json")
    report = json.loads(out)
    assert (report["created"], report["unchanged"], report["drawers"]) == (0, 1, 1)
    (root / "decisions.md").write_text("We chose GraphQL over REST.\n\nTyped schemas and tooling won.\n")
    code, out, _ = run_in_process(capsys, "mine", str(root), "--json")
    assert (json.loads(out)["updated"], json.loads(out)["created"]) == (1, 0)
    [drawer] = _drawers(capsys)
    assert drawer["content"].endswith("tooling won.")
    assert run_in_process(capsys, "verify")[0] == 0


def test_mine_into_wing_room_and_dry_run(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _docs(tmp_path)
    code, out, _ = run_in_process(capsys, "mine", str(root), "--dry-run")
    assert code == 0 and "dry run: nothing written" in out and _drawers(capsys) == []
    code, out, _ = run_in_process(capsys, "mine", str(root), "--exclude", "decisions.md", "--dry-run")
    assert code == 0 and "skipped: decisions.md: excluded" in out and "mine: 0 file(s)" in out
    assert run_in_process(capsys, "mine", str(root), "--wing", "backend", "--room", "decisions")[0] == 0
    [drawer] = _drawers(capsys)
    assert (drawer["wing"], drawer["room"]) == ("backend", "decisions")


def test_stale_trailing_chunks_and_delete_by_source(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    long_doc = root / "long.md"
    long_doc.write_text("\n\n".join(f"Paragraph {i} " + "word " * 150 for i in range(6)))
    (root / "keep.md").write_text("Kept.")
    assert run_in_process(capsys, "mine", str(root))[0] == 0
    before = len(_drawers(capsys))
    assert before > 3
    long_doc.write_text("Paragraph 0 only.")
    assert run_in_process(capsys, "mine", str(root))[0] == 0
    assert len(_drawers(capsys)) == before  # the trailing chunks are stale, not removed
    code, out, _ = run_in_process(capsys, "drawer", "delete-by-source", str(long_doc))
    assert code == 0 and out.startswith(f"deleted {before - 1} drawer(s) from {long_doc.resolve().as_posix()}")
    assert [d["content"] for d in _drawers(capsys)] == ["Kept."]
    assert run_in_process(capsys, "mine", str(root))[0] == 0
    assert sorted(d["content"] for d in _drawers(capsys)) == ["Kept.", "Paragraph 0 only."]
    assert run_in_process(capsys, "verify")[0] == 0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("mine", "{missing}"), "no such directory"),
        (("mine", "{file}"), "not a directory"),
        (("mine", "{root}", "--mode", "chats"), "'chats' is not one of 'files', 'convos'"),
        (("mine", "{root}", "--wing", "a/b"), "invalid wing name 'a/b': contains a path separator"),
        (("mine", "{root}", "--wing", "quarantine-pending"), "quarantine-pending"),
        (("mine", "{root}", "--vault", "nope"), "nope"),
        (("sweep", "{missing}"), "no such directory"),
        (("transcript", "render", "{missing}"), "no such file"),
        (("transcript", "render", "{file}"), "file.md"),
        (("drawer", "delete-by-source", "{file}"), "no drawer in vault 'default' was mined from"),
        (("drawer", "delete-by-source", "{file}", "--wing", "quarantine-pending"), "admission allow|deny"),
    ],
)
def test_bad_input_exits_1_with_a_precise_message(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], expected: str
) -> None:
    root = _docs(tmp_path)
    (tmp_path / "file.md").write_text("just prose, not a transcript\n")
    values = {"missing": str(tmp_path / "missing"), "file": str(tmp_path / "file.md"), "root": str(root)}
    code, _, err = run_in_process(capsys, *(a.format(**values) for a in args))
    assert code == 1
    assert expected in err


def test_mine_convos_files_every_fixture_format(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "convos"
    shutil.copytree(FIXTURES, root)
    code, out, _ = run_in_process(capsys, "mine", str(root), "--mode", "convos", "--json")
    report = json.loads(out)
    assert code == 0 and report["files"] >= 8 and report["created"] == report["drawers"] > 0
    contents = "\n".join(d["content"] for d in _drawers(capsys, "--wing", "convos"))
    assert 'said, "Which AEAD should the vault use?"' in contents
    code, out, _ = run_in_process(capsys, "mine", str(root), "--mode", "convos", "--json")
    assert json.loads(out)["unchanged"] == report["drawers"]


def test_sweep_files_each_message_once(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "projects" / "undercroft"
    root.mkdir(parents=True)
    session = root / "session.jsonl"
    shutil.copy(SESSION, session)
    code, out, _ = run_in_process(capsys, "sweep", str(root.parent), "--wing", "claude-code", "--json")
    first = json.loads(out)
    assert code == 0 and first["created"] == first["drawers"] >= 2
    swept = _drawers(capsys, "--wing", "claude-code")
    assert {d["room"] for d in swept} == {"conversations"}
    assert 'User said, "Which AEAD should the vault use?"' in [d["content"] for d in swept]
    code, out, _ = run_in_process(capsys, "sweep", str(root.parent), "--wing", "claude-code", "--json")
    assert (json.loads(out)["created"], json.loads(out)["unchanged"]) == (0, first["drawers"])
    record = {
        "type": "user",
        "message": {"role": "user", "content": "And the nonce size?"},
        "uuid": "a9",
        "sessionId": "5f0c2d1e-1111-4c7a-9a55-0d6c7d2e9b10",
        "timestamp": "2025-06-01T09:20:00Z",
    }
    with session.open("a") as handle:
        handle.write(json.dumps(record) + "\n")
    code, out, _ = run_in_process(capsys, "sweep", str(root.parent), "--wing", "claude-code")
    assert code == 0 and "created 1, updated 0, unchanged " + str(first["drawers"]) in out


def test_sweep_refuses_an_oversized_message_without_failing_the_batch(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "logs"
    root.mkdir()
    (root / "chat.txt").write_text("> hello\nhi there\n> big\n" + "y" * 70_000 + "\n> bye\nsee you\n")
    code, out, _ = run_in_process(capsys, "sweep", str(root), "--json")
    report = json.loads(out)
    assert code == 0 and len(report["refused"]) == 1 and "content over 65536 bytes" in report["refused"][0]["reason"]
    assert report["created"] == report["drawers"] - 1


def test_transcript_render_prints_turns_verbatim(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_in_process(capsys, "transcript", "render", str(SESSION))
    assert code == 0 and out.startswith('User said, "Which AEAD should the vault use?"\n\n')


def test_transcript_render_refuses_malformed_json_at_its_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "s.jsonl"
    bad.write_text(SESSION.read_text().splitlines()[1] + "\n{not json\n")
    code, _, err = run_in_process(capsys, "transcript", "render", str(bad))
    assert code == 1 and "s.jsonl: line 2 column 2: invalid JSON" in err


class _CountingStore:
    def __init__(self) -> None:
        from undercroft_core.ids import PUBLIC_DRAWER_IDS

        self.batches: list[int] = []
        self.drawer_ids = PUBLIC_DRAWER_IDS

    def write(self, items: list[object], *, screening: object) -> list[object]:
        from undercroft_store import WriteResult

        self.batches.append(len(items))
        return [WriteResult(item.drawer.id, i, "created") for i, item in enumerate(items)]  # type: ignore[attr-defined]


def test_filing_commits_in_batches(tmp_path: Path) -> None:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(12):
        (root / f"n{i:02}.md").write_text(f"note {i}")
    plan = plan_mine(root)
    store = _CountingStore()
    report = file_plans(store, plan.drawers, added_by="cli", batch_size=5, clock=lambda: "2026-01-01T00:00:00Z")  # type: ignore[arg-type]
    assert store.batches == [5, 5, 2] and report.created == 12


def test_progress_is_silent_off_a_terminal_and_draws_on_one(capsys: pytest.CaptureFixture[str]) -> None:
    with progress(10, "mining") as bar:
        bar.update(10)
    assert capsys.readouterr() == ("", "")
    with progress(10, "mining", enabled=True) as bar:
        bar.update(10)
    assert "mining" in capsys.readouterr().err


@pytest.mark.parametrize(
    "body",
    [
        "[" * 100000,  # the decoder itself dies of recursion on it
        "[" * 990 + "]" * 990,  # decodes in a bare interpreter, not under the CLI's stack
        '{"a": ' * 150 + "1" + "}" * 150,  # decodes fine, nests past the bound
        json.dumps({"type": "user", "x": [[[[[[[[[[]]]]]]]]]]}) + "\n" + "[" * 50000 + "\n",  # a JSONL line
    ],
)
def test_a_deeply_nested_transcript_is_skipped_and_the_rest_are_filed(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str
) -> None:
    root = tmp_path / "convos"
    root.mkdir()
    shutil.copy(SESSION, root / "session.jsonl")
    (root / "deep.json").write_text(body)
    for command in ("mine", "sweep"):
        argv = [command, str(root), *(["--mode", "convos"] if command == "mine" else [])]
        code, out, err = run_in_process(capsys, *argv)
        assert code == 0 and "Traceback" not in err, (command, err)
        assert "skipped: deep.json: malformed transcript" in out and "nested deeper than 100 levels" in out
        assert "created 0" not in out, command  # the good transcript was filed
    code, _, err = run_in_process(capsys, "transcript", "render", str(root / "deep.json"))
    assert code == 1 and "nested deeper than 100 levels" in err and "Traceback" not in err


def test_mine_seals_the_search_snapshot_so_a_read_only_search_starts_from_it(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A CLI search opens read-only and cannot store the snapshot: the mine that filled the vault does."""
    import sqlite3

    from undercroft_store.search._internal.snapshot import MIN_DRAWERS

    root = tmp_path / "many"
    root.mkdir()
    for number in range(MIN_DRAWERS + 10):
        (root / f"note{number:05d}.md").write_text(f"Note {number} about graphql gateway latency {number % 7}.\n")
    database = home / "vaults" / "default" / "vault.db"

    def snapshot() -> list[tuple[object, ...]]:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
            return list(connection.execute("SELECT * FROM search_snapshot"))

    code, out, _ = run_in_process(capsys, "mine", str(root), "--wing", "notes")
    assert code == 0 and f"created {MIN_DRAWERS + 10}," in out
    sealed = snapshot()
    assert sealed, "the mine stored no search snapshot"
    code, out, _ = run_in_process(capsys, "search", "graphql gateway latency", "--json")
    assert code == 0 and json.loads(out)["hits"] and snapshot() == sealed  # read-only: restored, not rewritten
    # A write overtakes the snapshot; re-mining (nothing changed) seals the current state again.
    assert run_in_process(capsys, "remember", "One more note about the gateway.")[0] == 0
    code, out, _ = run_in_process(capsys, "mine", str(root), "--wing", "notes")
    assert code == 0 and f"unchanged {MIN_DRAWERS + 10}," in out
    resealed = snapshot()
    assert resealed and resealed != sealed


def test_under_the_pq_tier_mine_still_seals_the_snapshot_and_search_takes_its_postings(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm runs the full scan whatever UNDERCROFT_RETRIEVAL says; a pq search then restores the postings."""
    import sqlite3

    from undercroft_store.search._internal.snapshot import MIN_DRAWERS

    monkeypatch.setenv("UNDERCROFT_RETRIEVAL", "pq")
    root = tmp_path / "many"
    root.mkdir()
    for number in range(MIN_DRAWERS + 10):
        (root / f"note{number:05d}.md").write_text(f"Note {number} about graphql gateway latency {number % 7}.\n")
    database = home / "vaults" / "default" / "vault.db"
    code, out, _ = run_in_process(capsys, "mine", str(root), "--wing", "notes")
    assert code == 0 and f"created {MIN_DRAWERS + 10}," in out
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        assert connection.execute("SELECT count(*) FROM search_snapshot").fetchone()[0] > 0, "no snapshot under pq"
    code, out, _ = run_in_process(capsys, "search", "graphql gateway latency", "--json")
    assert code == 0 and json.loads(out)["hits"]


def test_a_tampered_drawer_found_while_sealing_the_snapshot_is_a_verdict_after_the_report(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The snapshot's fill verifies every drawer: a tampered one elsewhere is exit 2, once the report is out."""
    import sqlite3

    from undercroft_store.search._internal.snapshot import MIN_DRAWERS

    many = tmp_path / "many"
    many.mkdir()
    for number in range(MIN_DRAWERS):
        (many / f"note{number:05d}.md").write_text(f"Note {number} about the billing service.\n")
    assert run_in_process(capsys, "mine", str(many), "--wing", "notes")[0] == 0
    assert run_in_process(capsys, "remember", "A drawer in another wing.", "--wing", "other")[0] == 0
    database = home / "vaults" / "default" / "vault.db"
    with sqlite3.connect(database) as connection:
        seq, content = connection.execute(
            "SELECT seq, content FROM drawers WHERE seq = (SELECT max(seq) FROM drawers)"
        ).fetchone()
        flipped = bytearray(content)
        flipped[len(flipped) // 2] ^= 1
        connection.execute("UPDATE drawers SET content = ? WHERE seq = ?", (bytes(flipped), seq))
    more = tmp_path / "more"
    more.mkdir()
    (more / "new.md").write_text("A new note filed after the tamper.\n")
    code, out, err = run_in_process(capsys, "mine", str(more), "--wing", "more")
    assert code == 2, (out, err)
    assert "created 1," in out  # what was filed is reported first
    assert "integrity" in err.lower() or "tamper" in err.lower(), err
