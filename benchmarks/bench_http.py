"""serve-http under load: search and save over loopback at 1, 8 and 32 clients, beside the same operations in process.

    python benchmarks/bench_http.py            # 4 vaults × 1,000 drawers; 300 / 800 / 1,280 searches per level
    python benchmarks/bench_http.py --smoke    # 4 vaults × 40 drawers, a few requests per level (CI: the instrument)

One run, one palace of four sealed vaults (hash embedder). First, in process, with no server running: every
vault is filled through the ``undercroft_save`` tool handler (the operation ``POST …/drawers`` runs; its
per-call latency is the in-process save baseline), then searched through the ``undercroft_search`` handler
(``POST …/search``'s operation), one caller, then eight threads across the four vaults (what the store gives
concurrency without any HTTP). The stores are closed, and the real ``undercroft serve-http`` starts on a
loopback port; the load generator is this process (asyncio streams, one keep-alive connection per client, each walking
the four vaults in turn, a fixed number of requests per client — bounded, started and stopped here). Each level is
measured for searches (four words drawn from a stored drawer) and for saves (fresh text), after a warm-up that
fills every vault's caches; ``GET /healthz`` at 1 client is measured too, the transport's floor (the same
client and server, no store and no worker thread). Figures: requests/s (requests over the level's wall time)
and p50/p95 of each request's latency as the client saw it (the client's own cost is a few hundred
microseconds: see ``Wire``).

The issue's targets, checked and printed: HTTP overhead (HTTP p50 − in-process p50, search, 1 client)
≤ 1.5 ms; search throughput at 8 clients ≥ 1.5× 1 client (across 4 vaults); search p95 at 32 clients ≤ 10×
p50 at 1 client.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from live_server import LiveServer, palace_env, undercroft  # noqa: E402 -- the suite's own server harness

VAULTS = ("default", "tenant-1", "tenant-2", "tenant-3")
LEVELS = (1, 8, 32)
FLOOR = "HTTP GET /healthz (no store, no thread hop)"
TOKEN = "bench-http-bearer-0123456789"  # noqa: S105 -- a loopback test bearer, not a secret
_WORDS = tuple(
    f"{a}{b}"
    for a in ("cel", "tur", "led", "bar", "qui", "mor", "fen", "gal", "hob", "pim")
    for b in ("lar", "nip", "ger", "rel", "nce", "tar", "don", "ley", "bit", "ple")
)


@dataclass(frozen=True)
class Figures:
    """One measured series: how many requests, their wall time, and per-request latencies (seconds)."""

    label: str
    clients: int
    latencies: tuple[float, ...]
    wall: float

    @property
    def rate(self) -> float:
        """Requests per second over the series' wall time."""
        return len(self.latencies) / self.wall

    def pct(self, share: float) -> float:
        """The ``share`` percentile latency, in milliseconds."""
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    @property
    def p50(self) -> float:
        """Median latency, ms."""
        return 1000 * statistics.median(self.latencies)

    def row(self) -> str:
        """A Markdown table row."""
        return (
            f"| {self.label} | {self.clients} | {len(self.latencies)} | {self.rate:,.0f} | "
            f"{self.p50:.2f} | {self.pct(0.95):.2f} |"
        )


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


