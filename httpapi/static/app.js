// capbroker explorer: a thin client of the JSON API. No build step.
"use strict";

const $ = (id) => document.getElementById(id);
const tokenInput = $("token");
tokenInput.value = localStorage.getItem("capbroker-token") || "";
tokenInput.addEventListener("input", () => localStorage.setItem("capbroker-token", tokenInput.value));

async function api(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  if (tokenInput.value) headers["Authorization"] = "Bearer " + tokenInput.value;
  const res = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const data = await res.json().catch(() => ({ error: { code: "internal", message: "bad response" } }));
  if (res.status === 401) {
    tokenInput.focus();
    throw new Error("This server needs its bearer token: enter it in the token field at the top (" + ((data.error && data.error.message) || res.statusText) + ").");
  }
  if (!res.ok) throw new Error((data.error && data.error.message) || res.statusText);
  return data;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c == null ? "" : String(c)));
  return e;
}

// Tabs.
for (const b of document.querySelectorAll("nav button")) {
  b.addEventListener("click", () => {
    document.querySelectorAll("nav button").forEach((x) => x.classList.toggle("active", x === b));
    document.querySelectorAll(".tab").forEach((t) => t.classList.toggle("active", t.id === "tab-" + b.dataset.tab));
    if (b.dataset.tab === "cards") loadCards();
    if (b.dataset.tab === "map") loadMap();
    if (b.dataset.tab === "sessions") loadSessions();
  });
}

// Select.
$("select-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const task = $("task").value.trim();
  if (!task) return;
  $("error").hidden = true;
  try {
    const sel = await api("POST", "/v1/select", { task, max: +$("max").value || 0, budget: +$("budget").value || 0 });
    renderSelection(sel);
  } catch (e) {
    $("error").textContent = e.message;
    $("error").hidden = false;
  }
});

function terms(matches) {
  const span = el("span", { class: "terms" });
  for (const m of matches || []) span.append(el("code", {}, m.term), " in " + (m.fields || []).join("+") + " ");
  return span;
}

function renderSelection(sel) {
  $("result").hidden = false;
  $("family").textContent = sel.family;
  $("reason").textContent = sel.reason;
  const t = sel.tokens;
  $("tokens").textContent = `${t.exposed} tokens exposed of ${t.full} for the full catalog (${Math.round(100 * t.saved)}% saved)`;
  $("tokbar").style.width = (t.full ? (100 * t.exposed) / t.full : 0) + "%";
  const top = Math.max(0, ...sel.tools.map((p) => p.score));
  const body = $("picks");
  body.replaceChildren();
  sel.tools.forEach((p, i) => {
    const bar = el("div", { class: "bar" }, el("div", { style: `width:${top ? (100 * p.score) / top : 0}%` }));
    body.append(el("tr", { class: "pick", "data-name": p.name },
      el("td", {}, i + 1),
      el("td", {}, el("b", {}, p.name), el("br"), el("span", { class: "terms" }, p.kind || "")),
      el("td", {}, el("div", { class: "score" }, bar, p.score ? p.score.toFixed(2) : "–")),
      el("td", {}, el("span", { class: "badge " + p.confidence }, p.confidence)),
      el("td", { class: p.risk }, p.risk),
      el("td", {}, ...(p.aspect ? [el("span", { class: "step" }, `for “${p.aspect}”`), el("br")] : []),
        ...(p.matches && p.matches.length
        ? [terms(p.matches), el("br"), el("span", { class: "terms" }, `coverage ${Math.round(100 * p.coverage)}%` + (p.floor ? " · floor" : ""))]
        : [p.reason]))));
  });
  body.append(el("tr", { class: "pick hatch-row", "data-name": sel.hatch },
    el("td", {}, "+"), el("td", {}, el("b", {}, sel.hatch)), el("td", {}, ""),
    el("td", {}, el("span", { class: "badge hatch" }, "hatch")), el("td", { class: "read-only" }, "read-only"),
    el("td", {}, "always exposed: finds more capabilities mid-run")));
  const rej = $("rejected");
  rej.replaceChildren(...(sel.rejected || []).map((r) => el("li", {}, el("b", {}, r.name), " — " + r.reason)));
  $("nrejected").textContent = (sel.rejected || []).length;
}

