"""The fleet console: one static, self-contained page at ``/ui`` (no CDN, no inline script, strict CSP).

It has no capability of its own — every action is an ``/admin`` call made by the page with the admin token the
operator types in (kept in memory, never in storage).
"""

from __future__ import annotations

from importlib import resources

from starlette.requests import Request
from starlette.responses import Response

__all__ = ["console"]

_ASSETS = {
    "": ("index.html", "text/html; charset=utf-8"),
    "fleet.js": ("fleet.js", "text/javascript"),
    "fleet.css": ("fleet.css", "text/css"),
}
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)


async def console(request: Request) -> Response:
    """Serve one of the console's three files, with the CSP that forbids anything not from this origin."""
    asset = request.path_params.get("asset", "")
    if asset not in _ASSETS:
        return Response("not found", status_code=404, media_type="text/plain")
    name, media = _ASSETS[asset]
    body = resources.files(__package__).joinpath(name).read_bytes()
    headers = {
        "Content-Security-Policy": _CSP,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }
    return Response(body, media_type=media, headers=headers)
