"""The orchestrator's costs: the proxy hop on search, and a judged migration beside the same copy made by hand.

    python benchmarks/bench_orchestrator.py                 # 2,000 drawers; 320 searches per level and arm
    python benchmarks/bench_orchestrator.py --drawers 10000 # a larger tenant for the migration
    python benchmarks/bench_orchestrator.py --smoke         # 50 drawers, 32 searches per level (CI: the instrument)

One run, one fleet on loopback (the suite's own `tests/fleet.py`): two real ``undercroft serve-http`` engines
``a`` and ``b`` (each its own palace, bearer and assertion secret; hash embedder) and a real
``undercroft-orchestrator serve`` registered with both. One tenant is created on ``a`` through the CLI and
filled with N drawers straight over ``/v1`` (four clients), so the fill measures nothing.

**Proxy overhead.** ``POST /t/search`` through the orchestrator (tenant bearer) beside ``POST
/v1/vaults/{vault}/search`` on the engine itself (engine bearer and an assertion this process mints per request
with `undercroft_net.engine.assertion.mint_assertion`, as the orchestrator does), the same queries (four words
of a stored drawer), at 1 and 16 concurrent clients, the two arms alternating level by level after a warm-up of
both. The load generator is this process: asyncio streams, one keep-alive HTTP/1.1 connection per client (the
orchestrator's replies are chunked — it streams the engine's body through — so the reader speaks both framings).
Figures: p50/p95 of each request's latency as the client saw it, requests/s, and the ratios and the p50 added.

**Migration throughput.** First by hand over ``/v1``: create the vault on ``b``, stream ``a``'s export into
``b``'s import (the bytes never held whole), check ``b`` holds N records, then delete that copy. Then the
orchestrator's ``POST /admin/tenants/{id}/migrate`` to ``b``: snapshot, the same export → import, the
judgement (stats on both sides, the destination's verify), the flip and the source's deletion. Drawers/s is
N over each arm's wall time; the orchestrator's extra steps are the difference, and are what it buys.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from fleet import Engine, Fleet  # noqa: E402 -- the suite's own fleet harness
from undercroft_net.engine.assertion import mint_assertion  # noqa: E402

TENANT = "bench"
LEVELS = (1, 16)
_WORDS = tuple(
    f"{a}{b}" for a in ("cor", "vel", "tam", "ris", "bon", "lux", "fer", "gim", "hal", "pod") for b in "aeiouyrnst"
)


@dataclass(frozen=True)
class Figures:
    """One measured series: per-request latencies (seconds) and the series' wall time."""

    label: str
    clients: int
    latencies: tuple[float, ...]
    wall: float

    def pct(self, share: float) -> float:
        """The ``share`` percentile latency, in milliseconds."""
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(share * len(ordered)))]

    @property
    def p50(self) -> float:
        """Median latency, ms."""
        return 1000 * statistics.median(self.latencies)

    @property
    def rate(self) -> float:
        """Requests per second over the wall time."""
        return len(self.latencies) / self.wall


