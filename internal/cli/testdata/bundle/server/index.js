// A minimal MCP server over stdio (newline-delimited JSON-RPC), packed into
// an MCP bundle by the registry tests (internal/cli/registry_test.go).
const readline = require('readline');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let msg;
  try { msg = JSON.parse(line); } catch { return; }
  if (msg.id === undefined) return; // a notification
  const reply = (result) => send({ jsonrpc: '2.0', id: msg.id, result });
  switch (msg.method) {
    case 'initialize':
      return reply({ protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} },
        serverInfo: { name: 'notes-bundle', version: '1.0.0' } });
    case 'ping':
      return reply({});
    case 'tools/list':
      return reply({ tools: [{ name: 'note', description: 'Returns the note stored under a key.',
        inputSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] } }] });
    case 'tools/call':
      return reply({ content: [{ type: 'text',
        text: `note ${msg.params.arguments.key}: ${process.env.NOTES_GREETING || 'no greeting'}` }] });
    default:
      send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'method not found' } });
  }
});
