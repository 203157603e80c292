"""The live half of serve-http's telemetry: the sampler, ``GET /v1/vaults/{id}/stream`` and the history reads.

A telemetry build installs one `Broker` beside the metric sink. Producers (writes, searches, the KG, the audit
chain, the tamper check) emit validated events into it; the sampler emits a ``sample`` of each vault this
process has open every ``UNDERCROFT_SAMPLE_INTERVAL_MS`` (the broker keeps those in the vault's ring, which
``GET …/stats/history`` reads). ``GET …/stream`` reads only from the broker — never from a store — so a
stream can carry nothing the producers did not reduce to metadata. Sample frames reach a subscriber only for
the vault it subscribed to; a comment heartbeat (``: ping``) every 15 s (``UNDERCROFT_STREAM_HEARTBEAT_MS``)
keeps an idle connection detectably alive. Without the telemetry extra there is no broker: both routes answer
501 naming the extra.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import undercroft_obs as obs
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from undercroft_obs import names
from undercroft_obs.broker import Broker, Frame
from undercroft_store.memory.kg.graph import KnowledgeGraph
from undercroft_store.memory.tunnels import list_tunnels

from undercroft_cli.http.auth import ASSERTION_HEADER, Gate
from undercroft_cli.http.errors import error_response, unauthorized
from undercroft_cli.http.tenancy import Tenancy
from undercroft_cli.mcp.tools import ToolSession

__all__ = ["HEARTBEAT_MS", "MISSING_EXTRA", "STREAM_PATH", "Live", "sample_of"]

log = logging.getLogger("undercroft.http")

STREAM_PATH = "/v1/vaults/{id}/stream"
"""The live stream's route (beside the /v1 table: the documents list it under observability)."""

HEARTBEAT_MS = 15_000
"""The default ``: ping`` comment interval of an idle stream (``UNDERCROFT_STREAM_HEARTBEAT_MS`` changes it)."""

MISSING_EXTRA = "the telemetry extra: pip install 'undercroft-cli[telemetry]'"
"""What the stream and the history answer 501 naming, in a build without the extra."""

_QUEUE_FRAMES = 1024  # a subscriber further behind than this loses frames rather than growing the heap
_MAX_WINGS = 256  # the shim's sequence bound; a sample names the first 256 wings by name


def sample_of(session: ToolSession) -> dict[str, Any]:
    """One vault's sample frame: counts, the chain height and ``wings`` as ``[name, drawers]`` pairs."""
    store = session.store
    stats = store.stats()  # also sets the drawers / chain-height / bytes gauges
    kg = KnowledgeGraph(store).stats()
    # The gauges "where sampled": the sampler is what reads these counts on a server.
    obs.set_gauge(names.GAUGE_KG_TRIPLES, kg.facts, vault=stats.vault)
    obs.set_gauge(names.GAUGE_KG_ENTITIES, kg.entities, vault=stats.vault)
    if stats.index_generation is not None:
        obs.set_gauge(names.CODEBOOK_GENERATION_PQ_CODEBOOK, stats.index_generation, vault=stats.vault)
    if stats.token_codebook_generation is not None:
        obs.set_gauge(names.CODEBOOK_GENERATION_TOK_CODEBOOK, stats.token_codebook_generation, vault=stats.vault)
    if stats.fde_generation is not None:
        obs.set_gauge(names.CODEBOOK_GENERATION_FDE_CODEBOOK, stats.fde_generation, vault=stats.vault)
    return {
        "ts": round(time.time(), 3),
        "vault": stats.vault,
        "sealed": stats.level == "sealed",
        "drawers": stats.drawers,
        "rooms": len(stats.rooms),
        "wings": [[wing, count] for wing, count in sorted(stats.wings.items())[:_MAX_WINGS]],
        "kg_triples": kg.facts,
        "kg_entities": kg.entities,
        "kg_active": kg.active,
        "tunnels": len(list_tunnels(store)),
        "chain_height": stats.chain_records,
        "db_bytes": stats.db_bytes,
    }


