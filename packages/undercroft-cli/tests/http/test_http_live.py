"""The live half of serve-http in process: the stream's frames, heartbeat and shutdown; the sampler; the history."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import undercroft_obs as obs
from starlette.testclient import TestClient
from undercroft_cli.http import Gate, Service, Tenancy, build_app
from undercroft_cli.http.live import Live, encode
from undercroft_core.hash_embedder import HashEmbedder
from undercroft_obs import names
from undercroft_obs.broker import Broker, Frame
from undercroft_store import Palace


def test_a_frame_is_one_event_line_and_one_compact_data_line() -> None:
    assert encode(Frame("kg-triple", {"vault": "acme"})) == b'event: kg-triple\ndata: {"vault":"acme"}\n\n'


def test_the_stream_delivers_its_vault_pings_when_idle_and_ends_on_close() -> None:
    live = Live(Broker(), 2000, heartbeat_ms=50)

    async def scenario() -> list[bytes]:
        live.bind_loop()
        frames = live._frames("acme")
        got = [await anext(frames)]  # subscribed
        assert live.broker.subscribed() == {"acme"}
        # A producer on another thread: the hand-off is the loop's, the producer never blocks.
        producer = threading.Thread(
            target=lambda: [
                live.broker.event(names.EVENT_KG_TRIPLE, {"vault": "other"}),
                live.broker.event(names.EVENT_KG_TRIPLE, {"vault": "acme"}),
            ]
        )
        producer.start()
        producer.join()
        got.append(await anext(frames))
        got.append(await asyncio.wait_for(anext(frames), 5))  # nothing more for acme: the 50 ms heartbeat
        live.close()
        got += [chunk async for chunk in frames]
        return got

    got = asyncio.run(scenario())
    assert got[0] == b": subscribed\n\n"
    assert got[1] == b'event: kg-triple\ndata: {"vault":"acme"}\n\n'
    assert got[2] == b": ping\n\n"
    assert live.broker.subscribed() == frozenset()  # the closed stream unsubscribed


def test_the_sampler_samples_open_vaults_into_the_ring_and_history_reads_it(fresh_home: Path) -> None:
    palace = Palace(fresh_home)
    palace.init()
    tenancy = Tenancy(palace, HashEmbedder(), read_only=False, pinned="default")
    live = Live(Broker(), 2000)
    service = Service(tenancy, Gate(None, None), "default", live=live)
    with obs.sink_installed(live.broker), TestClient(build_app(service)) as client:
        client.post("/v1/vaults/default/drawers", json={"text": "the freezer is on the left", "wing": "kitchen"})
        assert live.sample_vaults(tenancy) == 1
        assert live.sample_vaults(tenancy) == 1
        reply = client.get("/v1/vaults/default/stats/history", params={"window": 1})
        assert reply.status_code == 200
        body = reply.json()
        assert body["interval_ms"] == 2000 and body["capacity"] == 300 and len(body["samples"]) == 1
        sample = body["samples"][0]
        assert sample["vault"] == "default" and sample["drawers"] == 1 and sample["wings"] == [["kitchen", 1]]
        assert len(client.get("/v1/vaults/default/stats/history").json()["samples"]) == 2
        for bad in ("0", "301", "x"):
            assert client.get("/v1/vaults/default/stats/history", params={"window": bad}).status_code == 400
        assert client.get("/v1/vaults/nowhere/stats/history").status_code == 404
        assert client.get("/v1/vaults/nowhere/stream").status_code == 404
    palace.close()