# --- in process: the tool handlers the routes run --------------------------------------------------------
def _in_process(home: Path, drawers: int, searches: int) -> tuple[list[Figures], dict[str, list[str]]]:
    os.environ.update(palace_env(home))
    for name in [n for n in os.environ if n.startswith("UNDERCROFT_") and n != "UNDERCROFT_HOME"]:
        del os.environ[name]
    from undercroft_cli._internal.composition import open_store, pick_embedder
    from undercroft_cli.mcp.server import structured_reply
    from undercroft_cli.mcp.tools import ToolSession, registry

    save, search = registry()["undercroft_save"], registry()["undercroft_search"]
    embedder = pick_embedder()
    rng = random.Random(20)  # noqa: S311 -- synthetic text, not a secret
    texts: dict[str, list[str]] = {vault: [] for vault in VAULTS}
    saves: list[float] = []
    opened = contextlib.ExitStack()
    sessions = {vault: ToolSession(opened.enter_context(open_store(vault)), embedder, surface="v1") for vault in VAULTS}

    def call(spec, session, raw) -> None:  # type: ignore[no-untyped-def]
        structured_reply(spec, spec.handler(session, spec.arguments(raw)))

    try:
        for n in range(drawers):
            for vault in VAULTS:
                text = _text(rng, 40)
                texts[vault].append(text)
                start = time.perf_counter()
                call(save, sessions[vault], {"content": text, "wing": "bench", "room": f"r{n % 8}"})
                saves.append(time.perf_counter() - start)
        queries = {vault: [" ".join(t.split()[3:7]) for t in texts[vault]] for vault in VAULTS}
        for vault in VAULTS:  # warm-up: fill every cache a long-lived server holds
            for query in queries[vault][:5]:
                call(search, sessions[vault], {"query": query})
        one: list[float] = []
        began = time.perf_counter()
        for n in range(searches):
            vault = VAULTS[n % len(VAULTS)]
            start = time.perf_counter()
            call(search, sessions[vault], {"query": queries[vault][n % drawers]})
            one.append(time.perf_counter() - start)
        one_wall = time.perf_counter() - began
        # eight threads over four vaults, each vault's session used by one thread at a time (as the tenancy does)
        locks = {vault: threading.Lock() for vault in VAULTS}
        eight: list[float] = []

        def worker(index: int) -> None:
            vault = VAULTS[index % len(VAULTS)]
            for n in range(max(1, searches // 8)):
                start = time.perf_counter()
                with locks[vault]:
                    call(search, sessions[vault], {"query": queries[vault][(n * 8 + index) % drawers]})
                eight.append(time.perf_counter() - start)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        eight_wall = time.perf_counter() - began
    finally:
        opened.close()
    figures = [
        Figures("in-process save (tool handler)", 1, tuple(saves), sum(saves)),
        Figures("in-process search (tool handler)", 1, tuple(one), one_wall),
        Figures("in-process search, 8 threads", 8, tuple(eight), eight_wall),
    ]
    return figures, queries


# --- over HTTP: the bounded load generator ------------------------------------------------------------------
class Wire:
    """One keep-alive HTTP/1.1 connection on asyncio streams: the lightest client that measures the server.

    httpx's AsyncClient costs 2.5-4 ms of client CPU per request on this machine (measured beside
    ``http.client`` at 0.4 ms for the same ``/healthz``): as the load generator it would be the figure.
    Every answer uvicorn sends for these routes carries ``content-length``, which is all this reads.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    @classmethod
    async def open(cls, port: int) -> Wire:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer, f"127.0.0.1:{port}")

    async def request(self, method: str, path: str, body: object = None) -> tuple[int, bytes]:
        payload = b"" if body is None else json.dumps(body).encode("utf-8")
        head = (
            f"{method} {path} HTTP/1.1\r\nhost: {self.host}\r\nauthorization: Bearer {TOKEN}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(payload)}\r\n\r\n"
        )
        self.writer.write(head.encode("ascii") + payload)
        await self.writer.drain()
        status_line = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        return int(status_line.split()[1]), await self.reader.readexactly(length)

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


Request = Callable[[Wire, int, int], Awaitable[tuple[int, bytes]]]


async def _level(port: int, clients: int, per_client: int, request: Request) -> Figures:
    """``clients`` connections each sending ``per_client`` requests in turn; connections are opened (and used
    once, untimed) before the clock starts."""
    latencies: list[float] = []
    failures: list[str] = []
    pool = [await Wire.open(port) for _ in range(clients)]
    try:
        await asyncio.gather(*(wire.request("GET", "/healthz") for wire in pool))

        async def one_client(index: int, wire: Wire) -> None:
            for n in range(per_client):
                start = time.perf_counter()
                status, body = await request(wire, index, n)
                latencies.append(time.perf_counter() - start)
                if status not in (200, 202):
                    failures.append(f"{status} {body[:200]!r}")

        began = time.perf_counter()
        await asyncio.gather(*(one_client(i, wire) for i, wire in enumerate(pool)))
        wall = time.perf_counter() - began
    finally:
        await asyncio.gather(*(wire.close() for wire in pool))
    if failures:
        raise SystemExit(f"bench_http: {len(failures)} request(s) failed, first: {failures[0]}")
    return Figures("", clients, tuple(latencies), wall)


def _over_http(home: Path, queries: dict[str, list[str]], searches: int, saves: int) -> list[Figures]:
    server = LiveServer(palace_env(home, UNDERCROFT_MCP_HTTP_TOKEN=TOKEN))
    rng = random.Random(21)  # noqa: S311 -- synthetic text, not a secret
    figures: list[Figures] = []
    try:
        # Every client walks the four vaults in turn (client i starts at vault i % 4): each level searches and
        # saves across all four, one client included.
        def search(wire: Wire, index: int, n: int) -> Awaitable[tuple[int, bytes]]:
            vault = VAULTS[(index + n) % len(VAULTS)]
            pool = queries[vault]
            return wire.request("POST", f"/v1/vaults/{vault}/search", {"query": pool[(n * 7 + index) % len(pool)]})

        def save(wire: Wire, index: int, n: int) -> Awaitable[tuple[int, bytes]]:
            vault = VAULTS[(index + n) % len(VAULTS)]
            body = {"text": _text(rng, 40), "wing": "bench", "room": f"c{index}"}
            return wire.request("POST", f"/v1/vaults/{vault}/drawers", body)

        def healthz(wire: Wire, _index: int, _n: int) -> Awaitable[tuple[int, bytes]]:
            return wire.request("GET", "/healthz")

        asyncio.run(_level(server.port, len(VAULTS), 5, search))  # warm-up: every vault's handle and caches
        # The transport's floor: the same client and server, a route that touches no store and no worker thread.
        floor = asyncio.run(_level(server.port, 1, searches, healthz))
        figures.append(Figures(FLOOR, 1, floor.latencies, floor.wall))
        for clients in LEVELS:
            done = asyncio.run(_level(server.port, clients, max(1, searches // clients), search))
            figures.append(Figures("HTTP search", clients, done.latencies, done.wall))
        for clients in LEVELS:
            done = asyncio.run(_level(server.port, clients, max(1, saves // clients), save))
            figures.append(Figures("HTTP save", clients, done.latencies, done.wall))
    finally:
        server.stop()
    if "Traceback" in server.log:
        raise SystemExit(f"bench_http: the server logged a traceback:\n{server.log[-4000:]}")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny run, checks the instrument only")
    args = parser.parse_args()
    drawers, searches, saves = (40, 32, 32) if args.smoke else (1000, 320, 320)
    with tempfile.TemporaryDirectory(prefix="bench-http-") as tmp:
        home = Path(tmp) / "palace"
        env = palace_env(home)
        if undercroft(env, "init").returncode != 0:
            raise SystemExit("bench_http: undercroft init failed")
        for vault in VAULTS[1:]:
            made = undercroft(env, "vault", "create", vault)
            if made.returncode != 0:
                raise SystemExit(f"bench_http: vault create {vault} failed: {made.stderr}")
        local, queries = _in_process(home, drawers, searches)
        remote = _over_http(home, queries, searches, saves)
    print(f"bench_http: 4 vaults × {drawers} drawers (hash embedder, sealed); loopback; client = asyncio streams")
    print("| series | clients | requests | req/s | p50 ms | p95 ms |")
    print("| --- | --- | --- | --- | --- | --- |")
    for figures in local + remote:
        print(figures.row())
    base = local[1]
    http = {(f.label, f.clients): f for f in remote}
    s1, s8, s32 = (http[("HTTP search", c)] for c in LEVELS)
    overhead = s1.p50 - base.p50
    transport = http[(FLOOR, 1)].p50
    scaling = s8.rate / s1.rate
    tail = s32.pct(0.95) / s1.p50
    verdict = {True: "met", False: "MISSED"}
    print(f"HTTP overhead, search p50 at 1 client: {overhead:.2f} ms (target ≤ 1.5 ms): {verdict[overhead <= 1.5]}")
    print(f"search throughput 8 / 1 clients: {scaling:.2f}× (target ≥ 1.5×): {verdict[scaling >= 1.5]}")
    print(f"search p95 at 32 / p50 at 1: {tail:.2f}× (target ≤ 10×): {verdict[tail <= 10]}")
    rest = overhead - transport
    print(f"of the overhead: transport floor (client + uvicorn + Starlette) {transport:.2f} ms, the rest {rest:.2f} ms")
    print(f"in-process 8 threads / 1 caller throughput: {local[2].rate / base.rate:.2f}× (the store's own scaling)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
