package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"text/tabwriter"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/cluster"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/decisions"
	"github.com/agent-tools/agent-tools/internal/pins"
	"github.com/agent-tools/agent-tools/internal/state"
)

// runPins lists the pinned tool definitions and approves changed ones
// (docs/pins.md): agent-tools.pins.json next to the config, or the shared
// state with server.redis. A running server picks an approval up within a
// second and brings a quarantined tool back.
func runPins(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "pins", "pins list|approve NAME [--config FILE] [--json]").withJSON().
		verb("list", "pins list [--config FILE] [--json]", "config", "json").verb("approve", "pins approve NAME [--config FILE]", "config")
	pos, ok := f.parse(args)
	if !ok {
		return ExitUsage
	}
	if len(pos) == 0 {
		f.Usage()
		return ExitUsage
	}
	cfgPath := f.configPath(env)
	if cfgPath == "" {
		cfgPath, _ = config.Find(env.Dir) // ./agent-tools.yaml, as serve finds it
	}
	path := pins.PathFor(decisions.PathFor(cfgPath, env.Dir), cfgPath != "", env.LookupEnv)
	store, err := pins.OpenIndexed(path, pins.IndexPath(path, env.LookupEnv), pins.Warn, nil) // an approval keeps serve's index current
	shared, closeShared, serr := sharedSigned(env, f)
	if serr != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", serr)
		return ExitFailed
	}
	if shared != nil {
		defer closeShared()
		store.Share(shared) // replicas keep pins in Redis
		err = nil
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return ExitFailed
	}
	switch {
	case pos[0] == "list" && len(pos) == 1:
		return listPins(env, f, store, heldFor(env, f, cfgPath))
	case pos[0] == "approve" && len(pos) == 2:
		// A provider id whose registry entry waits for approval: the
		// entry is approved (registry approve does the same).
		if cfgPath != "" && slices.ContainsFunc(heldFor(env, f, cfgPath), func(h app.HeldEntry) bool { return h.Provider == pos[1] }) {
			_, code := approveEntry(ctx, env, f, cfgPath, pos[1])
			return code
		}
		r, err := store.Approve(pos[1])
		if errors.Is(err, pins.ErrNoChange) {
			fmt.Fprintf(env.Stdout, "%s: its definition has not changed since it was pinned; nothing to approve\n", r.Tool)
			return ExitOK
		}
		if err != nil {
			fmt.Fprintln(env.Stderr, "agent-tools:", err)
			return ExitFailed
		}
		if shared != nil { // every replica re-reads the pins now, not at its next second
			bctx, cancel := context.WithTimeout(ctx, 2*state.OpTimeout)
			_ = (&cluster.Changes{Store: shared}).Bump(bctx)
			cancel()
		}
		fmt.Fprintf(env.Stdout, "approved %s (pinned %s); a running server serves it within a second\n", r.Tool, short(r.Digest))
		return ExitOK
	}
	f.Usage()
	return ExitUsage
}

type pinLine struct {
	pins.Record
	Status string `json:"status"` // pinned | changed | new | suspicious
	// Diff is the one-line summary; Changes the field-by-field, line-level
	// diff (canonical JSON) a person approving reads.
	Diff    string             `json:"diff,omitempty"`
	Changes []pins.FieldChange `json:"changes,omitempty"`
}

// heldFor are the registry entries of the config at cfgPath waiting for
// approval (none when it cannot be read: the runtime says why).
func heldFor(env *Env, f *flags, cfgPath string) []app.HeldEntry {
	if cfgPath == "" {
		return nil
	}
	cfg, e, _, done, err := entryApprovals(env, f, cfgPath)
	if err != nil {
		return nil
	}
	defer done()
	return heldEntries(cfg, e)
}

func listPins(env *Env, f *flags, store *pins.Store, held []app.HeldEntry) int {
	recs, err := store.ListErr()
	if err != nil {
		// "No pins" must not be said of pins that could not be read.
		fmt.Fprintf(env.Stderr, "agent-tools: cannot read the pins in %s: %v\n", store.Where(), err)
		if store.Where() == "shared state (server.redis)" {
			fmt.Fprintln(env.Stderr, "  the shared store (server.redis) is unreachable; check that Redis is running")
		}
		return ExitFailed
	}
	var lines []pinLine
	for _, r := range recs {
		l := pinLine{Record: r, Status: r.Status()}
		if r.Changed != nil {
			l.Changes = pins.Changes(r.Def, r.Changed.Def)
			if r.Digest != "" {
				l.Diff = pins.Diff(r.Def, r.Changed.Def)
			}
		}
		lines = append(lines, l)
	}
	if f.json {
		if lines == nil {
			lines = []pinLine{}
		}
		if held == nil {
			held = []app.HeldEntry{}
		}
		return writeJSON(env.Stdout, map[string]any{"where": store.Where(), "pins": lines, "held": held})
	}
	for _, h := range held {
		fmt.Fprintf(env.Stdout, "provider %s (%s@%s) is not started: nothing of it runs until its entry is approved\n  approve with: %s\n",
			h.Provider, h.Name, h.Version, app.ApproveCommand(h.Provider))
	}
	if len(held) > 0 && len(lines) > 0 {
		fmt.Fprintln(env.Stdout)
	}
	if len(lines) == 0 {
		fmt.Fprintln(env.Stdout, "no pinned definitions in", store.Where(), "(tools are pinned when a server first lists them)")
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tPROVIDER\tSTATUS\tDIGEST\tSINCE")
	for _, l := range lines {
		d := l.Digest
		if d == "" && l.Changed != nil {
			d = l.Changed.Digest
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Tool, l.Provider, l.Status, short(d), l.Time.Format("2006-01-02 15:04"))
	}
	tw.Flush()
	for _, l := range lines {
		if l.Status == "pinned" {
			continue
		}
		switch l.Status {
		case "new":
			fmt.Fprintf(env.Stdout, "\n%s is new beside its provider's pinned tools:\n", l.Tool)
		case "changed":
			fmt.Fprintf(env.Stdout, "\n%s changed since it was pinned:\n", l.Tool)
		default:
			fmt.Fprintf(env.Stdout, "\n%s was flagged by the definition scanner:\n", l.Tool)
		}
		fmt.Fprint(env.Stdout, pins.Unified(l.Changes, "  "))
		fs := l.Findings
		if l.Changed != nil {
			fs = l.Changed.Findings
		}
		for _, fd := range fs {
			fmt.Fprintf(env.Stdout, "  scanner: %s\n", fd)
		}
		fmt.Fprintf(env.Stdout, "  approve with: agent-tools pins approve %s\n", l.Tool)
	}
	return ExitOK
}

// short is a digest's first 12 hex digits, enough to tell two apart.
func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}
