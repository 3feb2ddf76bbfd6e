// Package interop holds end-to-end tests of the agent-tools binary against
// real third-party MCP peers from npm: the official TypeScript SDK client
// (driven by ts-client.mjs) and the MCP Inspector CLI. It has no non-test
// code; see interop_test.go.
//
// Run: cd interop && npm ci && cd .. && go test ./interop/
package interop
