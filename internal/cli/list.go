package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/index"
)

func runList(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "list", "list [--refresh] [--config FILE] [--json]").withJSON()
	refresh := f.Bool("refresh", false, "ask every upstream listed from the cache of an earlier run for its tools now (starts it)")
	if pos, ok := f.parse(args); !ok || len(pos) > 0 {
		if ok {
			f.Usage()
		}
		return ExitUsage
	}
	log, flush := deferredLog(env)
	defer flush() // warnings go under the table, each once
	a, code := load(ctx, env, f, log, nil)
	if a == nil {
		return code
	}
	defer a.Close()
	status := ExitOK
	if never := awaitProviders(ctx, env, a); len(never) > 0 {
		status = ExitFailed // a listing without them is not the whole list
		for _, d := range never {
			log.Warn("tools missing from the list", "provider", d.Provider, "reason", d.Reason)
		}
	}
	if *refresh {
		failed := a.RefreshLive(ctx)
		for _, id := range slices.Sorted(maps.Keys(failed)) {
			status = ExitFailed // its tools are still the cache's
			log.Warn("upstream not asked: its tools are listed from the cache", "provider", id, "err", failed[id])
		}
	}
	tools := a.Registry().Tools("")
	defs := a.Definitions() // how far each definition is checked (cached, changed, held)
	var held []app.Definition
	for _, d := range defs {
		if d.State == app.DefinitionHeld {
			held = append(held, d)
		}
	}
	slices.SortFunc(held, func(x, y app.Definition) int { return strings.Compare(x.Tool, y.Tool) })
	if f.json {
		type row struct {
			Name        string          `json:"name"`
			Provider    string          `json:"provider"`
			Original    string          `json:"originalName,omitempty"`
			ReadOnly    bool            `json:"readOnly"`
			Description string          `json:"description,omitempty"`
			InputSchema json.RawMessage `json:"inputSchema,omitempty"`
			Definition  string          `json:"definition"`
			Why         string          `json:"definitionReason,omitempty"`
		}
		rows := make([]row, 0, len(tools)+len(held))
		for _, t := range tools {
			d := defs[t.Canonical]
			rows = append(rows, row{t.Canonical, t.Provider, t.Name, t.ReadOnly, t.Description, t.InputSchema, stateOf(d), d.Reason})
		}
		for _, d := range held {
			rows = append(rows, row{Name: d.Tool, Provider: d.Provider, Definition: d.State, Why: d.Reason})
		}
		if code := writeJSON(env.Stdout, rows); code != ExitOK {
			return code
		}
		return status
	}
	marked := map[string][]string{} // state → the tools in it
	for _, t := range tools {
		if s := stateOf(defs[t.Canonical]); s != app.DefinitionOK {
			marked[s] = append(marked[s], t.Canonical)
		}
	}
	for _, d := range held {
		marked[d.State] = append(marked[d.State], d.Tool)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	if len(marked) == 0 {
		fmt.Fprintln(tw, "NAME\tPROVIDER\tREAD-ONLY\tDESCRIPTION")
		for _, t := range tools {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Canonical, t.Provider, yesNo(t.ReadOnly), oneLine(t.Description, 80))
		}
		tw.Flush()
		return status
	}
	// Some definition is not known to be current: a DEFINITION column
	// says which, and a line under the table what each mark means.
	fmt.Fprintln(tw, "NAME\tPROVIDER\tREAD-ONLY\tDEFINITION\tDESCRIPTION")
	for _, t := range tools {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Canonical, t.Provider, yesNo(t.ReadOnly), stateOf(defs[t.Canonical]), oneLine(t.Description, 80))
	}
	for _, d := range held {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Tool, d.Provider, "-", d.State, oneLine(d.Reason, 80))
	}
	tw.Flush()
	fmt.Fprintln(env.Stdout)
	for _, s := range []string{app.DefinitionCached, app.DefinitionChanged, app.DefinitionNew, app.DefinitionFlagged, app.DefinitionHeld} {
		if names := marked[s]; len(names) > 0 {
			fmt.Fprintf(env.Stdout, "%s: %s\n", s, definitionLegend(s, names, a.Cached()))
		}
	}
	return status
}

