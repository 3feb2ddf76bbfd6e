package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/jsrun"
	"github.com/agent-tools/agent-tools/internal/proc"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/provider/mcp"
	"github.com/agent-tools/agent-tools/internal/registry"
)

func runDoctor(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "doctor", "doctor [--refresh] [--config FILE] [--mode MODE] [--json]").withJSON().withMode()
	refresh := f.Bool("refresh", false, "ask every upstream listed from the cache of an earlier run for its tools now (starts it)")
	if pos, ok := f.parse(args); !ok || len(pos) > 0 {
		return ExitUsage
	}
	// Doctor's own rows say why a provider failed or was skipped: its log
	// keeps only what concerns no provider (a corrupt decisions file), so
	// the table is not interleaved with lines that repeat it.
	a, code := load(ctx, env, f, slog.New(withoutProviders{stderrLog(env, slog.LevelError).Handler(), false}), nil)
	if a == nil {
		return code
	}
	defer a.Close()
	never := awaitProviders(ctx, env, a)
	var unasked map[string]error
	if *refresh {
		unasked = a.RefreshLive(ctx)
	}
	diags := append(append(a.Diagnostics(), never...), readOnlyHints(a.Registry())...)
	diags = append(diags, definitionDiags(a, unasked)...)
	// Names: flat names clients refuse (docs/modes.md), policy rules that match nothing.
	diags = append(diags, a.Registry().FlatNameDiagnostics(a.Mode == facade.Flat)...)
	diags = append(diags, a.Registry().RuleDiagnostics(a.Config().Policy.Deny, a.Config().Policy.Allow)...)
	diags = append(diags, unusedAuthDiags(env, f, a.Config(), diags)...)
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
			"providers": a.Status().Providers, "containment": proc.Containment(), "scripts": scriptIsolation(), "scriptLimits": jsrun.ProcessLimits(), "traces": traces.String()})
		return status
	}
	cfg := a.Config().Path
	if cfg == "" {
		cfg = "none (zero-config)"
	}
	// What a person came for first: the config, the mode and a row per
	// provider; how calls are contained comes after the table.
	fmt.Fprintf(env.Stdout, "config: %s\nmode:   %s\n\n", cfg, a.Mode)
	defer func() {
		// How the processes of a call are contained (cgroup v2 or process group).
		fmt.Fprintf(env.Stdout, "\ncontainment: %s\n", proc.Containment())
		// How execute_javascript scripts and skills are contained (jsrun.go).
		fmt.Fprintf(env.Stdout, "scripts: %s\n", scriptLimitLines())
		// Traces: where spans go (scheme and host only, never headers or credentials).
		fmt.Fprintf(env.Stdout, "traces: %s\n", traces)
	}()
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

// definitionDiags say, per provider, that its tools are still listed from
// the cache of an earlier run (so a changed upstream shows its old
// definitions until it is asked), and which upstreams --refresh could not
// ask. Changed, new, flagged and held definitions are the pins' own rows.
func definitionDiags(a *app.App, unasked map[string]error) []provider.Diagnostic {
	var out []provider.Diagnostic
	count := map[string]int{}
	for _, d := range a.Definitions() {
		if d.State != app.DefinitionHeld {
			count[d.Provider]++
		}
	}
	for _, id := range a.Cached() {
		if err, failed := unasked[id]; failed {
			out = append(out, provider.Diagnostic{Provider: id, Item: "definitions", Status: "failed",
				Reason: "its upstream could not be asked for its tools (" + err.Error() + "); they are the cache's of an earlier run"})
			continue
		}
		out = append(out, provider.Diagnostic{Provider: id, Item: "definitions", Status: "warning",
			Reason: plural(count[id], "tool", "tools") + " listed from the cache of an earlier run, not checked against the upstream since start: a changed tool shows its old definition until it is (`agent-tools doctor --refresh` or `agent-tools list --refresh` asks it)"})
	}
	return out
}

// unusedAuthDiags note an `auth: {type: oauth}` block that nothing uses: the
// upstream serves its tools (its row is ok) and no login is stored for it,
// so the server never asked for one.
func unusedAuthDiags(env *Env, f *flags, cfg *config.Config, diags []provider.Diagnostic) []provider.Diagnostic {
	ok := map[string]bool{}
	for _, d := range diags {
		if d.Item == "" && d.Status == "ok" {
			ok[d.Provider] = true
		}
	}
	var ids []string
	for _, p := range cfg.Providers {
		if m, isMCP := p.Spec.(*mcp.Spec); isMCP && p.Enabled && ok[p.ID] && m.URL != "" && m.Auth != nil && m.Auth.Type == "oauth" {
			ids = append(ids, p.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	store, _, release, err := tokenStore(env, f)
	if err != nil {
		return nil
	}
	defer release()
	var out []provider.Diagnostic
	for _, id := range ids {
		if e, err := store.Load(id); err != nil || e != nil {
			continue
		}
		out = append(out, provider.Diagnostic{Provider: id, Item: "auth", Status: "warning",
			Reason: "auth: {type: oauth} is unused: the server serves its tools without asking for a login (nothing stored; `agent-tools auth login " + id + "` has nothing to do); remove the block, or keep it if the server will require a login later"})
	}
	return out
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

// withoutProviders drops the log records about a provider or plugin (an
// attribute "provider" or "plugin", on the record or its logger): doctor
// reports those as rows.
type withoutProviders struct {
	slog.Handler
	about bool // the logger's own attributes name a provider
}

func aboutProvider(a slog.Attr) bool { return a.Key == "provider" || a.Key == "plugin" }

func (h withoutProviders) Handle(ctx context.Context, r slog.Record) error {
	about := h.about
	r.Attrs(func(a slog.Attr) bool {
		about = about || aboutProvider(a)
		return !about
	})
	if about {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h withoutProviders) WithAttrs(as []slog.Attr) slog.Handler {
	about := h.about
	for _, a := range as {
		about = about || aboutProvider(a)
	}
	return withoutProviders{h.Handler.WithAttrs(as), about}
}

func (h withoutProviders) WithGroup(name string) slog.Handler {
	return withoutProviders{h.Handler.WithGroup(name), h.about}
}
