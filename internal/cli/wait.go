package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/provider"
)

// awaitProviders waits for providers still starting (an upstream that
// npx is still downloading) up to their start-up timeout, so that doctor
// and list report them as they are rather than "starting", with a progress
// line on stderr once the wait is noticeable. It returns the doctor lines
// of the providers that never became ready.
func awaitProviders(ctx context.Context, env *Env, a *app.App) []provider.Diagnostic {
	max := env.StartWait
	if max <= 0 {
		max = app.DefaultStartWait
	}
	var shown bool
	var lastLine time.Duration
	never := a.WaitStarted(ctx, max, func(ids []string, waited time.Duration) {
		if waited < time.Second {
			return // a quick start shows nothing
		}
		msg := fmt.Sprintf("waiting for %s to start (%s of up to %s)", strings.Join(ids, ", "), waited.Round(time.Second), max)
		switch {
		case env.Progress: // a terminal: one line, rewritten
			fmt.Fprintf(env.Stderr, "\r\x1b[K%s", printable(msg))
			shown = true
		case !shown || waited-lastLine >= 5*time.Second: // a log: a line now and then
			fmt.Fprintln(env.Stderr, printable(msg))
			shown, lastLine = true, waited
		}
	})
	if shown && env.Progress {
		fmt.Fprint(env.Stderr, "\r\x1b[K")
	}
	var out []provider.Diagnostic
	for _, id := range never {
		out = append(out, provider.Diagnostic{Provider: id, Item: "start", Status: "failed",
			Reason: fmt.Sprintf("never became ready: still starting after %s (a first download can take longer: run doctor again; else check its command)", max)})
	}
	return out
}
