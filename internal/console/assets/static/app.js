// agent-tools console: the only script of the pages (no inline script: the
// Content-Security-Policy forbids it). Mutations send the session's CSRF
// token from the page's <meta name="csrf-token">.
"use strict";

function csrf() {
  const m = document.querySelector('meta[name="csrf-token"]');
  return m ? m.content : "";
}

async function send(method, url, body) {
  const res = await fetch(url, {
    method: method,
    credentials: "same-origin",
    headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf()},
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  return {ok: res.ok, status: res.status, data: data};
}

function setupToggles() {
  const err = document.getElementById("toggle-error");
  document.querySelectorAll("button.toggle").forEach(function (b) {
    b.addEventListener("click", async function () {
      b.disabled = true;
      const r = await send("PUT", "/ui/api/providers/" + encodeURIComponent(b.dataset.provider),
        {enabled: b.dataset.enable === "true"});
      if (r.ok) { location.reload(); return; }
      b.disabled = false;
      if (err) {
        err.hidden = false;
        err.textContent = (r.data && r.data.message) || ("failed: HTTP " + r.status);
      }
    });
  });
}

function showError(msg) {
  const err = document.getElementById("toggle-error");
  if (!err) return;
  err.hidden = false;
  err.textContent = msg;
}

// setupRestart: Restart waits for the upstream's new start (the API
// answers once it is running, or why it failed), then the page reloads.
function setupRestart() {
  document.querySelectorAll("button.restart").forEach(function (b) {
    b.addEventListener("click", async function () {
      b.disabled = true;
      b.textContent = "Restarting…";
      const badge = document.querySelector('tr[data-provider="' + CSS.escape(b.dataset.provider) + '"] [data-field="state"]');
      if (badge) { badge.className = "state state-starting"; badge.textContent = "starting"; }
      const r = await send("POST", "/ui/api/providers/" + encodeURIComponent(b.dataset.provider) + "/restart");
      if (r.ok) { location.reload(); return; }
      b.disabled = false;
      b.textContent = "Restart";
      showError((r.data && r.data.message) || ("restart failed: HTTP " + r.status));
    });
  });
}

// setupUpstreamLogin: Log in (a needs_login provider) starts the
// provider's login and opens the authorization server's page; it calls
// back to /ui/oauth/callback.
function setupUpstreamLogin() {
  document.querySelectorAll("button.upstream-login").forEach(function (b) {
    b.addEventListener("click", async function () {
      b.disabled = true;
      const r = await send("POST", "/ui/api/providers/" + encodeURIComponent(b.dataset.provider) + "/login");
      if (r.ok && r.data && r.data.redirect) { location.assign(r.data.redirect); return; }
      b.disabled = false;
      showError((r.data && r.data.message) || ("login failed: HTTP " + r.status));
    });
  });
}

function errorWhen(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return isNaN(d) ? "" : " (" + d.toISOString().slice(11, 19) + " UTC)";
}

// setupProviderPoll keeps the states, counts and last errors current (a
// slow upstream goes from starting to ready without a reload). Rows are
// the server's; a provider added by a reload shows after a page reload.
function setupProviderPoll() {
  const table = document.getElementById("providers");
  if (!table) return;
  const status = document.getElementById("providers-status");
  async function refresh() {
    const r = await send("GET", "/ui/api/providers");
    if (!r.ok || !r.data) { if (status) status.textContent = "not updating (HTTP " + r.status + ")"; return; }
    if (status) status.textContent = "live";
    for (const p of r.data.providers || []) {
      const tr = table.querySelector('tr[data-provider="' + CSS.escape(p.id) + '"]');
      if (!tr) continue;
      const set = function (field, text) {
        const el = tr.querySelector('[data-field="' + field + '"]');
        if (el) el.textContent = text;
      };
      const badge = tr.querySelector('[data-field="state"]');
      const restarting = tr.querySelector("button.restart:disabled");
      if (badge && !restarting) { badge.className = "state state-" + p.state; badge.textContent = p.state; }
      // The reason shows once: under the state, unless it is the last error.
      set("reason", p.reason && p.reason !== p.lastError ? p.reason : "");
      set("tools", p.tools);
      set("skills", p.skills);
      set("restarts", p.restarts);
      set("lastError", (p.lastError || "") + errorWhen(p.lastErrorAt));
    }
  }
  setInterval(refresh, 3000);
}

const svgNS = "http://www.w3.org/2000/svg";

function svgEl(name, attrs, parent) {
  const el = document.createElementNS(svgNS, name);
  for (const k in attrs) el.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(el);
  return el;
}

// The charts' x axis is the whole window (spanSeconds / stepSeconds
// slots), newest at the right, so a young window reads as "just started".
const chartW = 440, chartH = 70, chartTop = 12, chartBottom = 11;

function chartFrame(cls, label, slots) {
  const h = chartTop + chartH + chartBottom;
  const svg = svgEl("svg", {viewBox: "0 0 " + chartW + " " + h, width: chartW, height: h, class: cls, role: "img"});
  svgEl("line", {x1: 0, y1: chartTop + chartH + 0.5, x2: chartW, y2: chartTop + chartH + 0.5, class: "axis"}, svg);
  svgEl("text", {x: 2, y: 10, class: "chart-label"}, svg).textContent = label;
  svgEl("text", {x: 2, y: h - 2, class: "chart-label"}, svg).textContent = "−" + slots.minutes + " min";
  svgEl("text", {x: chartW - 2, y: h - 2, class: "chart-label end"}, svg).textContent = "now";
  return svg;
}

function slotsOf(a, points) {
  const n = Math.max(points.length, Math.round(a.spanSeconds / a.stepSeconds) || 0, 1);
  return {n: n, offset: n - points.length, w: chartW / n, minutes: Math.round(n * a.stepSeconds / 60)};
}

// chartCalls draws calls per step (bars), the failed part of each in red.
function chartCalls(a, points) {
  const slots = slotsOf(a, points);
  const max = Math.max(1, ...points.map(function (p) { return p.calls; }));
  const svg = chartFrame("chart-calls", "calls per " + a.stepSeconds + " s (max " + max + "), errors in red", slots);
  const base = chartTop + chartH;
  points.forEach(function (p, i) {
    if (p.calls <= 0) return;
    const x = (slots.offset + i) * slots.w;
    const w = Math.max(1, slots.w - 1);
    const h = Math.max(1, p.calls / max * chartH);
    const bar = svgEl("rect", {x: x.toFixed(1), y: (base - h).toFixed(1), width: w.toFixed(1), height: h.toFixed(1), class: p.partial ? "bar-calls partial" : "bar-calls"}, svg);
    svgEl("title", {}, bar).textContent = p.t.slice(11, 19) + " UTC: " + p.calls + " calls, " + p.errors + " errors" +
      (p.partial ? " (step in progress)" : "");
    if (p.errors > 0) {
      const eh = Math.max(1, p.errors / max * chartH);
      svgEl("rect", {x: x.toFixed(1), y: (base - eh).toFixed(1), width: w.toFixed(1), height: eh.toFixed(1), class: "bar-errors"}, svg);
    }
  });
  return svg;
}

// chartLatency draws p50 and p95 as lines with a dot per point (a lone
// point must show); a step without calls breaks the lines.
function chartLatency(a, points) {
  const slots = slotsOf(a, points);
  const vals = [];
  for (const p of points) { if (p.p95Ms !== null) vals.push(p.p95Ms); if (p.p50Ms !== null) vals.push(p.p50Ms); }
  const max = Math.max(0.001, ...vals);
  const svg = chartFrame("chart-latency", "latency p50 (solid) / p95 (dashed), max " + fmtMs(max), slots);
  const x = function (i) { return (slots.offset + i + 0.5) * slots.w; };
  const y = function (v) { return chartTop + chartH - v / max * chartH; };
  for (const [key, cls] of [["p95Ms", "p95"], ["p50Ms", "p50"]]) {
    let d = "", pen = false;
    points.forEach(function (p, i) {
      const v = p[key];
      if (v === null) { pen = false; return; }
      d += (pen ? " L" : " M") + x(i).toFixed(1) + " " + y(v).toFixed(1);
      pen = true;
      const dot = svgEl("circle", {cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 2, class: "pt-" + cls}, svg);
      svgEl("title", {}, dot).textContent = p.t.slice(11, 19) + " UTC: " + cls + " " + fmtMs(v);
    });
    if (d) svgEl("path", {d: d.trim(), class: "line-" + cls}, svg);
  }
  return svg;
}

function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

function fmtMs(v) {
  if (v >= 1000) return (v / 1000).toFixed(v >= 10000 ? 0 : 1) + " s";
  return (v >= 10 ? v.toFixed(0) : v.toFixed(v >= 1 ? 1 : 2)) + " ms";
}

// chartTokens draws one horizontal bar per row: its tokens over the
// window (key "windowTokens") or since start ("tokens"), the most first.
function chartTokens(rows, key, label) {
  const top = rows.slice().sort(function (x, y) { return y[key] - x[key] || (x.name < y.name ? -1 : 1); }).slice(0, 10);
  const rowH = 14, labelW = 170, h = chartTop + top.length * rowH + 4;
  const svg = svgEl("svg", {viewBox: "0 0 " + chartW + " " + h, width: chartW, height: h, class: "chart-tokens", role: "img"});
  svgEl("text", {x: 2, y: 10, class: "chart-label"}, svg).textContent = label;
  let max = 1;
  for (const t of top) max = Math.max(max, t[key]);
  top.forEach(function (t, i) {
    const y = chartTop + i * rowH + 2;
    svgEl("text", {x: labelW - 4, y: y + 10, class: "chart-label end"}, svg).textContent = t.name.length > 32 ? t.name.slice(0, 31) + "…" : t.name;
    const w = t[key] > 0 ? Math.max(1, t[key] / max * (chartW - labelW - 60)) : 0;
    const bar = svgEl("rect", {x: labelW, y: y + 1, width: w.toFixed(1), height: rowH - 3, class: "bar-calls"}, svg);
    svgEl("title", {}, bar).textContent = t.name + ": " + t[key] + " tokens";
    svgEl("text", {x: labelW + w + 3, y: y + 10, class: "chart-label"}, svg).textContent = String(t[key]);
  });
  return svg;
}

// tokenTable is one table of token totals (tool or identity rows).
function tokenTable(rows, what) {
  const table = document.createElement("table");
  table.className = "tokens";
  table.dataset.by = what;
  const head = table.createTHead().insertRow();
  for (const h of [what, "calls", "tokens", "calls (window)", "tokens (window)"]) {
    const th = document.createElement("th");
    th.textContent = h;
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (const t of rows) {
    const tr = body.insertRow();
    tr.insertCell().textContent = t.name;
    for (const v of [t.calls, t.tokens, t.windowCalls, t.windowTokens]) {
      const td = tr.insertCell();
      td.className = "num";
      td.textContent = String(v);
    }
  }
  return table;
}

// drawTokens shows the result-token totals: per tool and per identity, a
// chart of the window's tokens and the table of both totals.
function drawTokens(box, status, t) {
  box.textContent = "";
  if (!t) { status.textContent = "not available"; return; }
  const mins = Math.round(t.windowSeconds / 60);
  status.textContent = "since " + t.since.slice(0, 19).replace("T", " ") + " UTC; window: last " + mins + " minutes";
  if (t.tools.length === 0) {
    const p = document.createElement("p");
    p.className = "hint empty";
    p.textContent = "No calls yet.";
    box.appendChild(p);
    return;
  }
  for (const part of [["tool", t.tools], ["identity", t.identities]]) {
    const fig = document.createElement("figure");
    fig.className = "chart";
    const cap = document.createElement("figcaption");
    let sum = 0;
    for (const r of part[1]) sum += r.tokens;
    cap.textContent = "per " + part[0] + " — " + sum + " tokens since start";
    fig.appendChild(cap);
    fig.appendChild(chartTokens(part[1], "windowTokens", "tokens in the last " + mins + " min, by " + part[0]));
    fig.appendChild(tokenTable(part[1], part[0]));
    box.appendChild(fig);
  }
}

// setupCharts polls /ui/api/activity and redraws every provider's charts
// and the result-token totals.
function setupCharts() {
  const box = document.getElementById("charts");
  const tbox = document.getElementById("tokens");
  if (!box && !tbox) return;
  const status = document.getElementById("activity-status");
  const tstatus = document.getElementById("tokens-status");
  async function refresh() {
    const r = await send("GET", "/ui/api/activity");
    if (!r.ok || !r.data) {
      for (const s of [status, tstatus]) if (s) s.textContent = "not updating (HTTP " + r.status + ")";
      return;
    }
    const a = r.data;
    if (tbox) drawTokens(tbox, tstatus, a.tokens);
    if (!box) return;
    status.textContent = "one point per " + a.stepSeconds + " s, last " + Math.round(a.spanSeconds / 60) + " minutes; updated " +
      new Date().toISOString().slice(11, 19) + " UTC";
    box.textContent = "";
    if (a.providers.length === 0) {
      const p = document.createElement("p");
      p.className = "hint empty";
      p.textContent = "No calls in the window yet.";
      box.appendChild(p);
      return;
    }
    for (const s of a.providers) {
      const fig = document.createElement("figure");
      fig.className = "chart";
      fig.dataset.provider = s.provider;
      const cap = document.createElement("figcaption");
      let calls = 0, errors = 0, lastP95 = null;
      for (const p of s.points) { calls += p.calls; errors += p.errors; if (p.p95Ms !== null) lastP95 = p.p95Ms; }
      const code = document.createElement("code");
      code.textContent = s.provider;
      cap.appendChild(code);
      cap.appendChild(document.createTextNode(" — " + plural(calls, "call") + ", " + plural(errors, "error") +
        (lastP95 === null ? "" : ", latest p95 " + fmtMs(lastP95))));
      fig.appendChild(cap);
      fig.appendChild(chartCalls(a, s.points));
      fig.appendChild(chartLatency(a, s.points));
      box.appendChild(fig);
    }
  }
  refresh();
  setInterval(refresh, 5000);
}

// The try-a-call form mirrors the schema: every value element carries
// data-input (a scalar's type, "json", "object" for a fieldset, "array" for
// a list of items) and data-arg (its property name). readValue walks that
// tree back into the arguments object. Empty inputs are left out (and so
// are objects and arrays left empty), so a missing required field reaches
// the pipeline's validation and its teaching error is shown as the model
// would see it.
function childValues(el) {
  return Array.from(el.querySelectorAll("[data-input]"))
    .filter(function (c) { return c.parentElement.closest("[data-input]") === el; });
}

function readValue(el) {
  const kind = el.dataset.input;
  if (kind === "object") {
    const obj = {};
    let any = false;
    for (const c of childValues(el)) {
      const v = readValue(c);
      if (v !== undefined) { obj[c.dataset.arg] = v; any = true; }
    }
    return any ? obj : undefined;
  }
  if (kind === "array") {
    const out = [];
    for (const c of childValues(el)) {
      const v = readValue(c);
      if (v !== undefined) out.push(v);
    }
    return out.length > 0 ? out : undefined;
  }
  const v = el.value;
  if (v.trim() === "") return undefined;
  switch (kind) {
    case "number":
    case "integer":
      return isNaN(Number(v)) ? v : Number(v);
    case "json":
      try { return JSON.parse(v); } catch (e) {
        throw new Error((el.dataset.path || el.dataset.arg) + ": not valid JSON (" + e.message + ")");
      }
    default:
      return v;
  }
}

function collectArgs(form) { return readValue(form) || {}; }

// addItem appends one item, cloned from the array's <template>.
function addItem(list) {
  const tpl = list.querySelector(":scope > template");
  list.querySelector(":scope > ol.items").appendChild(tpl.content.cloneNode(true));
}

function setupArrays(form) {
  form.addEventListener("click", function (ev) {
    const add = ev.target.closest("button.add-item");
    if (add) { addItem(add.parentElement); return; }
    const rm = ev.target.closest("button.remove-item");
    if (rm) rm.closest("li.item").remove();
  });
  // A required array starts with one item to fill.
  form.querySelectorAll('[data-input="array"][data-required="true"]').forEach(addItem);
}

function setupCallForm() {
  const form = document.getElementById("call-form");
  if (!form) return;
  const out = document.getElementById("call-result");
  setupArrays(form);
  form.addEventListener("submit", async function (ev) {
    ev.preventDefault();
    let args;
    try { args = collectArgs(form); } catch (e) {
      out.className = "result is-error";
      out.textContent = e.message;
      return;
    }
    const box = document.getElementById("confirm");
    const body = {tool: form.dataset.tool, args: args, confirm: !!(box && box.checked)};
    out.className = "result";
    out.textContent = "calling…";
    const r = await send("POST", "/ui/api/call", body);
    if (!r.ok || !r.data) {
      out.className = "result is-error";
      out.textContent = (r.data && r.data.message) || ("failed: HTTP " + r.status);
      return;
    }
    out.className = r.data.isError ? "result is-error" : "result is-ok";
    out.dataset.decision = r.data.decision || "";
    let text = r.data.text;
    try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* plain text */ }
    out.textContent = text;
  });
}

function setupAudit() {
  const table = document.getElementById("audit");
  if (!table) return;
  const body = table.querySelector("tbody");
  const status = document.getElementById("audit-status");
  const es = new EventSource("/ui/api/audit");
  es.onopen = function () { status.textContent = "live"; };
  es.onerror = function () { status.textContent = "reconnecting…"; };
  es.addEventListener("audit", function (ev) {
    let rec;
    try { rec = JSON.parse(ev.data); } catch (e) { return; }
    const tr = document.createElement("tr");
    tr.className = rec.outcome === "ok" ? "ok" : "is-error";
    const cells = [
      (rec.time || "").replace("T", " ").replace(/\..*/, ""),
      rec.tool || "",
      rec.decision || "",
      rec.outcome + (rec.error_code ? " " + rec.error_code : ""),
      rec.duration_ms === undefined ? "" : Math.round(rec.duration_ms),
      rec.result_tokens === undefined ? "" : (rec.result_tokens_estimated ? "≈" : "") + rec.result_tokens,
      // a session id is half a credential: its prefix is enough to tell sessions apart
      rec.session && rec.session.length > 8 ? rec.session.slice(0, 8) + "…" : (rec.session || ""),
    ];
    for (const c of cells) {
      const td = document.createElement("td");
      td.textContent = c;
      tr.appendChild(td);
    }
    body.insertBefore(tr, body.firstChild);
    while (body.rows.length > 500) body.deleteRow(body.rows.length - 1);
  });
}

// setupApprovals polls the pending calls (a call waits at most the
// approval timeout, so a second's delay is fine) and answers them. With
// server.redis they are every replica's; an answer resumes the call on
// the replica that holds it.
function setupApprovals() {
  const table = document.getElementById("approvals");
  if (!table) return;
  const body = table.querySelector("tbody");
  const err = document.getElementById("approval-error");
  async function answer(id, approve, remember) {
    const body = {approve: approve};
    if (remember) body.remember = remember;
    const r = await send("POST", "/ui/api/approvals/" + encodeURIComponent(id), body);
    if (!r.ok) {
      err.hidden = false;
      err.textContent = (r.data && r.data.message) || ("failed: HTTP " + r.status);
    }
    refresh();
  }
  async function refresh() {
    const r = await send("GET", "/ui/api/approvals");
    if (!r.ok || !r.data) return;
    body.textContent = "";
    if (r.data.approvals.length === 0) {
      const tr = body.insertRow();
      tr.className = "empty";
      const td = tr.insertCell();
      td.colSpan = 8;
      td.textContent = "No call is waiting.";
      return;
    }
    for (const a of r.data.approvals) {
      const tr = body.insertRow();
      tr.dataset.approval = a.id;
      for (const c of [a.tool, a.provider, a.session || "", a.client || "", a.args, a.replica || "", a.expires.replace("T", " ").replace(/\..*/, "")]) {
        const td = tr.insertCell();
        td.textContent = c;
      }
      const td = tr.insertCell();
      for (const [label, ok, remember, cls] of [["Approve", true, "", "approve"],
        ["For this session", true, "session", "approve-session"], ["Always allow", true, "always", "approve-always"],
        ["Deny", false, "", "deny"]]) {
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = label;
        b.className = cls;
        b.addEventListener("click", function () { answer(a.id, ok, remember); });
        td.appendChild(b);
      }
    }
  }
  refresh();
  setInterval(refresh, 1000);
}

// setupPins approves a changed tool definition (the pins view).
function setupPins() {
  const err = document.getElementById("pin-error");
  document.querySelectorAll("button.approve-pin").forEach(function (b) {
    b.addEventListener("click", async function () {
      b.disabled = true;
      const r = await send("POST", "/ui/api/pins/" + encodeURIComponent(b.dataset.tool) + "/approve");
      if (!r.ok) {
        err.textContent = (r.data && r.data.message) || ("approve failed: " + r.status);
        err.hidden = false;
        b.disabled = false;
        return;
      }
      location.reload();
    });
  });
}

function setupLogout() {
  const b = document.getElementById("logout");
  if (!b) return;
  b.addEventListener("click", async function () {
    await send("POST", "/ui/logout");
    location.href = "/ui/login";
  });
}

document.addEventListener("DOMContentLoaded", function () {
  setupToggles();
  setupRestart();
  setupUpstreamLogin();
  setupProviderPoll();
  setupCharts();
  setupCallForm();
  setupAudit();
  setupApprovals();
  setupPins();
  setupLogout();
});
