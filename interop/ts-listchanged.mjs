#!/usr/bin/env node
// Interop driver: the official MCP TypeScript SDK, connected over Streamable
// HTTP, watching notifications/tools/list_changed while the Go test toggles
// plugins of the embedded booking example.
//
// Usage: node ts-listchanged.mjs <http://host:port/mcp> <changes>
//
// Prints one JSON line per step on stdout: {"step":"listed","tools":[...]}
// once connected, then, for each of <changes> notifications, after it arrived
// and tools/list was read again: {"step":"changed","tools":[...]}. The Go test
// toggles a plugin after each line it reads. Every wait is bounded
// (INTEROP_REQUEST_TIMEOUT_MS, default 20000); on failure it prints
// {"fatal": "..."} and exits 1.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const TIMEOUT_MS = Number(process.env.INTEROP_REQUEST_TIMEOUT_MS || 20000);
const [url, changesArg] = process.argv.slice(2);
const changes = Number(changesArg || 2);

function line(obj) {
  return new Promise((resolve) => process.stdout.write(JSON.stringify(obj) + "\n", resolve));
}

async function fatal(err) {
  await line({ fatal: String(err?.stack || err) });
  process.exit(1);
}

// Notifications are queued so that one arriving before we wait is not lost.
const pending = [];
let wake = null;
function nextChange() {
  if (pending.length > 0) return Promise.resolve(pending.shift());
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no list_changed within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    wake = () => { clearTimeout(timer); wake = null; resolve(pending.shift()); };
  });
}

async function names(client) {
  const res = await client.listTools({}, { timeout: TIMEOUT_MS });
  return res.tools.map((t) => t.name).sort();
}

async function main() {
  const client = new Client({ name: "ts-listchanged", version: "1.0.0" });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    pending.push(Date.now());
    if (wake) wake();
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)), { timeout: TIMEOUT_MS });
  await line({ step: "listed", tools: await names(client) });
  for (let i = 0; i < changes; i++) {
    await nextChange();
    await line({ step: "changed", tools: await names(client) });
  }
  await client.close();
  process.exit(0);
}

setTimeout(() => fatal(new Error("watchdog: the whole run took too long")), TIMEOUT_MS * (changes + 2)).unref();
main().catch(fatal);