// Cards.
let cardsCache = null;
async function loadCards() {
  try {
    if (!cardsCache) {
      cardsCache = (await api("GET", "/v1/cards")).cards;
      const sources = [...new Set(cardsCache.map((c) => c.source))].sort();
      $("f-source").append(...sources.map((s) => el("option", {}, s)));
    }
    renderCards();
  } catch (e) {
    $("cards").replaceChildren(el("tr", {}, el("td", { colspan: 5, class: "error" }, e.message)));
  }
}
function renderCards() {
  const src = $("f-source").value, kind = $("f-kind").value, text = $("f-text").value.toLowerCase();
  const rows = cardsCache.filter((c) => (!src || c.source === src) && (!kind || c.kind === kind) &&
    (!text || c.name.toLowerCase().includes(text) || c.description.toLowerCase().includes(text)));
  $("card-count").textContent = `${rows.length} of ${cardsCache.length}`;
  $("cards").replaceChildren(...rows.map((c) => el("tr", {},
    el("td", {}, el("b", {}, c.name)), el("td", {}, c.kind), el("td", {}, c.source),
    el("td", { class: c.risk }, c.risk), el("td", {}, c.description))));
}
["f-source", "f-kind", "f-text"].forEach((id) => $(id).addEventListener("input", () => cardsCache && renderCards()));

// Capability map: GET /v1/capabilities answers what `capbroker
// capabilities --json` prints: {plugins, cards, capabilities: [{name,
// purpose, phases, default, internal, candidates: [entry]}], unassigned:
// [entry]}, an entry being {name, kind, plugin, score, confidence,
// matched: [{keyword, exact}], technologies}.
function badge(confidence) {
  return el("span", { class: "badge " + String(confidence || "").toLowerCase() }, confidence || "");
}

function entryRow(e, top) {
  const kw = (e.matched || []).map((m) => m.keyword + (m.exact ? "" : "~"));
  const tech = Object.keys(e.technologies || {}).sort();
  const bar = el("div", { class: "bar" }, el("div", { style: `width:${top ? (100 * e.score) / top : 0}%` }));
  return el("tr", { class: "candidate", "data-name": e.name },
    el("td", {}, el("b", {}, e.name), el("br"), el("span", { class: "terms" }, e.kind + " · plugin " + e.plugin)),
    el("td", {}, el("div", { class: "score" }, bar, e.score)),
    el("td", {}, badge(e.confidence)),
    el("td", {}, el("span", { class: "terms" }, kw.join(", ")), tech.length ? el("br") : "",
      tech.length ? el("span", { class: "terms" }, "tech: " + tech.join(", ")) : ""));
}

function candidateTable(entries) {
  const top = Math.max(0, ...entries.map((e) => e.score));
  return el("table", {},
    el("thead", {}, el("tr", {}, el("th", {}, "agent or command"), el("th", {}, "score"), el("th", {}, "confidence"), el("th", {}, "matched keywords (~ partial)"))),
    el("tbody", {}, ...entries.map((e) => entryRow(e, top))));
}

