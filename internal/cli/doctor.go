package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/proc"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
)

func runDoctor(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "doctor", "doctor [--config FILE] [--mode MODE] [--json]").withJSON().withMode()
	if pos, ok := f.parse(args); !ok || len(pos) > 0 {
		return ExitUsage
	}
	// Doctor's own report says why things were skipped; keep the log quiet.
	a, code := load(ctx, env, f, stderrLog(env, slog.LevelError), nil)
	if a == nil {
		return code
	}
	defer a.Close()
	never := awaitProviders(ctx, env, a)
	diags := append(append(a.Diagnostics(), never...), readOnlyHints(a.Registry())...)
	// Names: flat names clients refuse (docs/modes.md), policy rules that match nothing.
	diags = append(diags, a.Registry().FlatNameDiagnostics(a.Mode == facade.Flat)...)
	diags = append(diags, a.Registry().RuleDiagnostics(a.Config().Policy.Deny, a.Config().Policy.Allow)...)
	diags = append(diags, sharedStateDiag(ctx, a.Shared()))
	diags = append(diags, secretDiags(ctx, a.Config(), a.Secrets())...) // doctor_secrets.go
	diags = append(diags, tokenKeyDiag(env)...)
	traces, tracesCheck := tracesDiag(env)
	diags = append(diags, tracesCheck)
	failed := false
	for _, d := range diags {
		failed = failed || d.Status == "failed"
	}
	status := ExitOK
	if failed {
		status = ExitFailed
	}
	if f.json {
		// The provider list is the runtime's Status, as runtime_status reports it.
		writeJSON(env.Stdout, map[string]any{"config": a.Config().Path, "mode": a.Mode, "ok": !failed, "checks": diags,
			"providers": a.Status().Providers, "containment": proc.Containment(), "traces": traces.String()})
		return status
	}
	cfg := a.Config().Path
	if cfg == "" {
		cfg = "none (zero-config)"
	}
	fmt.Fprintf(env.Stdout, "config: %s\nmode:   %s\n", cfg, a.Mode)
	// How the processes of a call are contained (cgroup v2 or process group).
	fmt.Fprintf(env.Stdout, "containment: %s\n", proc.Containment())
	// Traces: where spans go (scheme and host only, never headers or credentials).
	fmt.Fprintf(env.Stdout, "traces: %s\n\n", traces)
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tITEM\tSTATUS\tWHY")
	for _, d := range diags {
		item := d.Item
		if item == "" {
			item = "-"
		}
		// Reasons quote upstreams (a --version line, stderr): never raw control bytes.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", printable(d.Provider), printable(oneLine(item, 200)), d.Status, printable(oneLine(d.Reason, 1000)))
	}
	tw.Flush()
	return status
}

// sharedStateDiag says where loop-guard counts, rate limits and used tokens
// live, pinging Redis when it is configured (never showing its URL).
func sharedStateDiag(ctx context.Context, sh *app.Shared) provider.Diagnostic {
	d := provider.Diagnostic{Provider: "server", Item: "shared state", Status: "ok", Reason: "this process only (memory); set server.redis to share it across replicas"}
	if sh.Redis == nil {
		return d
	}
	st := sh.Check(ctx)
	if st.Degraded {
		d.Status, d.Reason = "warning", "Redis at "+sh.Redis.Addr()+" unreachable, replicas fall back to local state: "+st.Reason
		return d
	}
	d.Reason = "Redis at " + sh.Redis.Addr() + " (replica " + sh.Replica + ")"
	if sh.Key.Generated {
		d.Status, d.Reason = "warning", d.Reason+"; no cluster key: other replicas cannot verify this one's tokens (set AGENT_TOOLS_CLUSTER_KEY)"
	}
	return d
}

// readOnlyHints tell how to mark read-only tools of an upstream whose tools
// all need confirmation because nothing says they are read-only.
func readOnlyHints(reg *registry.Registry) []provider.Diagnostic {
	var out []provider.Diagnostic
	for _, p := range reg.Providers() {
		if p.Info.Kind != "mcp" || !p.Info.RequireConfirm || !p.Enabled {
			continue
		}
		var unknown []string
		for _, t := range reg.Tools(p.Info.ID) {
			if !t.ReadOnly {
				unknown = append(unknown, t.Name)
			}
		}
		if len(unknown) == 0 {
			continue
		}
		out = append(out, provider.Diagnostic{Provider: p.Info.ID, Item: "readonly", Status: "ok",
			Reason: fmt.Sprintf("%d tools are not known to be read-only, so calls need confirmation; mark the read-only ones with `readonly: [%s]` on provider %q, or set `trustAnnotations: true` to believe the server's readOnlyHint",
				len(unknown), strings.Join(readOnlyExamples(unknown), ", "), p.Info.ID)})
	}
	return out
}

// readVerbs start the names of tools that usually only read.
var readVerbs = map[string]bool{"get": true, "list": true, "read": true, "search": true, "find": true, "open": true,
	"show": true, "describe": true, "fetch": true, "query": true, "view": true, "lookup": true, "count": true, "check": true, "status": true, "inspect": true}

// readOnlyExamples picks up to two names that look like reads (their first
// word is a read verb) for the readonly: hint: an example must never
// suggest marking a mutation read-only. With none, a placeholder.
func readOnlyExamples(names []string) []string {
	var out []string
	for _, n := range names {
		first := strings.FieldsFunc(n, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' || r == '/' })
		if len(first) == 0 {
			continue
		}
		w := first[0]
		for i, r := range w { // camelCase: the first word ends at the first capital
			if i > 0 && 'A' <= r && r <= 'Z' {
				w = w[:i]
				break
			}
		}
		if readVerbs[strings.ToLower(w)] {
			out = append(out, n)
			if len(out) == 2 {
				break
			}
		}
	}
	if len(out) == 0 {
		return []string{"<tool>", "…"}
	}
	return out
}
