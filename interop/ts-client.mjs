#!/usr/bin/env node
// Interop driver: the official MCP TypeScript SDK as a client of agent-tools.
//
// Usage:
//   node ts-client.mjs <scenario> <workdir> <command> [args...]
//   node ts-client.mjs <scenario> - <http://host:port/mcp>
//
// Spawns `<command> [args...]` over stdio in <workdir> (or connects to the
// Streamable HTTP URL, with "Authorization: Bearer $INTEROP_BEARER" when that
// variable is set), runs the named
// scenario and prints ONE JSON object on stdout describing what it observed
// (tool names, per-step isError / text / structuredContent). The Go test
// (interop_test.go) asserts on that object; this script asserts nothing beyond
// the protocol itself, so a mismatch shows up as a readable Go test failure.
//
// Exit status: 0 when the scenario ran (whatever the server answered),
// 1 when the session itself failed (spawn, handshake, timeout, protocol error);
// the JSON then holds {"fatal": "...", "serverStderr": "..."}.
//
// Bounded: every request has a timeout (INTEROP_REQUEST_TIMEOUT_MS, default
// 20000) and the whole run a watchdog (INTEROP_TIMEOUT_MS, default 90000); the
// client is always closed, which ends the server's stdin and, failing that,
// kills it.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const REQUEST_TIMEOUT_MS = Number(process.env.INTEROP_REQUEST_TIMEOUT_MS || 20000);
const TOTAL_TIMEOUT_MS = Number(process.env.INTEROP_TIMEOUT_MS || 90000);
const STDERR_CAP = 64 * 1024;

const [scenarioName, workdir, command, ...commandArgs] = process.argv.slice(2);

function emit(obj, code) {
  process.stdout.write(JSON.stringify(obj) + "\n", () => process.exit(code));
}


// shape reduces a CallToolResult to what the Go side asserts on. `json` is the
// first text block parsed as JSON when it is JSON (the error envelope is).
function shape(res) {
  const content = Array.isArray(res?.content) ? res.content : [];
  const texts = content.filter((c) => c.type === "text").map((c) => c.text);
  const text = texts.join("\n");
  let json;
  try {
    json = texts.length > 0 ? JSON.parse(texts[0]) : undefined;
  } catch {
    json = undefined;
  }
  return {
    isError: res?.isError === true,
    contentTypes: content.map((c) => c.type),
    text,
    json,
    structuredContent: res?.structuredContent,
  };
}

function toolSummary(t) {
  return {
    name: t.name,
    required: t.inputSchema?.required ?? [],
    properties: Object.keys(t.inputSchema?.properties ?? {}),
    readOnlyHint: t.annotations?.readOnlyHint,
  };
}

const scenarios = {
  // The default progressive facade over the `local` provider.
  async progressive(c) {
    const out = {};
    out.tools = (await c.listAllTools()).map(toolSummary);
    out.help = await c.call("agent_tools_help", {});
    out.discoverAll = await c.call("agent_tools_local_discover", {});
    out.discoverQuery = await c.call("agent_tools_local_discover", { query: "greet someone by name" });
    out.greet = await c.call("agent_tools_local_call", {
      toolName: "greet",
      arguments: { name: "Ada Lovelace ☃" },
    });
    out.touchNoConfirm = await c.call("agent_tools_local_call", {
      toolName: "touch",
      arguments: { file: "progressive-unconfirmed.txt" },
    });
    out.touchConfirm = await c.call("agent_tools_local_call", {
      toolName: "touch",
      arguments: { file: "progressive-confirmed.txt" },
      confirm: true,
    });
    out.fail = await c.call("agent_tools_local_call", { toolName: "fail", arguments: {} });
    out.unknown = await c.call("agent_tools_local_call", { toolName: "gret", arguments: { name: "x" } });
    return out;
  },

  // --mode search: agent_tools_search / agent_tools_call.
  async search(c) {
    const out = {};
    out.tools = (await c.listAllTools()).map(toolSummary);
    out.search = await c.call("agent_tools_search", { query: "greet someone by name" });
    out.greet = await c.call("agent_tools_call", { tool: "greet", arguments: { name: "Grace" } });
    out.touchNoConfirm = await c.call("agent_tools_call", { tool: "touch", arguments: { file: "search-unconfirmed.txt" } });
    out.touchConfirm = await c.call("agent_tools_call", {
      tool: "touch",
      arguments: { file: "search-confirmed.txt" },
      confirm: true,
    });
    return out;
  },

  // --mode flat: every tool under its own name; confirmation via agent_tools_confirm.
  async flat(c) {
    const out = {};
    out.tools = (await c.listAllTools()).map(toolSummary);
    out.greet = await c.call("greet", { name: "Linus" });
    out.touchNoConfirm = await c.call("touch", { file: "flat-unconfirmed.txt" });
    out.touchConfirm = await c.call("touch", { file: "flat-confirmed.txt", agent_tools_confirm: true });
    out.fail = await c.call("fail", {});
    return out;
  },
};