async function loadMap() {
  const box = $("map");
  try {
    const m = await api("GET", "/v1/capabilities");
    const caps = m.capabilities || [];
    const parts = [el("p", { class: "summary", id: "map-summary" },
      `${m.cards} agents and commands from ${m.plugins} plugins, mapped to ${caps.length} capabilities`)];
    for (const c of caps) {
      const cands = c.candidates || [];
      const head = el("h3", {}, c.name, " ",
        el("span", { class: "terms" }, (c.phases || []).join(", ") + (c.internal ? " · internal" : "") + " · default " + (c.default || "")));
      let body;
      if (c.internal) body = el("p", { class: "terms" }, "handled by the workflow itself: no plugin is searched");
      else if (cands.length) body = candidateTable(cands);
      else body = el("p", { class: "terms" }, "no plugin agent or command: the built-in " + (c.default || "default") + " answers");
      parts.push(el("div", { class: "category", "data-name": c.name, "data-candidates": cands.length },
        head, c.purpose ? el("p", { class: "purpose" }, c.purpose) : "", body));
    }
    const un = m.unassigned || [];
    if (un.length) {
      parts.push(el("details", { id: "unassigned" }, el("summary", {}, `unassigned (${un.length}): no capability keyword matched`),
        el("ul", {}, ...un.map((e) => el("li", {}, el("b", {}, e.name), " " + e.kind)))));
    }
    box.replaceChildren(...parts);
  } catch (e) {
    box.replaceChildren(el("p", { class: "error" }, e.message));
  }
}

// Route a task or phase: POST /v1/route answers what `capbroker route
// --json` prints.
$("route-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const req = { task: $("route-task").value.trim(), phase: $("route-phase").value };
  const out = $("route-result");
  out.hidden = false;
  try {
    const d = await api("POST", "/v1/route", req);
    const lines = [d.line, ...(d.secondary || []).map((s) => "  also " + s.line)];
    out.replaceChildren(el("p", { id: "route-line" }, el("b", {}, d.agent), " for ", d.capability, " ", badge(d.confidence),
      d.default ? el("span", { class: "terms" }, " (built-in: no plugin match)") : ""),
      el("pre", {}, d.announcement + "\n" + lines.join("\n")));
  } catch (e) {
    out.replaceChildren(el("p", { class: "error" }, e.message));
  }
});

// Sessions: GET /v1/activity lists the sessions with the latest trace
// records, whoever wrote them (capbroker gateway or this API) into the
// shared database; a session's trace is GET /v1/traces?session=ID,
// oldest first, paged with after.
function names(list, n) {
  list = list || [];
  if (!list.length) return el("span", { class: "terms" }, "none");
  const shown = list.slice(0, n).join(", ");
  return el("span", { title: list.join(", ") }, list.length > n ? `${shown} +${list.length - n} more` : shown);
}

function when(iso) {
  const d = new Date(iso);
  return isNaN(d) ? "" : d.toLocaleString();
}

let traceSession = null, traceAfter = 0;
async function loadSessions() {
  const err = $("sessions-error");
  try {
    const a = await api("GET", "/v1/activity");
    err.hidden = true;
    const live = a.sessions.filter((s) => s.live).length;
    const ended = a.sessions.filter((s) => s.ended).length;
    $("sessions-summary").textContent = `${a.count} sessions, ${live} live (a record in the last ${Math.round(a.live_window_seconds / 60)} min and not ended), ${ended} ended` +
      (a.partial ? ` · from the newest ${a.records} trace records` : "");
    $("sessions").replaceChildren(...a.sessions.map((s) => {
      const state = s.live ? "live" : s.ended ? "ended" : "recent";
      const row = el("tr", { class: "session" + (s.id === traceSession ? " chosen" : ""), "data-id": s.id, "data-live": s.live, "data-state": state },
        el("td", {}, el("b", {}, s.id), el("br"),
          el("span", { class: "badge " + (s.live ? "live" : "ended"), title: s.ended ? s.end_reason || "" : "" },
            s.ended ? `ended ${when(s.ended_at)}` : state), " ",
          el("span", { class: "terms" }, (s.gateway ? "gateway" + (s.mode ? " · " + s.mode : "") : "api") + (s.stored ? " · stored" : " · anonymous"))),
        el("td", {}, s.task),
        el("td", {}, when(s.last_at), el("br"), el("span", { class: "terms" }, `${s.records} records · ${s.find_capability_calls} finds` + (s.failures ? ` · ${s.failures} failures` : ""))),
        el("td", { class: "given" }, names(s.given, 6)),
        el("td", { class: "found" }, names(s.found, 6)),
        el("td", { class: "called" }, ...(s.called.length ? s.called.map((c) => el("div", {},
          el("code", {}, c.tool), ` ×${c.count} `, el("span", { class: "outcome " + c.outcome }, c.outcome))) : [el("span", { class: "terms" }, "none")])),
        el("td", { class: "held" }, ...(s.held.length ? s.held.map((h) => el("div", { title: h.why },
          el("code", {}, h.name), h.refused ? ` refused ×${h.refused}` : " matched")) : [el("span", { class: "terms" }, "none")])));
      row.addEventListener("click", () => openTrace(s.id));
      return row;
    }));
  } catch (e) {
    err.textContent = e.message;
    err.hidden = false;
  }
}

