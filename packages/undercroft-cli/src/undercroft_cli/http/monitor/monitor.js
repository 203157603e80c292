// The Palace Monitor: renders one vault's live stream (GET /v1/vaults/{id}/stream) read with fetch() streaming,
// because EventSource cannot send the Authorization header. Same origin only (the CSP allows nothing else).
// Until connected it runs a demo of synthetic writes and searches; the beacon is NEVER lit by the demo: it lights
// only on a real hmac-fail frame from the server, on the wing the failing row claims.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { wings: new Map(), demo: null, reader: null, live: false, sealed: false };

function text(node, value) { node.textContent = String(value); }

function wing(name) {
  let entry = state.wings.get(name);
  if (!entry) {
    const box = document.createElement("div");
    box.className = "wing" + (state.sealed ? " sealed" : "");
    box.dataset.wing = name;
    const title = document.createElement("h2");
    text(title, name);
    const shelf = document.createElement("div");
    shelf.className = "shelf";
    const count = document.createElement("span");
    count.className = "n";
    box.append(title, shelf, count);
    $("wings").append(box);
    entry = { box, shelf, count, drawers: 0 };
    state.wings.set(name, entry);
  }
  return entry;
}

function setDrawers(entry, drawers) {
  entry.drawers = drawers;
  text(entry.count, drawers);
  const shown = Math.min(drawers, 48);  // a shelf shows at most 48 drawers; the number says the rest
  while (entry.shelf.childElementCount > shown) entry.shelf.lastChild.remove();
  while (entry.shelf.childElementCount < shown) {
    const d = document.createElement("span");
    d.className = "drawer";
    entry.shelf.append(d);
  }
}

function pulse(name) {
  const targets = name == null ? [...state.wings.values()] : [wing(name)];
  for (const entry of targets) {
    entry.box.classList.add("pulse");
    setTimeout(() => entry.box.classList.remove("pulse"), 400);
  }
}

function bump(id, by = 1) { text($(id), Number($(id).textContent) + by); }

function feed(event, summary) {
  const item = document.createElement("li");
  item.className = event;
  text(item, `${new Date().toLocaleTimeString()} ${event} ${summary}`);
  $("feed").prepend(item);
  while ($("feed").childElementCount > 40) $("feed").lastChild.remove();
}

function archivist() {
  $("archivist").classList.add("filing");
  setTimeout(() => $("archivist").classList.remove("filing"), 300);
}

function sample(data) {
  state.sealed = Boolean(data.sealed);
  text($("c-drawers"), data.drawers);
  text($("c-rooms"), data.rooms);
  text($("c-kg"), data.kg_triples);
  text($("c-tunnels"), data.tunnels);
  text($("c-chain"), data.chain_height);
  if (Array.isArray(data.wings)) {
    if (data.wings.length === 0 && data.drawers > 0 && state.wings.size === 0) {
      setDrawers(wing("◈ sealed"), data.drawers);  // an engine that sends no names: one locked block
    }
    for (const [name, drawers] of data.wings) setDrawers(wing(name), drawers);
  }
}

function beacon(data) {
  // A real hmac-fail frame: light the beacon on the wing the failing row CLAIMS (unverified: it just failed).
  $("beacon").hidden = false;
  const where = data.wing ? `wing ${data.wing}${data.room ? " / " + data.room : ""}` : "an unknown wing";
  text($("beacon-text"), `${data.surface} ${data.id} failed its HMAC in vault ${data.vault} — claims ${where}` +
    (data.unverified ? " (unverified: confirm with undercroft verify)" : ""));
  if (data.wing) {
    wing(data.wing).box.classList.add("alarm");
  } else {
    for (const entry of state.wings.values()) entry.box.classList.add("alarm");
  }
}