async function main() {
  const scenario = scenarios[scenarioName];
  if (!scenario) {
    emit({ fatal: `unknown scenario ${JSON.stringify(scenarioName)}; known: ${Object.keys(scenarios).join(", ")}` }, 1);
    return;
  }

  let serverStderr = "";
  let transport;
  if (/^https?:\/\//.test(command)) {
    const headers = process.env.INTEROP_BEARER ? { Authorization: `Bearer ${process.env.INTEROP_BEARER}` } : {};
    transport = new StreamableHTTPClientTransport(new URL(command), { requestInit: { headers } });
  } else {
    transport = new StdioClientTransport({
      command,
      args: commandArgs,
      cwd: workdir,
      // Inherit the test's environment (PATH, HOME, GOCOVERDIR...) on top of the SDK's safe defaults.
      env: { ...getDefaultEnvironment(), ...process.env },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (chunk) => {
      if (serverStderr.length < STDERR_CAP) serverStderr += chunk.toString("utf8");
    });
  }

  const client = new Client({ name: "agent-tools-interop-ts", version: "0.0.0" }, { capabilities: {} });
  const opts = { timeout: REQUEST_TIMEOUT_MS };

  let serverPid = null;
  let closed = false;
  const close = async (force) => {
    if (closed) return;
    closed = true;
    try {
      // Ends the server's stdin, then SIGTERM / SIGKILL if it does not exit.
      await client.close();
    } catch {
      // best effort
    }
    // When connect() fails the SDK starts closing on its own and client.close()
    // returns at once: make sure no server outlives this process.
    if (force && serverPid) {
      try {
        process.kill(serverPid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };

  const watchdog = setTimeout(async () => {
    await close(true);
    emit({ fatal: `scenario ${scenarioName} exceeded ${TOTAL_TIMEOUT_MS} ms`, serverStderr }, 1);
  }, TOTAL_TIMEOUT_MS);

  const api = {
    async listAllTools() {
      const tools = [];
      let cursor;
      for (let page = 0; page < 100; page++) {
        const res = await client.listTools(cursor ? { cursor } : {}, opts);
        tools.push(...res.tools);
        cursor = res.nextCursor;
        if (!cursor) break;
      }
      return tools;
    },
    async call(name, args) {
      return shape(await client.callTool({ name, arguments: args }, undefined, opts));
    },
  };

  try {
    const connecting = client.connect(transport, opts);
    serverPid = transport.pid; // spawned synchronously by connect()
    await connecting;
    const observed = {
      scenario: scenarioName,
      serverInfo: client.getServerVersion(),
      protocolCapabilities: client.getServerCapabilities(),
      pinged: (await client.ping(opts)) !== undefined,
      ...(await scenario(api)),
    };
    if (transport instanceof StreamableHTTPClientTransport) {
      // What the HTTP handshake settled: the version and the session (if any).
      observed.protocolVersion = transport.protocolVersion ?? null;
      observed.sessionId = transport.sessionId ?? null;
    }
    await close(false);
    clearTimeout(watchdog);
    emit({ ...observed, serverStderr }, 0);
  } catch (err) {
    await close(true);
    clearTimeout(watchdog);
    emit({ fatal: String(err?.stack || err), serverStderr }, 1);
  }
}

if (!scenarioName || !workdir || !command) {
  emit({ fatal: "usage: node ts-client.mjs <scenario> <workdir> <command> [args...]" }, 1);
} else {
  main();
}