async function openTrace(id) {
  traceSession = id;
  traceAfter = 0;
  document.querySelectorAll("#sessions tr.session").forEach((r) => r.classList.toggle("chosen", r.dataset.id === id));
  $("trace").hidden = false;
  $("trace-session").textContent = id;
  $("trace-records").replaceChildren();
  await moreTrace();
}

async function moreTrace() {
  const id = traceSession;
  try {
    const recs = await api("GET", `/v1/traces?session=${encodeURIComponent(id)}&limit=100&after=${traceAfter}`);
    if (id !== traceSession) return;
    const body = $("trace-records");
    for (const r of recs) {
      let d = {};
      try { d = r.detail ? (typeof r.detail === "string" ? JSON.parse(r.detail) : r.detail) : {}; } catch (_) { d = {}; }
      const what = r.kind === "call" ? [el("code", {}, r.tool), d.outcome ? el("span", { class: "outcome " + d.outcome }, " " + d.outcome) : "", d.upstream ? el("span", { class: "terms" }, " on " + d.upstream) : ""]
        : r.kind === "find" ? [el("span", {}, "“" + (r.query || "") + "”"), (r.found || []).length ? el("div", { class: "terms" }, "added " + r.found.join(", ")) : "",
          (d.held || []).length ? el("div", { class: "terms" }, "held back: " + d.held.join(", ")) : ""]
        : r.kind === "end" ? ["session ended"]
        : [r.task || r.query || ""];
      const why = (r.failures || []).length ? el("span", { class: "error-text" }, r.failures.map((f) => f.tier + ": " + f.message).join("; ")) : (r.capability_reason || "");
      body.append(el("tr", { class: "record", "data-kind": r.kind, "data-id": r.id },
        el("td", {}, r.id), el("td", {}, when(r.at)), el("td", {}, r.kind),
        el("td", {}, ...what), el("td", {}, names(r.selected_tools, 4)),
        el("td", {}, r.tokens && r.tokens.full ? `${r.tokens.exposed} of ${r.tokens.full}` : ""), el("td", {}, why)));
      traceAfter = Math.max(traceAfter, r.id);
    }
    $("trace-count").textContent = `(${body.children.length} records)`;
    $("trace-more").hidden = recs.length < 100;
  } catch (e) {
    $("trace-records").append(el("tr", {}, el("td", { colspan: 7, class: "error" }, e.message)));
  }
}

$("sessions-refresh").addEventListener("click", loadSessions);
$("trace-more").addEventListener("click", moreTrace);
setInterval(() => {
  if ($("sessions-auto").checked && $("tab-sessions").classList.contains("active") && document.visibilityState === "visible") loadSessions();
}, 5000);

// A task in the address (?task=...) runs at once: links can share a selection.
const q = new URLSearchParams(location.search).get("task");
if (q) { $("task").value = q; $("select-form").requestSubmit(); }
