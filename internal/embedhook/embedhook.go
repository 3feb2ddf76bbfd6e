// Package embedhook lets the agent-tools binary (internal/cli) reach what the
// public package keeps unexported: the app behind a Runtime, the pipeline
// middleware the binary adds (metrics, shutdown drain) and the binary's
// config lookup. Package agenttools fills these at init; nothing outside
// this module can import this package, so the public surface stays minimal.
package embedhook

import (
	"io"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// Extension is what the binary adds to an *agenttools.Options.
type Extension struct {
	// Middleware runs in every call's pipeline (app.Options.Middleware).
	Middleware []pipeline.Middleware
	// Tracer traces every call (app.Options.Tracer); nil when tracing is off.
	Tracer pipeline.Tracer
	// Providers are in-process providers (app.Options.Providers).
	Providers []provider.Provider
	// FindConfig looks for agent-tools.yaml in the project directory when no
	// file is named, and falls back to zero-config (repository scripts and
	// the built-ins) instead of the embedded default.
	FindConfig bool
	// Stdin and Stdout replace the process's for ServeStdio (tests run the
	// binary in-process).
	Stdin  io.Reader
	Stdout io.Writer
	// Profile serves one profile of the config (serve --profile; app.Options.Profile).
	Profile string
}

var (
	// App returns the app of a started *agenttools.Runtime (nil before Start).
	App func(rt any) *app.App
	// Extend applies x to an *agenttools.Options before New.
	Extend func(opts any, x Extension)
)
