"""The admin console at ``/ui``: one static page (HTML, CSS, JS shipped as package data), a /v1 client only.

It is served before the gate because it carries no secret and reads nothing: the operator types the bearer
(and the assertion secret) into the page, which keeps them in memory and attaches them to its own /v1 calls.
The Content-Security-Policy allows nothing but this origin: no inline script, no other host, no framing.
"""

from __future__ import annotations

from importlib.resources import files

from starlette.responses import Response

__all__ = ["ASSETS", "CONTENT_SECURITY_POLICY", "console_asset"]

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' blob:; "
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

ASSETS: dict[str, str] = {
    "index.html": "text/html; charset=utf-8",
    "console.js": "text/javascript; charset=utf-8",
    "console.css": "text/css; charset=utf-8",
    "runbook.html": "text/html; charset=utf-8",
}
"""The console's files and their media types (nothing else under /ui is served). ``runbook.html`` is the tamper
runbook the incident banner links to: a static page under the same CSP, readable with no bearer at all."""


def console_asset(name: str) -> Response:
    """One of the console's files with its security headers (a name outside ``ASSETS`` is a 404)."""
    if name not in ASSETS:
        return Response(b"", status_code=404)
    body = files(__name__).joinpath(name).read_bytes()
    headers = {
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }
    return Response(body, media_type=ASSETS[name], headers=headers)
