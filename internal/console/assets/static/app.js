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
// approval timeout, so a second's delay is fine) and answers them.
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
      td.colSpan = 7;
      td.textContent = "No call is waiting.";
      return;
    }
    for (const a of r.data.approvals) {
      const tr = body.insertRow();
      tr.dataset.approval = a.id;
      for (const c of [a.tool, a.provider, a.session || "", a.client || "", a.args, a.expires.replace("T", " ").replace(/\..*/, "")]) {
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
  setupCallForm();
  setupAudit();
  setupApprovals();
  setupLogout();
});
