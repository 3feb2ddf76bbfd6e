#!/usr/bin/env node
// Interop driver for code mode: the official MCP TypeScript SDK calls
// execute_javascript with scripts that search, call tools and combine their
// results, then a script whose tool call is denied.
//
// Usage: node ts-code.mjs <workdir> <command> [args...]
//
// Prints ONE JSON object: {tools, combined, denied, after} (each call's
// isError, text and structuredContent), or {fatal, serverStderr} with exit 1
// when the session itself failed. The Go test (code_test.go) asserts on it.
// Bounded by a per-request timeout and a watchdog, like ts-client.mjs.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";

const [workdir, command, ...commandArgs] = process.argv.slice(2);
const opts = { timeout: 20000 };
let serverStderr = "";

function emit(obj, code) {
  process.stdout.write(JSON.stringify(obj) + "\n", () => process.exit(code));
}

const transport = new StdioClientTransport({
  command,
  args: commandArgs,
  cwd: workdir,
  env: { ...getDefaultEnvironment(), ...process.env },
  stderr: "pipe",
});
transport.stderr?.on("data", (chunk) => {
  if (serverStderr.length < 65536) serverStderr += chunk.toString("utf8");
});
const client = new Client({ name: "agent-tools-interop-code", version: "0.0.0" }, { capabilities: {} });
const watchdog = setTimeout(async () => {
  try { await client.close(); } catch {}
  emit({ fatal: "ts-code exceeded 90000 ms", serverStderr }, 1);
}, 90000);

const call = async (code) => {
  const res = await client.callTool({ name: "execute_javascript", arguments: { code } }, undefined, opts);
  const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  return { isError: res.isError === true, text, structuredContent: res.structuredContent };
};

try {
  await client.connect(transport, opts);
  const out = {};
  out.tools = (await client.listTools({}, opts)).tools.map((t) => t.name);
  out.combined = await call(`
    const [greeter] = tools.search("greet someone by name", {limit: 1});
    const [hello, loud] = await Promise.all([
      tools.call(greeter.name, {name: "Ada"}),
      tools.call("shout", {text: "code mode"}),
    ]);
    return {greeter: greeter.name, signature: greeter.signature, hello: hello.split("\\n")[0], loud: loud.trim()};`);
  out.denied = await call(`
    try { await tools.call("secret", {}); return "not thrown" } catch (e) { return {code: e.code, message: e.message} }`);
  out.after = await call(`const r = await tools.call("shout", {text: "still serving"}); r.trim()`);
  clearTimeout(watchdog);
  await client.close();
  emit(out, 0);
} catch (err) {
  clearTimeout(watchdog);
  try { await client.close(); } catch {}
  emit({ fatal: String(err?.stack ?? err), serverStderr }, 1);
}
