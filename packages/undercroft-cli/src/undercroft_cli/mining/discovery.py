"""Walking a directory for files to mine, with a stated reason for everything left out.

Nothing is followed: a symlink is reported (``symlink``, ``symlink loop`` when it points back at a directory
the walk is inside, ``broken symlink``) and skipped, and a directory already visited through another path is
a ``symlink loop`` too. Built-in directories (VCS metadata, dependency and build caches) are never entered;
``.gitignore`` files are honoured at every depth, then the caller's ``excludes`` (same syntax, anchored at
the root). A file must have a supported extension for the mode, be a regular file no larger than
``max_bytes``, and carry no NUL byte in its first 8 KiB (``binary``).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

from undercroft_cli.mining.ignore import IgnoreRules, parse_ignore_lines

__all__ = [
    "BUILTIN_SKIP_DIRECTORIES",
    "CONVERSATION_EXTENSIONS",
    "CONVERSATION_SKIP_DIRECTORIES",
    "DEFAULT_MAX_FILE_BYTES",
    "DOCUMENT_EXTENSIONS",
    "DOCUMENT_NAMES",
    "GENERATED_FILENAMES",
    "MAX_SOURCE_BYTES",
    "Discovery",
    "FoundFile",
    "MineMode",
    "Skip",
    "SkipReason",
    "discover",
]

#: What ``mine`` reads: documents (text, markdown, code) or conversation transcripts.
MineMode = Literal["files", "convos"]

#: Largest file read (bytes); larger files are skipped as ``too large``.
DEFAULT_MAX_FILE_BYTES = 50 * 1024 * 1024
#: Longest source path (UTF-8 bytes) a drawer id accepts.
MAX_SOURCE_BYTES = 4096
_SNIFF_BYTES = 8192

#: Directories never entered: version control, dependency trees, virtualenvs, build output and tool caches.
BUILTIN_SKIP_DIRECTORIES = frozenset(
    {
        ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", "env", "dist", "build", ".next",
        "coverage", ".ruff_cache", ".mypy_cache", ".pytest_cache", ".cache", ".tox", ".nox", ".idea", ".vscode",
        ".ipynb_checkpoints", ".eggs", "htmlcov", "target", ".undercroft",
    }
)  # fmt: skip
#: Also skipped in ``convos`` mode: Claude Code's paged tool output and its subagent transcripts.
CONVERSATION_SKIP_DIRECTORIES = frozenset({"tool-results", "subagents"})

#: Extensions mined as documents.
DOCUMENT_EXTENSIONS = frozenset(
    {
        ".txt", ".md", ".markdown", ".rst", ".adoc", ".org", ".tex", ".bib", ".csv", ".tsv",
        ".json", ".jsonl", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".xml", ".html", ".htm", ".css", ".scss",
        ".py", ".pyi", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".vue", ".svelte", ".java", ".kt", ".kts",
        ".scala", ".go", ".rs", ".swift", ".rb", ".php", ".pl", ".lua", ".r", ".jl", ".dart", ".ex", ".exs",
        ".erl", ".hs", ".ml", ".clj", ".el", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".inl", ".cs", ".fs",
        ".sh", ".bash", ".zsh", ".fish", ".ps1", ".sql", ".proto", ".graphql", ".tf", ".nix", ".al",
    }
)  # fmt: skip
#: Extensionless names mined as documents.
DOCUMENT_NAMES = frozenset({"Makefile", "Dockerfile", "README", "LICENSE", "NOTICE", "CHANGELOG"})
#: Extensions read in ``convos`` mode (the content then decides the format).
CONVERSATION_EXTENSIONS = frozenset({".json", ".jsonl", ".txt", ".md"})
#: Generated files whose text is not anybody's writing.
GENERATED_FILENAMES = frozenset(
    {"package-lock.json", "pnpm-lock.yaml", "yarn.lock", "Cargo.lock", "poetry.lock", "uv.lock", "Gemfile.lock",
     "composer.lock", ".gitignore"}
)  # fmt: skip


class SkipReason(StrEnum):
    """Why a path was left out (the value is what a report prints)."""

    EXCLUDED = "excluded"
    SKIPPED_DIRECTORY = "skipped directory"
    SYMLINK = "symlink"
    SYMLINK_LOOP = "symlink loop"
    BROKEN_SYMLINK = "broken symlink"
    NOT_REGULAR = "not a regular file"
    TOO_LARGE = "too large"
    BINARY = "binary"
    UNSUPPORTED = "unsupported type"
    GENERATED = "generated file"
    UNREADABLE = "unreadable"
    BAD_NAME = "unusable path"
    NOT_TEXT = "not UTF-8 text"
    NOT_TRANSCRIPT = "not a transcript"
    AMBIGUOUS = "ambiguous format"
    MALFORMED = "malformed transcript"
    EMPTY = "empty"


@dataclass(frozen=True, slots=True)
class Skip:
    """One path left out: relative to the root (POSIX), the reason, and a detail naming the specific cause."""

    path: str
    reason: SkipReason
    detail: str


@dataclass(frozen=True, slots=True)
class FoundFile:
    """A file to read: its absolute path, its POSIX path relative to the root, and its size in bytes."""

    path: Path
    relative: str
    size: int


@dataclass(frozen=True, slots=True)
class Discovery:
    """The outcome of a walk: files in sorted order and every skip with its reason."""

    root: Path
    files: tuple[FoundFile, ...]
    skipped: tuple[Skip, ...]


def _symlink_skip(entry: os.DirEntry[str], relative: str, ancestors: list[Path]) -> Skip:
    try:
        target = Path(entry.path).resolve(strict=True)
    except FileNotFoundError:
        return Skip(relative, SkipReason.BROKEN_SYMLINK, f"points at {os.readlink(entry.path)!r}, which does not exist")
    except (RuntimeError, OSError) as error:
        if isinstance(error, RuntimeError) or getattr(error, "errno", None) == errno.ELOOP:
            return Skip(relative, SkipReason.SYMLINK_LOOP, "the link resolves through itself")
        return Skip(relative, SkipReason.BROKEN_SYMLINK, f"cannot be resolved: {error.strerror or error}")
    if target.is_dir() and any(target == ancestor for ancestor in ancestors):
        return Skip(relative, SkipReason.SYMLINK_LOOP, "points at a directory this walk is inside")
    return Skip(relative, SkipReason.SYMLINK, "symlinks are not followed")


def _read_gitignore(directory: Path, relative: str) -> tuple[IgnoreRules, Skip | None]:
    path = directory / ".gitignore"
    name = f"{relative}/.gitignore" if relative else ".gitignore"
    if not path.is_file() or path.is_symlink():
        return IgnoreRules(), None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        return IgnoreRules(), Skip(name, SkipReason.UNREADABLE, f"ignore file not read: {error}")
    return IgnoreRules(parse_ignore_lines(lines, base=relative, source=name)), None


def _sniff(path: Path) -> str | None:
    """Return a binary/unreadable reason, or None for a readable file without NUL bytes up front."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        return f"cannot open: {error.strerror or error}"
    with os.fdopen(descriptor, "rb") as handle:
        head = handle.read(_SNIFF_BYTES)
    return "contains NUL bytes" if b"\x00" in head else None


