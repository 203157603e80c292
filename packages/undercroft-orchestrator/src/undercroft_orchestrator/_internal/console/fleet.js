// The Undercroft fleet console: an /admin client with no capability of its own.
// The admin token lives in this closure only (never storage, never a cookie). Everything the server sends —
// instance names, URLs, health reasons, tenant ids, judgements — is untrusted: it only ever becomes a text node.
"use strict";
(() => {
  const SWEEP_MS = 10000;
  const state = { token: "", instances: [], tenants: [], health: {}, stats: {}, sweep: null };
  const $ = (id) => document.getElementById(id);

  function el(tag, text, attrs = {}) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  // ``labels`` name each cell for the narrow layout, where a row becomes a card of labelled lines.
  function row(cells, header = false, labels = []) {
    const tr = el("tr");
    for (const [index, cell] of cells.entries()) {
      const td = el(header ? "th" : "td");
      if (labels[index]) td.dataset.label = labels[index];
      if (cell instanceof Node) td.append(cell); else td.textContent = cell === undefined || cell === null ? "" : String(cell);
      tr.append(td);
    }
    return tr;
  }

  const shown = (value) => value === undefined || value === null ? "—" : typeof value === "object" ? JSON.stringify(value) : String(value);

  const SENTENCES = {
    400: "Refused", 403: "Forbidden", 404: "Not found", 409: "Refused (409)", 429: "Rate limited",
    500: "The orchestrator failed", 502: "An engine failed", 503: "Unavailable",
  };
  const UNAUTHORIZED = "Unauthorized: the orchestrator refused the admin token. Type this orchestrator's " +
    "UNDERCROFT_ORCH_ADMIN_TOKEN and connect again.";

  function say(text) { const status = $("status"); status.classList.remove("busy"); status.textContent = text; }

  function incident(message) {
    const banner = $("banner");
    banner.textContent = "INTEGRITY: " + message + "\nPreserve the evidence (copy the state database and the " +
      "engine's vault directory) before acting. Runbook: docs/orchestrator.md.";
    banner.hidden = false;
  }

  class Failed extends Error {
    constructor(status, data) {
      super(data && typeof data.detail === "string" ? data.detail : data && typeof data.error === "string" ? data.error : String(status));
      this.status = status; this.data = data;
    }
  }

  // One admin request. ``quiet`` (the sweep) leaves the status line alone unless the token is refused.
  async function api(method, path, { body, quiet = false } = {}) {
    const headers = { Authorization: `Bearer ${state.token}` };
    let payload;
    if (body !== undefined) { payload = JSON.stringify(body); headers["Content-Type"] = "application/json"; }
    if (!quiet) { const status = $("status"); status.textContent = `${method} ${path}`; status.classList.add("busy"); }
    const response = await fetch(path, { method, headers, body: payload, credentials: "omit", cache: "no-store" });
    let data = null;
    try { data = await response.json(); } catch (_) { data = null; }
    if (response.ok) { if (!quiet) say(`${response.status} ${method} ${path}`); return data; }
    const failure = new Failed(response.status, data);
    if (response.status === 401) { stopSweep(); say(UNAUTHORIZED); throw failure; }
    if (data && data.class === "integrity" && data.error !== "migration stopped") incident(failure.message);
    if (!quiet) say(`${SENTENCES[response.status] || `Failed (${response.status})`}: ${failure.message}`);
    throw failure;
  }

  const guarded = (handler) => async (event) => {
    if (event) event.preventDefault();
    try { await handler(event); } catch (error) { if (!(error instanceof Failed)) say(String(error)); }
  };
  const fields = (form) => Object.fromEntries(new FormData(form).entries());
  const path = (...parts) => parts.map((part, i) => i % 2 ? encodeURIComponent(part) : part).join("");

  // --- token shown once ------------------------------------------------------------------------
  function showToken(title, token) {
    $("token-title").textContent = title;
    $("token-value").textContent = token;
    $("token-panel").hidden = false;
    $("token-hide").focus();
  }
  function hideToken() { $("token-value").textContent = ""; $("token-title").textContent = ""; $("token-panel").hidden = true; }

  // --- choices -----------------------------------------------------------------------------------
  function fillChoices() {
    for (const select of document.querySelectorAll("select.instance-choice, select.tenant-choice")) {
      const keep = select.value;
      const names = select.classList.contains("instance-choice") ? state.instances.map((i) => i.name) : state.tenants.map((t) => t.id);
      clear(select);
      if (select.dataset.any) select.append(el("option", select.dataset.any, { value: "" }));
      for (const name of names) select.append(el("option", name, { value: name }));
      if (names.includes(keep)) select.value = keep;
    }
  }

  // --- instances ---------------------------------------------------------------------------------
  function renderInstances() {
    const node = clear($("instance-table"));
    const labels = ["name", "url", "added", "health", "reason", ""];
    node.append(row(labels, true));
    for (const instance of state.instances) {
      const verdict = state.health[instance.name];
      const badge = el("span", verdict ? verdict.state : "not probed yet", { class: `state ${verdict ? verdict.state : ""}` });
      const remove = el("button", "Remove", { class: "danger", type: "button", "aria-label": `Remove instance ${instance.name}` });
      remove.addEventListener("click", guarded(async () => {
        await api("DELETE", path("/admin/instances/", instance.name));
        delete state.health[instance.name];
        say(`Removed instance ${instance.name}.`);
        await loadInstances(false);
      }));
      const tr = row([instance.name, instance.url, instance.added_at, badge, verdict && verdict.reason ? verdict.reason : "", remove], false, labels);
      tr.dataset.instance = instance.name;
      node.append(tr);
    }
    if (!state.instances.length) node.append(row(["no instance is registered", "", "", "", "", ""]));
  }

  async function loadInstances(quiet) {
    state.instances = (await api("GET", "/admin/instances", { quiet })).instances;
    renderInstances(); fillChoices();
  }

  async function probe(name) {
    try { state.health[name] = await api("GET", path("/admin/instances/", name, "/health"), { quiet: true }); }
    catch (error) {
      if (error instanceof Failed && error.status === 401) throw error;
      state.health[name] = { name, state: "unhealthy", reason: error.message };
    }
  }

  // --- tenants -----------------------------------------------------------------------------------
  function renderTenants() {
    const node = clear($("tenant-table"));
    const labels = ["id", "vault", "instance", "drawers", "created", "rotated", "migrating", ""];
    node.append(row(labels, true));
    for (const tenant of state.tenants) {
      const rotate = el("button", "Rotate token", { type: "button", "aria-label": `Rotate the token of tenant ${tenant.id}` });
      rotate.addEventListener("click", guarded(async () => {
        const rotated = await api("POST", path("/admin/tenants/", tenant.id, "/rotate"));
        showToken(`New token for tenant ${rotated.id} (the old one no longer works)`, rotated.token);
        say(`Rotated the token of ${rotated.id}: the old token is dead.`);
        await loadTenants(false);
      }));
      const stats = state.stats[tenant.id];
      const tr = row([tenant.id, tenant.vault, tenant.instance, stats ? shown(stats.drawers) : "…",
        tenant.created_at, tenant.rotated_at || "", tenant.migrating ? "MIGRATING (writes held)" : "no", rotate], false, labels);
      tr.dataset.tenant = tenant.id;
      node.append(tr);
    }
    if (!state.tenants.length) node.append(row(["no tenant yet", "", "", "", "", "", "", ""]));
  }

  async function loadTenants(quiet) {
    state.tenants = (await api("GET", "/admin/tenants", { quiet })).tenants;
    renderTenants(); fillChoices();
  }

  async function tenantStats(id) {
    try { state.stats[id] = await api("GET", path("/admin/tenants/", id, "/stats"), { quiet: true }); }
    catch (error) { if (error instanceof Failed && error.status === 401) throw error; state.stats[id] = { drawers: "unavailable" }; }
  }

  // --- the sweep: instances and their health, tenants and their stats ---------------------------
  async function sweep() {
    await loadInstances(true);
    await Promise.all(state.instances.map((instance) => probe(instance.name)));
    renderInstances();
    await loadTenants(true);
    await Promise.all(state.tenants.map((tenant) => tenantStats(tenant.id)));
    renderTenants();
    const healthy = state.instances.filter((i) => state.health[i.name] && state.health[i.name].state === "healthy").length;
    $("sweep-line").textContent = `Swept at ${new Date().toLocaleTimeString()}: ${healthy} of ${state.instances.length} instance(s) healthy, ${state.tenants.length} tenant(s). Next in 10 s.`;
  }
  function stopSweep() { if (state.sweep !== null) clearInterval(state.sweep); state.sweep = null; $("sweep-line").textContent = "Not connected."; }
  function startSweep() {
    if (state.sweep !== null) clearInterval(state.sweep);
    state.sweep = setInterval(() => { if (state.token) sweep().catch(() => {}); }, SWEEP_MS);
  }

  // --- migration and its judgement ------------------------------------------------------------
  function renderJudgement(judgement, stoppedDetail) {
    const panel = $("judgement");
    const stopped = stoppedDetail !== undefined || judgement.flipped !== true;
    panel.className = `panel ${stopped ? "stopped" : "done"}`;
    $("judgement-title").textContent = stopped
      ? `STOPPED before the flip: tenant ${judgement.tenant} still lives on ${judgement.from}, which keeps serving. Nothing was lost.`
      : `Migrated: tenant ${judgement.tenant} moved from ${judgement.from} to ${judgement.to}.`;
    $("judgement-detail").textContent = stoppedDetail || "";
    const manifest = judgement.manifest || {}, source = judgement.source || {}, destination = judgement.destination || {};
    const counts = clear($("judgement-counts"));
    counts.append(row(["", "export manifest", "source", "destination"], true));
    counts.append(row(["drawers / records", shown(manifest.drawers),
      `${shown(source.records_before)} before, ${shown(source.records_after)} after`, shown(destination.records)]));
    counts.append(row(["knowledge-graph facts", shown(manifest.kg_facts), shown(source.kg_facts), shown(destination.kg_facts)]));
    counts.append(row(["tunnels", shown(manifest.tunnels), shown(source.tunnels), shown(destination.tunnels)]));
    const verdict = clear($("judgement-verdict"));
    const lines = [
      ["agree", judgement.agree === true ? "yes" : judgement.agree === false ? "NO" : "not judged"],
      ["flipped", judgement.flipped === true ? "yes" : "no"],
      ["source_deleted", judgement.source_deleted === undefined ? "no (the source was kept)" : judgement.source_deleted === true ? "yes" : shown(judgement.source_deleted)],
      ["destination verifies clean", shown(destination.verify_ok)],
      ["exported bytes", shown(judgement.exported_bytes)],
    ];
    if (judgement.seconds !== undefined) lines.push(["seconds", shown(judgement.seconds)]);
    if (judgement.reason !== undefined) lines.push(["reason", shown(judgement.reason)]);
    if (judgement.cleanup !== undefined) lines.push(["partial copy deleted", shown(judgement.cleanup)]);
    for (const [key, value] of lines) { const tr = row([key, value]); tr.dataset.key = key; verdict.append(tr); }
    const list = clear($("disagreements"));
    for (const line of judgement.disagreements || []) list.append(el("li", line));
    if (!list.firstChild) list.append(el("li", stopped && judgement.reason ? "none recorded: it failed before the judgement (see the reason)" : "none"));
    panel.hidden = false;
  }

  async function migrate(form) {
    const { tenant, to } = fields(form);
    const button = form.querySelector("button");
    $("judgement").hidden = true;
    button.disabled = true;  // one migration per click: a second submit would only be refused
    try {
      const judgement = await api("POST", path("/admin/tenants/", tenant, "/migrate"), { body: { to } });
      renderJudgement(judgement);
      say(`Migrated ${tenant} to ${to}: the copy agrees, the mapping flipped.`);
    } catch (error) {
      if (error instanceof Failed && error.status === 409 && error.data && error.data.judgement) {
        renderJudgement(error.data.judgement, error.message);
        if (error.data.class === "integrity") incident(error.message);
        say(`Migration stopped before the flip: ${tenant} stays on its source.`);
      } else throw error;
    } finally {
      button.disabled = false;
    }
    await loadTenants(true);
  }

  // --- tabs --------------------------------------------------------------------------------------
  const loaders = {
    instances: () => loadInstances(false),
    tenants: () => loadTenants(false),
    migration: async () => { await loadInstances(true); await loadTenants(true); },
    log: async () => {
      const node = clear($("log-table"));
      const labels = ["seq", "at", "action", "subject", "detail"];
      node.append(row(labels, true));
      for (const line of (await api("GET", "/admin/log")).log) node.append(row([line.seq, line.at, line.action, line.subject, shown(line.detail)], false, labels));
    },
  };
  const tabs = () => Array.from(document.querySelectorAll("[role=tab]"));
  function show(name) {
    for (const tab of tabs()) {
      const selected = tab.dataset.tab === name;
      tab.setAttribute("aria-selected", String(selected)); tab.tabIndex = selected ? 0 : -1;
    }
    for (const panel of document.querySelectorAll("[role=tabpanel]")) panel.hidden = panel.id !== `tab-${name}`;
    if (state.token && loaders[name]) guarded(loaders[name])();
  }

  // --- wiring --------------------------------------------------------------------------------------
  document.addEventListener("DOMContentLoaded", () => {
    for (const tab of tabs()) {
      tab.addEventListener("click", () => show(tab.dataset.tab));
      tab.addEventListener("keydown", (event) => {  // the tablist's arrow keys, as the ARIA pattern has them
        if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
        const all = tabs(); const next = all[(all.indexOf(tab) + (event.key === "ArrowRight" ? 1 : all.length - 1)) % all.length];
        next.focus(); show(next.dataset.tab);
      });
    }
    $("credentials").addEventListener("submit", guarded(async () => {
      state.token = $("admin-token").value;
      $("admin-token").value = "";  // kept in this closure only
      await sweep();
      say("Connected.");
      startSweep();
      show("instances");
    }));
    $("token-hide").addEventListener("click", hideToken);
    $("add-instance").addEventListener("submit", guarded(async (event) => {
      const form = fields(event.target); const body = { name: form.name, url: form.url };
      if (form.bearer) body.bearer = form.bearer;
      if (form.assertion_secret) body.assertion_secret = form.assertion_secret;
      const added = await api("POST", "/admin/instances", { body });
      event.target.reset();
      say(`Added instance ${added.name} at ${added.url}.`);
      await loadInstances(true); await probe(added.name); renderInstances();
    }));
    $("create-tenant").addEventListener("submit", guarded(async (event) => {
      const form = fields(event.target); const body = { id: form.id };
      if (form.instance) body.instance = form.instance;
      if (form.level) body.level = form.level;
      const created = await api("POST", "/admin/tenants", { body });
      event.target.reset();
      showToken(`Token for tenant ${created.id} on ${created.instance}`, created.token);
      say(`Created tenant ${created.id} on ${created.instance}.`);
      await loadTenants(true);
    }));
    $("repoint-tenant").addEventListener("submit", guarded(async (event) => {
      const form = fields(event.target);
      const moved = await api("PATCH", path("/admin/tenants/", form.tenant), { body: { instance: form.instance } });
      say(`Re-pointed ${moved.id} to ${moved.instance}.`);
      await loadTenants(true);
    }));
    $("migrate-form").addEventListener("submit", guarded((event) => migrate(event.target)));
    $("log-refresh").addEventListener("click", guarded(loaders.log));
    show("instances");
  });
})();