const handlers = {
  "sample": (d) => sample(d),
  "drawer-saved": (d) => { const w = wing(d.wing); if (!d.deduped) setDrawers(w, w.drawers + 1); pulse(d.wing); archivist(); return `${d.wing}/${d.room}`; },
  "drawer-quarantined": (d) => { bump("c-quarantined"); return `intended ${d.intended_wing} (${(d.signals || []).join(", ")})`; },
  "drawer-deleted": () => { bump("c-drawers", -1); return ""; },
  "search": (d) => { bump("c-searches"); pulse(d.wing); return `${d.hits} hits`; },
  "kg-triple": () => { bump("c-kg"); return ""; },
  "chain-commit": (d) => { bump("c-chain", d.records); text($("stamp"), `stamp: chain +${d.records}`); $("stamp").classList.add("fresh"); setTimeout(() => $("stamp").classList.remove("fresh"), 500); return `+${d.records}`; },
  "hmac-fail": (d) => { beacon(d); return `${d.surface} ${d.id}`; },
};

function frame(event, data, { live }) {
  if (event === "hmac-fail" && !live) return;  // never a synthetic alarm
  const handle = handlers[event];
  if (!handle) return;
  const summary = handle(data);
  if (event !== "sample") feed(event, summary || "");
}

function parseBlock(block, live) {
  let event = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;  // comments: ": subscribed", ": ping"
    if (line.startsWith("event: ")) event = line.slice(7);
    else if (line.startsWith("data: ")) data.push(line.slice(6));
  }
  if (data.length) frame(event, JSON.parse(data.join("\n")), { live });
}

function startDemo() {
  const names = ["atrium", "library", "vault"];
  for (const name of names) setDrawers(wing(name), 3);
  let n = 0;
  state.demo = setInterval(() => {
    const name = names[n++ % names.length];
    frame(n % 3 ? "drawer-saved" : "search", { vault: "demo", wing: name, room: "hall", deduped: false, hits: 2 }, { live: false });
    frame("chain-commit", { vault: "demo", records: 1 }, { live: false });
  }, 1500);
}

function reset() {
  clearInterval(state.demo);
  state.demo = null;
  state.wings.clear();
  $("wings").replaceChildren();
  $("feed").replaceChildren();
  $("beacon").hidden = true;
  for (const id of ["c-drawers", "c-rooms", "c-kg", "c-tunnels", "c-chain", "c-quarantined", "c-searches"]) text($(id), 0);
}

async function connect(bearer, vault) {
  if (state.reader) await state.reader.cancel().catch(() => {});
  const headers = { Authorization: `Bearer ${bearer}` };
  text($("status"), `connecting to ${vault}…`);
  const reply = await fetch(`/v1/vaults/${encodeURIComponent(vault)}/stream`, { headers, cache: "no-store" });
  if (!reply.ok) {
    const why = reply.status === 401
      ? "rejected (401): a wrong bearer, or this server requires per-vault assertions, which a browser cannot mint"
      : `refused (${reply.status})`;
    text($("status"), `stream ${why}`);
    return;
  }
  reset();
  state.live = true;
  $("mode").className = "live";
  text($("mode"), `LIVE — vault ${vault}`);
  text($("status"), `connected to ${vault}`);
  try {  // backfill the wings from the last sample, if the ring holds one
    const history = await fetch(`/v1/vaults/${encodeURIComponent(vault)}/stats/history?window=1`, { headers, cache: "no-store" });
    if (history.ok) for (const s of (await history.json()).samples) frame("sample", s, { live: true });
  } catch (_) { /* the stream's own samples will draw it */ }
  const reader = reply.body.getReader();
  state.reader = reader;
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      parseBlock(buffer.slice(0, cut), true);
      buffer = buffer.slice(cut + 2);
    }
  }
  text($("status"), `stream of ${vault} ended`);
}

async function listVaults(bearer) {
  try {
    const reply = await fetch("/v1/vaults", { headers: { Authorization: `Bearer ${bearer}` }, cache: "no-store" });
    if (!reply.ok) return;
    const body = await reply.json();
    const list = $("vaults");
    list.replaceChildren();
    for (const id of body.vaults || []) {
      const option = document.createElement("option");
      option.value = typeof id === "string" ? id : id.id;
      list.append(option);
    }
  } catch (_) { /* typing the id still works */ }
}

document.addEventListener("DOMContentLoaded", () => {
  startDemo();
  $("connect").addEventListener("submit", (event) => {
    event.preventDefault();
    const bearer = $("bearer").value;
    listVaults(bearer);
    connect(bearer, $("vault").value.trim()).catch((error) => text($("status"), `stream failed: ${error.name}`));
  });
});