def _accepts(name: str, mode: MineMode) -> bool:
    suffix = os.path.splitext(name)[1].lower()
    if mode == "convos":
        return suffix in CONVERSATION_EXTENSIONS and not name.endswith(".meta.json")
    return suffix in DOCUMENT_EXTENSIONS or name in DOCUMENT_NAMES


def discover(
    root: str | Path,
    *,
    mode: MineMode = "files",
    excludes: tuple[str, ...] = (),
    respect_gitignore: bool = True,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> Discovery:
    """Walk ``root`` (a directory, or a single file) and return what to mine and what was skipped, and why."""
    start = Path(root).expanduser().resolve()
    if start.is_file():
        return _discover_single(start, mode=mode, max_bytes=max_bytes)
    if not start.is_dir():
        raise FileNotFoundError(f"{root}: no such directory")
    user_rules = parse_ignore_lines(excludes, source="excludes")
    files: list[FoundFile] = []
    skipped: list[Skip] = []
    visited: set[tuple[int, int]] = set()
    stack: list[tuple[Path, str, IgnoreRules, list[Path]]] = [(start, "", IgnoreRules(), [])]
    skip_directories = BUILTIN_SKIP_DIRECTORIES | (CONVERSATION_SKIP_DIRECTORIES if mode == "convos" else frozenset())
    while stack:
        directory, relative_directory, inherited, ancestors = stack.pop()
        identity = directory.stat()
        if (identity.st_dev, identity.st_ino) in visited:
            skipped.append(Skip(relative_directory, SkipReason.SYMLINK_LOOP, "directory already visited"))
            continue
        visited.add((identity.st_dev, identity.st_ino))
        ancestors = [*ancestors, directory]
        rules = inherited
        if respect_gitignore:
            local, problem = _read_gitignore(directory, relative_directory)
            rules = rules.extended(local.rules)
            if problem is not None:
                skipped.append(problem)
        effective = rules.extended(user_rules)
        try:
            entries = sorted(os.scandir(directory), key=lambda item: item.name)
        except OSError as error:
            skipped.append(Skip(relative_directory or ".", SkipReason.UNREADABLE, error.strerror or str(error)))
            continue
        subdirectories: list[tuple[Path, str, IgnoreRules, list[Path]]] = []
        for entry in entries:
            relative = f"{relative_directory}/{entry.name}" if relative_directory else entry.name
            try:
                relative.encode("utf-8")
            except UnicodeEncodeError:
                skipped.append(Skip(relative, SkipReason.BAD_NAME, "the name is not valid UTF-8"))
                continue
            if entry.is_symlink():
                skipped.append(_symlink_skip(entry, relative, ancestors))
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_dir and entry.name in skip_directories:
                skipped.append(Skip(relative, SkipReason.SKIPPED_DIRECTORY, f"{entry.name} is never mined"))
                continue
            rule = effective.decide(relative, is_dir=is_dir)
            if rule is not None:
                skipped.append(Skip(relative, SkipReason.EXCLUDED, f"{rule.pattern!r} ({rule.source})"))
                continue
            if is_dir:
                subdirectories.append((Path(entry.path), relative, rules, ancestors))
                continue
            found = _check_file(Path(entry.path), relative, entry.name, mode=mode, max_bytes=max_bytes)
            if isinstance(found, Skip):
                skipped.append(found)
            else:
                files.append(found)
        stack.extend(reversed(subdirectories))
    return Discovery(start, tuple(sorted(files, key=lambda f: f.relative)), tuple(skipped))


def _check_file(path: Path, relative: str, name: str, *, mode: MineMode, max_bytes: int) -> FoundFile | Skip:
    if name in GENERATED_FILENAMES:
        return Skip(relative, SkipReason.GENERATED, f"{name} is generated, not written")
    if not _accepts(name, mode):
        return Skip(relative, SkipReason.UNSUPPORTED, f"not a {'transcript' if mode == 'convos' else 'document'} type")
    if len(str(path).encode("utf-8")) > MAX_SOURCE_BYTES:
        return Skip(relative, SkipReason.BAD_NAME, f"the path is longer than {MAX_SOURCE_BYTES} bytes")
    try:
        status = path.lstat()
    except OSError as error:
        return Skip(relative, SkipReason.UNREADABLE, error.strerror or str(error))
    if not stat.S_ISREG(status.st_mode):
        return Skip(relative, SkipReason.NOT_REGULAR, "a device, socket or pipe")
    if status.st_size > max_bytes:
        return Skip(relative, SkipReason.TOO_LARGE, f"{status.st_size} bytes, the limit is {max_bytes}")
    problem = _sniff(path)
    if problem is not None:
        reason = SkipReason.BINARY if problem == "contains NUL bytes" else SkipReason.UNREADABLE
        return Skip(relative, reason, problem)
    return FoundFile(path, relative, status.st_size)


def _discover_single(path: Path, *, mode: MineMode, max_bytes: int) -> Discovery:
    found = _check_file(path, path.name, path.name, mode=mode, max_bytes=max_bytes)
    if isinstance(found, Skip):
        return Discovery(path.parent, (), (found,))
    return Discovery(path.parent, (found,), ())
