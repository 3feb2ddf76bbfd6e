package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"text/tabwriter"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/cluster"
	"github.com/agent-tools/agent-tools/internal/decisions"
	"github.com/agent-tools/agent-tools/internal/state"
)

// runDecisions lists, revokes and clears the "always allow" answers people
// gave through elicitation (agent-tools.decisions.json next to the config).
func runDecisions(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "decisions", "decisions list|revoke NAME|clear [--config FILE] [--json]").withJSON().
		verb("list", "decisions list [--config FILE] [--json]", "config", "json").
		verb("revoke", "decisions revoke NAME [--config FILE]", "config").verb("clear", "decisions clear [--config FILE]", "config")
	pos, ok := f.parse(args)
	if !ok {
		return ExitUsage
	}
	if len(pos) == 0 {
		f.Usage()
		return ExitUsage
	}
	path := decisions.PathFor(f.configPath(env), env.Dir)
	store, err := decisions.Open(path, nil)
	shared, closeShared, serr := sharedSigned(env, f)
	if serr != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", serr)
		return ExitFailed
	}
	if shared != nil {
		defer closeShared()
		store.Share(shared) // replicas keep "always" decisions in Redis
		path, err = store.Where(), nil
	}
	var corrupt *decisions.CorruptError
	switch {
	case pos[0] == "clear" && len(pos) == 1:
		if err := store.Clear(); err != nil {
			fmt.Fprintln(env.Stderr, "agent-tools:", err)
			return ExitFailed
		}
		fmt.Fprintln(env.Stdout, "cleared", path)
		return ExitOK
	case errors.As(err, &corrupt):
		fmt.Fprintf(env.Stderr, "agent-tools: %v\n", err)
		return ExitFailed
	case err != nil:
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return ExitFailed
	case pos[0] == "list" && len(pos) == 1:
		return listDecisions(ctx, env, f, store)
	case pos[0] == "revoke" && len(pos) == 2:
		found, err := store.Revoke(pos[1])
		if err != nil {
			fmt.Fprintln(env.Stderr, "agent-tools:", err)
			return ExitFailed
		}
		if !found {
			fmt.Fprintf(env.Stderr, "agent-tools: no decision for %q (canonical names only; see agent-tools decisions list)\n", pos[1])
			return ExitFailed
		}
		fmt.Fprintln(env.Stdout, "revoked", pos[1])
		return ExitOK
	}
	f.Usage()
	return ExitUsage
}

type decisionLine struct {
	decisions.Record
	Status decisions.Status `json:"status"`
	// Owner is the provider that has the name now ("" when none does).
	Owner string `json:"owner,omitempty"`
}

// listDecisions shows each decision with whether it still applies: the
// catalog is loaded to see who owns each name now.
func listDecisions(ctx context.Context, env *Env, f *flags, store *decisions.Store) int {
	recs := store.List()
	var lines []decisionLine
	if len(recs) > 0 {
		a, code := load(ctx, env, f, stderrLog(env, slog.LevelError), nil)
		if a == nil {
			return code
		}
		defer a.Close()
		for _, r := range recs {
			owner := ""
			if t, ok := a.Registry().Lookup(r.Tool); ok {
				owner = t.Provider
			}
			lines = append(lines, decisionLine{Record: r, Status: decisions.Classify(r, owner), Owner: owner})
		}
	}
	if f.json {
		if lines == nil {
			lines = []decisionLine{}
		}
		return writeJSON(env.Stdout, map[string]any{"file": store.Path(), "decisions": lines})
	}
	if len(lines) == 0 {
		fmt.Fprintln(env.Stdout, "no remembered decisions in", store.Path())
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tPROVIDER\tIDENTITY\tSTATUS\tSINCE")
	for _, l := range lines {
		status, who := string(l.Status), l.Identity
		switch l.Status {
		case decisions.Stale:
			status = "stale (no such tool now; never applied)"
			if l.Owner != "" {
				status = fmt.Sprintf("stale (the name now belongs to %q; never applied)", l.Owner)
			}
		case decisions.Legacy:
			status, who = "legacy (made for every caller by an older version; never applied: approve again)", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Tool, l.Provider, who, status, l.Time.Format("2006-01-02 15:04"))
	}
	tw.Flush()
	return ExitOK
}

// sharedSigned is the Redis store of a config with server.redis, sealed
// with the cluster key as the replicas' is, so that list, revoke, clear
// and approve act on what every replica uses (nil without server.redis).
// Without the cluster key nothing it wrote would verify on a replica, nor
// anything a replica wrote here: an error.
func sharedSigned(env *Env, f *flags) (*state.Signed, func(), error) {
	cfg, err := app.LoadConfig(app.Options{ConfigPath: f.config, ProjectDir: env.Dir, Env: env.LookupEnv})
	if err != nil || cfg.Server.Redis.URL == "" {
		return nil, nil, nil
	}
	key, err := cluster.LoadKey(cfg.Server.ClusterKey, env.LookupEnv)
	if err != nil {
		return nil, nil, err
	}
	if key.Generated {
		return nil, nil, fmt.Errorf("server.redis is set but no cluster key is: the replicas' decisions, pins and approvals in Redis are signed with it; set %s", cluster.EnvKey)
	}
	r, err := state.NewRedis(cfg.Server.Redis.URL, "")
	if err != nil {
		return nil, nil, nil
	}
	return key.Signed(r, nil), func() { r.Close() }, nil
}

// sharedDecisions is sharedSigned for a caller with no error path of its
// own: an error is written to stderr and there is no shared store.
func sharedDecisions(env *Env, f *flags) (*state.Signed, func()) {
	s, done, err := sharedSigned(env, f)
	if err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return nil, nil
	}
	return s, done
}
