"""The /v1 routes of a telemetry build that read the in-process broker: ``GET …/stats/history``.

The history is the sampler's ring for the vault (``undercroft_obs.broker``): the last ``window`` samples,
oldest first, each the same metadata a ``sample`` stream frame carries. The route opens the vault's session
like any read (an unknown vault is a 404, and the open vault is sampled from then on), but the reply comes
from the ring, never from the store. Without the telemetry extra there is no broker and the route answers 501
naming the extra.
"""

from __future__ import annotations

from typing import Any

from undercroft_obs.broker import HISTORY_CAPACITY

from undercroft_cli.http.errors import HttpRefusal
from undercroft_cli.http.operations import Binding, Call, Source
from undercroft_cli.mcp.tools.base import integer

__all__ = ["TELEMETRY_BINDINGS"]

_V = "/v1/vaults/{id}"


def _history(call: Call) -> dict[str, Any]:
    live = call.tenancy.live
    if live is None:
        raise HttpRefusal(501, "GET /v1/vaults/{id}/stats/history needs the telemetry extra: "
                          "pip install 'undercroft-cli[telemetry]'")  # fmt: skip
    window = call.args.integer("window")
    assert call.vault is not None
    samples = live.broker.history(call.vault, HISTORY_CAPACITY if window is None else window)
    return {
        "vault": call.vault,
        "interval_ms": live.interval_ms,
        "capacity": live.broker.capacity,
        "samples": [dict(sample) for sample in samples],
    }


TELEMETRY_BINDINGS: dict[tuple[str, str], Binding] = {
    ("GET", f"{_V}/stats/history"): Binding(
        "stats_history",
        {"window": integer("the last this many samples", minimum=1, maximum=HISTORY_CAPACITY, default=100)},
        _history,
        source=Source.QUERY,
    ),
}
