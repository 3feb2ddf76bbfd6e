package cli

import (
	"context"
	"fmt"
	"log/slog"
	"text/tabwriter"

	"github.com/agent-tools/agent-tools/internal/proc"
)

func runDoctor(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "doctor", "doctor [--config FILE] [--json]").withJSON()
	if pos, ok := f.parse(args); !ok || len(pos) > 0 {
		return ExitUsage
	}
	// Doctor's own report says why things were skipped; keep the log quiet.
	a, code := load(ctx, env, f, stderrLog(env, slog.LevelError), nil)
	if a == nil {
		return code
	}
	defer a.Close()
	diags := a.Diagnostics()
	failed := false
	for _, d := range diags {
		failed = failed || d.Status == "failed"
	}
	status := ExitOK
	if failed {
		status = ExitFailed
	}
	if f.json {
		writeJSON(env.Stdout, map[string]any{"config": a.Config.Path, "mode": a.Mode, "ok": !failed, "checks": diags, "containment": proc.Containment()})
		return status
	}
	cfg := a.Config.Path
	if cfg == "" {
		cfg = "none (zero-config)"
	}
	fmt.Fprintf(env.Stdout, "config: %s\nmode:   %s\n", cfg, a.Mode)
	// How the processes of a call are contained (cgroup v2 or process group).
	fmt.Fprintf(env.Stdout, "containment: %s\n\n", proc.Containment())
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tITEM\tSTATUS\tWHY")
	for _, d := range diags {
		item := d.Item
		if item == "" {
			item = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Provider, item, d.Status, d.Reason)
	}
	tw.Flush()
	return status
}