// stateOf is a listed tool's definition state (ok when unknown).
func stateOf(d app.Definition) string {
	if d.State == "" {
		return app.DefinitionOK
	}
	return d.State
}

// definitionLegend says what a DEFINITION mark means and what to run.
func definitionLegend(state string, names, cached []string) string {
	one := names[0]
	switch state {
	case app.DefinitionCached:
		who, has := strings.Join(cached, ", "), "has"
		if len(cached) > 1 {
			has = "have"
		}
		return fmt.Sprintf("listed from the cache of an earlier run: %s %s not been asked since start, so a tool changed upstream still shows its old definition; `agent-tools list --refresh` asks (and starts) %s",
			who, has, who)
	case app.DefinitionChanged:
		return "the upstream's definition differs from the one approved, and is served (security.pin: warn); `agent-tools pins list` shows the change, `agent-tools pins approve " + one + "` accepts it"
	case app.DefinitionNew:
		return "appeared beside pinned tools and is not approved yet; `agent-tools pins approve " + one + "` accepts it"
	case app.DefinitionFlagged:
		return "the definition scanner flagged it; read `agent-tools pins list`, then `agent-tools pins approve " + one + "` if it is fine"
	}
	return "held back, not callable: " + strings.Join(names, ", ") + "; `agent-tools doctor` says why, `agent-tools pins approve " + one + "` approves it"
}

func runSearch(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "search", "search QUERY [--limit N] [--config FILE] [--json]").withJSON()
	limit := f.Int("limit", 10, "number of results")
	pos, ok := f.parse(args)
	if !ok {
		return ExitUsage
	}
	query := strings.TrimSpace(strings.Join(pos, " "))
	if query == "" || *limit < 1 {
		f.Usage()
		return ExitUsage
	}
	log, flush := deferredLog(env)
	defer flush()
	a, code := load(ctx, env, f, log, nil)
	if a == nil {
		return code
	}
	defer a.Close()
	for _, d := range awaitProviders(ctx, env, a) {
		log.Warn("tools missing from the search", "provider", d.Provider, "reason", d.Reason)
	}
	hits := a.Registry().Search(query, index.Options{Limit: *limit})
	type row struct {
		Rank        int     `json:"rank"`
		Kind        string  `json:"kind"`
		Name        string  `json:"name"`
		Provider    string  `json:"provider"`
		Score       float64 `json:"score"`
		Description string  `json:"description"`
	}
	rows := make([]row, 0, len(hits))
	for i, h := range hits {
		r := row{Rank: i + 1, Kind: h.Kind, Name: h.ID, Provider: h.Provider, Score: h.Score}
		if t, ok := a.Registry().Lookup(h.ID); ok {
			r.Description = t.Description
		}
		rows = append(rows, r)
	}
	if f.json {
		return writeJSON(env.Stdout, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(env.Stdout, "no matching tools")
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tNAME\tPROVIDER\tSCORE\tDESCRIPTION")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.2f\t%s\n", r.Rank, r.Name, r.Provider, r.Score, oneLine(r.Description, 70))
	}
	tw.Flush()
	return ExitOK
}

func writeJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "<prefix>" stays readable: this is not HTML
	if err := enc.Encode(v); err != nil {
		return ExitFailed
	}
	return ExitOK
}

// deferredLog collects warnings while a command loads and prints each
// distinct one once, when flush is called after the output: on a terminal
// they no longer cut through the table.
func deferredLog(env *Env) (*slog.Logger, func()) {
	var buf bytes.Buffer
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	log := stderrLog(&Env{Stderr: w}, slog.LevelWarn)
	return log, func() {
		mu.Lock()
		defer mu.Unlock()
		seen := map[string]bool{}
		for _, line := range strings.SplitAfter(buf.String(), "\n") {
			// The same warning logged by several refreshes differs only in its time.
			key := line
			if _, rest, ok := strings.Cut(line, " level="); ok {
				key = rest
			}
			if line == "" || seen[key] {
				continue
			}
			seen[key] = true
			io.WriteString(env.Stderr, line)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// oneLine is s on one line of at most n runes, safe for a terminal.
func oneLine(s string, n int) string {
	s = printable(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
