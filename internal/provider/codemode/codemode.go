// Package codemode is the contract between code mode's two halves: the
// facade, which publishes the interpreter and lends each script its tools
// (provider.Values.Script), and the built-in provider that runs scripts.
// Neither imports the other; both read the names, the API text and the
// JavaScript side of tools.call (Bridge) from here, which JavaScript
// skills share.
package codemode

import "time"

// Tool is the interpreter's name, host-local (no prefix in any mode).
const Tool = "execute_javascript"

// Provider is the id of the provider that serves Tool (the runtime's own
// tools, config's builtin entry).
const Provider = "builtin"

// DefaultTimeout is a script's wall time when neither the call's
// timeout_ms nor code.timeout says otherwise (tool calls count).
const DefaultTimeout = 30 * time.Second

// API documents the `tools` object for tool descriptions and help.
const API = "In the script, `tools.search(query, {limit})` returns matching tools as [{name, description, signature, readOnly}]; " +
	"`tools.describe(name)` returns one with its inputSchema; `await tools.call(name, args, {confirm})` calls it through the same checks as a direct call " +
	"and returns its result (parsed JSON when the result is JSON), or throws an Error with code, message, hint and correct_shape. " +
	"Run independent calls together with Promise.all. Only what the script returns and prints comes back, so filter and combine results in the script."
