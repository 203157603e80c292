"""The fleet console at /ui in real headless Chromium (Debian's package, driven by Playwright) against a live
fleet — two real ``undercroft serve-http`` engines and a real ``undercroft-orchestrator serve``, registered by
the CLI as the orchestrator's own e2e fixture does. In the page: a refused admin token, both instances healthy,
a tenant created (its token shown once) and rotated, a migration judged and flipped, a migration to a lossy
destination rendered as stopped before the flip, an XSS-shaped instance URL inert, and no request leaving the
origin. Screenshots go to ``$ARTIFACTS_DIR/fleet-console`` (default: a temporary directory); never committed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser import playwright_or_skip
from fleet import ADMIN, Fleet, running_fleet
from stand_in import StandIn

pytestmark = pytest.mark.loopback

# No whitespace (the transport policy refuses that at registration), so the policy accepts it as a URL path:
# a server-sent string that would run if the page ever parsed it as markup.
XSS_URL = "http://127.0.0.1:9/<img/src=x/onerror=window.__xss=1><script>window.__xss=2</script>"
XSS_REFUSED = 'http://127.0.0.1:9/<img src=x onerror="window.__xss=3">'

playwright_api = playwright_or_skip()


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    with running_fleet(tmp_path) as running:
        yield running


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    root = Path(os.environ.get("ARTIFACTS_DIR", tmp_path / "artifacts")) / "fleet-console"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _page(browser: Any, base: str, requests: list[str], *, width: int = 1280, height: int = 800) -> Any:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.on("request", lambda request: requests.append(request.url))
    # A console error is a CSP refusal (an inline script or style the policy blocked) or a script failure.
    page.on("console", lambda message: requests.append(f"console {message.type}: {message.text}"))
    page.on("pageerror", lambda error: requests.append(f"pageerror: {error}"))
    page.goto(f"{base}/ui")
    return page


def _connect(page: Any, token: str = ADMIN) -> None:
    page.fill("#admin-token", token)
    page.press("#admin-token", "Enter")  # the keyboard path: a form submit, no click


def _shows(page: Any, selector: str, words: str) -> None:
    # Playwright's locator assertions run in its own world: the page's CSP (no eval) stays in force.
    try:
        playwright_api.expect(page.locator(selector)).to_contain_text(words, timeout=20000)
    except AssertionError as failure:
        raise AssertionError(f"{failure}\nstatus line: {page.text_content('#status')!r}") from None


def _token(page: Any) -> str:
    page.wait_for_selector("#token-panel:not([hidden])")
    token = page.text_content("#token-value") or ""
    assert token.startswith("uct_"), token
    return token


def _verdict(page: Any, key: str) -> str:
    return page.text_content(f"#judgement-verdict tr[data-key={key}] td:last-child") or ""


def test_the_fleet_console_drives_a_live_fleet(browser: Any, fleet: Fleet, shots: Path) -> None:
    assert fleet.orchestrator is not None
    base = fleet.orchestrator.url
    requests: list[str] = []
    page = _page(browser, base, requests)
    headers = page.goto(f"{base}/ui").headers
    assert "default-src 'self'" in headers["content-security-policy"]
    _connect(page, "not-the-admin-token-at-all")
    _shows(page, "#status", "refused the admin token")
    assert page.is_hidden("#banner")  # a refused token is a sentence, not an incident
    _connect(page)
    for name in ("a", "b"):
        _shows(page, f"#instance-table tr[data-instance={name}] .state", "healthy")
    _shows(page, "#sweep-line", "2 of 2 instance(s) healthy")
    first_sweep = page.text_content("#sweep-line")
    page.screenshot(path=str(shots / "instances.png"), full_page=True)

    # A hostile instance URL: refused with whitespace (the refusal echoes it), accepted without; inert both ways.
    page.fill("#add-instance [name=name]", "hostile")
    page.fill("#add-instance [name=url]", XSS_REFUSED)
    page.press("#add-instance [name=url]", "Enter")
    _shows(page, "#status", "whitespace")
    page.fill("#add-instance [name=url]", XSS_URL)
    page.click("#add-instance button")
    _shows(page, "#instance-table tr[data-instance=hostile] .state", "unreachable")
    assert "<img/src=x" in (page.text_content("#instance-table tr[data-instance=hostile]") or "")
    assert page.locator("main img, main script, #status img, #status script").count() == 0
    assert page.evaluate("window.__xss") is None
    page.screenshot(path=str(shots / "hostile-instance.png"), full_page=True)
    page.click("#instance-table tr[data-instance=hostile] button.danger")
    page.wait_for_selector("#instance-table tr[data-instance=hostile]", state="detached")

    # A tenant: created (token shown once, with its note), rotated (a new token; the old one dies).
    page.click("nav [data-tab=tenants]")
    page.fill("#create-tenant [name=id]", "acme")
    page.select_option("#create-tenant [name=instance]", "a")
    page.click("#create-tenant button")
    first = _token(page)
    _shows(page, "#token-panel", "shown once")
    page.screenshot(path=str(shots / "tenant-created.png"), full_page=True)
    page.click("#token-hide")
    assert page.is_hidden("#token-panel") and page.text_content("#token-value") == ""
    _shows(page, "#tenant-table tr[data-tenant=acme]", "a")
    page.click("#tenant-table tr[data-tenant=acme] button")
    second = _token(page)
    assert second != first
    _shows(page, "#token-title", "old one no longer works")
    with fleet.tenant(base, first) as old:
        assert old.get("/stats").status_code == 401
    with fleet.tenant(base, second) as tenant:
        for n in range(5):
            saved = tenant.post("/drawers", json={"text": f"acme ledger line {n}", "wing": "books"})
            assert saved.status_code == 200, saved.text
    page.click("#token-hide")

    # Migration a → b: the judgement rendered, agreeing and flipped, the source deleted.
    page.click("nav [data-tab=migration]")
    page.select_option("#migrate-form [name=tenant]", "acme")
    page.select_option("#migrate-form [name=to]", "b")
    page.click("#migrate-form button")
    _shows(page, "#judgement-title", "Migrated: tenant acme moved from a to b")
    assert _verdict(page, "agree") == "yes" and _verdict(page, "flipped") == "yes"
    assert _verdict(page, "source_deleted") == "yes"
    counts = page.text_content("#judgement-counts") or ""
    assert "5 before, 5 after" in counts
    page.screenshot(path=str(shots / "migrated.png"), full_page=True)
    with fleet.tenant(base, second) as tenant:
        assert tenant.get("/stats").json()["drawers"] == 5  # now served from b
    assert fleet.engines["a"].v1("GET", "/v1/vaults/acme/stats", "acme").status_code == 404

    # A destination that silently drops a record: a 409 rendered as stopped before the flip, never success.
    page.click("nav [data-tab=tenants]")
    page.fill("#create-tenant [name=id]", "beta")
    page.select_option("#create-tenant [name=instance]", "a")
    page.click("#create-tenant button")
    beta = _token(page)
    page.click("#token-hide")
    with fleet.tenant(base, beta) as tenant:
        for n in range(4):
            assert tenant.post("/drawers", json={"text": f"beta evidence {n}"}).status_code == 200
    b = fleet.engines["b"]
    with StandIn(b.url, drop_import_line=True) as lossy:
        page.click("nav [data-tab=instances]")
        page.fill("#add-instance [name=name]", "lossy")
        page.fill("#add-instance [name=url]", lossy.url)
        page.fill("#add-instance [name=bearer]", b.bearer)
        page.fill("#add-instance [name=assertion_secret]", b.secret)
        page.click("#add-instance button")
        _shows(page, "#instance-table tr[data-instance=lossy] .state", "healthy")
        page.click("nav [data-tab=migration]")
        page.select_option("#migrate-form [name=tenant]", "beta")
        page.select_option("#migrate-form [name=to]", "lossy")
        page.click("#migrate-form button")
        _shows(page, "#judgement-title", "STOPPED before the flip")
    assert page.locator("#judgement.panel.stopped").count() == 1
    assert _verdict(page, "agree") == "NO" and _verdict(page, "flipped") == "no"
    _shows(page, "#disagreements", "destination holds 3 records")
    _shows(page, "#status", "stopped before the flip")
    page.screenshot(path=str(shots / "migration-stopped.png"), full_page=True)
    tenants = {t["id"]: t for t in fleet.admin(base).get("/tenants").json()["tenants"]}
    assert tenants["beta"]["instance"] == "a" and tenants["beta"]["migrating"] is False
    with fleet.tenant(base, beta) as tenant:
        assert tenant.get("/stats").json()["drawers"] == 4
    # Re-point moves the mapping only: refused while b does not hold beta's vault; acme's mapping is b's.
    page.click("nav [data-tab=tenants]")
    page.select_option("#repoint-tenant [name=tenant]", "beta")
    page.select_option("#repoint-tenant [name=instance]", "b")
    page.click("#repoint-tenant button")
    _shows(page, "#status", "does not report holding vault 'beta'")
    _shows(page, "#tenant-table tr[data-tenant=beta]", "a")
    # The sweep ran again by itself (every 10 s) and now counts both tenants.
    playwright_api.expect(page.locator("#sweep-line")).not_to_have_text(first_sweep or "", timeout=15000)
    _shows(page, "#sweep-line", "2 tenant(s)")

    # The admin log lists what the page did; a phone-wide page connects and shows the same fleet.
    page.click("nav [data-tab=log]")
    _shows(page, "#log-table", "migrate-stopped")
    phone = _page(browser, base, requests, width=390, height=844)
    _connect(phone)
    _shows(phone, "#instance-table tr[data-instance=b] .state", "healthy")
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways at 390 px ({width} px wide)"
    phone.screenshot(path=str(shots / "phone.png"), full_page=True)
    phone.focus("nav [data-tab=instances]")  # the tablist by keyboard: an arrow key moves to the next tab
    phone.keyboard.press("ArrowRight")
    _shows(phone, "#tenant-table tr[data-tenant=acme]", "b")
    assert phone.is_hidden("#tab-instances")
    assert phone.evaluate("document.activeElement.dataset.tab") == "tenants"
    assert page.evaluate("window.__xss") is None and phone.evaluate("window.__xss") is None
    page.close()
    phone.close()
    # The control: an inline script injected into a fresh page is refused by the CSP, and the listener sees it.
    control: list[str] = []
    probe = _page(browser, base, control)
    inject = "s = document.createElement('script'); s.textContent = 'window.__inline = 1'; document.body.append(s)"
    probe.evaluate(inject)
    probe.wait_for_timeout(300)
    assert probe.evaluate("window.__inline") is None
    assert any("Content Security Policy" in line for line in control), control
    probe.close()
    errors = [line for line in requests if line.startswith(("console error", "pageerror"))]
    # The only errors allowed are the browser's own lines for the answers the test provoked (401, 400, 409).
    assert all("Failed to load resource" in line for line in errors), errors
    foreign = [url for url in requests if not url.startswith((base, "console ", "pageerror"))]
    assert foreign == []  # the page's network log holds only its own origin
    assert httpx.get(f"{base}/ui/../admin/tenants").status_code in (401, 404)  # no asset path reaches /admin