@dataclass
class Live:
    """The broker of one serve-http process and its sampler's tick."""

    broker: Broker
    interval_ms: int
    heartbeat_ms: int = HEARTBEAT_MS
    _closing: asyncio.Event | None = field(default=None, repr=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)

    def bind_loop(self) -> None:
        """Bind to the running event loop (the application's lifespan calls this before serving)."""
        self._loop = asyncio.get_running_loop()
        self._closing = asyncio.Event()

    def sample_vaults(self, tenancy: Tenancy) -> int:
        """Emit one sample per vault open in ``tenancy`` or subscribed to (on a worker thread); how many."""
        sampled = 0
        for vault in sorted(set(tenancy.open_vaults()) | self.broker.subscribed()):
            try:
                with tenancy.session(vault) as session:
                    obs.emit(names.EVENT_SAMPLE, **sample_of(session))
                sampled += 1
            except Exception as failure:  # noqa: BLE001 -- one vault's failure must not stop the others' samples
                # The class only: a tampered vault's refusal names rows, and logs stay content-free.
                log.warning("sampler: vault %s not sampled (%s)", vault, type(failure).__name__)
        return sampled

    async def run_sampler(self, tenancy: Tenancy, *, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        """Sample on every tick until cancelled (the application's lifespan owns the task)."""
        while True:
            await sleep(self.interval_ms / 1000)
            await tenancy.run(lambda: self.sample_vaults(tenancy))

    def close(self) -> None:
        """End every open stream (the server is stopping: a stream must not hold the shutdown open).

        Safe from a signal handler or another thread: the event is set on the loop's own turn.
        """
        if self._loop is not None and self._closing is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._closing.set)

    def stream_endpoint(self, tenancy: Tenancy, gate: Gate) -> Callable[[Request], Any]:
        """The ``GET /v1/vaults/{id}/stream`` endpoint: assertion, vault existence, then the frames."""

        async def stream(request: Request) -> Response:
            vault = str(request.path_params["id"])
            refusal = gate.assertion_refusal(request.headers.get(ASSERTION_HEADER), vault, time.time())
            if refusal is not None:
                log.warning("401 on GET %s: %s", STREAM_PATH, refusal)
                obs.increment(names.AUTH_REJECTIONS_TOTAL, kind="assertion")
                return unauthorized()
            if vault not in await tenancy.run(tenancy.palace.list_vaults):
                return error_response(404, f"no vault {vault!r}")
            if self._closing is None:
                self.bind_loop()
            return StreamingResponse(
                self._frames(vault),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
            )

        return stream

    async def _frames(self, vault: str) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Frame] = asyncio.Queue(maxsize=_QUEUE_FRAMES)

        def deliver(frame: Frame) -> None:  # on the producer's thread: hand off, never block it
            loop.call_soon_threadsafe(_offer, queue, frame)

        subscription = self.broker.subscribe(vault, deliver)
        closing = self._closing
        assert closing is not None
        try:
            yield b": subscribed\n\n"
            while not closing.is_set():
                getter = asyncio.ensure_future(queue.get())
                stopper = asyncio.ensure_future(closing.wait())
                done, _ = await asyncio.wait(
                    {getter, stopper}, timeout=self.heartbeat_ms / 1000, return_when="FIRST_COMPLETED"
                )
                stopper.cancel()
                if getter not in done:
                    getter.cancel()
                    if not done:
                        yield b": ping\n\n"
                    continue
                yield encode(getter.result())
        finally:
            self.broker.unsubscribe(subscription)


def _offer(queue: asyncio.Queue[Frame], frame: Frame) -> None:
    if not queue.full():
        queue.put_nowait(frame)


def encode(frame: Frame) -> bytes:
    """One SSE frame: ``event: <name>`` and one ``data:`` line of compact JSON."""
    data = json.dumps(frame.data, separators=(",", ":"), ensure_ascii=False)
    return f"event: {frame.event}\ndata: {data}\n\n".encode()