class Wire:
    """One keep-alive HTTP/1.1 connection on asyncio streams (content-length or chunked replies)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host

    @classmethod
    async def open(cls, port: int) -> Wire:
        """Connect to ``127.0.0.1:port``."""
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer, f"127.0.0.1:{port}")

    async def request(self, path: str, headers: dict[str, str], body: object) -> tuple[int, bytes]:
        """``POST path`` with a JSON body; the status and the whole reply body."""
        payload = json.dumps(body).encode("utf-8")
        extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        head = (
            f"POST {path} HTTP/1.1\r\nhost: {self.host}\r\n{extra}"
            f"content-type: application/json\r\ncontent-length: {len(payload)}\r\n\r\n"
        )
        self.writer.write(head.encode("ascii") + payload)
        await self.writer.drain()
        status_line = await self.reader.readline()
        length, chunked = 0, False
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            key = name.strip().lower()
            if key == "content-length":
                length = int(value)
            elif key == "transfer-encoding" and "chunked" in value.lower():
                chunked = True
        if not chunked:
            return int(status_line.split()[1]), await self.reader.readexactly(length)
        parts = []
        while size := int((await self.reader.readline()).split(b";")[0], 16):
            parts.append(await self.reader.readexactly(size))
            await self.reader.readline()
        await self.reader.readline()  # the blank line after the last (empty) chunk
        return int(status_line.split()[1]), b"".join(parts)

    async def close(self) -> None:
        """Close the connection."""
        self.writer.close()
        await self.writer.wait_closed()


Sender = Callable[[Wire, int, int], Awaitable[tuple[int, bytes]]]


async def _level(port: int, clients: int, per_client: int, send: Sender) -> tuple[float, list[float]]:
    """``clients`` connections, each sending ``per_client`` requests in turn; (wall seconds, latencies)."""
    pool = [await Wire.open(port) for _ in range(clients)]
    latencies: list[float] = []
    failures: list[str] = []

    async def one(index: int, wire: Wire) -> None:
        for n in range(per_client):
            start = time.perf_counter()
            status, body = await send(wire, index, n)
            latencies.append(time.perf_counter() - start)
            if status != 200:
                failures.append(f"{status} {body[:200]!r}")

    try:
        began = time.perf_counter()
        await asyncio.gather(*(one(i, wire) for i, wire in enumerate(pool)))
        wall = time.perf_counter() - began
    finally:
        await asyncio.gather(*(wire.close() for wire in pool))
    if failures:
        raise SystemExit(f"bench_orchestrator: {len(failures)} request(s) failed, first: {failures[0]}")
    return wall, latencies


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _fill(engine: Engine, drawers: int) -> list[str]:
    """N drawers saved straight into the tenant's vault on ``engine`` over /v1 (four clients); their texts."""
    rng = random.Random(28)  # noqa: S311 -- synthetic text, not a secret
    texts = [" ".join(rng.choice(_WORDS) for _ in range(30)) for _ in range(drawers)]

    def save(wire: Wire, index: int, n: int) -> Awaitable[tuple[int, bytes]]:
        body = {"text": texts[n * 4 + index], "wing": "bench", "room": f"r{n % 8}"}
        return wire.request(f"/v1/vaults/{TENANT}/drawers", _direct_headers(engine), body)

    per_client, rest = divmod(drawers, 4)
    asyncio.run(_level(_port(engine.url), 4, per_client, save))
    for n in range(rest):
        text = texts[4 * per_client + n]
        saved = engine.v1("POST", f"/v1/vaults/{TENANT}/drawers", TENANT, json={"text": text, "wing": "bench"})
        assert saved.status_code == 200, saved.text
    return texts


def _direct_headers(engine: Engine) -> dict[str, str]:
    return {
        "authorization": f"Bearer {engine.bearer}",
        "x-vault-assertion": mint_assertion(engine.secret, TENANT, time.time()),
    }


