// Package faults is the runtime's fault suite: a hostile review's findings
// turned into tests that `go test ./...` runs. Fake upstreams (this test
// binary re-executed in an upstream mode, an in-process HTTP server, and
// shell scripts) crash mid-call, hang, stop reading, exit at start, never
// answer initialize, flood, print junk, malformed JSON, wrong reply ids and
// a 20 MB line, echo the secrets of their environment, argv and headers,
// and leave background and setsid children. The runtime under test is the
// real command line (`agent-tools serve`, in process, over stdio and
// Streamable HTTP). For every case the suite asserts that the runtime stays
// up, that the client gets the documented error code with a reason, that no
// secret canary appears in any output (results, stderr, audit, doctor,
// metrics), that no child process survives the runtime, and that no call
// succeeds with output it did not really get.
//
// The secret-leak cases (leak26_test.go) add OpenAPI services that echo the
// bearer in every encoding, point servers[0] at another origin, redirect
// through encoded dot segments and nest 3,000 levels deep, a spec URL with a
// token in its query, a script that prints its environment, and the
// console's pages and API.
//
// Run with -v to print the table of cases (case, tries, outcome) that the
// README reports.
package faults
