"""Discovery, excludes and skips; drawer plans for mine and sweep; idempotent ids; verbatim chunks."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from undercroft_cli.mining import (
    AI_TOOL_WING,
    SWEEP_ROOM,
    MalformedTranscript,
    SkipReason,
    conversation_room,
    default_wing,
    discover,
    plan_mine,
    plan_sweep,
    render_transcript,
)
from undercroft_core import InvalidInput, is_drawer_id, normalise, render_turn, source_drawer_id

FIXTURES = Path(__file__).parent / "fixtures" / "mining" / "convos"


def _write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _skips(root: Path, **options: object) -> dict[str, tuple[SkipReason, str]]:
    found = discover(root, **options)  # type: ignore[arg-type]
    return {skip.path: (skip.reason, skip.detail) for skip in found.skipped}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "My Project"
    _write(root / "README.md", "# Title\n\nSome words.\n")
    _write(root / "src/app.py", "print('hello')\n")
    _write(root / "src/app.log", "noise\n")
    _write(root / "src/keep.log", "kept by negation\n")
    _write(root / "src/.gitignore", "generated/\n")
    _write(root / "src/generated/out.py", "x = 1\n")
    _write(root / "docs/deep/notes-2024-03-05.txt", "Notes from the fifth.\n")
    _write(root / "docs/deep/draft.txt", "draft\n")
    _write(root / ".gitignore", "# comment\n*.log\n!keep.log\n/docs/deep/draft.txt\n")
    _write(root / "node_modules/pkg/index.js", "module.exports = 1\n")
    _write(root / "image.png", b"\x89PNG\r\n\x1a\n")
    _write(root / "blob.txt", b"text\x00with a NUL")
    _write(root / "big.md", "x" * 2048)
    _write(root / "package-lock.json", "{}")
    return root


def test_discovery_honours_gitignore_and_reports_every_skip(project: Path) -> None:
    found = discover(project, max_bytes=1024)
    assert [f.relative for f in found.files] == ["README.md", "docs/deep/notes-2024-03-05.txt", "src/app.py"]
    skips = {skip.path: skip for skip in found.skipped}
    assert skips["src/app.log"].reason is SkipReason.EXCLUDED
    assert skips["src/app.log"].detail == "'*.log' (.gitignore:2)"
    assert skips["docs/deep/draft.txt"].detail == "'/docs/deep/draft.txt' (.gitignore:4)"
    assert skips["src/generated"].detail == "'generated/' (src/.gitignore:1)"
    assert skips["src/keep.log"].reason is SkipReason.UNSUPPORTED  # re-included, but .log is not a document type
    assert skips["node_modules"].reason is SkipReason.SKIPPED_DIRECTORY
    assert skips["image.png"].reason is SkipReason.UNSUPPORTED
    assert (skips["blob.txt"].reason, skips["blob.txt"].detail) == (SkipReason.BINARY, "contains NUL bytes")
    assert (skips["big.md"].reason, skips["big.md"].detail) == (SkipReason.TOO_LARGE, "2048 bytes, the limit is 1024")
    assert skips["package-lock.json"].reason is SkipReason.GENERATED


def test_negation_reincludes_a_file(tmp_path: Path) -> None:
    _write(tmp_path / ".gitignore", "*.md\n!keep.md\n")
    _write(tmp_path / "drop.md", "a")
    _write(tmp_path / "keep.md", "b")
    assert [f.relative for f in discover(tmp_path).files] == ["keep.md"]


def test_caller_excludes_win_and_gitignore_can_be_ignored(project: Path) -> None:
    found = discover(project, excludes=("docs/",), respect_gitignore=False)
    names = [f.relative for f in found.files]
    assert "src/app.py" in names and "src/generated/out.py" in names
    assert not any(name.startswith("docs/") for name in names)
    assert {s.path: s.detail for s in found.skipped}["docs"] == "'docs/' (excludes:1)"


def test_symlinks_are_never_followed_and_loops_are_named(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _write(root / "a/real.md", "real")
    _write(tmp_path / "outside.md", "outside")
    os.symlink(root, root / "a" / "up")
    os.symlink(tmp_path / "outside.md", root / "link.md")
    os.symlink(tmp_path / "missing.md", root / "dangling.md")
    os.symlink(root / "self1", root / "self2")
    os.symlink(root / "self2", root / "self1")
    skips = _skips(root)
    assert skips["a/up"] == (SkipReason.SYMLINK_LOOP, "points at a directory this walk is inside")
    assert skips["link.md"] == (SkipReason.SYMLINK, "symlinks are not followed")
    assert skips["dangling.md"][0] is SkipReason.BROKEN_SYMLINK
    assert skips["self1"] == (SkipReason.SYMLINK_LOOP, "the link resolves through itself")
    assert [f.relative for f in discover(root).files] == ["a/real.md"]


def test_fifo_is_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    assert _skips(tmp_path)["pipe.md"][0] is SkipReason.NOT_REGULAR


def test_convos_mode_skips_tool_output_and_subagents(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "claude-code", tmp_path / "proj")
    _write(tmp_path / "proj/tool-results/1.txt", "> a\n> b\n> c\n")
    _write(tmp_path / "proj/subagents/agent.jsonl", "{}")
    skips = _skips(tmp_path, mode="convos")
    assert skips["proj/tool-results"][0] is SkipReason.SKIPPED_DIRECTORY
    assert skips["proj/subagents"][0] is SkipReason.SKIPPED_DIRECTORY


def test_mine_files_plans_are_verbatim_chunks_with_stable_ids(project: Path) -> None:
    first = plan_mine(project, mode="files")
    second = plan_mine(project, mode="files")
    assert first == second
    assert first.wing == "my_project"  # MemPalace's slug of the directory name
    assert [d.id for d in first.drawers] == [d.id for d in second.drawers]
    assert len({d.id for d in first.drawers}) == len(first.drawers)
    notes = next(d for d in first.drawers if d.source_file.endswith("notes-2024-03-05.txt"))
    assert (notes.room, notes.content, notes.content_date, notes.origin) == (
        "general",
        "Notes from the fifth.",
        "2024-03-05",
        "document",
    )
    assert notes.source_file == (project / "docs/deep/notes-2024-03-05.txt").as_posix()
    assert notes.id == source_drawer_id("my_project", "general", notes.source_file, 0)
    assert all(is_drawer_id(d.id) and d.kind is None for d in first.drawers)


def test_a_long_document_chunks_in_order(tmp_path: Path) -> None:
    paragraphs = [f"Paragraph {n}: " + "words " * 40 + "end." for n in range(12)]
    text = "\r\n\r\n".join(paragraphs)
    _write(tmp_path / "long.md", text)
    plans = plan_mine(tmp_path, wing="docs").drawers
    assert len(plans) > 3 and [p.chunk_index for p in plans] == list(range(len(plans)))
    normalised = normalise(text)
    assert "\n\n".join(p.content for p in plans) == normalised


def test_remining_after_an_edit_keeps_earlier_ids(tmp_path: Path) -> None:
    _write(tmp_path / "a.md", "alpha\n\n" + "beta " * 300)
    before = plan_mine(tmp_path, wing="w").drawers
    _write(tmp_path / "a.md", "alpha\n\n" + "beta " * 300 + "\n\ngamma")
    after = plan_mine(tmp_path, wing="w").drawers
    assert [d.id for d in after[: len(before)]] == [d.id for d in before]


def test_mine_convos_plans_every_fixture_and_skips_the_rest(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "chats")
    _write(tmp_path / "chats/broken.jsonl", '{"type":"user","message":{"role":"user","content":"x"}}\n{oops}\n')
    plan = plan_mine(tmp_path / "chats", mode="convos")
    assert plan.wing == "chats"
    assert len(plan.files) == 9
    skips = {s.path: s for s in plan.skipped}
    assert skips["slack/users.json"].reason is SkipReason.NOT_TRANSCRIPT
    assert skips["broken.jsonl"].reason is SkipReason.MALFORMED
    assert skips["broken.jsonl"].detail == (
        "broken.jsonl: line 2 column 2: invalid JSON: Expecting property name enclosed in double quotes"
    )
    claude = [d for d in plan.drawers if d.format == "claude-code"]
    assert len(claude) == 1
    assert claude[0].content == (
        'User said, "Which AEAD should the vault use?"\n\n'
        'Assistant said, "XChaCha20-Poly1305: its 192-bit nonce can be drawn at random without a counter."\n\n'
        'User said, "Good — write that down as a decision.\n\n  Keep the  "double spaces"  exactly."'
    )
    assert claude[0].content_date == "2025-06-01T09:15:09.004000Z"
    assert claude[0].session == "5f0c2d1e-1111-4c7a-9a55-0d6c7d2e9b10"
    assert claude[0].room == "decisions"
    bundle = [d for d in plan.drawers if d.format == "claude-ai"]
    assert [(d.chunk_index, d.session) for d in bundle] == [
        (0, "c1a2b3c4-0000-4000-8000-000000000001"),
        (1, "c1a2b3c4-0000-4000-8000-000000000002"),
    ]
    assert plan == plan_mine(tmp_path / "chats", mode="convos")


def test_chunk_dates_come_from_the_messages_they_hold(tmp_path: Path) -> None:
    lines = [
        f'{{"type":"user","timestamp":"2025-01-0{day}T00:00:00Z","message":{{"role":"user","content":"{"w " * 300}"}}}}'
        for day in range(1, 5)
    ]
    _write(tmp_path / "s.jsonl", "\n".join(lines))
    plans = plan_mine(tmp_path, mode="convos", wing="w", room="r").drawers
    assert [p.content_date for p in plans] == [f"2025-01-0{day}T00:00:00Z" for day in range(1, 5)]


def test_sweep_plans_one_drawer_per_message() -> None:
    plan = plan_sweep(FIXTURES, wing="claude-code")
    assert len(plan.drawers) == 26  # every message of the nine transcript fixtures
    codex = [d for d in plan.drawers if d.format == "codex"]
    assert [(d.chunk_index, d.content, d.content_date, d.room, d.origin) for d in codex] == [
        (0, render_turn("User", "Run the chunker tests and tell me what fails."), "2025-06-02T10:00:02.250000Z",
         SWEEP_ROOM, "message"),
        (1, render_turn("Assistant", "All 42 chunker tests pass; nothing fails."), "2025-06-02T10:00:15.750000Z",
         SWEEP_ROOM, "message"),
    ]  # fmt: skip
    assert plan_sweep(FIXTURES, wing="claude-code") == plan


def test_swept_ids_survive_the_session_growing(tmp_path: Path) -> None:
    session = (FIXTURES / "claude-code/session.jsonl").read_text(encoding="utf-8").splitlines()
    _write(tmp_path / "s.jsonl", "\n".join(session[:3]))
    before = plan_sweep(tmp_path, wing="w").drawers
    _write(tmp_path / "s.jsonl", "\n".join(session))
    after = plan_sweep(tmp_path, wing="w").drawers
    assert [d.id for d in after[: len(before)]] == [d.id for d in before]
    assert len(after) == len(before) + 1


def test_render_transcript_speaks_every_turn(tmp_path: Path) -> None:
    assert render_transcript(FIXTURES / "slack/general/2025-06-04.json") == (
        'U01ADA said, "Backups ran at 02:00, all verified."\n\n'
        'U02BOB said, "Thanks <@U01ADA> :tada:"\n\n'
        'verifier said, "Nightly verify: OK"'
    )
    broken = _write(tmp_path / "s.jsonl", '{"type":"user","message":{"role":"user","content":"x"}}\n{')
    with pytest.raises(MalformedTranscript, match=r"s\.jsonl: line 2 column 2: invalid JSON"):
        render_transcript(broken)


def test_wing_and_room_defaults(tmp_path: Path) -> None:
    assert default_wing(Path("/home/a/.claude/projects/-home-a-x"), transcripts=True) == AI_TOOL_WING
    assert default_wing(Path("/home/a/.codex/sessions"), transcripts=True) == AI_TOOL_WING
    assert default_wing(Path("/home/a/.claude/projects"), transcripts=False) == "projects"
    assert default_wing(Path("/home/a/.claude/settings"), transcripts=True) == "settings"
    assert default_wing(Path("/x/Team-Notes 2024"), transcripts=True) == "team_notes_2024"
    with pytest.raises(InvalidInput, match="pass a wing explicitly"):
        default_wing(Path("/x/---"), transcripts=False)
    with pytest.raises(InvalidInput, match="invalid wing name"):
        plan_mine(tmp_path, wing="../etc")
    assert conversation_room("We decided on the approach after the trade-off") == "decisions"
    assert conversation_room("the latest numbers") == "general"  # 'test' is not a word of 'latest'
    assert conversation_room("the bug and the crash: a bug fix") == "problems"


def test_unknown_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="unknown mine mode 'chats'"):
        plan_mine(tmp_path, mode="chats")  # type: ignore[arg-type]


_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=0, max_size=3000
) | st.lists(st.sampled_from(["word", " ", "\n", "\n\n", "\r\n", "é", "e\u0301", ".", "\t", "\ufeff", "x" * 90]),
             max_size=400).map("".join)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT)
def test_every_planned_chunk_is_an_exact_substring_of_the_normalised_text(tmp_path: Path, text: str) -> None:
    path = tmp_path / "doc.md"
    path.write_bytes(text.encode("utf-8"))
    normalised = normalise(text)
    plans = plan_mine(path, wing="w").drawers
    position = 0
    for plan in plans:
        found = normalised.find(plan.content, position)
        assert found >= 0 and plan.content
        assert normalised[found : found + len(plan.content)] == plan.content
        assert normalised[position:found].strip() == ""
        position = found + len(plan.content)
    assert normalised[position:].strip() == ""


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=st.lists(st.text(min_size=1, max_size=400).filter(lambda t: normalise(t) != ""), min_size=1, max_size=8))
def test_conversation_chunks_are_substrings_of_the_rendering(tmp_path: Path, turns: list[str]) -> None:
    import json

    lines = [json.dumps({"type": "user", "message": {"role": "user", "content": turn}}) for turn in turns]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    rendering = render_transcript(path)
    for plan in plan_mine(path, mode="convos", wing="w").drawers:
        assert plan.content in rendering