def _overhead(fleet: Fleet, token: str, texts: list[str], searches: int) -> list[Figures]:
    """Search through the orchestrator and directly on the engine, alternating arms, at each level."""
    engine, orchestrator = fleet.engines["a"], fleet.orchestrator
    assert orchestrator is not None
    queries = [" ".join(text.split()[3:7]) for text in texts]

    def direct(wire: Wire, index: int, n: int) -> Awaitable[tuple[int, bytes]]:
        body = {"query": queries[(n * 7 + index) % len(queries)]}
        return wire.request(f"/v1/vaults/{TENANT}/search", _direct_headers(engine), body)

    def proxied(wire: Wire, index: int, n: int) -> Awaitable[tuple[int, bytes]]:
        body = {"query": queries[(n * 7 + index) % len(queries)]}
        return wire.request("/t/search", {"authorization": f"Bearer {token}"}, body)

    arms = {"direct /v1 search": (_port(engine.url), direct), "through /t/search": (_port(orchestrator.url), proxied)}
    for port, send in arms.values():  # warm-up: both servers' connections, handles and caches
        asyncio.run(_level(port, 4, 5, send))
    figures = []
    for round_index, clients in enumerate(LEVELS):
        order = list(arms.items()) if round_index % 2 == 0 else list(reversed(arms.items()))
        for label, (port, send) in order:
            wall, latencies = asyncio.run(_level(port, clients, max(1, searches // clients), send))
            figures.append(Figures(label, clients, tuple(latencies), wall))
    return figures


def _stream(reply: httpx.Response) -> Iterator[bytes]:
    yield from reply.iter_raw()


def _by_hand(fleet: Fleet, drawers: int) -> float:
    """Create on b, stream a's export into b's import over /v1, check the count; seconds. The copy is deleted."""
    a, b = fleet.engines["a"], fleet.engines["b"]
    level = a.v1("GET", f"/v1/vaults/{TENANT}/stats", TENANT).json().get("level")
    began = time.perf_counter()
    created = b.v1("POST", "/v1/vaults", TENANT, json={"id": TENANT, "level": level})
    assert created.status_code in (200, 201), created.text
    export = f"{a.url}/v1/vaults/{TENANT}/export"
    with httpx.stream("GET", export, headers=_direct_headers(a), timeout=3600) as exported:
        assert exported.status_code == 200
        target = f"{b.url}/v1/vaults/{TENANT}/import"
        imported = httpx.post(target, headers=_direct_headers(b), content=_stream(exported), timeout=3600)
    assert imported.status_code == 200, imported.text
    seconds = time.perf_counter() - began
    held = b.v1("GET", f"/v1/vaults/{TENANT}/stats", TENANT).json()["records"]
    if held != drawers:
        raise SystemExit(f"bench_orchestrator: the hand copy holds {held} records, not {drawers}")
    assert b.v1("DELETE", f"/v1/vaults/{TENANT}", TENANT).status_code in (200, 204)
    return seconds


def _migrate(fleet: Fleet, drawers: int) -> tuple[float, dict[str, object]]:
    """The orchestrator's judged migration of the tenant to b: (wall seconds, the judgement)."""
    assert fleet.orchestrator is not None
    with fleet.admin(fleet.orchestrator.url) as admin:
        began = time.perf_counter()
        reply = admin.post(f"/tenants/{TENANT}/migrate", json={"to": "b"}, timeout=3600)
        seconds = time.perf_counter() - began
    judgement = reply.json()
    if reply.status_code != 200 or judgement.get("agree") is not True or judgement.get("flipped") is not True:
        raise SystemExit(f"bench_orchestrator: the migration did not complete: {reply.status_code} {reply.text[:800]}")
    held = judgement["destination"]["records"]
    if held != drawers:
        raise SystemExit(f"bench_orchestrator: the destination holds {held} records, not {drawers}")
    return seconds, judgement


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny run, checks the instrument only")
    parser.add_argument("--drawers", type=int, default=None, help="the tenant's drawer count (default 2,000)")
    parser.add_argument("--searches", type=int, default=None, help="searches per level and arm (default 320)")
    args = parser.parse_args()
    drawers = args.drawers or (50 if args.smoke else 2000)
    searches = args.searches or (32 if args.smoke else 320)
    if drawers < 4:
        parser.error("--drawers must be at least 4")
    with tempfile.TemporaryDirectory(prefix="bench-orch-") as tmp:
        fleet = Fleet(Path(tmp))
        try:
            for name in ("a", "b"):
                fleet.register(fleet.start_engine(name))
            fleet.orchestrator = fleet.serve()
            token = str(fleet.json("tenant-create", TENANT, "--instance", "a")["token"])
            began = time.perf_counter()
            texts = _fill(fleet.engines["a"], drawers)
            fill = time.perf_counter() - began
            figures = _overhead(fleet, token, texts, searches)
            hand = _by_hand(fleet, drawers)
            migrated, judgement = _migrate(fleet, drawers)
        finally:
            fleet.stop()
        logs = [e.server.log for e in fleet.engines.values()]
        if fleet.orchestrator is not None:
            logs.append(fleet.orchestrator.log)
        if any("Traceback" in log for log in logs):
            raise SystemExit("bench_orchestrator: a server logged a traceback")
    when = time.strftime("%Y-%m-%d %H:%MZ", time.gmtime())
    print(f"bench_orchestrator: {when}, commit {_commit()}, {drawers} drawers (hash embedder), loopback")
    print(f"fill over /v1, 4 clients: {fill:.1f} s ({drawers / fill:,.0f} drawers/s; not a figure of the hop)")
    print("| series | clients | requests | req/s | p50 ms | p95 ms |")
    print("| --- | --- | --- | --- | --- | --- |")
    for f in figures:
        print(f"| {f.label} | {f.clients} | {len(f.latencies)} | {f.rate:,.0f} | {f.p50:.2f} | {f.pct(0.95):.2f} |")
    by = {(f.label, f.clients): f for f in figures}
    for clients in LEVELS:
        d, p = by[("direct /v1 search", clients)], by[("through /t/search", clients)]
        print(
            f"{clients} client(s): proxy adds {p.p50 - d.p50:+.2f} ms p50 ({p.p50 / d.p50:.2f}×), "
            f"{p.pct(0.95) - d.pct(0.95):+.2f} ms p95 ({p.pct(0.95) / d.pct(0.95):.2f}×); "
            f"throughput {p.rate / d.rate:.2f}× of direct"
        )
    one = by[("through /t/search", 1)].p50 - by[("direct /v1 search", 1)].p50
    print(f"goal ≤ 2 ms added p50 at 1 client: {'met' if one <= 2 else 'MISSED'} ({one:.2f} ms)")
    print("| migration of the tenant a → b | seconds | drawers/s |")
    print("| --- | --- | --- |")
    print(f"| by hand over /v1 (create, export → import stream, count) | {hand:.2f} | {drawers / hand:,.0f} |")
    rate = drawers / migrated
    print(f"| orchestrator migrate (snapshot, copy, judge, flip, delete source) | {migrated:.2f} | {rate:,.0f} |")
    print(f"orchestrator / by hand: {migrated / hand:.2f}× the time; judgement seconds {judgement.get('seconds')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
