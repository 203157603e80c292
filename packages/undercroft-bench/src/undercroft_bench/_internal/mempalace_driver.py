"""The MemPalace side of `undercroft-bench vs`: a script run under MemPalace's own interpreter.

It imports only the standard library and PyPI `mempalace` (never `undercroft_bench`: it runs in another
venv) and speaks JSON lines, one request per stdin line and one answer per stdout line:

    {"op": "hello"}                                   -> {"ok": true, "mempalace": "3.11.0", "python": "..."}
    {"op": "index", "mode": "add"|"mine",
     "chunks": [{"id": "...", "text": "...", "session": "..."}]}
                                                      -> {"ok": true, "seconds": s, "drawers": n, "disk_bytes": b}
    {"op": "search", "query": "...", "k": 50}         -> {"ok": true, "ids": [...], "seconds": s}
    {"op": "close"}                                   -> {"ok": true}, then exit

Any failure answers {"ok": false, "error": "..."}. It is a pass-through in MemPalace's default configuration:
`index` opens a fresh palace (a new directory) and files every chunk through MemPalace's public API — `add`
with `mempalace.miner.add_drawer` (its entry point for external callers: one drawer per chunk, source_file =
the chunk id, room = the chunk's session), `mine` by writing each chunk as a file of a fresh project folder
and running `mempalace.miner.mine` on it (MemPalace's own file ingest: its chunking, room detection, closets); `search`
calls `mempalace.searcher.search_memories(query, palace, n_results=k)` with every other argument at its
default and maps each hit's source file back to the chunk id, in MemPalace's order, duplicates dropped.
MemPalace's configuration directory is a fresh empty one, so no user config changes the defaults.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# The readable extensions MemPalace's miner picks up; a chunk id without one is filed as `<id>.md`.
_KEEP_SUFFIXES = (".md", ".txt")


class _Palace:
    """The current palace and the map from MemPalace's source_file values back to chunk ids."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0
        self.path: Path | None = None
        self.sources: dict[str, str] = {}

    def fresh(self) -> Path:
        """Discard the previous palace (one scope at a time) and return a new, empty directory."""
        if self.path is not None:
            shutil.rmtree(self.path.parent, ignore_errors=True)
        self.count += 1
        scope = self.root / f"scope{self.count:04d}"
        scope.mkdir(parents=True)
        self.path = scope / "palace"
        self.sources = {}
        return scope


def _disk_bytes(path: Path) -> int:
    return sum(entry.stat().st_size for entry in path.rglob("*") if entry.is_file())


def _index(palace: _Palace, request: dict[str, Any]) -> dict[str, Any]:
    from mempalace import miner
    from mempalace.palace import get_collection

    mode = request.get("mode", "add")
    chunks = request["chunks"]
    scope = palace.fresh()
    palace_path = palace.path
    assert palace_path is not None
    started = time.perf_counter()
    if mode == "add":
        collection = get_collection(str(palace_path), create=True)
        for position, chunk in enumerate(chunks):
            palace.sources[chunk["id"]] = chunk["id"]
            # The session travels as MemPalace's own metadata (the room), as the protocol asks; unscoped
            # search never reads it.
            room = "session_" + str(chunk.get("session", "none"))
            miner.add_drawer(collection, "bench", room, chunk["text"], chunk["id"], position, "undercroft-bench")
    elif mode == "mine":
        project = scope / "corpus"
        for chunk in chunks:
            name = chunk["id"] if chunk["id"].endswith(_KEEP_SUFFIXES) else chunk["id"] + ".md"
            target = project / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(chunk["text"], encoding="utf-8")
            palace.sources[str(target.resolve())] = chunk["id"]
        miner.mine(str(project), str(palace_path))
    else:
        return {"ok": False, "error": f"unknown index mode {mode!r} (add or mine)"}
    seconds = time.perf_counter() - started
    drawers = get_collection(str(palace_path), create=False).count()
    return {"ok": True, "seconds": seconds, "drawers": drawers, "disk_bytes": _disk_bytes(palace_path)}


def _search(palace: _Palace, request: dict[str, Any]) -> dict[str, Any]:
    from mempalace.searcher import search_memories

    if palace.path is None:
        return {"ok": False, "error": "search before index"}
    started = time.perf_counter()
    answer = search_memories(request["query"], str(palace.path), n_results=int(request["k"]))
    seconds = time.perf_counter() - started
    if "error" in answer:
        return {"ok": False, "error": f"mempalace search failed: {answer['error']}"}
    ids: list[str] = []
    for hit in answer.get("results", []):
        source = hit.get("source_path") or hit.get("source_file") or ""
        # An unmapped source is passed on marked, so the harness refuses it instead of guessing.
        chunk_id = palace.sources.get(source, f"?unmapped:{source}")
        if chunk_id not in ids:
            ids.append(chunk_id)
    return {"ok": True, "ids": ids, "seconds": seconds}


def _hello() -> dict[str, Any]:
    import mempalace

    return {"ok": True, "mempalace": getattr(mempalace, "__version__", "?"), "python": sys.version.split()[0]}


def main() -> int:
    """Serve requests until `close` or end of input; the protocol owns stdout, everything else goes to stderr."""
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    # MemPalace and ChromaDB print progress; keep fd 1 (and sys.stdout) off the protocol channel.
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    root = Path(tempfile.mkdtemp(prefix="undercroft-vs-mempalace-"))
    config_dir = root / "config"
    config_dir.mkdir()
    os.environ["MEMPALACE_CONFIG_DIR"] = str(config_dir)
    palace = _Palace(root)
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            op = request.get("op")
            try:
                if op == "hello":
                    answer = _hello()
                elif op == "index":
                    answer = _index(palace, request)
                elif op == "search":
                    answer = _search(palace, request)
                elif op == "close":
                    protocol.write(json.dumps({"ok": True}) + "\n")
                    break
                else:
                    answer = {"ok": False, "error": f"unknown op {op!r}"}
            except Exception as error:  # noqa: BLE001 - whatever MemPalace raises is reported, the channel lives
                answer = {"ok": False, "error": f"{type(error).__name__}: {error}"}
            protocol.write(json.dumps(answer) + "\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
