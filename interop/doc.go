// Package interop holds end-to-end tests of the agent-tools binary against
// real third-party MCP peers from npm (pinned in package.json): the official
// TypeScript SDK client (driven by ts-client.mjs), the MCP Inspector CLI, the
// official conformance suite (against agent-tools itself, and against the
// go-sdk's reference server directly and through an agent-tools passthrough),
// and the reference servers server-everything, server-filesystem and
// server-memory as upstream providers. It has no non-test code; see
// interop_test.go, conformance_test.go and upstream_test.go.
//
// Run: cd interop && npm ci && cd .. && go test ./interop/
package interop
