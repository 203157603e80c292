// The Undercroft admin console: a /v1 client with no capability of its own.
// Credentials live in this closure only (never storage); assertions are minted here with WebCrypto,
// byte-compatible with `undercroft assert-header`. Drawer text is untrusted: it is only ever a text node.
"use strict";
(() => {
  const state = { bearer: "", secret: "", vault: null, drawerOffset: 0, searchOffset: 0 };
  const $ = (id) => document.getElementById(id);
  const encoder = new TextEncoder();

  function el(tag, text, attrs = {}) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  function table(node, rows) {
    clear(node);
    for (const [key, value] of rows) {
      const tr = el("tr");
      tr.append(el("th", key), el("td", typeof value === "object" ? JSON.stringify(value) : value));
      node.append(tr);
    }
  }

  async function assertion(vault) {
    const key = await crypto.subtle.importKey(
      "raw", encoder.encode(state.secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const ts = Math.floor(Date.now() / 1000).toString();
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`${ts}|${vault}`)));
    return `${ts}:${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
  }

  const SENTENCES = {
    400: "Bad request", 401: "Unauthorized: the bearer or the assertion secret was refused.",
    403: "Refused: this server runs read-only, so it takes no writes.", 404: "Not found",
    413: "Too large: the body is above the route's cap; nothing of it was used.",
    501: "Not built on this engine yet",
  };

  function say(text) { const status = $("status"); status.classList.remove("busy"); status.textContent = text; }

  // An integrity verdict is an incident, never a generic error: a banner naming it and the runbook's page.
  function incident(message) {
    const banner = clear($("banner"));
    const link = el("a", "Open the tamper runbook", { href: "/ui/runbook.html", target: "_blank", rel: "noopener" });
    banner.append(el("strong", `INTEGRITY INCIDENT in vault ${state.vault}: ${message}`),
      el("p", "Preserve the evidence first (copy the vault directory), freeze writes, then restore a backup that verifies."),
      link);
    banner.hidden = false;
  }

  // One request: the bearer, the assertion for the vault it addresses, and the status doctrine's sentence.
  async function api(method, path, { vault = state.vault, scope, body, raw, expect = "json", absent = false } = {}) {
    const headers = { Authorization: `Bearer ${state.bearer}` };
    if (state.secret) headers["X-Vault-Assertion"] = await assertion(scope ?? vault ?? "*");
    let payload;
    if (raw !== undefined) payload = raw;
    else if (body !== undefined) { payload = JSON.stringify(body); headers["Content-Type"] = "application/json"; }
    const status = $("status"); status.textContent = `${method} ${path}`; status.classList.add("busy");
    const response = await fetch(path, { method, headers, body: payload, credentials: "omit", cache: "no-store" });
    if (expect === "blob" && response.ok) { say(`${response.status} ${method} ${path}`); return await response.blob(); }
    let data = null;
    try { data = await response.json(); } catch (_) { data = null; }
    const message = data && typeof data.error === "string" ? data.error : "";
    if (response.status === 202) {
      say(`Diverted to the review queue (queue slot ${data && data.id}): it was NOT saved where you aimed.`);
      return { diverted: true, data };
    }
    if (response.ok) { say(`${response.status} ${method} ${path}`); return data; }
    if (absent && response.status === 404) { say(""); return null; }  // the caller asked whether it exists
    if (data && data.class === "integrity") { incident(message); say("Integrity verdict: see the banner."); }
    else if (response.status === 409) say(`Refused (${response.status}): ${message}`);
    else say(`${SENTENCES[response.status] || `Failed (${response.status})`}${message ? ": " + message : ""}`);
    const failure = new Error(message || String(response.status));
    failure.reported = true;  // the status line already says it
    throw failure;
  }

  const v = (suffix = "") => `/v1/vaults/${encodeURIComponent(state.vault)}${suffix}`;
  const query = (params) => {
    const entries = Object.entries(params).filter(([, value]) => value !== "" && value !== null && value !== undefined);
    return entries.length ? "?" + new URLSearchParams(entries).toString() : "";
  };
  const fields = (form) => Object.fromEntries(new FormData(form).entries());
  const confirmed = (form, expected) => {
    if (form.elements.confirm.value !== expected) { say(`Type "${expected}" exactly to confirm.`); return false; }
    return true;
  };
  // Every action: its button disabled and marked busy while the call is in flight (a slow verify or import
  // cannot be fired twice), focus handed back to it afterwards, and any failure said on the status line.
  const guarded = (handler) => async (event) => {
    if (event) event.preventDefault();
    const target = event && event.currentTarget;
    const control = event && (event.submitter || (target instanceof HTMLButtonElement ? target : null));
    if (control) { control.disabled = true; control.setAttribute("aria-busy", "true"); control.classList.add("busy"); }
    try { await handler(event); } catch (error) { if (!error.reported) say(String(error.message || error)); }
    finally {
      if (control) {
        control.disabled = false; control.removeAttribute("aria-busy"); control.classList.remove("busy");
        if (control.isConnected && (document.activeElement === document.body || !document.activeElement)) control.focus();
      }
    }
  };
  function download(link, data, name) {
    const blob = data instanceof Blob ? data : new Blob([JSON.stringify(data, null, 2)], { type: "application/json" });
    link.href = URL.createObjectURL(blob); link.download = name; link.hidden = false;
  }

  // --- tabs -------------------------------------------------------------------------------------
  const loaders = {};
  function show(name) {
    for (const tab of document.querySelectorAll("[role=tab]")) tab.setAttribute("aria-selected", String(tab.dataset.tab === name));
    for (const panel of document.querySelectorAll("[role=tabpanel]")) panel.hidden = panel.id !== `tab-${name}`;
    if (state.bearer && loaders[name] && (state.vault || name === "vaults")) guarded(loaders[name])();
  }

  function selectVault(name) { state.vault = name; $("current-vault").textContent = name; $("banner").hidden = true; }

  loaders.vaults = async () => {
    const list = clear($("vault-list"));
    for (const name of (await api("GET", "/v1/vaults", { scope: "*" })).vaults) {
      const button = el("button", name, { "data-vault": name });
      button.addEventListener("click", () => { selectVault(name); show("stats"); });
      const item = el("li"); item.append(button); list.append(item);
    }
  };

  loaders.stats = async () => {
    const stats = await api("GET", v("/stats"));
    $("posture").textContent = `POSTURE: ${stats.read_only ? "read-only (a replica: writes refused)" : "writable"}`;
    $("ceiling").textContent = stats.chain_ceiling === null
      ? `audit chain: ${stats.chain_records} records (no ceiling declared)`
      : `audit chain: ${stats.chain_records} / ${stats.chain_ceiling}${stats.chain_over_ceiling ? " OVER" : ""}`;
    const unhealed = stats.unhealed || [];
    $("unhealed").hidden = unhealed.length === 0;
    const list = clear($("unhealed-list")); for (const line of unhealed) list.append(el("li", line));
    table($("stats-table"), Object.entries(stats));
  };

  async function listDrawers(wing, room, offset) {
    state.drawerScope = { wing, room };
    $("drawer-scope").textContent = wing ? `(${wing}${room ? "/" + room : ""})` : "";
    const page = await api("GET", v("/drawers") + query({ wing, room, limit: 20, offset }));
    const list = offset ? $("drawer-list") : clear($("drawer-list"));
    for (const drawer of page.drawers) {
      const button = el("button", `${drawer.wing}/${drawer.room} · ${drawer.id}`);
      button.addEventListener("click", guarded(() => viewDrawer(drawer.id)));
      const item = el("li"); item.append(button, el("span", " " + (drawer.content || "").slice(0, 80))); list.append(item);
    }
    state.drawerOffset = page.next_offset;
    $("drawers-more").hidden = page.drawers.length < 20;
  }

  async function viewDrawer(id) {
    const { drawer } = await api("GET", v(`/drawers/${encodeURIComponent(id)}`));
    state.drawer = drawer.id;
    $("drawer-view").hidden = false;
    $("drawer-title").textContent = `${drawer.wing}/${drawer.room} · ${drawer.id} · filed ${drawer.filed_at}`;
    $("drawer-content").textContent = drawer.content;  // untrusted: a text node, never markup
    $("edit-drawer").elements.text.value = drawer.content;
  }

  loaders.drawers = async () => {
    const { taxonomy } = await api("GET", v("/taxonomy"));
    const tree = clear($("taxonomy"));
    for (const [wing, rooms] of Object.entries(taxonomy)) {
      const item = el("li"); const wingButton = el("button", wing);
      wingButton.addEventListener("click", guarded(() => listDrawers(wing, "", 0)));
      const inner = el("ul");
      if (rooms && typeof rooms === "object") {
        for (const [room, count] of Object.entries(rooms)) {
          const roomButton = el("button", `${room} (${count})`);
          roomButton.addEventListener("click", guarded(() => listDrawers(wing, room, 0)));
          const leaf = el("li"); leaf.append(roomButton); inner.append(leaf);
        }
      } else inner.append(el("li", `${rooms}`));
      item.append(wingButton, inner); tree.append(item);
    }
    await listDrawers("", "", 0);
  };

  function renderHits(result, append) {
    const list = append ? $("hits") : clear($("hits"));
    for (const hit of result.hits) {
      const item = el("li");
      item.append(
        el("div", `${hit.wing}/${hit.room} · ${hit.id} · filed ${hit.filed_at}${hit.content_date ? " · dated " + hit.content_date : ""}`),
        el("div", `score ${hit.score.toFixed(3)} · semantic ${hit.semantic.toFixed(3)} · lexical ${hit.lexical.toFixed(3)}`),
        el("pre", hit.content));
      list.append(item);
    }
    if (!result.hits.length && !append) list.append(el("li", `no hits (searched ${result.searched}, scope ${result.scope})`));
    state.searchOffset = result.next_offset;
    $("search-more").hidden = result.hits.length < 10;
  }

  async function search(append) {
    const form = fields($("search-form"));
    const body = { query: form.query, limit: 10, offset: append ? state.searchOffset : 0 };
    for (const key of ["wing", "room", "kind", "when"]) if (form[key]) body[key] = form[key];
    renderHits(await api("POST", v("/search"), { body }), append);
  }

  loaders.graph = async () => { clear($("facts")); clear($("receipts")); };

  function renderFacts(facts) {
    const node = clear($("facts"));
    const head = el("tr");
    for (const name of ["subject", "predicate", "object", "valid", "grounding"]) head.append(el("th", name));
    node.append(head);
    for (const fact of facts) {
      const row = el("tr");
      row.append(el("td", fact.subject), el("td", fact.predicate), el("td", fact.object),
        el("td", `${fact.valid_from || "…"} → ${fact.valid_to || "now"}`), el("td", fact.grounding || ""));
      node.append(row);
    }
  }

  // Each receipt verdict of GET …/kg/receipts in plain words (docs/knowledge-graph.md's table).
  const RECEIPT_WORDS = {
    verified: "verified: the cited drawer still holds the cited words",
    source_changed: "source changed: the cited drawer is there, but its words differ or the span no longer fits",
    dangling: "dangling: the cited drawer is gone",
    tampered: "TAMPERED: the fact row or its cited drawer fails its integrity tag",
  };
  function renderReceipts(report) {
    const counts = Object.entries(report.counts).map(([verdict, count]) => `${count} ${verdict}`).join(" · ");
    $("receipt-counts").textContent = `${counts} · ${report.uncited} fact(s) cite nothing`;
    const node = clear($("receipts"));
    const head = el("tr");
    for (const name of ["fact", "cited drawer", "verdict"]) head.append(el("th", name));
    node.append(head);
    for (const receipt of report.receipts) {
      const row = el("tr", undefined, { class: receipt.verdict === "verified" ? "" : "bad" });
      row.append(el("td", receipt.fact_id), el("td", receipt.source_drawer || "—"),
        el("td", RECEIPT_WORDS[receipt.verdict] || receipt.verdict));
      node.append(row);
    }
    if (!report.receipts.length) {
      const row = el("tr"); row.append(el("td", "no fact cites a drawer", { colspan: "3" })); node.append(row);
    }
    if (report.counts.tampered) incident(`${report.counts.tampered} fact receipt(s) are tampered`);
  }

  loaders.verify = async () => {};
  // The legs are the engine's own lines (`lines`: what `undercroft verify` prints), never re-derived here.
  async function verifyNow() {
    const report = await api("POST", v("/verify"));
    const out = clear($("verify-report"));
    for (const line of report.lines) {
      const failing = /^ {2}[A-Z][A-Z ]*: /.test(line) || line === "VERIFY FAILED" || / BROKEN| FAILED|BEHIND/.test(line);
      out.append(el("div", line, failing ? { class: "bad" } : {}));
    }
    const tally = report.lines.filter((line) => /^ {2}[A-Z][A-Z ]*: /.test(line)).length;
    if (!report.ok) {
      incident(`verify failed (${tally} finding line(s) below, on the Verify tab)`);
      say("VERIFY FAILED: an integrity verdict, see the banner.");
    }
  }

  loaders.backups = async () => {
    const list = clear($("backup-list"));
    for (const backup of (await api("GET", v("/backups"))).backups) list.append(el("li", `${backup.id} · ${backup.created_at || ""}`));
  };

  // A headline in plain words, then the engine's whole reply (what a script would read) beneath it.
  function report(headline, data) {
    const node = clear($("ops-report"));
    node.append(el("strong", headline), el("pre", JSON.stringify(data, null, 2)));
  }

  // What a ruling would change: the destination room's count and the drawer the text aimed at, as it is now.
  async function destination(entry, taxonomy) {
    const holds = el("div", undefined, { class: "destination" });
    const rooms = taxonomy[entry.intended_wing];
    const count = rooms && typeof rooms === "object" ? rooms[entry.intended_room] || 0 : 0;
    holds.append(el("div", `The destination ${entry.intended_wing}/${entry.intended_room} holds ${count} drawer(s) now.`));
    const found = await api("GET", v(`/drawers/${encodeURIComponent(entry.intended_id)}`), { absent: true });
    if (found === null) holds.append(el("div", `Nothing is filed under ${entry.intended_id}: allow files a new drawer there.`));
    else {
      holds.append(el("div", `${entry.intended_id} holds (filed ${found.drawer.filed_at}); allow replaces it with the queued text:`),
        el("pre", found.drawer.content));  // untrusted: a text node
    }
    if (entry.destination === "moved") {
      holds.append(el("div", "MOVED: the destination was written or deleted since this was queued, so allow refuses; deny still works.", { class: "bad" }));
    }
    return holds;
  }

  function ruled(ruling) {
    if (ruling.verdict === "allow") return `allow ${ruling.id}: filed as ${ruling.landed_id}.`;
    return `deny ${ruling.id}: the queued text was destroyed through attested forgetting${ruling.receipt ? " (receipt below)" : ""}.`;
  }

  loaders.ops = async () => {
    const queue = clear($("queue"));
    const pending = (await api("GET", v("/admission"))).queue;
    const { taxonomy } = pending.length ? await api("GET", v("/taxonomy")) : { taxonomy: {} };
    for (const entry of pending) {
      const item = el("li", undefined, { class: "panel" });
      item.append(el("div", `${entry.id} → ${entry.intended_wing}/${entry.intended_room} · queued ${entry.queued_at} · signals ${entry.signals.join(", ")}`));
      item.append(await destination(entry, taxonomy));
      for (const verdict of ["allow", "deny"]) {
        const button = el("button", verdict, { class: verdict === "deny" ? "danger" : "", "data-verdict": verdict });
        button.addEventListener("click", guarded(async () => {
          const ruling = await api("POST", v("/admission"), { body: { id: entry.id, verdict } });
          report(ruled(ruling), ruling); await loaders.ops();
        }));
        item.append(button, " ");
      }
      queue.append(item);
    }
    if (!queue.firstChild) queue.append(el("li", "the queue is empty"));
    const trust = clear($("trust-list"));
    for (const entry of (await api("GET", v("/trust"))).trust) trust.append(el("li", `${entry.wing}: ${entry.trust}`));
    const retention = clear($("retention-list"));
    for (const policy of (await api("GET", v("/retention"))).policies) retention.append(el("li", `${policy.wing}${policy.room ? "/" + policy.room : ""}: ${policy.max_age_seconds} s`));
  };

  const readFile = (form) => form.elements.file.files[0].text();

  // --- wiring -----------------------------------------------------------------------------------
  document.addEventListener("DOMContentLoaded", () => {
    for (const tab of document.querySelectorAll("[role=tab]")) tab.addEventListener("click", () => show(tab.dataset.tab));
    $("credentials").addEventListener("submit", guarded(async () => {
      state.bearer = $("bearer").value; state.secret = $("secret").value;
      $("bearer").value = ""; $("secret").value = "";  // kept in this closure only
      show("vaults");
    }));
    $("create-vault").addEventListener("submit", guarded(async (event) => {
      const form = fields(event.target); const body = { id: form.id, level: form.level };
      if (form.embedder) body.embedder = form.embedder;
      await api("POST", "/v1/vaults", { scope: form.id, body }); selectVault(form.id); await loaders.vaults();
    }));
    $("delete-vault").addEventListener("submit", guarded(async (event) => {
      if (!confirmed(event.target, state.vault)) return;
      await api("DELETE", v()); state.vault = null; $("current-vault").textContent = "none"; await loaders.vaults();
    }));
    $("save-drawer").addEventListener("submit", guarded(async (event) => {
      const form = fields(event.target); const body = { text: form.text };
      if (form.wing) body.wing = form.wing; if (form.room) body.room = form.room;
      const saved = await api("POST", v("/drawers"), { body });
      if (!saved.diverted) say(`Saved as ${saved.id} (${saved.outcome}).`);
    }));
    $("drawers-more").addEventListener("click", guarded(() => listDrawers(state.drawerScope.wing, state.drawerScope.room, state.drawerOffset)));
    $("edit-drawer").addEventListener("submit", guarded(async (event) => {
      const saved = await api("PUT", v(`/drawers/${encodeURIComponent(state.drawer)}`), { body: { text: event.target.elements.text.value } });
      if (!saved.diverted) { say(`Replaced: ${saved.outcome}.`); await viewDrawer(state.drawer); }
    }));
    $("delete-drawer").addEventListener("submit", guarded(async (event) => {
      if (!confirmed(event.target, state.drawer)) return;
      await api("DELETE", v(`/drawers/${encodeURIComponent(state.drawer)}`)); $("drawer-view").hidden = true; await loaders.drawers();
    }));
    $("search-form").addEventListener("submit", guarded(() => search(false)));
    $("search-more").addEventListener("click", guarded(() => search(true)));
    $("load-entities").addEventListener("click", guarded(async () => {
      const list = clear($("entities"));
      for (const entity of (await api("GET", v("/kg/entities") + query({ limit: 100 }))).entities) list.append(el("li", entity.name));
    }));
    $("entity-form").addEventListener("submit", guarded(async (event) => {
      renderFacts((await api("GET", v("/kg/query") + query({ entity: fields(event.target).entity }))).facts);
    }));
    $("timeline").addEventListener("click", guarded(async () => {
      renderFacts((await api("GET", v("/kg/timeline") + query({ entity: $("entity-form").elements.entity.value }))).facts);
    }));
    $("load-receipts").addEventListener("click", guarded(async () => renderReceipts(await api("GET", v("/kg/receipts")))));
    $("verify-now").addEventListener("click", guarded(verifyNow));
    $("rotate-form").addEventListener("submit", guarded(async (event) => {
      if (!confirmed(event.target, state.vault)) return;
      $("rotate-report").textContent = JSON.stringify(await api("POST", v("/rotate")), null, 2);
    }));
    $("backup-now").addEventListener("click", guarded(async () => { await api("POST", v("/backups")); await loaders.backups(); }));
    $("restore-form").addEventListener("submit", guarded(async (event) => {
      if (!confirmed(event.target, state.vault)) return;
      const report = await api("POST", v("/backups/restore"), { body: { name: event.target.elements.name.value } });
      say(`Restored ${report.restored}: verify ${report.verify.ok ? "ok" : "FAILED"}.`);
    }));
    $("export-now").addEventListener("click", guarded(async () => download($("export-link"), await api("GET", v("/export"), { expect: "blob" }), `${state.vault}.ndjson`)));
    $("import-form").addEventListener("submit", guarded(async (event) => {
      const body = await readFile(event.target);
      const before = await api("GET", v("/stats"));
      const counts = await api("POST", v("/import"), { raw: body });
      const after = await api("GET", v("/stats"));
      // Judge the reply by the destination, not by itself: `drawers` counts every row (the review queue's too),
      // so new and queued rows both add to it, and queued ones to `quarantined` as well.
      const drawers = before.drawers + counts.new + counts.quarantined, queued = before.quarantined + counts.quarantined;
      const agrees = after.drawers === drawers && after.quarantined === queued;
      const out = clear($("import-report"));
      out.append(el("strong", agrees
        ? `CONSISTENT: ${counts.imported} imported (${counts.new} new, ${counts.replaced} replaced, ${counts.unchanged} unchanged, ${counts.quarantined} to the review queue); the destination now holds ${after.drawers} drawer(s) and ${after.quarantined} queued, as expected`
        : `MISMATCH: the import reports ${counts.new} new and ${counts.quarantined} queued, but the destination went from ${before.drawers} to ${after.drawers} drawer(s) and ${before.quarantined} to ${after.quarantined} queued (expected ${drawers} and ${queued})`,
      agrees ? {} : { class: "bad" }), el("pre", JSON.stringify(counts, null, 2)));
    }));
    $("trust-form").addEventListener("submit", guarded(async (event) => { await api("POST", v("/trust"), { body: fields(event.target) }); await loaders.ops(); }));
    $("retention-form").addEventListener("submit", guarded(async (event) => {
      const form = fields(event.target); const body = { wing: form.wing, max_age: form.max_age };
      if (form.room) body.room = form.room;
      await api("POST", v("/retention"), { body }); await loaders.ops();
    }));
    $("sweep-now").addEventListener("click", guarded(async () => {
      const swept = await api("POST", v("/retention/sweep"));
      const refused = swept.failed_policies.length + swept.tampered_drawers.length;
      report(`Sweep: examined ${swept.examined}, forgot ${swept.forgotten.length}, undecided ${swept.undecided}` +
        (refused ? `; ${refused} policy row(s) or drawer(s) FAILED verification` : ""), swept);
      if (refused) incident("the retention sweep met rows that fail verification");
    }));
    $("forget-form").addEventListener("submit", guarded(async (event) => {
      if (!confirmed(event.target, "FORGET")) return;
      const ids = event.target.elements.ids.value.split(",").map((id) => id.trim()).filter(Boolean);
      const { receipt } = await api("POST", v("/forget"), { body: { ids } });  // {ids, out: null, receipt}
      download($("receipt-link"), receipt, "receipt.json");
      report(`Forgot ${ids.length} drawer(s): download the receipt and keep it; verify it here later.`, receipt);
    }));
    $("verify-forgetting-form").addEventListener("submit", guarded(async (event) => {
      const verdict = await api("POST", v("/verify-forgetting"), { raw: await readFile(event.target) });
      const words = { verified: "the destruction replays against this vault's chain",
        recorded: "the record is there, but the vault was re-keyed since, so the tombstones cannot be recomputed",
        failed: "the receipt does not replay against this vault" };
      report(`FORGETTING ${verdict.status.toUpperCase()}: ${words[verdict.status] || ""}` +
        (verdict.findings.length ? ` (${verdict.findings.join("; ")})` : ""), verdict);
    }));
    $("witness-now").addEventListener("click", guarded(async () => download($("witness-link"), (await api("GET", v("/witness"))).witness, "witness.json")));
    $("witness-form").addEventListener("submit", guarded(async (event) => {
      const checked = await api("POST", v("/witness"), { raw: await readFile(event.target) });
      report(`WITNESS OK: this vault extends the witness (${checked.writes_since} write(s) since it was taken).`, checked);
    }));
    show("vaults");
  });
})();
