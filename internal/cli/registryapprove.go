package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/cluster"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/decisions"
	"github.com/agent-tools/agent-tools/internal/pins"
	"github.com/agent-tools/agent-tools/internal/state"
)

// repeated is a flag that may be given more than once (--allow-args).
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// entryApprovals opens the registry approvals the runtime reads for the
// config at cfgPath (beside its pins file, or the shared state with
// server.redis) and loads that config. done releases them.
func entryApprovals(env *Env, f *flags, cfgPath string) (cfg *config.Config, e *pins.Entries, shared state.Store, done func(), err error) {
	cfg, err = app.LoadConfig(app.Options{ConfigPath: f.configPath(env), ProjectDir: env.Dir, Env: env.LookupEnv})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if cfgPath == "" {
		cfgPath = cfg.Path
	}
	path := pins.PathFor(decisions.PathFor(cfgPath, env.Dir), cfgPath != "", env.LookupEnv)
	e = pins.OpenEntries(pins.EntriesPath(path))
	done = func() {}
	if s, closeShared := sharedDecisions(env, f); s != nil {
		e.Share(s)
		shared, done = s, closeShared
	}
	return cfg, e, shared, done, nil
}

// heldEntries are the config's registry entries waiting for approval.
func heldEntries(cfg *config.Config, e *pins.Entries) []app.HeldEntry {
	var out []app.HeldEntry
	for _, pc := range cfg.Providers {
		if held, why := app.EntryHeld(pc, e); held {
			m := pc.Registry
			out = append(out, app.HeldEntry{Provider: pc.ID, Name: m.Name, Version: m.Version, Digest: m.Digest, Reason: why})
		}
	}
	return out
}

// approveEntry approves provider id's registry entry as the config has
// it now, showing what it runs. found is false when id is no held entry
// (the caller may try something else), with why in err.
func approveEntry(ctx context.Context, env *Env, f *flags, cfgPath, id string) (found bool, code int) {
	cfg, e, shared, done, err := entryApprovals(env, f, cfgPath)
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", errorText(err))
		return true, ExitFailed
	}
	defer done()
	pc, ok := cfg.Provider(id)
	if !ok || pc.Registry == nil {
		return false, ExitFailed
	}
	m := pc.Registry
	held, _ := app.EntryHeld(*pc, e)
	switch {
	case pc.Pin != "quarantine":
		fmt.Fprintf(env.Stdout, "%s: not held (it has no pin: quarantine; it runs like any provider)\n", id)
		return true, ExitOK
	case !held:
		fmt.Fprintf(env.Stdout, "%s: %s@%s is approved as it is; nothing to approve\n", id, m.Name, m.Version)
		return true, ExitOK
	}
	if text := entryText(cfg.Path, id); text != "" {
		fmt.Fprintf(env.Stdout, "approving what provider %q runs, as %s has it:\n\n%s\n", id, cfg.Path, text)
	}
	if err := e.Approve(pins.EntryApproval{Name: m.Name, Version: m.Version, Digest: m.Digest, Provider: id}); err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return true, ExitFailed
	}
	if shared != nil { // every replica re-reads the approvals now
		bctx, cancel := context.WithTimeout(ctx, 2*state.OpTimeout)
		_ = (&cluster.Changes{Store: shared}).Bump(bctx)
		cancel()
	}
	fmt.Fprintf(env.Stdout, "approved %s: %s@%s (entry %s); a running server starts it within a second; its tools wait for `agent-tools pins approve` (pin: quarantine)\n",
		id, m.Name, m.Version, short(m.Digest))
	return true, ExitOK
}

// entryText is provider id's entry as the file writes it ("" when it
// cannot be read back).
func entryText(path, id string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	doc, err := parseDoc(data)
	if err != nil {
		return ""
	}
	for _, m := range doc.marked() {
		if m.id == id {
			text, err := renderEntry(m.node)
			if err != nil {
				return ""
			}
			return indent(text, 2)
		}
	}
	return ""
}

// approve is `registry approve ID`.
func (r *regCmd) approve(ctx context.Context, id string) int {
	cfgPath := r.f.configPath(r.env)
	if cfgPath == "" {
		cfgPath, _ = config.Find(r.env.Dir)
	}
	if cfgPath == "" {
		return r.fail(errors.New("no agent-tools.yaml here: nothing was added from a registry"))
	}
	found, code := approveEntry(ctx, r.env, r.f, cfgPath, id)
	if !found {
		return r.fail(fmt.Errorf("%s has no provider %q added from a registry (agent-tools registry outdated lists them)", cfgPath, id))
	}
	return code
}
