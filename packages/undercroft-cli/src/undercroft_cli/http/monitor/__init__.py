"""The Palace Monitor at ``/monitor`` (telemetry builds): one static page rendering a vault's live stream.

Served before the gate like the console, for the same reason: it carries no secret and reads nothing. The operator
types the bearer into the page, which keeps it in memory and sends it on its own ``fetch()`` of
``/v1/vaults/{id}/stream`` (fetch streaming, not ``EventSource``, which cannot send an Authorization header). The
console's Content-Security-Policy applies: this origin only, no inline script, no framing. Until it connects the page
runs a demo of synthetic writes and searches, and the tamper beacon lights only on a real ``hmac-fail`` frame.
"""

from __future__ import annotations

from importlib.resources import files

from starlette.responses import Response

from undercroft_cli.http.console import CONTENT_SECURITY_POLICY

__all__ = ["MONITOR_ASSETS", "monitor_asset"]

MONITOR_ASSETS: dict[str, str] = {
    "index.html": "text/html; charset=utf-8",
    "monitor.js": "text/javascript; charset=utf-8",
    "monitor.css": "text/css; charset=utf-8",
}
"""The monitor's files and their media types (nothing else under /monitor is served)."""


def monitor_asset(name: str) -> Response:
    """One of the monitor's files with the console's security headers (a name outside the set is a 404)."""
    if name not in MONITOR_ASSETS:
        return Response(b"", status_code=404)
    body = files(__name__).joinpath(name).read_bytes()
    headers = {
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }
    return Response(body, media_type=MONITOR_ASSETS[name], headers=headers)
